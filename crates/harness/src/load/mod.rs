//! `pfm load`: Appendix G on one machine. A store of synthetic facts serves
//! requests while construction ingests at a target rate and prunes every
//! second, and the snapshot publisher republishes every 50 ms and after
//! every commit. Each request reads its context's snapshot and then makes a
//! fresh request with waiting budget `ω` (mode `both`, the paper's
//! protocol), or only one of the two.
//!
//! The store is the synthetic corpus (`specs/synthetic-corpus.md`) generated
//! for `facts + streamed` facts: the first `facts` are loaded before serving
//! starts, the rest are streamed in at the ingest rate, one observation per
//! message (the actor's group commit batches them).

pub mod http;
pub mod mcp;
pub mod tenants;

use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use pfm::config::Config;
use pfm::error::{Error, Result};
use pfm::fact::Key;
use pfm::memory::{Memory, Observation};
use pfm::time::WallTime;
use pfm_serve::{Background, Quantity, Runtime, ServeOptions, Summary};
use pfm_synth::{BASE_SECS, Vocabulary};

/// Which request modes to exercise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Snapshot reads only.
    Snapshot,
    /// Fresh requests only.
    Fresh,
    /// A snapshot read, then a fresh request (the paper's protocol).
    Both,
}

impl FromStr for Mode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "snapshot" => Ok(Mode::Snapshot),
            "fresh" => Ok(Mode::Fresh),
            "both" => Ok(Mode::Both),
            _ => Err(Error::InvalidConfig(format!(
                "mode {s:?}: use snapshot, fresh or both"
            ))),
        }
    }
}

/// What the ingested facts do to the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ingest {
    /// Each streamed fact revises a stored one (keyed supersession), so the
    /// active store keeps its size whatever the rate.
    Revise,
    /// Each streamed fact is new: the store grows by the rate.
    Append,
}

impl FromStr for Ingest {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "revise" => Ok(Ingest::Revise),
            "append" => Ok(Ingest::Append),
            _ => Err(Error::InvalidConfig(format!(
                "ingest {s:?}: use revise or append"
            ))),
        }
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Facts in the store before serving starts.
    pub facts: u64,
    /// Target ingest rate during the run, in facts per second (0: none).
    pub ingest_rate: f64,
    /// Whether streamed facts revise stored ones or add to the store.
    pub ingest: Ingest,
    /// Requests to make.
    pub requests: usize,
    /// Pause between one request and the next, per request thread.
    pub interval: Duration,
    /// Request threads.
    pub request_threads: usize,
    /// Retrieval workers.
    pub workers: usize,
    /// Fresh-mode waiting budget.
    pub omega: Duration,
    /// Request modes.
    pub mode: Mode,
    /// Registered contexts (requests cycle over them).
    pub contexts: usize,
    /// Corpus seed.
    pub seed: u64,
    /// Corpus vocabulary.
    pub vocabulary: Vocabulary,
    /// Snapshot republication period.
    pub publish_every: Duration,
    /// Pruning period.
    pub prune_every: Duration,
    /// Scheduling of construction and the publisher (see `ServeOptions`).
    pub background: Background,
    /// Pin workers to cores.
    pub pin_workers: bool,
    /// Hedge a fresh job after this fraction of `ω` (see `ServeOptions`).
    pub hedge: Option<f64>,
    /// How long an idle worker polls the queue before it sleeps (see
    /// `ServeOptions::spin`).
    pub spin: Duration,
}

impl Default for LoadOptions {
    /// Appendix G: 20,000 facts, 400 facts/s, 2,000 requests, ω = 5 ms,
    /// four workers, publication every 50 ms, pruning every second.
    fn default() -> Self {
        LoadOptions {
            facts: 20_000,
            ingest_rate: 400.0,
            ingest: Ingest::Revise,
            requests: 2_000,
            interval: Duration::from_millis(5),
            request_threads: 1,
            workers: 4,
            omega: Duration::from_millis(5),
            mode: Mode::Both,
            contexts: 16,
            seed: 7,
            vocabulary: Vocabulary::Wide,
            publish_every: Duration::from_millis(50),
            prune_every: Duration::from_secs(1),
            background: Background::Idle,
            pin_workers: true,
            hedge: Some(pfm_serve::request::DEFAULT_HEDGE),
            spin: Duration::ZERO,
        }
    }
}

impl LoadOptions {
    fn validate(&self) -> Result<()> {
        let bad = |m: &str| Err(Error::InvalidConfig(m.into()));
        if self.facts == 0 {
            return bad("--facts must be >= 1");
        }
        if !(self.ingest_rate.is_finite() && self.ingest_rate >= 0.0) {
            return bad("--ingest-rate must be a rate >= 0 facts per second");
        }
        if self.requests == 0 || self.request_threads == 0 || self.contexts == 0 {
            return bad("--requests, --request-threads and --contexts must be >= 1");
        }
        if self.omega.is_zero() && self.mode != Mode::Snapshot {
            return Err(Error::ZeroOmega);
        }
        Ok(())
    }

    /// Facts to stream in during the run: the target rate over the run's
    /// expected length, with headroom.
    fn streamed(&self) -> u64 {
        let per_thread = self.requests.div_ceil(self.request_threads) as f64;
        let seconds = per_thread * (self.interval.as_secs_f64() + self.omega.as_secs_f64());
        (self.ingest_rate * seconds * 1.5 + self.ingest_rate) as u64
    }
}

/// `{ p50, p99, max }` of one quantity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Quantiles {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

impl From<Summary> for Quantiles {
    fn from(s: Summary) -> Self {
        Quantiles {
            p50: s.p50,
            p99: s.p99,
            max: s.max,
        }
    }
}

/// What a run measured. Durations in microseconds unless the name says ms.
#[derive(Clone, Debug, Serialize)]
pub struct LoadReport {
    /// Facts in the store when serving started.
    pub facts: u64,
    /// Target ingest rate (facts per second).
    pub ingest_rate_target: f64,
    /// Observed ingest rate over the request phase.
    pub ingest_rate_achieved: f64,
    /// Facts committed during the request phase.
    pub ingested: u64,
    /// Whether they revised stored facts or were added.
    pub ingest: Ingest,
    /// Active facts when the request phase started and when it ended.
    pub store_facts: [u64; 2],
    /// Retrieval workers (and how many were pinned to a core).
    pub workers: usize,
    /// Workers pinned to a core.
    pub pinned_workers: usize,
    /// Fresh-mode waiting budget.
    pub omega_us: f64,
    /// Requests made.
    pub requests: usize,
    /// Modes exercised.
    pub mode: Mode,
    /// Snapshot read `r`.
    pub read_us: Quantiles,
    /// Handoff `h`.
    pub handoff_us: Quantiles,
    /// Scheduling delay `σ` on the serving path (Table 8's definition).
    pub sigma_us: Quantiles,
    /// Fresh-mode waiting, handoff to response.
    pub fresh_us: Quantiles,
    /// Age of the snapshot read.
    pub snapshot_age_ms: Quantiles,
    /// Commits between the snapshot read and the newest version.
    pub updates_behind: Quantiles,
    /// Fraction of snapshot reads at least one commit behind.
    pub behind_rate: f64,
    /// Worker retrieval time.
    pub service_us: Quantiles,
    /// Cancelled-job drain time (deadline to release).
    pub drain_us: Quantiles,
    /// Jobs queued at handoff.
    pub queue_depth: Quantiles,
    /// Construction commit time.
    pub commit_us: Quantiles,
    /// Observations per group commit.
    pub batch_size: Quantiles,
    /// Fresh requests answered from the snapshot (timeouts and refusals), 0..1.
    pub fallback_rate: f64,
    /// Fresh requests refused because no worker was free.
    pub no_free_worker: u64,
    /// Jobs cancelled by their request (or settled by the other worker of a hedge).
    pub cancelled_jobs: u64,
    /// Fresh jobs hedged to a second worker.
    pub hedges: u64,
    /// Index versions published during the run.
    pub versions: u64,
    /// Snapshot publications during the run.
    pub publications: u64,
    /// Pruning passes during the run.
    pub prunes: u64,
    /// Seconds the request phase took.
    pub seconds: f64,
    /// Idle workers' spin before sleeping, microseconds.
    pub spin_us: f64,
    /// CPU time the whole process (requests, workers, construction, the
    /// publisher) used over the request phase, in cores (CPU seconds per
    /// second): what a spin costs shows here.
    pub cpu_cores: f64,
}

/// Runs the load test; `progress` is told how many requests are done.
pub fn run(options: &LoadOptions, progress: &(dyn Fn(u64) + Sync)) -> Result<LoadReport> {
    options.validate()?;
    let streamed = options.streamed();
    let total = options.facts + streamed;
    let (facts, queries) =
        pfm_synth::generate(total, options.seed, options.vocabulary, options.contexts);
    let mut memory = Memory::new(Config::default())?;
    // Revise: fact i is filed under its own key (slot i of its first
    // entity); streamed fact j is filed under slot j mod facts, so it
    // supersedes that slot's current value.
    let n = options.facts as usize;
    let keyed = |i: usize, f: &pfm_synth::SynthFact| -> Result<Observation> {
        let o = f.observation();
        Ok(match options.ingest {
            Ingest::Append => o,
            Ingest::Revise => {
                let slot = i % n;
                let key = Key::new(&facts[slot].entities[0], &format!("fact{slot}"))?;
                o.with_key(key, None)
            }
        })
    };
    let observations = facts
        .iter()
        .enumerate()
        .map(|(i, f)| keyed(i, f))
        .collect::<Result<Vec<_>>>()?;
    let (preload, stream) = observations.split_at(n);
    for chunk in preload.chunks(4096) {
        memory.observe_batch(chunk.to_vec())?;
    }
    memory.wait_for_merges();

    let now = WallTime::from_secs(BASE_SECS + total as i64 + 1);
    let runtime = Runtime::start(
        memory,
        ServeOptions {
            workers: options.workers,
            queue: options.workers,
            pin_workers: options.pin_workers,
            hedge: options.hedge,
            spin: options.spin,
            publish_every: options.publish_every,
            // One context per query: the harness registers them all.
            max_contexts: queries.len().max(pfm_serve::DEFAULT_MAX_CONTEXTS),
            prune_every: Some(options.prune_every),
            background: options.background,
            clock: std::sync::Arc::new(move || now),
            ..ServeOptions::default()
        },
    )?;
    let contexts = queries
        .iter()
        .map(|q| runtime.register(q.request(), false))
        .collect::<Result<Vec<_>>>()?;

    let counters = &runtime.metrics().counters;
    let before = |c: &std::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
    let (obs0, ver0, pub0, prune0) = (
        before(&counters.observations),
        before(&counters.versions),
        before(&counters.publications),
        before(&counters.prunes),
    );
    let store_start = runtime.version().active.live_docs();
    let done = AtomicBool::new(false);
    let finished = std::sync::atomic::AtomicU64::new(0);
    let behind = std::sync::Mutex::new((Vec::new(), 0u64));
    let started = Instant::now();
    let cpu_started = cpu_seconds();
    std::thread::scope(|scope| -> Result<()> {
        scope.spawn(|| ingest(&runtime, stream, options.ingest_rate, &done));
        let mut threads = Vec::new();
        for t in 0..options.request_threads {
            let (runtime, contexts, finished, behind) = (&runtime, &contexts, &finished, &behind);
            let named = std::thread::Builder::new().name(format!("pfm-request-{t}"));
            threads.push(
                named
                    .spawn_scoped(scope, move || -> Result<()> {
                        let mut requester = runtime.requester()?;
                        let mut mine = Vec::new();
                        let mut behind_count = 0u64;
                        let mut i = t;
                        while i < options.requests {
                            let context = &contexts[i % contexts.len()];
                            if options.mode != Mode::Fresh {
                                let served = requester.snapshot(context);
                                let newest = runtime.version().seq;
                                let lag = newest.saturating_sub(served.store_seq);
                                behind_count += u64::from(lag > 0);
                                mine.push(lag);
                            }
                            if options.mode != Mode::Snapshot {
                                requester.fresh(context, options.omega)?;
                            }
                            progress(finished.fetch_add(1, Ordering::Relaxed) + 1);
                            std::thread::sleep(options.interval);
                            i += options.request_threads;
                        }
                        let mut b = behind.lock().unwrap_or_else(|e| e.into_inner());
                        b.0.extend(mine);
                        b.1 += behind_count;
                        Ok(())
                    })
                    .map_err(|e| Error::ShutDown(format!("cannot start a request thread: {e}")))?,
            );
        }
        let mut result = Ok(());
        for t in threads {
            let r = t
                .join()
                .unwrap_or_else(|_| Err(Error::ShutDown("a request thread panicked".into())));
            result = result.and(r);
        }
        done.store(true, Ordering::Relaxed);
        result
    })?;
    let seconds = started.elapsed().as_secs_f64();
    let cpu_cores = (cpu_seconds() - cpu_started) / seconds;
    let counters = &runtime.metrics().counters;
    let ingested = counters.observations.load(Ordering::Relaxed) - obs0;
    let versions = counters.versions.load(Ordering::Relaxed) - ver0;
    let publications = counters.publications.load(Ordering::Relaxed) - pub0;
    let prunes = counters.prunes.load(Ordering::Relaxed) - prune0;
    let fresh_requests = counters.fresh_requests.load(Ordering::Relaxed);
    let fallbacks = counters.fallbacks.load(Ordering::Relaxed)
        + counters.no_free_worker.load(Ordering::Relaxed);
    let no_free_worker = counters.no_free_worker.load(Ordering::Relaxed);
    let pinned_workers = runtime.pinned_workers();
    let store_end = runtime.version().active.live_docs();

    let metrics = runtime.metrics_handle();
    runtime.shutdown();
    // Requesters, workers, the publisher and construction have dropped their
    // probes (or will within the wait), handing their histograms over.
    let wait = Duration::from_millis(200);
    let q = |quantity| Quantiles::from(metrics.summary(quantity, wait));
    let ms = |s: Quantiles| Quantiles {
        p50: s.p50 / 1e3,
        p99: s.p99 / 1e3,
        max: s.max / 1e3,
    };
    let (lags, behind_count) = behind.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(LoadReport {
        facts: options.facts,
        ingest_rate_target: options.ingest_rate,
        ingest_rate_achieved: ingested as f64 / seconds,
        ingested,
        ingest: options.ingest,
        store_facts: [store_start, store_end],
        workers: options.workers,
        pinned_workers,
        omega_us: options.omega.as_secs_f64() * 1e6,
        requests: options.requests,
        mode: options.mode,
        read_us: q(Quantity::Read),
        handoff_us: q(Quantity::Handoff),
        sigma_us: q(Quantity::Sigma),
        fresh_us: q(Quantity::FreshWait),
        snapshot_age_ms: ms(q(Quantity::SnapshotAge)),
        behind_rate: if lags.is_empty() {
            0.0
        } else {
            behind_count as f64 / lags.len() as f64
        },
        updates_behind: quantiles_of(lags),
        service_us: q(Quantity::Service),
        drain_us: q(Quantity::Drain),
        queue_depth: q(Quantity::QueueDepth),
        commit_us: q(Quantity::Commit),
        batch_size: q(Quantity::BatchSize),
        fallback_rate: if fresh_requests == 0 {
            0.0
        } else {
            fallbacks as f64 / fresh_requests as f64
        },
        no_free_worker,
        cancelled_jobs: metrics.counters.cancelled_jobs.load(Ordering::Relaxed),
        hedges: metrics.counters.hedges.load(Ordering::Relaxed),
        versions,
        publications,
        prunes,
        seconds,
        spin_us: options.spin.as_secs_f64() * 1e6,
        cpu_cores,
    })
}

/// User plus system CPU time of this process so far, seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes one rusage through a valid pointer.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// Streams `stream` into construction at `rate` facts per second until
/// `done` (or the stream runs out), one observation per message.
fn ingest(runtime: &Runtime, stream: &[Observation], rate: f64, done: &AtomicBool) {
    if rate <= 0.0 {
        return;
    }
    let start = Instant::now();
    let mut sent = 0usize;
    while !done.load(Ordering::Relaxed) && sent < stream.len() {
        let due = ((start.elapsed().as_secs_f64() * rate) as usize).min(stream.len());
        while sent < due {
            if runtime.submit(vec![stream[sent].clone()]).is_err() {
                return;
            }
            sent += 1;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Exact quantiles of a small sample.
pub(crate) fn quantiles_of(mut values: Vec<u64>) -> Quantiles {
    if values.is_empty() {
        return Quantiles::default();
    }
    values.sort_unstable();
    let at = |p: f64| values[((values.len() - 1) as f64 * p).round() as usize] as f64;
    Quantiles {
        p50: at(0.5),
        p99: at(0.99),
        max: at(1.0),
    }
}

impl LoadReport {
    /// Table 8's columns (microseconds here; the paper's are milliseconds)
    /// and a Table 7 analogue, as markdown.
    pub fn tables(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Table 8 analogue: memory-induced waiting under concurrent construction \
             ({} facts, {} at {:.0}/s target, {:.0}/s achieved, {} -> {} active facts, {} workers, omega = {:.0} us, {} requests; microseconds)\n",
            self.facts,
            match self.ingest {
                Ingest::Revise => "revisions",
                Ingest::Append => "new facts",
            },
            self.ingest_rate_target,
            self.ingest_rate_achieved,
            self.store_facts[0],
            self.store_facts[1],
            self.workers,
            self.omega_us,
            self.requests
        );
        let _ = writeln!(
            s,
            "| sigma p50 | p99 | max | read p50 | p99 | max | handoff p50 | p99 | max | fresh p50 | p99 | max | fallback |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        let row = |q: Quantiles| format!("{:.2} | {:.2} | {:.2}", q.p50, q.p99, q.max);
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {:.3} |\n",
            row(self.sigma_us),
            row(self.read_us),
            row(self.handoff_us),
            row(self.fresh_us),
            self.fallback_rate
        );
        let _ = writeln!(
            s,
            "Table 7 analogue: snapshot lag under load (publication every 50 ms and after every commit)\n"
        );
        let _ = writeln!(
            s,
            "| snapshot age p50 (ms) | p99 | max | commits behind p50 | p99 | max | reads behind |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|---|");
        let _ = writeln!(
            s,
            "| {} | {:.0} | {:.0} | {:.0} | {:.3} |\n",
            row(self.snapshot_age_ms),
            self.updates_behind.p50,
            self.updates_behind.p99,
            self.updates_behind.max,
            self.behind_rate
        );
        let _ = writeln!(
            s,
            "worker service p50 {:.1} us, p99 {:.1} us; hedged jobs {}; cancelled jobs {} (drain p50 {:.1} us, max {:.1} us); \
             no free worker {}; commits {} (p50 {:.1} us, batch p50 {:.0}, max {:.0}); snapshot publications {}; prunes {}; \
             workers pinned {}/{}; spin {:.0} us; CPU {:.2} cores; {:.1} s",
            self.service_us.p50,
            self.service_us.p99,
            self.hedges,
            self.cancelled_jobs,
            self.drain_us.p50,
            self.drain_us.max,
            self.no_free_worker,
            self.versions,
            self.commit_us.p50,
            self.batch_size.p50,
            self.batch_size.max,
            self.publications,
            self.prunes,
            self.pinned_workers,
            self.workers,
            self.spin_us,
            self.cpu_cores,
            self.seconds
        );
        s
    }
}
