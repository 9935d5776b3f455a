//! Posting cursors: one query term's postings in one segment, with what
//! pruning knows of them without reading them — the most the term adds to
//! one document there, its bitmap when it is dense, the newest recency of
//! each chunk of postings — and the grid of them one query reads (term ×
//! segment view).
//!
//! The scorer reads postings and bounds only through these types, so the
//! segment's layout (flat posting array, chunk numbering, bitmap words) stays
//! the segment's business.

use std::ops::Range;

use crate::index::Segment;
use crate::index::postings::Postings;
use crate::index::segment::{Bitmap, CHUNK};

/// One query term's postings in one segment.
#[derive(Clone, Copy, Debug)]
pub struct TermCursor<'s> {
    /// The segment, for its chunk recencies.
    segment: &'s Segment,
    /// The term's id in the segment (what a document record's pairs name).
    pub term: u32,
    /// Its postings, by ascending local document.
    pub postings: Postings<'s>,
    /// The most the term adds to one document's BM25F in this segment.
    pub upper_bound: f32,
    /// Its largest merged frequency `Σ α_F · tf_F` in this segment, from the
    /// largest frequency in each field (at least any posting's).
    pub tf_max: f32,
    /// Its bitmap, when the term is dense in the segment.
    bitmap: Option<Bitmap<'s>>,
    /// Where its postings start among the segment's: chunks are numbered
    /// from the segment's first posting, not the list's.
    first: usize,
}

impl<'s> TermCursor<'s> {
    /// The cursor of term id `term` of `segment`, whose contribution to one
    /// document is at most `upper_bound` and merged frequency at most
    /// `tf_max`.
    pub fn new(segment: &'s Segment, term: u32, upper_bound: f32, tf_max: f32) -> Self {
        TermCursor {
            segment,
            term,
            postings: segment.postings(term),
            upper_bound,
            tf_max,
            bitmap: segment.bitmap(term),
            first: segment.postings_start(term),
        }
    }

    /// Whether document `doc` may have the term: `false` only when the
    /// term's bitmap says it does not (a sparse term may always).
    #[inline]
    pub fn may_contain(&self, doc: u32) -> bool {
        self.bitmap.is_none_or(|b| b.contains(doc))
    }

    /// The chunk that posting `i` of this list falls in.
    #[inline]
    pub fn chunk_of(&self, i: usize) -> usize {
        (self.first + i) / CHUNK
    }

    /// The position in this list of the first of its postings in `chunk`.
    #[inline]
    pub fn chunk_start(&self, chunk: usize) -> usize {
        (chunk * CHUNK).max(self.first) - self.first
    }

    /// The newest anchored recency among the documents of `chunk`'s postings
    /// (invariant 6 of segments): a bound for every posting of the chunk.
    #[inline]
    pub fn chunk_recency(&self, chunk: usize) -> f64 {
        self.segment.chunk_rec(chunk)
    }
}

/// The cursors of one query: one per (term, segment view), terms in
/// processing order.
///
/// Stored view by view: the hot reads — the bound of a document's remaining
/// terms, and finishing a document from its record — walk one view's terms
/// in order, which is then one contiguous run.
#[derive(Debug)]
pub struct CursorGrid<'s> {
    /// Number of terms (a view's run of cells).
    terms: usize,
    /// Term `t`'s cursor in view `v` at `v * terms + t`; `None` where that
    /// segment lacks the term.
    cells: Vec<Option<TermCursor<'s>>>,
}

impl<'s> CursorGrid<'s> {
    /// The grid of `terms` terms over `views` segment views, cell by cell in
    /// storage order: `cursor(view, term)` is term `term`'s cursor in view
    /// `view`, if that segment has the term.
    pub fn build(
        views: usize,
        terms: usize,
        mut cursor: impl FnMut(usize, usize) -> Option<TermCursor<'s>>,
    ) -> Self {
        let mut cells = Vec::with_capacity(views * terms);
        for view in 0..views {
            cells.extend((0..terms).map(|term| cursor(view, term)));
        }
        CursorGrid { terms, cells }
    }

    /// Number of terms.
    pub fn terms(&self) -> usize {
        self.terms
    }

    /// Term `term`'s cursor in view `view`, if that segment has the term.
    #[inline]
    pub fn get(&self, term: usize, view: usize) -> Option<&TermCursor<'s>> {
        self.cells[view * self.terms + term].as_ref()
    }

    /// View `view`'s cursors of terms `terms`: what those terms can still
    /// add to its documents.
    #[inline]
    pub fn remaining(&self, view: usize, terms: Range<usize>) -> Remaining<'_, 's> {
        let start = view * self.terms;
        Remaining(&self.cells[start + terms.start..start + terms.end])
    }
}

/// Some consecutive terms' cursors in one view (`None` where the segment
/// lacks a term): the terms a document has not been scored on yet.
#[derive(Clone, Copy, Debug)]
pub struct Remaining<'g, 's>(&'g [Option<TermCursor<'s>>]);

impl<'g, 's> Remaining<'g, 's> {
    /// The most these terms can add to any document: the sum of their upper
    /// bounds.
    #[inline]
    pub fn bound(self) -> f32 {
        self.0.iter().flatten().map(|c| c.upper_bound).sum()
    }

    /// `first`, then each of these terms' upper bound added in term order, as
    /// a score adds its terms: with `first` at least a document's partial
    /// score, at least its score over these terms in floating point too
    /// (each addition is monotone), with no margin.
    #[inline]
    pub fn bound_after(self, first: f32) -> f32 {
        self.0
            .iter()
            .flatten()
            .fold(first, |sum, c| sum + c.upper_bound)
    }

    /// The most these terms can add to document `doc`: [`Remaining::bound`]
    /// less the terms whose bitmap says `doc` lacks them.
    #[inline]
    pub fn bound_of(self, doc: u32) -> f32 {
        self.0
            .iter()
            .flatten()
            .filter(|c| c.may_contain(doc))
            .map(|c| c.upper_bound)
            .sum()
    }

    /// The cursors in term order, `None` where the segment lacks a term.
    #[inline]
    pub fn cursors(self) -> std::slice::Iter<'g, Option<TermCursor<'s>>> {
        self.0.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::segment::fixtures::three_hundred as segment;

    #[test]
    fn a_cursor_owns_its_terms_postings_and_bitmap() {
        let seg = segment();
        let common = seg.term("common").unwrap();
        let rare = seg.term("rare").unwrap();
        let dense = TermCursor::new(&seg, common, 1.5, 1.0);
        let sparse = TermCursor::new(&seg, rare, 4.0, 1.0);
        assert_eq!(dense.postings.len(), 150);
        assert_eq!(sparse.postings.len(), 2);
        for d in 0..seg.len() as u32 {
            let has = dense.postings.iter().any(|p| p.doc == d);
            assert_eq!(dense.may_contain(d), has, "a dense term's bitmap is exact");
            assert!(
                sparse.may_contain(d),
                "a sparse term may be on any document"
            );
        }
    }

    #[test]
    fn chunks_bound_every_posting_and_start_inside_the_list() {
        let seg = segment();
        for term in 0..seg.term_count() as u32 {
            let cursor = TermCursor::new(&seg, term, 1.0, 1.0);
            for (i, p) in cursor.postings.iter().enumerate() {
                let chunk = cursor.chunk_of(i);
                assert!(seg.record(p.doc).recency <= cursor.chunk_recency(chunk));
                let start = cursor.chunk_start(chunk);
                assert!(
                    start <= i,
                    "term {term}: chunk {chunk} starts after posting {i}"
                );
                assert!(
                    start == 0 || cursor.chunk_of(start - 1) < chunk,
                    "the chunk's first posting in this list"
                );
            }
        }
    }

    #[test]
    fn remaining_bounds_skip_absent_terms_and_terms_a_bitmap_rules_out() {
        let seg = segment();
        let (common, rare) = (seg.term("common").unwrap(), seg.term("rare").unwrap());
        // Term 0: rare, in view 0; term 1: common, in view 1; term 2:
        // common, in view 0.
        let grid = CursorGrid::build(2, 3, |view, term| match (view, term) {
            (0, 0) => Some(TermCursor::new(&seg, rare, 4.0, 1.0)),
            (1, 1) | (0, 2) => Some(TermCursor::new(&seg, common, 1.5, 1.0)),
            _ => None,
        });
        assert_eq!(grid.terms(), 3);
        assert!(grid.get(1, 0).is_none());
        assert_eq!(grid.get(1, 1).map(|c| c.term), Some(common));
        assert_eq!(grid.remaining(0, 0..3).bound(), 5.5);
        assert_eq!(grid.remaining(0, 1..3).bound(), 1.5);
        assert_eq!(grid.remaining(1, 0..3).bound(), 1.5);
        assert_eq!(grid.remaining(0, 0..3).bound_of(2), 5.5, "doc 2 has common");
        assert_eq!(grid.remaining(0, 0..3).bound_of(3), 4.0, "doc 3 lacks it");
        assert_eq!(grid.remaining(1, 0..3).bound_of(3), 0.0);
        assert_eq!(grid.remaining(0, 0..0).bound(), 0.0);
        let views: Vec<Option<u32>> = grid
            .remaining(1, 0..3)
            .cursors()
            .map(|c| c.map(|c| c.term))
            .collect();
        assert_eq!(views, [None, Some(common), None]);
    }
}
