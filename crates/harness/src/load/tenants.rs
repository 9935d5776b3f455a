//! `pfm load --target URL --tenants N --zipf S`: many tenants on one
//! running `pfm serve`, over HTTP. Five phases:
//!
//! 1. **Register**: a metrics token, then N tenants (`{prefix}000000`, …),
//!    are written to the server's token file, the tenants in one rewrite
//!    (`pfm_server::tokens::create_many`); the server takes them within a
//!    second. The growth of its RSS over N is the cost of a registered
//!    tenant that is not open (what an evicted tenant leaves behind).
//! 2. **Preload**: the `populated` most active tenants get 100–2,000 facts
//!    each (uniform, seeded), in batches of [`PRELOAD_BATCH`]; the rest
//!    start empty, as most users of a service do.
//! 3. **Ingest**: `concurrency` clients post single observations to
//!    Zipf-drawn tenants as fast as they are acknowledged, for
//!    `ingest_secs` (the durable rate across tenants that group commit
//!    serves).
//! 4. **Serve**: `rate` operations per second, open loop, for `serve_secs`:
//!    each to a Zipf-drawn tenant, an observation with probability
//!    `observe_share`, else a snapshot retrieve. A retrieve whose
//!    `timings.open_us` is set opened its tenant (cold); the others are
//!    warm.
//! 5. **Cold probes**: after [`SETTLE`] (for the server's eviction to close
//!    idle tenants), `cold` retrieves, one at a time, to populated tenants
//!    in the order this client last used them: least recent first, so under
//!    a memory budget they find their tenant closed.
//!
//! The server's threads and RSS come from its `/metrics`, sampled every
//! second; its opens, evictions and open times too.
//!
//! Zipf ranks are tenant indices: tenant 0 is the most active, and the
//! populated tenants are the most active ones.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Zipf};
use serde::Serialize;
use serde_json::{Value, json};

use super::http::{Client, Sample, observation, sample};
use super::{Quantiles, quantiles_of};
use pfm::error::{Error, Result};
use pfm_server::tokens::Grant;
use pfm_synth::{SynthFact, SynthQuery, Vocabulary};

/// Observations per preload request.
pub const PRELOAD_BATCH: usize = 500;

/// The wait before the cold probes: the server closes a tenant idle for 2 s
/// (`MIN_IDLE`) at its next half-second check.
pub const SETTLE: Duration = Duration::from_secs(4);

/// Distinct facts the tenants' stores are drawn from.
const POOL: u64 = 50_000;

/// Slots each tenant's serve-phase observations revise (its store grows by
/// at most this many facts).
const LIVE_SLOTS: u64 = 50;

/// What to run.
#[derive(Clone, Debug)]
pub struct TenantsLoadOptions {
    /// Base URL of the server, e.g. `http://127.0.0.1:7878`.
    pub target: String,
    /// The server's data directory (its token file gets the tenants).
    pub data_dir: PathBuf,
    /// Tenants to register.
    pub tenants: usize,
    /// Zipf exponent of the tenants' activity (0: uniform).
    pub zipf: f64,
    /// The most active tenants to preload (the rest start empty).
    pub populated: usize,
    /// Facts per populated tenant: drawn uniformly from this range.
    pub facts: (u64, u64),
    /// Seconds of the ingest phase (0 skips it).
    pub ingest_secs: f64,
    /// Operations per second in the serve phase, across tenants.
    pub rate: f64,
    /// Seconds of the serve phase.
    pub serve_secs: f64,
    /// Share of the serve phase's operations that are observations.
    pub observe_share: f64,
    /// Cold probes after the serve phase.
    pub cold: usize,
    /// Client threads.
    pub concurrency: usize,
    /// Corpus and draw seed.
    pub seed: u64,
    /// Corpus vocabulary.
    pub vocabulary: Vocabulary,
    /// Tenant names start with this (then six digits).
    pub prefix: String,
}

/// The server as `/metrics` showed it.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct ServerSample {
    /// Resident memory, bytes.
    pub rss: u64,
    /// Threads.
    pub threads: u64,
    /// Open tenants.
    pub open_tenants: u64,
    /// Tenants opened since start.
    pub opens: u64,
    /// Tenants closed for the memory budget since start.
    pub evictions: u64,
    /// Its open times since start, µs: median, p99, max.
    pub open_us: [f64; 3],
}

/// Retrieves of one kind: the client's clock and the server's.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Retrieves {
    /// Responses.
    pub n: usize,
    /// End to end, as the client saw it (µs).
    pub client_us: Quantiles,
    /// The server's call after its tenant was open (`timings.total_us`).
    pub server_us: Quantiles,
    /// The server's time opening the tenant (`timings.open_us`; cold only).
    pub open_us: Quantiles,
}

/// What a run measured.
#[derive(Clone, Debug, Serialize)]
pub struct TenantsLoadReport {
    /// The server.
    pub target: String,
    /// Tenants registered by this run.
    pub tenants: usize,
    /// Zipf exponent.
    pub zipf: f64,
    /// Client threads.
    pub concurrency: usize,
    /// Seconds the token file took to write and the server to take.
    pub register_secs: f64,
    /// The server before registration, after it, and its highest thread
    /// count and RSS seen over the run.
    pub before: ServerSample,
    /// After registration.
    pub registered: ServerSample,
    /// RSS growth per registered tenant (bytes).
    pub bytes_per_registered: f64,
    /// Tenants preloaded and their facts.
    pub populated: usize,
    /// Facts preloaded.
    pub preloaded: u64,
    /// Their durable batch ingestion rate (observations / s).
    pub preload_rate: f64,
    /// After the preload.
    pub after_preload: ServerSample,
    /// Single observations acknowledged in the ingest phase, per second.
    pub ingest_rate: f64,
    /// Their latency (client clock, µs).
    pub ingest_us: Quantiles,
    /// Serve phase: operations per second offered and achieved.
    pub offered_rate: f64,
    /// Achieved.
    pub achieved_rate: f64,
    /// Distinct tenants the serve phase reached.
    pub touched: usize,
    /// Retrieves that found their tenant open.
    pub warm: Retrieves,
    /// Retrieves that opened their tenant.
    pub cold: Retrieves,
    /// Serve-phase observations (client clock, µs).
    pub observe_us: Quantiles,
    /// Their count.
    pub observes: usize,
    /// Error responses in the serve phase.
    pub errors: usize,
    /// Cold probes made, and those that found their tenant closed.
    pub probes: usize,
    /// The probes that opened their tenant.
    pub probed_cold: Retrieves,
    /// The same, for tenants of 750–1,250 facts only.
    pub probed_cold_1000: Retrieves,
    /// At the end.
    pub end: ServerSample,
    /// Highest thread count sampled over the run.
    pub max_threads: u64,
    /// Highest RSS sampled over the run.
    pub max_rss: u64,
}

/// One operation's draw: which tenant.
struct Draw {
    zipf: Option<Zipf<f64>>,
    n: usize,
}

impl Draw {
    fn new(n: usize, s: f64) -> Result<Draw> {
        let zipf = match s {
            s if s > 0.0 => Some(
                Zipf::new(n as f64, s)
                    .map_err(|e| Error::InvalidConfig(format!("--zipf {s}: {e}")))?,
            ),
            0.0 => None,
            _ => {
                return Err(Error::InvalidConfig(format!(
                    "--zipf {s}: the exponent is 0 (uniform) or more"
                )));
            }
        };
        Ok(Draw { zipf, n })
    }

    fn tenant(&self, rng: &mut Xoshiro256PlusPlus) -> usize {
        match &self.zipf {
            // Zipf's values are ranks 1..=n.
            Some(z) => (z.sample(rng) as usize).clamp(1, self.n) - 1,
            None => rng.random_range(0..self.n),
        }
    }
}

/// The run's tenants: names, tokens, sizes, and when each was last used.
struct Fleet {
    tokens: Vec<String>,
    metrics: String,
    /// Facts preloaded into each (0 for the unpopulated).
    facts: Vec<u64>,
    /// Milliseconds since the run started at each tenant's last use.
    last_use: Vec<AtomicU64>,
    started: Instant,
}

impl Fleet {
    fn touch(&self, t: usize) {
        let ms = self.started.elapsed().as_millis() as u64 + 1;
        self.last_use[t].store(ms, Ordering::Relaxed);
    }
}

/// Reads the series this harness reports from a `/metrics` scrape.
fn parse_metrics(text: &str) -> ServerSample {
    let value = |name: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or(0.0)
    };
    ServerSample {
        rss: value("pfm_process_resident_bytes") as u64,
        threads: value("pfm_process_threads") as u64,
        open_tenants: value("pfm_open_tenants") as u64,
        opens: value("pfm_tenant_opens_total") as u64,
        evictions: value("pfm_tenant_evictions_total") as u64,
        open_us: ["0.5", "0.99", "1"]
            .map(|q| value(&format!("pfm_tenant_open_seconds{{quantile=\"{q}\"}}")) * 1e6),
    }
}

/// The server now, by its `/metrics`.
fn scrape(client: &Client, fleet: &Fleet) -> Result<ServerSample> {
    Ok(parse_metrics(
        &client.get(Some(&fleet.metrics), "/metrics")?,
    ))
}

/// The number of tenants the server's `/healthz` reports registered.
fn registered_tenants(client: &Client) -> Result<u64> {
    let health: Value = serde_json::from_str(&client.get(None, "/healthz")?)
        .map_err(|e| Error::ShutDown(format!("/healthz: {e}")))?;
    Ok(health["tenants"].as_u64().unwrap_or(0))
}

/// How long the server may take to reread its token file.
const TOKEN_WAIT: Duration = Duration::from_secs(60);

/// Polls `done` every 100 ms until it holds; after [`TOKEN_WAIT`], fails
/// with `why` (and the wait).
fn wait_until(mut done: impl FnMut() -> Result<bool>, why: impl FnOnce() -> String) -> Result<()> {
    let started = Instant::now();
    while !done()? {
        if started.elapsed() > TOKEN_WAIT {
            return Err(Error::ShutDown(format!(
                "{} within {} s",
                why(),
                TOKEN_WAIT.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// Registers the tenants and waits until the server has taken them;
/// `metrics` is a metrics token the server already takes.
fn register(options: &TenantsLoadOptions, client: &Client, metrics: String) -> Result<Fleet> {
    let names: Vec<String> = (0..options.tenants)
        .map(|i| format!("{}{i:06}", options.prefix))
        .collect();
    let taken: std::collections::HashSet<String> = pfm_server::tokens::list(&options.data_dir)?
        .into_iter()
        .map(|t| t.tenant)
        .collect();
    if let Some(name) = names.iter().find(|n| taken.contains(*n)) {
        return Err(Error::InvalidConfig(format!(
            "tenant {name} already exists in {}: use a fresh data directory or another --tenant-prefix",
            options.data_dir.display()
        )));
    }
    let want = registered_tenants(client)? + options.tenants as u64;
    let asked: Vec<Grant> = names.iter().map(|n| Grant::Tenant(n)).collect();
    let tokens =
        pfm_server::tokens::create_many(&options.data_dir, &asked, jiff::Timestamp::now())?;
    wait_until(
        || Ok(registered_tenants(client)? >= want),
        || {
            format!(
                "the server at {} did not take the new tokens",
                options.target
            )
        },
    )?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(options.seed);
    let (lo, hi) = options.facts;
    let facts = (0..options.tenants)
        .map(|t| match t < options.populated {
            true => rng.random_range(lo..=hi),
            false => 0,
        })
        .collect();
    Ok(Fleet {
        tokens,
        metrics,
        facts,
        last_use: (0..options.tenants).map(|_| AtomicU64::new(0)).collect(),
        started: Instant::now(),
    })
}

/// Runs `work(thread, client)` on `concurrency` threads, each with its own
/// connection.
fn on_clients(options: &TenantsLoadOptions, work: impl Fn(usize, &Client) + Sync) {
    std::thread::scope(|s| {
        for c in 0..options.concurrency {
            let work = &work;
            s.spawn(move || work(c, &Client::new(&options.target)));
        }
    });
}

/// Preloads the populated tenants; returns facts written.
fn preload(
    options: &TenantsLoadOptions,
    fleet: &Fleet,
    pool: &[SynthFact],
    progress: &(dyn Fn(&str) + Sync),
) -> Result<u64> {
    let next = AtomicUsize::new(0);
    let written = AtomicU64::new(0);
    let failure = Mutex::new(None);
    let total: u64 = fleet.facts.iter().sum();
    let step = (options.populated / 10).max(1);
    on_clients(options, |_, client| {
        loop {
            let t = next.fetch_add(1, Ordering::Relaxed);
            if t >= options.populated {
                return;
            }
            if t.is_multiple_of(step) {
                progress(&format!(
                    "  preload: tenant {t} of {}, {} of {total} facts",
                    options.populated,
                    written.load(Ordering::Relaxed)
                ));
            }
            let offset = t as u64 * 7_919;
            let k = fleet.facts[t];
            for start in (0..k).step_by(PRELOAD_BATCH) {
                let batch: Vec<Value> = (start..k.min(start + PRELOAD_BATCH as u64))
                    .map(|i| {
                        let f = &pool[((offset + i) % POOL) as usize];
                        observation(f, i, f)
                    })
                    .collect();
                let n = batch.len() as u64;
                let body = json!({"observations": batch});
                match client.post(&fleet.tokens[t], "/v1/observe", &body) {
                    Ok(_) => written.fetch_add(n, Ordering::Relaxed),
                    Err(e) => {
                        *failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(e);
                        return;
                    }
                };
            }
            fleet.touch(t);
        }
    });
    match failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(e) => Err(e),
        None => Ok(written.into_inner()),
    }
}

/// A serve-phase observation for tenant `t`: fact `j` of the pool, revising
/// one of the tenant's [`LIVE_SLOTS`].
fn live_observation(pool: &[SynthFact], t: usize, j: u64) -> Value {
    let f = &pool[((t as u64 * 104_729 + j) % POOL) as usize];
    let mut o = observation(f, 0, f);
    o["key"]["slot"] = json!(format!("live{}", j % LIVE_SLOTS));
    o
}

fn retrieve_body(q: &SynthQuery) -> Value {
    json!({"context": q.text, "participants": q.participants,
           "at": q.at * 1000, "mode": "snapshot"})
}

/// Splits retrieves into warm and cold by `timings.open_us`.
fn split(samples: &[Sample]) -> (Retrieves, Retrieves) {
    let field = |v: &Value, name: &str| v.pointer(name).and_then(Value::as_f64);
    let (mut warm, mut cold) = ((vec![], vec![], vec![]), (vec![], vec![], vec![]));
    for (us, response) in samples {
        let Some(r) = response else { continue };
        let server = field(r, "/timings/total_us").unwrap_or(0.0) as u64;
        match field(r, "/timings/open_us") {
            Some(open) => {
                cold.0.push(*us);
                cold.1.push(server);
                cold.2.push(open as u64);
            }
            None => {
                warm.0.push(*us);
                warm.1.push(server);
            }
        }
    }
    let of = |(client, server, open): (Vec<u64>, Vec<u64>, Vec<u64>)| Retrieves {
        n: client.len(),
        client_us: quantiles_of(client),
        server_us: quantiles_of(server),
        open_us: quantiles_of(open),
    };
    (of(warm), of(cold))
}

/// Runs the five phases; `progress` gets a line per phase.
pub fn run(
    options: &TenantsLoadOptions,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<TenantsLoadReport> {
    if options.concurrency == 0 || options.tenants == 0 {
        return Err(Error::InvalidConfig(
            "--tenants and --concurrency must be at least 1".into(),
        ));
    }
    if options.populated > options.tenants || options.facts.0 > options.facts.1 {
        return Err(Error::InvalidConfig(
            "--populated is at most --tenants, and the facts range is min..=max".into(),
        ));
    }
    if !(0.0..=1.0).contains(&options.observe_share) || options.rate <= 0.0 {
        return Err(Error::InvalidConfig(
            "--observe-share is from 0 to 1 and --rate above 0".into(),
        ));
    }
    let draw = Draw::new(options.tenants, options.zipf)?;
    let (pool, queries) = pfm_synth::generate(POOL, options.seed, options.vocabulary, 1_024);
    let client = Client::new(&options.target);

    // 1. Register, after a metrics token for the "before" sample.
    let metrics =
        pfm_server::tokens::create(&options.data_dir, Grant::Metrics, jiff::Timestamp::now())?;
    wait_until(
        || Ok(client.get(Some(&metrics), "/metrics").is_ok()),
        || {
            format!(
                "no /metrics from {} with a token written to {}: is it the server's --data-dir?",
                options.target,
                options.data_dir.display()
            )
        },
    )?;
    let before = parse_metrics(&client.get(Some(&metrics), "/metrics")?);
    progress(&format!("registering {} tenants", options.tenants));
    let started = Instant::now();
    let fleet = register(options, &client, metrics)?;
    let register_secs = started.elapsed().as_secs_f64();
    let registered = scrape(&client, &fleet)?;
    let bytes_per_registered = (registered.rss as f64 - before.rss as f64) / options.tenants as f64;

    // The sampler: threads and RSS every second until the run ends.
    let done = AtomicBool::new(false);
    let peak = Mutex::new((registered.threads, registered.rss));
    std::thread::scope(|s| -> Result<TenantsLoadReport> {
        s.spawn(|| {
            let client = Client::new(&options.target);
            while !done.load(Ordering::Relaxed) {
                if let Ok(now) = scrape(&client, &fleet) {
                    let mut p = peak.lock().unwrap_or_else(|e| e.into_inner());
                    *p = (p.0.max(now.threads), p.1.max(now.rss));
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        });
        let result = phases(options, &fleet, &draw, &pool, &queries, progress);
        done.store(true, Ordering::Relaxed);
        let mut report = result?;
        let end = scrape(&client, &fleet)?;
        let (threads, rss) = *peak.lock().unwrap_or_else(|e| e.into_inner());
        report.max_threads = threads.max(end.threads);
        report.max_rss = rss.max(end.rss);
        report.end = end;
        report.register_secs = register_secs;
        report.before = before;
        report.registered = registered;
        report.bytes_per_registered = bytes_per_registered;
        Ok(report)
    })
}

/// Phases 2–5.
fn phases(
    options: &TenantsLoadOptions,
    fleet: &Fleet,
    draw: &Draw,
    pool: &[SynthFact],
    queries: &[SynthQuery],
    progress: &(dyn Fn(&str) + Sync),
) -> Result<TenantsLoadReport> {
    let client = Client::new(&options.target);
    let total: u64 = fleet.facts.iter().sum();
    progress(&format!(
        "preloading {} tenants with {total} facts",
        options.populated
    ));
    let started = Instant::now();
    let preloaded = preload(options, fleet, pool, progress)?;
    let preload_rate = preloaded as f64 / started.elapsed().as_secs_f64().max(1e-9);
    let after_preload = scrape(&client, fleet)?;

    progress(&format!("ingest phase: {} s", options.ingest_secs));
    let ingest = Mutex::new(Vec::new());
    let next = AtomicU64::new(0);
    let phase = Duration::from_secs_f64(options.ingest_secs);
    let started = Instant::now();
    on_clients(options, |c, client| {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(options.seed ^ (c as u64 + 1) << 32);
        let mut mine = Vec::new();
        while started.elapsed() < phase {
            let t = draw.tenant(&mut rng);
            let body = live_observation(pool, t, next.fetch_add(1, Ordering::Relaxed));
            let sent = Instant::now();
            if client.post(&fleet.tokens[t], "/v1/observe", &body).is_ok() {
                mine.push(sent.elapsed().as_micros() as u64);
            }
            fleet.touch(t);
        }
        ingest
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(mine);
    });
    let ingest = ingest.into_inner().unwrap_or_else(|e| e.into_inner());
    let ingest_rate = ingest.len() as f64 / started.elapsed().as_secs_f64().max(1e-9);

    progress(&format!(
        "serve phase: {} ops/s for {} s ({:.0}% observations)",
        options.rate,
        options.serve_secs,
        options.observe_share * 100.0
    ));
    let ops = (options.rate * options.serve_secs) as usize;
    let issued = AtomicUsize::new(0);
    let results = Mutex::new((Vec::new(), Vec::new(), 0usize, vec![false; options.tenants]));
    let started = Instant::now();
    on_clients(options, |c, client| {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(options.seed ^ (c as u64 + 101) << 32);
        let (mut retrieves, mut observes, mut errors) = (Vec::new(), Vec::new(), 0);
        let mut touched = Vec::new();
        loop {
            let i = issued.fetch_add(1, Ordering::Relaxed);
            if i >= ops {
                break;
            }
            // Open loop: operation i is due at i / rate.
            let due = Duration::from_secs_f64(i as f64 / options.rate);
            if let Some(wait) = due.checked_sub(started.elapsed()) {
                std::thread::sleep(wait);
            }
            let t = draw.tenant(&mut rng);
            touched.push(t);
            if rng.random::<f64>() < options.observe_share {
                let body = live_observation(pool, t, next.fetch_add(1, Ordering::Relaxed));
                let sent = Instant::now();
                match client.post(&fleet.tokens[t], "/v1/observe", &body) {
                    Ok(_) => observes.push(sent.elapsed().as_micros() as u64),
                    Err(_) => errors += 1,
                }
            } else {
                let q = &queries[i % queries.len()];
                let s = sample(client, &fleet.tokens[t], &retrieve_body(q));
                errors += usize::from(s.1.is_none());
                retrieves.push(s);
            }
            fleet.touch(t);
        }
        let mut all = results.lock().unwrap_or_else(|e| e.into_inner());
        all.0.extend(retrieves);
        all.1.extend(observes);
        all.2 += errors;
        for t in touched {
            all.3[t] = true;
        }
    });
    let seconds = started.elapsed().as_secs_f64();
    let (retrieves, observes, errors, touched) =
        results.into_inner().unwrap_or_else(|e| e.into_inner());
    let (warm, cold) = split(&retrieves);

    progress(&format!(
        "cold probes: {} retrieves to the least recently used populated tenants, after {} s",
        options.cold,
        SETTLE.as_secs()
    ));
    std::thread::sleep(SETTLE);
    let mut order: Vec<usize> = (0..options.populated).collect();
    order.sort_by_key(|t| fleet.last_use[*t].load(Ordering::Relaxed));
    let probes: Vec<(usize, Sample)> = order
        .into_iter()
        .take(options.cold)
        .map(|t| {
            let q = &queries[t % queries.len()];
            let s = sample(&client, &fleet.tokens[t], &retrieve_body(q));
            fleet.touch(t);
            (t, s)
        })
        .collect();
    let all: Vec<Sample> = probes.iter().map(|(_, s)| s.clone()).collect();
    let near_1000: Vec<Sample> = probes
        .iter()
        .filter(|(t, _)| (750..=1_250).contains(&fleet.facts[*t]))
        .map(|(_, s)| s.clone())
        .collect();
    Ok(TenantsLoadReport {
        target: options.target.clone(),
        tenants: options.tenants,
        zipf: options.zipf,
        concurrency: options.concurrency,
        register_secs: 0.0,
        before: ServerSample::default(),
        registered: ServerSample::default(),
        bytes_per_registered: 0.0,
        populated: options.populated,
        preloaded,
        preload_rate,
        after_preload,
        ingest_rate,
        ingest_us: quantiles_of(ingest),
        offered_rate: options.rate,
        achieved_rate: (retrieves.len() + observes.len()) as f64 / seconds.max(1e-9),
        touched: touched.iter().filter(|t| **t).count(),
        warm,
        cold,
        observes: observes.len(),
        observe_us: quantiles_of(observes),
        errors,
        probes: probes.len(),
        probed_cold: split(&all).1,
        probed_cold_1000: split(&near_1000).1,
        end: ServerSample::default(),
        max_threads: 0,
        max_rss: 0,
    })
}

impl TenantsLoadReport {
    /// The report as markdown.
    pub fn table(&self) -> String {
        let mb = |b: u64| b as f64 / 1e6;
        let q = |q: &Quantiles| match q.max {
            0.0 => "–".to_owned(),
            _ => format!("{:.0} / {:.0}", q.p50, q.p99),
        };
        let ms = |q: &Quantiles| match q.max {
            0.0 => "–".to_owned(),
            _ => format!("{:.1} / {:.1}", q.p50 / 1e3, q.p99 / 1e3),
        };
        let mut out = format!(
            "pfm load --target {} --tenants {} --zipf {} (concurrency {})\n\n\
             | measure | value |\n|---|---|\n\
             | registered tenants (this run) | {} (token file taken in {:.1} s) |\n\
             | server RSS before / after registering | {:.1} / {:.1} MB |\n\
             | RSS per registered, unopened tenant | {:.0} bytes |\n\
             | populated tenants, facts preloaded | {}, {} at {:.0} obs/s |\n\
             | RSS after preload, open tenants | {:.1} MB, {} |\n\
             | ingest across tenants (single observations) | {:.0} obs/s, p50 / p99 {} µs |\n\
             | serve phase offered / achieved | {:.0} / {:.0} ops/s, {} tenants reached |\n\
             | warm retrieves: n, client p50 / p99 µs | {}, {} |\n\
             | warm retrieves: server p50 / p99 µs | {} |\n\
             | cold retrieves in serving: n, client p50 / p99 ms | {}, {} |\n\
             | cold retrieves in serving: open p50 / p99 ms | {} |\n\
             | observes in serving: n, client p50 / p99 µs | {}, {} |\n\
             | errors in serving | {} |\n\
             | cold probes: made, found closed | {}, {} |\n\
             | cold probes: open p50 / p99 ms (client p50 / p99 ms) | {} ({}) |\n\
             | cold probes of 750–1,250-fact tenants: n, open p50 / p99 ms | {}, {} |\n\
             | server threads: end, highest | {}, {} |\n\
             | server RSS: end, highest | {:.1}, {:.1} MB |\n\
             | open tenants at the end | {} |\n\
             | opens, evictions since start | {}, {} |\n\
             | all opens: p50 / p99 / max ms | {:.1} / {:.1} / {:.1} |\n",
            self.target,
            self.tenants,
            self.zipf,
            self.concurrency,
            self.tenants,
            self.register_secs,
            mb(self.before.rss),
            mb(self.registered.rss),
            self.bytes_per_registered,
            self.populated,
            self.preloaded,
            self.preload_rate,
            mb(self.after_preload.rss),
            self.after_preload.open_tenants,
            self.ingest_rate,
            q(&self.ingest_us),
            self.offered_rate,
            self.achieved_rate,
            self.touched,
            self.warm.n,
            q(&self.warm.client_us),
            q(&self.warm.server_us),
            self.cold.n,
            ms(&self.cold.client_us),
            ms(&self.cold.open_us),
            self.observes,
            q(&self.observe_us),
            self.errors,
            self.probes,
            self.probed_cold.n,
            ms(&self.probed_cold.open_us),
            ms(&self.probed_cold.client_us),
            self.probed_cold_1000.n,
            ms(&self.probed_cold_1000.open_us),
            self.end.threads,
            self.max_threads,
            mb(self.end.rss),
            mb(self.max_rss),
            self.end.open_tenants,
            self.end.opens,
            self.end.evictions,
            self.end.open_us[0] / 1e3,
            self.end.open_us[1] / 1e3,
            self.end.open_us[2] / 1e3,
        );
        if self.probes > 0 && self.probed_cold.n == 0 {
            out.push_str(
                "\nNo cold probe found its tenant closed: start the server with a --memory-budget \
                 below the populated tenants' size to measure cold opens.\n",
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scrape_gives_the_host_series() {
        let text = "pfm_open_tenants 7\npfm_tenant_opens_total 9\npfm_tenant_evictions_total 2\n\
                    pfm_tenant_open_seconds{quantile=\"0.5\"} 0.0015\n\
                    pfm_tenant_open_seconds{quantile=\"0.99\"} 0.02\n\
                    pfm_tenant_open_seconds{quantile=\"1\"} 0.03\n\
                    pfm_process_resident_bytes 1048576\npfm_process_threads 19\n";
        let s = parse_metrics(text);
        assert_eq!((s.open_tenants, s.opens, s.evictions), (7, 9, 2));
        assert_eq!((s.rss, s.threads), (1_048_576, 19));
        assert!((s.open_us[0] - 1_500.0).abs() < 1e-6 && (s.open_us[2] - 30_000.0).abs() < 1e-6);
    }

    #[test]
    fn zipf_draws_favour_the_first_tenants_and_stay_in_range() {
        let draw = Draw::new(1_000, 1.0).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let draws: Vec<usize> = (0..20_000).map(|_| draw.tenant(&mut rng)).collect();
        assert!(draws.iter().all(|t| *t < 1_000));
        let first = draws.iter().filter(|t| **t == 0).count();
        let last = draws.iter().filter(|t| **t == 999).count();
        // Rank 1 has 1,000 times rank 1,000's weight: about 2,660 of 20,000.
        assert!(first > 2_000 && last < 30, "{first} {last}");
        assert!(Draw::new(10, -1.0).is_err());
    }

    #[test]
    fn cold_and_warm_retrieves_are_told_apart_by_open_us() {
        let warm = json!({"timings": {"total_us": 300.0, "open_us": null}});
        let cold = json!({"timings": {"total_us": 400.0, "open_us": 7000.0}});
        let (w, c) = split(&[(500, Some(warm)), (9_000, Some(cold)), (100, None)]);
        assert_eq!((w.n, c.n), (1, 1));
        assert_eq!(
            (c.client_us.p50, c.open_us.p50, w.server_us.p50),
            (9_000.0, 7_000.0, 300.0)
        );
    }

    #[test]
    fn serve_observations_revise_a_bounded_set_of_slots() {
        let (pool, _) = pfm_synth::generate(POOL, 7, Vocabulary::Wide, 1);
        let slots: std::collections::HashSet<String> = (0..500)
            .map(|j| live_observation(&pool, 3, j)["key"]["slot"].to_string())
            .collect();
        assert_eq!(slots.len() as u64, LIVE_SLOTS);
    }
}
