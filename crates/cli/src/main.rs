//! `pfm`: the command-line front end. Thin: each subcommand is one `Args`
//! struct (its own module) whose `run` calls into the library crates.

mod demo;
mod eval;
mod layout;
mod load;
mod mcp;
mod probes;
mod repair;
mod scale;
mod serve;
mod tenant;
mod token;

use anyhow::Result;
use clap::{Parser, Subcommand};
use serde::Serialize;

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
    Load(load::LoadArgs),
    /// Serve memory over HTTP/JSON (`/v1`): tenants with bearer tokens, a
    /// durable ledger per tenant under --data-dir, Prometheus `/metrics`,
    /// OpenAPI at `/v1/openapi.json`. Stops on SIGINT/SIGTERM after
    /// finishing in-flight requests and flushing the ledgers. Logs go to
    /// stderr, filtered by RUST_LOG (default info; no fact text at info).
    Serve(serve::ServeArgs),
    /// Serve one tenant's memory to an agent host over the Model Context
    /// Protocol on stdin/stdout (tools remember, recall, forget, history;
    /// the same tools are at /mcp on `pfm serve`, over streamable HTTP).
    /// The host starts it as a command, e.g. `pfm mcp --data-dir
    /// ~/.pfm --tenant me` (README, "MCP"). Logs go to stderr (RUST_LOG).
    /// One process at a time per tenant: the ledger file is locked.
    Mcp(mcp::McpArgs),
    /// Tenant tokens for `pfm serve`.
    Token(token::TokenArgs),
    /// The tenants of a `pfm serve` data directory: list, delete.
    Tenant(tenant::TenantArgs),
    /// Inspect a tenant's ledger file: redb first repairs an unclean
    /// shutdown; rows that do not decode are listed (and, with
    /// --drop-corrupt, deleted). The server does not serve a tenant whose
    /// ledger has such rows (its requests are refused with the reason).
    Repair(repair::RepairArgs),
    /// The controlled revision benchmark (paper Sections 6-7.2, Appendices B
    /// and J): generates the instances, builds keyed and keyless stores,
    /// runs every arm and the identity, abstention, ablation and slice
    /// studies, and writes Tables 1, 2, 3, 6, 12, 13, 14, 15, 16 and 22 with the
    /// paper's value beside ours. The full protocol (the defaults)
    /// regenerates eval/RESULTS.md; every run writes a folder under --out.
    Eval(eval::EvalArgs),
    /// Retrieval cost against store size (paper Appendix H, Table 9;
    /// Figure 1): for each size and vocabulary, build a fresh store from the
    /// synthetic corpus, time 300 queries after 50 warm-ups, and report
    /// p50/p99/max, construction cost, memory, the longest posting list and
    /// commit-to-visible. Writes CSV, markdown and a log-log SVG plot under
    /// `--out/<date>-<host>/`.
    Scale(scale::ScaleArgs),
    /// Storage layouts for many tenants, measured side by side on redb: one
    /// file per tenant (what `pfm serve` does) against one shared file with
    /// tenant-prefixed keys (creation, disk, start, one tenant's read,
    /// durable group commits across tenants, erasure and what it leaves).
    Layout(layout::LayoutArgs),
    /// Observe a revision chain and print the memory block before and after
    /// each revision (keyed supersession at work).
    Demo(demo::DemoArgs),
}

fn main() -> Result<()> {
    huge_pages_off();
    match Cli::parse().command {
        Command::Load(args) => args.run(),
        Command::Serve(args) => args.run(),
        Command::Mcp(args) => args.run(),
        Command::Token(args) => args.run(),
        Command::Tenant(args) => args.run(),
        Command::Repair(args) => args.run(),
        Command::Eval(args) => args.run(),
        Command::Scale(args) => args.run(),
        Command::Layout(args) => args.run(),
        Command::Demo(args) => args.run(),
    }
}

/// Turns transparent huge pages off for this process and the processes it
/// starts (the scale rows' children inherit it), unless the environment
/// sets mimalloc's own `MIMALLOC_ALLOW_THP` (then mimalloc's choice holds:
/// `0` turns them off at its start, `1` keeps them).
///
/// Why: mimalloc reserves its arenas with `MADV_HUGEPAGE`, so on a kernel
/// whose THP mode is `madvise` (or `always`) the first touch of any byte
/// of a 2 MiB region makes all of it resident, and a store's many small
/// allocations leave such regions partly used. Measured on this 2-core VM
/// (2026-12-04): a 100,000-fact store, RSS 229–236 → 177–197 MiB at the
/// same build time; 1,000 open tenants of ~1,000 facts after 30 s of
/// serving, 3.91 → 3.69 GB at the same warm retrieve p99 (`scale/README.md`,
/// README "Many tenants"). mimalloc's option cannot be set from here: it is
/// read from the environment before `main` runs.
fn huge_pages_off() {
    #[cfg(target_os = "linux")]
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_none() {
        // SAFETY: PR_SET_THP_DISABLE takes plain integers and reads or
        // writes no memory of this process; on failure (an old kernel) it
        // returns -1 and nothing changes, which is the old behaviour.
        unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
    }
}

/// Prints a report: one JSON object with `--json`, else its text form.
fn print<T: Serialize>(report: &T, json: bool, text: impl FnOnce() -> String) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string(report)?);
    } else {
        print!("{}", text());
    }
    Ok(())
}
