//! The prompt-level judge: Eq. (1) of the paper over one memory block.
//!
//! A block *exposes* a value when the value's normalized token sequence occurs
//! contiguously in the block's normalized tokens (token-boundary containment,
//! `text::contains_tokens`): `dec 2` is not in `dec 24`. Values are unique per
//! benchmark instance, so containment identifies the fact that stated them.
//!
//! For request `t` with labels (current value, superseded values, values of
//! same-named other people):
//! - `current` (C): the current value is exposed;
//! - `stale` (E_stale): a superseded value of the same slot is exposed;
//! - `wrong` (E_id): another person's value of the same slot is exposed;
//! - `coinjection`: both C and E_stale;
//! - `clean` (Y): C · (1 − E_stale) · (1 − E_id) when the store holds an
//!   answer; when it holds none (`G_t = ∅`), 1 − [a relevant fact is
//!   exposed], so a block that correctly says nothing is clean;
//! - `abstained` (A): the block is empty.

use serde::Serialize;

use super::generator::Labels;
use pfm::block::Block;
use pfm::text;

/// The judged outcome of one request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Judged {
    /// The store holds a valid answer (`G_t ≠ ∅`).
    pub answerable: bool,
    /// C: the current value is in the block.
    pub current: bool,
    /// E_stale: a superseded value is in the block.
    pub stale: bool,
    /// E_id: a same-named other person's value is in the block.
    pub wrong: bool,
    /// Y: clean retrieval, Eq. (1).
    pub clean: bool,
    /// A: the block is empty.
    pub abstained: bool,
}

impl Judged {
    /// Both the current and a superseded value.
    pub fn coinjection(&self) -> bool {
        self.current && self.stale
    }
}

/// Judges `block` against `labels`.
pub fn judge(block: &Block, labels: &Labels) -> Judged {
    let normalized = text::normalize(&block.text);
    let tokens: Vec<&str> = text::tokens(&normalized).collect();
    let exposed = |label: &Vec<String>| text::contains_tokens(&tokens, label);
    let current = labels.current.as_ref().is_some_and(exposed);
    let stale = labels.superseded.iter().any(exposed);
    let wrong = labels.other.iter().any(exposed);
    let answerable = labels.current.is_some();
    Judged {
        answerable,
        current,
        stale,
        wrong,
        clean: if answerable {
            current && !stale && !wrong
        } else {
            !(stale || wrong)
        },
        abstained: block.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pfm::block::{BlockLine, HEADER};
    use pfm::fact::FactId;

    fn block(lines: &[&str]) -> Block {
        if lines.is_empty() {
            return Block::default();
        }
        let mut text = HEADER.to_owned();
        for l in lines {
            text.push('\n');
            text.push_str(l);
        }
        Block {
            text,
            lines: lines
                .iter()
                .enumerate()
                .map(|(i, l)| BlockLine {
                    fact: FactId(i as u64),
                    score: 1.0,
                    line: (*l).to_owned(),
                })
                .collect(),
            abstained: false,
        }
    }

    fn tokens(s: &str) -> Vec<String> {
        text::normalized_tokens(s)
    }

    fn labels() -> Labels {
        Labels {
            current: Some(tokens("10:45am")),
            superseded: vec![tokens("9:30am"), tokens("11:00am")],
            other: vec![tokens("3:15pm")],
        }
    }

    #[test]
    fn clean_when_only_the_current_value_is_shown() {
        let j = judge(
            &block(&[
                "- (2025-06-11, to Alex Rivera) The standup with Alex Rivera is moved to 10:45 AM.",
            ]),
            &labels(),
        );
        assert!(j.answerable && j.current && j.clean);
        assert!(!j.stale && !j.wrong && !j.abstained && !j.coinjection());
    }

    #[test]
    fn stale_and_coinjection() {
        let j = judge(
            &block(&[
                "- (2025-06-11, to Alex Rivera) The standup with Alex Rivera is moved to 10:45am.",
                "- (2025-06-02, to Alex Rivera) The standup with Alex Rivera is moved to 9:30am.",
            ]),
            &labels(),
        );
        assert!(j.current && j.stale && j.coinjection() && !j.clean);
    }

    #[test]
    fn wrong_person_makes_a_block_unclean() {
        let j = judge(
            &block(&[
                "- (2025-06-11, to Alex Rivera) The standup with Alex Rivera is moved to 10:45am.",
                "- (2025-06-12, to Alex Chen) The standup with Alex Chen is moved to 3:15pm.",
            ]),
            &labels(),
        );
        assert!(j.current && j.wrong && !j.stale && !j.clean);
    }

    #[test]
    fn containment_respects_token_boundaries() {
        let labels = Labels {
            current: Some(tokens("Dec 2")),
            superseded: vec![tokens("room 4")],
            other: vec![],
        };
        let j = judge(
            &block(&["- (2025-06-11, to Kim) Due Dec 24, in room 4B."]),
            &labels,
        );
        assert!(!j.current && !j.stale && !j.clean);
    }

    #[test]
    fn empty_block_abstains_and_is_not_clean_when_answerable() {
        let j = judge(&block(&[]), &labels());
        assert!(j.abstained && !j.current && !j.clean);
    }

    #[test]
    fn unanswerable_request_is_clean_only_without_relevant_facts() {
        // G_t = ∅: nobody mentioned a room; every meeting value is relevant.
        let labels = Labels {
            current: None,
            superseded: vec![],
            other: vec![tokens("room 12C"), tokens("room 3A")],
        };
        let empty = judge(&block(&[]), &labels);
        assert!(!empty.answerable && empty.abstained && empty.clean && !empty.current);
        let unrelated = judge(
            &block(&["- (2025-06-11, to Sam) Ticket assigned."]),
            &labels,
        );
        assert!(unrelated.clean && !unrelated.abstained);
        let exposed = judge(
            &block(&["- (2025-06-11, to Sam) The sync with Sam is moved to room 12C."]),
            &labels,
        );
        assert!(!exposed.clean && exposed.wrong);
    }
}
