//! Serving-path instrumentation: hdrhistogram, recorded without locks.
//!
//! Every thread that serves (a request thread, a worker, the publisher, the
//! construction actor) owns a [`Probe`]: one hdrhistogram `Recorder` per
//! [`Quantity`]. Recording is a local histogram update plus one atomic load
//! (the phase check), so it takes no lock and never waits. [`Metrics::report`]
//! merges the recorders off the serving path (a phase shift: each recorder
//! hands its histogram over on its next record or when dropped).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hdrhistogram::Histogram;
use hdrhistogram::sync::{Recorder, SyncHistogram};
use serde::Serialize;

/// What is measured. Durations are recorded in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// `r`: one load of a context's published snapshot.
    Read,
    /// `h`: handing a job to the worker queue (including a refused handoff).
    Handoff,
    /// Fresh-mode waiting, from handoff to the response (fallback included).
    FreshWait,
    /// `σ`, on the serving path (Table 8): per fallback, the observed fresh
    /// wait minus ω minus `r`; per completed job, the delay from the worker's
    /// completion signal to the request resuming.
    Sigma,
    /// A worker's retrieval, from dequeue to completion.
    Service,
    /// A cancelled job's drain: from the request's deadline to the worker
    /// letting go of it.
    Drain,
    /// Jobs waiting in the queue when a request hands one over (a count).
    QueueDepth,
    /// Age of the snapshot a request read.
    SnapshotAge,
    /// One snapshot publication (retrieval and store) for one context.
    Publish,
    /// One commit of the construction actor (apply, build, publish).
    Commit,
    /// Observations in one group commit (a count).
    BatchSize,
    /// A whole retrieve call at the server (`pfm serve`), request threads.
    Retrieve,
    /// An observation from arrival at the server's writer to its durable
    /// acknowledgement (group-commit wait, commit and fsync).
    Observe,
}

impl Quantity {
    /// Every quantity, in index order.
    pub const ALL: [Quantity; 13] = [
        Quantity::Read,
        Quantity::Handoff,
        Quantity::FreshWait,
        Quantity::Sigma,
        Quantity::Service,
        Quantity::Drain,
        Quantity::QueueDepth,
        Quantity::SnapshotAge,
        Quantity::Publish,
        Quantity::Commit,
        Quantity::BatchSize,
        Quantity::Retrieve,
        Quantity::Observe,
    ];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Quantity::Read => "read",
            Quantity::Handoff => "handoff",
            Quantity::FreshWait => "fresh",
            Quantity::Sigma => "sigma",
            Quantity::Service => "service",
            Quantity::Drain => "drain",
            Quantity::QueueDepth => "queue_depth",
            Quantity::SnapshotAge => "snapshot_age",
            Quantity::Publish => "publish",
            Quantity::Commit => "commit",
            Quantity::BatchSize => "batch_size",
            Quantity::Retrieve => "retrieve",
            Quantity::Observe => "observe",
        }
    }
}

/// Event counters (relaxed increments: lock-free, totals only).
#[derive(Debug, Default)]
pub struct Counters {
    /// Snapshot-mode reads.
    pub snapshot_reads: AtomicU64,
    /// Fresh-mode requests.
    pub fresh_requests: AtomicU64,
    /// Fresh requests answered from the snapshot because the wait timed out.
    pub fallbacks: AtomicU64,
    /// Fresh requests answered from the snapshot because no worker was free.
    pub no_free_worker: AtomicU64,
    /// Fresh requests answered from the snapshot because their tenant held
    /// its whole share of a shared queue (see `admission`).
    pub over_share: AtomicU64,
    /// Jobs a worker dropped or stopped because their request gave up (or,
    /// for a hedged job, because the other worker delivered).
    pub cancelled_jobs: AtomicU64,
    /// Fresh jobs also handed to a second worker.
    pub hedges: AtomicU64,
    /// Snapshot publications.
    pub publications: AtomicU64,
    /// Index versions published by construction.
    pub versions: AtomicU64,
    /// Observations committed.
    pub observations: AtomicU64,
    /// Pruning passes.
    pub prunes: AtomicU64,
}

impl Counters {
    /// Adds one to a counter.
    #[inline]
    pub fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// A histogram bucket's count. Every tenant's runtime holds a histogram per
/// quantity, and each thread that records for it a copy of the ones it
/// records, so the bucket width is most of a served tenant's fixed memory:
/// 32 bits halve it (1,000 open tenants served for 30 s held ~0.27 MB of
/// probes each at 64 bits). hdrhistogram saturates a full bucket rather
/// than wrap, and a bucket fills only after 4.29 billion samples of one
/// value range in one tenant's runtime.
type Count = u32;

/// The histograms of one runtime and its counters.
pub struct Metrics {
    /// The merged histograms; locked only to add a probe or to report.
    merged: Mutex<Vec<SyncHistogram<Count>>>,
    /// Event counters.
    pub counters: Counters,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics")
            .field("counters", &self.counters)
            .finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        let merged = Quantity::ALL
            .iter()
            .map(|_| {
                // From 1 ns at two significant digits (1% relative error),
                // growing with the largest value recorded: a histogram of
                // microsecond values is ~8 KB, one that has seen 100 s
                // ~30 KB, so a tenant's many probes stay small (their
                // recorders start at the merged histogram's size).
                // Infallible: constant bounds that hdrhistogram accepts.
                let mut h =
                    Histogram::<Count>::new_with_bounds(1, 2, 2).expect("valid histogram bounds");
                h.auto(true);
                SyncHistogram::from(h)
            })
            .collect();
        Metrics {
            merged: Mutex::new(merged),
            counters: Counters::default(),
        }
    }
}

/// A thread's recorders, one per [`Quantity`] it records (a recorder is a
/// histogram of its own, 8–30 KB: a probe made with [`Metrics::probe_of`]
/// holds only the quantities its site records, so a tenant's probes on
/// every request thread and worker stay small).
pub struct Probe {
    recorders: Vec<Option<Recorder<Count>>>,
}

impl std::fmt::Debug for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Probe")
    }
}

impl Probe {
    /// Records a duration.
    #[inline]
    pub fn record(&mut self, quantity: Quantity, value: Duration) {
        let ns = u64::try_from(value.as_nanos()).unwrap_or(u64::MAX);
        self.count(quantity, ns);
    }

    /// Records a count (or a duration already in nanoseconds). A quantity
    /// the probe was not made for is a bug at its site (debug builds
    /// panic; release builds drop the sample).
    #[inline]
    pub fn count(&mut self, quantity: Quantity, value: u64) {
        match &mut self.recorders[quantity as usize] {
            // Grows the recorder past its largest value so far (an
            // allocation, at most once per power of two); a value too large
            // for any histogram is clamped.
            Some(r) => {
                if r.record(value).is_err() {
                    r.saturating_record(value);
                }
            }
            None => debug_assert!(false, "this probe does not record {quantity:?}"),
        }
    }
}

/// Quantiles of one quantity, in microseconds (counts for counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Samples.
    pub n: u64,
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

impl Metrics {
    /// A new probe for the calling thread recording `quantities` only (off
    /// the serving path: it locks).
    pub fn probe_of(&self, quantities: &[Quantity]) -> Probe {
        let merged = self.merged.lock().unwrap_or_else(|e| e.into_inner());
        Probe {
            recorders: merged
                .iter()
                .zip(Quantity::ALL)
                .map(|(h, q)| quantities.contains(&q).then(|| h.recorder()))
                .collect(),
        }
    }

    /// Merges what the probes recorded (waiting at most `wait` for idle
    /// probes; dropped probes have already handed theirs over) and
    /// summarizes one quantity. Durations come out in microseconds.
    pub fn summary(&self, quantity: Quantity, wait: Duration) -> Summary {
        let mut merged = self.merged.lock().unwrap_or_else(|e| e.into_inner());
        let h = &mut merged[quantity as usize];
        h.refresh_timeout(wait);
        let scale = match quantity {
            Quantity::QueueDepth | Quantity::BatchSize => 1.0,
            _ => 1e-3,
        };
        if h.is_empty() {
            return Summary::default();
        }
        Summary {
            n: h.len(),
            p50: h.value_at_quantile(0.5) as f64 * scale,
            p99: h.value_at_quantile(0.99) as f64 * scale,
            max: h.max() as f64 * scale,
        }
    }

    /// Summaries of every quantity.
    pub fn report(&self, wait: Duration) -> Vec<(Quantity, Summary)> {
        Quantity::ALL
            .iter()
            .map(|&q| (q, self.summary(q, wait)))
            .collect()
    }
}
