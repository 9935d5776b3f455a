//! The best `n` of a stream of scored documents, for the scorer.
//!
//! A binary heap pays a sift (log n comparisons) for every document that
//! beats the current worst, which is most of them when scores rise along
//! the stream. This buffer appends such documents instead and, when it
//! holds `2n`, keeps the best `n` by one selection, so a document costs
//! O(1) amortized. `cutoff` — the worst kept entry at the last selection —
//! is a valid lower bound on the final n-th best score (it only rises), which
//! is all the scorer's pruning needs.
//!
//! The order is total (higher score first, then the newer fact), so the
//! final set and its order do not depend on the order documents arrive in.

use std::cmp::Ordering;

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

/// The buffer.
#[derive(Debug, Default)]
pub(crate) struct TopN {
    n: usize,
    items: Vec<Entry>,
    /// The worst kept entry at the last selection, once `n` were kept.
    floor: Option<Entry>,
}

impl TopN {
    /// Empties the buffer for a query that wants the best `n`.
    pub fn reset(&mut self, n: usize) {
        self.n = n;
        self.items.clear();
        self.floor = None;
    }

    /// A lower bound on the final n-th best score, once `n` documents have
    /// been kept: a document scoring below it cannot enter.
    pub fn cutoff(&self) -> Option<f32> {
        self.floor.map(|f| f.score)
    }

    /// Offers a document.
    #[inline]
    pub fn offer(&mut self, entry: Entry) {
        if self.n == 0 {
            return;
        }
        if let Some(floor) = &self.floor
            && rank(&entry, floor) != Ordering::Less
        {
            return;
        }
        self.items.push(entry);
        if self.floor.is_none() && self.items.len() == self.n {
            self.floor = self.items.iter().copied().max_by(rank);
        } else if self.items.len() >= 2 * self.n {
            self.select();
        }
    }

    /// Keeps the best `n` and raises the floor to the worst of them.
    fn select(&mut self) {
        let n = self.n;
        if self.items.len() > n {
            self.items.select_nth_unstable_by(n - 1, rank);
            self.items.truncate(n);
            self.floor = Some(self.items[n - 1]);
        }
    }

    /// The best `n`, best first; leaves the buffer empty.
    pub fn finish(&mut self) -> impl Iterator<Item = Entry> + '_ {
        self.select();
        self.items.sort_unstable_by(rank);
        self.floor = None;
        self.items.drain(..)
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
