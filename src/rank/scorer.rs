//! The scorer: term-at-a-time BM25F over one corpus, segment by segment, with
//! the recency, usage and association factors applied per candidate, into a
//! bounded heap of the best `n`.
//!
//! Exhaustive: every document on a query term's posting list is scored. The
//! scaling issue adds dynamic pruning, which must return exactly this top-n.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::{Ranker, query_terms};
use crate::error::{Error, Result};
use crate::fact::{FactBody, FactId, name_key};
use crate::graph::NodeId;
use crate::index::IndexVersion;
use crate::index::segment::{FIELDS, TIME_ANCHOR, df_for_mask, half_lives};
use crate::text;
use crate::time::WallTime;

/// A shortlisted fact and its score.
#[derive(Clone, Debug)]
pub struct Scored {
    /// The fact.
    pub fact: FactId,
    /// Its score under the ranker.
    pub score: f32,
    /// Its content.
    pub body: Arc<FactBody>,
}

/// Reusable per-thread buffers, so a query allocates little.
#[derive(Debug, Default)]
pub struct Scratch {
    acc: Vec<f32>,
    assoc: Vec<f32>,
    touched: Vec<u32>,
    tids: Vec<u32>,
    weights: Vec<f32>,
    heap: BinaryHeap<Worst>,
}

/// Heap entry ordered so that the *worst* candidate is on top.
#[derive(Debug, PartialEq)]
struct Worst {
    score: f32,
    fact: FactId,
    view: u32,
    doc: u32,
}

impl Eq for Worst {}

impl Ord for Worst {
    fn cmp(&self, other: &Self) -> Ordering {
        // Better = higher score, then newer fact; the heap's max is the worst.
        other
            .score
            .total_cmp(&self.score)
            .then(other.fact.cmp(&self.fact))
    }
}

impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// What the scorer needs from a request.
#[derive(Clone, Copy, Debug)]
pub struct Query<'a> {
    /// The request's context (an unfinished message).
    pub context: &'a str,
    /// The request's participants.
    pub participants: &'a [String],
    /// The request's time (recency, usage).
    pub at: WallTime,
}

/// The best `n` facts for a query, best first (ties: newer fact first).
pub fn shortlist(
    version: &IndexVersion,
    query: Query<'_>,
    ranker: &Ranker,
    n: usize,
    scratch: &mut Scratch,
) -> Result<Vec<Scored>> {
    let corpus = if ranker.validity {
        &version.active
    } else {
        version.history.as_ref().ok_or(Error::NoHistoryIndex)?
    };
    let params = &version.params;
    let terms = query_terms(query.context, query.participants, ranker, params);
    let live = corpus.live_docs();
    if live == 0 || terms.is_empty() || n == 0 {
        return Ok(Vec::new());
    }
    let views = corpus.views();
    let nviews = views.len();
    let mask = ranker.field_mask();
    let (k1, b) = (params.k1, params.b);

    // Per term: its id in each segment and W = q · idf · (k1 + 1).
    scratch.tids.clear();
    scratch.weights.clear();
    for qt in &terms {
        let mut df = 0u32;
        for view in views {
            let tid = view.segment.term(&qt.term);
            if let Some(t) = tid {
                df += df_for_mask(&view.live_presence(t), mask);
            }
            scratch.tids.push(tid.unwrap_or(u32::MAX));
        }
        let w = if df == 0 {
            0.0
        } else {
            let (nf, dff) = (live as f64, f64::from(df));
            let idf = (1.0 + (nf - dff + 0.5) / (dff + 0.5)).ln();
            qt.weight * idf as f32 * (k1 + 1.0)
        };
        scratch.weights.push(w);
    }

    let alpha = ranker.field_weights;
    let sums = corpus.field_len_sums();
    let total: f64 = (0..FIELDS)
        .map(|i| f64::from(alpha[i]) * sums[i] as f64)
        .sum();
    let avgdl = if total > 0.0 {
        (total / live as f64) as f32
    } else {
        1.0
    };
    let a0 = k1 * (1.0 - b);
    let bcoef = k1 * b / avgdl;
    let activation = if ranker.graph {
        activation(version, &query, ranker)
    } else {
        Vec::new()
    };
    let eps = params.recency_floor;
    let (eta, gamma) = (params.usage_weight, params.graph_weight);
    let crec = (-half_lives(query.at, TIME_ANCHOR, params.recency_half_life_days)).exp2();
    let cuse = (-half_lives(query.at, TIME_ANCHOR, params.usage_half_life_days)).exp2();

    let Scratch {
        acc,
        assoc,
        touched,
        tids,
        weights,
        heap,
    } = scratch;
    heap.clear();
    for (vi, view) in views.iter().enumerate() {
        let seg = &*view.segment;
        if acc.len() < seg.len() {
            acc.resize(seg.len(), 0.0);
            assoc.resize(seg.len(), 0.0);
        }
        for (ti, &w) in weights.iter().enumerate() {
            let tid = tids[ti * nviews + vi];
            if tid == u32::MAX || w == 0.0 {
                continue;
            }
            for p in seg.postings(tid) {
                let tf = alpha[0] * f32::from(p.tf[0])
                    + alpha[1] * f32::from(p.tf[1])
                    + alpha[2] * f32::from(p.tf[2]);
                if tf == 0.0 {
                    continue;
                }
                let l = seg.lens(p.doc);
                let dl = alpha[0] * f32::from(l[0])
                    + alpha[1] * f32::from(l[1])
                    + alpha[2] * f32::from(l[2]);
                let c = w * tf / (tf + a0 + bcoef * dl);
                let a = &mut acc[p.doc as usize];
                if *a == 0.0 {
                    touched.push(p.doc);
                }
                *a += c;
            }
        }
        if touched.is_empty() {
            continue;
        }
        for &(node, act) in &activation {
            for &d in seg.node_postings(node) {
                let d = d as usize;
                if acc[d] > 0.0 && assoc[d] < act {
                    assoc[d] = act;
                }
            }
        }
        let (rec, use_lin) = (seg.rec(), seg.use_lin());
        for &d in touched.iter() {
            let di = d as usize;
            let mut score = acc[di];
            let a = assoc[di];
            acc[di] = 0.0;
            assoc[di] = 0.0;
            if view.deletes.contains(d) {
                continue;
            }
            if ranker.recency {
                // A fact observed after the request time counts as fresh.
                let r = (rec[di] * crec).min(1.0) as f32;
                score *= eps + (1.0 - eps) * r;
            }
            if ranker.usage && use_lin[di] > 0.0 {
                let u = (use_lin[di] * cuse) as f32;
                score *= 1.0 + eta * u / (1.0 + u);
            }
            if ranker.graph {
                score *= 1.0 + gamma * a;
            }
            let entry = Worst {
                score,
                fact: seg.fact_id(d),
                view: vi as u32,
                doc: d,
            };
            if heap.len() < n {
                heap.push(entry);
            } else if heap.peek().is_some_and(|worst| entry < *worst) {
                heap.pop();
                heap.push(entry);
            }
        }
        touched.clear();
    }
    let mut out: Vec<Scored> = heap
        .drain()
        .map(|w| Scored {
            fact: w.fact,
            score: w.score,
            body: views[w.view as usize].segment.body(w.doc).clone(),
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.fact.cmp(&a.fact)));
    Ok(out)
}

/// One hop of spreading activation from the request's seeds: entities named
/// in the context (activation 1) and, if enabled, the participants (1).
/// Each seed passes `ρ · w / w_max` to its published neighbours; the
/// `non_seed_nodes` most activated non-seeds join the seeds. Activations are
/// capped at 1.
fn activation(version: &IndexVersion, query: &Query<'_>, ranker: &Ranker) -> Vec<(NodeId, f32)> {
    let params = &version.params;
    let graph = &version.graph;
    let participants: Vec<std::sync::Arc<str>> = query
        .participants
        .iter()
        .map(|p| std::sync::Arc::from(name_key(p)))
        .collect();
    let norm = text::normalize(query.context);
    let toks: Vec<&str> = text::tokens(&norm).collect();
    let mut seeds: Vec<NodeId> = version
        .gazetteer
        .mentions(&toks, &participants)
        .iter()
        .filter_map(|m| graph.node(&m.entity))
        .collect();
    if ranker.participant_seeds && params.participant_seeds {
        seeds.extend(participants.iter().filter_map(|p| graph.node(p)));
    }
    seeds.sort_unstable();
    seeds.dedup();
    let mut spread: FxHashMap<NodeId, f32> = FxHashMap::default();
    for &s in &seeds {
        let list = graph.neighbours(s);
        let Some(&(_, max)) = list.first() else {
            continue;
        };
        for &(v, w) in list {
            if seeds.binary_search(&v).is_err() {
                *spread.entry(v).or_insert(0.0) += params.damping * (w / max) as f32;
            }
        }
    }
    let mut spread: Vec<(NodeId, f32)> = spread.into_iter().collect();
    spread.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    spread.truncate(params.non_seed_nodes);
    seeds
        .into_iter()
        .map(|s| (s, 1.0))
        .chain(spread.into_iter().map(|(v, a)| (v, a.min(1.0))))
        .collect()
}
