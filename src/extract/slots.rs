//! The slot inventory of the controlled benchmark, as one declarative table,
//! and the typed value recognizers it refers to.
//!
//! A row says: a sentence that names an entity of kind `subject`, one of
//! `nouns`, and a value of type `value` states this slot. `cues` are the words
//! that end a request asking for the slot ("the standup with Alex is *at*"),
//! which the slot detector of the abstention rules reads where nouns are
//! shared (meetings have both a time and a room).

use std::sync::LazyLock;

use regex::Regex;

use super::gazetteer::EntityKind;

/// The type of a slot's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// A time of day: `9:30am`, `10pm`, `14:00`, `noon`.
    Time,
    /// A room: `room 16c`, `room b2`.
    Room,
    /// A calendar date: `dec 24`, `24 dec`, `2025-06-11`.
    Date,
    /// An amount of money: `$1200`, `€950`, `1200 usd`, `$12k`.
    Money,
}

/// One row of the slot table.
#[derive(Debug, PartialEq, Eq)]
pub struct SlotSpec {
    /// Stable slot name, used in keys.
    pub name: &'static str,
    /// Nouns (normalized, possibly several tokens) that name the slot.
    pub nouns: &'static [&'static str],
    /// Trailing words of a request that ask for this slot.
    pub cues: &'static [&'static str],
    /// The value type a statement of the slot carries.
    pub value: ValueType,
    /// What kind of entity owns the slot.
    pub subject: EntityKind,
}

/// Meeting nouns: shared by the meeting-time and room slots.
const MEETING_NOUNS: &[&str] = &[
    "standup",
    "stand-up",
    "sync",
    "1:1",
    "one-on-one",
    "retro",
    "review",
    "planning",
    "demo",
    "check-in",
    "meeting",
    "call",
    "interview",
    "lunch",
];

/// The six slots of the controlled benchmark.
pub static SLOTS: &[SlotSpec] = &[
    SlotSpec {
        name: "meeting_time",
        nouns: MEETING_NOUNS,
        cues: &["at", "for", "to"],
        value: ValueType::Time,
        subject: EntityKind::Person,
    },
    SlotSpec {
        name: "room",
        nouns: MEETING_NOUNS,
        cues: &["in", "room"],
        value: ValueType::Room,
        subject: EntityKind::Person,
    },
    SlotSpec {
        name: "deadline",
        nouns: &["deadline", "due date"],
        cues: &["is", "on", "by", "due", "for", "to"],
        value: ValueType::Date,
        subject: EntityKind::Project,
    },
    SlotSpec {
        name: "launch_date",
        nouns: &[
            "launch",
            "launch date",
            "cutover",
            "go-live",
            "release date",
        ],
        cues: &["is", "on", "for", "to"],
        value: ValueType::Date,
        subject: EntityKind::Project,
    },
    SlotSpec {
        name: "day_rate",
        nouns: &["day rate", "daily rate"],
        cues: &["is", "of", "at", "to"],
        value: ValueType::Money,
        subject: EntityKind::Person,
    },
    SlotSpec {
        name: "budget_cap",
        nouns: &["budget cap", "spending cap"],
        cues: &["is", "of", "at", "to"],
        value: ValueType::Money,
        subject: EntityKind::Project,
    },
];

/// The value a cancellation states, for any slot.
pub const CANCELLED: &str = "cancelled";

/// A typed value found in normalized text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueMatch {
    /// Its type.
    pub ty: ValueType,
    /// Byte range in the normalized text.
    pub start: usize,
    /// End of the byte range.
    pub end: usize,
}

const MONTH: &str = "jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec";

static RECOGNIZERS: LazyLock<Vec<(ValueType, Regex)>> = LazyLock::new(|| {
    let re = |s: &str| Regex::new(s).expect("static value pattern compiles");
    vec![
        (
            ValueType::Time,
            re(r"\b(?:\d{1,2}(?::[0-5]\d)?(?:am|pm)|(?:[01]?\d|2[0-3]):[0-5]\d|noon|midnight)\b"),
        ),
        (
            ValueType::Room,
            re(r"\broom (?:[a-z]?\d[a-z0-9]*(?:[.-][a-z0-9]+)?|[a-z]\b)"),
        ),
        (
            ValueType::Date,
            re(&format!(
                r"\b(?:(?:{MONTH}) \d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)? (?:{MONTH})|\d{{4}}-\d{{2}}-\d{{2}})\b"
            )),
        ),
        (
            ValueType::Money,
            re(
                r"(?:[$€£] ?\d+(?:\.\d+)?k?\b|\b\d+(?:\.\d+)?k? ?(?:usd|eur|gbp|dollars|euros|pounds)\b)",
            ),
        ),
    ]
});

static CANCEL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:cancelled|canceled|called off|calls off|scrapped)\b")
        .expect("static cancel pattern compiles")
});

/// All typed values in `normalized`, in text order.
pub fn find_values(normalized: &str) -> Vec<ValueMatch> {
    let mut out: Vec<ValueMatch> = RECOGNIZERS
        .iter()
        .flat_map(|(ty, re)| {
            re.find_iter(normalized).map(|m| ValueMatch {
                ty: *ty,
                start: m.start(),
                end: m.end(),
            })
        })
        .collect();
    out.sort_by_key(|v| (v.start, v.end));
    out
}

/// Byte offset of a cancellation phrase in `normalized`, if any.
pub fn find_cancellation(normalized: &str) -> Option<usize> {
    CANCEL.find(normalized).map(|m| m.start())
}

/// The slot with this name.
pub fn slot(name: &str) -> Option<&'static SlotSpec> {
    SLOTS.iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::normalize;

    fn values(s: &str) -> Vec<(ValueType, String)> {
        let n = normalize(s);
        find_values(&n)
            .into_iter()
            .map(|v| (v.ty, n[v.start..v.end].to_owned()))
            .collect()
    }

    #[test]
    fn recognizes_each_value_type() {
        assert_eq!(
            values("moved to 9:30 AM"),
            [(ValueType::Time, "9:30am".into())]
        );
        assert_eq!(values("at 14:00"), [(ValueType::Time, "14:00".into())]);
        assert_eq!(
            values("moved to room 16C."),
            [(ValueType::Room, "room 16c".into())]
        );
        assert_eq!(
            values("due December 24th"),
            [(ValueType::Date, "dec 24th".into())]
        );
        assert_eq!(
            values("on 2025-06-11"),
            [(ValueType::Date, "2025-06-11".into())]
        );
        assert_eq!(
            values("a day rate of $1,200."),
            [(ValueType::Money, "$1200".into())]
        );
        assert_eq!(
            values("capped at 45,000 EUR"),
            [(ValueType::Money, "45000 eur".into())]
        );
    }

    #[test]
    fn does_not_invent_values() {
        assert!(values("the 1:1 with Sam").is_empty());
        assert!(values("ent12 met the budget with ent7").is_empty());
        assert!(values("see you in the room").is_empty());
    }

    #[test]
    fn table_is_well_formed() {
        for s in SLOTS {
            assert!(!s.nouns.is_empty() && !s.cues.is_empty(), "{}", s.name);
            for n in s.nouns {
                assert_eq!(normalize(n), *n, "nouns are stored normalized");
            }
        }
        let names: std::collections::HashSet<_> = SLOTS.iter().map(|s| s.name).collect();
        assert_eq!(names.len(), SLOTS.len());
        assert!(find_cancellation("the standup with alex is cancelled.").is_some());
    }
}
