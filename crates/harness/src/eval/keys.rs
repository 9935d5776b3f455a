//! The key-discovery study (issue 21): do keys come out of real text?
//!
//! Two parts:
//! - **revision streams**: a generator of encyclopedic and conversational
//!   statements ([`stream`]: 51 relations of people, organisations and
//!   places, seven of them attributes no table holds, 3–5 phrasings each, written apart from the extractor's table;
//!   counterfactual revisions; distractors that share a subject or a
//!   relation word; subjects that share a first name), with gold keys. Each
//!   arm ingests the stream as plain text (no keys, no entities) and is
//!   scored on key precision and recall, false merges, and, on every
//!   revised cell's question, stale exposure and current-value recall;
//! - **LoCoMo**: how many real turns get a key, by relation, and the
//!   precision of a hand-labelled sample of 100 keyed turns
//!   (`eval/locomo-key-audit.tsv`, committed: a label is a person's reading
//!   of the turn, never the extractor's).
//!
//! Scoring. A statement's *cell* is its gold (subject, relation); a
//! distractor's cell is its own. A system key is *pure* when every
//! statement it received shares one cell; a keyed statement is *correct*
//! when its key is pure and its value is the gold object's (contained in
//! it, normalized). Key precision is correct / keyed; recall is correct /
//! gold statements; a false merge is an impure key. A revised cell's
//! question is stale when its block shows a fact of a superseded statement
//! of that cell, and current when it shows the cell's last statement.

pub mod stream;

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;

use pfm::config::Config;
use pfm::error::{Error, Result};
use pfm::extract::soft::SoftIdentity;
use pfm::fact::FactId;
use pfm::memory::{Memory, Observation};
use pfm::retrieve::{Request, retrieve};
use pfm::text;
use pfm_dense::{MiniLm, SharedMiniLm};

use super::locomo;
use stream::Statement;

/// Seeds of the revision streams.
pub const SEEDS: [u64; 3] = [1, 2, 3];

/// Where the LoCoMo audit's labels live.
pub const AUDIT: &str = "eval/locomo-key-audit.tsv";

/// One arm: a name and the store's configuration.
pub struct Arm {
    /// The label in the tables.
    pub name: &'static str,
    /// Whether relations are keyed (`Config::relations`).
    pub relations: bool,
    /// Soft key identity (`Config::soft_identity`).
    pub soft: SoftIdentity,
    /// Whether the store has MiniLM attached (the embedding step's
    /// encoder; needs `scripts/fetch-models`).
    pub encoder: bool,
}

/// The arms: the slot table alone (before issue 21), with relations, and
/// with soft key identity, lexical and then by embedding too.
pub const ARMS: [Arm; 4] = [
    Arm {
        name: "slot rules only",
        relations: false,
        soft: SoftIdentity::Off,
        encoder: false,
    },
    Arm {
        name: "slot + relation rules",
        relations: true,
        soft: SoftIdentity::Off,
        encoder: false,
    },
    Arm {
        name: "+ soft identity (lexical)",
        relations: true,
        soft: SoftIdentity::Lexical,
        encoder: false,
    },
    Arm {
        name: "+ soft identity (embedding)",
        relations: true,
        soft: SoftIdentity::Embedding,
        encoder: true,
    },
];

impl Arm {
    /// A store configured as the arm says; `model` is loaded once for all
    /// the arm's stores.
    fn memory(&self, model: &mut Option<SharedMiniLm>) -> Result<Memory> {
        let mut memory = Memory::new(Config {
            relations: self.relations,
            soft_identity: self.soft,
            ..Config::default()
        })?;
        if self.encoder {
            let shared = match model {
                Some(m) => m.clone(),
                None => model.insert(SharedMiniLm::new(MiniLm::locate(1)?)).clone(),
            };
            memory.set_encoder(Box::new(shared), false)?;
        }
        Ok(memory)
    }
}

/// One arm's scores on the revision streams.
#[derive(Clone, Debug, Default)]
pub struct Scores {
    /// Gold statements (not distractors).
    pub gold: usize,
    /// Statements the store keyed.
    pub keyed: usize,
    /// Keyed statements with a pure key and the right value.
    pub correct: usize,
    /// Distractors the store keyed.
    pub keyed_distractors: usize,
    /// Keys that received statements of more than one cell.
    pub false_merges: usize,
    /// Revised cells asked about.
    pub revised: usize,
    /// Of those, blocks showing a superseded statement of the cell.
    pub stale: usize,
    /// Of those, blocks showing the cell's last statement.
    pub current: usize,
    /// Of the stale ones, those whose cell has a version with no key (the
    /// extractor missed it, so no supersession could take it out).
    pub stale_keyless: usize,
    /// Of the stale ones, those whose every version is keyed but under more
    /// than one key (a merge soft identity missed: "5K personal best" and
    /// "best 5K time" opened two keys).
    pub stale_split: usize,
    /// Examples of split cells: their keys.
    pub splits: Vec<String>,
    /// Gold statements not keyed correctly, by gold relation.
    pub missed_by: std::collections::BTreeMap<&'static str, usize>,
    /// Examples: gold statements not keyed correctly.
    pub missed: Vec<String>,
    /// Examples: keyed statements that are not correct.
    pub wrong: Vec<String>,
}

/// Runs one arm on one stream.
fn score_stream(
    arm: &Arm,
    model: &mut Option<SharedMiniLm>,
    statements: &[Statement],
    into: &mut Scores,
) -> Result<()> {
    let mut memory = arm.memory(model)?;
    let mut facts: Vec<FactId> = Vec::with_capacity(statements.len());
    let mut keys: Vec<Option<String>> = Vec::with_capacity(statements.len());
    let mut values: Vec<Option<String>> = Vec::with_capacity(statements.len());
    for chunk in statements.chunks(64) {
        let observations = chunk
            .iter()
            .map(|s| {
                Observation::new(s.text.clone(), s.at).with_participants(s.participants.clone())
            })
            .collect();
        for r in memory.observe_batch(observations)? {
            let fact = r.outcome.fact();
            facts.push(fact);
            keys.push(r.key.as_ref().map(ToString::to_string));
            values.push(
                memory
                    .fact(fact)
                    .ok()
                    .and_then(|f| f.body.value().map(str::to_owned)),
            );
        }
    }
    // Which cells each key received.
    let mut cells_of: HashMap<&str, HashSet<String>> = HashMap::new();
    for (s, key) in statements.iter().zip(&keys) {
        if let Some(k) = key {
            cells_of.entry(k).or_default().insert(s.cell());
        }
    }
    into.false_merges += cells_of.values().filter(|c| c.len() > 1).count();
    for ((s, key), value) in statements.iter().zip(&keys).zip(&values) {
        into.gold += usize::from(s.gold.is_some());
        let Some(k) = key else {
            if let Some(g) = &s.gold {
                *into.missed_by.entry(g.relation).or_default() += 1;
                if into.missed.len() < 12 {
                    into.missed.push(s.text.clone());
                }
            }
            continue;
        };
        into.keyed += 1;
        into.keyed_distractors += usize::from(s.gold.is_none());
        let pure = cells_of[k.as_str()].len() == 1;
        let right_value = match (&s.gold, value) {
            (Some(g), Some(v)) => !v.is_empty() && text::contains(&text::normalize(&g.object), v),
            _ => false,
        };
        if pure && right_value {
            into.correct += 1;
            continue;
        }
        if let Some(g) = &s.gold {
            *into.missed_by.entry(g.relation).or_default() += 1;
        }
        if into.wrong.len() < 12 {
            into.wrong.push(format!(
                "{} → {k} = {}",
                s.text,
                value.as_deref().unwrap_or("")
            ));
        }
    }
    // Every revised cell's question, at the end.
    let version = memory.version();
    let at = statements.last().map(|s| s.at).unwrap_or_default();
    let mut by_cell: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, s) in statements.iter().enumerate() {
        if s.gold.is_some() {
            by_cell.entry(s.cell()).or_default().push(i);
        }
    }
    let mut cells: Vec<_> = by_cell.into_iter().filter(|(_, v)| v.len() > 1).collect();
    cells.sort();
    for (_, versions) in cells {
        let (last, older) = versions.split_last().expect("a revised cell has versions");
        let s = &statements[*last];
        let gold = s.gold.as_ref().expect("cells are of gold statements");
        let request = Request::new(gold.question.clone(), at.plus_millis(86_400_000))
            .with_participants(s.participants.clone());
        let block = retrieve(&version, &request)?;
        let shown: HashSet<FactId> = block.lines.iter().map(|l| l.fact).collect();
        into.revised += 1;
        let last_fact = facts[*last];
        // A re-statement of an older value is the same fact: only a fact
        // no later statement made is stale.
        let stale = older
            .iter()
            .any(|&i| facts[i] != last_fact && shown.contains(&facts[i]));
        into.stale += usize::from(stale);
        let keyless = versions.iter().any(|&i| keys[i].is_none());
        into.stale_keyless += usize::from(stale && keyless);
        let distinct: HashSet<&str> = versions
            .iter()
            .filter_map(|&i| keys[i].as_deref())
            .collect();
        if stale && !keyless && distinct.len() > 1 {
            into.stale_split += 1;
            if into.splits.len() < 6 {
                let mut keys: Vec<&str> = distinct.into_iter().collect();
                keys.sort_unstable();
                into.splits.push(keys.join(" | "));
            }
        }
        into.current += usize::from(shown.contains(&last_fact));
    }
    Ok(())
}

/// Scores every arm on the streams of `seeds`.
pub fn run_streams(seeds: &[u64]) -> Result<Vec<(&'static str, Scores)>> {
    let mut model = None;
    ARMS.iter()
        .map(|arm| {
            let mut scores = Scores::default();
            for &seed in seeds {
                score_stream(arm, &mut model, &stream::generate(seed), &mut scores)?;
            }
            Ok((arm.name, scores))
        })
        .collect()
}

/// One keyed LoCoMo turn.
#[derive(Clone, Debug)]
pub struct KeyedTurn {
    /// Conversation id.
    pub conversation: String,
    /// The turn's dia id.
    pub dia_id: String,
    /// The observation text.
    pub text: String,
    /// The key.
    pub key: String,
    /// The value.
    pub value: String,
}

impl KeyedTurn {
    /// What a label names: (conversation, dia id, key, value).
    fn id(&self) -> Label {
        (
            self.conversation.clone(),
            self.dia_id.clone(),
            self.key.clone(),
            self.value.clone(),
        )
    }
}

/// A label's identity: (conversation, dia id, key, value).
type Label = (String, String, String, String);

/// Every LoCoMo turn the store keys, per arm: (turns, keyed turns).
pub fn locomo_keys(
    path: &Path,
    arm: &Arm,
    model: &mut Option<SharedMiniLm>,
) -> Result<(usize, Vec<KeyedTurn>)> {
    let conversations = locomo::load(path)?;
    let mut turns = 0;
    let mut keyed = Vec::new();
    for c in &conversations {
        let mut memory = arm.memory(model)?;
        for chunk in c.turns.chunks(64) {
            let observations = chunk
                .iter()
                .map(|t| {
                    Observation::new(t.text.clone(), t.at).with_participants(c.speakers.clone())
                })
                .collect();
            for (t, r) in chunk.iter().zip(memory.observe_batch(observations)?) {
                turns += 1;
                let Some(key) = r.key else { continue };
                let value = memory
                    .fact(r.outcome.fact())
                    .ok()
                    .and_then(|f| f.body.value().map(str::to_owned))
                    .unwrap_or_default();
                keyed.push(KeyedTurn {
                    conversation: c.id.clone(),
                    dia_id: t.dia_id.clone(),
                    text: t.text.clone(),
                    key: key.to_string(),
                    value,
                });
            }
        }
    }
    Ok((turns, keyed))
}

/// The audit sample: up to 100 keyed turns, spread over the corpus (every
/// n-th in corpus order).
pub fn sample(keyed: &[KeyedTurn]) -> Vec<&KeyedTurn> {
    let step = keyed.len().div_ceil(100).max(1);
    keyed.iter().step_by(step).take(100).collect()
}

/// Labels of the audit file: (conversation, dia id, key, value) → correct.
fn labels(path: &Path) -> Result<HashMap<Label, bool>> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(HashMap::new());
    };
    let mut out = HashMap::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let [conv, dia, key, value, label, ..] = f.as_slice() else {
            return Err(Error::InvalidConfig(format!(
                "{}:{}: expected conversation, dia_id, key, value, label, note",
                path.display(),
                n + 1
            )));
        };
        let label = match *label {
            "" => continue,
            "y" => true,
            "n" => false,
            other => {
                return Err(Error::InvalidConfig(format!(
                    "{}:{}: label {other:?} is neither y nor n",
                    path.display(),
                    n + 1
                )));
            }
        };
        out.insert(
            (
                (*conv).into(),
                (*dia).into(),
                (*key).into(),
                (*value).into(),
            ),
            label,
        );
    }
    Ok(out)
}

/// The study's Markdown section.
pub fn study(locomo_path: Option<&Path>) -> Result<String> {
    let mut out = String::new();
    let _ = writeln!(out, "\n## Key discovery: keys from plain text (issue 21)\n");
    let rows = run_streams(&SEEDS)?;
    let _ = writeln!(
        out,
        "Revision streams (`eval::keys::stream`, seeds {SEEDS:?}): {} relations, encyclopedic and conversational statements sent as plain text, scored against gold keys (module docs of `eval::keys`). Targets: key precision ≥ 0.99, recall ≥ 0.90, stale exposure ≤ 0.05.\n",
        stream::RELATIONS.len()
    );
    let _ = writeln!(
        out,
        "| arm | gold statements | keyed | key precision | recall | keyed distractors | false merges | revised questions | stale exposure | current-value recall |\n|---|---|---|---|---|---|---|---|---|---|"
    );
    let ratio = |a: usize, b: usize| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    for (name, s) in &rows {
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {:.3} | {:.3} | {} | {} | {} | {:.3} | {:.3} |",
            s.gold,
            s.keyed,
            ratio(s.correct, s.keyed),
            ratio(s.correct, s.gold),
            s.keyed_distractors,
            s.false_merges,
            s.revised,
            ratio(s.stale, s.revised),
            ratio(s.current, s.revised),
        );
    }
    if let Some((_, s)) = rows.last() {
        let mut by: Vec<(&str, usize)> = s.missed_by.iter().map(|(r, n)| (*r, *n)).collect();
        by.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let _ = writeln!(
            out,
            "\nWith soft identity (embedding): of {} stale questions, {} are of a cell with a version no rule keyed, {} of a cell split over several keys (a missed merge: {}), {} other. Gold statements not keyed correctly, by relation: {}.",
            s.stale,
            s.stale_keyless,
            s.stale_split,
            s.splits
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", "),
            s.stale - s.stale_keyless - s.stale_split,
            by.iter()
                .map(|(r, n)| format!("{r} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let _ = writeln!(
            out,
            "\nStatements not keyed correctly (first {}):\n",
            s.missed.len()
        );
        for m in &s.missed {
            let _ = writeln!(out, "- `{m}`");
        }
        let _ = writeln!(out, "\nKeyed but not correct (first {}):\n", s.wrong.len());
        for w in &s.wrong {
            let _ = writeln!(out, "- `{w}`");
        }
    }
    let Some(path) = locomo_path else {
        return Ok(out);
    };
    let _ = writeln!(out, "\n### LoCoMo: keyed turns\n");
    let _ = writeln!(
        out,
        "| arm | turns | keyed turns | share |\n|---|---|---|---|"
    );
    let mut last = Vec::new();
    let mut model = None;
    for arm in &ARMS {
        let (turns, keyed) = locomo_keys(path, arm, &mut model)?;
        let _ = writeln!(
            out,
            "| {} | {turns} | {} | {:.3} |",
            arm.name,
            keyed.len(),
            ratio(keyed.len(), turns)
        );
        last = keyed;
    }
    let mut by_slot: HashMap<&str, usize> = HashMap::new();
    for k in &last {
        let slot = k.key.split('/').nth(1).unwrap_or("");
        *by_slot.entry(slot).or_default() += 1;
    }
    let mut by_slot: Vec<_> = by_slot.into_iter().collect();
    by_slot.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let _ = writeln!(
        out,
        "\nKeyed turns by relation (soft identity, embedding): {}\n",
        by_slot
            .iter()
            .map(|(s, n)| format!("{s} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let labels = labels(Path::new(AUDIT))?;
    let sampled = sample(&last);
    let mut yes = 0;
    let mut unlabelled = Vec::new();
    for k in &sampled {
        let id = k.id();
        match labels.get(&id) {
            Some(true) => yes += 1,
            Some(false) => {}
            None => unlabelled.push(*k),
        }
    }
    let labelled = sampled.len() - unlabelled.len();
    let _ = writeln!(
        out,
        "Audit (`{AUDIT}`): {} keyed turns sampled, {labelled} labelled by hand, precision {yes}/{labelled} = {:.3}{}.\n",
        sampled.len(),
        ratio(yes, labelled),
        if unlabelled.is_empty() {
            String::new()
        } else {
            format!(
                "; {} sampled turns have no label (the extractor changed since the labels were made: label them)",
                unlabelled.len()
            )
        }
    );
    for k in unlabelled.iter().take(10) {
        let _ = writeln!(
            out,
            "- unlabelled: {}\t{}\t{}\t{}\t`{}`",
            k.conversation, k.dia_id, k.key, k.value, k.text
        );
    }
    Ok(out)
}

/// Writes the audit sample as a label file to fill in (`label` empty).
pub fn write_sample(path: &Path, locomo_path: &Path) -> Result<usize> {
    let (_, keyed) = locomo_keys(locomo_path, &ARMS[ARMS.len() - 1], &mut None)?;
    let old = labels(path).unwrap_or_default();
    let mut tsv = String::from("conversation\tdia_id\tkey\tvalue\tlabel\ttext\n");
    let sampled = sample(&keyed);
    for k in &sampled {
        let id = k.id();
        let label = match old.get(&id) {
            Some(true) => "y",
            Some(false) => "n",
            None => "",
        };
        let _ = writeln!(
            tsv,
            "{}\t{}\t{}\t{}\t{label}\t{}",
            k.conversation,
            k.dia_id,
            k.key,
            k.value,
            k.text.replace(['\t', '\n'], " ")
        );
    }
    std::fs::write(path, tsv).map_err(Error::io(path))?;
    Ok(sampled.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relation_rules_key_the_stream_and_slot_rules_do_not() {
        let rows = run_streams(&[5]).unwrap();
        let (slots, relations) = (&rows[0].1, &rows[1].1);
        assert_eq!(slots.keyed, 0, "the six slots are not in the stream");
        assert!(relations.keyed > relations.gold / 2, "{relations:?}");
        assert_eq!(relations.keyed_distractors, 0, "{:?}", relations.wrong);
        // Keying revisions takes superseded versions out of the blocks.
        assert!(relations.stale < slots.stale, "{relations:?} vs {slots:?}");
        // Open phrases add keys, never a false merge (the 5K and 10K bests
        // are drawn together).
        let (lexical, embedding) = (&rows[2].1, &rows[3].1);
        assert!(lexical.correct > relations.correct, "{lexical:?}");
        assert!(lexical.stale <= relations.stale, "{lexical:?}");
        for s in [relations, lexical, embedding] {
            assert_eq!(s.false_merges, 0, "{:?}", s.wrong);
            assert_eq!(s.keyed_distractors, 0, "{:?}", s.wrong);
        }
    }

    #[test]
    fn streams_revise_cells_and_have_distractors() {
        let s = stream::generate(9);
        let gold = s.iter().filter(|x| x.gold.is_some()).count();
        assert!(gold > 0 && gold < s.len(), "gold and distractors");
        let cells: HashSet<String> = s.iter().map(Statement::cell).collect();
        assert!(cells.len() < s.len(), "some cells are revised");
        assert!(stream::RELATIONS.len() >= 40);
        assert!(stream::RELATIONS.iter().all(|r| r.phrasings.len() >= 3));
    }
}
