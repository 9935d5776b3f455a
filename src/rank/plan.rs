//! A query's plan: everything about it that is the same for every segment
//! (term weights, BM25F constants, the factors' time terms, the graph
//! activation), and the per-document arithmetic of the score — one function
//! per term of `BM25F · R · (1 + η U/(1+U)) · (1 + γ A)`, shared by the
//! pruned and the exhaustive walk so both compute bit-identical scores.

use super::Ranker;
use super::cursor::{CursorGrid, TermCursor};
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
    /// Activated graph nodes and their activation.
    pub activation: Vec<(NodeId, f32)>,
    /// `2^-((t - A) / T_rec)`: times a document's anchored recency, its decay.
    pub recency_now: f64,
    /// The exponent on that decay (see [`super::Recency`]); `None`: no
    /// recency factor.
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
                TermCursor::new(
                    segment,
                    id,
                    self.upper_bound(self.weights[term], segment, id),
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

    /// A term of weight `weight`'s BM25F contribution to a document where it
    /// has per-field frequencies `tf` (0 when the ranker ignores those
    /// fields).
    #[inline]
    pub fn contribution(&self, weight: f32, segment: &Segment, doc: u32, tf: [u8; FIELDS]) -> f32 {
        let tf = self.merged_tf(tf);
        if tf == 0.0 {
            return 0.0;
        }
        weight * tf / (tf + self.norm_base + self.norm_per_len * self.doc_len(segment, doc))
    }

    /// Largest contribution a term can make in a segment. `tf / (tf +
    /// norm_base + norm_per_len · dl)` grows with `tf` and shrinks with `dl`;
    /// every document of the term has `tf <= tf_max` and a length of at
    /// least both its merged frequency and the term's smallest field lengths.
    fn upper_bound(&self, weight: f32, segment: &Segment, term: u32) -> f32 {
        let tf_max = merged_tf(self.field_weights, segment.max_tf(term));
        if tf_max == 0.0 {
            return 0.0;
        }
        let len_min = doc_len(self.field_weights, segment.min_lens(term)).max(tf_max);
        weight * tf_max / (tf_max + self.norm_base + self.norm_per_len * len_min)
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
            let usage = segment.use_lin()[doc as usize];
            if usage > 0.0 {
                let usage = (usage * self.usage_now) as f32;
                factor *= 1.0 + params.usage_weight * usage / (1.0 + usage);
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
        let Some(power) = self.recency_power.filter(|_| self.ranker.recency) else {
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
