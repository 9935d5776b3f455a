//! The cues that make a plain-text statement a typed operation (P-Mem's
//! annotator, as rules): a retraction ("… was wrong", "scratch that",
//! "ignore the update about …", "not … after all"), a settling report
//! ("confirmed: …", "checked, it is …") and a report without precedence
//! (hearsay: "I heard …", "apparently …"). One declarative table, matched
//! as token sequences (`phrases`; `…` is a gap).
//!
//! Precision first: a cue only proposes an operation. The ledger applies it
//! only where it fits the cell, and otherwise falls back to what a
//! statement without the cue would do (see `ledger::ops`, "Inferred
//! operations"): a retraction that names a value the cell does not hold is
//! kept as a keyless fact, a settling report on a cell that is not
//! contested and hearsay on an empty cell (or from the head's own source)
//! are plain statements.

use std::sync::LazyLock;

use super::phrases::{Table, compile, first_match};
use crate::fact::Op;
use crate::text;

/// One row of the cue table.
#[derive(Debug)]
pub struct CueSpec {
    /// The operation the cue proposes.
    pub op: Op,
    /// Phrases (normalized; `…` is a gap).
    pub phrases: &'static [&'static str],
}

/// The cue table, checked in order: a retraction cue wins over the others
/// ("confirmed that was wrong" retracts).
pub static CUES: &[CueSpec] = &[
    CueSpec {
        op: Op::Revoke,
        phrases: &[
            "was wrong",
            "is wrong",
            "was a mistake",
            "was an error",
            "was incorrect",
            "is incorrect",
            "scratch that",
            "scratch the",
            "ignore the update",
            "ignore the last update",
            "ignore that",
            "disregard",
            "not … after all",
        ],
    },
    CueSpec {
        op: Op::Resolve,
        phrases: &[
            "confirmed",
            "checked, it is",
            "checked, it's",
            "checked and it is",
            "checked and it's",
            "verified",
            "it is definitely",
            "it's definitely",
        ],
    },
    CueSpec {
        op: Op::Contest,
        phrases: &[
            "i heard",
            "i've heard",
            "apparently",
            "supposedly",
            "rumor is",
            "rumour is",
            "someone said",
            "i was told",
            "word is",
        ],
    },
];

/// Each row's phrases, compiled.
static COMPILED: LazyLock<Table<Op>> =
    LazyLock::new(|| compile(CUES.iter().map(|c| (c.op, c.phrases))));

/// The operation the text's cues propose, if any.
pub fn find_op(normalized: &str) -> Option<Op> {
    let toks: Vec<&str> = text::tokens(normalized).collect();
    first_match(&COMPILED, &toks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(s: &str) -> Option<Op> {
        find_op(&text::normalize(s))
    }

    #[test]
    fn each_kind_of_cue() {
        assert_eq!(
            op("Scratch that, the budget update was a mistake."),
            Some(Op::Revoke)
        );
        assert_eq!(
            op("Ignore the update about the Halcyon budget cap."),
            Some(Op::Revoke)
        );
        assert_eq!(
            op("The standup is not at 10am after all."),
            Some(Op::Revoke)
        );
        assert_eq!(op("Confirmed: the sync is in room 2A."), Some(Op::Resolve));
        assert_eq!(op("Checked, it's room 2A."), Some(Op::Resolve));
        assert_eq!(op("I heard the sync moved to room 2A."), Some(Op::Contest));
        assert_eq!(op("Apparently the budget cap is $40k."), Some(Op::Contest));
    }

    #[test]
    fn plain_statements_and_near_misses_have_no_cue() {
        assert_eq!(op("The budget cap is $40k."), None);
        assert_eq!(
            op("After all that, the sync is in room 2A."),
            None,
            "no negation"
        );
        assert_eq!(op("I heardly know."), None, "tokens, not substrings");
        assert_eq!(op("Scratchpad notes for the standup."), None);
    }
}
