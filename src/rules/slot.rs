//! The slot detector of Appendix D.
//!
//! A request asks for slot `s` when it names one of `s`'s nouns
//! (`extract::SLOTS`). Nouns that belong to one slot decide alone ("deadline",
//! "due date", "launch", "cutover", "day rate", "budget cap"); the meeting
//! nouns belong to both the meeting-time and room slots, and then the
//! request's last token decides: "the standup with Alex is *in*" asks for a
//! room, "… is *at*" for a time (each slot's `cues`). The rule depends on the
//! fixed slot inventory, which is why the schema-free margin gate exists too.

use crate::extract::{SLOTS, SlotSpec, slot_nouns};
use crate::text;

/// The slot `context` asks for, or `None` when it names no slot noun, names
/// nouns of several slots that its trailing cue does not separate, or ends
/// without a cue of any candidate slot.
pub fn requested_slot(context: &str) -> Option<&'static SlotSpec> {
    let normalized = text::normalize(context);
    let tokens: Vec<&str> = text::tokens(&normalized).collect();
    let mut candidates: Vec<usize> = slot_nouns(&tokens).into_iter().map(|(s, _, _)| s).collect();
    candidates.sort_unstable();
    candidates.dedup();
    match candidates.as_slice() {
        [] => None,
        [only] => Some(&SLOTS[*only]),
        several => {
            let last = tokens.last()?;
            let mut cued = several.iter().filter(|s| SLOTS[**s].cues.contains(last));
            match (cued.next(), cued.next()) {
                (Some(s), None) => Some(&SLOTS[*s]),
                _ => None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(context: &str) -> Option<&'static str> {
        requested_slot(context).map(|s| s.name)
    }

    #[test]
    fn unambiguous_nouns_decide_alone() {
        assert_eq!(slot("the deadline for Halcyon is"), Some("deadline"));
        assert_eq!(slot("New due date for Orion:"), Some("deadline"));
        assert_eq!(slot("the Halcyon launch is on"), Some("launch_date"));
        assert_eq!(slot("Sam day rate is now"), Some("day_rate"));
        assert_eq!(slot("the budget cap for Atlas is"), Some("budget_cap"));
    }

    #[test]
    fn shared_meeting_nouns_read_the_trailing_cue() {
        assert_eq!(slot("the standup with Alex is at"), Some("meeting_time"));
        assert_eq!(slot("Alex standup is now at"), Some("meeting_time"));
        assert_eq!(slot("the standup with Alex is in"), Some("room"));
        assert_eq!(slot("Alex sync is now in"), Some("room"));
        // A meeting noun without a cue of either slot says nothing.
        assert_eq!(slot("the standup with Alex went"), None);
    }

    #[test]
    fn no_slot_noun_no_slot() {
        assert_eq!(slot("thanks Alex, see you"), None);
        assert_eq!(slot(""), None);
    }
}
