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

use crate::index::segment::{Bitmap, CHUNK};
use crate::index::{Posting, Segment};

/// One query term's postings in one segment.
#[derive(Clone, Copy, Debug)]
pub struct TermCursor<'s> {
    /// The segment, for its chunk recencies.
    segment: &'s Segment,
    /// The term's id in the segment (what a document record's pairs name).
    pub term: u32,
    /// Its postings, by ascending local document.
    pub postings: &'s [Posting],
    /// The most the term adds to one document's BM25F in this segment.
    pub upper_bound: f32,
    /// Its bitmap, when the term is dense in the segment.
    bitmap: Option<Bitmap<'s>>,
    /// Where its postings start among the segment's: chunks are numbered
    /// from the segment's first posting, not the list's.
    first: usize,
}

impl<'s> TermCursor<'s> {
    /// The cursor of term id `term` of `segment`, whose contribution to one
    /// document is at most `upper_bound`.
    pub fn new(segment: &'s Segment, term: u32, upper_bound: f32) -> Self {
        TermCursor {
            segment,
            term,
            postings: segment.postings(term),
            upper_bound,
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
#[derive(Debug)]
pub struct CursorGrid<'s> {
    /// Number of segment views (the grid's width).
    views: usize,
    /// Term `t`'s cursor in view `v` at `t * views + v`; `None` where that
    /// segment lacks the term.
    cells: Vec<Option<TermCursor<'s>>>,
}

impl<'s> CursorGrid<'s> {
    /// An empty grid for `views` segment views.
    pub fn new(views: usize, terms: usize) -> Self {
        CursorGrid {
            views,
            cells: Vec::with_capacity(views * terms),
        }
    }

    /// Appends the next term's cursors, one per view in view order.
    pub fn push_term(&mut self, row: impl IntoIterator<Item = Option<TermCursor<'s>>>) {
        let before = self.cells.len();
        self.cells.extend(row);
        assert_eq!(self.cells.len() - before, self.views, "one cursor per view");
    }

    /// Number of terms.
    pub fn terms(&self) -> usize {
        self.cells.len() / self.views.max(1)
    }

    /// Term `term`'s cursor in view `view`, if that segment has the term.
    #[inline]
    pub fn get(&self, term: usize, view: usize) -> Option<&TermCursor<'s>> {
        self.cells[term * self.views + view].as_ref()
    }

    /// The most the terms `terms` can add to one document of view `view`:
    /// the sum of their upper bounds there, less those whose bitmap says
    /// `doc` lacks them (with no `doc`, every term counts).
    #[inline]
    pub fn rest_bound(&self, terms: Range<usize>, view: usize, doc: Option<u32>) -> f32 {
        terms
            .filter_map(|t| self.get(t, view))
            .filter(|c| doc.is_none_or(|d| c.may_contain(d)))
            .map(|c| c.upper_bound)
            .sum()
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
        let dense = TermCursor::new(&seg, common, 1.5);
        let sparse = TermCursor::new(&seg, rare, 4.0);
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
            let cursor = TermCursor::new(&seg, term, 1.0);
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
    fn rest_bound_skips_absent_terms_and_terms_a_bitmap_rules_out() {
        let seg = segment();
        let (common, rare) = (seg.term("common").unwrap(), seg.term("rare").unwrap());
        let mut grid = CursorGrid::new(2, 3);
        grid.push_term([Some(TermCursor::new(&seg, rare, 4.0)), None]);
        grid.push_term([None, Some(TermCursor::new(&seg, common, 1.5))]);
        grid.push_term([Some(TermCursor::new(&seg, common, 1.5)), None]);
        assert_eq!(grid.terms(), 3);
        assert!(grid.get(1, 0).is_none());
        assert_eq!(grid.get(1, 1).map(|c| c.term), Some(common));
        assert_eq!(grid.rest_bound(0..3, 0, None), 5.5);
        assert_eq!(grid.rest_bound(1..3, 0, None), 1.5);
        assert_eq!(grid.rest_bound(0..3, 0, Some(2)), 5.5, "doc 2 has common");
        assert_eq!(grid.rest_bound(0..3, 0, Some(3)), 4.0, "doc 3 lacks it");
        assert_eq!(grid.rest_bound(0..3, 1, Some(3)), 0.0);
        assert_eq!(grid.rest_bound(0..0, 0, None), 0.0);
    }

    #[test]
    #[should_panic(expected = "one cursor per view")]
    fn a_row_must_cover_every_view() {
        let seg = segment();
        let mut grid = CursorGrid::new(2, 1);
        grid.push_term([Some(TermCursor::new(&seg, 0, 1.0))]);
    }
}
