//! The scorer: term-at-a-time BM25F over one corpus, segment by segment,
//! times the recency, usage and association factors, into a bounded buffer of
//! the best `n`.
//!
//! # Exact pruning (MaxScore, completed from forward data)
//! Query terms are processed in descending weight, across every segment at
//! once. The first (rarest) list adds its contribution to the documents on
//! it, the candidates. Before the next list, the scorer completes them: it
//! reads each one's record (recency, graph nodes, and its terms with their
//! frequencies — the segment's forward index), adds the remaining terms from
//! it, multiplies the factor, and offers the final score to the top-n. From
//! then on every candidate is complete, so each later list is streamed
//! (`stream`): a document not seen yet is bounded as it is read — the term's
//! upper bound, the remaining terms where their bitmaps allow, times the
//! largest factor at its block's recency — and dropped below the cutoff or
//! finished at once, newest first, so the cutoff rises as the list is read;
//! a chunk of 128 postings whose newest document cannot reach the cutoff is
//! skipped unread.
//! Once no unseen document of a segment can reach the cutoff even with every
//! remaining term at its upper bound (`W · tf_max / (tf_max (1 + k1 b /
//! avgdl) + k1 (1 - b))` per term, times the largest factor), that segment's
//! lists are no longer read: the common terms' long lists usually never are.
//!
//! Facts are short, so a record is a cache line or two: finishing a
//! candidate costs about one cache miss, where walking or galloping through
//! the remaining long lists costs a pass per list. When the first list's
//! candidates are completed with no cutoff yet, a first pass bounds them all
//! without their records and the best bounds are finished first, their
//! records prefetched, to set a cutoff close to the final one; stores whose
//! records fit in cache skip that and finish candidates in one pass.
//!
//! Every document adds its term contributions in the same order
//! (descending weight, then term) whether pruned or not, and its factor is
//! computed by one function, so the pruned top-n is bit-identical to the
//! exhaustive one; `prop_pruned_equals_exhaustive` in `tests/prop_rank.rs`
//! checks it. Bounds carry a small relative margin against rounding.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::topn::{Entry, TopN};
use super::{QueryTerm, Ranker, normalized_query_terms};
use crate::config::ScoreParams;
use crate::error::{Error, Result};
use crate::fact::{FactBody, FactId, name_key};
use crate::graph::NodeId;
use crate::index::segment::{
    CHUNK, DocView, FIELDS, Segment, TIME_ANCHOR, df_for_mask, doc_len, for_each_term, half_lives,
    merged_tf,
};
use crate::index::{IndexVersion, SegmentView};
use crate::text;
use crate::time::WallTime;

/// Relative slack on every pruning bound, far above f32 rounding error.
const MARGIN: f32 = 1e-4;

/// Records up to this many bytes in all are taken to stay in cache.
const RESIDENT_BYTES: usize = 512 << 10;

/// How many candidates ahead [`Plan::complete`] prefetches records.
const PREFETCH: usize = 8;

/// `acc` of a candidate already scored in full (contributions are positive).
const DONE: f32 = -1.0;

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

/// How much of the posting lists to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Skip what provably cannot reach the top-n (the default).
    Pruned,
    /// Score every posting: the slow twin the tests compare against.
    Exhaustive,
}

/// Reusable per-thread buffers, so a query allocates little.
#[derive(Debug, Default)]
pub struct Scratch {
    /// Partial BM25F per global document (`base + local`).
    acc: Vec<f32>,
    /// Activation per graph node (set for this query's activated nodes only).
    node_act: Vec<f32>,
    /// Documents with a non-zero `acc`, as (view, local document).
    touched: Vec<(u32, u32)>,
    /// Per term and view (`t * nviews + v`): what the term is there.
    terms: Vec<TermInView>,
    /// Per view: the factor's bound without recency (with margin), the
    /// same with the segment's newest recency, and whether its lists are
    /// still read.
    views: Vec<ViewBound>,
    /// Candidates between the two passes of `complete`.
    pending: Vec<Pending>,
    /// Complete documents of one view, for `stream`.
    seen: Vec<u32>,
    /// Whether the records of this query's segments fit in cache, so that
    /// `complete` finishes candidates in one pass.
    resident: bool,
    /// Overrides [`RESIDENT_BYTES`] (see [`Scratch::set_resident_limit`]).
    resident_limit: Option<usize>,
    /// The best documents so far.
    top: TopN,
}

impl Scratch {
    /// Treats segments whose records total at most `bytes` as cache-resident
    /// (finished in one pass; the default is 512 KiB). Both paths return the
    /// same results: tests set 0 to check the two-pass path on small stores.
    pub fn set_resident_limit(&mut self, bytes: usize) {
        self.resident_limit = Some(bytes);
    }
}

/// Lets the owner of a running query ask it to stop (fresh mode's cancel
/// flag). The scorer checks it before scoring and between query terms.
pub trait Cancel {
    /// Whether the query should stop now.
    fn is_cancelled(&self) -> bool;
}

/// What the scorer needs from a request.
#[derive(Clone, Copy)]
pub struct Query<'a> {
    /// The request's context (an unfinished message).
    pub context: &'a str,
    /// The request's participants.
    pub participants: &'a [String],
    /// The request's time (recency, usage).
    pub at: WallTime,
    /// Checked before scoring and between query terms; a cancelled query
    /// returns [`Error::Cancelled`].
    pub cancel: Option<&'a dyn Cancel>,
}

impl std::fmt::Debug for Query<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Query")
            .field("context", &self.context)
            .field("participants", &self.participants)
            .field("at", &self.at)
            .field("cancellable", &self.cancel.is_some())
            .finish()
    }
}

/// Everything about a query that is the same for every segment.
struct Plan<'a> {
    ranker: &'a Ranker,
    params: &'a ScoreParams,
    /// `W = q · idf · (k1 + 1)` per term, in processing order (descending).
    weights: Vec<f32>,
    /// Term id of term `t` in view `v` at `t * nviews + v` (`u32::MAX`: absent).
    tids: Vec<u32>,
    alpha: [f32; FIELDS],
    /// Merged term frequencies of small per-field counts, by `tf0 + 4 tf1 + 16 tf2`.
    tf_table: [f32; 64],
    stored_dl: bool,
    a0: f32,
    bcoef: f32,
    activation: Vec<(NodeId, f32)>,
    crec: f64,
    cuse: f64,
    /// How many to keep.
    n: usize,
    strategy: Strategy,
    cancel: Option<&'a dyn Cancel>,
}

/// The best `n` facts for a query, best first (ties: newer fact first).
pub fn shortlist(
    version: &IndexVersion,
    query: Query<'_>,
    ranker: &Ranker,
    n: usize,
    scratch: &mut Scratch,
) -> Result<Vec<Scored>> {
    shortlist_with(version, query, ranker, n, Strategy::Pruned, scratch)
}

/// [`shortlist`] with an explicit strategy.
pub fn shortlist_with(
    version: &IndexVersion,
    query: Query<'_>,
    ranker: &Ranker,
    n: usize,
    strategy: Strategy,
    scratch: &mut Scratch,
) -> Result<Vec<Scored>> {
    let corpus = if ranker.validity {
        &version.active
    } else {
        version.history.as_ref().ok_or(Error::NoHistoryIndex)?
    };
    let params = &version.params;
    let norm = text::normalize(query.context);
    let terms = normalized_query_terms(&norm, query.participants, ranker, params);
    let live = corpus.live_docs();
    if live == 0 || terms.is_empty() || n == 0 {
        return Ok(Vec::new());
    }
    let views = corpus.views();
    let alpha = ranker.weights(params);
    let mask = ranker.field_mask(params);
    let (k1, b) = (params.k1, params.b);
    let sums = corpus.field_len_sums();
    let total: f64 = (0..FIELDS)
        .map(|i| f64::from(alpha[i]) * sums[i] as f64)
        .sum();
    let avgdl = if total > 0.0 {
        (total / live as f64) as f32
    } else {
        1.0
    };

    // Per term: its id in each segment (looked up once), then W from the exact
    // live document frequency; heaviest terms first.
    let mut weighted: Vec<(f32, &str, Vec<u32>)> = Vec::with_capacity(terms.len());
    for qt in &terms {
        let tids: Vec<u32> = views
            .iter()
            .map(|v| v.segment.term(&qt.term).unwrap_or(u32::MAX))
            .collect();
        let df: u32 = views
            .iter()
            .zip(&tids)
            .filter(|(_, t)| **t != u32::MAX)
            .map(|(v, t)| df_for_mask(&v.live_presence(*t), mask))
            .sum();
        if df > 0 {
            let (nf, dff) = (live as f64, f64::from(df));
            let idf = (1.0 + (nf - dff + 0.5) / (dff + 0.5)).ln();
            weighted.push((qt.weight * idf as f32 * (k1 + 1.0), &qt.term, tids));
        }
    }
    weighted.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));

    let plan = Plan {
        ranker,
        params,
        weights: weighted.iter().map(|w| w.0).collect(),
        tids: weighted.iter().flat_map(|w| w.2.iter().copied()).collect(),
        alpha,
        tf_table: std::array::from_fn(|i| {
            merged_tf(alpha, [(i % 4) as u8, (i / 4 % 4) as u8, (i / 16) as u8])
        }),
        stored_dl: alpha == params.field_weights,
        a0: k1 * (1.0 - b),
        bcoef: k1 * b / avgdl,
        activation: if ranker.graph {
            activation(version, &norm, query.participants, ranker)
        } else {
            Vec::new()
        },
        crec: (-half_lives(query.at, TIME_ANCHOR, params.recency_half_life_days)).exp2(),
        cuse: (-half_lives(query.at, TIME_ANCHOR, params.usage_half_life_days)).exp2(),
        n,
        strategy,
        cancel: query.cancel,
    };
    scratch.top.reset(n);
    for &(node, act) in &plan.activation {
        let i = node as usize;
        if scratch.node_act.len() <= i {
            scratch.node_act.resize(i + 1, 0.0);
        }
        scratch.node_act[i] = act;
    }
    plan.score(views, scratch);
    for &(node, _) in &plan.activation {
        scratch.node_act[node as usize] = 0.0;
    }
    if plan.cancelled() {
        scratch.top.reset(0);
        return Err(Error::Cancelled);
    }
    Ok(scratch
        .top
        .finish()
        .map(|e| Scored {
            fact: e.fact,
            score: e.score,
            body: views[e.view as usize].segment.body(e.doc).clone(),
        })
        .collect())
}

/// Document frequencies of one version, each looked up once (a lookup
/// probes every segment's dictionary). Clear it when the version changes.
#[derive(Debug, Default)]
pub struct DfMemo(FxHashMap<(String, bool, usize), u32>);

impl DfMemo {
    fn df(
        &mut self,
        corpus: &crate::index::Corpus,
        validity: bool,
        term: &str,
        mask: usize,
    ) -> u32 {
        if let Some(&df) = self.0.get(&(term.to_owned(), validity, mask)) {
            return df;
        }
        let df = corpus.df(term, mask);
        self.0.insert((term.to_owned(), validity, mask), df);
        df
    }

    /// Forgets every frequency (a new version).
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// An upper bound on the score `body` can get under `ranker` for a query
/// with `terms` in `version`: a shared term contributes less than its
/// weight `W = q · idf · (k1 + 1)` (BM25's saturation stays below 1), and
/// the factors are at most `(1 + usage weight)(1 + graph weight)` (recency is
/// at most 1). Zero when no term is shared. Lets the snapshot publisher skip
/// contexts a change cannot reach.
pub fn score_bound(
    version: &IndexVersion,
    terms: &[QueryTerm],
    ranker: &Ranker,
    body: &FactBody,
    memo: &mut DfMemo,
) -> f32 {
    let corpus = if ranker.validity {
        &version.active
    } else {
        match &version.history {
            Some(h) => h,
            None => return f32::INFINITY,
        }
    };
    let params = &version.params;
    let mask = ranker.field_mask(params);
    let n = corpus.live_docs().max(1) as f64;
    let mut sum = 0.0f32;
    let mut seen: Vec<&str> = Vec::new();
    for_each_term(body, |term, _| {
        if let Some(qt) = terms.iter().find(|q| q.term == term)
            && !seen.contains(&qt.term.as_str())
        {
            seen.push(&qt.term);
            let df = f64::from(memo.df(corpus, ranker.validity, term, mask).max(1));
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            sum += qt.weight * idf as f32 * (params.k1 + 1.0);
        }
    });
    let mut factor = 1.0f32;
    if ranker.usage {
        factor *= 1.0 + params.usage_weight;
    }
    if ranker.graph {
        factor *= 1.0 + params.graph_weight;
    }
    sum * factor * (1.0 + MARGIN)
}

impl Plan<'_> {
    #[inline]
    fn cancelled(&self) -> bool {
        self.cancel.is_some_and(Cancel::is_cancelled)
    }

    #[inline]
    fn tf(&self, tf: [u8; FIELDS]) -> f32 {
        let [t0, t1, t2] = tf;
        if (t0 | t1 | t2) < 4 {
            self.tf_table[usize::from(t0) + 4 * usize::from(t1) + 16 * usize::from(t2)]
        } else {
            merged_tf(self.alpha, tf)
        }
    }

    #[inline]
    fn len(&self, seg: &Segment, doc: u32) -> f32 {
        if self.stored_dl {
            seg.dl()[doc as usize]
        } else {
            doc_len(self.alpha, seg.lens(doc))
        }
    }

    /// A term's BM25F contribution to a document where it has per-field
    /// frequencies `tf` (0 when the ranker ignores those fields).
    #[inline]
    fn contribution(&self, w: f32, seg: &Segment, doc: u32, tf: [u8; FIELDS]) -> f32 {
        let tf = self.tf(tf);
        if tf == 0.0 {
            return 0.0;
        }
        w * tf / (tf + self.a0 + self.bcoef * self.len(seg, doc))
    }

    /// Largest contribution a term can make in a segment. `tf / (tf + a0 +
    /// bcoef · dl)` grows with `tf` and shrinks with `dl`; every document of
    /// the term has `tf <= tf_max` and a length of at least both its merged
    /// frequency and the term's smallest field lengths.
    fn upper_bound(&self, w: f32, seg: &Segment, tid: u32) -> f32 {
        let t = merged_tf(self.alpha, seg.max_tf(tid));
        if t == 0.0 {
            return 0.0;
        }
        let dl_min = doc_len(self.alpha, seg.min_lens(tid)).max(t);
        w * t / (t + self.a0 + self.bcoef * dl_min)
    }

    /// The product of a document's recency, usage and association factors;
    /// the association is the strongest activation among its nodes.
    #[inline]
    fn factor(&self, seg: &Segment, d: u32, doc: &DocView<'_>, node_act: &[f32]) -> f32 {
        let (p, r) = (self.params, self.ranker);
        let mut f = self.recency(doc.rec);
        if r.usage && seg.any_usage() {
            let u = seg.use_lin()[d as usize];
            if u > 0.0 {
                let u = (u * self.cuse) as f32;
                f *= 1.0 + p.usage_weight * u / (1.0 + u);
            }
        }
        if r.graph {
            let a = doc
                .nodes
                .iter()
                .map(|&n| node_act.get(n as usize).copied().unwrap_or(0.0))
                .fold(0.0, f32::max);
            f *= 1.0 + p.graph_weight * a;
        }
        f
    }

    /// The recency factor of anchored recency `rec` (1 when the ranker
    /// ignores recency). It never decreases as `rec` grows, so at the
    /// largest `rec` of a block or segment it bounds all of their documents.
    #[inline]
    fn recency(&self, rec: f64) -> f32 {
        if !self.ranker.recency {
            return 1.0;
        }
        let p = self.params;
        // A fact observed after the request time counts as fresh.
        let rec = (rec * self.crec).min(1.0) as f32;
        p.recency_floor + (1.0 - p.recency_floor) * rec
    }

    /// The largest factor a document of the segment can have, given the
    /// largest association activation it can have, recency aside.
    fn max_factor(&self, seg: &Segment, amax: f32) -> f32 {
        let (p, r) = (self.params, self.ranker);
        let mut f = 1.0f32;
        if r.usage && seg.any_usage() {
            f *= 1.0 + p.usage_weight;
        }
        if r.graph {
            f *= 1.0 + p.graph_weight * amax;
        }
        f
    }

    /// Scores every segment term by term: each term's lists in all the
    /// segments still open, so that the candidates of every segment count
    /// towards the first cutoff (a segment alone may have too few).
    fn score(&self, views: &[SegmentView], s: &mut Scratch) {
        let (nterms, nviews) = (self.weights.len(), views.len());
        let total = views
            .last()
            .map_or(0, |v| v.base as usize + v.segment.len());
        if s.acc.len() < total {
            s.acc.resize(total, 0.0);
        }
        s.terms.clear();
        for t in 0..nterms {
            for (vi, view) in views.iter().enumerate() {
                let seg = &*view.segment;
                s.terms.push(match self.tids[t * nviews + vi] {
                    u32::MAX => TermInView::ABSENT,
                    id => TermInView {
                        tid: id,
                        ub: self.upper_bound(self.weights[t], seg, id),
                        bitmap: seg.bitmap_at(id).unwrap_or(usize::MAX),
                    },
                });
            }
        }
        s.resident = views
            .iter()
            .map(|v| v.segment.record_bytes())
            .sum::<usize>()
            <= s.resident_limit.unwrap_or(RESIDENT_BYTES);
        let amax = self.activation.iter().map(|a| a.1).fold(0.0, f32::max);
        s.views.clear();
        s.views.extend(views.iter().map(|view| {
            let fbase = self.max_factor(&view.segment, amax) * (1.0 + MARGIN);
            ViewBound {
                fbase,
                fmax: fbase * self.recency(view.segment.max_rec()),
                open: true,
            }
        }));

        // touched[..done] are complete: scored in full, offered, and marked
        // DONE in `acc` so that later lists pass them by.
        let mut done = 0;
        for t in 0..nterms {
            if self.cancelled() {
                break;
            }
            let row = &s.terms[t * nviews..(t + 1) * nviews];
            let len: usize = views
                .iter()
                .zip(row)
                .zip(&s.views)
                .filter(|(_, b)| b.open)
                .map(|((v, ti), _)| ti.postings(&v.segment).len())
                .sum();
            if self.strategy == Strategy::Pruned && t > 0 && len > s.touched.len() - done {
                // Completing the pending candidates costs less than the
                // lists; their final scores may then rule out every document
                // the lists would add, segment by segment.
                self.complete(views, t, s, done);
                done = s.touched.len();
                if let Some(c) = s.top.cutoff() {
                    for (vi, b) in s.views.iter_mut().enumerate() {
                        let rest = rest_bound(&s.terms, t..nterms, nviews, vi, |_| true);
                        b.open &= rest * b.fmax >= c;
                    }
                    if s.views.iter().all(|b| !b.open) {
                        break;
                    }
                }
            }
            if self.strategy == Strategy::Pruned && t > 0 && done == s.touched.len() {
                self.stream(views, t, s);
                done = s.touched.len();
                continue;
            }
            let w = self.weights[t];
            for (vi, view) in views.iter().enumerate() {
                if !s.views[vi].open {
                    continue;
                }
                let seg = &*view.segment;
                let acc = &mut s.acc[view.base as usize..];
                for p in s.terms[t * nviews + vi].postings(seg) {
                    let a = &mut acc[p.doc as usize];
                    if *a == DONE {
                        continue;
                    }
                    let c = self.contribution(w, seg, p.doc, p.tf);
                    if c == 0.0 {
                        continue;
                    }
                    if *a == 0.0 {
                        s.touched.push((vi as u32, p.doc));
                    }
                    *a += c;
                }
            }
        }
        if !self.cancelled() {
            self.complete(views, nterms, s, done);
        }
        for &(vi, d) in &s.touched {
            s.acc[views[vi as usize].base as usize + d as usize] = 0.0;
        }
        s.touched.clear();
    }

    /// Scores the candidates `touched[start..]` in full and offers them.
    /// Each has accumulated terms `..from`; terms `from..` come from its
    /// record, added in term order as the exhaustive walk adds them, so the
    /// score is bit-identical.
    ///
    /// Records are cache misses, so a first pass bounds every candidate
    /// without one: terms `from..` add at most their upper bounds, except
    /// dense terms whose bitmap says the document lacks them, and the factor
    /// is at most the segment's `fbase` (everything but recency, with
    /// margin) times the recency of the newest document of its block.
    /// Candidates below the cutoff go no further. If there is no cutoff yet,
    /// the `n` best bounds go first, so that the cutoff they set is close to
    /// the final one. The second pass reads the records of those still above
    /// the cutoff (prefetched a few ahead, so that the misses overlap),
    /// checks the bound again with the exact factor, and completes the rest.
    /// When every record fits in cache (small stores), a read costs less
    /// than holding candidates for a second pass: each is finished at once.
    fn complete(&self, views: &[SegmentView], from: usize, s: &mut Scratch, start: usize) {
        let pruned = self.strategy == Strategy::Pruned;
        let (nterms, nviews) = (self.weights.len(), views.len());
        let mut pending = std::mem::take(&mut s.pending);
        pending.clear();
        let cutoff = s.top.cutoff().filter(|_| pruned);
        // Newest first: with recency, they are likelier to stay.
        for i in (start..s.touched.len()).rev() {
            let (vi, d) = s.touched[i];
            let view = &views[vi as usize];
            let acc = std::mem::replace(&mut s.acc[view.base as usize + d as usize], DONE);
            if view.deletes.contains(d) {
                continue;
            }
            let seg = &*view.segment;
            let rest = rest_bound(&s.terms, from..nterms, nviews, vi as usize, |at| {
                seg.bit(at, d)
            });
            let bound = (acc + rest) * s.views[vi as usize].fbase * self.recency(seg.block_rec(d));
            let p = Pending {
                view: vi,
                doc: d,
                acc,
                rest,
                bound,
            };
            if s.resident {
                // Records in cache cost little: finish at once, against the
                // cutoff as it rises.
                let cutoff = s.top.cutoff().filter(|_| pruned);
                if !cutoff.is_some_and(|c| bound < c) {
                    self.finish(views, from, p, cutoff, s);
                }
            } else if !cutoff.is_some_and(|c| bound < c) {
                pending.push(p);
            }
        }
        if pruned && cutoff.is_none() && pending.len() > self.n {
            pending.select_nth_unstable_by(self.n - 1, |a, b| b.bound.total_cmp(&a.bound));
        }
        for j in 0..pending.len() {
            let cutoff = s.top.cutoff().filter(|_| pruned);
            if let Some(ahead) = pending.get(j + PREFETCH)
                && !cutoff.is_some_and(|c| ahead.bound < c)
            {
                views[ahead.view as usize].segment.prefetch(ahead.doc);
            }
            let p = pending[j];
            if cutoff.is_some_and(|c| p.bound < c) {
                continue;
            }
            self.finish(views, from, p, cutoff, s);
        }
        s.pending = pending;
    }

    /// Term `t`'s lists when every candidate so far is complete: each new
    /// document is bounded as it is read — the term's upper bound, the
    /// remaining terms its bitmaps allow, the factor at its block's recency —
    /// and either dropped (below the cutoff) or finished at once, newest
    /// first, so that the cutoff rises as the list is read and no document
    /// of the list waits as a candidate. A dropped document that a later list
    /// reaches again only gets a partial score below the cutoff it already
    /// missed, which the top-n turns away.
    fn stream(&self, views: &[SegmentView], t: usize, s: &mut Scratch) {
        let (nterms, nviews) = (self.weights.len(), views.len());
        for (vi, view) in views.iter().enumerate().rev() {
            let ti = s.terms[t * nviews + vi];
            if !s.views[vi].open || ti.tid == u32::MAX {
                continue;
            }
            let seg = &*view.segment;
            let fbase = s.views[vi].fbase;
            // The documents of this view already complete (few: the rare
            // lists' candidates), descending, walked beside the list instead
            // of a scattered read of `acc` per posting.
            s.seen.clear();
            s.seen
                .extend(s.touched.iter().filter(|e| e.0 == vi as u32).map(|e| e.1));
            s.seen.sort_unstable_by(|a, b| b.cmp(a));
            let rest_all = rest_bound(&s.terms, t + 1..nterms, nviews, vi, |_| true);
            let mut k = 0;
            let (list, start) = (seg.postings(ti.tid), seg.postings_start(ti.tid));
            let mut j = list.len();
            let mut chunk = usize::MAX;
            while j > 0 {
                j -= 1;
                // A whole chunk of postings whose newest document cannot
                // reach the cutoff, even with every term, is skipped unread.
                if (start + j) / CHUNK != chunk {
                    chunk = (start + j) / CHUNK;
                    let top = (ti.ub + rest_all) * fbase * self.recency(seg.chunk_rec(chunk));
                    if s.top.cutoff().is_some_and(|c| top < c) {
                        j = (chunk * CHUNK).max(start) - start;
                        continue;
                    }
                }
                let p = list[j];
                while k < s.seen.len() && s.seen[k] > p.doc {
                    k += 1;
                }
                if s.seen.get(k) == Some(&p.doc) || view.deletes.contains(p.doc) {
                    continue;
                }
                let g = view.base as usize + p.doc as usize;
                let cutoff = s.top.cutoff();
                // Recency alone often rules a document out: test that before
                // the bitmaps.
                let fbound = fbase * self.recency(seg.block_rec(p.doc));
                if cutoff.is_some_and(|c| (ti.ub + rest_all) * fbound < c) {
                    continue;
                }
                let rest = rest_bound(&s.terms, t + 1..nterms, nviews, vi, |at| seg.bit(at, p.doc));
                let bound = (ti.ub + rest) * fbound;
                if cutoff.is_some_and(|c| bound < c) {
                    continue;
                }
                let c = self.contribution(self.weights[t], seg, p.doc, p.tf);
                if c == 0.0 {
                    continue;
                }
                s.acc[g] = DONE;
                s.touched.push((vi as u32, p.doc));
                let p = Pending {
                    view: vi as u32,
                    doc: p.doc,
                    acc: c,
                    rest,
                    bound,
                };
                self.finish(views, t + 1, p, cutoff, s);
            }
        }
    }

    /// Reads a candidate's record and, unless its exact factor rules it out,
    /// completes its score (terms `from..` from the record) and offers it.
    fn finish(
        &self,
        views: &[SegmentView],
        from: usize,
        p: Pending,
        cutoff: Option<f32>,
        s: &mut Scratch,
    ) {
        let (nterms, nviews) = (self.weights.len(), views.len());
        let vi = p.view as usize;
        let seg = &*views[vi].segment;
        let doc = seg.doc(p.doc);
        let f = self.factor(seg, p.doc, &doc, &s.node_act);
        if cutoff.is_some_and(|c| (p.acc + p.rest) * f * (1.0 + MARGIN) < c) {
            return;
        }
        let mut score = p.acc;
        for t in from..nterms {
            let ti = &s.terms[t * nviews + vi];
            if ti.tid != u32::MAX
                && let Some(tf) = doc.tf(ti.tid)
            {
                score += self.contribution(self.weights[t], seg, p.doc, tf);
            }
        }
        offer(&mut s.top, seg, vi, p.doc, score * f);
    }
}

/// The most terms `range` can add to a document of view `vi`: their upper
/// bounds, less those of dense terms whose bitmap (`has` tests a bitmap
/// start) says the document lacks them.
#[inline]
fn rest_bound(
    terms: &[TermInView],
    range: std::ops::Range<usize>,
    nviews: usize,
    vi: usize,
    has: impl Fn(usize) -> bool,
) -> f32 {
    range
        .map(|t| &terms[t * nviews + vi])
        .filter(|ti| ti.bitmap == usize::MAX || has(ti.bitmap))
        .map(|ti| ti.ub)
        .sum()
}

/// A query term as one segment sees it.
#[derive(Clone, Copy, Debug)]
struct TermInView {
    /// Its id there (`u32::MAX`: absent).
    tid: u32,
    /// The most it adds to one document there (0 when absent).
    ub: f32,
    /// Where its bitmap starts (`usize::MAX`: none, or absent).
    bitmap: usize,
}

impl TermInView {
    const ABSENT: TermInView = TermInView {
        tid: u32::MAX,
        ub: 0.0,
        bitmap: usize::MAX,
    };

    fn postings<'a>(&self, seg: &'a Segment) -> &'a [crate::index::Posting] {
        match self.tid {
            u32::MAX => &[],
            id => seg.postings(id),
        }
    }
}

/// Per segment view, for one query.
#[derive(Clone, Copy, Debug)]
struct ViewBound {
    /// The largest factor recency aside, with margin.
    fbase: f32,
    /// The largest factor, with margin.
    fmax: f32,
    /// Whether its lists are still read (false once no unseen document of
    /// the segment can reach the cutoff).
    open: bool,
}

/// A candidate between the two passes of [`Plan::complete`].
#[derive(Clone, Copy, Debug)]
struct Pending {
    /// Its segment view.
    view: u32,
    /// Local document id.
    doc: u32,
    /// Its accumulated partial score.
    acc: f32,
    /// The most the remaining terms can add to it.
    rest: f32,
    /// The most its final score can be.
    bound: f32,
}

/// Offers document `d` of view `vi` with its final score.
#[inline]
fn offer(top: &mut TopN, seg: &Segment, vi: usize, d: u32, score: f32) {
    // Most offers fall below the cutoff: reject them before reading the fact
    // id, a cache miss of its own (the id only breaks ties).
    if top.cutoff().is_some_and(|c| score < c) {
        return;
    }
    top.offer(Entry {
        score,
        fact: seg.fact_id(d),
        view: vi as u32,
        doc: d,
    });
}

/// One hop of spreading activation from the request's seeds: entities named
/// in the context (activation 1) and, if enabled, the participants (1).
/// Each seed passes `ρ · w / w_max` to its published neighbours; the
/// `non_seed_nodes` most activated non-seeds join the seeds. Activations are
/// capped at 1.
fn activation(
    version: &IndexVersion,
    norm: &str,
    participants: &[String],
    ranker: &Ranker,
) -> Vec<(NodeId, f32)> {
    let params = &version.params;
    let graph = &version.graph;
    let participants: Vec<std::sync::Arc<str>> = participants
        .iter()
        .map(|p| std::sync::Arc::from(name_key(p)))
        .collect();
    let toks: Vec<&str> = text::tokens(norm).collect();
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
    // Sized once: growing a map is most of this function's cost.
    let reach = seeds.iter().map(|&s| graph.neighbours(s).len()).sum();
    let mut spread: FxHashMap<NodeId, f32> =
        FxHashMap::with_capacity_and_hasher(reach, Default::default());
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
    // The `non_seed_nodes` strongest (ties: lower node first), without
    // sorting the whole spread: a total order, so the same set and order.
    let order = |a: &(NodeId, f32), b: &(NodeId, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    let keep = params.non_seed_nodes;
    if keep > 0 && spread.len() > keep {
        spread.select_nth_unstable_by(keep - 1, order);
    }
    spread.truncate(keep);
    spread.sort_by(order);
    seeds
        .into_iter()
        .map(|s| (s, 1.0))
        .chain(spread.into_iter().map(|(v, a)| (v, a.min(1.0))))
        .collect()
}
