//! `pfm eval --locomo PATH`: evidence recall on real conversations (LoCoMo,
//! Maharana et al., 2024; `../shared/data/locomo/`).
//!
//! Protocol (the one issue 22 measured the server with):
//! - one store per conversation, built with the library at its defaults;
//! - every turn one observation: `"{speaker}: {text}"` (an image turn adds
//!   `[shares a photo: {caption}]`, the part of the turn the evidence
//!   often is), both speakers as participants, stated at its session's date
//!   plus one second per turn so a session keeps its order;
//! - every question one request with both speakers as participants, asked
//!   a day after the last session, at k = 6 and B = 800 unless the arm says
//!   otherwise;
//! - a question's evidence is its `evidence` turns (dia ids); a block line
//!   covers the turns its fact came from (a turn the store absorbed into an
//!   earlier near-duplicate fact is covered by that fact).
//!
//! Reported per arm and category (1 multi-hop, 2 temporal, 3 open-domain,
//! 4 single-hop; 5 adversarial is the abstention study's): evidence recall
//! (share of a question's evidence turns in the block, averaged), hit (at
//! least one), answer containment (the gold answer's text appears in the
//! block, lowercased) and block length.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use pfm::config::Config;
use pfm::error::{Error, Result};
use pfm::fact::FactId;
use pfm::memory::{Memory, Observation};
use pfm::rank::{Ranker, Recency};
use pfm::retrieve::{Request, retrieve};
use pfm::rules::{Abstain, Identity, Rules};
use pfm::time::WallTime;
use pfm::vector::{Encoder, Vector};
use pfm_dense::MiniLm;

/// Where the project keeps LoCoMo, relative to the repository root.
pub const DEFAULT_PATH: &str = "../shared/data/locomo/locomo10.json";

/// The whole study on the file at `path`, as a report section.
pub fn study(path: &Path) -> Result<String> {
    let conversations = load(path).map_err(|e| {
        Error::InvalidConfig(format!(
            "the LoCoMo study needs {} (pass --locomo PATH, or --no-locomo to skip it): {e}",
            path.display()
        ))
    })?;
    let results = run(&conversations, &default_arms()?, &Config::default())?;
    let gates = abstention(&conversations, &default_gates(), &Config::default())?;
    let supports = super::swap::supports(&conversations, &Config::default())?;
    let identities = [true, false]
        .into_iter()
        .map(|named| {
            identity(
                &conversations,
                &default_identities(),
                &Config::default(),
                named,
            )
        })
        .collect::<Result<Vec<_>>>()?;
    let said: Vec<&str> = conversations
        .iter()
        .flat_map(|c| c.turns.iter().map(|t| t.said.as_str()))
        .collect();
    Ok(format!(
        "\n## LoCoMo — evidence recall on real conversations\n\n{}\n### Abstention without a schema\n\n{}\n### The coverage gate's threshold and swap margin\n\n{}\n### Identity by provenance: all ten conversations in one store\n\n{}\n### What the speculation gate reads on real turns\n\nEvery turn as said, read by the gate without a value (no turn is keyed today, so the gate acts on none; this is what it would do to keyed ones).\n\n{}",
        markdown(&results, &conversations),
        abstention_markdown(&gates),
        super::swap::markdown(&supports, conversations.len()),
        identity_markdown(&identities[0], &identities[1]),
        super::speculation::real_text_markdown(&said)
    ))
}

/// LoCoMo's answerable categories, in the order reported.
pub const CATEGORIES: [(u8, &str); 4] = [
    (1, "multi-hop"),
    (2, "temporal"),
    (3, "open-domain"),
    (4, "single-hop"),
];

/// Milliseconds a day.
const DAY_MS: i64 = 86_400_000;

/// One conversation: its speakers, turns and questions.
#[derive(Clone, Debug)]
pub struct Conversation {
    /// `sample_id`, e.g. `conv-26`.
    pub id: String,
    /// `speaker_a`, `speaker_b`.
    pub speakers: [String; 2],
    /// Every turn of every session, in order.
    pub turns: Vec<Turn>,
    /// Its questions.
    pub questions: Vec<Question>,
}

/// One turn.
#[derive(Clone, Debug)]
pub struct Turn {
    /// `dia_id`, e.g. `D1:3`.
    pub dia_id: String,
    /// The observation text (see the module docs).
    pub text: String,
    /// The turn as said: without the speaker's name (or the photo).
    pub said: String,
    /// When it was said.
    pub at: WallTime,
}

/// One question.
#[derive(Clone, Debug)]
pub struct Question {
    /// The question.
    pub text: String,
    /// The gold answer's text (absent for adversarial questions).
    pub answer: Option<String>,
    /// The evidence turns.
    pub evidence: Vec<String>,
    /// LoCoMo's category, 1–5.
    pub category: u8,
}

impl Question {
    /// Whether it is answerable and scored: categories 1–4, with evidence.
    pub fn answerable(&self) -> bool {
        (1..=4).contains(&self.category) && !self.evidence.is_empty()
    }
}

impl Conversation {
    /// When its questions are asked: a day after its last turn.
    pub fn asked_at(&self) -> WallTime {
        let last = self.turns.last().map_or(0, |t| t.at.millis());
        WallTime::from_millis(last + DAY_MS)
    }
}

/// Reads `locomo10.json` (see the module docs for what is kept).
pub fn load(path: &Path) -> Result<Vec<Conversation>> {
    let text = std::fs::read_to_string(path).map_err(Error::io(path))?;
    let data: Value = serde_json::from_str(&text).map_err(|e| bad(path, &e.to_string()))?;
    let records = data
        .as_array()
        .ok_or_else(|| bad(path, "expected a JSON list of conversations"))?;
    records.iter().map(|r| conversation(path, r)).collect()
}

fn bad(path: &Path, what: &str) -> Error {
    Error::InvalidConfig(format!("{}: {what}", path.display()))
}

fn conversation(path: &Path, record: &Value) -> Result<Conversation> {
    let str_of = |v: &Value, key: &str| -> Result<String> {
        v.get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| bad(path, &format!("a record lacks the string {key:?}")))
    };
    let id = str_of(record, "sample_id")?;
    let c = record
        .get("conversation")
        .ok_or_else(|| bad(path, &format!("{id} has no conversation")))?;
    let speakers = [str_of(c, "speaker_a")?, str_of(c, "speaker_b")?];
    let mut turns = Vec::new();
    for n in 1.. {
        let Some(session) = c.get(format!("session_{n}")).and_then(Value::as_array) else {
            break;
        };
        let date = str_of(c, &format!("session_{n}_date_time"))?;
        let start = WallTime::parse(&date)?;
        for (i, t) in session.iter().enumerate() {
            let said = str_of(t, "text")?;
            let mut text = format!("{}: {said}", str_of(t, "speaker")?);
            if let Some(caption) = t.get("blip_caption").and_then(Value::as_str) {
                let _ = write!(text, " [shares a photo: {caption}]");
            }
            turns.push(Turn {
                dia_id: str_of(t, "dia_id")?,
                text,
                said,
                at: WallTime::from_millis(start.millis() + 1_000 * i as i64),
            });
        }
    }
    let questions = record
        .get("qa")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(path, &format!("{id} has no qa list")))?
        .iter()
        .map(|q| {
            Ok(Question {
                text: str_of(q, "question")?,
                answer: q.get("answer").map(|a| match a {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                }),
                evidence: q
                    .get("evidence")
                    .and_then(Value::as_array)
                    .map(|e| {
                        e.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default(),
                category: q.get("category").and_then(Value::as_u64).unwrap_or(0) as u8,
            })
        })
        .collect::<Result<_>>()?;
    Ok(Conversation {
        id,
        speakers,
        turns,
        questions,
    })
}

/// A conversation's store and which turns each fact came from.
pub struct Store {
    /// The store.
    pub memory: Memory,
    /// Per fact, the turns it holds (several when turns were absorbed).
    pub turns_of: HashMap<FactId, Vec<String>>,
}

/// Builds a conversation's store, one commit per 64 turns, embedding the
/// turns with `encoder` if given (for the dense and hybrid arms).
pub fn build(
    conversation: &Conversation,
    config: Config,
    encoder: Option<Box<dyn Encoder>>,
) -> Result<Store> {
    let mut memory = Memory::new(config)?;
    if let Some(encoder) = encoder {
        memory.set_encoder(encoder, false)?;
    }
    let mut turns_of: HashMap<FactId, Vec<String>> = HashMap::new();
    for chunk in conversation.turns.chunks(64) {
        let observations = chunk
            .iter()
            .map(|t| {
                Observation::new(t.text.clone(), t.at)
                    .with_participants(conversation.speakers.clone())
            })
            .collect();
        let receipts = memory.observe_batch(observations)?;
        for (t, r) in chunk.iter().zip(receipts) {
            turns_of
                .entry(r.outcome.fact())
                .or_default()
                .push(t.dia_id.clone());
        }
    }
    memory.wait_for_merges();
    Ok(Store { memory, turns_of })
}

/// One arm of the study: a ranker and the block's bounds.
#[derive(Clone, Debug)]
pub struct Arm {
    /// The label in the tables.
    pub label: String,
    /// The ranker.
    pub ranker: Ranker,
    /// How recency decays (`None`: the store's default).
    pub recency: Option<Recency>,
    /// At most this many facts.
    pub k: usize,
    /// At most this many characters.
    pub budget: usize,
    /// Whether its store matches words by their stem (the store's default,
    /// `ScoreParams::stem`); `false` is plain lowercase matching, the
    /// baseline BM25 of the issue that set the target.
    pub stem: bool,
}

/// Sums over the questions of one category.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tally {
    /// Questions with evidence.
    pub questions: usize,
    /// Sum of evidence recall.
    pub recall: f64,
    /// Questions with at least one evidence turn in the block.
    pub hits: usize,
    /// Questions whose gold answer appears in the block.
    pub contains: usize,
    /// Block lines.
    pub lines: usize,
    /// Block characters.
    pub chars: usize,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.questions += other.questions;
        self.recall += other.recall;
        self.hits += other.hits;
        self.contains += other.contains;
        self.lines += other.lines;
        self.chars += other.chars;
    }

    fn mean(&self, x: f64) -> f64 {
        x / self.questions.max(1) as f64
    }
}

/// One arm's tallies per answerable category ([`CATEGORIES`] order).
#[derive(Clone, Debug)]
pub struct ArmResult {
    /// The arm's label.
    pub label: String,
    /// Per category.
    pub categories: [Tally; 4],
}

impl ArmResult {
    /// The tally over categories 1–4.
    pub fn overall(&self) -> Tally {
        let mut all = Tally::default();
        for t in &self.categories {
            all.add(t);
        }
        all
    }
}

/// Asks every answerable question of `conversation` of `store` under each
/// arm whose stemming is the store's and adds the outcome to `results` (one
/// per arm, in order); a dense or hybrid arm's query vector comes from
/// `encoder`.
pub fn score(
    conversation: &Conversation,
    store: &Store,
    arms: &[Arm],
    results: &mut [ArmResult],
    mut encoder: Option<&mut MiniLm>,
) -> Result<()> {
    let version = store.memory.version();
    let at = conversation.asked_at();
    let stem = version.params.stem;
    for q in &conversation.questions {
        let Some(c) = CATEGORIES.iter().position(|(c, _)| *c == q.category) else {
            continue;
        };
        if q.evidence.is_empty() {
            continue;
        }
        let vector = match encoder.as_deref_mut() {
            Some(e) => {
                let v = e.encode(&[q.text.as_str()])?;
                v.first().map(|v| Arc::new(Vector::quantize(v)))
            }
            None => None,
        };
        for (arm, result) in arms.iter().zip(results.iter_mut()) {
            if arm.stem != stem {
                continue; // asked of the conversation's other store
            }
            let request = Request::new(q.text.clone(), at)
                .with_participants(conversation.speakers.clone())
                .with_ranker(arm.ranker.clone())
                .with_k(arm.k)
                .with_budget(arm.budget);
            let request = match arm.recency {
                Some(r) => request.with_recency(r),
                None => request,
            };
            let request = match (&vector, arm.ranker.needs_vector()) {
                (Some(v), true) => request.with_vector(v.clone()),
                _ => request,
            };
            let block = retrieve(&version, &request)?;
            let covered: Vec<&str> = block
                .lines
                .iter()
                .filter_map(|l| store.turns_of.get(&l.fact))
                .flatten()
                .map(String::as_str)
                .collect();
            let found = q
                .evidence
                .iter()
                .filter(|e| covered.contains(&e.as_str()))
                .count();
            let text = block.text.to_lowercase();
            let t = &mut result.categories[c];
            t.questions += 1;
            t.recall += found as f64 / q.evidence.len() as f64;
            t.hits += usize::from(found > 0);
            t.contains += usize::from(
                q.answer
                    .as_ref()
                    .is_some_and(|a| !a.is_empty() && text.contains(&a.to_lowercase())),
            );
            t.lines += block.lines.len();
            t.chars += block.text.chars().count();
        }
    }
    Ok(())
}

/// Runs the study: every conversation's store, every arm (a conversation
/// has a second store, without stemming, when an arm asks for one). When an
/// arm is dense or hybrid, its store embeds its turns with MiniLM (one
/// session, one thread) and each question is encoded (another, two
/// threads); the models come from `scripts/fetch-models`.
pub fn run(
    conversations: &[Conversation],
    arms: &[Arm],
    config: &Config,
) -> Result<Vec<ArmResult>> {
    let dense = arms.iter().any(|a| a.ranker.needs_vector());
    let mut stems: Vec<bool> = arms.iter().map(|a| a.stem).collect();
    stems.sort_unstable();
    stems.dedup();
    let mut queries = dense.then(|| MiniLm::locate(2)).transpose()?;
    let mut results: Vec<ArmResult> = arms
        .iter()
        .map(|a| ArmResult {
            label: a.label.clone(),
            categories: [Tally::default(); 4],
        })
        .collect();
    let bar = indicatif::ProgressBar::new(conversations.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} conversations {msg}",
        )
        .expect("static progress template parses"),
    );
    for conversation in conversations {
        bar.set_message(format!(
            "{} ({} turns)",
            conversation.id,
            conversation.turns.len()
        ));
        for &stem in &stems {
            let encoder = arms
                .iter()
                .any(|a| a.stem == stem && a.ranker.needs_vector())
                .then(|| MiniLm::locate(1).map(|m| Box::new(m) as Box<dyn Encoder>))
                .transpose()?;
            let mut config = config.clone();
            config.score.stem = stem;
            let store = build(conversation, config, encoder)?;
            score(conversation, &store, arms, &mut results, queries.as_mut())?;
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(results)
}

/// The arms of the report: pfm at the store's defaults and under each
/// recency mode, and the plain BM25 baselines (words as written, no stems)
/// with the same block rule, then BM25 with stems; then pfm and plain
/// BM25 at k = 10, B = 2,000.
pub fn default_arms() -> Result<Vec<Arm>> {
    let arm =
        |label: &str, ranker: Ranker, recency: Option<Recency>, k: usize, budget: usize| Arm {
            label: label.to_owned(),
            ranker,
            recency,
            k,
            budget,
            stem: true,
        };
    let plain = |arm: Arm| Arm { stem: false, ..arm };
    let bm25 = Ranker::named("bm25_validity")?;
    Ok(vec![
        arm("pfm (defaults)", Ranker::pfm(), None, 6, 800),
        arm(
            "pfm, recency fixed (the paper's)",
            Ranker::pfm(),
            Some(Recency::Fixed),
            6,
            800,
        ),
        arm(
            "pfm, recency span",
            Ranker::pfm(),
            Some(Recency::Span),
            6,
            800,
        ),
        arm(
            "pfm, recency off",
            Ranker::pfm(),
            Some(Recency::Off),
            6,
            800,
        ),
        plain(arm("BM25 (text)", bm25.clone(), None, 6, 800)),
        plain(arm(
            "BM25 + participants",
            Ranker::named("bm25_validity_p")?,
            None,
            6,
            800,
        )),
        arm("BM25 (text), stemmed", bm25.clone(), None, 6, 800),
        arm(
            "dense (MiniLM)",
            Ranker::named("dense_validity")?,
            None,
            6,
            800,
        ),
        arm(
            "hybrid (BM25 + MiniLM, RRF)",
            Ranker::named("hybrid_validity")?,
            None,
            6,
            800,
        ),
        arm("pfm, k = 10, B = 2000", Ranker::pfm(), None, 10, 2000),
        plain(arm("BM25 (text), k = 10, B = 2000", bm25, None, 10, 2000)),
    ])
}

/// The evidence-recall table: one row per arm, recall / hit per category,
/// then over 1–4 with containment and block length.
pub fn markdown(results: &[ArmResult], conversations: &[Conversation]) -> String {
    let turns: usize = conversations.iter().map(|c| c.turns.len()).sum();
    let mut out = format!(
        "LoCoMo: {} conversations, {turns} turns (one observation each), one store per conversation; \
         questions of categories 1–4 with evidence, asked a day after the last session with both \
         speakers as participants. Each cell: evidence recall / hit.\n\n",
        conversations.len()
    );
    out.push_str("| Arm |");
    for (_, name) in CATEGORIES {
        let _ = write!(out, " {name} |");
    }
    out.push_str(" 1–4 | answer in block | lines | chars |\n|---|");
    out.push_str(&"---|".repeat(CATEGORIES.len() + 4));
    out.push('\n');
    for r in results {
        let _ = write!(out, "| {} |", r.label);
        for t in &r.categories {
            let _ = write!(
                out,
                " {:.3} / {:.3} |",
                t.mean(t.recall),
                t.mean(t.hits as f64)
            );
        }
        let all = r.overall();
        let _ = writeln!(
            out,
            " {:.3} / {:.3} | {:.3} | {:.2} | {:.0} |",
            all.mean(all.recall),
            all.mean(all.hits as f64),
            all.mean(all.contains as f64),
            all.mean(all.lines as f64),
            all.mean(all.chars as f64),
        );
    }
    let questions = results.first().map_or(0, |r| r.overall().questions);
    let _ = writeln!(out, "\n{questions} questions per arm.");
    out
}

/// One abstention gate's rates over the three question sets.
#[derive(Clone, Debug)]
pub struct GateRates {
    /// The gate, as the table names it.
    pub label: String,
    /// Abstentions on answerable questions (categories 1–4), and their count.
    pub answerable: (usize, usize),
    /// Of those, on the ones whose block without a gate holds an evidence
    /// turn (the gate withholds an answer the block had), and their count.
    pub answerable_held: (usize, usize),
    /// On adversarial questions (category 5: the event is the other
    /// speaker's), and their count.
    pub adversarial: (usize, usize),
    /// On the other nine conversations' answerable questions (the paper's
    /// cross-conversation protocol), and their count.
    pub cross: (usize, usize),
}

/// The gates of the abstention table: the coverage gate over its
/// threshold, `auto`, and the paper's margin gate.
pub fn default_gates() -> Vec<(String, Abstain)> {
    let mut gates: Vec<(String, Abstain)> =
        [0.05f32, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.8]
            .iter()
            .map(|t| (format!("coverage {t}"), Abstain::Coverage(*t)))
            .collect();
    gates.push(("auto (coverage default)".into(), Abstain::Auto));
    for t in [1.5f32, 5.0] {
        gates.push((
            format!("margin {t} (the paper's, fixed recency)"),
            Abstain::Margin(t),
        ));
    }
    gates
}

/// Asks each store its own answerable and adversarial questions and every
/// other conversation's answerable ones under each gate (pfm at the
/// defaults otherwise) and counts the abstentions.
pub fn abstention(
    conversations: &[Conversation],
    gates: &[(String, Abstain)],
    config: &Config,
) -> Result<Vec<GateRates>> {
    let mut rates: Vec<GateRates> = gates
        .iter()
        .map(|(label, _)| GateRates {
            label: label.clone(),
            answerable: (0, 0),
            answerable_held: (0, 0),
            adversarial: (0, 0),
            cross: (0, 0),
        })
        .collect();
    let answerable = |q: &&Question| q.answerable();
    for (i, c) in conversations.iter().enumerate() {
        let store = build(c, config.clone(), None)?;
        let version = store.memory.version();
        let at = c.asked_at();
        let own = c.questions.iter();
        let others = conversations
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .flat_map(|(_, o)| o.questions.iter().filter(answerable));
        let sets = own
            .filter_map(|q| match q.category {
                5 => Some((q, 1)),
                _ if answerable(&q) => Some((q, 0)),
                _ => None,
            })
            .chain(others.map(|q| (q, 2)));
        for (q, set) in sets {
            let request = |abstain: Abstain| {
                let request = Request::new(q.text.clone(), at)
                    .with_participants(c.speakers.clone())
                    .with_rules(Rules {
                        identity: Identity::None,
                        abstain,
                    });
                super::as_the_paper_gates(request, abstain)
            };
            let held = set == 0
                && retrieve(&version, &request(Abstain::None))?
                    .lines
                    .iter()
                    .filter_map(|l| store.turns_of.get(&l.fact))
                    .flatten()
                    .any(|d| q.evidence.contains(d));
            for ((_, gate), r) in gates.iter().zip(rates.iter_mut()) {
                let abstained = retrieve(&version, &request(*gate))?.abstained;
                if held {
                    r.answerable_held.0 += usize::from(abstained);
                    r.answerable_held.1 += 1;
                }
                let tally = match set {
                    0 => &mut r.answerable,
                    1 => &mut r.adversarial,
                    _ => &mut r.cross,
                };
                tally.0 += usize::from(abstained);
                tally.1 += 1;
            }
        }
    }
    Ok(rates)
}

/// The abstention table.
pub fn abstention_markdown(rates: &[GateRates]) -> String {
    let share = |(a, n): (usize, usize)| a as f64 / n.max(1) as f64;
    let mut out = String::from(
        "Share of requests that get an empty block, per gate (pfm at the defaults). Unanswerable: \
         LoCoMo's adversarial questions (the event is the other speaker's) and the other nine \
         conversations' questions asked of each store. Target: at least 0.50 on unanswerable \
         requests and at most 0.05 on answerable ones; the paper's margin gate abstained on 95.0% \
         of unanswerable and 73.9% of answerable requests. Evidence in block: the answerable \
         requests whose block without a gate holds an evidence turn (an abstention there \
         withholds an answer; elsewhere the block had none to give).\n\n\
         | Gate | answerable (1–4) ↓ | answerable, evidence in block ↓ | adversarial (5) ↑ | other \
         conversations ↑ |\n|---|---|---|---|---|\n",
    );
    for r in rates {
        let _ = writeln!(
            out,
            "| {} | {:.3} | {:.3} | {:.3} | {:.3} |",
            r.label,
            share(r.answerable),
            share(r.answerable_held),
            share(r.adversarial),
            share(r.cross)
        );
    }
    if let Some(r) = rates.first() {
        let _ = writeln!(
            out,
            "\n{} answerable ({} with evidence in block), {} adversarial and {} cross-conversation \
             requests.",
            r.answerable.1, r.answerable_held.1, r.adversarial.1, r.cross.1
        );
    }
    out
}

/// One identity rule's outcome on the merged store.
#[derive(Clone, Debug, Default)]
pub struct IdentityRow {
    /// The rule, as the table names it.
    pub label: String,
    /// Its own conversation's evidence over the answerable questions.
    pub tally: Tally,
    /// Block lines from another conversation.
    pub off_conversation: usize,
    /// Requests from a conversation whose speaker shares a name with a
    /// speaker of another conversation.
    pub name_sharing: usize,
    /// Of those, the ones whose block holds a line from such a conversation.
    pub exposed: usize,
}

/// The identity rules of the table.
pub fn default_identities() -> Vec<(String, Identity)> {
    vec![
        ("none".into(), Identity::None),
        ("posterior (Eq. 2)".into(), Identity::Posterior),
        ("participant filter".into(), Identity::ParticipantFilter),
        (
            "company (every participant present)".into(),
            Identity::Company,
        ),
    ]
}

/// The paper's Table 17 protocol: every conversation in one store (each
/// turn with its conversation's speakers as participants), every
/// answerable question asked with its conversation's speakers, under each
/// identity rule. A line is off-conversation when its turn is from another
/// conversation; a request is exposed when such a line comes from a
/// conversation with a speaker of the same name as one of its own. With
/// `named`, turns are stored as elsewhere in the study (`"Ana: …"`);
/// without, as said, so only the participants carry who spoke.
pub fn identity(
    conversations: &[Conversation],
    rules: &[(String, Identity)],
    config: &Config,
    named: bool,
) -> Result<Vec<IdentityRow>> {
    let mut memory = Memory::new(config.clone())?;
    // Per fact, the (conversation, turn) pairs it holds.
    let mut origin: HashMap<FactId, Vec<(usize, &str)>> = HashMap::new();
    for (ci, c) in conversations.iter().enumerate() {
        for chunk in c.turns.chunks(64) {
            let observations = chunk
                .iter()
                .map(|t| {
                    let text = if named { &t.text } else { &t.said };
                    Observation::new(text.clone(), t.at).with_participants(c.speakers.clone())
                })
                .collect();
            for (t, r) in chunk.iter().zip(memory.observe_batch(observations)?) {
                origin
                    .entry(r.outcome.fact())
                    .or_default()
                    .push((ci, t.dia_id.as_str()));
            }
        }
    }
    memory.wait_for_merges();
    let version = memory.version();
    let at = conversations
        .iter()
        .map(Conversation::asked_at)
        .max()
        .unwrap_or(WallTime::EPOCH);
    let first = |s: &str| s.split_whitespace().next().unwrap_or("").to_lowercase();
    // Per conversation, the other conversations with a same-named speaker.
    let namesakes: Vec<Vec<usize>> = conversations
        .iter()
        .enumerate()
        .map(|(i, c)| {
            conversations
                .iter()
                .enumerate()
                .filter(|(j, o)| {
                    *j != i
                        && o.speakers
                            .iter()
                            .any(|a| c.speakers.iter().any(|b| first(a) == first(b)))
                })
                .map(|(j, _)| j)
                .collect()
        })
        .collect();
    let mut rows: Vec<IdentityRow> = rules
        .iter()
        .map(|(label, _)| IdentityRow {
            label: label.clone(),
            ..IdentityRow::default()
        })
        .collect();
    for (ci, c) in conversations.iter().enumerate() {
        for q in c.questions.iter().filter(|q| q.answerable()) {
            for ((_, rule), row) in rules.iter().zip(rows.iter_mut()) {
                let request = Request::new(q.text.clone(), at)
                    .with_participants(c.speakers.clone())
                    .with_rules(Rules {
                        identity: *rule,
                        abstain: Abstain::None,
                    });
                let block = retrieve(&version, &request)?;
                let turns: Vec<(usize, &str)> = block
                    .lines
                    .iter()
                    .filter_map(|l| origin.get(&l.fact))
                    .flatten()
                    .copied()
                    .collect();
                let found = q
                    .evidence
                    .iter()
                    .filter(|e| turns.contains(&(ci, e.as_str())))
                    .count();
                let t = &mut row.tally;
                t.questions += 1;
                t.recall += found as f64 / q.evidence.len() as f64;
                t.hits += usize::from(found > 0);
                t.lines += block.lines.len();
                row.off_conversation += block
                    .lines
                    .iter()
                    .filter(|l| {
                        origin
                            .get(&l.fact)
                            .is_some_and(|o| o.iter().all(|(cj, _)| *cj != ci))
                    })
                    .count();
                if !namesakes[ci].is_empty() {
                    row.name_sharing += 1;
                    row.exposed +=
                        usize::from(turns.iter().any(|(cj, _)| namesakes[ci].contains(cj)));
                }
            }
        }
    }
    Ok(rows)
}

/// The identity table: turns stored with the speaker's name, then as said.
pub fn identity_markdown(named: &[IdentityRow], said: &[IdentityRow]) -> String {
    let mut out = String::from(
        "One store of every conversation; each answerable question asked with its own \
         conversation's speakers as participants. Name-sharing exposure: share of requests from a \
         conversation with a speaker whose first name another conversation's speaker shares (the \
         Johns of conv-41, -43 and -47) whose block holds a line from such a conversation. \
         Off-conversation: share of block lines from another conversation. Recall / hit: the \
         request's own evidence. Paper (Table 17): name-sharing exposure 0.543, with the participant \
         filter 0.301. Target: below 0.10 with no loss of recall.\n\n\
         | Turns stored | Rule | name-sharing exposure ↓ | off-conversation lines ↓ | recall / hit (1–4) |\n|---|---|---|---|---|\n",
    );
    let rows = named
        .iter()
        .map(|r| ("\"Ana: …\"", r))
        .chain(said.iter().map(|r| ("as said", r)));
    for (stored, r) in rows {
        let t = &r.tally;
        let _ = writeln!(
            out,
            "| {stored} | {} | {:.3} | {:.3} | {:.3} / {:.3} |",
            r.label,
            r.exposed as f64 / r.name_sharing.max(1) as f64,
            r.off_conversation as f64 / t.lines.max(1) as f64,
            t.mean(t.recall),
            t.mean(t.hits as f64),
        );
    }
    if let Some(r) = named.first() {
        let _ = writeln!(
            out,
            "\n{} requests per row, {} of them from a conversation with a namesake elsewhere.",
            r.tally.questions, r.name_sharing
        );
    }
    out
}
