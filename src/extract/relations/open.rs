//! Open statements: a relation phrase the table does not know, in a
//! nominal frame ("Ann's lucky number is 7", "my usual coffee order is a
//! flat white", "the bedtime of Bo Chen is 10pm"). Which key such a phrase
//! belongs to is soft identity's to decide ([`crate::extract::soft`]);
//! this module only reads the statement, with the table's guards and a
//! few of its own, since an unknown phrase is riskier than a known noun:
//!
//! - the phrase is one to [`MAX_PHRASE_WORDS`] content words, none a
//!   pronoun, a stop word or a possessive ("Ann's sister's car" is not
//!   Ann's), and not a noun of the table (the table declined it);
//! - its last word names an attribute, not a judgement or a feeling ("my
//!   *goal* is to …": [`NOT_ATTRIBUTES`]), nor a word that names none
//!   alone ("my *favorite* is …": [`NOT_ALONE`]);
//! - a phrase naming a person or a pet ("my mom", "Ann's dog") takes a name
//!   only: "my mom is a nurse" says what she does, not who she is;
//! - the statement opens its clause ("making *my customers* happy is …"
//!   is not about customers), and no capitalised name stands inside the
//!   phrase ("my pup *Toby* is …" is about Toby);
//! - the object is a name, a recognised value (time, date, amount), a
//!   number, or an indefinite noun phrase ("a flat white"): "is full",
//!   "is key", "is like half my life" are judgements, not values.

use super::{COMPILED, ObjectType, PRONOUNS, RELATIONS, Reading};
use crate::extract::slots;
use crate::extract::soft::{self, ObjectClass};
use crate::text;

/// Words that may stand before a statement that opens its clause ("*so*
/// my gym is …"); any other word there makes the phrase part of a larger
/// subject ("making my customers happy is …").
const OPENERS: &[&str] = &[
    "and", "or", "but", "so", "now", "also", "plus", "well", "oh", "yes", "yeah", "anyway", "btw",
    "hey",
];

/// Most words of an open relation phrase.
pub const MAX_PHRASE_WORDS: usize = 3;

/// An open statement found in a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenStatement {
    /// The subject's canonical name.
    pub subject: String,
    /// The relation phrase, normalized ("usual coffee order").
    pub phrase: String,
    /// The object, normalized.
    pub object: String,
    /// The object's class.
    pub class: ObjectClass,
    /// Whether the sentence states it plainly (see [`super::Statement`]).
    pub plain: bool,
}

/// Words that name no attribute standing alone ("my *favorite* is …", "my
/// *time* is short"), though a phrase may end in one ("5K personal best",
/// "best 5K time").
pub const NOT_ALONE: &[&str] = &[
    "favorite",
    "favourite",
    "best",
    "worst",
    "first",
    "last",
    "next",
    "own",
    "new",
    "current",
    "time",
    "day",
    "week",
    "year",
];

/// Last words that name no attribute: judgements, feelings, aims.
pub const NOT_ATTRIBUTES: &[&str] = &[
    "thing",
    "things",
    "one",
    "part",
    "point",
    "problem",
    "issue",
    "question",
    "idea",
    "guess",
    "bet",
    "hope",
    "plan",
    "goal",
    "dream",
    "fear",
    "worry",
    "concern",
    "feeling",
    "heart",
    "mind",
    "life",
    "way",
    "turn",
    "fault",
    "pleasure",
    "god",
    "goodness",
    "advice",
    "opinion",
    "view",
    "take",
    "reason",
    "answer",
    "excuse",
    "secret",
    "focus",
    "priority",
    "passion",
    "purpose",
    "mission",
    "aim",
    "wish",
    "honor",
    "honour",
    "luck",
    "story",
    "journey",
    "experience",
    "stuff",
];

/// Nouns naming a person or a pet: such a phrase takes a name object only.
pub const NAMED_ONLY: &[&str] = &[
    "mom",
    "mum",
    "mother",
    "dad",
    "father",
    "sister",
    "brother",
    "son",
    "daughter",
    "kid",
    "kids",
    "child",
    "children",
    "parents",
    "family",
    "friend",
    "friends",
    "bestie",
    "grandma",
    "grandpa",
    "grandmother",
    "grandfather",
    "aunt",
    "uncle",
    "cousin",
    "niece",
    "nephew",
    "neighbor",
    "neighbour",
    "roommate",
    "colleague",
    "coworker",
    "baby",
    "dog",
    "cat",
    "pet",
    "puppy",
    "kitten",
    "son-in-law",
    "mentor",
    "hero",
    "idol",
];

impl Reading<'_> {
    /// Every open statement of the text, by position: one per copula with
    /// an open nominal frame before it.
    pub fn open_statements(&self) -> Vec<OpenStatement> {
        let n = self.toks.len();
        (1..n)
            .filter(|&c| COMPILED.copulas.iter().any(|cop| cop[0] == self.toks[c]))
            .filter_map(|c| self.open_at(c))
            .collect()
    }

    /// The open statement whose copula starts at `c`, if one does.
    fn open_at(&self, c: usize) -> Option<OpenStatement> {
        let cop_end = self.copula(c)?;
        // Cheap tests first, so a text's layout is computed only where a
        // frame may stand: "my" or a possessive within reach.
        let reach = c.saturating_sub(MAX_PHRASE_WORDS + 1)..c;
        if !reach
            .clone()
            .any(|i| self.toks[i] == "my" || self.toks[i] == "of" || self.possessive(i))
        {
            return None;
        }
        let (from, subject, phrase) = self.open_subject(c)?;
        let opens_clause =
            from == 0 || self.boundary_before(from) || OPENERS.contains(&self.toks[from - 1]);
        if !opens_clause || self.boundary_before(c) || self.boundary_before(cop_end) {
            return None;
        }
        // A capitalised name inside the phrase is its own subject ("my pup
        // Toby is …" is about Toby).
        if phrase.clone().any(|i| self.layout().in_name[i]) {
            return None;
        }
        let words = &self.toks[phrase];
        let phrase = words.join(" ");
        let head = *words.last()?;
        let slot = soft::slot_of(&phrase);
        let known = RELATIONS.iter().any(|r| r.nouns.contains(&slot.as_str()))
            || slots::SLOTS
                .iter()
                .any(|s| s.nouns.contains(&slot.as_str()));
        let word_ok = |w: &&str| {
            !text::is_stop_word(w)
                && !PRONOUNS.contains(w)
                && w.chars().all(|ch| ch.is_alphanumeric() || ch == '-')
        };
        let alone = words.len() == 1 && NOT_ALONE.contains(&head);
        if known || alone || NOT_ATTRIBUTES.contains(&head) || !words.iter().all(word_ok) {
            return None;
        }
        let end = self
            .clause_end(cop_end)
            .min(cop_end + super::MAX_OBJECT_TOKENS);
        if end <= cop_end {
            return None;
        }
        let object = self.open_object(cop_end, end, NAMED_ONLY.contains(&head))?;
        if object == subject {
            return None;
        }
        Some(OpenStatement {
            class: ObjectClass::of_value(&object),
            plain: !self.guarded(from, end),
            subject,
            phrase,
            object,
        })
    }

    /// Before the copula at `c`: (where the statement starts, its subject,
    /// its phrase's tokens), for "my P", "S's P" and "the P of S".
    fn open_subject(&self, c: usize) -> Option<(usize, String, std::ops::Range<usize>)> {
        let inside = |from: usize, to: usize| (from + 1..to).all(|i| !self.boundary_before(i));
        for k in 1..=MAX_PHRASE_WORDS.min(c - 1) {
            let p0 = c - k;
            let before = p0 - 1;
            if !inside(before, c) || (p0..c).any(|i| self.possessive(i)) {
                return None;
            }
            if self.toks[before] == "my" {
                return Some((before, self.speaker?.to_owned(), p0..c));
            }
            if self.possessive(before) {
                let b = self.names_ending(p0).filter(|&b| inside(b, p0)).min()?;
                return Some((b, self.subject(b, p0)?, p0..c));
            }
        }
        // "the P of S <is>": S ends at the copula.
        let b = self.names_ending(c).filter(|&b| inside(b, c)).min()?;
        let of = b.checked_sub(1).filter(|&o| self.toks[o] == "of")?;
        let p0 = (of.saturating_sub(MAX_PHRASE_WORDS)..of)
            .find(|&p| p > 0 && self.toks[p - 1] == "the" && inside(p - 1, c))?;
        if (p0..of).any(|i| self.possessive(i)) {
            return None;
        }
        Some((p0 - 1, self.subject(b, c)?, p0..of))
    }

    /// The object in `[from, to)`: a name, a value opening it, a number,
    /// or (unless `named_only`) a short phrase.
    fn open_object(&self, from: usize, to: usize, named_only: bool) -> Option<String> {
        if let Some(name) = self.object(ObjectType::Place, from, to) {
            return Some(name);
        }
        if named_only {
            return None;
        }
        let begin = self.starts[from - 1] + self.toks[from - 1].len();
        let span = &self.normalized[begin..self.starts[to - 1] + self.toks[to - 1].len()];
        let first = self.starts[from] - begin;
        if let Some(v) = slots::find_values(span)
            .into_iter()
            .find(|v| v.start <= first && v.end > first && v.ty != slots::ValueType::Room)
        {
            return Some(span[v.start..v.end].trim().to_owned());
        }
        let head = self.toks[from];
        if soft::is_number(head) || ObjectClass::of_value(head) == ObjectClass::Time {
            return Some(head.to_owned());
        }
        // Free text only as an indefinite noun phrase ("a flat white"):
        // "is full", "is key", "is like half …" state a judgement.
        if !matches!(head, "a" | "an") {
            return None;
        }
        self.object(ObjectType::Text, from, to)
    }
}
