//! The memory block: greedy selection under `k` facts and `B` characters, in
//! the format of Appendix C:
//!
//! ```text
//! [Relevant memory]
//! - (2025-06-11, to Alex Rivera) The standup with Alex Rivera is moved to room 16C.
//! ```
//!
//! Each line carries the date of the fact's source observation and its
//! participants. Two lines of one day that may be versions of one fact
//! (the same key, or keyless facts sharing an entity) also carry the time
//! of day (`2025-06-11T15:04Z`), so a reader can tell which is newer.
//! Facts are taken in score order until `k` facts are taken or
//! the next line would overflow `B` (the paper's rule: selection stops when
//! either limit binds). `B` counts characters (Unicode scalar values) of the
//! whole block, header and newlines included. An empty selection is an empty
//! block, not a bare header.

use serde::Serialize;

use crate::fact::{FactBody, FactId};
use crate::rank::Scored;

/// The block's first line.
pub const HEADER: &str = "[Relevant memory]";

/// The smallest budget accepted: the header and one short line.
pub const MIN_BUDGET: usize = 64;

/// One selected fact.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BlockLine {
    /// The fact.
    pub fact: FactId,
    /// Its score.
    pub score: f32,
    /// Its formatted line (no trailing newline).
    pub line: String,
}

/// A memory block.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Block {
    /// The block as it goes into the prompt; empty when nothing was selected.
    pub text: String,
    /// The selected facts, in block order.
    pub lines: Vec<BlockLine>,
    /// Whether an abstention gate emptied the block (the request's rules
    /// judged that the store holds no answer), as opposed to nothing
    /// matching.
    pub abstained: bool,
}

impl Block {
    /// The empty block of a request whose abstention gate failed.
    pub fn abstained() -> Block {
        Block {
            abstained: true,
            ..Block::default()
        }
    }

    /// Whether nothing was selected (the request abstains or nothing matched).
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Length of the block in characters.
    pub fn chars(&self) -> usize {
        self.text.chars().count()
    }
}

/// Formats one fact as a block line. Whitespace runs in the text (newlines
/// included) become single spaces, so a fact is always one line.
pub fn format_line(body: &FactBody) -> String {
    format_line_at(body, false)
}

/// Characters the time of day adds to a line's date (`T15:04Z`).
const TIME_OF_DAY: usize = 7;

/// [`format_line`], with the time of day after the date when `timed`.
fn format_line_at(body: &FactBody, timed: bool) -> String {
    let mut line = String::with_capacity(body.text().len() + 40);
    line.push_str("- (");
    body.stated_at.write_date(&mut line);
    if timed {
        body.stated_at.write_time_of_day(&mut line);
    }
    for (i, p) in body.participants().iter().enumerate() {
        line.push_str(if i == 0 { ", to " } else { ", " });
        line.push_str(p);
    }
    line.push_str(") ");
    push_words(&mut line, body.text());
    line
}

/// Appends `text`'s words, one space between each. Most stored texts are
/// spaced that way already and are copied whole: splitting them cost 3%
/// of a 1,000-fact query (a block formats every line it weighs).
fn push_words(line: &mut String, text: &str) {
    let plain = !text.starts_with(' ')
        && !text.ends_with(' ')
        && !text.contains("  ")
        // ASCII, so the only whitespace is the bytes checked here.
        && text.bytes().all(|b| b.is_ascii() && !(b'\t'..=b'\r').contains(&b));
    if plain {
        line.push_str(text);
        return;
    }
    for (i, word) in text.split_whitespace().enumerate() {
        if i > 0 {
            line.push(' ');
        }
        line.push_str(word);
    }
}

/// Greedy selection in score order under `k` facts and `budget` characters.
pub fn select(shortlist: &[Scored], k: usize, budget: usize) -> Block {
    select_annotated(shortlist, k, budget, |_| None)
}

/// [`select`] with a note appended to a line (a disclosure, see
/// [`crate::disclose`]) when the line still fits with it; the note never
/// decides whether the fact is selected.
pub fn select_annotated(
    shortlist: &[Scored],
    k: usize,
    budget: usize,
    note: impl Fn(&Scored) -> Option<String>,
) -> Block {
    let mut block = Block::default();
    let mut used = HEADER.chars().count();
    // (the fact, whether its line shows the time of day, its note).
    let mut taken: Vec<(&Scored, bool, Option<String>)> = Vec::new();
    for s in shortlist {
        if taken.len() >= k {
            break;
        }
        // Taken lines this one must be told apart from, not yet timed.
        let day = s.body.stated_at.civil_date();
        let twins: Vec<usize> = (0..taken.len())
            .filter(|&i| taken[i].0.body.stated_at.civil_date() == day)
            .filter(|&i| may_be_versions(&taken[i].0.body, &s.body))
            .collect();
        let timed = !twins.is_empty();
        let retime = twins.iter().filter(|&&i| !taken[i].1).count() * TIME_OF_DAY;
        let mut cost = 1 + format_line_at(&s.body, timed).chars().count() + retime;
        if used + cost > budget {
            break;
        }
        for i in twins {
            taken[i].1 = true;
        }
        let note = note(s).filter(|n| used + cost + 1 + n.chars().count() <= budget);
        cost += note.as_ref().map_or(0, |n| 1 + n.chars().count());
        used += cost;
        taken.push((s, timed, note));
    }
    for (s, timed, note) in taken {
        let mut line = format_line_at(&s.body, timed);
        if let Some(n) = note {
            line.push(' ');
            line.push_str(&n);
        }
        block.lines.push(BlockLine {
            fact: s.fact,
            score: s.score,
            line,
        });
    }
    if !block.lines.is_empty() {
        block.text.reserve(used);
        block.text.push_str(HEADER);
        for l in &block.lines {
            block.text.push('\n');
            block.text.push_str(&l.line);
        }
    }
    block
}

/// Whether two facts may be versions of one fact: the same key, or both
/// keyless and naming a common entity.
fn may_be_versions(a: &FactBody, b: &FactBody) -> bool {
    match (&a.key, &b.key) {
        (Some(x), Some(y)) => x == y,
        (None, None) => a.entities().iter().any(|e| b.entities().contains(e)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::*;
    use crate::fact::{BodyParts, FactNames, Name};
    use crate::time::WallTime;

    fn scored(id: u64, text: &str, participants: &[&str], score: f32) -> Scored {
        Scored {
            fact: FactId(id),
            score,
            body: Arc::new(FactBody::new(
                FactId(id),
                FactNames::new([], participants.iter().map(|p| Name::from(*p))),
                BodyParts::new(text, WallTime::parse("2025-06-11T15:00:00Z").unwrap()),
            )),
        }
    }

    #[test]
    fn appendix_c_format() {
        let s = scored(
            1,
            "The standup with Alex Rivera is moved to room 16C.",
            &["Alex Rivera"],
            1.0,
        );
        assert_eq!(
            format_line(&s.body),
            "- (2025-06-11, to Alex Rivera) The standup with Alex Rivera is moved to room 16C."
        );
        let s = scored(2, "two\nlines\t here", &[], 1.0);
        assert_eq!(format_line(&s.body), "- (2025-06-11) two lines here");
        let s = scored(3, "group", &["Ann", "Bo"], 1.0);
        assert_eq!(format_line(&s.body), "- (2025-06-11, to Ann, Bo) group");
    }

    #[test]
    fn versions_of_one_day_show_their_time_of_day() {
        let key = crate::fact::Key::new("ann lee", "residence").unwrap();
        let at = |i: u64, time: &str, key: Option<&crate::fact::Key>| {
            let s = scored(i, &format!("Ann Lee lives in city {i}."), &[], 1.0);
            let key = key.cloned().map(Arc::new);
            let parts = BodyParts {
                key: key.as_ref(),
                ..BodyParts::new(s.body.text(), WallTime::parse(time).unwrap())
            };
            Scored {
                body: Arc::new(FactBody::new(s.fact, FactNames::default(), parts)),
                ..s
            }
        };
        let list = [
            at(1, "2025-06-11T15:04:00Z", Some(&key)),
            at(2, "2025-06-12T09:00:00Z", None),
            at(3, "2025-06-11T08:30:00Z", Some(&key)),
            at(4, "2025-06-11T10:00:00Z", None),
        ];
        let b = select(&list, 10, 800);
        let lines: Vec<&str> = b.lines.iter().map(|l| l.line.as_str()).collect();
        assert_eq!(
            lines,
            [
                "- (2025-06-11T15:04Z) Ann Lee lives in city 1.",
                "- (2025-06-12) Ann Lee lives in city 2.",
                "- (2025-06-11T08:30Z) Ann Lee lives in city 3.",
                "- (2025-06-11) Ann Lee lives in city 4.",
            ]
        );
        // The budget counts the times: one character short drops the
        // second version (and what follows), and the first stays untimed.
        let exact = b.lines[..3]
            .iter()
            .map(|l| 1 + l.line.chars().count())
            .sum::<usize>()
            + HEADER.len();
        assert_eq!(select(&list, 3, exact).chars(), exact);
        let short = select(&list, 3, exact - 1);
        assert_eq!(short.lines.len(), 2);
        assert_eq!(
            short.lines[0].line,
            "- (2025-06-11) Ann Lee lives in city 1."
        );
    }

    #[test]
    fn greedy_selection_stops_when_k_or_budget_binds() {
        let list: Vec<Scored> = (0..5)
            .map(|i| scored(i, &format!("fact number {i}"), &[], 5.0 - i as f32))
            .collect();
        let b = select(&list, 3, 800);
        assert_eq!(
            b.lines.iter().map(|l| l.fact.0).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        assert_eq!(b.text.lines().count(), 4);
        assert_eq!(b.text.lines().next(), Some(HEADER));
        // Each line is "- (2025-06-11) fact number i" = 28 chars, +1 newline.
        let budget = HEADER.len() + 2 * 29;
        let b = select(&list, 6, budget);
        assert_eq!(b.lines.len(), 2);
        assert_eq!(b.chars(), budget);
        let b = select(&list, 6, budget - 1);
        assert_eq!(b.lines.len(), 1);
        assert!(select(&[], 6, 800).text.is_empty());
    }

    proptest! {
        /// The copy of a plainly spaced text writes what splitting it
        /// writes, for any text: words between separators that are mostly
        /// one space, sometimes two, a tab, a line break, a non-ASCII space
        /// or a non-ASCII letter, now and then with space before or after.
        #[test]
        fn words_are_pushed_as_split(
            ends in (
                prop::sample::select(vec!["", "", "", " ", "\n"]),
                prop::sample::select(vec!["", "", "", " ", "\n"]),
            ),
            first in "[a-z.]{1,4}",
            parts in prop::collection::vec(
                (
                    prop::sample::select(vec![
                        " ", " ", " ", " ", " ", " ", " ", " ", "", "  ", "\t", "\n", "\r",
                        "\u{0b}", "\u{0c}", "\u{a0}", "\u{2003}", "é",
                    ]),
                    "[a-z.]{1,4}",
                ),
                0..6,
            ),
        ) {
            let middle = parts.iter().flat_map(|(sep, word)| [*sep, word.as_str()]);
            let text: String = [ends.0, first.as_str()].into_iter().chain(middle).chain([ends.1]).collect();
            let mut line = String::new();
            push_words(&mut line, &text);
            let split: Vec<&str> = text.split_whitespace().collect();
            prop_assert_eq!(line, split.join(" "));
        }
    }
}
