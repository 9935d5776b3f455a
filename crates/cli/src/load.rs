//! `pfm load`: Appendix G on this machine, in process or against a server.

use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use pfm_harness::load::http::HttpLoadOptions;
use pfm_harness::load::mcp::McpLoadOptions;
use pfm_harness::load::tenants::TenantsLoadOptions;
use pfm_harness::load::{self, Ingest, LoadOptions, Mode};
use pfm_serve::Background;
use pfm_synth::Vocabulary;

#[derive(Args)]
pub struct LoadArgs {
    /// Facts in the store before serving starts.
    #[arg(long, default_value_t = 20_000)]
    facts: u64,
    /// Facts per second ingested while serving.
    #[arg(long, default_value_t = 400.0)]
    ingest_rate: f64,
    /// revise: each ingested fact supersedes a stored one (the store
    /// keeps its size); append: each is new (the store grows).
    #[arg(long, default_value = "revise")]
    ingest: Ingest,
    /// Requests to make.
    #[arg(long, default_value_t = 2_000)]
    requests: usize,
    /// Pause between requests on one request thread, in microseconds.
    #[arg(long, default_value_t = 5_000)]
    interval_us: u64,
    /// Request threads.
    #[arg(long, default_value_t = 1)]
    request_threads: usize,
    /// Retrieval workers.
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// Fresh-mode waiting budget omega, in microseconds.
    #[arg(long, default_value_t = 5_000)]
    omega_us: u64,
    /// snapshot, fresh, or both (a snapshot read then a fresh request).
    #[arg(long, default_value = "both")]
    mode: Mode,
    /// Registered contexts the requests cycle over.
    #[arg(long, default_value_t = 16)]
    contexts: usize,
    /// Corpus seed.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Corpus vocabulary: wide or narrow.
    #[arg(long, default_value = "wide")]
    vocabulary: Vocabulary,
    /// Scheduling of construction and the snapshot publisher: idle
    /// (Linux SCHED_IDLE), nice:N, or normal (same as the serving threads).
    #[arg(long, default_value = "idle")]
    background: Background,
    /// Never hedge a fresh job to a second worker (by default a job
    /// still running after half of omega is also given to another).
    #[arg(long)]
    no_hedge: bool,
    /// Leave workers unpinned (the OS places them).
    #[arg(long)]
    no_pin: bool,
    /// Microseconds an idle worker polls the job queue before it sleeps:
    /// a job arriving meanwhile needs no wake-up, at the cost of that CPU
    /// time (the report's CPU column). 0 sleeps at once; at most 1,000,000.
    #[arg(long, default_value_t = 0)]
    spin_us: u64,
    /// Print one JSON object on stdout (progress stays on stderr).
    #[arg(long)]
    json: bool,
    /// Drive a running `pfm serve` at this URL over HTTP instead of an
    /// in-process runtime (e.g. http://127.0.0.1:7878); needs --token. Start
    /// the server with --observe-rate and --rate-limit above what the load
    /// sends, or the run measures those limits.
    #[arg(long)]
    target: Option<String>,
    /// The tenant's bearer token for --target (or PFM_TOKEN).
    #[arg(long, env = "PFM_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// With --target: client threads.
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// With --target: seconds of the single-observation ingest phase.
    #[arg(long, default_value_t = 5.0)]
    ingest_secs: f64,
    /// With --target: register this many tenants (in the server's token
    /// file: needs --data-dir) and drive them all, activity Zipf-distributed,
    /// instead of one tenant's token.
    #[arg(long, requires = "target", requires = "data_dir")]
    tenants: Option<usize>,
    /// With --tenants: the Zipf exponent of tenant activity (0: uniform).
    #[arg(long, default_value_t = 1.0)]
    zipf: f64,
    /// Measure the MCP tools instead: start `pfm serve` on a new data
    /// directory (--data-dir, else a temporary one, removed after),
    /// preload --facts, then time --requests recalls over /v1/retrieve,
    /// over /mcp (streamable HTTP) and over `pfm mcp` (stdio), side by side.
    #[arg(long, conflicts_with = "target")]
    mcp: bool,
    /// With --tenants: the data directory of the server at --target (with
    /// --mcp: the one to create).
    #[arg(long)]
    data_dir: Option<std::path::PathBuf>,
    /// With --tenants: the most active tenants to preload (the rest start
    /// empty); by default all of them up to 1,000.
    #[arg(long)]
    populated: Option<usize>,
    /// With --tenants: fewest facts a populated tenant is given.
    #[arg(long, default_value_t = 100)]
    min_facts: u64,
    /// With --tenants: most facts a populated tenant is given.
    #[arg(long, default_value_t = 2_000)]
    max_facts: u64,
    /// With --tenants: operations per second of the serve phase, across
    /// tenants.
    #[arg(long, default_value_t = 1_000.0)]
    rate: f64,
    /// With --tenants: seconds of the serve phase.
    #[arg(long, default_value_t = 30.0)]
    serve_secs: f64,
    /// With --tenants: the share of serve-phase operations that are
    /// observations (the rest are snapshot retrieves).
    #[arg(long, default_value_t = 0.1)]
    observe_share: f64,
    /// With --tenants: cold probes after the serve phase (retrieves to the
    /// least recently used populated tenants).
    #[arg(long, default_value_t = 200)]
    cold: usize,
    /// With --tenants: tenant names start with this (then six digits).
    #[arg(long, default_value = "load")]
    tenant_prefix: String,
}

impl LoadArgs {
    pub fn run(self) -> Result<()> {
        if self.mcp {
            let scratch = self.data_dir.is_none();
            let data_dir = self.data_dir.clone().unwrap_or_else(|| {
                std::env::temp_dir().join(format!("pfm-load-mcp-{}", std::process::id()))
            });
            let options = McpLoadOptions {
                pfm: std::env::current_exe().context("the pfm binary's path")?,
                data_dir: data_dir.clone(),
                facts: self.facts,
                requests: self.requests,
                seed: self.seed,
                vocabulary: self.vocabulary,
            };
            let report = load::mcp::run(&options, &|line| eprintln!("{line}"));
            if scratch {
                let _ = std::fs::remove_dir_all(&data_dir);
            }
            let report = report?;
            return crate::print(&report, self.json, || report.table());
        }
        if let (Some(target), Some(tenants), Some(data_dir)) =
            (&self.target, self.tenants, &self.data_dir)
        {
            let options = TenantsLoadOptions {
                target: target.clone(),
                data_dir: data_dir.clone(),
                tenants,
                zipf: self.zipf,
                populated: self.populated.unwrap_or(tenants.min(1_000)),
                facts: (self.min_facts, self.max_facts),
                ingest_secs: self.ingest_secs,
                rate: self.rate,
                serve_secs: self.serve_secs,
                observe_share: self.observe_share,
                cold: self.cold,
                concurrency: self.concurrency,
                seed: self.seed,
                vocabulary: self.vocabulary,
                prefix: self.tenant_prefix.clone(),
            };
            let report = load::tenants::run(&options, &|line| eprintln!("{line}"))?;
            return crate::print(&report, self.json, || report.table() + "\n");
        }
        if let Some(target) = self.target {
            let token = self
                .token
                .context("--target needs --token (or PFM_TOKEN)")?;
            let options = HttpLoadOptions {
                target,
                token,
                facts: self.facts,
                ingest_secs: self.ingest_secs,
                ingest_rate: self.ingest_rate,
                requests: self.requests,
                concurrency: self.concurrency,
                mode: self.mode,
                omega_us: self.omega_us,
                seed: self.seed,
                vocabulary: self.vocabulary,
            };
            let report = load::http::run(&options, &|line| eprintln!("{line}"))?;
            return crate::print(&report, self.json, || report.table() + "\n");
        }
        let options = LoadOptions {
            facts: self.facts,
            ingest_rate: self.ingest_rate,
            ingest: self.ingest,
            requests: self.requests,
            interval: Duration::from_micros(self.interval_us),
            request_threads: self.request_threads,
            workers: self.workers,
            omega: Duration::from_micros(self.omega_us),
            mode: self.mode,
            contexts: self.contexts,
            seed: self.seed,
            vocabulary: self.vocabulary,
            background: self.background,
            pin_workers: !self.no_pin,
            hedge: (!self.no_hedge).then_some(pfm_serve::request::DEFAULT_HEDGE),
            spin: Duration::from_micros(self.spin_us),
            ..LoadOptions::default()
        };
        let bar = indicatif::ProgressBar::new(options.requests as u64).with_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} load {bar:40} {pos}/{len} requests, {elapsed} ({eta} left)",
            )
            .context("progress bar template")?,
        );
        eprintln!(
            "building a {}-fact store, then {} requests while ingesting {}/s...",
            options.facts, options.requests, options.ingest_rate
        );
        let report =
            load::run(&options, &|done| bar.set_position(done)).context("load run failed")?;
        bar.finish_and_clear();
        crate::print(&report, self.json, || report.tables())
    }
}
