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
//! 2. A clone is O(1) and an update copies one path of the persistent map,
//!    so versions share every fact a commit did not touch.
//!
//! Established by `Memory`'s commit path; checked against the ledger by
//! `tests/prop_ledger.rs`.

use std::sync::Arc;

use super::segment::{DocAttrs, DocInput};
use crate::error::Result;
use crate::fact::{Fact, FactId};
use crate::graph::Graph;
use crate::ledger::{AsOf, history_in, names_of};
use crate::pmap::PMap;

/// The retained facts of one version.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    facts: PMap<FactId, Arc<Fact>>,
}

impl Timeline {
    /// Records `fact` as the ledger holds it now (a no-op when it is
    /// unchanged, so unchanged facts stay shared between versions).
    pub fn record(&mut self, fact: &Fact) {
        let same = |held: &Arc<Fact>| {
            // Bodies are shared with the ledger and never rewritten.
            Arc::ptr_eq(&held.body, &fact.body) && held.state == fact.state
        };
        if !self.facts.get(&fact.id()).is_some_and(same) {
            self.facts.insert(fact.id(), Arc::new(fact.clone()));
        }
    }

    /// Forgets an erased fact.
    pub fn erase(&mut self, id: FactId) {
        self.facts.remove(&id);
    }

    /// How many retained facts the timeline holds.
    pub fn len(&self) -> usize {
        self.facts.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.facts.is_empty()
    }

    /// A retained fact.
    pub fn get(&self, id: FactId) -> Option<&Fact> {
        self.facts.get(&id).map(|f| &**f)
    }

    /// A fact's version history, newest first (as [`Ledger::history`]).
    ///
    /// [`Ledger::history`]: crate::ledger::Ledger::history
    pub fn history(&self, id: FactId) -> Result<Vec<&Fact>> {
        history_in(|id| self.get(id), id)
    }

    /// The facts active at `at`, in id order (the ledger's order), as index
    /// inputs with their graph nodes in `graph`.
    pub fn active_at(&self, at: AsOf, graph: &Graph) -> Vec<DocInput> {
        let mut active: Vec<&Fact> = self
            .facts
            .values()
            .map(|f| &**f)
            .filter(|f| at.holds(&f.state))
            .collect();
        active.sort_unstable_by_key(|f| f.id());
        active
            .into_iter()
            .map(|f| DocInput {
                body: f.body.clone(),
                attrs: DocAttrs {
                    last_observed: f.state.last_observed,
                    usage: f.state.usage,
                },
                nodes: names_of(&f.body)
                    .iter()
                    .filter_map(|n| graph.node(n))
                    .collect(),
            })
            .collect()
    }
}
