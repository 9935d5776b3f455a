//! A host: the executors that many runtimes (one per tenant) share, so the
//! thread count is fixed by configuration and never by the number of
//! tenants.
//!
//! - one tokio runtime of [`ServeOptions::construction_threads`] threads,
//!   where each runtime's construction actor is a task: one tenant's
//!   commits stay serial (one actor, one mailbox: Proposition 1's premise)
//!   while different tenants commit in parallel;
//! - one retrieval worker pool fed by one bounded queue; each job carries
//!   its store, and each runtime may cap its share of the queue
//!   ([`ServeOptions::tenant_jobs`], see `admission`);
//! - one snapshot publisher thread for every runtime's registered contexts
//!   ([`snapshot::run_publisher`]).
//!
//! [`Runtime::start`](crate::Runtime::start) starts a private host for one
//! runtime; [`Runtime::attach`](crate::Runtime::attach) adds a runtime to a
//! shared one. A host stops when the last runtime on it is dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;

use crossbeam_channel::Sender;

use crate::metrics::Metrics;
use crate::pool::{RetrievalJob, WorkerPool};
use crate::snapshot::{self, Notice, TenantId};
use crate::sync::queue;
use crate::{ServeOptions, may_block};
use pfm::error::{Error, Result};

/// The shared executors (see the module doc).
pub struct Host {
    /// The construction actors' runtime (taken when the host stops).
    tokio: Option<tokio::runtime::Runtime>,
    /// The workers' queue; workers stop once it and every requester's
    /// sender are gone.
    jobs: Option<queue::Sender<RetrievalJob>>,
    pool: WorkerPool,
    notices: Sender<Notice>,
    publisher: Option<JoinHandle<()>>,
    /// The workers' service and drain times and their cancelled jobs (the
    /// runtime's own metrics for a private host).
    metrics: Arc<Metrics>,
    next_id: AtomicU64,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("pinned", &self.pool.pinned)
            .finish_non_exhaustive()
    }
}

impl Host {
    /// Starts the executors `options` describes (its host fields: workers,
    /// queue, pinning, hedging aside, publication period, background
    /// scheduling, construction threads and the workers' query encoder).
    /// Must be called from a thread that may block.
    pub fn start(options: &ServeOptions) -> Result<Arc<Host>> {
        Host::start_with(options, Arc::new(Metrics::default()))
    }

    /// [`Host::start`] with the workers recording into `metrics`.
    pub(crate) fn start_with(options: &ServeOptions, metrics: Arc<Metrics>) -> Result<Arc<Host>> {
        may_block("Host::start")?;
        options.validate()?;
        let background = options.background;
        let mut tokio = tokio::runtime::Builder::new_multi_thread();
        tokio
            .worker_threads(options.construction_threads)
            .thread_name("pfm-construction")
            .enable_time();
        // The actors run on the runtime's threads (not on the caller's, whose
        // priority must not change). tokio's loom build has no start hook.
        #[cfg(not(loom))]
        tokio.on_thread_start(move || background.apply());
        let tokio = tokio
            .build()
            .map_err(|e| Error::ShutDown(format!("cannot start the construction runtime: {e}")))?;

        let (notices, notices_rx) = crossbeam_channel::unbounded();
        let period = options.publish_every;
        let publisher = std::thread::Builder::new()
            .name("pfm-publisher".into())
            .spawn(move || {
                background.apply();
                snapshot::run_publisher(notices_rx, period);
            })
            .map_err(|e| Error::ShutDown(format!("cannot start the snapshot publisher: {e}")))?;

        let (jobs, jobs_rx) = queue::bounded(options.queue);
        let pool = WorkerPool::start(
            options.workers,
            options.pin_workers,
            &jobs_rx.spinning(options.spin),
            &metrics,
            options.encoder.clone(),
        )?;
        Ok(Arc::new(Host {
            tokio: Some(tokio),
            jobs: Some(jobs),
            pool,
            notices,
            publisher: Some(publisher),
            metrics,
            next_id: AtomicU64::new(0),
        }))
    }

    /// The workers' histograms and counters.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// How many workers were pinned to a core.
    pub fn pinned_workers(&self) -> usize {
        self.pool.pinned
    }

    /// The construction runtime.
    pub(crate) fn handle(&self) -> Result<&tokio::runtime::Handle> {
        self.tokio
            .as_ref()
            .map(tokio::runtime::Runtime::handle)
            .ok_or_else(|| Error::ShutDown("the host has stopped".into()))
    }

    /// A sender on the workers' queue.
    pub(crate) fn jobs(&self) -> Result<queue::Sender<RetrievalJob>> {
        self.jobs
            .clone()
            .ok_or_else(|| Error::ShutDown("the worker pool has stopped".into()))
    }

    /// Tells the publisher thread something (it is gone only once the
    /// host stops, so a failed send has nobody left to tell).
    pub(crate) fn notify(&self, notice: Notice) {
        let _ = self.notices.send(notice);
    }

    /// A sender of notices for a runtime's construction.
    pub(crate) fn notices(&self) -> Sender<Notice> {
        self.notices.clone()
    }

    /// A new runtime's number.
    pub(crate) fn next_id(&self) -> TenantId {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.notify(Notice::Stop);
        if let Some(publisher) = self.publisher.take() {
            let _ = publisher.join();
        }
        // Workers finish once the last requester lets go of the queue.
        self.jobs = None;
        if let Some(tokio) = self.tokio.take() {
            if may_block("").is_ok() {
                drop(tokio);
            } else {
                // Dropped inside an async task, where blocking would panic.
                tokio.shutdown_background();
            }
        }
    }
}
