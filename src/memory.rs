//! [`Memory`]: the store as a library user sees it — observe, retrieve,
//! prune, forget — wiring the ledger, the extractor, the graph and the index
//! writers together. Single-threaded; the serving runtime puts a construction
//! actor around the same calls.
//!
//! Every commit goes: validate everything → build drafts → [`Ledger::commit`]
//! (infallible) → apply its changes to the gazetteer, graph and index writers
//! → publish one new [`IndexVersion`]. A failed observe returns before the
//! ledger is touched, so it leaves the store exactly as it was.

use std::sync::{Arc, LazyLock};

use serde::{Deserialize, Serialize};

use crate::block::Block;
use crate::config::Config;
use crate::error::{Error, Result, check_name, check_no_control};
use crate::extract::soft::{self, ObjectClass, SoftIdentity, SoftMatch};
use crate::extract::{
    EntityKind, Extractor, Gazetteer, GazetteerWriter, KeyedBy, KeyedValue, cues, gate, relations,
    slots,
};
use crate::fact::{Fact, FactBody, FactId, Key, Kind, Op, Seq, has_name_key, name_key};
use crate::graph::{GraphWriter, NodeId, contribution};
use crate::index::{CorpusWriter, DocInput, IndexInputs, IndexVersion, Timeline};
use crate::ledger::{AsOf, Change, Commit, Draft, Ledger, Outcome, names_of};
use crate::limits::{MAX_NAMES, MAX_TEXT_BYTES, check_names};
use crate::names::{Name, Names};
use crate::retrieve::{Request, retrieve, retrieve_as_of};
use crate::text;
use crate::time::WallTime;
use crate::vector::{Encoder, VectorStore};

/// What `Memory::version` holds while a commit is applied: never read
/// (`apply` holds `&mut self` from the moment it lets the published version
/// go until `publish` sets the next one), so one empty version serves every
/// store.
static VACANT: LazyLock<Arc<IndexVersion>> = LazyLock::new(|| {
    Arc::new(IndexVersion::empty(
        crate::config::ScoreParams::default(),
        false,
    ))
});

mod soft_keys;

pub use crate::ledger::Forget;

/// A message (or structured statement) to remember.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Observation {
    /// The text, prompt-ready.
    pub text: String,
    /// Participants of the conversation it came from.
    #[serde(default)]
    pub participants: Vec<String>,
    /// When it was said (event time).
    pub at: WallTime,
    /// A key, for structured ingestion: skips the extractor.
    #[serde(default)]
    pub key: Option<Key>,
    /// The value of `key`; defaults to the first typed value in the text, or
    /// the whole normalized text.
    #[serde(default)]
    pub value: Option<String>,
    /// Entities the caller knows the text is about (learned by the gazetteer).
    #[serde(default)]
    pub entities: Vec<String>,
    /// Provenance, e.g. a message id.
    #[serde(default)]
    pub source: Option<String>,
    /// How the observation relates to its key's current value (P-Mem's
    /// typed operations; `accept` by default). Any other operation needs a
    /// key: `key`, `target`, or one the extractor finds in the text.
    #[serde(default, skip_serializing_if = "Op::is_accept")]
    pub op: Op,
    /// The fact the operation names: the alternative a `resolve` chooses,
    /// the version a `revoke` or `reject` retracts (it must be the current
    /// one), the fact a `noop` supports. Gives the key when `key` is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<FactId>,
    /// What the statement says about when its value holds, if the caller
    /// knows (an LLM client): overrides the speculation gate's reading.
    /// `speculation` stages the value as a plan; `abandonment` retires the
    /// key's plans; `correction` replaces the current value as wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
}

impl Observation {
    /// An observation of `text` at `at`.
    pub fn new(text: impl Into<String>, at: WallTime) -> Self {
        Observation {
            text: text.into(),
            participants: Vec::new(),
            at,
            key: None,
            value: None,
            entities: Vec::new(),
            source: None,
            op: Op::Accept,
            target: None,
            kind: None,
        }
    }

    /// Says what the statement is (see [`Observation::kind`]).
    pub fn with_kind(mut self, kind: Kind) -> Self {
        self.kind = Some(kind);
        self
    }

    /// Sets the typed operation and, optionally, the fact it names.
    pub fn with_op(mut self, op: Op, target: Option<FactId>) -> Self {
        self.op = op;
        self.target = target;
        self
    }

    /// Sets the participants.
    pub fn with_participants<S: Into<String>>(
        mut self,
        participants: impl IntoIterator<Item = S>,
    ) -> Self {
        self.participants = participants.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the entities.
    pub fn with_entities<S: Into<String>>(mut self, entities: impl IntoIterator<Item = S>) -> Self {
        self.entities = entities.into_iter().map(Into::into).collect();
        self
    }

    /// Sets a key (and optionally its value), bypassing extraction.
    pub fn with_key(mut self, key: Key, value: Option<&str>) -> Self {
        self.key = Some(key);
        self.value = value.map(str::to_owned);
        self
    }

    /// Checks the observation without touching any store.
    pub fn validate(&self) -> Result<()> {
        if self.text.trim().is_empty() {
            return Err(Error::EmptyText);
        }
        if self.text.len() > MAX_TEXT_BYTES {
            return Err(Error::TextTooLong {
                len: self.text.len(),
                max: MAX_TEXT_BYTES,
            });
        }
        check_no_control("text", &self.text)?;
        self.at.checked("at")?;
        check_names("participant", &self.participants, MAX_NAMES)?;
        check_names("entity", &self.entities, MAX_NAMES)?;
        for p in &self.participants {
            if !has_name_key(p) {
                return Err(Error::EmptyName {
                    field: "participant",
                });
            }
        }
        for e in &self.entities {
            if !has_name_key(e) {
                return Err(Error::EmptyName { field: "entity" });
            }
        }
        if let Some(key) = &self.key {
            if key.entity.trim().is_empty() || !has_name_key(&key.entity) {
                return Err(Error::EmptyName {
                    field: "key entity",
                });
            }
            check_name("key entity", &key.entity)?;
            check_name("key slot", &key.slot)?;
        }
        for (field, given) in [("value", &self.value), ("source", &self.source)] {
            let len = given.as_ref().map_or(0, String::len);
            if len > MAX_TEXT_BYTES {
                return Err(Error::FieldTooLong {
                    field,
                    len,
                    max: MAX_TEXT_BYTES,
                });
            }
        }
        if let Some(v) = &self.value {
            check_no_control("value", v)?;
            if text::normalize(v).trim().is_empty() {
                return Err(Error::EmptyName { field: "value" });
            }
        }
        if let Some(s) = &self.source {
            check_no_control("source", s)?;
        }
        Ok(())
    }
}

/// What happened to one observation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Receipt {
    /// The commit that applied it (the previous commit if nothing changed).
    pub seq: Seq,
    /// What the ledger did.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// The key the fact was filed under, if any.
    pub key: Option<Key>,
    /// How the extractor found that key (none when the caller gave it, by
    /// `key` or `target`, or the fact has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_by: Option<MatchedBy>,
}

/// How the extractor found a statement's key, for the receipt. Serialized
/// as its [`MatchedBy::name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchedBy {
    /// A row of the slot table (a slot noun, an entity, a typed value).
    Slot,
    /// A relation's canonical noun, or an open phrase's own key.
    Exact,
    /// Another noun or a verb frame of the relation.
    Paraphrase,
    /// An open phrase joined to a key with the same content words
    /// (`extract::soft`).
    Lexical,
    /// An open phrase joined to a key whose phrase embeds near it, with
    /// the cosine in thousandths (see [`MatchedBy::cosine`]).
    Embedding {
        /// Cosine × 1000, rounded.
        milli: u16,
    },
    /// An open phrase no key of its subject matched: it opened a key.
    Opened,
}

impl MatchedBy {
    /// Its name in receipts.
    pub fn name(self) -> &'static str {
        match self {
            MatchedBy::Slot => "slot",
            MatchedBy::Exact => "exact",
            MatchedBy::Paraphrase => "paraphrase",
            MatchedBy::Lexical => "lexical",
            MatchedBy::Embedding { .. } => "embedding",
            MatchedBy::Opened => "opened",
        }
    }

    /// The phrase embeddings' cosine of an embedding match.
    pub fn cosine(self) -> Option<f32> {
        match self {
            MatchedBy::Embedding { milli } => Some(f32::from(milli) / 1000.0),
            _ => None,
        }
    }

    fn of(by: KeyedBy) -> MatchedBy {
        match by {
            KeyedBy::Slot(_) => MatchedBy::Slot,
            KeyedBy::Relation(_, relations::Match::Exact) | KeyedBy::Soft(SoftMatch::Exact) => {
                MatchedBy::Exact
            }
            KeyedBy::Relation(_, relations::Match::Paraphrase) => MatchedBy::Paraphrase,
            KeyedBy::Soft(SoftMatch::Lexical) => MatchedBy::Lexical,
            KeyedBy::Soft(SoftMatch::Embedding(c)) => MatchedBy::Embedding {
                // The cosine is in [-1, 1]; a match's is at least COSINE.
                milli: (c.clamp(0.0, 1.0) * 1000.0).round() as u16,
            },
            KeyedBy::Soft(SoftMatch::Opened) => MatchedBy::Opened,
        }
    }
}

impl Serialize for MatchedBy {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// A personal fact memory.
#[derive(Debug)]
pub struct Memory {
    config: Config,
    ledger: Ledger,
    extractor: Extractor,
    gazetteer: GazetteerWriter,
    graph: GraphWriter,
    active: CorpusWriter,
    history: Option<CorpusWriter>,
    timeline: Timeline,
    version: Arc<IndexVersion>,
    journal: Journal,
    /// Whether commits are written to `journal`: only a store a durable
    /// copy follows takes it ([`Memory::keep_journal`]); elsewhere it would
    /// only grow.
    journaling: bool,
    /// The encoder and the facts' vectors, once one is attached.
    vectors: Option<VectorStore>,
    /// Embeddings of relation phrases, for soft key identity.
    phrases: soft_keys::PhraseCache,
    /// The shared copy of every participant and entity name facts hold.
    names: Names,
}

/// What commits wrote to the ledger since the journal was last taken: the
/// rows a durable copy must rewrite or delete (see `ledger::durable`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Journal {
    /// Retained facts whose body or state changed.
    pub touched: std::collections::BTreeSet<FactId>,
    /// Facts erased for good.
    pub erased: std::collections::BTreeSet<FactId>,
}

impl Journal {
    /// Whether no commit wrote anything.
    pub fn is_empty(&self) -> bool {
        self.touched.is_empty() && self.erased.is_empty()
    }
}

impl Memory {
    /// An empty store.
    pub fn new(config: Config) -> Result<Self> {
        config.validate()?;
        let writer = || CorpusWriter::new(config.score.clone(), config.merge);
        Ok(Memory {
            ledger: Ledger::new(&config),
            extractor: Extractor {
                granularity: config.key_granularity,
                relations: config.relations,
                open: config.relations && config.soft_identity != SoftIdentity::Off,
            },
            gazetteer: GazetteerWriter::default(),
            graph: GraphWriter::new(config.graph.clone()),
            active: writer(),
            history: config.history_index.then(writer),
            timeline: Timeline::default(),
            version: Arc::new(IndexVersion::empty(
                config.score.clone(),
                config.history_index,
            )),
            config,
            journal: Journal::default(),
            journaling: false,
            vectors: None,
            phrases: soft_keys::PhraseCache::default(),
            names: Names::default(),
        })
    }

    /// Attaches an encoder: every retained fact is embedded now (one call)
    /// and re-listed with its vectors, then each commit embeds the facts it
    /// retains, on the write path. `participants` also keeps the vectors of
    /// text plus participants that the `_p` dense arms read.
    pub fn set_encoder(&mut self, encoder: Box<dyn Encoder>, participants: bool) -> Result<()> {
        let mut store = VectorStore::new(encoder, participants);
        let bodies: Vec<&FactBody> = self.ledger.facts().map(|f| &*f.body).collect();
        store.embed(&bodies)?;
        self.vectors = Some(store);
        let ids: Vec<(FactId, bool)> = self
            .ledger
            .facts()
            .map(|f| (f.id(), f.state.is_current()))
            .collect();
        for (id, current) in ids {
            let (body, _) = self.snapshot(id);
            let nodes = self.nodes_of(&body);
            let doc = self.doc(id, nodes);
            if current && self.active.remove(id) {
                self.active.add(doc.clone());
            }
            if let Some(h) = &mut self.history
                && h.remove(id)
            {
                h.add(doc);
            }
        }
        if let Some(v) = &mut self.vectors {
            v.clear_recent();
        }
        self.publish(self.ledger.seq());
        Ok(())
    }

    /// The attached encoder's store (`None`: no encoder).
    pub fn vectors(&self) -> Option<&VectorStore> {
        self.vectors.as_ref()
    }

    /// Active facts whose index documents carry vectors, and the bytes of
    /// every segment's scan rows (active and history index): the store's
    /// whole vector memory, since the rows are the only copy.
    pub fn vector_footprint(&self) -> (usize, usize) {
        let corpora = [
            Some(self.active.corpus()),
            self.history.as_ref().map(|h| h.corpus()),
        ];
        let bytes = corpora
            .iter()
            .flatten()
            .flat_map(|c| c.views())
            .map(|v| v.segment.matrix().bytes())
            .sum();
        let embedded = self
            .active
            .corpus()
            .live()
            .filter(|(v, d)| v.segment.matrix().has(*d))
            .count();
        (embedded, bytes)
    }

    /// A store rebuilt from its durable facts (see [`Ledger::restore`]):
    /// the ledger is restored as stored; the gazetteer, graph and indexes
    /// are derived from it exactly as the commits that made those facts
    /// derived them (each retained fact recorded, each current one
    /// activated), so retrieval sees what it saw before — unless
    /// [`Memory::prune`] dropped graph edges, which the ledger does not
    /// record (the server never prunes). `tests/prop_ledger.rs` checks it.
    pub fn restore(
        config: Config,
        facts: Vec<Fact>,
        next_id: u64,
        seq: Seq,
        committed_at: WallTime,
    ) -> Result<Self> {
        Memory::restore_indexed(config, facts, next_id, seq, committed_at, None)
    }

    /// [`Memory::restore`], with the index segments built from `inputs`
    /// where they hold a fact rather than from its text: the same store,
    /// without tokenizing (a restore from a checkpoint). `inputs` must
    /// have been made by [`IndexInputs::of`] under this configuration's
    /// scoring parameters and carry their [`fingerprint`] (the caller
    /// checks it).
    ///
    /// [`fingerprint`]: crate::index::inputs::fingerprint
    pub fn restore_indexed(
        config: Config,
        facts: Vec<Fact>,
        next_id: u64,
        seq: Seq,
        committed_at: WallTime,
        inputs: Option<IndexInputs>,
    ) -> Result<Self> {
        let mut memory = Memory::new(config)?;
        if let Some(inputs) = inputs {
            let inputs = Arc::new(inputs);
            memory.active.take_terms_from(inputs.clone());
            if let Some(h) = &mut memory.history {
                h.take_terms_from(inputs);
            }
        }
        let mut facts = facts;
        // Decoded bodies are each their own (a body shared with another
        // holder keeps its names).
        for fact in &mut facts {
            if let Some(body) = Arc::get_mut(&mut fact.body) {
                memory.names.share(body);
            }
        }
        memory.ledger = Ledger::restore(&memory.config, facts, next_id, seq, committed_at)
            .map_err(Error::InvalidState)?;
        let mut changes = Vec::new();
        let mut touched = Vec::new();
        for fact in memory.ledger.facts() {
            changes.push(Change::Recorded(fact.id()));
            if fact.state.is_current() {
                changes.push(Change::Activated(fact.id()));
            }
            touched.push(fact.id());
        }
        let empty = changes.is_empty();
        // Every fact counts as touched, so the timeline records each once
        // (the journal is cleared below).
        memory.apply(&Commit {
            seq,
            changes,
            touched,
            ..Commit::default()
        });
        if empty {
            // Every fact erased: still publish at the stored sequence.
            memory.publish(seq);
        }
        memory.journal = Journal::default();
        memory.journaling = true;
        Ok(memory)
    }

    /// Starts recording what commits write, for [`Memory::take_journal`]. A
    /// store from [`Memory::restore`] records from the start; one from
    /// [`Memory::new`] records nothing until this is called, so a store no
    /// durable copy follows does not hold a row id per fact it ever wrote.
    pub fn keep_journal(&mut self) {
        self.journaling = true;
    }

    /// Takes what commits wrote since the last call (nothing unless the
    /// store keeps a journal: see [`Memory::keep_journal`]).
    pub fn take_journal(&mut self) -> Journal {
        std::mem::take(&mut self.journal)
    }

    /// The store's configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The ledger (every retained fact, history included).
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// The newest published index version.
    pub fn version(&self) -> Arc<IndexVersion> {
        self.version.clone()
    }

    /// A retained fact.
    pub fn fact(&self, id: FactId) -> Result<&Fact> {
        self.ledger.get(id).ok_or(Error::UnknownFact(id))
    }

    /// Registers an entity name so the extractor recognizes it.
    pub fn register_entity(&mut self, name: &str, kind: EntityKind) -> Result<()> {
        check_name("entity", name)?;
        if self.gazetteer.register(name, kind).is_none() {
            return Err(Error::EmptyName { field: "entity" });
        }
        self.publish(self.ledger.seq());
        Ok(())
    }

    /// Remembers one observation.
    pub fn observe(&mut self, observation: Observation) -> Result<Receipt> {
        let mut receipts = self.observe_batch(vec![observation])?;
        // Infallible: one receipt per observation.
        Ok(receipts.pop().expect("one receipt per observation"))
    }

    /// Remembers several observations in one commit (group commit): either
    /// all are applied under one sequence number or, if any is invalid, none.
    pub fn observe_batch(&mut self, observations: Vec<Observation>) -> Result<Vec<Receipt>> {
        for o in &observations {
            o.validate()?;
        }
        // Teach the gazetteer the batch's names first, so a message can be
        // keyed on a participant it introduces. Done on a copy: nothing is
        // changed until the commit.
        let gazetteer = self.gazetteer.with_names(observations.iter().flat_map(|o| {
            let people = o
                .participants
                .iter()
                .map(|p| (p.as_str(), EntityKind::Person));
            people.chain(o.entities.iter().map(|e| (e.as_str(), EntityKind::Other)))
        }));
        let mut drafts = Vec::with_capacity(observations.len());
        let mut found = Vec::with_capacity(observations.len());
        // Keys the batch's open statements opened: a later statement of the
        // batch joins them as it would a stored key.
        let mut opened = Vec::new();
        for o in observations {
            let (draft, by) = self.draft(o, &gazetteer, &mut opened)?;
            drafts.push(draft);
            found.push(by);
        }
        let commit = self.ledger.commit(drafts)?;
        let keys: Vec<Option<Key>> = commit
            .outcomes
            .iter()
            .map(|o| {
                self.ledger
                    .get(o.fact())
                    .and_then(|f| f.body.key.as_deref().cloned())
            })
            .collect();
        self.apply(&commit);
        Ok(commit
            .outcomes
            .into_iter()
            .zip(keys)
            .zip(found)
            .map(|((outcome, key), found)| Receipt {
                seq: commit.seq,
                outcome,
                matched_by: key.as_ref().and(found).map(MatchedBy::of),
                key,
            })
            .collect())
    }

    /// The draft of one valid observation, and the table row that keyed
    /// it if the extractor did (for the receipt). Fails only on what needs
    /// the store to judge: an unknown `target`, a typed operation without a
    /// key.
    fn draft(
        &mut self,
        o: Observation,
        gazetteer: &Gazetteer,
        opened: &mut Vec<(Key, ObjectClass)>,
    ) -> Result<(Draft, Option<KeyedBy>)> {
        let normalized = text::normalize(&o.text);
        let participant_keys: Vec<Name> = o
            .participants
            .iter()
            .map(|p| Name::from(name_key(p)))
            .collect();
        let extraction =
            self.extractor
                .extract(&o.text, &normalized, gazetteer, &participant_keys, |k| {
                    self.ledger.active_for_key(k).is_some()
                });
        // The extracted entities are the gazetteer's own shared names; a
        // given one the text also names is taken from them, without a
        // lookup in the store's whole set.
        let mut entities = extraction.entities;
        for e in &o.entities {
            let e = name_key(e);
            if !entities.iter().any(|n| **n == *e) {
                entities.push(self.names.get(&e));
            }
        }
        let targeted = match o.target {
            Some(t) => self
                .ledger
                .get(t)
                .ok_or(Error::UnknownFact(t))?
                .body
                .key
                .as_deref()
                .cloned(),
            None => None,
        };
        // A value states the head for accept and contest; for the other
        // operations it is optional and only what the caller (or the text)
        // says: the replacement (reject, resolve) or a check (revoke, noop).
        let implied = matches!(o.op, Op::Accept | Op::Contest);
        let given = o.value.as_deref().map(text::normalize);
        let found_value = || {
            slots::find_values(&normalized)
                .first()
                .map(|v| normalized[v.start..v.end].to_owned())
        };
        let plain = o.op == Op::Accept && o.key.is_none() && o.target.is_none();
        // `stated`: the value was given, extracted or found in the text
        // (not the whole text, the default when none is).
        let caller_keyed = o.key.is_some() || targeted.is_some();
        let keyed = match (&extraction.open, caller_keyed) {
            (Some(open), false) => self.resolve_open(open, opened),
            _ => extraction.keyed,
        };
        let found = keyed.as_ref().map(|k| k.by).filter(|_| !caller_keyed);
        let (key, value, stated) = match (o.key.or(targeted), keyed) {
            (Some(key), _) => {
                let (value, stated) = match given {
                    Some(v) => (Some(v), true),
                    None if implied => match found_value() {
                        Some(v) => (Some(v), true),
                        None => (Some(normalized.clone()), false),
                    },
                    None => (None, false),
                };
                let key = Key {
                    entity: name_key(&key.entity).into(),
                    slot: name_key(&key.slot).into(),
                    qualifier: key.qualifier.map(|q| name_key(&q).into()),
                };
                (Some(key), value, stated)
            }
            (None, Some(kv)) => (Some(kv.key), Some(kv.value), true),
            (None, None) => (None, None, false),
        };
        // The gate and the cues only ever act on a keyed statement (or one
        // naming a cell), so a keyless one, the bulk of real text, pays
        // for neither.
        let keyed = key.is_some() || extraction.cell.is_some();
        // The gate reads when the value holds (the caller may say it); a
        // plan, a correction or an abandonment is not a cue's to type.
        let (verdict, revises) = match (o.op, o.target) {
            (Op::Accept, None) if keyed => o.kind.map_or_else(
                || {
                    // The gate reads the cues around the value the text
                    // states (none when the value is the whole text).
                    let located = value.as_deref().filter(|v| *v != normalized);
                    let verdict = gate::classify(&normalized, located);
                    // Would an unasserted statement replace the key's
                    // current value with another? (A restatement is the
                    // same value, compared as the ledger compares it.)
                    let revises = !verdict.asserted
                        && located.zip(key.as_ref()).is_some_and(|(new, k)| {
                            let current = self.ledger.active_for_key(k);
                            current
                                .and_then(|f| f.body.value())
                                .is_some_and(|old| old != new)
                        });
                    (verdict, revises)
                },
                |kind| (gate::Verdict::of(kind), false),
            ),
            _ => (gate::Verdict::of(Kind::Other), false),
        };
        let kind = verdict.kind;
        // A denial with no plan to abandon may still be a retraction
        // ("Scratch that, it's not $40k after all"): the cues read it.
        let about = key.as_ref().or(extraction.cell.as_ref());
        let denial = kind == Kind::Abandonment
            && o.kind.is_none()
            && about.is_none_or(|k| self.ledger.pending_plans(k).is_empty());
        // A confirmation that states no value ("the move went through")
        // confirms its key's plan when the key has exactly one: the
        // statement carries the plan's value (`ledger::plans`, "confirm").
        let valueless = o.op == Op::Accept && !stated && kind == Kind::Completed;
        let confirms = (valueless && found_value().is_none())
            .then(|| self.sole_plan(about?))
            .flatten();
        let confirmed = confirms.as_ref().map(|(_, v)| v.clone());
        let (key, value) = match confirms {
            Some((k, v)) => (Some(k), Some(v)),
            None => (key, value),
        };
        // A plain statement's cues may make it a typed operation (the
        // ledger applies it only where it fits: see `ledger::ops`).
        let cued = if plain && keyed && (matches!(kind, Kind::Other | Kind::Completed) || denial) {
            cues::find_op(&normalized)
        } else {
            None
        };
        // A denial only ever retracts: it asserts no value to contest with.
        let cued = cued.filter(|op| !denial || *op == Op::Revoke);
        // A revision the cues did not type needs an assertion
        // (`Verdict::revising`): without one it is held as a plan.
        let kind = match cued {
            None if revises => verdict.revising().kind,
            _ => kind,
        };
        let (op, key, value) = match (kind, cued, key, extraction.cell) {
            (_, Some(Op::Revoke), None, Some(cell)) => (Op::Revoke, Some(cell), None),
            (Kind::Abandonment, _, None, Some(cell)) => (Op::Accept, Some(cell), None),
            (Kind::Correction, _, Some(k), _) if value.is_some() => (Op::Reject, Some(k), value),
            (_, Some(op), Some(k), _) => (op, Some(k), value),
            (_, _, key, _) => (o.op, key, value),
        };
        let inferred = cued.is_some() || (op == Op::Reject && o.op == Op::Accept);
        let (key, value) = if self.config.use_keys {
            (key, value)
        } else {
            (None, None)
        };
        if key.is_none() && o.op != Op::Accept {
            return Err(Error::OpNeedsKey(o.op));
        }
        if let Some(k) = &key {
            entities.push(self.names.get(&k.entity));
        }
        entities.sort();
        entities.dedup();
        // A value-less confirmation's block line says what became true:
        // the plan's value is appended to the text as kept ("It happened!
        // (confirms: dec 3)"), after the cues have read what was said.
        let (text, normalized) = match confirmed {
            Some(v) => {
                let text = format!("{} (confirms: {v})", o.text.trim_end());
                let normalized = text::normalize(&text);
                (text, normalized)
            }
            None => (o.text, normalized),
        };
        let draft = Draft {
            text,
            normalized,
            entities,
            participants: o
                .participants
                .iter()
                .map(|p| self.names.get(p.trim()))
                .collect(),
            key,
            value,
            stated_at: o.at,
            source: o.source,
            kind,
            op,
            target: o.target,
            inferred,
        };
        Ok((draft, found))
    }

    /// The key an open relation statement joins or opens (soft identity,
    /// `extract::soft`), as a keyed value; `None` when that is ambiguous.
    /// A key it opens is added to `opened`, for the rest of the batch.
    fn resolve_open(
        &mut self,
        open: &relations::OpenStatement,
        opened: &mut Vec<(Key, ObjectClass)>,
    ) -> Option<KeyedValue> {
        let candidates = soft_keys::candidates(&self.ledger, &open.subject, opened);
        let mut embedder = soft_keys::Embedder {
            cache: &mut self.phrases,
            vectors: self.vectors.as_mut(),
        };
        let (key, how) = soft::resolve(
            self.config.soft_identity,
            &open.subject,
            &open.phrase,
            open.class,
            &candidates,
            &mut embedder,
        )?;
        if how == SoftMatch::Opened {
            opened.push((key.clone(), open.class));
        }
        Some(KeyedValue {
            key,
            value: open.object.clone(),
            by: KeyedBy::Soft(how),
        })
    }

    /// The key's one pending plan, as the key and the plan's value (a
    /// value-less confirmation's; none when the key has no plan or
    /// several).
    fn sole_plan(&self, key: &Key) -> Option<(Key, String)> {
        let [plan] = self.ledger.pending_plans(key) else {
            return None;
        };
        let value = self.ledger.get(*plan)?.body.value()?.to_owned();
        Some((key.clone(), value))
    }

    /// Applies a commit's changes to the gazetteer, graph and indexes, then
    /// publishes a new version if anything changed.
    fn apply(&mut self, commit: &Commit) {
        if self.journaling {
            self.journal.touched.extend(commit.touched.iter().copied());
        }
        for id in &commit.touched {
            self.remember(*id);
        }
        if commit.changes.is_empty() {
            return;
        }
        // Let go of the published version before the writers change. When
        // nothing else holds it (a bulk import, a library caller between
        // reads) the persistent structures it shares with them — the
        // graph's lists, the name maps, the timeline — are uniquely owned
        // again and are updated in place, where they would copy every
        // chunk a change touches and then drop the old copies: at
        // 1,000,000 facts that copying was a sixth of a bulk build (issue
        // 24, scale/README.md). `publish`, below, sets the new version;
        // nothing reads `version` in between (`&mut self`).
        self.version = Arc::clone(&VACANT);
        self.embed_changes(commit);
        let half_life = self.config.graph.edge_half_life_days;
        // A new fact is recorded, then activated: the second change reuses
        // the graph nodes the first found.
        let mut last: Option<(FactId, Vec<NodeId>)> = None;
        for change in &commit.changes {
            match change {
                Change::Recorded(id) => {
                    let (body, observed) = self.snapshot(*id);
                    for e in body.entities().iter() {
                        self.gazetteer.learn(e, EntityKind::Other);
                    }
                    for p in body.participant_keys() {
                        self.gazetteer.learn(&p, EntityKind::Person);
                    }
                    let nodes = self.nodes_of(&body);
                    self.graph
                        .strengthen(&nodes, contribution(observed, half_life));
                    let doc = self.history.is_some().then(|| self.doc(*id, nodes.clone()));
                    if let (Some(h), Some(doc)) = (&mut self.history, doc) {
                        h.add(doc);
                    }
                    last = Some((*id, nodes));
                }
                Change::Activated(id) => {
                    let nodes = match last.take() {
                        Some((fact, nodes)) if fact == *id => nodes,
                        _ => {
                            let (body, _) = self.snapshot(*id);
                            self.nodes_of(&body)
                        }
                    };
                    self.active.add(self.doc(*id, nodes));
                }
                Change::Deactivated(id) => {
                    self.active.remove(*id);
                }
                Change::Refreshed { fact: id, previous } => {
                    let (body, observed) = self.snapshot(*id);
                    let nodes = self.nodes_of(&body);
                    let gain =
                        contribution(observed, half_life) - contribution(*previous, half_life);
                    if gain > 0.0 {
                        self.graph.strengthen(&nodes, gain);
                    }
                    let doc = self.doc(*id, nodes);
                    if self.active.remove(*id) {
                        self.active.add(doc.clone());
                    }
                    if let Some(h) = &mut self.history
                        && h.remove(*id)
                    {
                        h.add(doc);
                    }
                }
                Change::Erased(body) => {
                    if self.journaling {
                        self.journal.touched.remove(&body.id);
                        self.journal.erased.insert(body.id);
                    }
                    self.timeline.erase(body.id);
                    self.active.remove(body.id);
                    if let Some(v) = &mut self.vectors {
                        v.remove(body.id);
                    }
                    if let Some(h) = &mut self.history {
                        h.remove(body.id);
                    }
                    for name in names_of(body) {
                        self.gazetteer.unlearn(&name);
                    }
                    self.recompute_graph(body);
                }
            }
        }
        if let Some(v) = &mut self.vectors {
            v.clear_recent();
        }
        self.publish(commit.seq);
    }

    /// Embeds, in one encoder call, the facts a commit retained and those it
    /// activates whose rows the index no longer holds (a fact superseded
    /// long ago and reinstated, after a merge dropped its row). The commit
    /// is already made, so an encoder failure cannot refuse it: those facts
    /// stay lexical-only and [`VectorStore::missed`] counts them.
    fn embed_changes(&mut self, commit: &Commit) {
        if self.vectors.is_none() {
            return;
        }
        let mut ids: Vec<FactId> = commit
            .changes
            .iter()
            .filter_map(|c| match c {
                Change::Recorded(id) => Some(*id),
                Change::Activated(id) if self.indexed_vectors(*id).is_none() => Some(*id),
                _ => None,
            })
            .collect();
        // A new fact is recorded and activated in one commit: embed it once.
        ids.sort_unstable();
        ids.dedup();
        let bodies: Vec<&FactBody> = ids
            .iter()
            .filter_map(|id| self.ledger.get(*id).map(|f| &*f.body))
            .collect();
        if let Some(store) = &mut self.vectors {
            // A failure is counted in `missed`, which the server reports.
            store.embed(&bodies).ok();
        }
    }

    /// A fact's vectors as the indexes hold them (their rows are the only
    /// copy once a fact is listed).
    fn indexed_vectors(&self, id: FactId) -> Option<crate::vector::SharedVectors> {
        self.active
            .vectors_of(id)
            .or_else(|| self.history.as_ref().and_then(|h| h.vectors_of(id)))
    }

    /// The index document of a fact a commit just retained or updated,
    /// with its vectors if any: made for this commit, or copied from the
    /// index.
    fn doc(&self, id: FactId, nodes: Vec<NodeId>) -> DocInput {
        // Infallible: changes name facts the ledger retains.
        let fact = self.ledger.get(id).expect("changes name retained facts");
        let vectors = self
            .vectors
            .as_ref()
            .and_then(|v| v.get(id).or_else(|| self.indexed_vectors(id)));
        DocInput {
            vectors,
            ..DocInput::of(fact, nodes.into())
        }
    }

    /// Brings a retained fact's timeline entry up to date.
    fn remember(&mut self, id: FactId) {
        if let Some(fact) = self.ledger.shared(id) {
            self.timeline.record(fact);
        }
    }

    /// A retained fact's body and last-observed time.
    fn snapshot(&self, id: FactId) -> (Arc<FactBody>, WallTime) {
        // Infallible: changes name facts the commit just retained or updated.
        let fact = self.ledger.get(id).expect("changes name retained facts");
        (fact.body.clone(), fact.state.last_observed)
    }

    fn nodes_of(&mut self, body: &FactBody) -> Vec<NodeId> {
        names_of(body)
            .iter()
            .map(|n| self.graph.intern(n))
            .collect()
    }

    /// Exact graph weights around an erased fact, from the facts that remain.
    fn recompute_graph(&mut self, body: &FactBody) {
        let nodes: Vec<(NodeId, Name)> = names_of(body)
            .into_iter()
            .filter_map(|n| self.graph.graph().node(&n).map(|id| (id, n)))
            .collect();
        let ledger = &self.ledger;
        let half_life = self.config.graph.edge_half_life_days;
        self.graph.recompute(
            &nodes,
            |name| ledger.facts_naming(name).next().is_some(),
            |a, b| {
                ledger
                    .facts_naming(a)
                    .filter_map(|id| ledger.get(id))
                    .filter(|f| names_of(&f.body).iter().any(|n| &**n == b))
                    .map(|f| contribution(f.state.last_observed, half_life))
                    .sum()
            },
        );
    }

    fn publish(&mut self, seq: Seq) {
        let active = self.active.commit();
        let history = self.history.as_mut().map(CorpusWriter::commit);
        self.version = Arc::new(IndexVersion {
            seq,
            committed_at: self.ledger.committed_at(),
            active,
            history,
            timeline: self.timeline.clone(),
            graph: self.graph.publish(),
            gazetteer: self.gazetteer.view().clone(),
            params: self.config.score.clone(),
            past: None,
        });
    }

    /// Retrieves a memory block from the newest version.
    pub fn retrieve(&self, request: &Request) -> Result<Block> {
        retrieve(&self.version, request)
    }

    /// Retrieves from the store as it was at `as_of` (transaction time):
    /// see [`retrieve_as_of`].
    pub fn retrieve_as_of(&self, request: &Request, as_of: AsOf) -> Result<Block> {
        retrieve_as_of(&self.version, request, as_of)
    }

    /// The facts active at a point in transaction time.
    pub fn as_of(&self, at: AsOf) -> Vec<&Fact> {
        self.ledger.active_as_of(at)
    }

    /// A fact's version history, newest first.
    pub fn history(&self, id: FactId) -> Result<Vec<&Fact>> {
        self.ledger.history(id)
    }

    /// Records that facts were served at `at` (feeds the usage term).
    pub fn record_usage(&mut self, ids: &[FactId], at: WallTime) -> Seq {
        let commit = self.ledger.record_usage(ids, at);
        self.apply(&commit);
        commit.seq
    }

    /// Retires keyless facts whose retention at `at` is below the threshold,
    /// and graph edges below theirs. Returns the facts retired.
    pub fn prune(&mut self, at: WallTime) -> Vec<FactId> {
        let commit = self
            .ledger
            .prune(at, self.config.pruning.retention_threshold);
        self.graph.prune(at);
        let retired = commit
            .changes
            .iter()
            .filter_map(|c| match c {
                Change::Deactivated(id) => Some(*id),
                _ => None,
            })
            .collect();
        self.apply(&commit);
        if commit.changes.is_empty() {
            self.publish(self.ledger.seq());
        }
        retired
    }

    /// Erases facts for good (see [`Forget`]); returns the ids erased.
    pub fn forget(&mut self, what: &Forget, at: WallTime) -> Result<Vec<FactId>> {
        if let Forget::Entity(name) = what {
            check_name("entity", name)?;
        }
        let commit = self.ledger.forget(what, at)?;
        let erased = commit
            .changes
            .iter()
            .filter_map(|c| match c {
                Change::Erased(b) => Some(b.id),
                _ => None,
            })
            .collect();
        if let Forget::Entity(name) = what {
            self.gazetteer.remove(&name_key(name));
        }
        self.apply(&commit);
        if commit.changes.is_empty() {
            self.publish(self.ledger.seq());
        }
        // The erased bodies' last holders (this commit, the version it
        // replaced) are gone once no reader holds that version.
        drop(commit);
        self.names.forget_unused();
        Ok(erased)
    }

    /// Waits for background index merges and publishes the result.
    pub fn wait_for_merges(&mut self) {
        self.active.wait_for_merges();
        if let Some(h) = &mut self.history {
            h.wait_for_merges();
        }
        self.publish(self.ledger.seq());
    }
}
