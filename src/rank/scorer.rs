//! The scorer's interface: a query, its shortlist of the best `n` facts
//! under a [`Ranker`], the per-thread buffers it reuses, and the bound the
//! snapshot publisher uses to skip contexts a change cannot reach.
//!
//! A query runs in three steps: [`shortlist_with`] weighs the query terms
//! against the corpus statistics and builds the `Plan` (`plan.rs`: what is the same
//! for every segment) and the posting cursors (`cursor.rs`, one per term and
//! segment); `maxscore.rs` walks them with exact pruning into the top-n
//! (`topn.rs`), reusing the per-thread `Scratch` buffers. The plan holds the
//! per-document arithmetic both the pruned
//! and the exhaustive walk use, so their scores are bit-identical.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::maxscore::MaxScore;
use super::plan::Plan;
use super::topn::{Entry, TopN};
use crate::index::SegmentView;

pub use super::maxscore::Scratch;
pub use super::plan::{Cancel, Strategy};
use super::{DenseMode, QueryTerm, Ranker, dense, normalized_query_terms};
use crate::error::{Error, Result};
use crate::fact::{FactBody, FactId, Name, name_key};
use crate::graph::{Edge, NodeId};
use crate::index::IndexVersion;
use crate::index::segment::{
    FIELDS, TIME_ANCHOR, df_for_mask, for_each_term, half_lives, merged_tf,
};
use crate::text;
use crate::time::WallTime;
use crate::vector::Vector;

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
    /// The query's embedding, for a dense or hybrid ranker.
    pub vector: Option<&'a Vector>,
    /// How recency decays for this query (`None`: the store's default).
    pub recency: Option<super::Recency>,
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
    let corpus = corpus_of(version, ranker).ok_or(Error::NoHistoryIndex)?;
    if ranker.dense == DenseMode::Off {
        return lexical(version, corpus, query, ranker, n, strategy, scratch);
    }
    let vector = query.vector.ok_or_else(|| {
        Error::DenseUnavailable(format!(
            "ranker {:?} needs the query's embedding, and the request carries none \
             (the server embeds it when the models are fetched: scripts/fetch-models)",
            ranker.name
        ))
    })?;
    if version.past.is_some() {
        return Err(Error::DenseUnavailable(
            "an as-of view lists facts without their vectors: use a lexical ranker for as-of reads"
                .into(),
        ));
    }
    let dense = dense::shortlist(corpus, vector, &query, ranker, n, scratch)?;
    if ranker.dense == DenseMode::Dense {
        return Ok(dense);
    }
    let bm25 = Ranker {
        dense: DenseMode::Off,
        ..ranker.clone()
    };
    let lexical = lexical(version, corpus, query, &bm25, n, strategy, scratch)?;
    Ok(dense::fuse([lexical, dense], n))
}

/// The lexical arms' shortlist (BM25F, PFM's factors) over `corpus`.
fn lexical(
    version: &IndexVersion,
    corpus: &crate::index::Corpus,
    query: Query<'_>,
    ranker: &Ranker,
    n: usize,
    strategy: Strategy,
    scratch: &mut Scratch,
) -> Result<Vec<Scored>> {
    let params = &version.params;
    let norm = text::normalize(query.context);
    let terms = normalized_query_terms(&norm, query.participants, ranker, params);
    let live = corpus.live_docs();
    if live == 0 || terms.is_empty() || n == 0 {
        return Ok(Vec::new());
    }
    let views = corpus.views();
    let field_weights = ranker.weights(params);
    let mask = ranker.field_mask(params);
    let (k1, b) = (params.k1, params.b);
    let sums = corpus.field_len_sums();
    let total: f64 = (0..FIELDS)
        .map(|i| f64::from(field_weights[i]) * sums[i] as f64)
        .sum();
    let avgdl = if total > 0.0 {
        (total / live as f64) as f32
    } else {
        1.0
    };

    // Per term: its id in each segment (looked up once), then W from the exact
    // live document frequency; heaviest terms first.
    let mut weighted: Vec<(f32, &str, Vec<Option<u32>>)> = Vec::with_capacity(terms.len());
    for qt in &terms {
        let ids: Vec<Option<u32>> = views.iter().map(|v| v.segment.term(&qt.term)).collect();
        let df: u32 = views
            .iter()
            .zip(&ids)
            .filter_map(|(v, id)| id.map(|id| df_for_mask(&v.live_presence(id), mask)))
            .sum();
        if df > 0 {
            let (nf, dff) = (live as f64, f64::from(df));
            let idf = (1.0 + (nf - dff + 0.5) / (dff + 0.5)).ln();
            weighted.push((qt.weight * idf as f32 * (k1 + 1.0), &qt.term, ids));
        }
    }
    weighted.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    let (activation, seeds) = if ranker.graph {
        activation(version, &norm, query.participants, ranker)
    } else {
        Default::default()
    };
    let recency_power = query
        .recency
        .unwrap_or(params.recency)
        .power(params, corpus)
        .filter(|_| ranker.recency);
    // Only the exact bounds read them, and they hold without recency alone.
    let (strongest_from, untold) = if recency_power.is_none() {
        let order: Vec<&str> = weighted.iter().map(|w| w.1).collect();
        strongest_from(&activation, &seeds, &order, field_weights, params)
    } else {
        Default::default()
    };

    let plan = Plan {
        ranker,
        params,
        weights: weighted.iter().map(|w| w.0).collect(),
        field_weights,
        merged_tf_table: std::array::from_fn(|i| {
            merged_tf(
                field_weights,
                [(i % 4) as u8, (i / 4 % 4) as u8, (i / 16) as u8],
            )
        }),
        stored_lengths: field_weights == params.field_weights,
        norm_base: k1 * (1.0 - b),
        norm_per_len: k1 * b / avgdl,
        activation,
        strongest_from,
        untold,
        graph: &version.graph,
        recency_now: (-half_lives(query.at, TIME_ANCHOR, params.recency_half_life_days)).exp2(),
        recency_power,
        usage_now: (-half_lives(query.at, TIME_ANCHOR, params.usage_half_life_days)).exp2(),
        n,
        strategy,
        cancel: query.cancel,
    };
    let ids: Vec<Vec<Option<u32>>> = weighted.into_iter().map(|w| w.2).collect();
    let cursors = plan.cursors(views, &ids);
    scratch.top.reset(n);
    for &(node, act) in &plan.activation {
        let i = node as usize;
        if scratch.activation_by_node.len() <= i {
            scratch.activation_by_node.resize(i + 1, 0.0);
        }
        scratch.activation_by_node[i] = act;
    }
    MaxScore {
        plan: &plan,
        views,
        cursors: &cursors,
    }
    .run(scratch);
    let in_context = (uses_context(ranker, params) && !plan.cancelled())
        .then(|| in_context(&plan, corpus, &ids, scratch));
    for &(node, _) in &plan.activation {
        scratch.activation_by_node[node as usize] = 0.0;
    }
    if plan.cancelled() {
        scratch.top.reset(0);
        return Err(Error::Cancelled);
    }
    Ok(in_context.unwrap_or_else(|| drain(&mut scratch.top, views)))
}

/// The facts `ranker` reads in `version`: the active ones, or every
/// retained version (`None` when the store keeps no history index).
pub fn corpus_of<'a>(
    version: &'a IndexVersion,
    ranker: &Ranker,
) -> Option<&'a crate::index::Corpus> {
    if ranker.validity {
        Some(&version.active)
    } else {
        version.history.as_ref()
    }
}

/// Whether `ranker` lends facts their conversation neighbours' scores
/// under `params` ([`super::context`]).
fn uses_context(ranker: &Ranker, params: &crate::config::ScoreParams) -> bool {
    ranker.context && params.context_weight > 0.0
}

/// The shortlist in `scratch.top` with each fact's score raised by `ν`
/// times its best conversation neighbour's, best first
/// ([`super::context`]). `ids` holds each query term's id per view.
fn in_context(
    plan: &Plan,
    corpus: &crate::index::Corpus,
    ids: &[Vec<Option<u32>>],
    scratch: &mut Scratch,
) -> Vec<Scored> {
    let views = corpus.views();
    let (gap, weight) = (plan.params.context_gap_ms(), plan.params.context_weight);
    let mut entries: Vec<Entry> = scratch.top.finish().collect();
    let activation = &scratch.activation_by_node;
    for e in &mut entries {
        let lent = super::context::neighbours(corpus, (e.view as usize, e.doc), gap)
            .into_iter()
            .flatten()
            .map(|(v, doc)| doc_score(plan, views, ids, v, doc, activation))
            .fold(0.0, f32::max);
        e.score += weight * lent;
    }
    entries.sort_unstable_by(super::topn::rank);
    entries.into_iter().map(|e| scored(e, views)).collect()
}

/// Document `doc` of view `v`'s whole score under `plan` (what the walk
/// would give it), for a document the walk did not keep.
fn doc_score(
    plan: &Plan,
    views: &[SegmentView],
    ids: &[Vec<Option<u32>>],
    v: usize,
    doc: u32,
    activation_by_node: &[f32],
) -> f32 {
    let segment = &*views[v].segment;
    let record = segment.record(doc);
    let mut score = 0.0;
    for (&weight, ids) in plan.weights.iter().zip(ids) {
        if let Some(tid) = ids[v]
            && let Some(tf) = record.tf(tid)
        {
            score += plan.contribution(weight, segment, doc, tf);
        }
    }
    score * plan.factor(segment, doc, &record, activation_by_node)
}

/// The best entries of `top`, best first, with their bodies from `views`.
pub(super) fn drain(top: &mut TopN, views: &[SegmentView]) -> Vec<Scored> {
    top.finish().map(|e| scored(e, views)).collect()
}

/// An entry with its body from `views`.
fn scored(e: Entry, views: &[SegmentView]) -> Scored {
    Scored {
        fact: e.fact,
        score: e.score,
        body: views[e.view as usize].segment.body(e.doc).clone(),
    }
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

/// What a change to one fact can do to one query's scores
/// ([`score_bound`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound {
    /// The most the fact itself can score, conversation context aside.
    pub own: f32,
    /// The most any fact whose score the change can move can score.
    pub moved: f32,
}

/// Upper bounds on the scores a change to `body` can touch under `ranker`
/// for a query with `terms` in `version`.
///
/// For one fact: a shared term contributes less than its weight `W = q ·
/// idf · (k1 + 1)` (BM25's saturation stays below 1), and the factors are
/// at most `(1 + usage weight)(1 + graph weight)` (recency is at most 1);
/// zero when no term is shared. With conversation context the change also
/// moves the facts [`super::context::moved_by`] names, each of which, and
/// `body` itself, scores at most `(1 + ν)` times the largest bound among
/// it and the facts it can borrow from ([`super::context`], invariant 2),
/// or is never shortlisted (it shares no term).
/// Lets the snapshot publisher skip contexts a change cannot reach.
pub fn score_bound(
    version: &IndexVersion,
    terms: &[QueryTerm],
    ranker: &Ranker,
    body: &FactBody,
    memo: &mut DfMemo,
) -> Bound {
    let Some(corpus) = corpus_of(version, ranker) else {
        return Bound {
            own: f32::INFINITY,
            moved: f32::INFINITY,
        };
    };
    let params = &version.params;
    let own = body_bound(version, corpus, terms, ranker, body, memo);
    if !uses_context(ranker, params) {
        return Bound { own, moved: own };
    }
    // `body` and each fact it moves, with every fact each can borrow from;
    // a fact that shares no term is never shortlisted, whatever it borrows.
    let views = corpus.views();
    let moved = super::context::moved_by(corpus, params, body, own > 0.0)
        .map(|(v, doc)| &**views[v].segment.body(doc));
    let mut bound = own;
    for fact in std::iter::once(body).chain(moved) {
        let alone = if fact.id == body.id {
            own
        } else {
            body_bound(version, corpus, terms, ranker, fact, memo)
        };
        if alone <= 0.0 {
            continue;
        }
        bound = bound.max(alone);
        for (v, lender) in super::context::lenders(corpus, params, fact) {
            let lender = views[v].segment.body(lender);
            bound = bound.max(body_bound(version, corpus, terms, ranker, lender, memo));
        }
    }
    Bound {
        own,
        moved: bound * (1.0 + params.context_weight),
    }
}

/// [`score_bound`] of one fact, without context.
fn body_bound(
    version: &IndexVersion,
    corpus: &crate::index::Corpus,
    terms: &[QueryTerm],
    ranker: &Ranker,
    body: &FactBody,
    memo: &mut DfMemo,
) -> f32 {
    let params = &version.params;
    let mask = ranker.field_mask(params);
    let n = corpus.live_docs().max(1) as f64;
    let mut sum = 0.0f32;
    let mut seen: Vec<&str> = Vec::new();
    for_each_term(body, params, |term, _| {
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
    sum * factor * (1.0 + super::maxscore::MARGIN)
}

/// Per list `j` of the query's terms in processing order (and one past the
/// last), the strongest activation among the told nodes a document can hold
/// if no earlier list reached it ([`Plan::strongest_from`]); and the untold
/// nodes ([`Plan::untold`]).
///
/// A document holds a node only if the node's name is among its entities
/// (whose tokens are indexed in the entities field) or its participants'
/// canonical names (the participants field). So when the ranker weighs both
/// fields, every document holding a seed is on the list of each token of
/// the seed's name that is a query term, with a positive contribution: such
/// a seed is told, first by the earliest of those lists. The stream reads a
/// list only once every document the earlier lists reached is complete, so
/// a document it meets first either holds no told seed of an earlier list or
/// was ruled out by an earlier list's bound. The other nodes are untold: no
/// list says which documents hold them.
fn strongest_from(
    activation: &[(NodeId, f32)],
    seeds: &[(NodeId, Name)],
    order: &[&str],
    field_weights: [f32; FIELDS],
    params: &crate::config::ScoreParams,
) -> (Vec<f32>, Vec<(NodeId, f32)>) {
    let names_reach = field_weights[1] > 0.0 && field_weights[2] > 0.0;
    let first_list = |node: NodeId| {
        seeds
            .iter()
            .filter(|(seed, _)| names_reach && *seed == node)
            .flat_map(|(_, name)| text::tokens(name).map(|t| params.index_form(t)))
            .filter_map(|t| order.iter().position(|&q| q == t))
            .min()
    };
    let mut told: Vec<(f32, usize)> = Vec::new();
    let mut untold: Vec<(NodeId, f32)> = Vec::new();
    for &(node, act) in activation {
        match first_list(node) {
            Some(first) => told.push((act, first)),
            None => untold.push((node, act)),
        }
    }
    let strongest = (0..=order.len())
        .map(|j| {
            told.iter()
                .filter(|&&(_, first)| first >= j)
                .fold(0.0, |max, &(act, _)| f32::max(max, act))
        })
        .collect();
    (strongest, untold)
}

/// The activated nodes with their activation, and the seeds with their
/// names.
type Activation = (Vec<(NodeId, f32)>, Vec<(NodeId, Name)>);

/// One hop of spreading activation from the request's seeds: entities named
/// in the context (activation 1) and, if enabled, the participants (1).
/// Each seed passes `ρ · w / w_max` to its published neighbours; the
/// `non_seed_nodes` most activated non-seeds join the seeds. Activations are
/// capped at 1. Also returns the seeds with their names.
fn activation(
    version: &IndexVersion,
    norm: &str,
    participants: &[String],
    ranker: &Ranker,
) -> Activation {
    let params = &version.params;
    let graph = &version.graph;
    let participants: Vec<Name> = participants
        .iter()
        .map(|p| Name::from(name_key(p)))
        .collect();
    let toks: Vec<&str> = text::tokens(norm).collect();
    let mut named: Vec<(NodeId, Name)> = version
        .gazetteer
        .mentions(&toks, &participants)
        .into_iter()
        .filter_map(|m| graph.node(&m.entity).map(|n| (n, m.entity)))
        .collect();
    if ranker.participant_seeds && params.participant_seeds {
        named.extend(
            participants
                .iter()
                .filter_map(|p| graph.node(p).map(|n| (n, p.clone()))),
        );
    }
    let mut seeds: Vec<NodeId> = named.iter().map(|s| s.0).collect();
    seeds.sort_unstable();
    seeds.dedup();
    // Sized once: growing a map is most of this function's cost.
    let reach = seeds.iter().map(|&s| graph.neighbours(s).len()).sum();
    let mut spread: FxHashMap<NodeId, f32> =
        FxHashMap::with_capacity_and_hasher(reach, Default::default());
    for &s in &seeds {
        let list = graph.neighbours(s);
        let Some(&Edge(_, max)) = list.first() else {
            continue;
        };
        for &Edge(v, w) in list {
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
    let activation = seeds
        .into_iter()
        .map(|s| (s, 1.0))
        .chain(spread.into_iter().map(|(v, a)| (v, a.min(1.0))))
        .collect();
    (activation, named)
}
