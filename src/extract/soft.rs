//! Soft key identity (P-Mem): one attribute surfaces in many wordings
//! ("5K personal best", "best 5K time"), and an update must reach the key
//! it was first filed under, not open a second one beside it (which would
//! leave the old value current: stale).
//!
//! A relation phrase the table does not know ([`super::relations`]'s open
//! statements: "Ann's lucky number is 7") is resolved against the keys its
//! subject already has, in this order:
//!
//! 1. **exact**: a key whose phrase is the statement's phrase;
//! 2. **lexical**: a key whose phrase has the same content words, in any
//!    order, once light modifiers ("usual", "current", "regular") and
//!    plural endings are set aside ("usual coffee order" = "coffee order");
//! 3. **embedding** (a store with an encoder): the key whose phrase's
//!    embedding is nearest, when its cosine clears [`COSINE`];
//!
//! each only between keys whose objects are of one [`ObjectClass`], and
//! never between phrases whose numbers differ ("5K" vs "10K" best), the
//! light check that confirms a match. Otherwise the phrase opens a new key.
//! Two candidates at one step, or a candidate of another class, is
//! ambiguous: the statement gets no key (precision first: a false merge
//! hides a current value).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::relations::ObjectType;
use super::slots::{self, ValueType};
use crate::fact::Key;
use crate::text;

/// Which steps of soft identity a store runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SoftIdentity {
    /// No open phrases: only the relation table's rows get keys.
    Off,
    /// Open phrases, matched exactly and lexically.
    Lexical,
    /// Lexically, then by phrase embedding where the store has an encoder
    /// (lexically only where it has none).
    #[default]
    Embedding,
}

/// Least cosine between two phrase embeddings (all-MiniLM-L6-v2) for an
/// embedding match. Chosen on general pairs before the key study was run
/// (`cosines_of_phrase_pairs` in `crates/dense/tests/soft_identity.rs`):
/// it keeps spelling variants ("favourite beverage" / "favorite drink":
/// 0.90) and keeps out near misses ("home town" / "home city": 0.85,
/// "evening routine" / "morning routine": 0.82), which on bare phrases
/// MiniLM ranks above true paraphrases ("closest friend" / "best friend":
/// 0.67), so the step is a narrow one.
pub const COSINE: f32 = 0.88;

/// What an object is, for agreement between two keys: a name and free text
/// are one class because a stored value is normalized (its capitals, the
/// only mark of a name, are gone).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectClass {
    /// A name or a short phrase.
    Phrase,
    /// A calendar date or a year.
    Date,
    /// A time of day.
    Time,
    /// A count or a number.
    Number,
    /// An amount of money.
    Money,
}

impl ObjectClass {
    /// The class of a relation table row's object.
    pub fn of_type(ty: ObjectType) -> ObjectClass {
        match ty {
            ObjectType::Date => ObjectClass::Date,
            ObjectType::Number => ObjectClass::Number,
            ObjectType::Money => ObjectClass::Money,
            ObjectType::Place
            | ObjectType::Person
            | ObjectType::Organisation
            | ObjectType::Text => ObjectClass::Phrase,
        }
    }

    /// The class of a normalized value: a recognised time, date or amount
    /// covering it, digits, or a phrase. Digits in `h:mm` or `m:ss` form are
    /// a time whether or not they are a valid clock ("45:10" is a 10K
    /// time), so a duration's versions stay of one class.
    pub fn of_value(value: &str) -> ObjectClass {
        let clock = value.split(':').count() > 1
            && value
                .split(':')
                .all(|p| !p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit()));
        if clock {
            return ObjectClass::Time;
        }
        let whole = slots::find_values(value)
            .into_iter()
            .find(|v| v.start == 0 && v.end == value.len());
        match whole.map(|v| v.ty) {
            Some(ValueType::Time) => ObjectClass::Time,
            Some(ValueType::Date) => ObjectClass::Date,
            Some(ValueType::Money) => ObjectClass::Money,
            _ if is_number(value) => ObjectClass::Number,
            _ => ObjectClass::Phrase,
        }
    }
}

/// Whether `value` is a number ("7", "555-0142", "3.5").
pub fn is_number(value: &str) -> bool {
    value.bytes().any(|b| b.is_ascii_digit())
        && value
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'-' || b == b'.')
}

/// Modifiers that do not change which attribute a phrase names ("my
/// *usual* coffee order" is my coffee order).
pub const LIGHT_MODIFIERS: &[&str] = &[
    "new",
    "current",
    "usual",
    "regular",
    "main",
    "present",
    "latest",
    "go-to",
    "preferred",
];

/// How a statement's key was found.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SoftMatch {
    /// A key with the same phrase.
    Exact,
    /// A key with the same content words.
    Lexical,
    /// A key whose phrase embeds near it, with the cosine.
    Embedding(f32),
    /// No key matched: the phrase opens one.
    Opened,
}

/// A key the subject already has, as soft identity compares it.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The key.
    pub key: Key,
    /// The phrases it is known by: an open key's phrase, or every noun of
    /// its table row.
    pub phrases: Vec<String>,
    /// Its objects' class.
    pub class: ObjectClass,
}

/// The phrase's key slot: its words without light modifiers ("usual
/// coffee order" → "coffee order"), in written order.
pub fn slot_of(phrase: &str) -> String {
    let words: Vec<&str> = text::tokens(phrase)
        .filter(|w| !LIGHT_MODIFIERS.contains(w))
        .collect();
    if words.is_empty() {
        phrase.to_owned()
    } else {
        words.join(" ")
    }
}

/// The content words of a phrase, as the lexical step compares them:
/// light modifiers and stop words out, plural `s` off, sorted.
fn content(phrase: &str) -> Vec<String> {
    let mut words: Vec<String> = text::tokens(phrase)
        .filter(|w| !LIGHT_MODIFIERS.contains(w) && !text::is_stop_word(w))
        .map(|w| match w.strip_suffix('s') {
            Some(stem) if stem.len() > 2 && !stem.ends_with('s') => stem.to_owned(),
            _ => w.to_owned(),
        })
        .collect();
    words.sort();
    words.dedup();
    words
}

/// The numbers a phrase names ("5k personal best" → [5]; "personal best
/// over 5 km" → [5]): two phrases whose numbers differ name two
/// attributes however near their wording.
fn numbers(phrase: &str) -> Vec<String> {
    let mut out: Vec<String> = text::tokens(phrase)
        .filter_map(|w| {
            let digits: String = w.chars().take_while(char::is_ascii_digit).collect();
            (!digits.is_empty()).then_some(digits)
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Embeds phrases for the embedding step (a [`crate::memory::Memory`]
/// with an encoder: cached, one model call per distinct phrase).
pub trait PhraseEmbedder {
    /// The unit-length embedding of `phrase`, or `None` where there is
    /// none (no encoder, or it failed: the step is skipped).
    fn embed(&mut self, phrase: &str) -> Option<Arc<[f32]>>;
}

/// No embedder: soft identity runs exact and lexical steps only.
pub struct NoEmbedder;

impl PhraseEmbedder for NoEmbedder {
    fn embed(&mut self, _: &str) -> Option<Arc<[f32]>> {
        None
    }
}

/// Resolves an open statement of `subject` with `phrase` and an object
/// of `class` against the subject's `candidates`: the key it joins or
/// opens and how, or `None` when that is ambiguous (module docs).
pub fn resolve(
    mode: SoftIdentity,
    subject: &str,
    phrase: &str,
    class: ObjectClass,
    candidates: &[Candidate],
    embedder: &mut dyn PhraseEmbedder,
) -> Option<(Key, SoftMatch)> {
    if mode == SoftIdentity::Off {
        return None;
    }
    let slot = slot_of(phrase);
    let exact: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| c.phrases.iter().any(|p| slot_of(p) == slot))
        .collect();
    if !exact.is_empty() {
        return unique(&exact, class).map(|k| (k, SoftMatch::Exact));
    }
    let words = content(phrase);
    let nums = numbers(phrase);
    let agree = |p: &str| numbers(p) == nums;
    let lexical: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| c.phrases.iter().any(|p| agree(p) && content(p) == words))
        .collect();
    if !lexical.is_empty() {
        return unique(&lexical, class).map(|k| (k, SoftMatch::Lexical));
    }
    if mode == SoftIdentity::Embedding
        && let Some(best) = nearest(&slot, class, candidates, embedder, &agree)
    {
        return best;
    }
    let key = Key {
        entity: subject.into(),
        slot: slot.into(),
        qualifier: None,
    };
    Some((key, SoftMatch::Opened))
}

/// The one key among `matches`, if they are all one key of `class`.
fn unique(matches: &[&Candidate], class: ObjectClass) -> Option<Key> {
    let first = matches[0];
    (matches.iter().all(|c| c.key == first.key) && first.class == class).then(|| first.key.clone())
}

/// The embedding step: `Some(resolution)` when some candidate's phrase
/// clears [`COSINE`] (the nearest of one class and agreeing numbers, or
/// `None` inside when that is ambiguous), `None` to go on and open a key.
fn nearest(
    slot: &str,
    class: ObjectClass,
    candidates: &[Candidate],
    embedder: &mut dyn PhraseEmbedder,
    agree: &dyn Fn(&str) -> bool,
) -> Option<Option<(Key, SoftMatch)>> {
    let query = embedder.embed(slot)?;
    let mut near: Vec<(f32, &Candidate)> = Vec::new();
    for c in candidates {
        let best = c
            .phrases
            .iter()
            .filter(|p| agree(p))
            .filter_map(|p| embedder.embed(&slot_of(p)))
            .map(|v| dot(&query, &v))
            .fold(f32::NEG_INFINITY, f32::max);
        if best >= COSINE {
            near.push((best, c));
        }
    }
    if near.is_empty() {
        return None;
    }
    near.sort_by(|a, b| b.0.total_cmp(&a.0));
    let (cosine, best) = near[0];
    let clear = near.iter().all(|(_, c)| c.key == best.key);
    Some((clear && best.class == class).then(|| (best.key.clone(), SoftMatch::Embedding(cosine))))
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(slot: &str, class: ObjectClass) -> Candidate {
        Candidate {
            key: Key {
                entity: "ann lee".into(),
                slot: slot.into(),
                qualifier: None,
            },
            phrases: vec![slot.to_owned()],
            class,
        }
    }

    fn run(phrase: &str, class: ObjectClass, cands: &[Candidate]) -> Option<(String, SoftMatch)> {
        resolve(
            SoftIdentity::Lexical,
            "ann lee",
            phrase,
            class,
            cands,
            &mut NoEmbedder,
        )
        .map(|(k, m)| (k.slot.to_string(), m))
    }

    #[test]
    fn light_modifiers_and_order_do_not_change_the_key() {
        let cands = [cand("coffee order", ObjectClass::Phrase)];
        assert_eq!(
            run("usual coffee order", ObjectClass::Phrase, &cands),
            Some(("coffee order".into(), SoftMatch::Exact))
        );
        let cands = [cand("best 5k time", ObjectClass::Time)];
        assert_eq!(
            run("5k time best", ObjectClass::Time, &cands),
            Some(("best 5k time".into(), SoftMatch::Lexical))
        );
        assert_eq!(
            run(
                "lucky numbers",
                ObjectClass::Number,
                &[cand("lucky number", ObjectClass::Number)]
            ),
            Some(("lucky number".into(), SoftMatch::Lexical))
        );
    }

    #[test]
    fn other_numbers_or_words_open_a_new_key() {
        let cands = [cand("5k personal best", ObjectClass::Time)];
        assert_eq!(
            run("10k personal best", ObjectClass::Time, &cands),
            Some(("10k personal best".into(), SoftMatch::Opened))
        );
        assert_eq!(
            run("lucky number", ObjectClass::Number, &cands),
            Some(("lucky number".into(), SoftMatch::Opened))
        );
    }

    #[test]
    fn another_class_on_the_same_phrase_gets_no_key() {
        let cands = [cand("bedtime", ObjectClass::Time)];
        assert_eq!(run("usual bedtime", ObjectClass::Phrase, &cands), None);
        assert_eq!(run("bedtimes", ObjectClass::Number, &cands), None);
    }

    #[test]
    fn off_opens_nothing() {
        let r = resolve(
            SoftIdentity::Off,
            "ann lee",
            "gym",
            ObjectClass::Phrase,
            &[],
            &mut NoEmbedder,
        );
        assert_eq!(r, None);
    }

    #[test]
    fn classes_of_values() {
        assert_eq!(ObjectClass::of_value("10:30pm"), ObjectClass::Time);
        assert_eq!(ObjectClass::of_value("45:10"), ObjectClass::Time);
        assert_eq!(ObjectClass::of_value("1:05:30"), ObjectClass::Time);
        assert_eq!(ObjectClass::of_value("$1450"), ObjectClass::Money);
        assert_eq!(ObjectClass::of_value("7"), ObjectClass::Number);
        assert_eq!(ObjectClass::of_value("1974"), ObjectClass::Number);
        assert_eq!(ObjectClass::of_value("flat white"), ObjectClass::Phrase);
    }
}
