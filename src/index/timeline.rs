//! The timeline: every retained fact as the ledger held it at one commit,
//! frozen into each [`IndexVersion`](super::IndexVersion) so the reads that
//! need the ledger's past or a fact's state (as-of retrieval, a fact with
//! its history) are pure functions of a published version and never wait
//! for the writer.
//!
//! # Invariants
//! 1. The timeline of a version at commit `seq` holds exactly the facts the
//!    ledger retained at `seq`, each with the body and state it had after
//!    the last commit that wrote it (erased facts are gone, past views
//!    included).
//! 2. A clone is O(1) and an update copies one path of the persistent vector,
//!    so versions share every fact a commit did not touch, and they share
//!    each fact with the ledger itself (one copy per fact, until a write).
//!
//! Established by `Memory`'s commit path; checked against the ledger by
//! `tests/prop_ledger.rs`.

use std::sync::Arc;

use super::segment::DocInput;
use crate::error::Result;
use crate::fact::{Fact, FactId, Key, Status};
use crate::graph::Graph;
use crate::ledger::{AsOf, history_in, names_of, related_in};
use crate::pmap::PMap;

/// The retained facts of one version.
///
/// A persistent vector indexed by fact id (ids are dense, given in
/// creation order), not a hash map: a HAMT's sparse leaves cost ~370 bytes
/// per fact at 100,000 facts, a dense vector 8.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// By id; `None` for an erased fact (or one not yet recorded).
    facts: imbl::Vector<Option<Arc<Fact>>>,
    /// How many are `Some`.
    retained: usize,
    /// Key → every plan it has had (staged `Pending`, perhaps since
    /// `Confirmed` or `Abandoned`), oldest first: what a block discloses as
    /// planned, now or as of a past point, and a fact read lists. Plans are
    /// rare, so this map is small.
    plans: PMap<Key, Vec<FactId>>,
}

impl Timeline {
    /// Records `fact` as the ledger holds it now, sharing it with the
    /// ledger. A no-op when the timeline already holds that very fact: the
    /// ledger copies a shared fact before writing to it, so the same
    /// pointer means the same contents.
    pub fn record(&mut self, fact: &Arc<Fact>) {
        let i = fact.id().0 as usize;
        while self.facts.len() <= i {
            self.facts.push_back(None);
        }
        match &self.facts[i] {
            Some(held) if Arc::ptr_eq(held, fact) => return,
            held => self.retained += usize::from(held.is_none()),
        }
        self.facts.set(i, Some(fact.clone()));
        // A plan is staged `Pending`: listed then, it stays listed.
        if fact.state.status == Status::Pending
            && let Some(key) = &fact.body.key
            && !self.plans(key).contains(&fact.id())
        {
            self.list_plan(key, fact.id(), true);
        }
    }

    /// Adds a plan to its key's list, or takes it off.
    fn list_plan(&mut self, key: &Key, id: FactId, listed: bool) {
        let mut plans = self.plans.get(key).cloned().unwrap_or_default();
        plans.retain(|p| *p != id);
        if listed {
            plans.push(id);
            plans.sort_unstable();
        }
        if plans.is_empty() {
            self.plans.remove(key);
        } else {
            self.plans.insert(key.clone(), plans);
        }
    }

    /// Every plan a key has had, pending or settled, oldest first.
    pub fn plans(&self, key: &Key) -> &[FactId] {
        self.plans.get(key).map(Vec::as_slice).unwrap_or(&[])
    }

    /// A key's plans pending now (`at` = `None`) or as of a past point,
    /// oldest first.
    pub fn pending_plans(&self, key: &Key, at: Option<AsOf>) -> impl Iterator<Item = &Fact> {
        self.plans(key)
            .iter()
            .filter_map(|p| self.get(*p))
            .filter(move |p| {
                let status = at.map_or(Some(p.state.status), |at| at.status(&p.state));
                status == Some(Status::Pending)
            })
    }

    /// Forgets an erased fact.
    pub fn erase(&mut self, id: FactId) {
        let i = id.0 as usize;
        if let Some(Some(held)) = self.facts.get(i) {
            if let Some(key) = held.body.key.clone()
                && self.plans(&key).contains(&id)
            {
                self.list_plan(&key, id, false);
            }
            self.facts.set(i, None);
            self.retained -= 1;
        }
    }

    /// How many retained facts the timeline holds.
    pub fn len(&self) -> usize {
        self.retained
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.retained == 0
    }

    /// A retained fact.
    pub fn get(&self, id: FactId) -> Option<&Fact> {
        self.facts.get(id.0 as usize).and_then(Option::as_deref)
    }

    /// The newest retained fact filed under `key` whose [`history`] is
    /// the key's chain (a version, an alternative or a tombstone), else its
    /// newest pending plan (a key with plans only). A scan from the newest
    /// fact back, so O(retained facts) for a key with none: for reads that
    /// name a key (MCP's `history` tool), never on the retrieval path.
    ///
    /// [`history`]: Timeline::history
    pub fn newest_of(&self, key: &Key) -> Option<FactId> {
        let mut plan = None;
        for f in self.facts.iter().rev().flatten() {
            if f.body.key.as_deref() != Some(key) {
                continue;
            }
            if f.state.status != Status::Pending {
                return Some(f.id());
            }
            plan = plan.or(Some(f.id()));
        }
        plan
    }

    /// A fact's version history, newest first (as [`Ledger::history`]).
    ///
    /// [`Ledger::history`]: crate::ledger::Ledger::history
    pub fn history(&self, id: FactId) -> Result<Vec<&Fact>> {
        history_in(|id| self.get(id), id)
    }

    /// The alternatives and tombstones hanging off a history's versions
    /// (see [`related_in`]).
    pub fn related(&self, history: &[&Fact]) -> Vec<&Fact> {
        related_in(|id| self.get(id), history)
    }

    /// The facts active at `at`, in id order (the ledger's order), as index
    /// inputs with their graph nodes in `graph`.
    pub fn active_at(&self, at: AsOf, graph: &Graph) -> Vec<DocInput> {
        self.facts
            .iter()
            .flatten()
            .filter(|f| at.holds(&f.state))
            .map(|f| {
                let names = names_of(&f.body);
                DocInput::of(f, names.iter().filter_map(|n| graph.node(n)).collect())
            })
            .collect()
    }
}
