//! Which documents of a segment may hold an untold node: an activated graph
//! node that no query list tells of ([`Plan::untold`]), so the exact bound
//! of every document a list reaches first counts it.
//!
//! With no recency factor, the documents a common term reaches are often
//! separated only by their association factor, so an exact bound that
//! counts the strongest untold node for each of them admits nearly all as
//! possible ties, and each is finished from its record (the 1,000-fact
//! narrow store: ~940 a query). Yet a document holds a node only if every
//! token of the node's name is in its entities or participants field (the
//! invariant `strongest_from` in the scorer rests on), so the postings of
//! one token of each untold name, read where that field's frequency is
//! positive, list every document of the segment that may hold it. The
//! others hold at most the untold nodes left unmarked.
//!
//! Marking costs a lookup per untold name and a pass over those postings,
//! and most queries never need it, so it is bought as skis are in the
//! rent-or-buy problem: each view counts the finishes that only the untold
//! nodes forced, each worth [`FINISH_COST`] posting reads, and looks the
//! names up once they have cost as much as that ([`NAME_COST`] each), then
//! marks once they have cost as much as the lookups and the postings
//! together. It does so only on a list with more postings left than the
//! lookups cost, and only if the marks cover at most half of them (marks
//! that cover most of a list save few of its reads). Queries whose untold
//! nodes seldom matter pay a few comparisons a document; a query that needs
//! the marks pays at most about twice what it would with them from the
//! start.

use super::plan::Plan;
use crate::index::Segment;
use crate::index::segment::FIELDS;
use crate::text;

/// A finish from a record costs about this many posting reads (a record
/// read and its factor, ~40 ns, against a sequential posting, ~2.5 ns).
const FINISH_COST: usize = 16;

/// Finding one untold name's list costs about this many posting reads
/// (its tokens' index forms, from the thread's stem cache, and a term
/// lookup each).
const NAME_COST: usize = 48;

/// One segment view's holders of untold nodes, for one query. What each
/// marked document may hold lives in the query's array by global document
/// (`held`, zero elsewhere), so a lookup is one read.
#[derive(Debug, Default)]
pub(super) struct Holders {
    /// Whether the marks are built.
    marked: bool,
    /// Finishes that only the untold nodes forced so far.
    forced: usize,
    /// Whether `terms`, `cost` and `residual` are known.
    prepared: bool,
    /// The postings marking reads (known once prepared).
    cost: usize,
    /// Per untold node that marking covers and some document of the segment
    /// may hold: its activation, and the term whose list (one token of its
    /// name) holds every such document.
    terms: Vec<(f32, u32)>,
    /// The strongest untold node marking does not cover (one whose name it
    /// cannot look up): any document may hold it.
    residual: f32,
    /// The documents marked in `held`, to zero them again.
    touched: Vec<u32>,
}

impl Holders {
    /// Forgets the query; `held` is the query's array from this view's
    /// first document.
    pub fn clear(&mut self, held: &mut [f32]) {
        for &doc in &self.touched {
            held[doc as usize] = 0.0;
        }
        self.touched.clear();
        self.terms.clear();
        self.marked = false;
        self.prepared = false;
        self.forced = 0;
        self.cost = 0;
        self.residual = 0.0;
    }

    /// Whether the marks are built.
    #[inline]
    pub fn is_marked(&self) -> bool {
        self.marked
    }

    /// With the marks built: the strongest untold node that any document
    /// may hold.
    #[inline]
    pub fn residual(&self) -> f32 {
        self.residual
    }

    /// Counts a finish that only the untold nodes forced, on a list with
    /// `remaining` postings left to read, and marks once those finishes have
    /// cost as much as marking. Not on a list too short to repay the name
    /// lookups, nor when the marks would cover more than half of what is
    /// left of it (then most of it would still be read). Returns whether the
    /// marks are built.
    pub fn force(
        &mut self,
        plan: &Plan,
        segment: &Segment,
        remaining: usize,
        held: &mut Vec<f32>,
        base: usize,
    ) -> bool {
        self.forced += 1;
        let spent = self.forced * FINISH_COST;
        let names = plan.untold.len() * NAME_COST;
        if !self.prepared && spent >= names && remaining >= names {
            self.prepare(plan, segment);
        }
        if self.prepared && spent >= names + self.cost && 2 * self.cost <= remaining {
            self.mark(segment, held, base);
        }
        self.marked
    }

    /// The strongest untold node document `doc` may hold (`held` from this
    /// view's first document).
    #[inline]
    pub fn held(&self, doc: u32, held: &[f32]) -> f32 {
        self.residual.max(held[doc as usize])
    }

    /// Finds each untold node's list; a node whose name cannot be looked up
    /// counts for every document (`residual`).
    fn prepare(&mut self, plan: &Plan, segment: &Segment) {
        let mut form = String::new();
        for &(node, act) in &plan.untold {
            let name = plan.graph.name(node);
            match name.and_then(|n| holder_list(plan, segment, n, &mut form)) {
                None => self.residual = self.residual.max(act),
                Some(Some(term)) => {
                    self.cost += segment.postings(term).len();
                    self.terms.push((act, term));
                }
                Some(None) => {}
            }
        }
        self.prepared = true;
    }

    /// Marks every document on the prepared lists where the token is in a
    /// name field with the strongest node it may hold.
    fn mark(&mut self, segment: &Segment, held: &mut Vec<f32>, base: usize) {
        let len = base + segment.len();
        if held.len() < len {
            held.resize(len, 0.0);
        }
        let held = &mut held[base..];
        for &(act, term) in &self.terms {
            for p in segment.postings(term).iter() {
                if names_field(p.tf) {
                    let at = &mut held[p.doc as usize];
                    if *at == 0.0 {
                        self.touched.push(p.doc);
                    }
                    *at = at.max(act);
                }
            }
        }
        self.marked = true;
    }
}

/// Whether a posting's frequencies put the term in a name field.
#[inline]
fn names_field(tf: [u8; FIELDS]) -> bool {
    tf[1] > 0 || tf[2] > 0
}

/// The shortest list, in `segment`, of a token of `name` (each token's
/// index form goes through `form`): `Some(None)` when a token is not in the
/// segment (no document there holds the name), `None` when the name has no
/// token to look up.
fn holder_list(
    plan: &Plan,
    segment: &Segment,
    name: &str,
    form: &mut String,
) -> Option<Option<u32>> {
    let mut best: Option<(usize, u32)> = None;
    for token in text::tokens(name) {
        form.clear();
        text::push_index_form(token, plan.params.stem, form);
        let Some(term) = segment.term(form) else {
            return Some(None);
        };
        let len = segment.postings(term).len();
        if best.is_none_or(|(l, _)| len < l) {
            best = Some((len, term));
        }
    }
    best.map(|(_, term)| Some(term))
}
