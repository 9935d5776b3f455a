//! A corpus: the segments that make up one index (active facts, or all
//! versions), each with its deletions, and the exact statistics of the live
//! documents.
//!
//! # Invariants
//! 1. A fact has at most one live document in a corpus.
//! 2. `live_docs` and `field_len_sums` equal the sums over live documents;
//!    `deleted_presence` of a view equals the presence counts of its deleted
//!    documents, so document frequencies over live documents are exact.
//! 3. `base` of the i-th view is the total length of the views before it:
//!    global document ids `base + local` are dense and unique in a version.
//!
//! Cloning a corpus is O(number of segments): segments and delete chunks are
//! shared, deletion statistics are persistent maps.

use std::sync::Arc;

use super::deletes::DeleteSet;
use super::segment::{FIELDS, Segment, pattern};
use crate::fact::FactId;
use crate::pmap::PMap;

/// A segment as one index version sees it.
#[derive(Clone, Debug)]
pub struct SegmentView {
    /// The immutable segment.
    pub segment: Arc<Segment>,
    /// Its deleted documents in this version.
    pub deletes: DeleteSet,
    deleted_presence: PMap<u32, [u32; 7]>,
    deleted_lens: [u64; FIELDS],
    /// Global id of local document 0 (invariant 3).
    pub base: u32,
    /// `segment.by_time()[oldest..newest]` starts and ends with live
    /// documents (empty when none is live); deletes only grow within a
    /// view, so both ends only move inward.
    oldest: u32,
    newest: u32,
}

impl SegmentView {
    /// A view with no deletions.
    pub fn new(segment: Arc<Segment>) -> Self {
        SegmentView {
            deletes: DeleteSet::default(),
            deleted_presence: PMap::default(),
            deleted_lens: [0; FIELDS],
            base: 0,
            oldest: 0,
            newest: segment.len() as u32,
            segment,
        }
    }

    /// The anchored recencies of its oldest and newest live documents.
    pub fn rec_range(&self) -> Option<(f64, f64)> {
        let order = self.segment.by_time();
        (self.oldest < self.newest).then(|| {
            (
                self.segment.rec(order[self.oldest as usize]),
                self.segment.rec(order[self.newest as usize - 1]),
            )
        })
    }

    /// Moves the live range's ends past deleted documents.
    fn trim(&mut self) {
        let order = self.segment.by_time();
        while self.oldest < self.newest && self.deletes.contains(order[self.oldest as usize]) {
            self.oldest += 1;
        }
        while self.oldest < self.newest && self.deletes.contains(order[self.newest as usize - 1]) {
            self.newest -= 1;
        }
    }

    /// Deletes a local document; returns whether it was live.
    pub fn delete(&mut self, doc: u32) -> bool {
        if !self.deletes.insert(doc) {
            return false;
        }
        let segment = &self.segment;
        for (tid, tf) in segment.record(doc).terms() {
            self.deleted_presence.entry(tid).or_insert([0; 7])[pattern(tf) - 1] += 1;
        }
        for (sum, l) in self.deleted_lens.iter_mut().zip(segment.lens(doc)) {
            *sum += u64::from(l);
        }
        self.trim();
        true
    }

    /// Number of live documents.
    pub fn live(&self) -> usize {
        self.segment.len() - self.deletes.len() as usize
    }

    /// Presence counts of a term id over live documents.
    #[inline]
    pub fn live_presence(&self, tid: u32) -> [u32; 7] {
        let mut p = self.segment.presence(tid);
        if let Some(d) = self.deleted_presence.get(&tid) {
            for (a, b) in p.iter_mut().zip(d) {
                *a -= b;
            }
        }
        p
    }

    /// Token-count sums per field over live documents.
    pub fn live_len_sums(&self) -> [u64; FIELDS] {
        let mut s = self.segment.field_len_sums();
        for (a, b) in s.iter_mut().zip(self.deleted_lens) {
            *a -= b;
        }
        s
    }
}

/// One index: segments, deletions, and statistics of the live documents.
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    views: Vec<SegmentView>,
    live_docs: u64,
    field_len_sums: [u64; FIELDS],
    doc_space: u32,
}

impl Corpus {
    /// A corpus over these views (recomputes bases and statistics).
    pub fn from_views(views: Vec<SegmentView>) -> Self {
        let mut c = Corpus {
            views,
            ..Corpus::default()
        };
        c.refresh();
        c
    }

    /// Recomputes bases and totals after the view list changed: O(segments).
    pub(super) fn refresh(&mut self) {
        let mut base = 0u32;
        self.live_docs = 0;
        self.field_len_sums = [0; FIELDS];
        for v in &mut self.views {
            v.base = base;
            base += v.segment.len() as u32;
            self.live_docs += v.live() as u64;
            for (a, b) in self.field_len_sums.iter_mut().zip(v.live_len_sums()) {
                *a += b;
            }
        }
        self.doc_space = base;
    }

    /// The time between the oldest and the newest last-observed time of
    /// its live documents, in recency half-lives (0 when empty): exact, so
    /// it does not depend on how the documents are cut into segments.
    pub fn span_half_lives(&self) -> f64 {
        let (lo, hi) = self
            .views
            .iter()
            .filter_map(SegmentView::rec_range)
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), (a, b)| {
                (lo.min(a), hi.max(b))
            });
        if hi > 0.0 && lo > 0.0 && lo.is_finite() {
            (hi / lo).log2()
        } else {
            0.0
        }
    }

    /// The segment views, oldest first.
    pub fn views(&self) -> &[SegmentView] {
        &self.views
    }

    pub(super) fn views_mut(&mut self) -> &mut Vec<SegmentView> {
        &mut self.views
    }

    /// Number of live documents (`N` of BM25).
    pub fn live_docs(&self) -> u64 {
        self.live_docs
    }

    /// Token-count sums per field over live documents.
    pub fn field_len_sums(&self) -> [u64; FIELDS] {
        self.field_len_sums
    }

    /// Size of the global document-id space (deleted documents included).
    pub fn doc_space(&self) -> u32 {
        self.doc_space
    }

    /// The live document of a fact, as (view index, local id).
    pub fn find(&self, fact: FactId) -> Option<(usize, u32)> {
        self.views.iter().enumerate().rev().find_map(|(i, v)| {
            v.segment
                .find(fact)
                .filter(|d| !v.deletes.contains(*d))
                .map(|d| (i, d))
        })
    }

    /// A fact's vectors from the newest segment that lists it, deleted or
    /// not (a deleted document keeps its row until a merge drops it).
    pub fn vectors_of(&self, fact: FactId) -> Option<crate::vector::SharedVectors> {
        self.views.iter().rev().find_map(|v| {
            v.segment
                .find(fact)
                .and_then(|d| v.segment.matrix().vectors(d))
        })
    }

    /// Deletes the live document of a fact; returns whether there was one.
    pub fn delete(&mut self, fact: FactId) -> bool {
        let Some((i, doc)) = self.find(fact) else {
            return false;
        };
        let view = &mut self.views[i];
        let before = view.live_len_sums();
        view.delete(doc);
        let after = view.live_len_sums();
        self.live_docs -= 1;
        for ((sum, b), a) in self.field_len_sums.iter_mut().zip(before).zip(after) {
            *sum -= b - a;
        }
        true
    }

    /// Every live document as (view, local id).
    pub fn live(&self) -> impl Iterator<Item = (&SegmentView, u32)> {
        self.views.iter().flat_map(|v| {
            (0..v.segment.len() as u32)
                .filter(|d| !v.deletes.contains(*d))
                .map(move |d| (v, d))
        })
    }

    /// Exact document frequency of `term` over live documents, counting the
    /// fields in `mask` (bit 0 text, 1 entities, 2 participants).
    pub fn df(&self, term: &str, mask: usize) -> u32 {
        self.views
            .iter()
            .filter_map(|v| v.segment.term(term).map(|t| v.live_presence(t)))
            .map(|p| super::segment::df_for_mask(&p, mask))
            .sum()
    }
}
