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

pub mod construction;
pub mod encode;
pub mod handoff;
pub mod metrics;
pub mod pool;
pub mod request;
pub mod snapshot;
pub mod sync;

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use ractor::{Actor, ActorRef};

use crate::sync::queue;
use crate::sync::{Publication, Shared};
use pfm::error::{Error, Result};
use pfm::index::IndexVersion;
use pfm::memory::{Memory, Observation, Receipt};
use pfm::retrieve::Request;
use pfm::time::WallTime;

pub use construction::{Construction, ConstructionActor, ConstructionMsg, Touched};
pub use encode::{EncoderFactory, QueryEncoder};
pub use handoff::{Delivery, Waited, Waiter, completion};
pub use metrics::{Metrics, Probe, Quantity, Summary};
pub use pool::{Reply, RetrievalJob, Worker, WorkerPool};
pub use request::{Fallback, Requester, Served, Source, Timings};
pub use snapshot::{
    Changed, Context, ContextHandle, ContextId, Contexts, DEFAULT_MAX_CONTEXTS, Snapshot,
    SnapshotPublisher,
};

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
    fn apply(self) {
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

/// How the runtime is set up.
#[derive(Clone)]
pub struct ServeOptions {
    /// Retrieval worker threads (more than one, or a request can queue
    /// behind a cancelled job that is draining).
    pub workers: usize,
    /// Jobs that may wait for a worker; a request that finds the queue full
    /// falls back at once instead of queueing without bound.
    pub queue: usize,
    /// Pin workers to cores (round-robin) where the OS allows it.
    pub pin_workers: bool,
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
            .field("workers", &self.workers)
            .field("queue", &self.queue)
            .field("pin_workers", &self.pin_workers)
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
            workers: 4,
            queue: 4,
            pin_workers: true,
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
        if self.workers == 0 || self.queue == 0 {
            return Err(Error::InvalidConfig(
                "the serving runtime needs at least one worker and a queue of at least one job"
                    .into(),
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
        if self.publish_every.is_zero() || self.prune_every.is_some_and(|p| p.is_zero()) {
            return Err(Error::InvalidConfig(
                "publication and pruning periods must be positive".into(),
            ));
        }
        Ok(())
    }
}

/// A running memory server: construction, publisher, workers.
pub struct Runtime {
    /// The construction actor's runtime (taken at shutdown).
    tokio: Option<tokio::runtime::Runtime>,
    construction: ActorRef<ConstructionMsg>,
    actor: Option<tokio::task::JoinHandle<()>>,
    versions: Shared<Publication<IndexVersion>>,
    contexts: Shared<Contexts>,
    jobs: Option<queue::Sender<RetrievalJob>>,
    pool: WorkerPool,
    publisher: Option<JoinHandle<()>>,
    metrics: Arc<Metrics>,
    clock: Clock,
    hedge: Option<f64>,
    encoder: Option<EncoderFactory>,
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
    /// Starts serving `memory`. The construction actor gets its own tokio
    /// runtime, so this (like `observe` and `exclusive`, which wait for
    /// construction) must be called from a thread that may block, not from
    /// inside an async task: there it returns an error instead.
    pub fn start(memory: Memory, options: ServeOptions) -> Result<Self> {
        may_block("Runtime::start")?;
        options.validate()?;
        let background = options.background;
        let metrics = Arc::new(Metrics::default());
        let (wake_tx, wake_rx) = crossbeam_channel::unbounded();
        let construction = Construction::new(memory, options.clock.clone())
            .notify(wake_tx)
            .instrument(metrics.clone());
        let versions = construction.versions().clone();
        let contexts = Shared::new(Contexts::with_limit(options.max_contexts));

        let mut tokio = tokio::runtime::Builder::new_multi_thread();
        tokio
            .worker_threads(1)
            .thread_name("pfm-construction")
            .enable_time();
        // The actor runs on the runtime's threads (not on the caller's, whose
        // priority must not change). tokio's loom build has no start hook.
        #[cfg(not(loom))]
        tokio.on_thread_start(move || background.apply());
        let tokio = tokio
            .build()
            .map_err(|e| Error::ShutDown(format!("cannot start the construction runtime: {e}")))?;
        let (actor_ref, actor) = tokio
            .block_on(Actor::spawn(
                None,
                ConstructionActor,
                (construction, options.prune_every),
            ))
            .map_err(|e| Error::ShutDown(format!("cannot start the construction actor: {e}")))?;

        let publisher = SnapshotPublisher::new(
            versions.clone(),
            contexts.clone(),
            options.clock.clone(),
            metrics.clone(),
        );
        let period = options.publish_every;
        let publisher = std::thread::Builder::new()
            .name("pfm-publisher".into())
            .spawn(move || {
                background.apply();
                publisher.run(wake_rx, period)
            })
            .map_err(|e| Error::ShutDown(format!("cannot start the snapshot publisher: {e}")))?;

        let (jobs, jobs_rx) = queue::bounded(options.queue);
        let pool = WorkerPool::start(
            options.workers,
            options.pin_workers,
            &jobs_rx,
            &versions,
            &metrics,
            options.encoder.clone(),
        )?;
        Ok(Runtime {
            tokio: Some(tokio),
            construction: actor_ref,
            actor: Some(actor),
            versions,
            contexts,
            jobs: Some(jobs),
            pool,
            publisher: Some(publisher),
            metrics,
            clock: options.clock,
            hedge: options.hedge,
            encoder: options.encoder,
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

    /// A registered context.
    pub fn context(&self, id: ContextId) -> Result<ContextHandle> {
        self.contexts.get(id)
    }

    /// A request handle for the calling thread.
    pub fn requester(&self) -> Result<Requester> {
        let jobs = self
            .jobs
            .clone()
            .ok_or_else(|| Error::ShutDown("the worker pool has stopped".into()))?;
        Ok(
            Requester::new(jobs, self.metrics.clone(), self.clock.clone())
                .with_hedge(self.hedge)
                .with_encoder(self.encoder.clone()),
        )
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
        self.pool.pinned
    }

    /// Stops construction (committing what is pending) and the publisher,
    /// and waits for them; workers stop when the last requester is dropped.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let Some(tokio) = self.tokio.take() else {
            return;
        };
        self.construction.stop(None);
        if may_block("").is_ok() {
            if let Some(actor) = self.actor.take() {
                let _ = tokio.block_on(actor);
            }
        } else {
            // Dropped inside an async task: stop without waiting (blocking
            // there would panic); the actor commits what is pending as it stops.
            tokio.shutdown_background();
        }
        // The actor's state (and the publisher's wake sender) is gone now,
        // so the publisher's loop ends.
        if let Some(publisher) = self.publisher.take() {
            let _ = publisher.join();
        }
        // Workers finish once the last requester lets go of the queue.
        self.jobs = None;
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.stop();
    }
}
