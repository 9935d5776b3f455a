//! A segment's presence counts (invariant 3 of [`super::segment`]), four
//! bytes a term for most terms.
//!
//! A term's counts are seven `u32`s, one per field pattern, but almost
//! every term is found in one pattern only: a word in the text field, a
//! name in the participant field. Such a term's counts are one word here —
//! its pattern in the top three bits, its count in the rest — and only a
//! term found in two patterns or more keeps all seven, in a side table.
//! Measured at 100,000 synthetic wide facts, the seven words were 14 of
//! a merged segment's ~210 bytes a fact (issue 24).

/// Bits of a word that hold a count or a side-table index.
const LOW_BITS: u32 = 29;
/// The largest count (or side-table index) a word holds.
const LOW: u32 = (1 << LOW_BITS) - 1;

/// Per term, its documents' count per field pattern.
///
/// Invariant: `words[t] >> LOW_BITS` is `t`'s only pattern `p` in `1..=7`
/// with `words[t] & LOW` documents, or `0`, and then `words[t] & LOW`
/// indexes `t`'s counts in `many`.
#[derive(Debug, Default)]
pub struct Presence {
    words: Vec<u32>,
    many: Vec<[u32; 7]>,
}

impl Presence {
    /// The compact form of `counts` (per term id, `counts[t][p - 1]`
    /// documents in pattern `p`).
    pub fn of(counts: &[[u32; 7]]) -> Presence {
        let mut many = Vec::new();
        let words = counts
            .iter()
            .map(|c| {
                let mut found = c.iter().zip(1u32..).filter(|&(&n, _)| n > 0);
                match (found.next(), found.next()) {
                    (Some((&n, p)), None) if n <= LOW => p << LOW_BITS | n,
                    _ => {
                        many.push(*c);
                        u32::try_from(many.len() - 1)
                            .ok()
                            .filter(|&i| i <= LOW)
                            .expect("a segment has fewer than 2^29 terms in several patterns")
                    }
                }
            })
            .collect();
        many.shrink_to_fit();
        Presence { words, many }
    }

    /// Term `t`'s counts per pattern (`[p - 1]`).
    #[inline]
    pub fn get(&self, t: u32) -> [u32; 7] {
        let w = self.words[t as usize];
        match w >> LOW_BITS {
            0 => self.many[(w & LOW) as usize],
            p => {
                let mut counts = [0; 7];
                counts[p as usize - 1] = w & LOW;
                counts
            }
        }
    }

    /// How many terms.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether there are no terms.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// The compact form gives back every term's counts, whatever the
        /// mix of patterns, including counts too large for one word.
        #[test]
        fn gives_back_every_count(
            counts in proptest::collection::vec(
                proptest::array::uniform7(prop_oneof![
                    4 => Just(0u32),
                    2 => 1u32..1000,
                    1 => LOW - 1..=LOW + 1,
                    1 => Just(u32::MAX),
                ]),
                0..64,
            )
        ) {
            let presence = Presence::of(&counts);
            prop_assert_eq!(presence.len(), counts.len());
            for (t, c) in counts.iter().enumerate() {
                prop_assert_eq!(presence.get(t as u32), *c);
            }
        }
    }

    #[test]
    fn a_single_pattern_takes_one_word() {
        let mut text = [0; 7];
        text[0] = 5;
        let mut both = text;
        both[6] = 1;
        let presence = Presence::of(&[text, both, text]);
        assert_eq!(presence.many.len(), 1);
        assert_eq!(
            (presence.get(0), presence.get(1), presence.get(2)),
            (text, both, text)
        );
    }
}
