//! Taking facts out of the active view: retention pruning (retire, keep as
//! history) and erasure (remove for good, history and all).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Change, Commit, Ledger};
use crate::error::{Error, Result};
use crate::fact::{Fact, FactId, Key, Seq, Status, name_key};
use crate::time::WallTime;

/// What to erase.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Forget {
    /// A fact and, if it is keyed, every version of its key.
    Fact(FactId),
    /// Every version of a key.
    Key(Key),
    /// Every fact that names an entity (as entity or participant). Keys owned
    /// by the entity go with their whole history; a version of another key
    /// that merely mentions the entity is cut out of its chain, and if it was
    /// current the key is left with no current value (never a reinstated
    /// stale one).
    Entity(String),
}

impl Ledger {
    /// Retention score of a fact at `at`: its recency decay
    /// `2^-(at - s_f)/T_rec` plus `η · U/(1+U)` for its decayed usage `U`.
    /// A fact that is neither recent nor used scores near zero.
    pub fn retention(&self, fact: &Fact, at: WallTime) -> f64 {
        let s = &self.score;
        let age = at.days_since(fact.state.last_observed).max(0.0);
        let decay = (-age / s.recency_half_life_days).exp2();
        let usage = fact.state.extras.usage().at(at, s.usage_half_life_days);
        decay + f64::from(s.usage_weight) * usage / (1.0 + usage)
    }

    /// Retires current keyless facts whose retention at `at` is below the
    /// threshold. The current fact of a key is never pruned.
    pub fn prune(&mut self, at: WallTime, threshold: f64) -> Commit {
        let u = self.seq + 1;
        let t = self.committed_at.max(at);
        let doomed: Vec<FactId> = self
            .active()
            .filter(|f| f.body.key.is_none() && self.retention(f, at) < threshold)
            .map(Fact::id)
            .collect();
        let mut commit = Commit {
            seq: u,
            ..Commit::default()
        };
        for id in doomed {
            self.deactivate(id, Status::Pruned, u, t, &mut commit.changes);
        }
        self.finish(&mut commit, t);
        commit
    }

    /// Erases facts for good: from the ledger, their history and (through the
    /// returned changes) every index. Returns the commit; its changes list
    /// one `Erased` per fact removed.
    pub fn forget(&mut self, what: &Forget, at: WallTime) -> Result<Commit> {
        let versions = |key: &Key| -> Vec<FactId> { self.versions_by_key.get(key).to_vec() };
        let doomed: Vec<FactId> = match what {
            Forget::Fact(id) => {
                let fact = self.get(*id).ok_or(Error::UnknownFact(*id))?;
                match &fact.body.key {
                    Some(key) => versions(key),
                    None => vec![*id],
                }
            }
            Forget::Key(key) => versions(key),
            Forget::Entity(name) => {
                let name = name_key(name);
                let mut ids = Vec::new();
                for id in self.facts_naming(&name) {
                    match &self.fact(id).body.key {
                        Some(key) if *key.entity == *name => {
                            ids.extend_from_slice(self.versions_by_key.get(key))
                        }
                        _ => ids.push(id),
                    }
                }
                ids
            }
        };
        let mut doomed = self.with_dependents(doomed);
        doomed.sort();
        doomed.dedup();
        let u = self.seq + 1;
        let t = self.committed_at.max(at);
        let mut commit = Commit {
            seq: u,
            ..Commit::default()
        };
        for id in doomed {
            self.erase(id, (u, t), &mut commit.changes);
        }
        self.finish(&mut commit, t);
        Ok(commit)
    }

    /// `doomed` and everything whose meaning rests on a doomed fact: the
    /// alternatives that contested it and the tombstone of its retraction
    /// (a contest or a retraction quotes the value it is about).
    fn with_dependents(&self, mut doomed: Vec<FactId>) -> Vec<FactId> {
        let mut i = 0;
        while i < doomed.len() {
            if let Some(f) = self.get(doomed[i]) {
                let edges = f.state.edges();
                doomed.extend(edges.alternatives.iter().copied());
                doomed.extend(edges.revoked_by);
            }
            i += 1;
        }
        doomed
    }

    /// Removes one fact: a chain version is spliced out (a rollback never
    /// crosses the cut: see `rollback_stop`), an alternative leaves its
    /// head (which is no longer contested once none is pending), a
    /// tombstone leaves the version it retracted.
    fn erase(&mut self, id: FactId, (u, t): (Seq, WallTime), changes: &mut Vec<Change>) {
        self.unindex_by_status(id);
        self.unlist(id);
        let fact = self.facts[id.0 as usize]
            .take()
            .expect("erase is called with retained facts only");
        let state = &fact.state;
        if state.on_chain() {
            let (older, newer) = (state.supersedes.get(), state.superseded_by.get());
            let cut = state.rollback_stop || !state.status.is_retracted();
            if let Some(o) = older.filter(|o| self.get(*o).is_some()) {
                self.fact_mut(o).state.superseded_by = newer.into();
            }
            if let Some(n) = newer.filter(|n| self.get(*n).is_some()) {
                let s = &mut self.fact_mut(n).state;
                s.supersedes = older.into();
                s.rollback_stop |= cut;
            }
        }
        if let Some(head) = state
            .edges()
            .alternative_of
            .filter(|h| self.get(*h).is_some())
        {
            self.fact_mut(head)
                .state
                .edges_mut()
                .alternatives
                .retain(|a| *a != id);
            if self.fact(head).state.status == Status::Contested
                && self.pending_alternatives(head).is_empty()
            {
                self.set_status(head, Status::Active, u, t);
            }
        }
        if let Some(v) = state.edges().revokes.filter(|v| self.get(*v).is_some()) {
            self.fact_mut(v).state.edges_mut().revoked_by = None;
        }
        changes.push(Change::Erased(Arc::clone(&fact.body)));
    }
}
