//! P-Mem's typed operations (Table 2 and Section 3.2 of the paper) over a
//! key's cell: its *head* (the current version), the chain of versions
//! below and above it, its pending alternatives and its tombstones.
//!
//! # Rules
//! - **contest**: the head stays and is flagged `contested`; the value is kept
//!   as an `alternative` (an `alternative_of` edge to the head). Restating
//!   the head's value, or a pending alternative's, is support for it.
//! - **reject** with a value: the value becomes the head, the old head is
//!   `contradicted`. Without one, and **revoke**: the head is retracted
//!   (`contradicted` / `revoked`), a tombstone records the retraction (a
//!   `revokes` edge), and the newest older version of the chain that was
//!   not itself retracted reopens with a new activity interval; the cell is
//!   empty if there is none, or if the walk meets a version whose
//!   `rollback_stop` is set (it became the head of an empty cell, or an
//!   erasure cut the chain below it). So k consecutive retractions
//!   reinstate the value from before the k most recent commits.
//! - **resolve** (a contested cell only): the chosen value — a pending
//!   alternative, the incumbent, or a value neither reported — is the head;
//!   every other contender is `contradicted`.
//! - **noop**: the head (or a named pending alternative) gains support.
//! - Whenever a contested head stops being the head other than by resolve
//!   (an accept, reject or revoke), its pending alternatives are moot and
//!   close as `superseded`.
//!
//! New heads go on top of the chain (above any retracted versions), so the
//! chain stays linear and acyclic: a rollback is a walk down `supersedes`.
//!
//! Every operation a caller states is checked against its cell as the
//! batch reaches it ([`Ledger::commit`]); one that cannot apply is refused
//! with [`Error::OpNotApplicable`] naming what the cell holds, and the
//! batch is put back whole.
//!
//! # Inferred operations
//! An operation the extractor inferred from cues (`Draft::inferred`) is
//! never refused; where it does not fit, the draft becomes what it would
//! have been without the cue, so a misread cue costs at most a plain
//! statement: a retraction (revoke or reject) whose cell is empty, or that
//! names a value the head does not hold, is stored as a keyless fact (never
//! as the value it retracts); a settling report on a cell that is not
//! contested, and hearsay on an empty cell or from the head's own
//! participants, are plain accepts.

use super::{Change, Draft, Ledger, Measures, Outcome};
use crate::error::{Error, Result};
use crate::fact::{FactId, Interval, Intervals, MAX_ALTERNATIVES, Op, Seq, Status};
use crate::time::WallTime;

impl Ledger {
    /// An inferred operation as it applies to its cell now: unchanged if it
    /// fits, else its fallback (see "Inferred operations").
    pub(super) fn settle(&self, mut d: Draft) -> Draft {
        if !d.inferred || d.op == Op::Accept {
            return d;
        }
        let from_elsewhere = || {
            let head = d.key.as_ref().and_then(|k| self.active_for_key(k));
            head.is_some_and(|h| {
                d.participants
                    .iter()
                    .any(|p| !h.body.participants().contains(p))
            })
        };
        let fits = self.precondition(&d).is_ok() && (d.op != Op::Contest || from_elsewhere());
        if !fits {
            // A retraction must not state the value it retracts; a
            // correction (reject with a value) states a value as plainly
            // as an accept.
            if d.op == Op::Revoke || (d.op == Op::Reject && d.value.is_none()) {
                d.key = None;
                d.value = None;
            }
            d.op = Op::Accept;
        }
        d
    }

    /// Whether one typed operation applies to its cell now.
    pub(super) fn precondition(&self, d: &Draft) -> Result<()> {
        let Some(key) = &d.key else {
            return Err(Error::OpNeedsKey(d.op));
        };
        let refuse = |reason: String| Error::OpNotApplicable {
            op: d.op,
            key: key.to_string(),
            reason,
        };
        if let Some(t) = d.target {
            let f = self.get(t).ok_or(Error::UnknownFact(t))?;
            if f.body.key.as_deref() != Some(key) {
                return Err(refuse(match &f.body.key {
                    Some(other) => format!("target {t} is a version of key {other}"),
                    None => format!("target {t} is a fact without a key"),
                }));
            }
        }
        let Some(&head) = self.active_by_key.get(key) else {
            return Err(refuse("the cell is empty (it has no current value)".into()));
        };
        let h = self.fact(head);
        // Built only for a refusal's message.
        let here = || {
            format!(
                "its current value is {:?} (fact {head}, {})",
                h.body.value().unwrap_or_default(),
                h.state.status.name()
            )
        };
        let pending = self.pending_alternatives(head);
        let value = d.value.as_deref();
        // Bounded: a head holds at most MAX_ALTERNATIVES alternatives.
        let named = |allowed: &[FactId]| match d.target {
            Some(t) if !allowed.contains(&t) => Err(refuse(format!(
                "target {t} is {}, not {}; {here}",
                self.fact(t).state.status.name(),
                if allowed.len() == 1 {
                    "the current value"
                } else {
                    "the current value or a pending alternative"
                },
                here = here(),
            ))),
            _ => Ok(()),
        };
        match d.op {
            Op::Accept => Ok(()),
            Op::Contest => {
                named(&[head])?;
                let restates = std::iter::once(head)
                    .chain(pending.iter().copied())
                    .any(|v| self.value_of(v) == value);
                if !restates && h.state.edges().alternatives.len() >= MAX_ALTERNATIVES {
                    return Err(refuse(format!(
                        "its current value already has {MAX_ALTERNATIVES} alternatives, the most one value collects: resolve it or state a new value; {here}",
                        here = here(),
                    )));
                }
                Ok(())
            }
            Op::Reject => {
                named(&[head])?;
                if value.is_some() && value == self.value_of(head) {
                    return Err(refuse(format!(
                        "it rejects the value with itself; {}",
                        here()
                    )));
                }
                Ok(())
            }
            Op::Revoke => {
                named(&[head])?;
                match value {
                    Some(v) if Some(v) != self.value_of(head) => Err(refuse(format!(
                        "the value to revoke is {v:?}, but {}",
                        here()
                    ))),
                    _ => Ok(()),
                }
            }
            Op::Resolve => {
                if h.state.status != Status::Contested {
                    return Err(refuse(format!("the cell is not contested; {}", here())));
                }
                let contenders: Vec<FactId> = std::iter::once(head).chain(pending).collect();
                named(&contenders)?;
                if d.target.is_none() && value.is_none() {
                    return Err(refuse(format!(
                        "name the value that holds, or the chosen alternative's fact id as target (alternatives: {:?}); {here}",
                        &contenders[1..],
                        here = here(),
                    )));
                }
                Ok(())
            }
            Op::Noop => {
                let contenders: Vec<FactId> = std::iter::once(head).chain(pending).collect();
                named(&contenders)?;
                let supported = d.target.unwrap_or(head);
                match value {
                    Some(v) if Some(v) != self.value_of(supported) => Err(refuse(format!(
                        "the value supported is {v:?}, but fact {supported} holds {:?}",
                        self.value_of(supported).unwrap_or_default()
                    ))),
                    _ => Ok(()),
                }
            }
        }
    }

    /// Applies a typed operation that [`Ledger::precondition`] accepted.
    pub(super) fn apply_typed(
        &mut self,
        draft: Draft,
        u: Seq,
        t: WallTime,
        changes: &mut Vec<Change>,
    ) -> Outcome {
        // Infallible: the precondition found a key with a current value.
        let head = draft
            .key
            .as_ref()
            .and_then(|k| self.active_by_key.get(k).copied())
            .expect("checked: a typed operation's cell has a head");
        match draft.op {
            Op::Contest => self.contest(draft, head, (u, t), changes),
            Op::Reject if draft.value.is_some() => {
                let sig = Measures::of(&draft.text, &draft.normalized);
                let fact = self.displace(draft, sig, head, Status::Contradicted, u, t, changes);
                Outcome::Rejected {
                    fact,
                    previous: head,
                    reinstated: None,
                }
            }
            Op::Reject => {
                let (fact, reinstated) =
                    self.retract(draft, head, Status::Contradicted, u, t, changes);
                Outcome::Rejected {
                    fact,
                    previous: head,
                    reinstated,
                }
            }
            Op::Revoke => {
                let (fact, reinstated) = self.retract(draft, head, Status::Revoked, u, t, changes);
                Outcome::Revoked {
                    fact,
                    previous: head,
                    reinstated,
                }
            }
            Op::Resolve => self.resolve(draft, head, u, t, changes),
            // `apply` routes accept elsewhere; folding it in here keeps the
            // match total without a panic path.
            Op::Noop | Op::Accept => {
                let fact = draft.target.unwrap_or(head);
                let previous = self.fact(fact).state.last_observed;
                self.support(fact, &draft, changes, previous);
                Outcome::Supported { fact }
            }
        }
    }

    fn contest(
        &mut self,
        draft: Draft,
        head: FactId,
        (u, t): (Seq, WallTime),
        changes: &mut Vec<Change>,
    ) -> Outcome {
        let value = draft.value.as_deref();
        let restated = std::iter::once(head)
            .chain(self.pending_alternatives(head))
            .find(|v| self.value_of(*v) == value);
        if let Some(fact) = restated {
            self.reobserve(fact, &draft, changes);
            return Outcome::Reobserved { fact };
        }
        let alt = self.new_fact(draft, Intervals::new(), Status::Alternative);
        self.log_created(alt, u, t);
        self.fact_mut(alt).state.edges_mut().alternative_of = Some(head);
        self.fact_mut(head).state.edges_mut().alternatives.push(alt);
        self.set_status(head, Status::Contested, u, t);
        changes.push(Change::Recorded(alt));
        Outcome::Contested {
            fact: alt,
            incumbent: head,
        }
    }

    /// Retracts the head with `status` behind a tombstone (the draft) and
    /// reinstates its predecessor; returns the tombstone and what reopened.
    fn retract(
        &mut self,
        draft: Draft,
        head: FactId,
        status: Status,
        u: Seq,
        t: WallTime,
        changes: &mut Vec<Change>,
    ) -> (FactId, Option<FactId>) {
        let reinstated = self.rollback_target(head);
        self.close_alternatives(head, Status::Superseded, u, t);
        self.deactivate(head, status, u, t, changes);
        let tombstone = self.new_fact(draft, Intervals::new(), Status::Tombstone);
        self.log_created(tombstone, u, t);
        self.fact_mut(tombstone).state.edges_mut().revokes = Some(head);
        self.fact_mut(head).state.edges_mut().revoked_by = Some(tombstone);
        changes.push(Change::Recorded(tombstone));
        if let Some(p) = reinstated {
            self.reactivate(p, u, t, changes);
        }
        (tombstone, reinstated)
    }

    fn resolve(
        &mut self,
        draft: Draft,
        head: FactId,
        u: Seq,
        t: WallTime,
        changes: &mut Vec<Change>,
    ) -> Outcome {
        let pending = self.pending_alternatives(head);
        let chosen = draft.target.or_else(|| {
            std::iter::once(head)
                .chain(pending.iter().copied())
                .find(|v| self.value_of(*v) == draft.value.as_deref())
        });
        let mut contradicted: Vec<FactId> = Vec::new();
        for &a in &pending {
            if Some(a) != chosen {
                self.set_status(a, Status::Contradicted, u, t);
                contradicted.push(a);
            }
        }
        match chosen {
            Some(fact) if fact == head => {
                self.set_status(head, Status::Active, u, t);
                let previous = self.fact(head).state.last_observed;
                self.support(head, &draft, changes, previous);
                Outcome::Resolved { fact, contradicted }
            }
            Some(fact) => {
                let below = self.insertion_point(head, None);
                self.deactivate(head, Status::Contradicted, u, t, changes);
                contradicted.insert(0, head);
                self.fact_mut(head)
                    .state
                    .edges_mut()
                    .alternatives
                    .retain(|a| *a != fact);
                self.fact_mut(fact).state.edges_mut().alternative_of = None;
                self.link_above(fact, below);
                self.reactivate(fact, u, t, changes);
                let previous = self.fact(fact).state.last_observed;
                self.support(fact, &draft, changes, previous);
                Outcome::Resolved { fact, contradicted }
            }
            None => {
                let sig = Measures::of(&draft.text, &draft.normalized);
                let fact = self.displace(draft, sig, head, Status::Contradicted, u, t, changes);
                contradicted.insert(0, head);
                Outcome::Resolved { fact, contradicted }
            }
        }
    }

    /// What a retraction of `head` reinstates: the newest older version of
    /// the chain that was not retracted, unless the walk meets a
    /// `rollback_stop` first.
    pub(super) fn rollback_target(&self, head: FactId) -> Option<FactId> {
        let mut at = head;
        loop {
            let state = &self.fact(at).state;
            if state.rollback_stop {
                return None;
            }
            let older = state.supersedes.get()?;
            if !self.fact(older).state.status.is_retracted() {
                return Some(older);
            }
            at = older;
        }
    }

    /// The newest version at or below `top` that was not retracted.
    pub(super) fn newest_unretracted(&self, top: FactId) -> Option<FactId> {
        let mut at = Some(top);
        while let Some(v) = at {
            let state = &self.fact(v).state;
            if !state.status.is_retracted() {
                return Some(v);
            }
            at = state.supersedes.get();
        }
        None
    }

    /// Reopens a retained version as its key's head.
    fn reactivate(&mut self, id: FactId, u: Seq, t: WallTime, changes: &mut Vec<Change>) {
        self.set_status(id, Status::Active, u, t);
        self.fact_mut(id).state.intervals.push(Interval::open(u, t));
        self.index_by_status(id);
        changes.push(Change::Activated(id));
    }

    /// The alternatives of `head` still pending, in arrival order.
    pub(super) fn pending_alternatives(&self, head: FactId) -> Vec<FactId> {
        self.fact(head)
            .state
            .edges()
            .alternatives
            .iter()
            .copied()
            .filter(|a| {
                self.get(*a)
                    .is_some_and(|f| f.state.status == Status::Alternative)
            })
            .collect()
    }

    /// Closes the pending alternatives of `head` with `status`.
    pub(super) fn close_alternatives(&mut self, head: FactId, status: Status, u: Seq, t: WallTime) {
        for a in self.pending_alternatives(head) {
            self.set_status(a, status, u, t);
        }
    }
}
