//! The speculation gate's classifier (AgentMemGate, as rules): what a keyed
//! statement says about *when* its value holds — a plan or possibility not
//! yet true (`speculation`, with a graded hedge strength), a change that
//! happened (`completed`), a fix to a wrong record (`correction`), a plan
//! given up (`abandonment`), or none of these (`other`). One declarative
//! table, matched as token sequences (`phrases`; `…` is a gap), checked in
//! order: abandonment and negated hedges first (so "I'm not going to move"
//! never stages a move), then completed changes (so "I was planning to move
//! and finally did" commits), then hedges from the vaguest to the firmest,
//! then corrections.
//!
//! What the ledger does with each kind is in `ledger/plans.rs`: a
//! speculation is staged as a pending version and never becomes current by
//! itself; an abandonment never commits the value it names.

use std::sync::LazyLock;

use super::phrases::{Table, compile, first_match};
use crate::fact::Kind;
use crate::text;

/// One row of the gate's table.
#[derive(Debug)]
pub struct GateRule {
    /// The kind the phrases mark.
    pub kind: Kind,
    /// For a speculation, the hedge strength: 1 (a firm plan, "scheduled
    /// to") to 5 (a bare possibility, "might"); 0 otherwise.
    pub strength: u8,
    /// Phrases (normalized; `…` is a gap).
    pub phrases: &'static [&'static str],
}

/// The gate's table, checked in order (the first row with a match wins).
pub static GATE: &[GateRule] = &[
    GateRule {
        kind: Kind::Abandonment,
        strength: 0,
        phrases: &[
            "decided not to",
            "not going to",
            "not gonna",
            "not moving",
            "won't be",
            "will not be",
            "no longer planning",
            "no longer going to",
            "fell through",
            "changed my mind",
            "called it off",
            "gave up on",
            "giving up on",
            "staying … after all",
            "keeping … after all",
            "might not",
            "may not",
            "probably won't",
            "probably not",
            "isn't happening",
            "is not happening",
            "not happening",
            "forget about",
            "dropped the",
            "not worth it",
        ],
    },
    GateRule {
        kind: Kind::Completed,
        strength: 0,
        phrases: &[
            "just moved",
            "finally",
            "have been living",
            "i've been living",
            "went through",
            "it happened",
            "we did it",
            "already moved",
            "already switched",
            "officially",
            "moved in",
            "settled in",
            "as of today",
        ],
    },
    GateRule {
        kind: Kind::Speculation,
        strength: 5,
        phrases: &[
            "might",
            "i may",
            "we may",
            "may end up",
            "may be",
            "may have to",
            "maybe",
            "perhaps",
            "possibly",
            "could end up",
            "wondering whether",
            "wondering if",
            "should i",
            "if … then",
            "in case",
            "there's a chance",
            "there is a chance",
            "chances are",
            "who knows",
            "could be",
            "could become",
        ],
    },
    GateRule {
        kind: Kind::Speculation,
        strength: 4,
        phrases: &[
            "thinking about",
            "thinking of",
            "considering",
            "toying with",
            "weighing",
            "looking into",
        ],
    },
    GateRule {
        kind: Kind::Speculation,
        strength: 3,
        phrases: &[
            "hoping to",
            "hope to",
            "would like to",
            "i'd like to",
            "want to",
            "wanna",
            "dreaming of",
            "i'd love",
            "i would love",
            "part of me wants",
            "someday",
            "one day",
            "eventually",
        ],
    },
    GateRule {
        kind: Kind::Speculation,
        strength: 2,
        phrases: &[
            "planning to",
            "planning on",
            "plan to",
            "plan is to",
            "intend to",
            "going to",
            "gonna",
            "aiming to",
            "the plan is",
            "the idea is",
            "that's the idea",
            "next week",
            "next month",
            "next year",
            "down the line",
            "in the future",
        ],
    },
    GateRule {
        kind: Kind::Speculation,
        strength: 1,
        phrases: &[
            "scheduled to",
            "about to",
            "expect to",
            "will probably",
            "likely to",
            "i will",
            "i'll",
            "we will",
            "we'll",
            "on the calendar",
        ],
    },
    GateRule {
        kind: Kind::Correction,
        strength: 0,
        phrases: &[
            "actually",
            "i meant",
            "not … but",
            "sorry, it's",
            "sorry, it is",
            "correction",
            "i misspoke",
            "to correct",
        ],
    },
];

/// The gate's verdict on one statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The statement's kind.
    pub kind: Kind,
    /// The hedge strength of a speculation (1–5), else 0.
    pub strength: u8,
}

static COMPILED: LazyLock<Table<(Kind, u8)>> =
    LazyLock::new(|| compile(GATE.iter().map(|r| ((r.kind, r.strength), r.phrases))));

/// Classifies a normalized statement.
pub fn classify(normalized: &str) -> Verdict {
    let toks: Vec<&str> = text::tokens(normalized).collect();
    let (kind, strength) = first_match(&COMPILED, &toks).unwrap_or((Kind::Other, 0));
    Verdict { kind, strength }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(s: &str) -> (Kind, u8) {
        let v = classify(&text::normalize(s));
        (v.kind, v.strength)
    }

    #[test]
    fn each_class_on_hand_written_sentences() {
        use Kind::*;
        let cases = [
            ("I might move to Seattle next year.", (Speculation, 5)),
            (
                "We're thinking about switching to Trader Joe's.",
                (Speculation, 4),
            ),
            ("I'm hoping to start at Acme in the fall.", (Speculation, 3)),
            (
                "I'm planning to move the standup to 10am.",
                (Speculation, 2),
            ),
            (
                "The launch is scheduled to move to Dec 3.",
                (Speculation, 1),
            ),
            (
                "If the offer comes through then I'll move to Austin.",
                (Speculation, 5),
            ),
            ("Should I move the budget cap to $60k?", (Speculation, 5)),
            ("I just moved to Seattle.", (Completed, 0)),
            ("I've been living in Tacoma since March.", (Completed, 0)),
            ("The move went through last week.", (Completed, 0)),
            ("Actually, the room is 4B.", (Correction, 0)),
            ("Sorry, it's $45k, not $50k.", (Correction, 0)),
            ("Not Room 2A but Room 4B.", (Correction, 0)),
            ("The budget cap is $50k.", (Other, 0)),
            (
                "The standup with Alex Rivera is moved to 10:45am.",
                (Other, 0),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(verdict(text), expected, "{text}");
        }
    }

    #[test]
    fn negation_and_nested_hedges() {
        use Kind::*;
        // A negated plan or hedge never reads as a plan of its value.
        assert_eq!(verdict("I'm not going to move to Seattle.").0, Abandonment);
        assert_eq!(verdict("I might not move to Seattle.").0, Abandonment);
        assert_eq!(verdict("We decided not to switch stores.").0, Abandonment);
        assert_eq!(verdict("I'm staying in Portland after all.").0, Abandonment);
        assert_eq!(verdict("The Seattle move fell through.").0, Abandonment);
        // Nested hedges: the vaguest hedge names the strength.
        assert_eq!(
            verdict("I think I might be planning to move to Austin."),
            (Speculation, 5)
        );
        assert_eq!(
            verdict("We're considering planning to switch."),
            (Speculation, 4)
        );
        // A completed change wins over the plan that led to it.
        assert_eq!(
            verdict("I was planning to move and finally did, to Austin.").0,
            Completed
        );
        // Words inside others are not cues.
        assert_eq!(verdict("Maybelline is my brand.").0, Other);
        assert_eq!(verdict("The mayor's budget cap is $5k.").0, Other);
        // "May" the month is not a hedge.
        assert_eq!(verdict("The Halcyon deadline moved to May 3.").0, Other);
        assert_eq!(verdict("We may end up in Room 4B.").0, Speculation);
    }
}
