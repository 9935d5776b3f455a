//! The speculation gate's staging (AgentMemGate, Section 3): a keyed
//! statement the gate reads as a speculation (`fact::Kind`) is a *plan*,
//! held as a pending version of its key — off the chain, never current, in
//! no block — until later evidence settles it.
//!
//! # Rules
//! - **stage**: a speculation of `(key, value)` becomes a `Pending` fact of
//!   the key (restating a pending value is support for it). A key holds at
//!   most `MAX_ALTERNATIVES` plans; past that the statement is kept as a
//!   keyless fact, never as a value.
//! - **confirm**: when a statement makes `value` the key's current value
//!   (or restates it), the key's plan of that value is `Confirmed`: the
//!   statement that confirmed it is the head, stated when the confirmation
//!   was, and the receipt says `promoted`. A completed statement of the
//!   key with no value ("the move went through") comes here with the value
//!   of the key's one plan, if it has exactly one (`Memory`'s drafting,
//!   which also appends that value to the statement's text).
//! - **abandon**: an abandonment ("decided not to", "fell through",
//!   "staying in X after all") retires the key's plans of the value it
//!   names, or all of them when it names none of theirs (`Abandoned`, kept
//!   as history); so does a completed change or a correction to a
//!   different value. An abandonment never commits a value: the statement
//!   is kept as a keyless fact.
//!
//! Proposition 1 is untouched: plans are never current, so a key still has
//! at most one current value (`Ledger::verify` checks that plans are off
//! the chain and inactive, and that `pending_by_key` lists exactly them).

use super::{Change, Draft, Ledger, Outcome};
use crate::fact::{Fact, FactId, Intervals, Key, Kind, MAX_ALTERNATIVES, Seq, Status};
use crate::time::WallTime;

impl Ledger {
    /// The key's pending plans, oldest first.
    pub fn pending_plans(&self, key: &Key) -> &[FactId] {
        self.pending_by_key.get(key)
    }

    /// The pending plans of a keyed draft's key.
    fn plans_of(&self, draft: &Draft) -> Vec<FactId> {
        // Infallible: `apply` stages and abandons with keyed drafts only.
        let key = draft.key.as_ref().expect("a plan's statement is keyed");
        self.pending_plans(key).to_vec()
    }

    /// Stages a speculation (see "stage").
    pub(super) fn stage(
        &mut self,
        draft: Draft,
        u: Seq,
        t: WallTime,
        changes: &mut Vec<Change>,
    ) -> Outcome {
        let plans = self.plans_of(&draft);
        if let Some(&plan) = plans
            .iter()
            .find(|p| self.value_of(**p) == draft.value.as_deref())
        {
            self.reobserve(plan, &draft, changes);
            return Outcome::Reobserved { fact: plan };
        }
        if plans.len() >= MAX_ALTERNATIVES {
            return self.keep_keyless(draft, u, t, changes);
        }
        let fact = self.new_fact(draft, Intervals::new(), Status::Pending);
        self.log_created(fact, u, t);
        self.index_pending(fact);
        changes.push(Change::Recorded(fact));
        Outcome::Staged { fact }
    }

    /// Applies an abandonment (see "abandon").
    pub(super) fn abandon(
        &mut self,
        draft: Draft,
        u: Seq,
        t: WallTime,
        changes: &mut Vec<Change>,
    ) -> Outcome {
        let plans = self.plans_of(&draft);
        let named: Vec<FactId> = plans
            .iter()
            .copied()
            .filter(|p| self.value_of(*p) == draft.value.as_deref())
            .collect();
        let doomed = if named.is_empty() { plans } else { named };
        for &p in &doomed {
            self.set_status(p, Status::Abandoned, u, t);
        }
        let kept = self.keep_keyless(draft, u, t, changes);
        if doomed.is_empty() {
            return kept;
        }
        Outcome::Abandoned {
            fact: kept.fact(),
            plans: doomed,
        }
    }

    /// After a keyed statement: confirms the key's plan of `value` if the
    /// statement left it current, and for a completed change or a
    /// correction abandons the plans of other values (see "confirm").
    pub(super) fn settle_plans(
        &mut self,
        key: &Key,
        value: &str,
        kind: Kind,
        outcome: Outcome,
        (u, t): (Seq, WallTime),
    ) -> Outcome {
        let plans = self.pending_plans(key).to_vec();
        let current = self.active_for_key(key).map(Fact::id);
        if plans.is_empty() || current.is_none_or(|c| self.value_of(c) != Some(value)) {
            return outcome;
        }
        let mut confirmed = None;
        for p in plans {
            if self.value_of(p) == Some(value) {
                self.set_status(p, Status::Confirmed, u, t);
                confirmed = Some(p);
            } else if matches!(kind, Kind::Completed | Kind::Correction) {
                self.set_status(p, Status::Abandoned, u, t);
            }
        }
        match (confirmed, current) {
            (Some(plan), Some(fact)) => Outcome::Promoted {
                fact,
                plan,
                previous: outcome.previous(),
            },
            _ => outcome,
        }
    }

    /// Keeps a statement's text as a keyless fact (it states no value the
    /// store should hold).
    fn keep_keyless(
        &mut self,
        mut draft: Draft,
        u: Seq,
        t: WallTime,
        changes: &mut Vec<Change>,
    ) -> Outcome {
        draft.key = None;
        draft.value = None;
        draft.kind = Kind::Other;
        self.accept(draft, u, t, changes)
    }

    /// Lists a pending plan under its key.
    pub(super) fn index_pending(&mut self, id: FactId) {
        if let Some(key) = self.fact(id).body.key.clone() {
            self.pending_by_key.push(key, id);
        }
    }

    /// Takes a plan off its key's pending list.
    pub(super) fn unindex_pending(&mut self, id: FactId) {
        if let Some(key) = self.fact(id).body.key.clone() {
            self.pending_by_key.remove(&key, id);
        }
    }
}
