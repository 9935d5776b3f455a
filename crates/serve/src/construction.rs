//! Construction: the only writer. [`Construction`] applies a group commit
//! to the [`Memory`] and publishes the next index version with one pointer
//! store; [`ConstructionActor`] is the ractor actor that owns it, drains its
//! mailbox into group commits and prunes on a timer.
//!
//! # Invariants
//! 1. Every published version is a whole commit: readers see the store
//!    before or after a commit, never inside one (Proposition 1's premise).
//! 2. Versions are published in commit order, by one thread.
//!
//! Checked by `tests/prop_ledger.rs` (one active fact per key in every
//! published version) and loom-tests `commit_atomicity`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ractor::{Actor, ActorProcessingErr, ActorRef, RpcReplyPort};

use super::Clock;
use super::metrics::{Counters, Metrics, Probe, Quantity};
use super::snapshot::Changed;
#[cfg(loom)]
use crate::sync::fault::{self, Fault};
use crate::sync::{self, Publication, Shared};
use pfm::error::{Error, Result};
use pfm::fact::FactId;
use pfm::index::IndexVersion;
#[cfg(loom)]
use pfm::ledger::Forget;
use pfm::memory::{Memory, Observation, Receipt};

/// Where construction's change notices go. The runtime's sends them on an
/// unbounded channel, so a notice is never dropped (the publisher merges
/// whatever is pending into one pass) and the commit never waits for it.
pub type Notify = Box<dyn Fn(Changed) + Send>;

/// The writer's state: the store and where its versions are published.
pub struct Construction {
    memory: Memory,
    versions: Shared<Publication<IndexVersion>>,
    /// Tells the snapshot publisher what each publication changed.
    changes: Option<Notify>,
    clock: Clock,
    probe: Option<(Probe, Arc<Metrics>)>,
}

impl std::fmt::Debug for Construction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Construction")
            .field("seq", &self.memory.ledger().seq())
            .finish_non_exhaustive()
    }
}

impl Construction {
    /// Takes over `memory` and publishes its current version.
    pub fn new(memory: Memory, clock: Clock) -> Self {
        let versions = Shared::new(Publication::new(sync::share(memory.version())));
        Construction {
            memory,
            versions,
            changes: None,
            clock,
            probe: None,
        }
    }

    /// Hands a change notice to `changes` after every publication.
    pub fn notify(mut self, changes: Notify) -> Self {
        self.changes = Some(changes);
        self
    }

    /// Records commit times and batch sizes into `metrics`.
    pub fn instrument(mut self, metrics: Arc<Metrics>) -> Self {
        let probe = metrics.probe_of(&[Quantity::Commit, Quantity::BatchSize]);
        self.probe = Some((probe, metrics));
        self
    }

    /// Where versions are published (readers load from it).
    pub fn versions(&self) -> &Shared<Publication<IndexVersion>> {
        &self.versions
    }

    /// The store.
    pub fn memory(&self) -> &Memory {
        &self.memory
    }

    /// Applies `batch` as one commit and publishes the result.
    pub fn commit(&mut self, batch: Vec<Observation>) -> Result<Vec<Receipt>> {
        let started = Instant::now();
        let n = batch.len() as u64;
        #[cfg(loom)]
        if fault::injected(Fault::SplitCommit) {
            self.retire_first(&batch);
        }
        let receipts = self.memory.observe_batch(batch)?;
        let changed = self.changed(receipts.iter().flat_map(|r| r.outcome.touched()));
        self.publish(changed);
        if let Some((probe, metrics)) = &mut self.probe {
            probe.record(Quantity::Commit, started.elapsed());
            probe.count(Quantity::BatchSize, n);
            metrics
                .counters
                .observations
                .fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(receipts)
    }

    /// The `SplitCommit` fault (loom builds only): retire the current value
    /// of each key the batch names and publish that state before adding the
    /// new values.
    #[cfg(loom)]
    fn retire_first(&mut self, batch: &[Observation]) {
        for key in batch.iter().filter_map(|o| o.key.as_ref()) {
            if let Some(id) = self.memory.ledger().active_for_key(key).map(|f| f.id()) {
                let _ = self.memory.forget(&Forget::Fact(id), (self.clock)());
                self.publish(Changed::Everything);
            }
        }
    }

    /// Retires stale keyless facts (never the current fact of a key).
    pub fn prune(&mut self) -> usize {
        let retired = self.memory.prune((self.clock)());
        let n = retired.len();
        let changed = self.changed(retired);
        self.publish(changed);
        if let Some((_, metrics)) = &self.probe {
            Counters::bump(&metrics.counters.prunes);
        }
        n
    }

    /// Runs `f` with exclusive access to the store, then publishes what it
    /// says it touched: nothing (no version is published, so readers keep
    /// the last one), the listed facts (contexts they cannot reach are only
    /// re-stamped), or everything.
    pub fn exclusive<R>(&mut self, f: impl FnOnce(&mut Memory) -> (R, Touched)) -> R {
        let (out, touched) = f(&mut self.memory);
        match touched {
            Touched::Nothing => {}
            Touched::Facts(ids) => {
                let changed = self.changed(ids);
                self.publish(changed);
            }
            Touched::Everything => self.publish(Changed::Everything),
        }
        out
    }

    /// The bodies of the facts a commit touched (retained facts only: an
    /// erased one has no body left, and erasure publishes everything).
    fn changed(&self, ids: impl IntoIterator<Item = FactId>) -> Changed {
        Changed::Facts {
            upto: self.memory.version().seq,
            facts: ids
                .into_iter()
                .filter_map(|id| self.memory.fact(id).ok().map(|f| f.body.clone()))
                .collect(),
        }
    }

    fn publish(&mut self, changed: Changed) {
        // PUBLISH: `memory.version()` is a finished, immutable version;
        // one store makes it visible whole (loom: commit_atomicity).
        self.versions.store(sync::share(self.memory.version()));
        if let Some((_, metrics)) = &self.probe {
            Counters::bump(&metrics.counters.versions);
        }
        if let Some(changes) = &self.changes {
            changes(changed);
        }
    }
}

/// What a closure run with exclusive access changed, so that publication
/// rebuilds only the registered contexts the change can reach.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Touched {
    /// Nothing readers may see: no version is published. Also what a writer
    /// says when a commit could not be made durable, so readers never see
    /// a commit that may not survive.
    Nothing,
    /// These retained facts were added, revised, re-observed or retired.
    Facts(Vec<FactId>),
    /// Anything may have changed (an erasure: its facts have no body left
    /// to test contexts against).
    Everything,
}

/// Where a caller waiting for its commit gets its receipts.
pub type ReceiptPort = RpcReplyPort<Result<Vec<Receipt>>>;

/// Work for the construction actor.
pub enum ConstructionMsg {
    /// Observations to commit; the reply (if any) comes after the commit.
    Observe(Vec<Observation>, Option<ReceiptPort>),
    /// Commit what is pending (sent by the actor to itself).
    Flush,
    /// Prune (sent by the timer).
    Prune,
    /// Run a closure with exclusive access to the writer (it calls
    /// [`Construction::exclusive`], so it publishes before it replies).
    Exclusive(Box<dyn FnOnce(&mut Construction) + Send>),
}

/// The ractor actor that owns [`Construction`].
#[derive(Debug)]
pub struct ConstructionActor;

/// The actor's state.
pub struct ActorState {
    construction: Construction,
    /// Observations received since the last commit, with their repliers.
    pending: Vec<(Vec<Observation>, Option<ReceiptPort>)>,
    /// Whether a `Flush` is in the mailbox.
    flush_queued: bool,
    prune_every: Option<Duration>,
    timer: Option<tokio::task::JoinHandle<()>>,
}

impl Actor for ConstructionActor {
    type Msg = ConstructionMsg;
    type State = ActorState;
    /// The writer and the pruning period.
    type Arguments = (Construction, Option<Duration>);

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        (construction, prune_every): Self::Arguments,
    ) -> Result<Self::State, ActorProcessingErr> {
        Ok(ActorState {
            construction,
            pending: Vec::new(),
            flush_queued: false,
            prune_every,
            timer: None,
        })
    }

    async fn post_start(
        &self,
        myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if let Some(every) = state.prune_every {
            state.timer = Some(myself.send_interval(every, || ConstructionMsg::Prune));
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        if let Some(timer) = state.timer.take() {
            timer.abort();
        }
        flush(state);
        Ok(())
    }

    async fn handle(
        &self,
        myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            ConstructionMsg::Observe(batch, reply) => {
                state.pending.push((batch, reply));
                // Group commit: everything that reaches the mailbox before
                // this Flush is committed with it.
                if !state.flush_queued {
                    state.flush_queued = true;
                    myself.send_message(ConstructionMsg::Flush)?;
                }
            }
            ConstructionMsg::Flush => flush(state),
            ConstructionMsg::Prune => {
                flush(state);
                state.construction.prune();
            }
            ConstructionMsg::Exclusive(f) => {
                flush(state);
                f(&mut state.construction);
            }
        }
        Ok(())
    }
}

/// Commits every pending observation in one commit. Each caller's batch is
/// validated on its own, so one bad batch fails only its caller.
fn flush(state: &mut ActorState) {
    state.flush_queued = false;
    if state.pending.is_empty() {
        return;
    }
    let mut callers = Vec::new();
    let mut batch = Vec::new();
    for (observations, reply) in state.pending.drain(..) {
        if let Err(e) = observations.iter().try_for_each(Observation::validate) {
            if let Some(reply) = reply {
                let _ = reply.send(Err(e));
            }
            continue;
        }
        callers.push((observations.len(), reply));
        batch.extend(observations);
    }
    match state.construction.commit(batch) {
        Ok(receipts) => {
            let mut receipts = receipts.into_iter();
            for (n, reply) in callers {
                let mine: Vec<Receipt> = receipts.by_ref().take(n).collect();
                if let Some(reply) = reply {
                    let _ = reply.send(Ok(mine));
                }
            }
        }
        Err(e) => {
            let message = e.to_string();
            for (_, reply) in callers {
                if let Some(reply) = reply {
                    let _ = reply.send(Err(Error::CommitFailed(message.clone())));
                }
            }
        }
    }
}
