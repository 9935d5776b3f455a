//! `pfm`: the command-line front end. Thin: every command is a few calls
//! into the library.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use pfm::config::Ordering;
use pfm::eval::{EvalOptions, report};
use pfm::load::{self, Ingest, LoadOptions, Mode};
use pfm::rules::{Abstain, Identity, Rules};
use pfm::serve::Background;
use pfm::synth::Vocabulary;
use pfm::{Config, Memory, Observation, Request, WallTime};

// The serving path allocates little, but what it allocates (blocks, jobs)
// comes from mimalloc's thread-local free lists, not a global lock.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Personal fact memory for LLM agents: never stale, never the wrong person, never late.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum TokenAction {
    /// Create a bearer token for a tenant (creating the tenant if new) and
    /// print it; only its SHA-256 is stored. A running server picks it up.
    Create {
        /// The tenant: 1 to 64 characters of a-z, 0-9, '-', '_'.
        #[arg(long)]
        tenant: String,
        /// The server's data directory.
        #[arg(long, default_value = "pfm-data")]
        data_dir: PathBuf,
    },
}

#[derive(Subcommand)]
enum Command {
    /// Appendix G on this machine: serve a synthetic store while construction
    /// ingests, and print memory-induced waiting (Table 8) and snapshot lag
    /// (Table 7 analogue).
    Load {
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
        /// Print one JSON object on stdout (progress stays on stderr).
        #[arg(long)]
        json: bool,
        /// Drive a running `pfm serve` at this URL over HTTP instead of an
        /// in-process runtime (e.g. http://127.0.0.1:7878); needs --token.
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
    },
    /// Serve memory over HTTP/JSON (`/v1`): tenants with bearer tokens, a
    /// durable ledger per tenant under --data-dir, Prometheus `/metrics`,
    /// OpenAPI at `/v1/openapi.json`. Stops on SIGINT/SIGTERM after
    /// finishing in-flight requests and flushing the ledgers. Logs go to
    /// stderr, filtered by RUST_LOG (default info; no fact text at info).
    Serve {
        /// Address to listen on (port 0 picks a free one; the bound address
        /// is printed on stdout as `listening on ADDR`).
        #[arg(long, default_value = "127.0.0.1:7878")]
        addr: std::net::SocketAddr,
        /// Where tenants' ledgers and the token file live.
        #[arg(long, default_value = "pfm-data")]
        data_dir: PathBuf,
        /// always (fsync every request) or group:N (one fsync per batch of
        /// requests, a batch collected for at most N ms).
        #[arg(long, default_value = "group:5")]
        fsync: pfm::server::writer::Fsync,
        /// Retrieval workers per tenant.
        #[arg(long, default_value_t = 2)]
        workers: usize,
        /// Request threads (blocking half of retrieval, shared by tenants).
        #[arg(long, default_value_t = 8)]
        request_threads: usize,
        /// Requests per second per tenant (and burst size).
        #[arg(long, default_value = "10000")]
        rate_limit: std::num::NonZeroU32,
        /// Largest request body in bytes.
        #[arg(long, default_value_t = 4 << 20)]
        max_body: usize,
        /// Most observations in one request.
        #[arg(long, default_value_t = 1000)]
        max_batch: usize,
        /// Seconds before a request (body upload included) is answered 408.
        #[arg(long, default_value_t = 30)]
        request_timeout_secs: u64,
        /// Create this tenant with a fresh token at start if the data
        /// directory has no token yet (the token is printed once on stdout).
        #[arg(long)]
        bootstrap_tenant: Option<String>,
    },
    /// Tenant tokens for `pfm serve`.
    Token {
        #[command(subcommand)]
        action: TokenAction,
    },
    /// Inspect a tenant's ledger file: redb first repairs an unclean
    /// shutdown; rows that do not decode are listed (and, with
    /// --drop-corrupt, deleted). The server refuses to start on such rows.
    Repair {
        /// The server's data directory.
        #[arg(long, default_value = "pfm-data")]
        data_dir: PathBuf,
        /// The tenant whose ledger to inspect.
        #[arg(long)]
        tenant: String,
        /// Delete the rows that do not decode (their facts are lost).
        #[arg(long)]
        drop_corrupt: bool,
    },
    /// The controlled revision benchmark (paper Sections 6-7.2, Appendices B
    /// and J): generates the instances, builds keyed and keyless stores,
    /// runs every arm and the identity, abstention, ablation and slice
    /// studies, and writes Tables 1, 2, 3, 6, 12, 13, 14, 15, 16 and 22 with the
    /// paper's value beside ours. The full protocol (the defaults)
    /// regenerates eval/RESULTS.md; every run writes a folder under --out.
    Eval {
        /// Benchmark seeds, comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = pfm::eval::SEEDS)]
        seeds: Vec<u64>,
        /// Arms, comma-separated: pfm, pfm_keyless, bm25, bm25_p,
        /// bm25_recency, bm25_recency_p, bm25_validity, bm25_validity_p.
        #[arg(long, value_delimiter = ',', default_values = pfm::eval::arms::LEXICAL)]
        arms: Vec<String>,
        /// Character budgets B, comma-separated.
        #[arg(long, value_delimiter = ',', default_values_t = pfm::eval::BUDGETS)]
        budgets: Vec<usize>,
        /// People per benchmark instance (12 paired + unique first names).
        /// Table 6 fixes the ambiguity counts, not the pool; 29 reproduces
        /// them, a larger pool spreads each person's facts thinner.
        #[arg(long, default_value_t = pfm::eval::generator::DEFAULT_PEOPLE)]
        people: usize,
        /// Skip the key-noise grid (Table 16).
        #[arg(long)]
        no_key_noise: bool,
        /// Skip the identity, abstention, ablation and slice studies
        /// (Tables 3, 13 and 22).
        #[arg(long)]
        no_studies: bool,
        /// Folder that receives a run folder (tables, summary.json,
        /// per-request JSONL logs).
        #[arg(long, default_value = "eval/results")]
        out: PathBuf,
        /// The report the full protocol regenerates.
        #[arg(long, default_value = "eval/RESULTS.md")]
        results: PathBuf,
        /// Print the generator's Table 6 accounting per seed and exit.
        #[arg(long)]
        accounting: bool,
        /// Print one JSON object on stdout (progress stays on stderr).
        #[arg(long)]
        json: bool,
    },
    /// Retrieval cost against store size (paper Appendix H, Table 9;
    /// Figure 1): for each size and vocabulary, build a fresh store from the
    /// synthetic corpus, time 300 queries after 50 warm-ups, and report
    /// p50/p99/max, construction cost, memory, the longest posting list and
    /// commit-to-visible. Writes CSV, markdown and a log-log SVG plot under
    /// --out/<date>-<host>/.
    Scale {
        /// Store sizes, comma-separated (up to 1,000,000).
        #[arg(long, value_delimiter = ',', default_values_t = pfm::scale::SIZES)]
        sizes: Vec<u64>,
        /// Vocabularies, comma-separated: wide, narrow.
        #[arg(long, value_delimiter = ',', default_values = ["wide", "narrow"])]
        vocabularies: Vec<Vocabulary>,
        /// Corpus seed.
        #[arg(long, default_value_t = 7)]
        seed: u64,
        /// Facts in the spec's JSONL (with --queries): time exactly one row
        /// on these files instead of the generated corpus.
        #[arg(long, requires = "queries")]
        facts: Option<PathBuf>,
        /// Queries in the spec's JSONL (the first 50 are warm-up).
        #[arg(long, requires = "facts")]
        queries: Option<PathBuf>,
        /// Folder that receives the run folder.
        #[arg(long, default_value = "scale/results")]
        out: PathBuf,
        /// Print one JSON object per row on stdout (progress stays on stderr).
        #[arg(long)]
        json: bool,
        /// Also write pprof flamegraphs (SVG) of ingestion and of retrieval
        /// for every row into this folder (untimed extra passes).
        #[arg(long)]
        flamegraphs: Option<PathBuf>,
        /// Also time another engine on each row's facts and queries, right
        /// after the row: a binary called as `BIN FACTS.jsonl
        /// QUERIES.jsonl` that prints one JSON row (p50_us, p99_us, max_us,
        /// block_lines_total). tantivy's is `scale/tantivy-ref` (see
        /// scale/README.md); the report puts both side by side.
        #[arg(long)]
        reference: Option<PathBuf>,
        /// Internal: measure the one row given in this process and print it
        /// as JSON (the parent runs every row this way).
        #[arg(long, hide = true)]
        one_row: bool,
    },
    /// Observe a revision chain and print the memory block before and after
    /// each revision (keyed supersession at work).
    Demo {
        /// Order revisions by their stated time instead of arrival (a late
        /// message stating an older time then becomes history).
        #[arg(long)]
        event_time: bool,
        /// Print each fact's version history at the end.
        #[arg(long)]
        history: bool,
    },
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Load {
            facts,
            ingest_rate,
            ingest,
            requests,
            interval_us,
            request_threads,
            workers,
            omega_us,
            mode,
            contexts,
            seed,
            vocabulary,
            background,
            no_pin,
            no_hedge,
            json,
            target,
            token,
            concurrency,
            ingest_secs,
        } => {
            if let Some(target) = target {
                let token = token.context("--target needs --token (or PFM_TOKEN)")?;
                let options = pfm::load::http::HttpLoadOptions {
                    target,
                    token,
                    facts,
                    ingest_secs,
                    ingest_rate,
                    requests,
                    concurrency,
                    mode,
                    omega_us,
                    seed,
                    vocabulary,
                };
                return run_http_load(&options, json);
            }
            let options = LoadOptions {
                facts,
                ingest_rate,
                ingest,
                requests,
                interval: Duration::from_micros(interval_us),
                request_threads,
                workers,
                omega: Duration::from_micros(omega_us),
                mode,
                contexts,
                seed,
                vocabulary,
                background,
                pin_workers: !no_pin,
                hedge: (!no_hedge).then_some(pfm::serve::request::DEFAULT_HEDGE),
                ..LoadOptions::default()
            };
            run_load(&options, json)
        }
        Command::Demo {
            event_time,
            history,
        } => demo(event_time, history),
        Command::Serve {
            addr,
            data_dir,
            fsync,
            workers,
            request_threads,
            rate_limit,
            max_body,
            max_batch,
            request_timeout_secs,
            bootstrap_tenant,
        } => {
            init_logging();
            if let Some(tenant) = bootstrap_tenant
                && pfm::server::tokens::load(&data_dir)?.is_empty()
            {
                let token =
                    pfm::server::tokens::create(&data_dir, &tenant, jiff::Timestamp::now())?;
                println!("token for tenant {tenant}: {token}");
            }
            let options = pfm::server::ServerOptions {
                addr,
                data_dir,
                tenant: pfm::server::tenant::TenantOptions {
                    config: Config::default(),
                    workers,
                    fsync,
                    rate_limit,
                },
                limits: pfm::server::Limits {
                    max_body,
                    max_batch,
                    ..pfm::server::Limits::default()
                },
                request_threads,
                request_timeout: Duration::from_secs(request_timeout_secs),
            };
            pfm::server::run(options, |addr| {
                use std::io::Write;
                println!("listening on {addr}");
                let _ = std::io::stdout().flush();
            })?;
            Ok(())
        }
        Command::Token {
            action: TokenAction::Create { tenant, data_dir },
        } => {
            let token = pfm::server::tokens::create(&data_dir, &tenant, jiff::Timestamp::now())?;
            eprintln!(
                "created a token for tenant {tenant} in {} (shown once; only its hash is stored):",
                data_dir.display()
            );
            println!("{token}");
            Ok(())
        }
        Command::Repair {
            data_dir,
            tenant,
            drop_corrupt,
        } => {
            pfm::server::tokens::check_tenant(&tenant)?;
            let dir = data_dir.join("tenants").join(&tenant);
            let report = pfm::ledger::durable::repair(&dir, Config::default(), drop_corrupt)?;
            println!(
                "{}: {} rows read, {} corrupt",
                dir.join(pfm::ledger::durable::FILE).display(),
                report.rows,
                report.corrupt.len()
            );
            for (key, why) in &report.corrupt {
                println!("  row {key}: {why}");
            }
            if report.dropped {
                println!("dropped the corrupt rows; the ledger opens cleanly now");
            } else if !report.corrupt.is_empty() {
                anyhow::bail!(
                    "the ledger has corrupt rows: rerun with --drop-corrupt to delete them (their facts are lost)"
                );
            } else {
                println!("the ledger opens cleanly");
            }
            Ok(())
        }
        Command::Scale {
            sizes,
            vocabularies,
            seed,
            facts,
            queries,
            out,
            json,
            flamegraphs,
            reference,
            one_row,
        } => run_scale(
            sizes,
            vocabularies,
            seed,
            facts.zip(queries),
            &out,
            json,
            flamegraphs,
            reference,
            one_row,
        ),
        Command::Eval {
            seeds,
            arms,
            budgets,
            people,
            no_key_noise,
            no_studies,
            out,
            results,
            accounting,
            json,
        } => {
            let options = EvalOptions {
                seeds,
                arms,
                budgets,
                people,
                key_noise: !no_key_noise,
                studies: !no_studies,
                ..EvalOptions::default()
            };
            if accounting {
                return print_accounting(&options.seeds, options.people);
            }
            run_eval(&options, &out, &results, json)
        }
    }
}

/// A day in June 2025.
fn june(day: u32, hour: u32) -> Result<WallTime> {
    Ok(WallTime::parse(&format!(
        "2025-06-{day:02}T{hour:02}:00:00Z"
    ))?)
}

fn demo(event_time: bool, show_history: bool) -> Result<()> {
    let config = Config {
        ordering: if event_time {
            Ordering::EventTime
        } else {
            Ordering::Arrival
        },
        ..Config::default()
    };
    let mut memory = Memory::new(config)?;
    // Two people share a first name: without identity rules both Alexes'
    // standups compete for the block; the posterior (Eq. 2) keeps Alex
    // Rivera's, and the slot gate abstains where nothing answers.
    let messages = [
        (
            "The standup with Alex Rivera is moved to 9:30am.",
            "Alex Rivera",
            june(2, 9)?,
        ),
        (
            "The standup with Alex Chen is moved to 11am.",
            "Alex Chen",
            june(3, 10)?,
        ),
        (
            "Alex Rivera standup is rescheduled to 10:45am.",
            "Alex Rivera",
            june(9, 16)?,
        ),
        (
            "The standup with Alex Rivera is moved to room 16C.",
            "Alex Rivera",
            june(10, 8)?,
        ),
        (
            "New time for the standup with Alex Rivera: moved to 10:45 AM.",
            "Alex Rivera",
            june(11, 9)?,
        ),
        // Written on June 5, delivered late: arrival order lets it win.
        (
            "The standup with Alex Rivera is moved to 9am.",
            "Alex Rivera",
            june(5, 12)?,
        ),
    ];
    let ask_with = |memory: &Memory, context: &str, rules: Rules| -> Result<String> {
        let request = Request::new(context, june(12, 9)?)
            .with_participants(["Alex Rivera"])
            .with_rules(rules);
        let block = memory.retrieve(&request).context("retrieve")?;
        Ok(match (block.is_empty(), block.abstained) {
            (_, true) => "(empty block: abstained)".to_owned(),
            (true, false) => "(empty block)".to_owned(),
            (false, false) => block.text,
        })
    };
    let ask = |memory: &Memory| ask_with(memory, "the standup with Alex is at", Rules::NONE);
    println!(
        "pfm demo: ordering = {}\nrequest: \"the standup with Alex is at\" (to Alex Rivera, 2025-06-12)\n",
        if event_time { "event time" } else { "arrival" }
    );
    println!("before any observation:\n{}\n", ask(&memory)?);
    for (text, participant, at) in messages {
        let receipt =
            memory.observe(Observation::new(text, at).with_participants([participant]))?;
        let key = receipt
            .key
            .as_ref()
            .map_or_else(|| "no key".to_owned(), ToString::to_string);
        println!(
            "observe [{}] {text:?} to {participant}\n  -> commit {}: {} ({key})",
            at,
            receipt.seq,
            serde_json::to_string(&receipt.outcome)?
        );
        println!("{}\n", ask(&memory)?);
    }
    let gated = Rules {
        identity: Identity::Posterior,
        abstain: Abstain::Slot(0.5),
    };
    println!(
        "with rules {}:\n{}\n",
        serde_json::to_string(&gated)?,
        ask_with(&memory, "the standup with Alex is at", gated)?
    );
    println!(
        "\"the standup with Alex Chen is in\" (nobody has said where Alex Chen's standup is), same rules:\n{}\n",
        ask_with(&memory, "the standup with Alex Chen is in", gated)?
    );
    if show_history {
        println!("history, newest first:");
        for fact in memory.ledger().active() {
            let chain = memory.history(fact.id())?;
            if chain.len() > 1 {
                for f in chain {
                    let active: Vec<String> = f
                        .state
                        .intervals
                        .iter()
                        .map(|i| match i.to {
                            Some((to, _)) => format!("[{}, {to})", i.from),
                            None => format!("[{}, now)", i.from),
                        })
                        .collect();
                    let active = if active.is_empty() {
                        "never".to_owned()
                    } else {
                        active.join(" ")
                    };
                    let status = serde_json::to_string(&f.state.status)?.replace('"', "");
                    println!(
                        "  {} {status:<12} active in commits {active:<10} support {}: {}",
                        f.id(),
                        f.state.support,
                        f.body.text
                    );
                }
            }
        }
    }
    Ok(())
}

fn run_load(options: &LoadOptions, json: bool) -> Result<()> {
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
    let report = load::run(options, &|done| bar.set_position(done)).context("load run failed")?;
    bar.finish_and_clear();
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", report.tables());
    }
    Ok(())
}

fn run_http_load(options: &pfm::load::http::HttpLoadOptions, json: bool) -> Result<()> {
    let report = pfm::load::http::run(options, &|line| eprintln!("{line}"))?;
    if json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!("{}", report.table());
    }
    Ok(())
}

/// `tracing` to stderr, filtered by RUST_LOG (default `info`).
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}

fn print_accounting(seeds: &[u64], people: usize) -> Result<()> {
    let accounting: Vec<_> = seeds
        .iter()
        .map(|s| pfm::eval::Instance::generate_with(*s, people).accounting())
        .collect();
    print!("{}", report::accounting_table(&accounting));
    Ok(())
}

fn run_eval(options: &EvalOptions, out: &Path, results: &Path, json: bool) -> Result<()> {
    eprintln!(
        "pfm eval: seeds {:?}, arms {}, budgets {:?}{}",
        options.seeds,
        options.arms.join(","),
        options.budgets,
        if options.key_noise {
            ", key-noise grid"
        } else {
            ""
        }
    );
    let evaluation = pfm::eval::run(options).context("eval run failed")?;
    let summary = report::summarize(&evaluation);
    let meta = run_meta(jiff::Timestamp::now());
    let dir = out.join(jiff::Timestamp::now().strftime("%Y%m%d-%H%M%S").to_string());
    report::write_run(&dir, &evaluation, &summary, &meta)
        .with_context(|| format!("writing {}", dir.display()))?;
    if options.is_full() {
        std::fs::write(results, report::markdown(&summary, &meta))
            .with_context(|| format!("writing {}", results.display()))?;
    }
    if json {
        println!("{}", serde_json::to_string(&summary)?);
    } else {
        print!("{}", report::markdown(&summary, &meta));
    }
    eprintln!(
        "wrote {}{} in {:.1} s",
        dir.display(),
        if options.is_full() {
            format!(" and {}", results.display())
        } else {
            String::new()
        },
        evaluation.elapsed.as_secs_f64()
    );
    Ok(())
}

/// mimalloc's committed memory: the allocator's heap, free pages included.
struct MimallocProbe;

impl pfm::scale::MemoryProbe for MimallocProbe {
    fn heap_bytes(&self) -> Option<usize> {
        let mut v = [0usize; 8];
        // SAFETY: mi_process_info writes one usize through each pointer,
        // all of which point into `v`.
        unsafe {
            let [a, b, c, d, e, f, g, h] = &mut v;
            libmimalloc_sys::mi_process_info(a, b, c, d, e, f, g, h);
        }
        Some(v[5])
    }
}

/// Writes a pprof flamegraph of each profiled piece of work into a folder.
struct Flamegraphs(PathBuf);

impl pfm::scale::Profiler for Flamegraphs {
    fn profile(&self, name: &str, work: &mut dyn FnMut() -> pfm::Result<()>) -> pfm::Result<()> {
        let path = self.0.join(format!("{name}.svg"));
        let fail = |e: String| pfm::Error::Io {
            path: path.display().to_string(),
            source: std::io::Error::other(e),
        };
        let guard = pprof::ProfilerGuardBuilder::default()
            .frequency(997)
            .blocklist(&["libc", "libgcc", "pthread", "vdso"])
            .build()
            .map_err(|e| fail(e.to_string()))?;
        work()?;
        let report = guard.report().build().map_err(|e| fail(e.to_string()))?;
        std::fs::create_dir_all(&self.0).map_err(|e| fail(e.to_string()))?;
        let file = std::fs::File::create(&path).map_err(|e| fail(e.to_string()))?;
        report.flamegraph(file).map_err(|e| fail(e.to_string()))
    }
}

/// One row of `pfm scale`: a synthetic (size, vocabulary) or the files.
#[derive(Clone)]
enum ScaleRow {
    Synthetic(u64, Vocabulary),
    Files(PathBuf, PathBuf),
}

impl ScaleRow {
    fn label(&self) -> String {
        match self {
            ScaleRow::Synthetic(n, v) => format!("{n} {v}"),
            ScaleRow::Files(f, _) => f.display().to_string(),
        }
    }

    /// The arguments that make a child process measure exactly this row.
    fn args(&self, seed: u64) -> Vec<String> {
        match self {
            ScaleRow::Synthetic(n, v) => vec![
                "--sizes".into(),
                n.to_string(),
                "--vocabularies".into(),
                v.to_string(),
                "--seed".into(),
                seed.to_string(),
            ],
            ScaleRow::Files(f, q) => vec![
                "--facts".into(),
                f.display().to_string(),
                "--queries".into(),
                q.display().to_string(),
            ],
        }
    }
}

/// Measures one row in this process and prints it as JSON (the child side
/// of `pfm scale`).
fn scale_one_row(row: ScaleRow, seed: u64, flamegraphs: Option<PathBuf>) -> Result<()> {
    use pfm::scale::{self, Corpus};
    let corpus = match row {
        ScaleRow::Synthetic(n, vocabulary) => Corpus::Synthetic {
            n,
            seed,
            vocabulary,
        },
        ScaleRow::Files(facts, queries) => Corpus::Files {
            facts: pfm::synth::read_facts(&facts)?,
            queries: pfm::synth::read_queries(&queries)?,
        },
    };
    let profiler = flamegraphs.map(Flamegraphs);
    let row = scale::measure(
        corpus,
        &MimallocProbe,
        profiler.as_ref().map(|p| p as &dyn scale::Profiler),
    )?;
    println!("{}", serde_json::to_string(&row)?);
    Ok(())
}

/// `pfm scale`: each row runs in a child process of this binary, so every
/// store is built in a fresh address space and memory readings do not carry
/// over from earlier rows.
#[allow(clippy::too_many_arguments)] // one per command-line flag
fn run_scale(
    sizes: Vec<u64>,
    vocabularies: Vec<Vocabulary>,
    seed: u64,
    files: Option<(PathBuf, PathBuf)>,
    out: &Path,
    json: bool,
    flamegraphs: Option<PathBuf>,
    reference: Option<PathBuf>,
    one_row: bool,
) -> Result<()> {
    use pfm::scale::{self, report as scale_report};
    let rows: Vec<ScaleRow> = match files {
        Some((facts, queries)) => vec![ScaleRow::Files(facts, queries)],
        None => {
            if sizes.is_empty() || vocabularies.is_empty() {
                anyhow::bail!("scale needs at least one size and one vocabulary");
            }
            if let Some(n) = sizes.iter().find(|n| !(1..=scale::MAX_SIZE).contains(*n)) {
                anyhow::bail!("size {n}: use 1..={}", scale::MAX_SIZE);
            }
            vocabularies
                .iter()
                .flat_map(|v| sizes.iter().map(move |n| ScaleRow::Synthetic(*n, *v)))
                .collect()
        }
    };
    if one_row {
        let [row] = <[ScaleRow; 1]>::try_from(rows)
            .map_err(|_| anyhow::anyhow!("--one-row needs exactly one size and vocabulary"))?;
        return scale_one_row(row, seed, flamegraphs);
    }
    let exe = std::env::current_exe().context("locating the pfm binary")?;
    let bar = indicatif::ProgressBar::new(rows.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} rows {msg}",
        )
        .expect("static progress template parses"),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let mut measured = Vec::new();
    for row in rows {
        bar.set_message(format!("building and timing {}", row.label()));
        let mut cmd = std::process::Command::new(&exe);
        cmd.arg("scale").arg("--one-row").args(row.args(seed));
        if let Some(dir) = &flamegraphs {
            cmd.arg("--flamegraphs").arg(dir);
        }
        let output = cmd
            .stderr(std::process::Stdio::inherit())
            .output()
            .with_context(|| format!("running the row {}", row.label()))?;
        if !output.status.success() {
            anyhow::bail!("row {} failed ({})", row.label(), output.status);
        }
        let line = String::from_utf8_lossy(&output.stdout);
        let mut measured_row: scale::Row = serde_json::from_str(line.trim())
            .with_context(|| format!("reading the row {}: {line:?}", row.label()))?;
        if let Some(bin) = &reference {
            bar.set_message(format!("timing {} on {}", bin.display(), row.label()));
            measured_row.reference = Some(
                run_reference(bin, &row, seed)
                    .with_context(|| format!("reference engine on the row {}", row.label()))?,
            );
        }
        if json {
            let line = serde_json::to_string(&measured_row)?;
            bar.suspend(|| println!("{line}"));
        }
        measured.push(measured_row);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let now = jiff::Timestamp::now();
    let meta = run_meta(now);
    let dir = out.join(format!("{}-{}", now.strftime("%Y%m%d-%H%M%S"), hostname()));
    scale_report::write_run(&dir, &measured, &meta)?;
    if !json {
        print!("{}", scale_report::markdown(&measured, &meta));
    }
    eprintln!("wrote {}", dir.display());
    Ok(())
}

/// Times the reference engine on a row's data: the files themselves, or the
/// synthetic corpus written to a temporary folder (removed afterwards).
fn run_reference(bin: &Path, row: &ScaleRow, seed: u64) -> Result<pfm::scale::Reference> {
    use pfm::scale::reference;
    Ok(match row {
        ScaleRow::Files(facts, queries) => reference::run(bin, facts, queries)?,
        ScaleRow::Synthetic(n, vocabulary) => {
            let dir = std::env::temp_dir().join(format!("pfm-scale-{}", std::process::id()));
            let result = reference::write_corpus(&dir, *n, seed, *vocabulary)
                .and_then(|(facts, queries)| reference::run(bin, &facts, &queries));
            let _ = std::fs::remove_dir_all(&dir);
            result?
        }
    })
}

/// The machine's host name, or "host".
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        .unwrap_or_else(|| "host".to_owned())
}

/// This process's command line, the tree's revision and the machine, dated `now`.
fn run_meta(now: jiff::Timestamp) -> pfm::run::RunMeta {
    pfm::run::RunMeta {
        command: std::iter::once("pfm".to_owned())
            .chain(std::env::args().skip(1))
            .collect::<Vec<_>>()
            .join(" "),
        revision: git_revision(),
        machine: machine(),
        date: now.strftime("%Y-%m-%d %H:%M UTC").to_string(),
    }
}

/// `git describe --always --dirty` of the working tree, or "unknown".
fn git_revision() -> String {
    std::process::Command::new("git")
        .args(["describe", "--always", "--dirty"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map_or_else(
            || "unknown".to_owned(),
            |o| String::from_utf8_lossy(&o.stdout).trim().to_owned(),
        )
}

/// The CPU model and core count, from /proc/cpuinfo where there is one.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    format!("{model}, {cores} cores")
}
