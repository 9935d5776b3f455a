//! The retrieval worker pool: prestarted OS threads, pinned where the OS
//! allows, fed by a bounded queue. A job carries its store's publication,
//! so one pool serves every runtime of a [`crate::Host`] (many tenants);
//! workers read the job's newest index version with one load and take no
//! lock; a job's completion is its cancel flag, checked before scoring and
//! between query terms.

use std::sync::Arc;
use std::time::Instant;

use super::admission::Ticket;
use super::encode::{EncoderFactory, QueryEncoder};
use super::handoff::Delivery;
use super::metrics::{Counters, Metrics, Probe, Quantity};
use crate::sync::queue::Receiver;
use crate::sync::{Publication, Shared};
use pfm::block::Block;
use pfm::error::{Error, Result};
use pfm::fact::Seq;
use pfm::index::IndexVersion;
use pfm::rank::Scratch;
use pfm::rank::scorer::Cancel;
use pfm::retrieve::{Request, retrieve_cancellable};

/// A fresh-mode job: one request's retrieval.
#[derive(Debug)]
pub struct RetrievalJob {
    /// What to retrieve (validated before it is queued).
    pub request: Arc<Request>,
    /// The store it reads: the newest version published here.
    pub versions: Shared<Publication<IndexVersion>>,
    /// Its place in its tenant's share of the queue, given back when the
    /// job is dropped (`None`: the runtime caps no tenant).
    pub ticket: Option<Ticket>,
    /// The reply slot's delivery half, and the job's cancel flag.
    pub completion: Delivery<Reply>,
    /// When the request stops waiting (drain time is measured from it).
    pub deadline: Instant,
}

/// A worker's reply.
#[derive(Debug)]
pub struct Reply {
    /// The block, or why there is none.
    pub block: Result<Arc<Block>>,
    /// The commit of the version it was retrieved from.
    pub store_seq: Seq,
    /// When the worker signalled completion (for `σ`).
    pub finished_at: Instant,
}

impl<T> Cancel for Delivery<T> {
    #[inline]
    fn is_cancelled(&self) -> bool {
        Delivery::is_cancelled(self)
    }
}

/// One worker's state: its scratch buffers, query encoder and probe.
pub struct Worker {
    scratch: Scratch,
    encoder: QueryEncoder,
    probe: Probe,
    metrics: Arc<Metrics>,
}

impl Worker {
    /// A worker recording its service and drain times into `metrics`.
    pub fn new(metrics: Arc<Metrics>) -> Self {
        Worker {
            scratch: Scratch::default(),
            encoder: QueryEncoder::new(None),
            probe: metrics.probe_of(&[Quantity::Service, Quantity::Drain]),
            metrics,
        }
    }

    /// Encodes dense and hybrid queries with sessions from `factory`.
    pub fn with_encoder(mut self, factory: Option<EncoderFactory>) -> Self {
        self.encoder = QueryEncoder::new(factory);
        self
    }

    /// Runs one job: drops it if its request already gave up; otherwise
    /// encodes its query if a dense or hybrid ranker needs it (part of the
    /// service time), retrieves from the newest version and delivers the
    /// reply, unless the request gives up first (then the reply is dropped,
    /// never delivered).
    pub fn serve(&mut self, job: RetrievalJob) {
        let started = Instant::now();
        if job.completion.is_cancelled() {
            self.cancelled(&job);
            return;
        }
        let version = job.versions.load();
        let block = self.encoder.vectorize(&job.request).and_then(|encoded| {
            retrieve_cancellable(
                &version,
                encoded.as_ref().unwrap_or(&job.request),
                Some(&job.completion),
                &mut self.scratch,
            )
        });
        if matches!(block, Err(Error::Cancelled)) {
            self.cancelled(&job);
            return;
        }
        let finished_at = Instant::now();
        self.probe.record(Quantity::Service, finished_at - started);
        let reply = Reply {
            block: block.map(Arc::new),
            store_seq: version.seq,
            finished_at,
        };
        if job.completion.complete(reply).is_err() {
            self.cancelled(&job);
        }
    }

    fn cancelled(&mut self, job: &RetrievalJob) {
        Counters::bump(&self.metrics.counters.cancelled_jobs);
        self.probe.record(
            Quantity::Drain,
            Instant::now().saturating_duration_since(job.deadline),
        );
    }

    /// Serves jobs until every sender of `jobs` is gone.
    pub fn run(mut self, jobs: Receiver<RetrievalJob>) {
        while let Ok(job) = jobs.recv() {
            self.serve(job);
        }
    }
}

/// The prestarted worker threads. They run until every sender of the job
/// queue (the runtime's and every [`super::Requester`]'s) is gone, so a
/// requester that outlives the runtime never finds its workers missing.
#[derive(Debug)]
pub struct WorkerPool {
    /// How many workers were pinned to a core.
    pub pinned: usize,
}

impl WorkerPool {
    /// Starts `workers` threads serving `jobs`, pinned round-robin to the
    /// machine's cores when `pin` is set and the OS allows it.
    pub fn start(
        workers: usize,
        pin: bool,
        jobs: &Receiver<RetrievalJob>,
        metrics: &Arc<Metrics>,
        encoder: Option<EncoderFactory>,
    ) -> Result<Self> {
        let cores = if pin {
            core_affinity::get_core_ids().unwrap_or_default()
        } else {
            Vec::new()
        };
        let (pinned_tx, pinned_rx) = std::sync::mpsc::channel();
        for i in 0..workers {
            let worker = Worker::new(metrics.clone()).with_encoder(encoder.clone());
            let jobs = jobs.clone();
            let core = (!cores.is_empty()).then(|| cores[i % cores.len()]);
            let pinned_tx = pinned_tx.clone();
            std::thread::Builder::new()
                .name(format!("pfm-worker-{i}"))
                .spawn(move || {
                    let pinned = core.is_some_and(core_affinity::set_for_current);
                    let _ = pinned_tx.send(pinned);
                    worker.run(jobs);
                })
                .map_err(|e| Error::ShutDown(format!("cannot start a retrieval worker: {e}")))?;
        }
        drop(pinned_tx);
        // Prestarted: every worker is running before the pool is returned.
        let pinned = pinned_rx.iter().take(workers).filter(|p| *p).count();
        Ok(WorkerPool { pinned })
    }
}
