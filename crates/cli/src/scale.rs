//! `pfm scale`: retrieval cost against store size.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use pfm_harness::scale::runner::{RowSpec, ScaleRun};
use pfm_harness::scale::{self, report};
use pfm_synth::Vocabulary;

use crate::probes::{Flamegraphs, MimallocProbe};

#[derive(Args)]
pub struct ScaleArgs {
    /// Store sizes, comma-separated (up to 10,000,000; a 10,000,000-fact wide row needs about 18 GiB of memory).
    #[arg(long, value_delimiter = ',', default_values_t = pfm_harness::scale::SIZES)]
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
    /// Also time a MiniLM retriever (query encoding + exact scan) and the
    /// hybrid on each row's store: the lexical/dense crossover. Needs the
    /// models (`scripts/fetch-models`); the report adds `crossover.svg`.
    #[arg(long)]
    dense: bool,
    /// How recency decays for the timed requests: fixed, span or off
    /// (default: the store's, off). The scorer prunes on recency, so the
    /// choice moves retrieval cost (`scale/README.md`).
    #[arg(long)]
    recency: Option<pfm::rank::Recency>,
    /// Observations committed together (one `observe_batch`) while each
    /// row's store is built; the build cost a fact (`add_us`) is at this
    /// batch size. Bulk import in issue 24's sense is 10000.
    #[arg(long, default_value_t = pfm_harness::scale::BATCH, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    batch: usize,
    /// Internal: measure the one row given in this process and print it
    /// as JSON (the parent runs every row this way).
    #[arg(long, hide = true)]
    one_row: bool,
}

impl ScaleArgs {
    pub fn run(self) -> Result<()> {
        let rows = RowSpec::plan(
            &self.sizes,
            &self.vocabularies,
            self.facts.zip(self.queries),
        )?;
        let options = scale::RowOptions {
            dense: self.dense,
            recency: self.recency,
            batch: self.batch,
        };
        if self.one_row {
            let [row] = <[RowSpec; 1]>::try_from(rows)
                .map_err(|_| anyhow::anyhow!("--one-row needs exactly one size and vocabulary"))?;
            let profiler = self.flamegraphs.map(Flamegraphs);
            let row = row.measure_here(
                self.seed,
                &options,
                &MimallocProbe,
                profiler.as_ref().map(|p| p as &dyn scale::Profiler),
            )?;
            println!("{}", serde_json::to_string(&row)?);
            return Ok(());
        }
        let run = ScaleRun {
            rows,
            seed: self.seed,
            out: self.out,
            flamegraphs: self.flamegraphs,
            reference: self.reference,
            options,
        };
        let exe = std::env::current_exe().context("locating the pfm binary")?;
        let json = self.json;
        let done = scale::runner::run(&run, &exe, &|row| {
            if json {
                println!("{}", serde_json::to_string(row).expect("a row serializes"));
            }
        })?;
        if !json {
            print!("{}", report::markdown(&done.rows, &done.meta));
        }
        eprintln!("wrote {}", done.dir.display());
        Ok(())
    }
}
