//! The scoring loop: term at a time across every segment, with exact
//! MaxScore-style pruning completed from forward data.
//!
//! Query terms are processed in descending weight, across every segment at
//! once. The first (rarest) list adds its contribution to the documents on
//! it, the candidates. Before the next list, the loop completes them
//! ([`MaxScore::complete`]): it reads each one's record (recency, graph
//! nodes, and its terms with their frequencies — the segment's forward
//! index), adds the remaining terms from it, multiplies the factor, and
//! offers the final score to the top-n. From then on every candidate is
//! complete, so each later list is streamed ([`MaxScore::stream`]): a
//! document not seen yet is bounded as it is read — the term's upper bound,
//! the remaining terms where their bitmaps allow, times the largest factor at
//! its block's recency — and dropped below the cutoff or finished at once,
//! newest first, so the cutoff rises as the list is read; a chunk of
//! postings whose newest document cannot reach the cutoff is skipped unread.
//! Once no unseen document of a segment can reach the cutoff even with every
//! remaining term at its upper bound, times the largest factor, that
//! segment's lists are no longer read: the common terms' long lists usually
//! never are.
//!
//! Facts are short, so a record is a cache line or two: finishing a
//! candidate costs about one cache miss, where walking or galloping through
//! the remaining long lists costs a pass per list. When the first list's
//! candidates are completed with no cutoff yet, a first pass bounds them all
//! without their records and the best bounds are finished first, their
//! records prefetched, to set a cutoff close to the final one; stores whose
//! records fit in cache skip that and finish candidates in one pass.
//!
//! Without a recency factor, many documents can only tie: the same terms,
//! length and factor give the same score, bit for bit, and a tie goes to the
//! newer fact. A bound with a margin can never rule a tie out, so each would
//! be finished from its record. Instead, with no recency, the stream also
//! bounds with no margin ([`Plan::attainable`], and per list the upper
//! bounds added in term order times [`Plan::exact_factor`]): every step of
//! the score is monotone in floating point, so such a bound is never below
//! the score and equals it for a document that reaches every maximum. A
//! document whose exact bound neither beats the floor nor ties it with a
//! newer fact is passed over unread, and since lists are read newest first,
//! once the list's own bound fails so does every older posting of it.
//!
//! Such a bound counts, for every document a list reaches first, the
//! strongest activated graph node that no query list tells of (the seeds'
//! neighbours): with a common term, whose documents differ only in their
//! association, it admits nearly all of them as possible ties. Once those
//! finishes have cost as much as marking, a view marks the documents that
//! may hold such a node from the postings of their names ([`Holders`]);
//! then the others are bounded without it, and once none of them can enter,
//! only marked documents of the list are read.
//!
//! Every document adds its term contributions in the same order
//! (descending weight, then term) whether pruned or not, and its factor is
//! computed by one function ([`Plan::factor`]), so the pruned top-n is
//! bit-identical to the exhaustive one; `prop_pruned_equals_exhaustive` in
//! `tests/prop_rank.rs` checks it. Bounds carry a small relative margin
//! against rounding.

use super::cursor::CursorGrid;
use super::holders::Holders;
use super::plan::Plan;
use super::topn::{Entry, TopN};
use crate::index::{Segment, SegmentView};

/// Relative slack on every pruning bound, far above f32 rounding error.
pub(super) const MARGIN: f32 = 1e-4;

/// Records up to this many bytes in all are taken to stay in cache.
pub(super) const RESIDENT_BYTES: usize = 512 << 10;

/// How many candidates ahead [`MaxScore::complete`] prefetches records.
const PREFETCH: usize = 8;

/// A document's BM25F so far in one query. One `f32`, because the array of
/// them spans every document of the corpus (an `Option<f32>` would double
/// it): zero until a term reaches the document, then the partial sum
/// (contributions are positive), and [`Partial::COMPLETE`] once the document
/// is scored in full, so later lists pass it by.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Partial(f32);

impl Partial {
    /// Scored in full and offered.
    const COMPLETE: Partial = Partial(-1.0);

    #[inline]
    fn is_complete(self) -> bool {
        self == Partial::COMPLETE
    }

    #[inline]
    fn is_unreached(self) -> bool {
        self.0 == 0.0
    }
}

/// A document a list reached, as (segment view, local document).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Reached {
    view: u32,
    doc: u32,
}

/// What pruning knows of one segment view for one query.
#[derive(Clone, Copy, Debug)]
pub(super) struct ViewBound {
    /// The largest factor, recency aside, with margin.
    factor_base: f32,
    /// The largest factor, with margin.
    factor_max: f32,
    /// Whether its lists are still read (false once no unseen document of
    /// the segment can reach the cutoff).
    open: bool,
}

/// A candidate on its way to being finished.
#[derive(Clone, Copy, Debug)]
pub(super) struct Candidate {
    /// Its segment view.
    view: u32,
    /// Local document id.
    doc: u32,
    /// Its accumulated partial score.
    partial: f32,
    /// The most the remaining terms can add to it.
    rest: f32,
    /// The most its final score can be.
    bound: f32,
}

/// Reusable per-thread buffers, so a query allocates little.
#[derive(Debug, Default)]
pub struct Scratch {
    /// Partial BM25F per global document (`base + local`).
    pub(super) partials: Vec<Partial>,
    /// Activation per graph node (set for this query's activated nodes only).
    pub(super) activation_by_node: Vec<f32>,
    /// Documents a list has reached, in the order they were reached.
    pub(super) reached: Vec<Reached>,
    /// Per segment view: what pruning knows of it.
    pub(super) view_bounds: Vec<ViewBound>,
    /// Candidates between the two passes of `MaxScore::complete`.
    pub(super) candidates: Vec<Candidate>,
    /// Complete documents of one view, for `MaxScore::stream`.
    pub(super) complete_here: Vec<u32>,
    /// Per segment view: which documents may hold an untold node.
    pub(super) holders: Vec<Holders>,
    /// Per global document (`base + local`): the strongest marked untold
    /// node it may hold, zero where none ([`Holders`]).
    pub(super) held: Vec<f32>,
    /// Whether the records of this query's segments fit in cache, so that
    /// candidates are finished in one pass.
    pub(super) resident: bool,
    /// Overrides the cache-resident limit (see [`Scratch::set_resident_limit`]).
    pub(super) resident_limit: Option<usize>,
    /// The best documents so far.
    pub(super) top: TopN,
}

impl Scratch {
    /// Treats segments whose records total at most `bytes` as cache-resident
    /// (finished in one pass; the default is `RESIDENT_BYTES`, 512 KiB). Both paths return the
    /// same results: tests set 0 to check the two-pass path on small stores.
    pub fn set_resident_limit(&mut self, bytes: usize) {
        self.resident_limit = Some(bytes);
    }
}

/// One query's walk over its cursors.
pub(super) struct MaxScore<'q, 's> {
    pub plan: &'q Plan<'q>,
    pub views: &'s [SegmentView],
    pub cursors: &'q CursorGrid<'s>,
}

impl MaxScore<'_, '_> {
    /// Scores every segment term by term: each term's lists in all the
    /// segments still open, so that the candidates of every segment count
    /// towards the first cutoff (a segment alone may have too few). The best
    /// `n` end in `scratch.top`.
    pub fn run(&self, scratch: &mut Scratch) {
        let (plan, views) = (self.plan, self.views);
        let terms = self.cursors.terms();
        let total_docs = views
            .last()
            .map_or(0, |v| v.base as usize + v.segment.len());
        if scratch.partials.len() < total_docs {
            scratch.partials.resize(total_docs, Partial::default());
        }
        scratch.resident = views
            .iter()
            .map(|v| v.segment.record_bytes())
            .sum::<usize>()
            <= scratch.resident_limit.unwrap_or(RESIDENT_BYTES);
        let strongest = plan.activation.iter().map(|a| a.1).fold(0.0, f32::max);
        if !plan.untold.is_empty() && scratch.holders.len() < views.len() {
            scratch.holders.resize_with(views.len(), Holders::default);
        }
        scratch.view_bounds.clear();
        scratch.view_bounds.extend(views.iter().map(|view| {
            let factor_base = plan.max_factor(&view.segment, strongest) * (1.0 + MARGIN);
            ViewBound {
                factor_base,
                factor_max: factor_base * plan.recency(view.segment.max_rec()),
                open: true,
            }
        }));

        // reached[..complete] are scored in full, offered, and marked
        // complete in `partials`, so that later lists pass them by.
        let mut complete = 0;
        for term in 0..terms {
            if plan.cancelled() {
                break;
            }
            let unread: usize = (0..views.len())
                .filter(|&v| scratch.view_bounds[v].open)
                .filter_map(|v| self.cursors.get(term, v))
                .map(|c| c.postings.len())
                .sum();
            if plan.pruned() && term > 0 && unread > scratch.reached.len() - complete {
                // Completing the pending candidates costs less than the
                // lists; their final scores may then rule out every document
                // the lists would add, segment by segment.
                self.complete(term, scratch, complete);
                complete = scratch.reached.len();
                if let Some(cutoff) = scratch.top.cutoff() {
                    for (v, bound) in scratch.view_bounds.iter_mut().enumerate() {
                        let rest = self.cursors.remaining(v, term..terms).bound();
                        bound.open &= rest * bound.factor_max >= cutoff;
                    }
                    if scratch.view_bounds.iter().all(|b| !b.open) {
                        break;
                    }
                }
            }
            if plan.pruned() && term > 0 && complete == scratch.reached.len() {
                self.stream(term, scratch);
                complete = scratch.reached.len();
                continue;
            }
            self.accumulate(term, scratch);
        }
        if !plan.cancelled() {
            self.complete(terms, scratch, complete);
        }
        for r in &scratch.reached {
            scratch.partials[views[r.view as usize].base as usize + r.doc as usize] =
                Partial::default();
        }
        scratch.reached.clear();
        if !plan.untold.is_empty() {
            for (holders, view) in scratch.holders.iter_mut().zip(views) {
                holders.clear(
                    scratch
                        .held
                        .get_mut(view.base as usize..)
                        .unwrap_or_default(),
                );
            }
        }
    }

    /// Adds term `term`'s contribution to every document on its open lists
    /// that is not complete yet.
    fn accumulate(&self, term: usize, scratch: &mut Scratch) {
        let weight = self.plan.weights[term];
        for (v, view) in self.views.iter().enumerate() {
            let Some(cursor) = self.cursors.get(term, v) else {
                continue;
            };
            if !scratch.view_bounds[v].open {
                continue;
            }
            let segment = &*view.segment;
            let partials = &mut scratch.partials[view.base as usize..];
            for posting in cursor.postings.iter() {
                let partial = &mut partials[posting.doc as usize];
                if partial.is_complete() {
                    continue;
                }
                let c = self
                    .plan
                    .contribution(weight, segment, posting.doc, posting.tf);
                if c == 0.0 {
                    continue;
                }
                if partial.is_unreached() {
                    scratch.reached.push(Reached {
                        view: v as u32,
                        doc: posting.doc,
                    });
                }
                partial.0 += c;
            }
        }
    }

    /// Scores the candidates `reached[start..]` in full and offers them.
    /// Each has accumulated terms `..from`; terms `from..` come from its
    /// record, added in term order as the exhaustive walk adds them, so the
    /// score is bit-identical.
    ///
    /// Records are cache misses, so a first pass bounds every candidate
    /// without one: terms `from..` add at most their upper bounds, except
    /// dense terms whose bitmap says the document lacks them, and the factor
    /// is at most the segment's `factor_base` (everything but recency, with
    /// margin) times the recency of the newest document of its block.
    /// Candidates below the cutoff go no further. If there is no cutoff yet,
    /// the `n` best bounds go first, so that the cutoff they set is close to
    /// the final one. The second pass reads the records of those still above
    /// the cutoff (prefetched a few ahead, so that the misses overlap),
    /// checks the bound again with the exact factor, and completes the rest.
    /// When every record fits in cache (small stores), a read costs less
    /// than holding candidates for a second pass: each is finished at once.
    fn complete(&self, from: usize, scratch: &mut Scratch, start: usize) {
        let (plan, views) = (self.plan, self.views);
        let terms = self.cursors.terms();
        let mut candidates = std::mem::take(&mut scratch.candidates);
        candidates.clear();
        let cutoff = scratch.top.cutoff().filter(|_| plan.pruned());
        // Newest first: with recency, they are likelier to stay.
        for i in (start..scratch.reached.len()).rev() {
            let Reached { view: v, doc } = scratch.reached[i];
            let view = &views[v as usize];
            let partial = std::mem::replace(
                &mut scratch.partials[view.base as usize + doc as usize],
                Partial::COMPLETE,
            );
            if view.deletes.contains(doc) {
                continue;
            }
            let segment = &*view.segment;
            let rest = self
                .cursors
                .remaining(v as usize, from..terms)
                .bound_of(doc);
            let bound = (partial.0 + rest)
                * scratch.view_bounds[v as usize].factor_base
                * plan.recency(segment.block_rec(doc));
            let candidate = Candidate {
                view: v,
                doc,
                partial: partial.0,
                rest,
                bound,
            };
            if scratch.resident {
                // Records in cache cost little: finish at once, against the
                // cutoff as it rises.
                let cutoff = scratch.top.cutoff().filter(|_| plan.pruned());
                if !cutoff.is_some_and(|c| bound < c) {
                    self.finish(from, candidate, cutoff, scratch);
                }
            } else if !cutoff.is_some_and(|c| bound < c) {
                candidates.push(candidate);
            }
        }
        if plan.pruned() && cutoff.is_none() && candidates.len() > plan.n {
            candidates.select_nth_unstable_by(plan.n - 1, |a, b| b.bound.total_cmp(&a.bound));
        }
        for j in 0..candidates.len() {
            let cutoff = scratch.top.cutoff().filter(|_| plan.pruned());
            if let Some(ahead) = candidates.get(j + PREFETCH)
                && !cutoff.is_some_and(|c| ahead.bound < c)
            {
                views[ahead.view as usize].segment.prefetch(ahead.doc);
            }
            let candidate = candidates[j];
            if cutoff.is_some_and(|c| candidate.bound < c) {
                continue;
            }
            self.finish(from, candidate, cutoff, scratch);
        }
        scratch.candidates = candidates;
    }

    /// Term `term`'s lists when every candidate so far is complete: each new
    /// document is bounded as it is read — the term's upper bound, the
    /// remaining terms its bitmaps allow, the factor at its block's recency —
    /// and either dropped (below the cutoff) or finished at once, newest
    /// first, so that the cutoff rises as the list is read and no document
    /// of the list waits as a candidate. A dropped document that a later list
    /// reaches again only gets a partial score below the cutoff it already
    /// missed, which the top-n turns away.
    fn stream(&self, term: usize, scratch: &mut Scratch) {
        let (plan, views) = (self.plan, self.views);
        let terms = self.cursors.terms();
        for (v, view) in views.iter().enumerate().rev() {
            let Some(cursor) = self.cursors.get(term, v) else {
                continue;
            };
            if !scratch.view_bounds[v].open {
                continue;
            }
            let segment = &*view.segment;
            let factor_base = scratch.view_bounds[v].factor_base;
            // The documents of this view already complete (few: the rare
            // lists' candidates), descending, walked beside the list instead
            // of a scattered read of `partials` per posting.
            scratch.complete_here.clear();
            scratch.complete_here.extend(
                scratch
                    .reached
                    .iter()
                    .filter(|r| r.view == v as u32)
                    .map(|r| r.doc),
            );
            scratch.complete_here.sort_unstable_by(|a, b| b.cmp(a));
            let later = self.cursors.remaining(v, term + 1..terms);
            let best_rest = later.bound();
            // Without recency, the most any document of the list can score,
            // with no margin: once it cannot beat the floor, nor tie it with
            // a newer fact, no older posting of the list can either.
            // A document this list reaches first holds none of the seeds
            // the earlier lists carry (`Plan::strongest_from`).
            let factor_exact = plan.exact_factor(segment, term);
            let exact_best =
                factor_exact.map(|factor| later.bound_after(cursor.upper_bound) * factor);
            // The untold nodes count for every document until marked.
            let untold = factor_exact.is_some() && !plan.untold.is_empty();
            let mut marked = untold && scratch.holders[v].is_marked();
            let (mut told_best, mut marked_only) = (None, false);
            let mut next_complete = 0;
            let mut current_chunk = None;
            let mut i = cursor.postings.len();
            while i > 0 {
                i -= 1;
                // A whole chunk of postings whose newest document cannot
                // reach the cutoff, even with every term, is skipped unread.
                let chunk = cursor.chunk_of(i);
                if current_chunk != Some(chunk) {
                    current_chunk = Some(chunk);
                    let best = (cursor.upper_bound + best_rest)
                        * factor_base
                        * plan.recency(cursor.chunk_recency(chunk));
                    if scratch.top.cutoff().is_some_and(|c| best < c) {
                        i = cursor.chunk_start(chunk);
                        continue;
                    }
                }
                let posting = cursor.postings.get(i);
                // Once the holders are marked and no document of the list
                // holding only the unmarked untold nodes can enter (nor can
                // any older one, as below), only marked documents are read.
                if marked {
                    let holders = &scratch.holders[v];
                    let residual = holders.residual();
                    if !marked_only {
                        let best = *told_best.get_or_insert_with(|| {
                            later.bound_after(cursor.upper_bound)
                                * plan.held_factor(segment, term, residual)
                        });
                        marked_only = !scratch.top.admits(best, || segment.fact_id(posting.doc));
                    }
                    let held = &scratch.held[view.base as usize..];
                    if marked_only && holders.held(posting.doc, held) <= residual {
                        continue;
                    }
                }
                if let Some(best) = exact_best
                    && !scratch.top.admits(best, || segment.fact_id(posting.doc))
                {
                    break;
                }
                let complete_here = &scratch.complete_here;
                while next_complete < complete_here.len()
                    && complete_here[next_complete] > posting.doc
                {
                    next_complete += 1;
                }
                if complete_here.get(next_complete) == Some(&posting.doc)
                    || view.deletes.contains(posting.doc)
                {
                    continue;
                }
                let cutoff = scratch.top.cutoff();
                // Recency alone often rules a document out: test that before
                // the bitmaps.
                let factor_bound = factor_base * plan.recency(segment.block_rec(posting.doc));
                if cutoff.is_some_and(|c| (cursor.upper_bound + best_rest) * factor_bound < c) {
                    continue;
                }
                let rest = later.bound_of(posting.doc);
                let bound = (cursor.upper_bound + rest) * factor_bound;
                if cutoff.is_some_and(|c| bound < c) {
                    continue;
                }
                let c = plan.contribution(plan.weights[term], segment, posting.doc, posting.tf);
                if c == 0.0 {
                    continue;
                }
                // Without recency, many documents can only tie the floor
                // (the same terms, length and factor); a tie goes to the
                // newer fact, so an exact bound settles it without the
                // record.
                if let Some(factor) = factor_exact {
                    let best = plan.attainable(segment, posting.doc, c, term + 1, later);
                    let fact = || segment.fact_id(posting.doc);
                    if !scratch.top.admits(best * factor, fact) {
                        continue;
                    }
                    if untold {
                        // Admitted with every untold node: with those it may
                        // hold, or (until marked) with none?
                        let holders = &mut scratch.holders[v];
                        let base = view.base as usize;
                        marked = marked
                            || !scratch
                                .top
                                .admits(best * plan.held_factor(segment, term, 0.0), fact)
                                && holders.force(plan, segment, i, &mut scratch.held, base);
                        if marked {
                            let held = holders.held(posting.doc, &scratch.held[base..]);
                            let factor = plan.held_factor(segment, term, held);
                            if !scratch.top.admits(best * factor, fact) {
                                continue;
                            }
                        }
                    }
                }
                scratch.partials[view.base as usize + posting.doc as usize] = Partial::COMPLETE;
                scratch.reached.push(Reached {
                    view: v as u32,
                    doc: posting.doc,
                });
                let candidate = Candidate {
                    view: v as u32,
                    doc: posting.doc,
                    partial: c,
                    rest,
                    bound,
                };
                self.finish(term + 1, candidate, cutoff, scratch);
            }
        }
    }

    /// Reads a candidate's record and, unless its exact factor rules it out,
    /// completes its score (terms `from..` from the record) and offers it.
    fn finish(
        &self,
        from: usize,
        candidate: Candidate,
        cutoff: Option<f32>,
        scratch: &mut Scratch,
    ) {
        let plan = self.plan;
        let v = candidate.view as usize;
        let segment = &*self.views[v].segment;
        let record = segment.record(candidate.doc);
        let factor = plan.factor(segment, candidate.doc, &record, &scratch.activation_by_node);
        if cutoff
            .is_some_and(|c| (candidate.partial + candidate.rest) * factor * (1.0 + MARGIN) < c)
        {
            return;
        }
        let mut score = candidate.partial;
        let later = self.cursors.remaining(v, from..self.cursors.terms());
        for (term, cursor) in (from..).zip(later.cursors()) {
            if let Some(cursor) = cursor
                && let Some(tf) = record.tf(cursor.term)
            {
                score += plan.contribution(plan.weights[term], segment, candidate.doc, tf);
            }
        }
        offer(&mut scratch.top, segment, v, candidate.doc, score * factor);
    }
}

/// Offers document `doc` of view `view` with its final score.
#[inline]
fn offer(top: &mut TopN, segment: &Segment, view: usize, doc: u32, score: f32) {
    // Most offers fall below the cutoff: reject them before reading the fact
    // id, a cache miss of its own (the id only breaks ties).
    if top.cutoff().is_some_and(|c| score < c) {
        return;
    }
    top.offer(Entry {
        score,
        fact: segment.fact_id(doc),
        view: view as u32,
        doc,
    });
}
