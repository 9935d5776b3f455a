//! The rule extractor: turns an observation's text into entities and, when the
//! sentence states a known slot or relation, a key and a value.
//!
//! The slot rule (PFM paper, Section 4): a key is assigned when the sentence
//! names a gazetteer entity, a slot noun, and a value of that slot's type.
//! Everything the rule knows about slots is the table in [`slots`]; entities
//! come from the store's [`Gazetteer`]. A sentence that states no slot may
//! state a relation of plain English ("Ann moved to Lisbon", "my favourite
//! food is sushi"): [`relations`] reads those, precision first. Callers with
//! structured data pass a key directly and skip this module.

pub mod cues;
pub mod gate;
pub mod gazetteer;
mod phrases;
pub mod relations;
pub mod slots;
pub mod soft;

use std::sync::{Arc, LazyLock};

use rustc_hash::{FxHashMap, FxHashSet};

pub use gazetteer::{EntityKind, Gazetteer, GazetteerWriter, Mention};
pub use relations::{ObjectType, RELATIONS, RelationSpec};
pub use slots::{CANCELLED, SLOTS, SlotSpec, ValueType};

use crate::config::KeyGranularity;
use crate::fact::Key;
use crate::limits::MAX_NAMES;
use crate::names::Name;
use crate::text;

/// A slot statement found in a sentence.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyedValue {
    /// The key the statement updates.
    pub key: Key,
    /// The stated value, normalized (`cancelled` for a cancellation).
    pub value: String,
    /// The table row that read it.
    pub by: KeyedBy,
}

/// Which table read a keyed statement, and how.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeyedBy {
    /// A row of the slot table.
    Slot(&'static SlotSpec),
    /// A row of the relation table, by its canonical noun or a paraphrase.
    Relation(&'static RelationSpec, relations::Match),
    /// An open relation phrase, by soft identity.
    Soft(soft::SoftMatch),
}

/// What the extractor found in one observation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extraction {
    /// Entities named in the text (canonical, sorted, unique).
    pub entities: Vec<Name>,
    /// The slot statement, if the sentence makes one.
    pub keyed: Option<KeyedValue>,
    /// Without a slot statement: the one slot the sentence names with its
    /// owner but no value ("ignore the update about the Halcyon budget
    /// cap"), which a retraction cue may apply to. A noun that several
    /// slots share names the one that holds a value, or none if both do.
    pub cell: Option<Key>,
    /// Without a slot or table relation statement (nor a cell): the one
    /// open relation statement of the text ("Ann's lucky number is 7"),
    /// whose key soft identity finds (`soft::resolve`).
    pub open: Option<relations::OpenStatement>,
}

/// The rule extractor.
#[derive(Clone, Debug)]
pub struct Extractor {
    /// Key granularity: `(entity, slot)` or `(entity, slot, noun)`.
    pub granularity: KeyGranularity,
    /// Whether relations of plain English are keyed too.
    pub relations: bool,
    /// Whether open relation phrases are read (for soft identity).
    pub open: bool,
}

impl Default for Extractor {
    fn default() -> Self {
        Extractor {
            granularity: KeyGranularity::default(),
            relations: true,
            open: true,
        }
    }
}

/// Each noun of each slot as (slot index, noun, noun tokens).
static NOUNS: LazyLock<Vec<(usize, &'static str, Vec<&'static str>)>> = LazyLock::new(|| {
    SLOTS
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            s.nouns
                .iter()
                .map(move |n| (i, *n, text::tokens(n).collect()))
        })
        .collect()
});

/// The indexes into [`NOUNS`] of the nouns whose first token is the key.
static NOUNS_BY_FIRST: LazyLock<FxHashMap<&'static str, Vec<usize>>> = LazyLock::new(|| {
    let mut by_first: FxHashMap<&'static str, Vec<usize>> = FxHashMap::default();
    for (n, (_, _, tokens)) in NOUNS.iter().enumerate() {
        by_first.entry(tokens[0]).or_default().push(n);
    }
    by_first
});

impl Extractor {
    /// Extracts from `normalized` text (see [`text::normalize`]); `raw`
    /// is the text as written, whose capitals mark the names a relation's
    /// subject and object may be.
    ///
    /// `participants` (canonical names) resolve partial mentions; `is_active`
    /// says whether a key currently has an active value, which decides where a
    /// cancellation of a meeting goes (its time or its room).
    pub fn extract(
        &self,
        raw: &str,
        normalized: &str,
        gazetteer: &Gazetteer,
        participants: &[Name],
        is_active: impl Fn(&Key) -> bool,
    ) -> Extraction {
        let spans: Vec<(usize, &str)> = text::tokens(normalized)
            .map(|t| (t.as_ptr() as usize - normalized.as_ptr() as usize, t))
            .collect();
        let toks: Vec<&str> = spans.iter().map(|(_, t)| *t).collect();
        let token_at = |byte: usize| {
            spans
                .iter()
                .position(|(s, _)| *s >= byte)
                .unwrap_or(spans.len())
        };

        let mentions = gazetteer.mentions(&toks, participants);
        // At most MAX_NAMES entities, the first mentioned: a fact's names
        // are joined pairwise in the graph, so a text naming thousands of
        // known names must not cost quadratic work (`tests/bounded_work.rs`).
        let mut seen: FxHashSet<&str> = FxHashSet::default();
        let mut entities: Vec<Name> = mentions
            .iter()
            .filter(|m| seen.insert(&m.entity))
            .take(MAX_NAMES)
            .map(|m| m.entity.clone())
            .collect();
        entities.sort();

        // A text that states no slot (and names no slot's cell) may state
        // a relation.
        let relation = || {
            if !self.relations {
                return None;
            }
            let starts: Vec<usize> = spans.iter().map(|(s, _)| *s).collect();
            let speaker = speaker(&mentions, &starts, normalized, participants);
            let reading =
                relations::Reading::new(raw, normalized, &toks, &starts, &mentions, speaker);
            relation_statement(&reading, self.open)
        };
        let nouns = slot_nouns(&toks);
        if nouns.is_empty() {
            return Extraction::of_relation(relation(), entities);
        }

        let cancel = slots::find_cancellation(normalized).map(token_at);
        let values: Vec<(ValueType, usize, &str)> = slots::find_values(normalized)
            .into_iter()
            .map(|v| (v.ty, token_at(v.start), &normalized[v.start..v.end]))
            .collect();

        // Best (slot, noun, noun position, value) by distance from noun to value;
        // a value after its noun beats one before it; ties go to table order.
        let mut best: Option<(usize, usize, &'static str, usize, String)> = None;
        for &(slot_idx, noun, pos) in &nouns {
            let slot = &SLOTS[slot_idx];
            let candidate = if let Some(c) = cancel {
                Some((distance(pos, c, toks.len()), CANCELLED.to_owned()))
            } else {
                values
                    .iter()
                    .filter(|(ty, _, _)| *ty == slot.value)
                    .map(|(_, at, v)| (distance(pos, *at, toks.len()), (*v).to_owned()))
                    .min_by_key(|(d, _)| *d)
            };
            let Some((dist, value)) = candidate else {
                continue;
            };
            let better = match &best {
                None => true,
                Some((d, s, ..)) => (dist, slot_idx) < (*d, *s),
            };
            if better {
                best = Some((dist, slot_idx, noun, pos, value));
            }
        }
        let owner_of = |slot_idx: usize, pos: usize| {
            mentions
                .iter()
                .filter(|m| m.kind.can_own(SLOTS[slot_idx].subject))
                .min_by_key(|m| (m.start.abs_diff(pos), m.start))
        };
        let key_of = |owner: &Mention, slot_idx: usize, noun: &str| {
            let key = Key {
                entity: Arc::from(owner.entity.as_str()),
                slot: SLOTS[slot_idx].name.into(),
                qualifier: None,
            };
            match self.granularity {
                KeyGranularity::EntitySlot => key,
                KeyGranularity::EntitySlotNoun => Key {
                    qualifier: Some(noun.into()),
                    ..key
                },
            }
        };
        let Some((_, mut slot_idx, noun, pos, value)) = best else {
            let mut cells: Vec<Key> = nouns
                .iter()
                .filter_map(|&(s, noun, pos)| owner_of(s, pos).map(|o| key_of(o, s, noun)))
                .collect();
            cells.sort();
            cells.dedup();
            if cells.len() > 1 {
                cells.retain(|k| is_active(k));
            }
            if cells.len() == 1 {
                return Extraction {
                    entities,
                    cell: Some(cells.remove(0)),
                    ..Extraction::default()
                };
            }
            return Extraction::of_relation(relation(), entities);
        };
        let Some(owner) = owner_of(slot_idx, pos) else {
            return Extraction::of_relation(relation(), entities);
        };
        let make_key = |slot_idx: usize| key_of(owner, slot_idx, noun);
        if value == CANCELLED {
            // A cancelled meeting names only its noun, which the time and room
            // slots share: cancel the one that currently holds a value.
            if let Some(active) = nouns
                .iter()
                .filter(|(_, n, _)| *n == noun)
                .map(|(s, _, _)| *s)
                .find(|s| is_active(&make_key(*s)))
            {
                slot_idx = active;
            }
        }
        Extraction {
            entities,
            keyed: Some(KeyedValue {
                key: make_key(slot_idx),
                value,
                by: KeyedBy::Slot(&SLOTS[slot_idx]),
            }),
            ..Extraction::default()
        }
    }
}

impl Extraction {
    fn of_relation(found: Option<Relation>, entities: Vec<Name>) -> Extraction {
        let (keyed, open) = match found {
            Some(Relation::Table(k)) => (Some(k), None),
            Some(Relation::Open(o)) => (None, Some(o)),
            None => (None, None),
        };
        Extraction {
            entities,
            keyed,
            cell: None,
            open,
        }
    }
}

/// A text's one relation statement: of a table row, keyed; or open.
enum Relation {
    Table(KeyedValue),
    Open(relations::OpenStatement),
}

/// Who speaks in a text: the participant whose name opens it as a speaker
/// label ("Caroline: …"), or the one participant there is.
fn speaker<'a>(
    mentions: &'a [Mention],
    starts: &[usize],
    normalized: &str,
    participants: &'a [Name],
) -> Option<&'a str> {
    let labelled = mentions.first().filter(|m| {
        m.start == 0
            && participants.contains(&m.entity)
            && starts
                .get(m.end)
                .is_some_and(|&s| normalized[..s].trim_end().ends_with(':'))
    });
    match (labelled, participants) {
        (Some(m), _) => Some(&m.entity),
        (None, [one]) => Some(one),
        _ => None,
    }
}

/// The one relation statement of a text: none when the text states no
/// relation, several (which key would the fact carry?), or one not plainly
/// (a question, a negation, a hedge: `relations`). A text with no statement
/// of the table may hold one open statement (`open`: if they are read).
fn relation_statement(reading: &relations::Reading, open: bool) -> Option<Relation> {
    let table = reading.statements();
    if table.is_empty() {
        if !open {
            return None;
        }
        let mut found = reading.open_statements().into_iter();
        let first = found.next().filter(|s| s.plain)?;
        return found.next().is_none().then_some(Relation::Open(first));
    }
    let mut found = table.into_iter();
    let first = found.next().filter(|s| s.plain)?;
    if found.any(|s| !s.plain || s.subject != first.subject || s.relation != first.relation) {
        return None;
    }
    Some(Relation::Table(KeyedValue {
        key: Key {
            entity: first.subject.into(),
            slot: first.relation.slot.into(),
            qualifier: None,
        },
        value: first.object,
        by: KeyedBy::Relation(first.relation, first.matched),
    }))
}

/// Every occurrence of a slot noun in `tokens` (normalized), as (index into
/// [`SLOTS`], the noun, token position of its first word). A noun shared by
/// several slots (the meeting nouns) occurs once per slot.
pub fn slot_nouns(tokens: &[&str]) -> Vec<(usize, &'static str, usize)> {
    // Each token looks up the nouns that start with it, where every noun
    // was compared at every position (3% of a bulk build, issue 24); the
    // finds are then put in table order, as that comparison made them.
    let mut found: Vec<(usize, usize)> = Vec::new();
    for (pos, token) in tokens.iter().enumerate() {
        for &n in NOUNS_BY_FIRST.get(*token).map_or(&[][..], Vec::as_slice) {
            if tokens[pos..].starts_with(&NOUNS[n].2) {
                found.push((n, pos));
            }
        }
    }
    found.sort_unstable();
    found
        .into_iter()
        .map(|(n, pos)| (NOUNS[n].0, NOUNS[n].1, pos))
        .collect()
}

/// Token distance from a noun to a value; values after the noun come first.
fn distance(noun: usize, value: usize, len: usize) -> usize {
    if value >= noun {
        value - noun
    } else {
        len + (noun - value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::normalize;

    proptest::proptest! {
        /// The first-token lookup finds what comparing every noun at every
        /// position finds, in the same order.
        #[test]
        fn slot_nouns_match_every_noun_at_every_position(
            picks in proptest::collection::vec(0usize..1000, 0..16)
        ) {
            // Whole nouns, single words of nouns and fillers, run together.
            let words: Vec<&str> = NOUNS
                .iter()
                .flat_map(|(_, _, t)| t.iter().copied())
                .chain(["the", "at", "9am", "with"])
                .collect();
            let tokens: Vec<&str> = picks
                .iter()
                .flat_map(|p| match p % 2 {
                    0 => NOUNS[p % NOUNS.len()].2.clone(),
                    _ => vec![words[p % words.len()]],
                })
                .collect();
            let naive: Vec<(usize, &str, usize)> = NOUNS
                .iter()
                .flat_map(|(slot, noun, ntoks)| {
                    tokens
                        .windows(ntoks.len())
                        .enumerate()
                        .filter(move |(_, w)| w == ntoks)
                        .map(move |(pos, _)| (*slot, *noun, pos))
                })
                .collect();
            proptest::prop_assert_eq!(slot_nouns(&tokens), naive);
        }
    }

    fn gazetteer() -> Gazetteer {
        let mut g = GazetteerWriter::default();
        g.register("Alex Rivera", EntityKind::Person);
        g.register("Alex Chen", EntityKind::Person);
        g.register("Priya Natarajan", EntityKind::Person);
        g.register("Halcyon", EntityKind::Project);
        g.view().clone()
    }

    fn key_of(s: &str) -> Option<(String, String)> {
        let e = Extractor::default().extract(s, &normalize(s), &gazetteer(), &[], |_| false);
        e.keyed.map(|k| (k.key.to_string(), k.value))
    }

    #[test]
    fn covers_the_six_slots() {
        let cases = [
            (
                "The standup with Alex Rivera is moved to 10:45 AM.",
                "alex rivera/meeting_time",
                "10:45am",
            ),
            (
                "Alex Chen sync is rescheduled to room 4B.",
                "alex chen/room",
                "room 4b",
            ),
            (
                "The Halcyon deadline moved to December 3.",
                "halcyon/deadline",
                "dec 3",
            ),
            (
                "New cutover date for Halcyon: Jan 14.",
                "halcyon/launch_date",
                "jan 14",
            ),
            (
                "Priya Natarajan's day rate is now $1,150.",
                "priya natarajan/day_rate",
                "$1150",
            ),
            (
                "The budget cap for Halcyon is 45,000 EUR.",
                "halcyon/budget_cap",
                "45000 eur",
            ),
        ];
        for (text, key, value) in cases {
            assert_eq!(
                key_of(text),
                Some((key.to_owned(), value.to_owned())),
                "{text}"
            );
        }
    }

    #[test]
    fn needs_entity_noun_and_typed_value() {
        assert_eq!(
            key_of("The standup is moved to 10:45am."),
            None,
            "no entity"
        );
        assert_eq!(key_of("Alex Rivera is at 10:45am."), None, "no slot noun");
        assert_eq!(
            key_of("The standup with Alex Rivera is moved."),
            None,
            "no value"
        );
        assert_eq!(
            key_of("The Halcyon deadline is 10:45am."),
            None,
            "wrong value type"
        );
        assert_eq!(
            key_of("The standup with Halcyon is at 9am."),
            None,
            "projects own no meetings"
        );
    }

    #[test]
    fn cancellation_goes_to_the_active_slot() {
        let text = normalize("The standup with Alex Rivera is cancelled.");
        let g = gazetteer();
        let ex = Extractor::default();
        let k = ex.extract(&text, &text, &g, &[], |_| false).keyed.unwrap();
        assert_eq!(
            (k.key.to_string(), k.value.as_str()),
            ("alex rivera/meeting_time".into(), CANCELLED)
        );
        let k = ex
            .extract(&text, &text, &g, &[], |k| &*k.slot == "room")
            .keyed
            .unwrap();
        assert_eq!(k.key.to_string(), "alex rivera/room");
    }

    #[test]
    fn first_names_resolve_through_participants_and_noun_granularity() {
        let g = gazetteer();
        let text = normalize("Alex standup is now at 9:30am");
        let ex = Extractor {
            granularity: KeyGranularity::EntitySlotNoun,
            ..Extractor::default()
        };
        assert!(ex.extract(&text, &text, &g, &[], |_| false).keyed.is_none());
        let k = ex
            .extract(&text, &text, &g, &["alex chen".into()], |_| false)
            .keyed
            .unwrap();
        assert_eq!(k.key.to_string(), "alex chen/meeting_time/standup");
    }
}
