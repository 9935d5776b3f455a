//! A query's plan: everything about it that is the same for every segment
//! (term weights, BM25F constants, the factors' time terms, the graph
//! activation), and the per-document arithmetic of the score — one function
//! per term of `BM25F · R · (1 + η U/(1+U)) · (1 + γ A)`, shared by the
//! pruned and the exhaustive walk so both compute bit-identical scores.

use super::Ranker;
use super::cursor::{CursorGrid, Remaining, TermCursor};
use crate::config::ScoreParams;
use crate::graph::NodeId;
use crate::index::SegmentView;
use crate::index::segment::{DocRecord, FIELDS, Segment, doc_len, merged_tf};

/// How much of the posting lists to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Skip what provably cannot reach the top-n (the default).
    Pruned,
    /// Score every posting: the slow twin the tests compare against.
    Exhaustive,
}

/// Lets the owner of a running query ask it to stop (fresh mode's cancel
/// flag). The scorer checks it before scoring and between query terms.
pub trait Cancel {
    /// Whether the query should stop now.
    fn is_cancelled(&self) -> bool;
}

/// Everything about a query that is the same for every segment.
pub(super) struct Plan<'a> {
    pub ranker: &'a Ranker,
    pub params: &'a ScoreParams,
    /// `W = q · idf · (k1 + 1)` per term, in processing order (descending).
    pub weights: Vec<f32>,
    /// The ranker's BM25F field weights `α`.
    pub field_weights: [f32; FIELDS],
    /// Merged term frequencies of small per-field counts, by `tf0 + 4 tf1 +
    /// 16 tf2` (most postings have counts below 4).
    pub merged_tf_table: [f32; 64],
    /// Whether the field weights are the store's, so segments hold each
    /// document's length precomputed.
    pub stored_lengths: bool,
    /// BM25's length normalization `k1 (1 - b + b · dl / avgdl)` is
    /// `norm_base + norm_per_len · dl`: `k1 (1 - b)` …
    pub norm_base: f32,
    /// … and `k1 b / avgdl`.
    pub norm_per_len: f32,
    /// Activated graph nodes and their activation, strongest first (the
    /// seeds at 1, then the non-seeds).
    pub activation: Vec<(NodeId, f32)>,
    /// With no recency factor, per term `j` in processing order (and one
    /// past the last): the strongest activation among the told nodes (the
    /// seeds some list carries, see `strongest_from` in the scorer) that a
    /// document can hold when no list before `j` reached it. Empty with
    /// recency: only the exact bounds read it.
    pub strongest_from: Vec<f32>,
    /// With no recency factor, the activated nodes no list tells of (every
    /// non-seed, and the seeds no list carries): any document may hold one,
    /// unless [`super::holders`] rules it out.
    pub untold: Vec<(NodeId, f32)>,
    /// The graph, for the untold nodes' names.
    pub graph: &'a crate::graph::Graph,
    /// `2^-((t - A) / T_rec)`: times a document's anchored recency, its decay.
    pub recency_now: f64,
    /// The exponent on that decay (see [`super::Recency`]); `None`: no
    /// recency factor (the request's recency is off, or the ranker ignores
    /// recency).
    pub recency_power: Option<f64>,
    /// `2^-((t - A) / T_use)`, likewise for usage.
    pub usage_now: f64,
    /// How many to keep.
    pub n: usize,
    pub strategy: Strategy,
    pub cancel: Option<&'a dyn Cancel>,
}

impl Plan<'_> {
    /// Whether the query's owner asked it to stop.
    #[inline]
    pub fn cancelled(&self) -> bool {
        self.cancel.is_some_and(Cancel::is_cancelled)
    }

    /// Whether pruning is on.
    #[inline]
    pub fn pruned(&self) -> bool {
        self.strategy == Strategy::Pruned
    }

    /// The cursors of terms `ids` (per term in processing order, its id in
    /// each view's segment) with their upper bounds.
    pub fn cursors<'s>(
        &self,
        views: &'s [SegmentView],
        ids: &[Vec<Option<u32>>],
    ) -> CursorGrid<'s> {
        CursorGrid::build(views.len(), ids.len(), |view, term| {
            ids[term][view].map(|id| {
                let segment = &*views[view].segment;
                let tf_max = merged_tf(self.field_weights, segment.max_tf(id));
                TermCursor::new(
                    segment,
                    id,
                    self.upper_bound(self.weights[term], segment, id, tf_max),
                    tf_max,
                )
            })
        })
    }

    #[inline]
    fn merged_tf(&self, tf: [u8; FIELDS]) -> f32 {
        let [t0, t1, t2] = tf;
        if (t0 | t1 | t2) < 4 {
            self.merged_tf_table[usize::from(t0) + 4 * usize::from(t1) + 16 * usize::from(t2)]
        } else {
            merged_tf(self.field_weights, tf)
        }
    }

    #[inline]
    fn doc_len(&self, segment: &Segment, doc: u32) -> f32 {
        if self.stored_lengths {
            segment.dl()[doc as usize]
        } else {
            doc_len(self.field_weights, segment.lens(doc))
        }
    }

    /// BM25's length normalization `K = k1 (1 - b + b · dl / avgdl)` of a
    /// document of BM25F length `dl`.
    #[inline]
    fn norm(&self, dl: f32) -> f32 {
        self.norm_base + self.norm_per_len * dl
    }

    /// A term of weight `weight`'s BM25F contribution to a document where it
    /// has per-field frequencies `tf` (0 when the ranker ignores those
    /// fields).
    #[inline]
    pub fn contribution(&self, weight: f32, segment: &Segment, doc: u32, tf: [u8; FIELDS]) -> f32 {
        let tf = self.merged_tf(tf);
        if tf == 0.0 {
            return 0.0;
        }
        saturate(weight, tf, self.norm(self.doc_len(segment, doc)))
    }

    /// With no recency factor ([`Plan::exact_factor`]), the most document
    /// `doc` can score in full given its exact partial sum `partial` over
    /// terms `..from`, before its factor: each term of `later` (terms
    /// `from..`) that its bitmap allows, at the term's largest frequency in
    /// the segment and the document's own length, added in term order as
    /// the full score adds them. Times a factor bound, every step is
    /// monotone in floating point (see [`saturate`]; `merged_tf` only adds
    /// and multiplies non-negative numbers), so the product is never below
    /// the document's score and equals it, bit for bit, for a document that
    /// attains every maximum: no margin is needed, so a tie can be told from
    /// a win.
    #[inline]
    pub fn attainable(
        &self,
        segment: &Segment,
        doc: u32,
        partial: f32,
        from: usize,
        later: Remaining<'_, '_>,
    ) -> f32 {
        let norm = self.norm(self.doc_len(segment, doc));
        let mut score = partial;
        for (term, cursor) in (from..).zip(later.cursors()) {
            if let Some(cursor) = cursor
                && cursor.may_contain(doc)
                && cursor.tf_max > 0.0
            {
                score += saturate(self.weights[term], cursor.tf_max, norm);
            }
        }
        score
    }

    /// Largest contribution a term can make in a segment: every document of
    /// the term has merged frequency at most `tf_max` (the merged largest
    /// frequency in each field) and a length of at least the term's smallest
    /// field lengths, and the contribution never falls as the frequency
    /// grows nor rises as the length grows — in floating point too (see
    /// [`saturate`]), so the bound needs no margin. (A length is also at
    /// least the document's own frequency, but a bound that used that would
    /// rest on arithmetic that is only monotone in exact numbers.)
    fn upper_bound(&self, weight: f32, segment: &Segment, term: u32, tf_max: f32) -> f32 {
        if tf_max == 0.0 {
            return 0.0;
        }
        let len_min = doc_len(self.field_weights, segment.min_lens(term));
        saturate(weight, tf_max, self.norm(len_min))
    }

    /// The product of a document's recency, usage and association factors;
    /// the association is the strongest activation among its nodes.
    #[inline]
    pub fn factor(
        &self,
        segment: &Segment,
        doc: u32,
        record: &DocRecord<'_>,
        activation_by_node: &[f32],
    ) -> f32 {
        let (params, ranker) = (self.params, self.ranker);
        let mut factor = self.recency(record.recency);
        if ranker.usage && segment.any_usage() {
            let usage = segment.use_lin(doc);
            if usage > 0.0 {
                let usage = (usage * self.usage_now) as f32;
                // `usage / (1 + usage)` rounds to at most 1, so the term is
                // at most `max_factor`'s `1 + η` in floating point too.
                factor *= 1.0 + params.usage_weight * (usage / (1.0 + usage));
            }
        }
        if ranker.graph {
            let strongest = record
                .nodes
                .iter()
                .map(|&node| {
                    activation_by_node
                        .get(node as usize)
                        .copied()
                        .unwrap_or(0.0)
                })
                .fold(0.0, f32::max);
            factor *= 1.0 + params.graph_weight * strongest;
        }
        factor
    }

    /// The recency factor of anchored recency `recency` (1 when the ranker
    /// ignores recency). It never decreases as `recency` grows, so at the
    /// largest of a block, chunk or segment it bounds all of their documents.
    #[inline]
    pub fn recency(&self, recency: f64) -> f32 {
        let Some(power) = self.recency_power else {
            return 1.0;
        };
        let floor = self.params.recency_floor;
        // A fact observed after the request time counts as fresh.
        let decayed = (recency * self.recency_now).min(1.0);
        let decayed = if power == 1.0 {
            decayed
        } else {
            decayed.powf(power)
        };
        floor + (1.0 - floor) * decayed as f32
    }

    /// When the ranker multiplies no recency factor: the largest factor a
    /// document of the segment that list `term` reaches first can have
    /// ([`Plan::strongest_from`], and every untold node), with no margin.
    /// It multiplies the same terms in the same order as [`Plan::factor`],
    /// each at least the document's, so it is never below any such
    /// document's factor in floating point, and equal to that of a document
    /// with the largest of each. `None` with recency, whose `powf` is not
    /// promised to be monotone.
    pub fn exact_factor(&self, segment: &Segment, term: usize) -> Option<f32> {
        let untold = self.untold.iter().fold(0.0, |max, u| f32::max(max, u.1));
        self.recency_power
            .is_none()
            .then(|| self.held_factor(segment, term, untold))
    }

    /// [`Plan::exact_factor`] for a document that list `term` reaches first
    /// and that holds no untold node stronger than `held`.
    #[inline]
    pub fn held_factor(&self, segment: &Segment, term: usize, held: f32) -> f32 {
        self.max_factor(segment, self.strongest_from[term].max(held))
    }

    /// The largest factor a document of the segment can have, given the
    /// largest association activation it can have, recency aside.
    pub fn max_factor(&self, segment: &Segment, strongest_activation: f32) -> f32 {
        let (params, ranker) = (self.params, self.ranker);
        let mut factor = 1.0f32;
        if ranker.usage && segment.any_usage() {
            factor *= 1.0 + params.usage_weight;
        }
        if ranker.graph {
            factor *= 1.0 + params.graph_weight * strongest_activation;
        }
        factor
    }
}

/// `W · tf / (tf + K)`, written as `W / (1 + K / tf)` so that in floating
/// point it never decreases as `tf` grows and never increases as `K` grows:
/// `K / tf` rounds no lower for a smaller `tf` or a larger `K`, and adding 1
/// and dividing `W` by the sum each keep that order. (`W · tf / (tf + K)`
/// rounds its numerator and denominator apart, so a larger `tf` can come out
/// an ulp lower.) [`Plan::upper_bound`] and [`Plan::attainable`] rest on it.
#[inline]
fn saturate(weight: f32, tf: f32, norm: f32) -> f32 {
    weight / (1.0 + norm / tf)
}

#[cfg(test)]
mod tests {
    use super::saturate;
    use proptest::prelude::*;

    proptest! {
        /// What the bounds rest on: a larger (or equal) frequency never
        /// rounds to a smaller contribution, nor a larger normalization to a
        /// larger one, however close the two are.
        #[test]
        fn saturation_is_monotone_in_floating_point(
            weight in 0.01f32..100.0,
            norm in 0.0f32..1e4,
            tf in 0.01f32..2000.0,
            ulps in 0u32..4,
            wider in 0.0f32..10.0,
        ) {
            let next = f32::from_bits(tf.to_bits() + ulps);
            for larger in [next, next + wider] {
                prop_assert!(saturate(weight, tf, norm) <= saturate(weight, larger, norm));
            }
            let next = f32::from_bits(norm.to_bits() + ulps);
            for larger in [next, next + wider] {
                prop_assert!(saturate(weight, tf, norm) >= saturate(weight, tf, larger));
            }
        }
    }
}
