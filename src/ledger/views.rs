//! Read views over the ledger: as-of views, a key's history, and `verify`,
//! the ledger's consistency check.

use std::collections::HashSet;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::{Ledger, names_of};
use crate::config::ChainOrder;
use crate::error::{Error, Result};
use crate::fact::{Fact, FactId, FactState, Key, Op, Status};
use crate::time::WallTime;

/// A point in transaction time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AsOf {
    /// Just after the commit with this sequence number.
    Seq(u64),
    /// At this wall time of the commit clock.
    Time(WallTime),
}

impl AsOf {
    /// Whether a fact in `state` was active at this point.
    pub fn holds(self, state: &FactState) -> bool {
        match self {
            AsOf::Seq(u) => state.active_at_seq(u),
            AsOf::Time(t) => state.active_at_time(t),
        }
    }

    /// The status a fact in `state` had at this point (`None`: not yet).
    pub fn status(self, state: &FactState) -> Option<Status> {
        match self {
            AsOf::Seq(u) => state.status_at(u),
            AsOf::Time(t) => state.status_at_time(t),
        }
    }
}

/// A fact's version history, newest first, over any view of retained facts
/// (`get`): the newest version reachable along `superseded_by`, then back
/// along `supersedes`. For an alternative or a tombstone, the history of the
/// chain it hangs off.
pub fn history_in<'a>(
    get: impl Fn(FactId) -> Option<&'a Fact>,
    id: FactId,
) -> Result<Vec<&'a Fact>> {
    let mut head = get(id).ok_or(Error::UnknownFact(id))?;
    let edges = head.state.edges();
    if let Some(anchor) = edges.alternative_of.or(edges.revokes).and_then(&get) {
        head = anchor;
    }
    while let Some(newer) = head.state.superseded_by.get().and_then(&get) {
        head = newer;
    }
    let mut chain = vec![head];
    while let Some(older) = chain[chain.len() - 1].state.supersedes.get().and_then(&get) {
        chain.push(older);
    }
    Ok(chain)
}

/// What hangs off a history's versions: their alternatives (pending or
/// settled) and the tombstones of their retractions, oldest first.
pub fn related_in<'a>(
    get: impl Fn(FactId) -> Option<&'a Fact>,
    history: &[&Fact],
) -> Vec<&'a Fact> {
    let mut related: Vec<&Fact> = history
        .iter()
        .flat_map(|v| {
            let e = v.state.edges();
            e.alternatives.iter().copied().chain(e.revoked_by)
        })
        .filter_map(get)
        .collect();
    related.sort_by_key(|f| f.id());
    related
}

impl Ledger {
    /// The facts that were active at `at` (transaction time), oldest first.
    ///
    /// Erased facts are gone from every view, past ones included.
    pub fn active_as_of(&self, at: AsOf) -> Vec<&Fact> {
        self.facts().filter(|f| at.holds(&f.state)).collect()
    }

    /// A fact's version history, newest first: for a keyed fact every version
    /// of its key along the `supersedes` chain; for a keyless fact itself.
    pub fn history(&self, id: FactId) -> Result<Vec<&Fact>> {
        history_in(|id| self.get(id), id)
    }

    /// Checks every invariant listed in the module documentation; returns a
    /// description of the first violation.
    pub fn verify(&self) -> std::result::Result<(), String> {
        self.check(true)
    }

    /// [`Ledger::verify`] after [`Ledger::restore`]: the invariants of the
    /// stored facts themselves (intervals, one current value per key,
    /// chains and their order, provenance edges, the key index), not the
    /// lookup maps derived from them (the name and plan indexes; the
    /// admission maps wait for the first commit), which restore has just
    /// built from those same facts with the functions every commit uses:
    /// deriving them a second
    /// time would only ask whether those functions are deterministic, at a
    /// fifth of an open's time. `verify` checks them, after restores too, in
    /// `tests/prop_ledger.rs`.
    pub(super) fn verify_restored(&self) -> std::result::Result<(), String> {
        self.check(false)
    }

    /// The invariants; with `derived`, also the lookup maps derived from
    /// the facts, each signature recomputed from its text.
    fn check(&self, derived: bool) -> std::result::Result<(), String> {
        let mut current_per_key: FxHashMap<&Key, FactId> = FxHashMap::default();
        for f in self.facts() {
            let id = f.id();
            if f.state.is_current() {
                if f.state.intervals.last().is_none_or(|i| i.to().is_some()) {
                    return Err(format!("{id} is current but has no open interval"));
                }
                if let Some(key) = &f.body.key
                    && let Some(other) = current_per_key.insert(key, id)
                {
                    return Err(format!("key {key} has two current facts: {other} and {id}"));
                }
            } else if f.state.intervals.iter().any(|i| i.to().is_none()) {
                return Err(format!(
                    "{id} is {:?} but has an open interval",
                    f.state.status
                ));
            }
            for w in f.state.intervals.windows(2) {
                if w[0].to().is_none_or(|(to, _)| to > w[1].from()) {
                    return Err(format!("{id} has overlapping intervals"));
                }
            }
            self.verify_edges(f)?;
            if let Some(o) = f.state.supersedes.get() {
                let older = self
                    .get(o)
                    .ok_or_else(|| format!("{id} supersedes erased {o}"))?;
                if older.state.superseded_by != Some(id) {
                    return Err(format!(
                        "{id} supersedes {o}, but {o} is not superseded by {id}"
                    ));
                }
                if older.body.key != f.body.key {
                    return Err(format!("{id} supersedes {o} of another key"));
                }
                // Event-time order binds the plain statements of a chain;
                // a typed operation's value goes on top whenever it was
                // stated, and retracted versions are out of the order. A
                // statement placed above a typed version was ordered against
                // it, so once that version is erased (a cut: erasure splices,
                // never re-sorts) the two plain versions it separated may
                // stand out of stated order.
                let plain =
                    |f: &Fact| f.state.entered_by == Op::Accept && !f.state.status.is_retracted();
                let ordered = match self.ordering {
                    ChainOrder::Arrival => o < id || f.state.intervals.is_empty(),
                    ChainOrder::EventTime => {
                        !(plain(f) && plain(older))
                            || older.body.stated_at <= f.body.stated_at
                            || f.state.rollback_stop
                    }
                };
                if !ordered {
                    return Err(format!("{id} supersedes {o} out of order"));
                }
            }
            if let Some(n) = f.state.superseded_by.get()
                && self.get(n).and_then(|n| n.state.supersedes.get()) != Some(id)
            {
                return Err(format!(
                    "{id} is superseded by {n}, which does not supersede it"
                ));
            }
        }
        for (key, versions) in self.versions_by_key.iter() {
            self.verify_cell(key, versions)?;
            if self
                .keys_of(&key.entity)
                .iter()
                .filter(|k| *k == key)
                .count()
                != 1
            {
                return Err(format!("keys_by_entity does not list {key} once"));
            }
        }
        let listed: usize = self.keys_by_entity.values().map(|keys| keys.len()).sum();
        if listed != self.versions_by_key.len() {
            return Err("keys_by_entity lists a key with no retained version".into());
        }
        if derived {
            self.check_derived(&current_per_key)?;
        }
        Ok(())
    }

    /// The lookup maps against a second derivation from the facts.
    fn check_derived(
        &self,
        current_per_key: &FxHashMap<&Key, FactId>,
    ) -> std::result::Result<(), String> {
        let mut expected_hash: FxHashMap<u32, HashSet<FactId>> = FxHashMap::default();
        let mut expected_names: FxHashMap<crate::names::Name, HashSet<FactId>> =
            FxHashMap::default();
        for f in self.facts() {
            for n in names_of(&f.body) {
                expected_names.entry(n).or_default().insert(f.id());
            }
            if f.state.is_current() {
                if self.admission_built {
                    let measures = super::measures_of(&f.body);
                    if self.signatures.get(f.id()) != Some(&measures.signature) {
                        return Err(format!("{} has no or a stale admission signature", f.id()));
                    }
                    expected_hash
                        .entry(measures.text)
                        .or_default()
                        .insert(f.id());
                }
                if let Some(key) = &f.body.key
                    && self.active_by_key.get(key) != Some(&f.id())
                {
                    return Err(format!("active_by_key misses {}", f.id()));
                }
            }
        }
        let signed = if self.admission_built {
            self.active().count()
        } else if !self.absorb_buckets.is_empty() {
            return Err("absorption buckets list facts before admission is built".into());
        } else {
            0
        };
        if self.signatures.len() != signed {
            return Err("signatures list a fact that is not current".into());
        }
        if self.active_by_key.len() != current_per_key.len() {
            return Err("active_by_key lists a fact that is not current".into());
        }
        let actual_hash: FxHashMap<u32, HashSet<FactId>> = self
            .active_by_hash
            .iter()
            .map(|(h, ids)| (h, ids.collect()))
            .collect();
        if actual_hash != expected_hash {
            return Err("active_by_hash is out of date".into());
        }
        let actual_names: FxHashMap<crate::names::Name, HashSet<FactId>> = self
            .facts_by_name
            .entries()
            .map(|(n, ids)| (n.clone(), ids.into_iter().collect()))
            .collect();
        if actual_names != expected_names {
            return Err("facts_by_name is out of date".into());
        }
        let mut expected_pending: FxHashMap<&Key, Vec<FactId>> = FxHashMap::default();
        for f in self.facts().filter(|f| f.state.status == Status::Pending) {
            let key = f
                .body
                .key
                .as_ref()
                .ok_or_else(|| format!("plan {} has no key", f.id()))?;
            expected_pending.entry(key).or_default().push(f.id());
        }
        let mut actual_pending: FxHashMap<&Key, Vec<FactId>> = FxHashMap::default();
        for (key, plans) in self.pending_by_key.iter() {
            let mut plans = plans.to_vec();
            plans.sort();
            actual_pending.insert(key, plans);
        }
        if actual_pending != expected_pending {
            return Err("pending_by_key is out of date".into());
        }
        Ok(())
    }

    /// The provenance edges of one fact, each with its reverse: an
    /// alternative hangs off a chain version of its key (a pending one off
    /// the contested head), a tombstone off the retracted version it names;
    /// neither is ever current or linked into the chain.
    fn verify_edges(&self, f: &Fact) -> std::result::Result<(), String> {
        let (id, s, e) = (f.id(), &f.state, f.state.edges());
        let anchor = |a: FactId, what: &str| -> std::result::Result<&Fact, String> {
            let a = self
                .get(a)
                .ok_or_else(|| format!("{id} is {what} erased {a}"))?;
            if a.body.key != f.body.key || !a.state.on_chain() {
                return Err(format!(
                    "{id} is {what} {}, not a version of its key's chain",
                    a.id()
                ));
            }
            Ok(a)
        };
        if !s.on_chain() {
            if f.body.key.is_none() || s.is_current() || !s.intervals.is_empty() {
                return Err(format!(
                    "{id} hangs off a chain but is keyless, current or was active"
                ));
            }
            if s.supersedes.is_some() || s.superseded_by.is_some() {
                return Err(format!("{id} hangs off a chain but is linked into it"));
            }
        }
        if let Some(h) = e.alternative_of {
            let head = anchor(h, "an alternative of")?;
            if !head.state.edges().alternatives.contains(&id) {
                return Err(format!(
                    "{id} is an alternative of {h}, which does not list it"
                ));
            }
            let settled = matches!(s.status, Status::Superseded | Status::Contradicted);
            if s.status == Status::Alternative {
                if head.state.status != Status::Contested {
                    return Err(format!(
                        "{id} is pending against {h}, which is not contested"
                    ));
                }
            } else if !settled {
                return Err(format!("alternative {id} is {:?}", s.status));
            }
        } else if s.status == Status::Alternative {
            return Err(format!("{id} is an alternative of nothing"));
        }
        for &a in &e.alternatives {
            if self
                .get(a)
                .is_none_or(|a| a.state.edges().alternative_of != Some(id))
            {
                return Err(format!(
                    "{id} lists {a} as an alternative, which does not name it"
                ));
            }
        }
        match (s.status == Status::Tombstone, e.revokes) {
            (true, Some(v)) => {
                let revoked = anchor(v, "the tombstone of")?;
                if !revoked.state.status.is_retracted()
                    || revoked.state.edges().revoked_by != Some(id)
                {
                    return Err(format!(
                        "tombstone {id} names {v}, which is not retracted by it"
                    ));
                }
            }
            (false, None) => {}
            _ => {
                return Err(format!(
                    "{id}: a tombstone without a retracted version, or the reverse"
                ));
            }
        }
        if let Some(t) = e.revoked_by
            && self
                .get(t)
                .is_none_or(|t| t.state.edges().revokes != Some(id))
        {
            return Err(format!(
                "{id} names {t} as its tombstone, which does not name it"
            ));
        }
        if e.log
            .windows(2)
            .any(|w| w[0].seq > w[1].seq || w[0].at > w[1].at)
            || e.log.last().is_some_and(|c| c.status != s.status)
        {
            return Err(format!(
                "{id}'s status log is out of order or out of date: {:?}",
                e.log
            ));
        }
        let pending = e.alternatives.iter().any(|a| {
            self.get(*a)
                .is_some_and(|a| a.state.status == Status::Alternative)
        });
        if (s.status == Status::Contested) != pending {
            return Err(format!(
                "{id} is {:?} with pending alternatives: {pending}",
                s.status
            ));
        }
        Ok(())
    }

    /// One key's cell: its chain (every version that is not an alternative,
    /// a tombstone or a plan) is one acyclic list reached from its newest version,
    /// and every version above the current one was retracted.
    fn verify_cell(&self, key: &Key, versions: &[FactId]) -> std::result::Result<(), String> {
        let mut expected: Vec<FactId> = versions
            .iter()
            .copied()
            .filter(|v| self.get(*v).is_some_and(|f| f.state.on_chain()))
            .collect();
        if expected.is_empty() {
            // Only plans so far (alternatives and tombstones need a chain
            // version to hang off, which `verify_edges` checks).
            return Ok(());
        }
        expected.sort();
        let top = expected
            .iter()
            .copied()
            .find(|v| {
                self.get(*v)
                    .is_some_and(|f| f.state.superseded_by.is_none())
            })
            .ok_or_else(|| format!("key {key} has no newest version"))?;
        let mut reached = Vec::with_capacity(expected.len());
        let mut above_head = true;
        let mut at = Some(top);
        while let Some(v) = at {
            if reached.len() == expected.len() {
                return Err(format!("key {key}: the chain has a cycle"));
            }
            let f = self
                .get(v)
                .ok_or_else(|| format!("key {key}: chain reaches erased {v}"))?;
            if f.state.is_current() {
                above_head = false;
            } else if above_head
                && !f.state.status.is_retracted()
                && self.active_by_key.contains_key(key)
            {
                return Err(format!(
                    "key {key}: {v} lies above the current value but was not retracted"
                ));
            }
            reached.push(v);
            at = f.state.supersedes.get();
        }
        reached.sort();
        if reached != expected {
            return Err(format!(
                "key {key}: chain reaches {reached:?}, versions are {expected:?}"
            ));
        }
        Ok(())
    }
}
