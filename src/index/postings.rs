//! A segment's postings, four bytes each where a [`Posting`] takes eight
//! (issue 24: postings were 40 of the 172 bytes a fact a merged segment
//! held at 100,000 wide).
//!
//! A posting is one word, `doc << 3 | fields`, when its document id is below
//! [`HUGE`] and the term is at most once in each field and in some field:
//! almost every posting of a short fact. Bit `f` of `fields` says the term
//! is once in field `f` ([`ONCE_IN`]). Any other posting is a word with
//! `fields` 0 and an [`Overflow`] entry that holds the document and the
//! frequencies, filed by the posting's position among the segment's
//! postings.
//!
//! # Invariants
//! 1. Each word with `fields` 0 has exactly one overflow entry, at its
//!    position; the overflow is sorted by position.
//! 2. [`Postings::get`] returns exactly the [`Posting`] that was packed at
//!    that position (checked by the proptest below).
//!
//! The scorer reads postings by position (cursors skip a chunk of them at a
//! time), so the words keep a fixed stride; the overflow is searched only
//! for the few postings that need it.

use super::segment::{FIELDS, Posting};

/// The smallest id that the one-word forms do not hold: a posting's
/// document id here, a term id in a segment record's entries (which use
/// `HUGE << 3` to mark an entry that holds its id elsewhere).
pub const HUGE: u32 = (1 << 29) - 1;

/// The frequencies of a term once in each field whose bit is set.
pub const ONCE_IN: [[u8; FIELDS]; 8] = {
    let mut table = [[0; FIELDS]; 8];
    let mut fields = 0;
    while fields < 8 {
        table[fields] = [
            fields as u8 & 1,
            fields as u8 >> 1 & 1,
            fields as u8 >> 2 & 1,
        ];
        fields += 1;
    }
    table
};

/// The field bits of frequencies `tf` (see [`ONCE_IN`]), when the term is
/// at most once in each field and in some field.
pub fn once_in(tf: [u8; FIELDS]) -> Option<u32> {
    let bits = tf
        .iter()
        .enumerate()
        .try_fold(0u32, |bits, (f, &t)| match t {
            0 => Some(bits),
            1 => Some(bits | 1 << f),
            _ => None,
        })?;
    (bits != 0).then_some(bits)
}

/// A posting that its word cannot hold, at its position among the
/// segment's postings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow {
    at: u32,
    doc: u32,
    tf: [u8; FIELDS],
}

/// Every posting of a segment, term after term (the segment keeps where
/// each term's start).
#[derive(Debug, Default)]
pub struct PackedPostings {
    words: Vec<u32>,
    overflow: Vec<Overflow>,
}

impl PackedPostings {
    /// Packs postings in the order given. At most `u32::MAX` postings: a
    /// segment's term starts are `u32` too.
    pub fn new(postings: impl IntoIterator<Item = Posting>) -> PackedPostings {
        let mut packed = PackedPostings::default();
        for p in postings {
            let at = packed.words.len();
            match once_in(p.tf) {
                Some(fields) if p.doc < HUGE => packed.words.push(p.doc << 3 | fields),
                _ => {
                    packed.words.push(0);
                    packed.overflow.push(Overflow {
                        at: u32::try_from(at).expect("a segment holds fewer than 2^32 postings"),
                        doc: p.doc,
                        tf: p.tf,
                    });
                }
            }
        }
        packed.words.shrink_to_fit();
        packed.overflow.shrink_to_fit();
        packed
    }

    /// How many postings there are.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The postings at positions `range`.
    #[inline]
    pub fn slice(&self, range: std::ops::Range<usize>) -> Postings<'_> {
        Postings {
            first: range.start,
            words: &self.words[range],
            overflow: &self.overflow,
        }
    }

    /// Every posting, in order.
    pub fn all(&self) -> Postings<'_> {
        self.slice(0..self.len())
    }
}

/// Consecutive postings of a segment (one term's, as a rule).
#[derive(Clone, Copy, Debug)]
pub struct Postings<'a> {
    /// The position of `words[0]` among the segment's postings.
    first: usize,
    words: &'a [u32],
    /// The segment's whole overflow.
    overflow: &'a [Overflow],
}

impl<'a> Postings<'a> {
    /// How many postings there are.
    #[inline]
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The posting at position `i` (panics past the end, as indexing does).
    #[inline]
    pub fn get(&self, i: usize) -> Posting {
        let w = self.words[i];
        if w & 7 == 0 {
            return self.overflowed(i);
        }
        // The bits themselves rather than `ONCE_IN`: no load in the
        // scorer's loops.
        Posting {
            doc: w >> 3,
            tf: [(w & 1) as u8, (w >> 1 & 1) as u8, (w >> 2 & 1) as u8],
        }
    }

    /// [`Postings::get`] of a posting kept in the overflow: out of line, so
    /// that the common case inlines into the scorer's loops.
    #[cold]
    #[inline(never)]
    fn overflowed(&self, i: usize) -> Posting {
        let at = (self.first + i) as u32;
        // Infallible (invariant 1): every word with no field bits has its entry.
        let o = self.overflow[self
            .overflow
            .binary_search_by_key(&at, |o| o.at)
            .expect("an overflow entry for every word without field bits")];
        Posting {
            doc: o.doc,
            tf: o.tf,
        }
    }

    /// The postings in order.
    #[inline]
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Posting> + ExactSizeIterator + 'a {
        let this = *self;
        (0..this.len()).map(move |i| this.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Postings read back as packed, in either form, and a slice reads
        /// the same postings at its own positions (invariant 2).
        #[test]
        fn postings_read_back_as_packed(
            postings in proptest::collection::vec(
                (
                    prop_oneof![0..64u32, HUGE - 2..=HUGE + 2, any::<u32>()],
                    proptest::array::uniform3(prop_oneof![0..=2u8, any::<u8>()]),
                ),
                0..64,
            ),
            cut in any::<prop::sample::Index>(),
        ) {
            let postings: Vec<Posting> =
                postings.into_iter().map(|(doc, tf)| Posting { doc, tf }).collect();
            let packed = PackedPostings::new(postings.iter().copied());
            prop_assert_eq!(packed.len(), postings.len());
            let read: Vec<Posting> = packed.all().iter().collect();
            prop_assert_eq!(&read, &postings);
            let one_word = postings.iter().filter(|p| p.doc < HUGE && once_in(p.tf).is_some()).count();
            prop_assert_eq!(packed.words.len(), postings.len());
            prop_assert_eq!(packed.overflow.len(), postings.len() - one_word);
            prop_assert_eq!(size_of::<Overflow>(), 12);
            let from = if postings.is_empty() { 0 } else { cut.index(postings.len()) };
            let tail = packed.slice(from..postings.len());
            for (i, p) in postings[from..].iter().enumerate() {
                prop_assert_eq!(tail.get(i), *p);
            }
            prop_assert!(tail.iter().rev().eq(postings[from..].iter().rev().copied()));
        }
    }

    #[test]
    fn once_in_names_the_fields_of_single_occurrences() {
        assert_eq!(once_in([1, 0, 1]), Some(0b101));
        assert_eq!(once_in([0, 1, 0]), Some(0b010));
        assert_eq!(once_in([0, 0, 0]), None, "in no field");
        assert_eq!(once_in([2, 0, 0]), None, "twice in the text");
        for fields in 1..8u32 {
            assert_eq!(once_in(ONCE_IN[fields as usize]), Some(fields));
        }
    }
}
