//! Conversation context: a fact's score borrows from the facts said just
//! before and just after it in the same conversation.
//!
//! A reply seldom repeats the words of what it answers ("what did you paint
//! last week?" — "a sunset over the lake"), so a request phrased like the
//! question finds the question, and the answer is the next turn; and a turn
//! that only says "yes, that one" means what the turn before it said. With
//! the PFM ranker each shortlisted fact gains `ν · max(s(before), s(after))`
//! (`ν` = [`ScoreParams::context_weight`](crate::config::ScoreParams)),
//! where `s` is the ranker's whole score of that neighbour for the request,
//! and the shortlist is sorted again. A neighbour that shares no query term
//! scores zero and lends nothing.
//!
//! # Neighbours
//! Fact ids are given in creation order, so the fact said just before `f`
//! is the nearest *active* fact with a smaller id, looked for at most
//! [`REACH`] ids away (superseded, erased and absorbed observations are
//! skipped); it is `f`'s neighbour when it has the same set of participants and was
//! stated within [`ScoreParams::context_gap_minutes`](crate::config::ScoreParams)
//! of `f`. Likewise after. An active fact of another conversation in
//! between ends the search: it was said in between.
//!
//! # Invariants
//! 1. The bonus reorders the shortlist; it brings no fact into it. The
//!    pruned and the exhaustive walks shortlist the same facts with the same
//!    scores, so they stay bit-identical.
//! 2. Whether fact `x` borrows from fact `y` depends only on the active
//!    facts between them, and they are at most [`REACH`] ids apart. So a
//!    change to fact `f` (its score, or whether it is active) moves the
//!    score of another fact `x` only when `x` is within reach of `f` and
//!    either `f` is related to `x` and scores above zero for the query (it
//!    lends, or may now lend, to `x`) or a fact related to `x` lies within
//!    reach of `x` on the other side of `f` (`f` coming or going decides
//!    whether that fact is `x`'s neighbour) — [`moves`]. A moved fact
//!    scores at most its own bound plus `ν` times the largest bound among
//!    the facts related to it within reach ([`super::scorer::score_bound`]
//!    relies on this).

use crate::config::ScoreParams;
use crate::fact::{FactBody, FactId, Said};
use crate::index::Corpus;

/// How many ids away from a fact its neighbours are looked for.
pub const REACH: u64 = 3;

/// Whether a change to `changed` can move fact `other`'s score for a
/// query `changed` scores above zero for when `lends` (invariant 2).
pub fn moves(
    corpus: &Corpus,
    params: &ScoreParams,
    changed: &FactBody,
    lends: bool,
    other: FactId,
) -> bool {
    if other == changed.id {
        return true;
    }
    match find(corpus, other, None) {
        Some(x) => moved(corpus, params.context_gap_ms(), changed, lends, x),
        // Not active now: whatever showed it must change anyway.
        None => changed.id.0.abs_diff(other.0) <= REACH,
    }
}

/// The active facts besides `changed` whose score a change to `changed`
/// can move, as `(view, doc)`, for a query `changed` scores above zero for
/// when `lends` (invariant 2).
pub fn moved_by<'a>(
    corpus: &'a Corpus,
    params: &ScoreParams,
    changed: &'a FactBody,
    lends: bool,
) -> impl Iterator<Item = (usize, u32)> + 'a {
    let gap = params.context_gap_ms();
    around(corpus, changed.id).filter(move |&x| moved(corpus, gap, changed, lends, x))
}

/// The active facts within [`REACH`] ids of `fact` and related to it: all
/// it can borrow from (invariant 2).
pub fn lenders<'a>(
    corpus: &'a Corpus,
    params: &ScoreParams,
    fact: &'a FactBody,
) -> impl Iterator<Item = (usize, u32)> + 'a {
    let gap = params.context_gap_ms();
    around(corpus, fact.id).filter(move |&y| fact.said_beside(body(corpus, y), gap))
}

/// Whether a change to `changed` moves the score of active fact `x`.
fn moved(corpus: &Corpus, gap_ms: i64, changed: &FactBody, lends: bool, x: (usize, u32)) -> bool {
    let xb = body(corpus, x);
    let (f, xi) = (changed.id.0, xb.id.0);
    if f.abs_diff(xi) > REACH {
        return false;
    }
    if lends && changed.said_beside(xb, gap_ms) {
        return true;
    }
    // A fact related to `x` on the other side of `changed`, within reach.
    around(corpus, xb.id).any(|y| {
        let yb = body(corpus, y);
        let yi = yb.id.0;
        (yi < f) != (xi < f) && yi != f && xb.said_beside(yb, gap_ms)
    })
}

/// The active facts within [`REACH`] ids of `fact`, `fact` itself aside.
fn around(corpus: &Corpus, fact: FactId) -> impl Iterator<Item = (usize, u32)> + '_ {
    (fact.0.saturating_sub(REACH)..=fact.0.saturating_add(REACH))
        .filter(move |&id| id != fact.0)
        .filter_map(move |id| find(corpus, FactId(id), None))
}

fn body(corpus: &Corpus, (view, doc): (usize, u32)) -> &FactBody {
    corpus.views()[view].segment.body(doc)
}

/// The neighbours of document `doc` of view `view` in `corpus`, as `(view,
/// doc)`: the fact said just before it and the one just after, where there
/// is one. Each fact looked at is ruled out by the segments' [`Said`]
/// column where it can be; a body is read only when that leaves the
/// question open.
pub fn neighbours(
    corpus: &Corpus,
    (view, doc): (usize, u32),
    gap_ms: i64,
) -> [Option<(usize, u32)>; 2] {
    let segment = &corpus.views()[view].segment;
    let (id, said) = (segment.fact_id(doc).0, segment.said(doc));
    let side = |before: bool| {
        for step in 1..=REACH {
            let other = if before {
                id.checked_sub(step)?
            } else {
                id.checked_add(step)?
            };
            let Some(at) = find(corpus, FactId(other), Some((view, doc))) else {
                continue; // not active: look past it
            };
            let beside = said.may_be_beside(said_at(corpus, at), gap_ms)
                && body(corpus, (view, doc)).said_beside(body(corpus, at), gap_ms);
            return beside.then_some(at);
        }
        None
    };
    [side(true), side(false)]
}

fn said_at(corpus: &Corpus, (view, doc): (usize, u32)) -> Said {
    corpus.views()[view].segment.said(doc)
}

/// `fact`'s live document. With a `hint` — the document of a fact near
/// `fact` — the few documents around it in its segment are looked at
/// first: a segment holds facts sorted by id, and a fact's neighbours are
/// nearly always indexed beside it, so this skips a binary search of every
/// segment.
fn find(corpus: &Corpus, fact: FactId, hint: Option<(usize, u32)>) -> Option<(usize, u32)> {
    if let Some((v, doc)) = hint
        && let Some(view) = corpus.views().get(v)
    {
        let reach = REACH as u32;
        let end = (doc.saturating_add(reach) as usize + 1).min(view.segment.len()) as u32;
        if let Some(d) = (doc.saturating_sub(reach)..end).find(|&d| view.segment.fact_id(d) == fact)
            && !view.deletes.contains(d)
        {
            return Some((v, d));
        }
    }
    corpus.find(fact)
}
