//! The retrieval arms of the evaluation and the stores they read.
//!
//! Every arm shares the selection rule and the block format (k = 6, budget
//! B); they differ in the store and the ranker:
//!
//! | arm | store | ranker |
//! |---|---|---|
//! | `pfm` | keyed | PFM (every term) |
//! | `pfm_keyless` | keyless: the same drafts, keys ignored | PFM |
//! | `bm25`, `bm25_p` | keyed, every retained version (validity-agnostic) | BM25 over text (+ participants) |
//! | `bm25_recency`, `bm25_recency_p` | keyed, every retained version | BM25 · recency (+ participants) |
//! | `bm25_validity`, `bm25_validity_p` | keyed, active facts only | BM25 (+ participants) |
//!
//! | `dense[_validity][_p]` | keyed (every version, or active only), MiniLM vectors | exact scan |
//! | `hybrid[_validity][_p]` | the same | RRF of BM25 (+ participants) and dense |
//!
//! `_p` supplies the participant names to the query and to the fact text
//! (for the dense arms: the vectors of text plus participants). The dense
//! arms need `scripts/fetch-models`; asking for one without the files is a
//! clear error naming it.

use super::generator::Instance;
use pfm::config::{Config, MergeMode};
use pfm::error::{Error, Result};
use pfm::extract::EntityKind;
use pfm::fact::Key;
use pfm::memory::{Memory, Observation, Receipt};
use pfm::rank::{Ranker, Recency};

/// Which store an arm reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreKind {
    /// Keyed supersession, history indexed for validity-agnostic rankers.
    Keyed,
    /// The same drafts with keys ignored.
    Keyless,
}

/// One arm: a stable name, its store and its ranker.
#[derive(Clone, Debug)]
pub struct Arm {
    /// Stable snake_case name.
    pub name: String,
    /// The store it reads.
    pub store: StoreKind,
    /// The ranker.
    pub ranker: Ranker,
    /// The recency mode its requests ask for: the paper's half-life
    /// (`Fixed`) for the paper's rows that tell versions apart by time
    /// alone (keyless pfm, BM25 + recency); the store's default (`Off`)
    /// otherwise.
    pub recency: Option<Recency>,
}

/// Every lexical arm, in report order.
pub const LEXICAL: [&str; 8] = [
    "pfm",
    "pfm_keyless",
    "bm25_validity",
    "bm25_validity_p",
    "bm25",
    "bm25_p",
    "bm25_recency",
    "bm25_recency_p",
];

/// Every dense and hybrid arm (Table 12), in report order.
pub const DENSE: [&str; 8] = [
    "dense",
    "dense_p",
    "dense_validity",
    "dense_validity_p",
    "hybrid",
    "hybrid_p",
    "hybrid_validity",
    "hybrid_validity_p",
];

impl Arm {
    /// The arm with this name.
    pub fn named(name: &str) -> Result<Arm> {
        let (store, ranker) = match name {
            "pfm" => (StoreKind::Keyed, Ranker::pfm()),
            "pfm_keyless" => (StoreKind::Keyless, Ranker::pfm()),
            _ if LEXICAL.contains(&name) || DENSE.contains(&name) => {
                (StoreKind::Keyed, Ranker::named(name)?)
            }
            _ => {
                return Err(Error::InvalidConfig(format!(
                    "unknown arm {name:?}: use one of {}, {}",
                    LEXICAL.join(", "),
                    DENSE.join(", ")
                )));
            }
        };
        let by_time = name == "pfm_keyless" || name.starts_with("bm25_recency");
        Ok(Arm {
            name: name.to_owned(),
            store,
            ranker,
            recency: by_time.then_some(Recency::Fixed),
        })
    }
}

/// Every arm, in report order: the lexical ones, then the dense ones.
pub fn all() -> Vec<String> {
    LEXICAL
        .iter()
        .chain(&DENSE)
        .map(|a| a.to_string())
        .collect()
}

/// A message's key and value as the store filed it (`None`: keyless).
pub type Filed = Option<(Key, String)>;

/// A store built from one instance, with what happened to each message.
pub struct Built {
    /// The store.
    pub memory: Memory,
    /// One receipt per message, in arrival order.
    pub receipts: Vec<Receipt>,
}

impl Built {
    /// What each message was filed under (its key and value).
    pub fn filed(&self) -> Vec<Filed> {
        self.receipts
            .iter()
            .map(|r| {
                let key = r.key.clone()?;
                let fact = self.memory.fact(r.outcome.fact()).ok()?;
                Some((key, fact.body.value()?.to_owned()))
            })
            .collect()
    }
}

/// Builds a store of `kind` from the instance's messages, one commit per
/// message in arrival order. `keys`, when given, overrides the extractor for
/// every message: a `Some` is filed under that key, a `None` is left to the
/// extractor (the key-noise grid passes the clean store's keys, perturbed).
pub fn build(instance: &Instance, kind: StoreKind, keys: Option<&[Filed]>) -> Result<Built> {
    let config = Config {
        use_keys: kind == StoreKind::Keyed,
        history_index: kind == StoreKind::Keyed,
        ..Config::default()
    };
    build_with(instance, config, keys)
}

/// [`build`] with an explicit store configuration (merges always inline,
/// so the segment layout is deterministic).
pub fn build_with(instance: &Instance, config: Config, keys: Option<&[Filed]>) -> Result<Built> {
    let mut memory = Memory::new(Config {
        merge: MergeMode::Inline,
        ..config
    })?;
    for p in &instance.people {
        memory.register_entity(&p.full, EntityKind::Person)?;
    }
    for p in &instance.projects {
        memory.register_entity(p, EntityKind::Project)?;
    }
    let mut receipts = Vec::with_capacity(instance.messages.len());
    for (i, m) in instance.messages.iter().enumerate() {
        let mut o = Observation::new(m.text.clone(), m.at).with_participants(&m.participants);
        if let Some(Some((key, value))) = keys.map(|k| &k[i]) {
            o = o.with_key(key.clone(), Some(value));
        }
        receipts.push(memory.observe(o)?);
    }
    Ok(Built { memory, receipts })
}

/// The stores the arms need, built once per instance.
pub struct Stores {
    /// The keyed store (also read by the validity-agnostic rankers).
    pub keyed: Built,
    /// The keyless store, if any arm reads it.
    pub keyless: Option<Built>,
}

impl Stores {
    /// Builds the keyed store (with MiniLM vectors if a dense arm reads it:
    /// of text, and of text plus participants if a `_p` one does) and, if
    /// an arm needs it, the keyless one.
    pub fn build(instance: &Instance, arms: &[Arm]) -> Result<Stores> {
        let mut keyed = build(instance, StoreKind::Keyed, None)?;
        let dense: Vec<&Arm> = arms.iter().filter(|a| a.ranker.needs_vector()).collect();
        if !dense.is_empty() {
            let participants = dense.iter().any(|a| a.ranker.dense_with_participants());
            // One session on one thread: the store embeds in batches.
            let encoder = pfm_dense::MiniLm::locate(1)?;
            keyed.memory.set_encoder(Box::new(encoder), participants)?;
        }
        Ok(Stores {
            keyed,
            keyless: arms
                .iter()
                .any(|a| a.store == StoreKind::Keyless)
                .then(|| build(instance, StoreKind::Keyless, None))
                .transpose()?,
        })
    }

    /// The store an arm reads.
    pub fn of(&self, arm: &Arm) -> &Memory {
        match (arm.store, &self.keyless) {
            (StoreKind::Keyless, Some(b)) => &b.memory,
            _ => &self.keyed.memory,
        }
    }
}
