//! The best `n` of a stream of scored documents, for the scorer.
//!
//! A binary heap of at most `n` entries with the worst on top, so that the
//! cutoff is always the exact n-th best score so far. A buffer that appends
//! documents and keeps the best `n` by one selection when it holds `2n`
//! costs O(1) per document instead of a sift of log n comparisons, but its
//! cutoff lags behind: at 100,000 wide facts a query then finished half as
//! many documents again from their records (165 against 109), each a cache
//! miss that costs more than a sift.
//!
//! The order is total (higher score first, then the newer fact), so the
//! final set and its order do not depend on the order documents arrive in.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::fact::FactId;

/// A scored document of one index view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Entry {
    /// Final score.
    pub score: f32,
    /// The fact.
    pub fact: FactId,
    /// Index of its segment view.
    pub view: u32,
    /// Local document id.
    pub doc: u32,
}

/// `Less` when `a` is better: higher score, then newer (larger) fact id.
#[inline]
pub(crate) fn rank(a: &Entry, b: &Entry) -> Ordering {
    b.score.total_cmp(&a.score).then(b.fact.cmp(&a.fact))
}

/// An entry ordered by [`rank`]: the greatest is the worst, so a max-heap
/// of them has the worst kept entry on top.
#[derive(Clone, Copy, Debug)]
struct Ranked(Entry);

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        rank(&self.0, &other.0)
    }
}

/// The best `n` so far.
#[derive(Debug, Default)]
pub(crate) struct TopN {
    n: usize,
    /// At most `n` entries, the worst on top.
    heap: BinaryHeap<Ranked>,
    /// The final entries, best first, for [`TopN::finish`].
    out: Vec<Entry>,
}

impl TopN {
    /// Empties the buffer for a query that wants the best `n`.
    pub fn reset(&mut self, n: usize) {
        self.n = n;
        self.heap.clear();
    }

    /// The worst kept entry, once `n` are kept.
    #[inline]
    fn floor(&self) -> Option<&Entry> {
        (self.heap.len() == self.n)
            .then(|| self.heap.peek().map(|r| &r.0))
            .flatten()
    }

    /// The n-th best score so far, once `n` documents have been kept: a
    /// document scoring below it cannot enter.
    #[inline]
    pub fn cutoff(&self) -> Option<f32> {
        self.floor().map(|f| f.score)
    }

    /// Whether a document scoring `score` could enter: it must rank above
    /// the floor in [`rank`]'s order, its fact (asked for only on a tie)
    /// breaking the tie.
    #[inline]
    pub fn admits(&self, score: f32, fact: impl FnOnce() -> FactId) -> bool {
        self.floor().is_none_or(|floor| {
            score
                .total_cmp(&floor.score)
                .then_with(|| fact().cmp(&floor.fact))
                .is_gt()
        })
    }

    /// Offers a document.
    #[inline]
    pub fn offer(&mut self, entry: Entry) {
        if self.n == 0 {
            return;
        }
        if self.heap.len() < self.n {
            self.heap.push(Ranked(entry));
        } else if let Some(mut worst) = self.heap.peek_mut()
            && rank(&entry, &worst.0) == Ordering::Less
        {
            *worst = Ranked(entry);
        }
    }

    /// The best `n`, best first; leaves the buffer empty.
    pub fn finish(&mut self) -> impl Iterator<Item = Entry> + '_ {
        self.out.clear();
        self.out.extend(self.heap.drain().map(|r| r.0));
        self.out.sort_unstable_by(rank);
        self.out.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(score: f32, fact: u64) -> Entry {
        Entry {
            score,
            fact: FactId(fact),
            view: 0,
            doc: fact as u32,
        }
    }

    #[test]
    fn keeps_the_best_n_whatever_the_arrival_order() {
        // Scores with many ties, so the fact-id tie-break matters.
        let all: Vec<Entry> = (0..500u64)
            .map(|i| entry(((i * 7919) % 37) as f32, i))
            .collect();
        let mut expected = all.clone();
        expected.sort_by(rank);
        for n in [1, 6, 50, 499, 500, 800] {
            for order in 0..3 {
                let mut stream = all.clone();
                match order {
                    0 => {}
                    1 => stream.reverse(),
                    _ => stream.sort_by(|a, b| a.score.total_cmp(&b.score)),
                }
                let mut top = TopN::default();
                top.reset(n);
                for (i, e) in stream.iter().enumerate() {
                    top.offer(*e);
                    if i % 50 == 49 {
                        // The cutoff never exceeds the n-th best offered so far.
                        let mut seen = stream[..=i].to_vec();
                        seen.sort_by(rank);
                        match top.cutoff() {
                            Some(c) => assert!(c <= seen[n - 1].score, "n = {n}"),
                            None => assert!(seen.len() < n, "n = {n}"),
                        }
                    }
                }
                let got: Vec<Entry> = top.finish().collect();
                assert_eq!(got, expected[..n.min(all.len())], "n = {n}, order {order}");
            }
        }
    }

    #[test]
    fn a_tie_with_the_floor_enters_only_with_a_newer_fact() {
        let mut top = TopN::default();
        top.reset(2);
        assert!(top.admits(0.0, || -> FactId { unreachable!("no floor yet") }));
        top.offer(entry(5.0, 3));
        top.offer(entry(4.0, 7));
        let no_fact = || -> FactId { unreachable!("the score decides") };
        assert!(top.admits(4.5, no_fact));
        assert!(!top.admits(3.9, no_fact));
        assert!(top.admits(4.0, || FactId(8)));
        assert!(!top.admits(4.0, || FactId(7)));
        assert!(!top.admits(4.0, || FactId(6)));
        // What `admits` turns away, `offer` would not keep.
        top.offer(entry(4.0, 6));
        let got: Vec<u64> = top.finish().map(|e| e.fact.0).collect();
        assert_eq!(got, [3, 7]);
    }

    #[test]
    fn the_cutoff_is_a_lower_bound_of_the_final_nth_best() {
        let mut top = TopN::default();
        top.reset(3);
        assert_eq!(top.cutoff(), None);
        for (s, f) in [(1.0, 1), (5.0, 2), (3.0, 3)] {
            top.offer(entry(s, f));
        }
        assert_eq!(top.cutoff(), Some(1.0));
        for (s, f) in [(4.0, 4), (6.0, 5), (0.5, 6), (7.0, 7)] {
            top.offer(entry(s, f));
        }
        // Rejected below the floor, the final three are the best three.
        assert!(top.cutoff().unwrap() <= 5.0);
        let got: Vec<f32> = top.finish().map(|e| e.score).collect();
        assert_eq!(got, [7.0, 6.0, 5.0]);
    }
}
