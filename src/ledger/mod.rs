//! The bi-temporal ledger: every fact the store retains, the commit rules that
//! create and retire them, and the views over them.
//!
//! Two times: *transaction time* is the commit sequence ([`Seq`], with the
//! wall time of each commit), recorded in each fact's activity intervals;
//! *event time* is when the source observation was made (`stated_at`), used
//! by event-time ordering and by recency.
//!
//! # Commit rules (PFM paper Section 4; MemStrata)
//! For each draft, in order:
//! 1. **Duplicate.** The normalized text equals an active fact's: nothing changes.
//! 2. **Keyed.** With no active fact for the key, the draft is *created*
//!    active. If the active value equals the draft's, it is a
//!    *re-observation*: last-observed time and support move, no new version.
//!    Otherwise the draft *supersedes*: the predecessor's interval closes at
//!    commit `u`, the new fact's opens at `u`, and the predecessor stays as
//!    history behind a `supersedes` edge. Under [`ChainOrder::EventTime`] a
//!    draft stated before the active value instead enters the chain as
//!    history at its stated-time position, and the active value stays.
//!    A keyed draft may carry a typed operation (P-Mem: contest, reject,
//!    revoke, resolve, noop); `ledger/ops.rs` gives their rules, rollback along the
//!    chain included. Plain keyed drafts are `accept`. A new head always
//!    goes above the versions a rollback walked past, so the chain stays
//!    one linear list. A keyed plain statement the speculation gate reads
//!    as a plan (`Kind::Speculation`) is *staged* instead, off the chain,
//!    and an abandonment retires plans without committing a value;
//!    `ledger/plans.rs` gives those rules.
//! 3. **Keyless.** The draft is *absorbed* into an active fact that shares an
//!    entity when their content-token Jaccard is at least the threshold,
//!    their value-bearing tokens (numbers, dates, capitalised names, quoted
//!    spans) are equal, and the draft has no content token the fact lacks
//!    (so a different relation, "head of state" after "head of government",
//!    is never merged); otherwise it is created. Absorption therefore never
//!    discards a value or a relation that no active fact states.
//!
//! # Invariants
//! 1. At most one current fact per key (Proposition 1).
//! 2. A current fact's last interval is open; every other fact's intervals are closed.
//! 3. Each key's versions form one acyclic chain through `supersedes` /
//!    `superseded_by`, reachable from its newest version, ordered by commit
//!    (arrival ordering) or, among plain unretracted statements, by stated
//!    time (event-time ordering; erasure splices a chain and never re-sorts
//!    it, so the order may break only across an erasure cut); every version
//!    above the current one was retracted. Alternatives and tombstones are off the chain, each linked
//!    to a chain version of its key by an edge whose reverse names it; a
//!    head is `contested` exactly when a pending alternative names it.
//! 4. Every lookup map lists exactly the facts it describes (active facts for
//!    `active_by_key`, and for `active_by_hash`, the absorption buckets and
//!    the signatures once admission has built them, empty before; retained
//!    facts for `versions_by_key` and `facts_by_name`; `keys_by_entity`
//!    lists each key of `versions_by_key` under its entity, once).
//!
//! Established by [`Ledger::commit`], [`Ledger::prune`] and the erasure
//! functions; checked by [`Ledger::verify`], which the property tests call
//! after every step (`tests/prop_ledger.rs`).

mod admission;
mod id_lists;
mod ops;
mod plans;
mod retire;
mod views;

use std::sync::Arc;

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use id_lists::{HashedIds, IdLists, IdRun};

pub use admission::{Measures, Signature, Signatures, is_value_token, text_hash};
pub use retire::Forget;
pub use views::{AsOf, history_in, related_in};

use crate::config::{AdmissionParams, ChainOrder, Config, ScoreParams};
use crate::error::Result;
use crate::fact::{
    BodyParts, Extras, Fact, FactBody, FactId, FactNames, FactState, Interval, Intervals, Key,
    Kind, Link, Name, Op, Seq, Status, StatusChange, name_key,
};
use crate::text;
use crate::time::WallTime;

/// A fact about to be committed: the extractor's output for one observation.
#[derive(Clone, Debug)]
pub struct Draft {
    /// Text as observed.
    pub text: String,
    /// [`text::normalize`] of `text`.
    pub normalized: String,
    /// Canonical entity names (sorted, unique).
    pub entities: Vec<Name>,
    /// Participants in display form.
    pub participants: Vec<Name>,
    /// Slot key, if any.
    pub key: Option<Key>,
    /// Normalized slot value (with `key`).
    pub value: Option<String>,
    /// Event time of the observation.
    pub stated_at: WallTime,
    /// Caller-supplied provenance.
    pub source: Option<String>,
    /// What the statement says about when its value holds (the gate's
    /// verdict or the caller's word); acts on keyed plain statements only.
    pub kind: Kind,
    /// How the draft relates to its key's head (keyed drafts only).
    pub op: Op,
    /// The fact the operation names (an alternative to resolve to, the
    /// head to revoke), of the draft's key.
    pub target: Option<FactId>,
    /// Whether `op` was inferred from the text's cues rather than stated by
    /// the caller: an inferred operation that does not fit its cell falls
    /// back instead of refusing the batch (see `ops`, "Inferred operations").
    pub inferred: bool,
}

/// What a commit did with one draft.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Outcome {
    /// A new fact, active.
    Created {
        /// The new fact.
        fact: FactId,
    },
    /// A new fact, active, that closed the previous value of its key.
    Superseded {
        /// The new fact.
        fact: FactId,
        /// The value it displaced, now history.
        previous: FactId,
    },
    /// The draft restated the active value of its key (or, for a contest, a
    /// pending alternative's value).
    Reobserved {
        /// The fact whose support and last-observed time moved.
        fact: FactId,
    },
    /// A keyless draft merged into a near-identical active fact.
    Absorbed {
        /// The fact that absorbed it.
        into: FactId,
    },
    /// The exact text of an active fact: nothing changed.
    Duplicate {
        /// The active fact with that text.
        of: FactId,
    },
    /// Event-time ordering: the draft states an older time than the active
    /// value, so it was recorded as history and the active value stays.
    History {
        /// The new (inactive) fact.
        fact: FactId,
        /// The later-stated version it was placed under (the active value,
        /// unless the key's active value was erased).
        newer: FactId,
    },
    /// `contest`: the value is kept as an alternative; the head stays,
    /// flagged contested.
    Contested {
        /// The new alternative.
        fact: FactId,
        /// The head it contests.
        incumbent: FactId,
    },
    /// `reject`: the head was judged wrong (contradicted). With a value the
    /// value is the new head; without one the predecessor is reinstated.
    Rejected {
        /// The new head (with a value) or the tombstone (without).
        fact: FactId,
        /// The contradicted head.
        previous: FactId,
        /// The predecessor reopened, if any (without a value only).
        reinstated: Option<FactId>,
    },
    /// `revoke`: the head was retracted behind a tombstone and its
    /// predecessor reinstated (the cell is empty if there is none).
    Revoked {
        /// The tombstone.
        fact: FactId,
        /// The revoked head.
        previous: FactId,
        /// The predecessor reopened, if any.
        reinstated: Option<FactId>,
    },
    /// `resolve`: a contested cell was settled.
    Resolved {
        /// The head now (the chosen alternative, the incumbent, or a new
        /// value).
        fact: FactId,
        /// The versions the resolution contradicted.
        contradicted: Vec<FactId>,
    },
    /// `noop`: the head (or a named alternative) gained support.
    Supported {
        /// The supported fact.
        fact: FactId,
    },
    /// A speculation: staged as a pending plan of its key, not current.
    Staged {
        /// The pending plan.
        fact: FactId,
    },
    /// The statement made its value current and confirmed the key's
    /// pending plan of that value.
    Promoted {
        /// The key's head now (the confirming statement, or the value it
        /// restated).
        fact: FactId,
        /// The plan it confirmed.
        plan: FactId,
        /// The value it displaced, if any.
        previous: Option<FactId>,
    },
    /// An abandonment: the key's pending plans it names (or all of them)
    /// are retired; the statement is kept as a keyless fact.
    Abandoned {
        /// The statement, kept.
        fact: FactId,
        /// The plans abandoned.
        plans: Vec<FactId>,
    },
}

impl Outcome {
    /// The outcome's name, as serialized (`created`, `superseded`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Created { .. } => "created",
            Outcome::Superseded { .. } => "superseded",
            Outcome::Reobserved { .. } => "reobserved",
            Outcome::Absorbed { .. } => "absorbed",
            Outcome::Duplicate { .. } => "duplicate",
            Outcome::History { .. } => "history",
            Outcome::Contested { .. } => "contested",
            Outcome::Rejected { .. } => "rejected",
            Outcome::Revoked { .. } => "revoked",
            Outcome::Resolved { .. } => "resolved",
            Outcome::Supported { .. } => "supported",
            Outcome::Staged { .. } => "staged",
            Outcome::Promoted { .. } => "promoted",
            Outcome::Abandoned { .. } => "abandoned",
        }
    }

    /// The version the outcome displaced, contradicted or retracted (for a
    /// contest, the head contested).
    pub fn previous(&self) -> Option<FactId> {
        match *self {
            Outcome::Superseded { previous, .. }
            | Outcome::Rejected { previous, .. }
            | Outcome::Revoked { previous, .. } => Some(previous),
            Outcome::Contested { incumbent, .. } => Some(incumbent),
            Outcome::Promoted { previous, .. } => previous,
            _ => None,
        }
    }

    /// For a promotion, the plan it confirmed; for an abandonment, the
    /// plans it retired.
    pub fn plans(&self) -> Vec<FactId> {
        match self {
            Outcome::Promoted { plan, .. } => vec![*plan],
            Outcome::Abandoned { plans, .. } => plans.clone(),
            _ => Vec::new(),
        }
    }

    /// For a retraction, the predecessor it reinstated.
    pub fn reinstated(&self) -> Option<FactId> {
        match *self {
            Outcome::Rejected { reinstated, .. } | Outcome::Revoked { reinstated, .. } => {
                reinstated
            }
            _ => None,
        }
    }

    /// For a resolution, the versions it contradicted.
    pub fn contradicted(&self) -> &[FactId] {
        match self {
            Outcome::Resolved { contradicted, .. } => contradicted,
            _ => &[],
        }
    }

    /// For a history entry, the newer version it was placed under.
    pub fn newer(&self) -> Option<FactId> {
        match *self {
            Outcome::History { newer, .. } => Some(newer),
            _ => None,
        }
    }

    /// The facts whose place in the active view, or whose status a block can
    /// disclose, the outcome changed: what a change notice names (a
    /// duplicate or a history entry changes none).
    pub fn touched(&self) -> Vec<FactId> {
        match self {
            Outcome::Created { fact } | Outcome::Reobserved { fact } => vec![*fact],
            Outcome::Supported { fact } => vec![*fact],
            Outcome::Superseded { fact, previous } => vec![*fact, *previous],
            Outcome::Absorbed { into } => vec![*into],
            Outcome::Duplicate { .. } | Outcome::History { .. } | Outcome::Staged { .. } => {
                Vec::new()
            }
            Outcome::Promoted { fact, previous, .. } => {
                std::iter::once(*fact).chain(*previous).collect()
            }
            Outcome::Abandoned { fact, .. } => vec![*fact],
            Outcome::Contested { incumbent, .. } => vec![*incumbent],
            Outcome::Rejected {
                fact,
                previous,
                reinstated,
            }
            | Outcome::Revoked {
                fact,
                previous,
                reinstated,
            } => [Some(*fact), Some(*previous), *reinstated]
                .into_iter()
                .flatten()
                .collect(),
            Outcome::Resolved { fact, contradicted } => std::iter::once(*fact)
                .chain(contradicted.iter().copied())
                .collect(),
        }
    }

    /// The fact the outcome is about (new, updated, or matched).
    pub fn fact(&self) -> FactId {
        match *self {
            Outcome::Created { fact }
            | Outcome::Superseded { fact, .. }
            | Outcome::Reobserved { fact }
            | Outcome::History { fact, .. }
            | Outcome::Contested { fact, .. }
            | Outcome::Rejected { fact, .. }
            | Outcome::Revoked { fact, .. }
            | Outcome::Resolved { fact, .. }
            | Outcome::Supported { fact }
            | Outcome::Staged { fact }
            | Outcome::Promoted { fact, .. }
            | Outcome::Abandoned { fact, .. } => fact,
            Outcome::Absorbed { into } => into,
            Outcome::Duplicate { of } => of,
        }
    }
}

/// A change to what the indexes and the graph must reflect.
#[derive(Clone, Debug)]
pub enum Change {
    /// A new fact is retained (history index, graph, gazetteer).
    Recorded(FactId),
    /// A fact entered the active view.
    Activated(FactId),
    /// A fact left the active view (superseded, pruned).
    Deactivated(FactId),
    /// A retained fact's last-observed time, support or usage moved.
    Refreshed {
        /// The fact.
        fact: FactId,
        /// Its last-observed time before the change.
        previous: WallTime,
    },
    /// A fact is gone for good (erasure); its body is handed over so the
    /// indexes can find what to remove.
    Erased(Arc<FactBody>),
}

/// The result of one commit.
#[derive(Clone, Debug, Default)]
pub struct Commit {
    /// The commit's sequence number (unchanged if nothing changed).
    pub seq: Seq,
    /// One outcome per draft, in order.
    pub outcomes: Vec<Outcome>,
    /// What the indexes must apply, in order.
    pub changes: Vec<Change>,
    /// Retained facts whose body or state the commit wrote (sorted, unique):
    /// what a durable copy of the ledger must rewrite. Erased facts are in
    /// `changes` instead.
    pub touched: Vec<FactId>,
}

/// The ledger. Single writer: every `&mut self` method is a commit.
#[derive(Debug)]
pub struct Ledger {
    ordering: ChainOrder,
    admission: AdmissionParams,
    score: ScoreParams,
    /// Every fact ever created, by id; `None` once erased. Shared with the
    /// published versions' timelines (`index::timeline`): a write to a
    /// published fact copies it first ([`Arc::make_mut`]), so a version never
    /// changes and an unchanged fact is held once.
    facts: Vec<Option<Arc<Fact>>>,
    /// The last commit's sequence number (0 before the first).
    seq: Seq,
    /// Wall time of the last commit; commit times never go backward.
    committed_at: WallTime,
    /// Key → its current fact.
    active_by_key: FxHashMap<Arc<Key>, FactId>,
    /// Key → every retained version, in creation order.
    versions_by_key: IdLists<Arc<Key>>,
    /// Entity → the keys of `versions_by_key` it owns, in creation order.
    keys_by_entity: FxHashMap<Arc<str>, SmallVec<[Arc<Key>; 1]>>,
    /// Normalized-text hash → active facts with that hash.
    active_by_hash: HashedIds,
    /// Hash of (entity, value-token hash) → active facts: absorption
    /// candidates ([`absorb_bucket`]; a candidate is checked to name the
    /// entity, so a collision costs a comparison, never a wrong merge).
    absorb_buckets: HashedIds,
    /// Admission signature of every active fact.
    signatures: Signatures,
    /// Whether `signatures`, `active_by_hash` and `absorb_buckets` are
    /// built; when not, all three are empty. A restore leaves them unbuilt:
    /// only admission reads them, and a reopened store that only answers
    /// reads never needs them (they were an eighth of an open's time and a
    /// signature per current fact in memory). The first commit builds
    /// them ([`Ledger::build_admission`]).
    admission_built: bool,
    /// Canonical name (entity or participant) → retained facts naming it.
    facts_by_name: IdLists<Name, IdRun>,
    /// Key → its pending plans (status `Pending`), oldest first.
    pending_by_key: IdLists<Arc<Key>>,
    /// Facts written since the last commit finished (drained into
    /// [`Commit::touched`]): `fact_mut` and `new_fact` record every fact
    /// they hand out or create; the two writes that bypass them (usage
    /// records, erasure's chain splice) record theirs by hand.
    touched: Vec<FactId>,
    /// While a commit with caller-stated operations runs: what it must put
    /// back if one of them does not apply (see [`Undo`]).
    undo: Option<Undo>,
}

/// What a commit in progress has written, so a refused batch can be put
/// back exactly: the facts before their first write, and how many facts
/// there were. The lookup maps are derived from the facts, so they are
/// restored by taking the written facts out of them and putting the old
/// ones back in. Costs O(facts the batch writes), never O(store).
#[derive(Debug)]
struct Undo {
    /// `facts.len()` when the commit began; later ids are the commit's.
    len: usize,
    /// Each existing fact the commit wrote, as it was before.
    saved: FxHashMap<FactId, Arc<Fact>>,
}

impl Ledger {
    /// An empty ledger.
    pub fn new(config: &Config) -> Self {
        Ledger {
            ordering: config.ordering,
            admission: config.admission.clone(),
            score: config.score.clone(),
            facts: Vec::new(),
            seq: 0,
            committed_at: WallTime::EPOCH,
            active_by_key: FxHashMap::default(),
            versions_by_key: IdLists::default(),
            keys_by_entity: FxHashMap::default(),
            active_by_hash: HashedIds::default(),
            absorb_buckets: HashedIds::default(),
            signatures: Signatures::default(),
            admission_built: true,
            facts_by_name: IdLists::default(),
            pending_by_key: IdLists::default(),
            touched: Vec::new(),
            undo: None,
        }
    }

    /// A ledger rebuilt from a durable copy: the retained `facts` (any
    /// order), the id the next fact gets, and the last commit. Rebuilds every
    /// lookup map, then checks the invariants; a copy that breaks one is
    /// refused with the reason rather than served.
    pub fn restore(
        config: &Config,
        facts: Vec<Fact>,
        next_id: u64,
        seq: Seq,
        committed_at: WallTime,
    ) -> std::result::Result<Ledger, String> {
        let mut ledger = Ledger::new(config);
        ledger.admission_built = false;
        ledger.seq = seq;
        ledger.committed_at = committed_at;
        ledger.facts = (0..next_id).map(|_| None).collect();
        for fact in facts {
            let id = fact.id();
            let slot = ledger
                .facts
                .get_mut(id.0 as usize)
                .ok_or_else(|| format!("fact {id} is at or past the next id {next_id}"))?;
            if slot.replace(Arc::new(fact)).is_some() {
                return Err(format!("fact {id} is stored twice"));
            }
        }
        for i in 0..ledger.facts.len() {
            let Some(fact) = &ledger.facts[i] else {
                continue;
            };
            let (id, key, current) = (fact.id(), fact.body.key.clone(), fact.state.is_current());
            if current
                && let Some(key) = &key
                && let Some(other) = ledger.active_by_key.get(key)
            {
                return Err(format!(
                    "facts {other} and {id} are both current for key {key}"
                ));
            }
            ledger.list(id);
            ledger.index_by_status(id);
        }
        ledger.verify_restored()?;
        Ok(ledger)
    }

    /// The id the next new fact will get (ids are never reused, erased or not).
    pub fn next_id(&self) -> u64 {
        self.facts.len() as u64
    }

    /// The last commit's sequence number.
    pub fn seq(&self) -> Seq {
        self.seq
    }

    /// Wall time of the last commit.
    pub fn committed_at(&self) -> WallTime {
        self.committed_at
    }

    /// A retained fact.
    pub fn get(&self, id: FactId) -> Option<&Fact> {
        self.facts.get(id.0 as usize).and_then(Option::as_deref)
    }

    /// A retained fact as shared with published versions.
    pub fn shared(&self, id: FactId) -> Option<&Arc<Fact>> {
        self.facts.get(id.0 as usize).and_then(Option::as_ref)
    }

    /// The current fact of a key.
    pub fn active_for_key(&self, key: &Key) -> Option<&Fact> {
        self.active_by_key.get(key).and_then(|id| self.get(*id))
    }

    /// The keys `entity` owns that have a retained version, oldest first.
    pub fn keys_of(&self, entity: &str) -> &[Arc<Key>] {
        self.keys_by_entity
            .get(entity)
            .map(|keys| keys.as_slice())
            .unwrap_or(&[])
    }

    /// The value of a key's newest retained version: its current one, or
    /// the last one stated.
    pub fn latest_value(&self, key: &Key) -> Option<&str> {
        let fact = self.active_for_key(key).or_else(|| {
            let last = self.versions_by_key.get(key).last()?;
            self.get(*last)
        })?;
        fact.body.value()
    }

    /// Every retained fact, oldest first.
    pub fn facts(&self) -> impl Iterator<Item = &Fact> {
        self.facts.iter().flatten().map(|f| &**f)
    }

    /// Every current fact, oldest first.
    pub fn active(&self) -> impl Iterator<Item = &Fact> {
        self.facts().filter(|f| f.state.is_current())
    }

    /// Number of retained facts (history included).
    pub fn len(&self) -> usize {
        self.facts().count()
    }

    /// Whether the ledger holds no facts.
    pub fn is_empty(&self) -> bool {
        self.facts().next().is_none()
    }

    /// Retained facts that name `name` (canonical) as entity or participant.
    pub fn facts_naming(&self, name: &str) -> impl Iterator<Item = FactId> + '_ {
        self.facts_by_name.ids(name)
    }

    /// Commits a batch of drafts atomically under one sequence number.
    ///
    /// Drafts are validated before they are built; what only the ledger can
    /// judge — whether each operation the caller stated applies to its cell
    /// as the drafts before it leave it — is checked as the batch runs, and
    /// a batch with one that does not is put back whole: the commit then
    /// fails with [`Error::OpNotApplicable`](crate::Error::OpNotApplicable)
    /// and the ledger is exactly as before.
    pub fn commit(&mut self, drafts: Vec<Draft>) -> Result<Commit> {
        self.build_admission();
        let u = self.seq + 1;
        let t = drafts
            .iter()
            .map(|d| d.stated_at)
            .fold(self.committed_at, WallTime::max);
        let mut commit = Commit {
            seq: u,
            ..Commit::default()
        };
        let stated = |d: &Draft| d.op != Op::Accept && !d.inferred;
        if drafts.iter().any(stated) {
            self.undo = Some(Undo {
                len: self.facts.len(),
                saved: FxHashMap::default(),
            });
        }
        for draft in drafts {
            let draft = self.settle(draft);
            if stated(&draft)
                && let Err(e) = self.precondition(&draft)
            {
                self.roll_back();
                return Err(e);
            }
            let outcome = self.apply(draft, u, t, &mut commit.changes);
            commit.outcomes.push(outcome);
        }
        self.undo = None;
        self.finish(&mut commit, t);
        Ok(commit)
    }

    /// Puts back what the commit in progress wrote (see [`Undo`]).
    fn roll_back(&mut self) {
        let Some(undo) = self.undo.take() else {
            return;
        };
        for i in undo.len..self.facts.len() {
            let id = FactId(i as u64);
            self.unindex_by_status(id);
            self.unlist(id);
        }
        self.facts.truncate(undo.len);
        for &id in undo.saved.keys() {
            self.unindex_by_status(id);
        }
        for (id, before) in undo.saved {
            self.facts[id.0 as usize] = Some(before);
            self.index_by_status(id);
        }
        self.touched.clear();
    }

    /// Advances the sequence if the commit changed anything.
    fn finish(&mut self, commit: &mut Commit, t: WallTime) {
        let mut touched = std::mem::take(&mut self.touched);
        touched.sort_unstable();
        touched.dedup();
        touched.retain(|id| self.get(*id).is_some());
        commit.touched = touched;
        if commit.changes.is_empty() {
            commit.seq = self.seq;
        } else {
            self.seq = commit.seq;
            self.committed_at = t;
        }
    }

    fn apply(&mut self, draft: Draft, u: Seq, t: WallTime, changes: &mut Vec<Change>) -> Outcome {
        let (key, value, kind) = (draft.key.clone(), draft.value.clone(), draft.kind);
        let outcome = match (draft.op, kind, &key) {
            (Op::Accept, Kind::Speculation, Some(_)) => return self.stage(draft, u, t, changes),
            (Op::Accept, Kind::Abandonment, Some(_)) => return self.abandon(draft, u, t, changes),
            (Op::Accept, ..) => self.accept(draft, u, t, changes),
            _ => self.apply_typed(draft, u, t, changes),
        };
        match (key, value) {
            (Some(key), Some(value)) => self.settle_plans(&key, &value, kind, outcome, (u, t)),
            _ => outcome,
        }
    }

    /// The commit rules for a plain statement (module docs, rules 1–3).
    fn accept(&mut self, draft: Draft, u: Seq, t: WallTime, changes: &mut Vec<Change>) -> Outcome {
        let sig = Measures::of(&draft.text, &draft.normalized);
        if self.admission.dedup
            && let Some(of) = self.find_duplicate(&draft.normalized, &sig)
        {
            return Outcome::Duplicate { of };
        }
        match (&draft.key, &draft.value) {
            (Some(key), Some(value)) => match self.active_by_key.get(key).copied() {
                None => match self.newest_version(key) {
                    None => Outcome::Created {
                        fact: self.create(draft, sig, u, t, changes),
                    },
                    // The key has history but no current value (its current
                    // version was erased, or every version retracted): the
                    // draft continues the chain.
                    Some(top) => {
                        let live = self.newest_unretracted(top);
                        match live.filter(|l| self.stated_before(&draft, *l)) {
                            Some(newer) => Outcome::History {
                                fact: self.insert_history(draft, newer, (u, t), changes),
                                newer,
                            },
                            None => {
                                let stated = (self.ordering == ChainOrder::EventTime)
                                    .then_some(draft.stated_at);
                                let fact = self.create(draft, sig, u, t, changes);
                                let below = self.insertion_point(live.unwrap_or(top), stated);
                                self.link_above(fact, below);
                                // The cell was empty, so a retraction of the
                                // new value must leave it empty again.
                                self.fact_mut(fact).state.rollback_stop = true;
                                Outcome::Created { fact }
                            }
                        }
                    }
                },
                Some(active) if self.value_of(active) == Some(value.as_str()) => {
                    self.reobserve(active, &draft, changes);
                    Outcome::Reobserved { fact: active }
                }
                Some(active) => {
                    if self.stated_before(&draft, active) {
                        Outcome::History {
                            fact: self.insert_history(draft, active, (u, t), changes),
                            newer: active,
                        }
                    } else {
                        self.supersede(draft, sig, active, u, t, changes)
                    }
                }
            },
            _ => match self.find_absorber(&draft, &sig.signature) {
                Some(into) => {
                    self.reobserve(into, &draft, changes);
                    Outcome::Absorbed { into }
                }
                None => Outcome::Created {
                    fact: self.create(draft, sig, u, t, changes),
                },
            },
        }
    }

    /// Event-time ordering only: whether the draft states an older time
    /// than `newer`, so it belongs below it in the key's history.
    fn stated_before(&self, draft: &Draft, newer: FactId) -> bool {
        self.ordering == ChainOrder::EventTime && draft.stated_at < self.fact(newer).body.stated_at
    }

    fn fact(&self, id: FactId) -> &Fact {
        // Infallible: ids handed around inside the ledger come from its maps,
        // which list only retained facts (invariant 4).
        self.get(id).expect("ledger maps list only retained facts")
    }

    fn fact_mut(&mut self, id: FactId) -> &mut Fact {
        self.touched.push(id);
        if let Some(undo) = &mut self.undo
            && (id.0 as usize) < undo.len
            && !undo.saved.contains_key(&id)
            && let Some(Some(before)) = self.facts.get(id.0 as usize)
        {
            undo.saved.insert(id, before.clone());
        }
        writable(&mut self.facts, id).expect("ledger maps list only retained facts")
    }

    fn value_of(&self, id: FactId) -> Option<&str> {
        self.fact(id).body.value()
    }

    fn find_duplicate(&self, normalized: &str, sig: &Measures) -> Option<FactId> {
        self.active_by_hash
            .get(sig.text)
            .find(|id| text::normalize(self.fact(*id).body.text()) == normalized)
    }

    fn bucket_hash(&self, sig: &Signature) -> u64 {
        if self.admission.value_token_match {
            sig.value_hash()
        } else {
            0
        }
    }

    /// The current fact the draft restates, if any (module docs, rule 3):
    /// candidates share an entity and (with value matching) the value
    /// bucket; the stored 32-bit signatures (`sig` is the draft's) rule out
    /// the rest, and each that passes is confirmed on exact signatures of
    /// both texts, computed only then.
    fn find_absorber(&self, draft: &Draft, sig: &Signature) -> Option<FactId> {
        let vh = self.bucket_hash(sig);
        let mut best: Option<(f64, FactId)> = None;
        let mut exact = None;
        for entity in &draft.entities {
            for id in self.absorb_buckets.get(absorb_bucket(entity, vh)) {
                let body = &self.fact(id).body;
                if !body.entities().contains(entity) {
                    continue;
                }
                let theirs = self
                    .signatures
                    .get(id)
                    .expect("a fact in an absorption bucket is current and signed");
                if !self.restates(sig, theirs) {
                    continue;
                }
                let exact = exact
                    .get_or_insert_with(|| admission::Exact::new(&draft.text, &draft.normalized));
                let theirs = admission::Exact::new(body.text(), &text::normalize(body.text()));
                if !self.restates(exact, &theirs) {
                    continue;
                }
                let j = exact.jaccard(&theirs);
                if j >= self.admission.jaccard && best.is_none_or(|(bj, bid)| (j, id) > (bj, bid)) {
                    best = Some((j, id));
                }
            }
        }
        best.map(|(_, id)| id)
    }

    /// Whether a text with signature `a` says nothing that one with `b`
    /// lacks: the same value-bearing tokens (when values must match) and
    /// content tokens among `b`'s.
    fn restates<H: Ord>(&self, a: &Signature<H>, b: &Signature<H>) -> bool {
        (!self.admission.value_token_match || a.same_values(b)) && a.contained_in(b)
    }

    /// The key as the ledger already holds it (one allocation shared by
    /// every version of the key and the maps that list it), or a new one.
    fn shared_key(&self, key: Key) -> Arc<Key> {
        match self.versions_by_key.stored_key(&key) {
            Some(held) => held.clone(),
            None => Arc::new(key),
        }
    }

    /// Creates a fact and, unless it enters as history, activates it.
    fn new_fact(&mut self, draft: Draft, intervals: Intervals, status: Status) -> FactId {
        let id = FactId(self.facts.len() as u64);
        let key = draft.key.map(|key| self.shared_key(key));
        let parts = BodyParts {
            text: &draft.text,
            key: key.as_ref(),
            value: draft.value.as_deref(),
            stated_at: draft.stated_at,
            source: draft.source.as_deref(),
        };
        let names = FactNames::new(draft.entities, draft.participants);
        let body = FactBody::new(id, names, parts);
        let fact = Fact {
            state: FactState {
                status,
                intervals,
                last_observed: body.stated_at,
                support: 1,
                supersedes: Link::NONE,
                superseded_by: Link::NONE,
                entered_by: draft.op,
                rollback_stop: false,
                extras: Extras::default(),
            },
            body: Arc::new(body),
        };
        reserve_by_eighths(&mut self.facts, 1);
        self.facts.push(Some(Arc::new(fact)));
        self.list(id);
        self.touched.push(id);
        id
    }

    /// Lists a retained fact in the maps every retained fact is in: its
    /// key's versions and the names it mentions.
    fn list(&mut self, id: FactId) {
        let body = self.fact(id).body.clone();
        for name in names_of(&body) {
            self.facts_by_name.push(name, id);
        }
        if let Some(key) = &body.key {
            let first_version = self.versions_by_key.push(key.clone(), id);
            if first_version {
                self.keys_by_entity
                    .entry(key.entity.clone())
                    .or_default()
                    .push(key.clone());
            }
        }
    }

    /// Takes a fact out of the maps [`Ledger::list`] put it in.
    fn unlist(&mut self, id: FactId) {
        let body = self.fact(id).body.clone();
        if let Some(key) = &body.key {
            self.versions_by_key.remove(key, id);
            if !self.versions_by_key.contains_key(key)
                && let Some(keys) = self.keys_by_entity.get_mut(&key.entity)
            {
                keys.retain(|k| k != key);
                if keys.is_empty() {
                    self.keys_by_entity.remove(&key.entity);
                }
            }
        }
        for name in names_of(&body) {
            self.facts_by_name.remove(&name, id);
        }
    }

    /// Lists a fact in the maps its status puts it in: the active maps if
    /// it is current, its key's plans if it is pending.
    fn index_by_status(&mut self, id: FactId) {
        let fact = self.fact(id);
        if fact.state.is_current() {
            let sig = self.admission_built.then(|| measures_of(&fact.body));
            self.index_active(id, sig);
        } else if fact.state.status == Status::Pending {
            self.index_pending(id);
        }
    }

    /// Takes a fact out of the maps [`Ledger::index_by_status`] put it in.
    fn unindex_by_status(&mut self, id: FactId) {
        let status = self.fact(id).state.status;
        if status.is_current() {
            self.unindex_active(id);
        } else if status == Status::Pending {
            self.unindex_pending(id);
        }
    }

    fn create(
        &mut self,
        draft: Draft,
        sig: Measures,
        u: Seq,
        t: WallTime,
        changes: &mut Vec<Change>,
    ) -> FactId {
        let id = self.new_fact(draft, Intervals::from(Interval::open(u, t)), Status::Active);
        self.index_active(id, sig);
        changes.push(Change::Recorded(id));
        changes.push(Change::Activated(id));
        id
    }

    fn supersede(
        &mut self,
        draft: Draft,
        sig: Measures,
        previous: FactId,
        u: Seq,
        t: WallTime,
        changes: &mut Vec<Change>,
    ) -> Outcome {
        let fact = self.displace(draft, sig, previous, Status::Superseded, u, t, changes);
        Outcome::Superseded { fact, previous }
    }

    /// Installs `draft` as its key's head in place of the current `head`,
    /// which is closed with `status` (its pending alternatives are moot and
    /// closed as superseded). Returns the new head.
    #[allow(clippy::too_many_arguments)]
    fn displace(
        &mut self,
        draft: Draft,
        sig: Measures,
        head: FactId,
        status: Status,
        u: Seq,
        t: WallTime,
        changes: &mut Vec<Change>,
    ) -> FactId {
        let inherited = self.fact(head).state.extras.usage();
        let stated = (draft.op == Op::Accept && self.ordering == ChainOrder::EventTime)
            .then_some(draft.stated_at);
        self.close_alternatives(head, Status::Superseded, u, t);
        self.deactivate(head, status, u, t, changes);
        let fact = self.new_fact(draft, Intervals::from(Interval::open(u, t)), Status::Active);
        if self.admission.usage_inheritance {
            self.fact_mut(fact).state.extras.set_usage(inherited);
        }
        let below = self.insertion_point(head, stated);
        self.link_above(fact, below);
        self.index_active(fact, sig);
        changes.push(Change::Recorded(fact));
        changes.push(Change::Activated(fact));
        fact
    }

    /// Where a new head goes in its chain, above the old head `from`: the
    /// versions above a head are all retracted ones (a rollback walked down
    /// past them), so in arrival order the new head goes on top; under
    /// event-time ordering (`stated`) it goes above those stated no later.
    fn insertion_point(&self, from: FactId, stated: Option<WallTime>) -> FactId {
        let mut below = from;
        while let Some(next) = self.fact(below).state.superseded_by.get() {
            if stated.is_some_and(|s| self.fact(next).body.stated_at > s) {
                break;
            }
            below = next;
        }
        below
    }

    /// Links `fact` into its key's chain directly above `below`.
    fn link_above(&mut self, fact: FactId, below: FactId) {
        let above = self.fact(below).state.superseded_by;
        self.fact_mut(fact).state.supersedes = below.into();
        self.fact_mut(fact).state.superseded_by = above;
        self.fact_mut(below).state.superseded_by = fact.into();
        if let Some(a) = above.get() {
            self.fact_mut(a).state.supersedes = fact.into();
        }
    }

    /// The newest retained version of a key's chain (its alternatives and
    /// tombstones hang off the chain and are never the newest).
    fn newest_version(&self, key: &Key) -> Option<FactId> {
        self.versions_by_key.get(key).iter().copied().find(|v| {
            let s = &self.fact(*v).state;
            s.on_chain() && s.superseded_by.is_none()
        })
    }

    /// Event-time ordering: records `draft` as history in its key's chain at
    /// the position its stated time gives, below `head`.
    fn insert_history(
        &mut self,
        draft: Draft,
        head: FactId,
        (u, t): (Seq, WallTime),
        changes: &mut Vec<Change>,
    ) -> FactId {
        let stated = draft.stated_at;
        // Walk down from the head to the first version stated no later than
        // the draft; the draft goes between it and its successor.
        let mut newer = head;
        let mut older = self.fact(head).state.supersedes.get();
        while let Some(o) = older {
            if self.fact(o).body.stated_at <= stated {
                break;
            }
            newer = o;
            older = self.fact(o).state.supersedes.get();
        }
        let fact = self.new_fact(draft, Intervals::new(), Status::Superseded);
        self.log_created(fact, u, t);
        self.fact_mut(fact).state.supersedes = older.into();
        self.fact_mut(fact).state.superseded_by = newer.into();
        self.fact_mut(newer).state.supersedes = fact.into();
        if let Some(o) = older {
            self.fact_mut(o).state.superseded_by = fact.into();
        }
        changes.push(Change::Recorded(fact));
        fact
    }

    fn reobserve(&mut self, id: FactId, draft: &Draft, changes: &mut Vec<Change>) {
        let state = &mut self.fact_mut(id).state;
        let previous = state.last_observed;
        state.last_observed = previous.max(draft.stated_at);
        self.support(id, draft, changes, previous);
    }

    /// One more observation supports `id`: its count, and its source among
    /// the newest [`MAX_SUPPORTED_BY`](crate::fact::MAX_SUPPORTED_BY).
    fn support(
        &mut self,
        id: FactId,
        draft: &Draft,
        changes: &mut Vec<Change>,
        previous: WallTime,
    ) {
        let state = &mut self.fact_mut(id).state;
        state.support = state.support.saturating_add(1);
        if let Some(source) = &draft.source {
            let sources = &mut state.edges_mut().supported_by;
            if sources.len() == crate::fact::MAX_SUPPORTED_BY {
                sources.remove(0);
            }
            sources.push(source.as_str().into());
        }
        changes.push(Change::Refreshed { fact: id, previous });
    }

    /// Closes a current fact's interval at `(u, t)` with the given status.
    fn deactivate(
        &mut self,
        id: FactId,
        status: Status,
        u: Seq,
        t: WallTime,
        changes: &mut Vec<Change>,
    ) {
        self.unindex_active(id);
        self.set_status(id, status, u, t);
        let state = &mut self.fact_mut(id).state;
        if let Some(last) = state.intervals.last_mut() {
            last.close(u, t);
        }
        changes.push(Change::Deactivated(id));
    }

    /// Sets a fact's status at commit `u`, and logs it ([`Edges::log`])
    /// unless the activity intervals alone will tell it: a plain fact that
    /// goes from active to superseded or pruned keeps no log.
    ///
    /// [`Edges::log`]: crate::fact::Edges::log
    fn set_status(&mut self, id: FactId, status: Status, u: Seq, t: WallTime) {
        if self.fact(id).state.status == Status::Pending && status != Status::Pending {
            self.unindex_pending(id);
        }
        let state = &mut self.fact_mut(id).state;
        let prior = state.status;
        if prior == status {
            return;
        }
        state.status = status;
        let derivable = matches!(
            (prior, status),
            (Status::Active, Status::Superseded | Status::Pruned)
        );
        if derivable && state.edges().log.is_empty() {
            return;
        }
        // The prior status held since the last interval opened (active) or
        // closed (inactive), which the intervals record.
        let since = state
            .intervals
            .last()
            .map(|i| match (prior.is_current(), i.to()) {
                (false, Some(closed)) => closed,
                _ => (i.from(), i.from_time),
            });
        let log = &mut state.edges_mut().log;
        if log.is_empty()
            && let Some((seq, at)) = since
        {
            log.push(StatusChange {
                seq,
                at,
                status: prior,
            });
        }
        log.push(StatusChange {
            seq: u,
            at: t,
            status,
        });
    }

    /// Logs the status a fact was created with at commit `u` (a fact that
    /// is not active from its creation has no interval to date it).
    fn log_created(&mut self, id: FactId, u: Seq, t: WallTime) {
        let state = &mut self.fact_mut(id).state;
        let status = state.status;
        state.edges_mut().log.push(StatusChange {
            seq: u,
            at: t,
            status,
        });
    }

    /// Builds the admission maps from the current facts, unless built.
    fn build_admission(&mut self) {
        if self.admission_built {
            return;
        }
        self.admission_built = true;
        let current: Vec<FactId> = self.active().map(Fact::id).collect();
        for id in current {
            let sig = measures_of(&self.fact(id).body);
            self.index_admission(id, sig);
        }
    }

    /// Lists a current fact in the active maps; in the admission maps too
    /// when they are built (`sig` is its signature then, and `None` only
    /// while they are not).
    fn index_active(&mut self, id: FactId, sig: impl Into<Option<Measures>>) {
        if let Some(key) = &self.fact(id).body.key {
            self.active_by_key.insert(key.clone(), id);
        }
        if let Some(sig) = sig.into().filter(|_| self.admission_built) {
            self.index_admission(id, sig);
        }
    }

    /// Lists a current fact in the admission maps under its signature.
    fn index_admission(&mut self, id: FactId, sig: Measures) {
        let body = self.fact(id).body.clone();
        self.active_by_hash.push(sig.text, id);
        let vh = self.bucket_hash(&sig.signature);
        for e in body.entities().iter() {
            self.absorb_buckets.push(absorb_bucket(e, vh), id);
        }
        self.signatures.insert(id, sig.signature);
    }

    /// Removes a fact from the active lookup maps.
    fn unindex_active(&mut self, id: FactId) {
        let body = self.fact(id).body.clone();
        if let Some(key) = &body.key
            && self.active_by_key.get(key) == Some(&id)
        {
            self.active_by_key.remove(key);
        }
        let Some(sig) = self.signatures.remove(id) else {
            return;
        };
        // The signature keeps no text hash (`admission::Signature`), so
        // it is recomputed from the text, once per fact leaving the view.
        self.active_by_hash
            .remove(text_hash(&text::normalize(body.text())), id);
        let vh = self.bucket_hash(&sig);
        for e in body.entities().iter() {
            self.absorb_buckets.remove(absorb_bucket(e, vh), id);
        }
    }

    /// Records that facts were served at `at` (usage feeds the ranker).
    /// Unknown ids are skipped; returns the commit.
    pub fn record_usage(&mut self, ids: &[FactId], at: WallTime) -> Commit {
        let half_life = self.score.usage_half_life_days;
        let mut commit = Commit {
            seq: self.seq + 1,
            ..Commit::default()
        };
        for &id in ids {
            if let Some(fact) = writable(&mut self.facts, id) {
                self.touched.push(id);
                fact.state.extras.record_use(at, half_life);
                commit.changes.push(Change::Refreshed {
                    fact: id,
                    previous: fact.state.last_observed,
                });
            }
        }
        let t = self.committed_at.max(at);
        self.finish(&mut commit, t);
        commit
    }
}

/// The admission measures of a stored fact's text.
fn measures_of(body: &FactBody) -> Measures {
    Measures::of(body.text(), &text::normalize(body.text()))
}

/// The canonical names a fact mentions: its entities and its participants.
pub fn names_of(body: &FactBody) -> Vec<Name> {
    let mut names: Vec<Name> = body.entities().to_vec();
    // A participant named in canonical form already is its own key.
    names.extend(body.participants().iter().map(|p| {
        let key = name_key(p);
        if key == **p {
            p.clone()
        } else {
            Name::from(key)
        }
    }));
    names.sort();
    names.dedup();
    names
}

/// Makes room in `v` for `extra` more elements, growing its capacity by
/// an eighth at a time where `Vec` doubles: the ledger's vectors by fact
/// id only grow, an id at a time, and doubling left a quarter of their
/// slots spare on average (issue 24's heap table). Growth stays amortized
/// O(1) per element.
fn reserve_by_eighths<T>(v: &mut Vec<T>, extra: usize) {
    let want = v.len() + extra;
    let capacity = v.capacity();
    if want > capacity {
        v.reserve_exact(want.max(capacity + capacity / 8) - v.len());
    }
}

/// A retained fact to write, copied first if a published version shares it.
fn writable(facts: &mut [Option<Arc<Fact>>], id: FactId) -> Option<&mut Fact> {
    facts
        .get_mut(id.0 as usize)
        .and_then(Option::as_mut)
        .map(Arc::make_mut)
}

/// The absorption bucket of an entity and a value-token hash: 32 bits of
/// one hash of the pair ([`id_lists::HashedIds`]), so an entry holds no
/// name; a candidate is checked to name the entity.
fn absorb_bucket(entity: &str, value_hash: u64) -> u32 {
    use std::hash::BuildHasher;
    id_lists::fold(rustc_hash::FxBuildHasher.hash_one((entity, value_hash)))
}
