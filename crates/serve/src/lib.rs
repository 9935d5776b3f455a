//! The serving runtime: a construction actor (the only writer), a snapshot
//! publisher, a retrieval worker pool and the request path, with the waiting
//! bound of Proposition 2 (see `docs/serving-bound.md`).
//!
//! ```text
//!  observe ──> ConstructionActor (ractor) ── commit ──> Publication<IndexVersion>
//!                 group commit, prune timer                 │ one store per commit
//!                                                           ├──> SnapshotPublisher thread
//!                                                           │      per context: Publication<Snapshot>
//!                                                           └──> worker threads (pool)
//!  Requester (caller's thread):
//!    snapshot mode: one load of the context's snapshot                   adds <= σ + r
//!    fresh mode: try_send a job (h), wait <= ω, else cancel + snapshot   adds <= h + ω + σ + r
//! ```
//!
//! # Layout
//! - [`construction`]: the writer and its actor.
//! - [`snapshot`]: registered contexts, snapshots, the publisher.
//! - [`pool`]: retrieval jobs and the worker threads.
//! - [`handoff`]: the one-shot completion a fresh request waits on (its cancel flag).
//! - [`request`]: the request path (snapshot and fresh modes).
//! - [`metrics`]: hdrhistogram probes and counters.
//! - [`sync`]: the primitives of these protocols (std / arc-swap, or loom's
//!   under `--cfg loom`), so `loom-tests/` checks this crate's own code.

pub mod admission;
pub mod construction;
pub mod encode;
pub mod handoff;
pub mod host;
pub mod metrics;
pub mod opening;
pub mod pool;
pub mod request;
pub mod residency;
pub mod snapshot;
pub mod sync;
pub mod turns;

use std::sync::Arc;
use std::time::Duration;

use ractor::{Actor, ActorRef};

use crate::sync::{Publication, Shared};
use pfm::error::{Error, Result};
use pfm::index::IndexVersion;
use pfm::memory::{Memory, Observation, Receipt};
use pfm::retrieve::Request;
use pfm::time::WallTime;

pub use admission::{Admission, Ticket};
pub use construction::{Construction, ConstructionActor, ConstructionMsg, Notify, Touched};
pub use encode::{EncoderFactory, QueryEncoder};
pub use handoff::{Delivery, Waited, Waiter, completion};
pub use host::Host;
pub use metrics::{Metrics, Probe, Quantity, Summary};
pub use opening::{Close, Locked, Opening};
pub use pool::{Reply, RetrievalJob, Worker, WorkerPool};
pub use request::{Fallback, Requester, Served, Source, Timings};
pub use residency::{Pin, Residency};
pub use snapshot::{
    Changed, Context, ContextHandle, ContextId, Contexts, DEFAULT_MAX_CONTEXTS, Notice, Snapshot,
    SnapshotPublisher, TenantId,
};
pub use turns::Turns;

/// The time retrieval and pruning use: the wall clock by default; a
/// harness can drive a synthetic one.
pub type Clock = Arc<dyn Fn() -> WallTime + Send + Sync>;

/// The wall clock.
pub fn wall_clock() -> Clock {
    Arc::new(WallTime::now)
}

/// Errors (rather than panicking inside tokio) when the calling thread is
/// an async task's, where `what` would block the executor.
fn may_block(what: &str) -> Result<()> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(Error::WouldBlock(format!(
            "{what} blocks until construction answers: call it from a blocking thread (e.g. tokio::task::spawn_blocking), not from an async task"
        )));
    }
    Ok(())
}

/// How background threads (construction, its merges, the publisher) are
/// scheduled relative to the serving threads (workers, requests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Background {
    /// Linux `SCHED_IDLE`: they run when no serving thread wants the core,
    /// and a woken serving thread preempts them at once (they still make
    /// progress under full load, at a very low weight). The default.
    #[default]
    Idle,
    /// A higher nice value (1–19): a lower share of contended cores.
    Nice(i32),
    /// The same priority as the serving threads.
    Normal,
}

impl std::str::FromStr for Background {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "idle" => Ok(Background::Idle),
            "normal" => Ok(Background::Normal),
            _ => s
                .strip_prefix("nice:")
                .and_then(|n| n.parse().ok())
                .map(Background::Nice)
                .ok_or_else(|| {
                    Error::InvalidConfig(format!(
                        "background {s:?}: use idle, normal or nice:N (N from 1 to 19)"
                    ))
                }),
        }
    }
}

impl Background {
    /// Applies the policy to the calling thread (threads it starts inherit
    /// it). Best effort: where the OS refuses, the thread keeps its priority.
    pub fn apply(self) {
        #[cfg(target_os = "linux")]
        // SAFETY: setpriority and sched_setscheduler have no memory-safety
        // preconditions; `param` outlives the call. On Linux, `0` names the
        // calling thread for both.
        unsafe {
            match self {
                Background::Idle => {
                    let param = libc::sched_param { sched_priority: 0 };
                    libc::sched_setscheduler(0, libc::SCHED_IDLE, &param);
                }
                Background::Nice(n) => {
                    libc::setpriority(libc::PRIO_PROCESS, 0, n);
                }
                Background::Normal => {}
            }
        }
    }
}

/// The longest [`ServeOptions::spin`]: a second of polling already costs a
/// core for a second per idle period, far past any request gap worth
/// bridging.
pub const MAX_SPIN: Duration = Duration::from_secs(1);

/// How the runtime is set up. On a shared [`Host`], the host's fields
/// (workers, queue, pinning, publication period, background scheduling,
/// construction threads, the workers' encoder) are read when the host
/// starts, and each runtime's own (hedge, contexts, pruning, clock, its
/// share of the queue, the requesters' encoder) when it attaches.
#[derive(Clone)]
pub struct ServeOptions {
    /// Threads of the construction runtime (host): each store's
    /// construction actor is a task there, so this many stores commit in
    /// parallel, each serially.
    pub construction_threads: usize,
    /// Most fresh jobs one runtime may have queued or running in the
    /// host's queue (see [`Admission`]); `None`: no cap (one runtime on its
    /// own host).
    pub tenant_jobs: Option<usize>,
    /// Retrieval worker threads (more than one, or a request can queue
    /// behind a cancelled job that is draining).
    pub workers: usize,
    /// Jobs that may wait for a worker; a request that finds the queue full
    /// falls back at once instead of queueing without bound.
    pub queue: usize,
    /// Pin workers to cores (round-robin) where the OS allows it.
    pub pin_workers: bool,
    /// How long an idle worker polls the job queue before it sleeps (see
    /// `sync::queue`): a job that arrives meanwhile is taken without a
    /// wake-up, at the cost of that CPU time. Zero sleeps at once; at most
    /// [`MAX_SPIN`].
    pub spin: Duration,
    /// Fraction of `ω` after which a fresh job is also handed to a second
    /// worker (a hedge against a stalled one); `None` never hedges.
    pub hedge: Option<f64>,
    /// Period of the full snapshot republication.
    pub publish_every: Duration,
    /// Most registered contexts (see [`Contexts::with_limit`]).
    pub max_contexts: usize,
    /// Period of pruning; `None` never prunes.
    pub prune_every: Option<Duration>,
    /// Scheduling of construction, merges and the publisher: background
    /// work yields the cores to a woken request thread or worker, which is
    /// what keeps `σ` small while the cores are busy ingesting.
    pub background: Background,
    /// The clock.
    pub clock: Clock,
    /// Makes query encoder sessions for the dense and hybrid rankers (one
    /// per worker and per requester, on first use); `None`: dense requests
    /// are [`pfm::error::Error::DenseUnavailable`] unless they carry their
    /// vector.
    pub encoder: Option<EncoderFactory>,
}

impl std::fmt::Debug for ServeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeOptions")
            .field("construction_threads", &self.construction_threads)
            .field("tenant_jobs", &self.tenant_jobs)
            .field("workers", &self.workers)
            .field("queue", &self.queue)
            .field("pin_workers", &self.pin_workers)
            .field("spin", &self.spin)
            .field("hedge", &self.hedge)
            .field("publish_every", &self.publish_every)
            .field("max_contexts", &self.max_contexts)
            .field("prune_every", &self.prune_every)
            .field("background", &self.background)
            .field("encoder", &self.encoder.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for ServeOptions {
    /// Four workers as in the paper's Appendix G, a queue as long as the
    /// pool, publication every 50 ms, pruning every second, at most
    /// [`DEFAULT_MAX_CONTEXTS`] contexts, the wall clock.
    fn default() -> Self {
        ServeOptions {
            construction_threads: 1,
            tenant_jobs: None,
            workers: 4,
            queue: 4,
            pin_workers: true,
            spin: Duration::ZERO,
            hedge: Some(request::DEFAULT_HEDGE),
            publish_every: Duration::from_millis(50),
            max_contexts: DEFAULT_MAX_CONTEXTS,
            prune_every: Some(Duration::from_secs(1)),
            background: Background::Idle,
            clock: wall_clock(),
            encoder: None,
        }
    }
}

impl ServeOptions {
    fn validate(&self) -> Result<()> {
        if self.workers == 0 || self.queue == 0 || self.construction_threads == 0 {
            return Err(Error::InvalidConfig(
                "the serving runtime needs at least one worker, one construction thread and a queue of at least one job"
                    .into(),
            ));
        }
        if self.tenant_jobs == Some(0) {
            return Err(Error::InvalidConfig(
                "tenant_jobs must be at least 1 (or unset: no cap)".into(),
            ));
        }
        if self.hedge.is_some_and(|h| !(h > 0.0 && h < 1.0)) {
            return Err(Error::InvalidConfig(
                "hedge must be a fraction of omega strictly between 0 and 1".into(),
            ));
        }
        if let Background::Nice(n) = self.background
            && !(1..=19).contains(&n)
        {
            return Err(Error::InvalidConfig(format!(
                "background nice {n}: use 1 to 19"
            )));
        }
        if self.spin > MAX_SPIN {
            return Err(Error::InvalidConfig(format!(
                "spin {:?}: at most {MAX_SPIN:?} (an idle worker polls that long before it sleeps)",
                self.spin
            )));
        }
        if self.publish_every.is_zero() || self.prune_every.is_some_and(|p| p.is_zero()) {
            return Err(Error::InvalidConfig(
                "publication and pruning periods must be positive".into(),
            ));
        }
        Ok(())
    }
}

/// A running memory server: its construction actor, its registered
/// contexts and the handles requests use, on a [`Host`]'s executors.
pub struct Runtime {
    host: Arc<Host>,
    id: TenantId,
    construction: ActorRef<ConstructionMsg>,
    actor: Option<tokio::task::JoinHandle<()>>,
    versions: Shared<Publication<IndexVersion>>,
    contexts: Shared<Contexts>,
    admission: Option<Admission>,
    metrics: Arc<Metrics>,
    clock: Clock,
    hedge: Option<f64>,
    encoder: Option<EncoderFactory>,
    stopped: bool,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("seq", &self.versions.load().seq)
            .field("contexts", &self.contexts)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// Starts serving `memory` on a host of its own. The construction actor
    /// gets its own tokio runtime, so this (like `observe` and `exclusive`,
    /// which wait for construction) must be called from a thread that may
    /// block, not from inside an async task: there it returns an error
    /// instead.
    pub fn start(memory: Memory, options: ServeOptions) -> Result<Self> {
        let metrics = Arc::new(Metrics::default());
        let host = Host::start_with(&options, metrics.clone())?;
        Runtime::attach_with(&host, memory, &options, metrics)
    }

    /// Starts serving `memory` on a shared host (its runtime's fields of
    /// `options`: see [`ServeOptions`]). Must be called from a thread that
    /// may block.
    pub fn attach(host: &Arc<Host>, memory: Memory, options: &ServeOptions) -> Result<Self> {
        Runtime::attach_with(host, memory, options, Arc::new(Metrics::default()))
    }

    fn attach_with(
        host: &Arc<Host>,
        memory: Memory,
        options: &ServeOptions,
        metrics: Arc<Metrics>,
    ) -> Result<Self> {
        may_block("Runtime::attach")?;
        options.validate()?;
        let id = host.next_id();
        let notices = host.notices();
        let construction = Construction::new(memory, options.clock.clone())
            .notify(Box::new(move |changed| {
                // Unbounded: never dropped, never waited for; an error
                // means the host has stopped.
                let _ = notices.send(Notice::Changed(id, changed));
            }))
            .instrument(metrics.clone());
        let versions = construction.versions().clone();
        let contexts = Shared::new(Contexts::with_limit(options.max_contexts));
        // Attached before the actor runs, so its first notice finds it.
        host.notify(Notice::Attach(
            id,
            Box::new(SnapshotPublisher::new(
                versions.clone(),
                contexts.clone(),
                options.clock.clone(),
                metrics.clone(),
            )),
        ));
        let spawned = host.handle()?.block_on(Actor::spawn(
            None,
            ConstructionActor,
            (construction, options.prune_every),
        ));
        let (actor_ref, actor) = match spawned {
            Ok(spawned) => spawned,
            Err(e) => {
                host.notify(Notice::Detach(id));
                return Err(Error::ShutDown(format!(
                    "cannot start the construction actor: {e}"
                )));
            }
        };
        Ok(Runtime {
            host: host.clone(),
            id,
            construction: actor_ref,
            actor: Some(actor),
            versions,
            contexts,
            admission: options.tenant_jobs.map(Admission::new),
            metrics,
            clock: options.clock.clone(),
            hedge: options.hedge,
            encoder: options.encoder.clone(),
            stopped: false,
        })
    }

    /// Commits observations and returns their receipts, once the commit is
    /// published (the write path: it waits for construction).
    pub fn observe_batch(&self, observations: Vec<Observation>) -> Result<Vec<Receipt>> {
        may_block("Runtime::observe")?;
        let (tx, rx) = ractor::concurrency::oneshot();
        self.send(ConstructionMsg::Observe(observations, Some(tx.into())))?;
        rx.blocking_recv()
            .map_err(|_| Error::ShutDown("construction stopped before replying".into()))?
    }

    /// Commits one observation.
    pub fn observe(&self, observation: Observation) -> Result<Receipt> {
        let mut receipts = self.observe_batch(vec![observation])?;
        // Infallible: one receipt per observation.
        Ok(receipts.pop().expect("one receipt per observation"))
    }

    /// Queues observations for the next group commit without waiting.
    pub fn submit(&self, observations: Vec<Observation>) -> Result<()> {
        self.send(ConstructionMsg::Observe(observations, None))
    }

    /// Runs `f` with exclusive access to the store on the construction
    /// actor, publishes what it says it [`Touched`], and returns its result.
    /// Reads never need this: they load a published version (its timeline
    /// holds the ledger's past and every fact's state).
    pub fn exclusive<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Memory) -> (R, Touched) + Send + 'static,
    ) -> Result<R> {
        may_block("Runtime::exclusive")?;
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        // The reply is sent after the publication: a caller that hears back
        // reads its own write.
        self.send(ConstructionMsg::Exclusive(Box::new(move |c| {
            let _ = tx.send(c.exclusive(f));
        })))?;
        rx.recv()
            .map_err(|_| Error::ShutDown("construction stopped before replying".into()))
    }

    /// [`Runtime::exclusive`] without waiting: queues `f` on the
    /// construction actor, and there, once what `f` touched is published,
    /// hands its result to `then` (so a reply sent from `then` is read back
    /// by its caller). Never blocks, so an async task may call it; an error
    /// means construction has stopped and neither closure will run.
    pub fn spawn_exclusive<R: 'static>(
        &self,
        f: impl FnOnce(&mut Memory) -> (R, Touched) + Send + 'static,
        then: impl FnOnce(R) + Send + 'static,
    ) -> Result<()> {
        self.send(ConstructionMsg::Exclusive(Box::new(move |c| {
            then(c.exclusive(f));
        })))
    }

    fn send(&self, message: ConstructionMsg) -> Result<()> {
        self.construction
            .send_message(message)
            .map_err(|e| Error::ShutDown(format!("construction is not running: {e}")))
    }

    /// Registers a context: its first snapshot is built now, later ones by
    /// the publisher. With `follow_clock`, each retrieval uses the clock's
    /// time; otherwise `request.at`.
    pub fn register(&self, request: Request, follow_clock: bool) -> Result<ContextHandle> {
        self.contexts
            .register(request, follow_clock, &self.versions.load(), &self.clock)
    }

    /// Stops publishing a context.
    pub fn unregister(&self, id: ContextId) -> Result<()> {
        self.contexts.unregister(id)
    }

    /// How many contexts are registered.
    pub fn contexts_registered(&self) -> usize {
        self.contexts.len()
    }

    /// A registered context.
    pub fn context(&self, id: ContextId) -> Result<ContextHandle> {
        self.contexts.get(id)
    }

    /// A request handle for the calling thread.
    pub fn requester(&self) -> Result<Requester> {
        Ok(Requester::new(
            self.host.jobs()?,
            self.versions.clone(),
            self.metrics.clone(),
            self.clock.clone(),
        )
        .with_admission(self.admission.clone())
        .with_hedge(self.hedge)
        .with_encoder(self.encoder.clone()))
    }

    /// The newest published index version.
    pub fn version(&self) -> Shared<IndexVersion> {
        self.versions.load()
    }

    /// The publication of index versions (for [`Fallback::Newest`]).
    pub fn publication(&self) -> &Publication<IndexVersion> {
        &self.versions
    }

    /// The runtime's histograms and counters.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// A shared handle on the metrics, to read them after shutdown.
    pub fn metrics_handle(&self) -> Arc<Metrics> {
        self.metrics.clone()
    }

    /// How many workers were pinned to a core.
    pub fn pinned_workers(&self) -> usize {
        self.host.pinned_workers()
    }

    /// The host it runs on.
    pub fn host(&self) -> &Arc<Host> {
        &self.host
    }

    /// Its share of the host's queue, if capped.
    pub fn admission(&self) -> Option<&Admission> {
        self.admission.as_ref()
    }

    /// Stops construction (committing what is pending) and waits for it,
    /// and stops publishing its contexts; a private host's workers stop
    /// when the last requester is dropped.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if std::mem::replace(&mut self.stopped, true) {
            return;
        }
        self.construction.stop(None);
        if may_block("").is_ok()
            && let (Some(actor), Ok(handle)) = (self.actor.take(), self.host.handle())
        {
            let _ = handle.block_on(actor);
        }
        // Dropped inside an async task, the runtime does not wait: the actor
        // commits what is pending as it stops.
        self.host.notify(Notice::Detach(self.id));
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.stop();
    }
}
