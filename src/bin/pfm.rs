//! `pfm`: the command-line front end. Thin: every command is a few calls
//! into the library.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use pfm::config::Ordering;
use pfm::eval::{EvalOptions, report};
use pfm::load::{self, Ingest, LoadOptions, Mode};
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
        } => {
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
    // Two people share a first name. Without the identity rules (a later
    // issue) both Alexes' standups compete for the block.
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
    let ask = |memory: &Memory| -> Result<String> {
        let request = Request::new("the standup with Alex is at", june(12, 9)?)
            .with_participants(["Alex Rivera"]);
        let block = memory.retrieve(&request).context("retrieve")?;
        Ok(if block.is_empty() {
            "(empty block)".to_owned()
        } else {
            block.text
        })
    };
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
    let meta = report::RunMeta {
        command: std::iter::once("pfm".to_owned())
            .chain(std::env::args().skip(1))
            .collect::<Vec<_>>()
            .join(" "),
        revision: git_revision(),
        machine: machine(),
        date: jiff::Timestamp::now()
            .strftime("%Y-%m-%d %H:%M UTC")
            .to_string(),
    };
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
