//! `pfm scale`: retrieval cost against store size (paper Appendix H, Table
//! 9; Appendix I, Figure 1) on the synthetic scaling corpus
//! (`../shared/specs/synthetic-corpus.md`).
//!
//! For each size and vocabulary a fresh store is built from the corpus
//! (batches of 1,000 observations, merges drained), then:
//! - 50 warm-up queries, untimed, and 300 timed ones: the whole retrieval
//!   call (shortlist 50, selection under k = 6 and B = 800, the block text);
//! - the longest posting list a timed query traverses (live documents on its
//!   heaviest term);
//! - per-observation construction cost (build wall time / facts);
//! - resident memory after the build, and the allocator's committed heap
//!   when the binary can report it;
//! - commit-to-visible: single-fact commits after the build, timed from the
//!   `observe` call to the moment a reader's `version()` holds the fact.
//!
//! `--dense` also times a MiniLM retriever and the hybrid on the same store
//! ([`dense`](mod@dense)): the lexical/dense crossover.
//!
//! `--facts FILE --queries FILE` runs exactly one row on the spec's JSONL,
//! so another engine can be timed on the same data; its block line count
//! (`block_lines_total`) cross-checks the two.
//!
//! - [`report`]: CSV, markdown, the log-log plot and the run folder.
//! - [`dense`](mod@dense): the dense and hybrid timings of `--dense`.
//! - [`reference`](mod@reference): another engine timed on the same files, in the same run.
//! - [`runner`]: the driver: one child process per row, the reference after
//!   it, the run folder.

pub mod dense;
pub mod reference;
pub mod report;
pub mod runner;

use std::time::Instant;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use pfm::config::Config;
use pfm::error::{Error, Result};
use pfm::memory::{Memory, Observation};
use pfm::rank::Recency;
use pfm::rank::Scratch;
use pfm::retrieve::retrieve_with;
use pfm::time::WallTime;
use pfm::vector::Encoder;
use pfm_synth::{SynthFact, SynthQuery, Vocabulary};

/// The paper's size grid.
pub const SIZES: [u64; 7] = [100, 1_000, 5_000, 10_000, 20_000, 50_000, 100_000];
/// The largest size accepted.
pub const MAX_SIZE: u64 = 10_000_000;
/// Untimed queries before the timed ones.
pub const WARM_UP: usize = 50;
/// Single-fact commits timed for commit-to-visible.
pub const COMMITS: usize = 200;
/// Observations per build batch unless a row asks for another
/// ([`RowOptions::batch`], `pfm scale --batch`).
pub const BATCH: usize = 1_000;

/// One measured (size, vocabulary) line.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// Facts in the store.
    pub n: u64,
    /// `wide`, `narrow`, or `file` for `--facts`.
    pub vocabulary: String,
    /// Timed queries.
    pub queries: usize,
    /// Retrieval latency, microseconds.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Slowest timed query.
    pub max_us: f64,
    /// Construction cost per observation (build wall time / n), microseconds.
    pub add_us: f64,
    /// Resident set right after the build, MiB: the generator's input is
    /// still held, and memory the build freed may not be returned yet.
    pub rss_mb: f64,
    /// Resident set at rest, MiB: after the build (and any profiled second
    /// build), with the input dropped and the allocator's free memory handed
    /// back to the OS ([`MemoryProbe::release_free`]): what the store itself
    /// keeps resident. 0 in rows recorded before it was measured.
    #[serde(default)]
    pub rss_rest_mb: f64,
    /// The allocator's committed heap right after the build, MiB (absent
    /// when the allocator cannot say).
    pub heap_mb: Option<f64>,
    /// Observations a commit while the store was built
    /// ([`RowOptions::batch`]; [`BATCH`] in rows recorded before it was
    /// chosen).
    #[serde(default = "default_batch")]
    pub batch: usize,
    /// Live documents on the heaviest term a timed query reads.
    pub longest_posting: u64,
    /// Mean block length in characters over the timed queries.
    pub mean_block_chars: f64,
    /// Sum over timed queries of the block's fact lines.
    pub block_lines_total: usize,
    /// Commit-to-visible of one new fact, microseconds: median.
    pub commit_visible_p50_us: f64,
    /// Commit-to-visible, 99th percentile.
    pub commit_visible_p99_us: f64,
    /// Build wall time, seconds.
    pub build_s: f64,
    /// Another engine timed on the same facts and queries right after this
    /// row (`pfm scale --reference`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<Reference>,
    /// The dense and hybrid arms on the same store (`pfm scale --dense`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dense: Option<dense::DenseRow>,
    /// The recency the timed requests asked for (`pfm scale --recency`);
    /// absent: the store's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recency: Option<Recency>,
}

fn default_batch() -> usize {
    BATCH
}

/// What a reference engine reports for one row: the keys of [`Row`] it
/// shares, measured the same way (whole call, 50 warm-ups, 300 timed).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Reference {
    /// The engine's name (`engine` in its output, else the binary's name).
    #[serde(default)]
    pub engine: String,
    /// Retrieval latency, microseconds.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Slowest timed query.
    pub max_us: f64,
    /// Sum over timed queries of the block's fact lines.
    pub block_lines_total: usize,
    /// Build wall time per fact, microseconds, if the engine reports it.
    #[serde(default)]
    pub add_us: Option<f64>,
    /// Resident set after the build, MiB, if the engine reports it.
    #[serde(default)]
    pub rss_mb: Option<f64>,
    /// Resident set at rest (input dropped, free memory returned to the
    /// OS), MiB, if the engine reports it: see [`Row::rss_rest_mb`].
    #[serde(default)]
    pub rss_rest_mb: Option<f64>,
}

/// What the harness can ask the process about memory.
pub trait MemoryProbe: Sync {
    /// The allocator's committed heap in bytes, if known.
    fn heap_bytes(&self) -> Option<usize>;

    /// Hands the memory the allocator holds free back to the OS, so that
    /// the resident set read next is what live data keeps (mimalloc:
    /// `mi_collect(true)`; a long-running process gets there by itself once
    /// the allocator's purge delay has passed). Does nothing by default.
    fn release_free(&self) {}
}

/// A probe that knows nothing about the allocator.
pub struct NoProbe;

impl MemoryProbe for NoProbe {
    fn heap_bytes(&self) -> Option<usize> {
        None
    }
}

/// Profiles a piece of work (the binary writes pprof flamegraphs).
pub trait Profiler: Sync {
    /// Runs `work` under the profiler and saves the profile as `name`.
    fn profile(&self, name: &str, work: &mut dyn FnMut() -> Result<()>) -> Result<()>;
}

/// How long the profiled retrieval loop runs.
const PROFILE_SECS: f64 = 3.0;

/// Where a row's facts and queries come from.
pub enum Corpus {
    /// The synthetic corpus of `n` facts.
    Synthetic {
        /// Facts.
        n: u64,
        /// Seed.
        seed: u64,
        /// Vocabulary.
        vocabulary: Vocabulary,
    },
    /// The spec's JSONL files.
    Files {
        /// Facts.
        facts: Vec<SynthFact>,
        /// Queries (the first [`WARM_UP`] are warm-up).
        queries: Vec<SynthQuery>,
    },
}

/// How a row is built and timed besides its corpus: what `pfm scale`'s
/// `--dense`, `--recency` and `--batch` set.
#[derive(Clone, Copy, Debug)]
pub struct RowOptions {
    /// Also build the store with fact vectors (see [`dense`](mod@dense);
    /// `add_us` then includes storing them, not the model) and time the
    /// dense and hybrid arms after the lexical one.
    pub dense: bool,
    /// The recency the timed requests ask for instead of the store's
    /// default ([`pfm::rank::Recency::Off`]).
    pub recency: Option<Recency>,
    /// Observations a commit (`observe_batch`) while the store is built;
    /// at least 1. `add_us` is the cost a fact at this batch size.
    pub batch: usize,
}

impl Default for RowOptions {
    /// The lexical arm, the store's recency, batches of [`BATCH`].
    fn default() -> Self {
        RowOptions {
            dense: false,
            recency: None,
            batch: BATCH,
        }
    }
}

/// Measures one row; with a profiler, also profiles (untimed) a second
/// build of the store and `PROFILE_SECS` of the timed queries in a loop.
/// `options` says how the store is built and which arms and recency are
/// timed ([`RowOptions`]).
pub fn measure(
    corpus: Corpus,
    probe: &dyn MemoryProbe,
    profiler: Option<&dyn Profiler>,
    options: &RowOptions,
) -> Result<Row> {
    let RowOptions {
        dense,
        recency,
        batch,
    } = *options;
    if batch == 0 {
        return Err(Error::InvalidConfig(
            "batch 0: a build commits at least one observation a batch".into(),
        ));
    }
    let (facts, queries, vocabulary) = match corpus {
        Corpus::Synthetic {
            n,
            seed,
            vocabulary,
        } => {
            if !(1..=MAX_SIZE).contains(&n) {
                return Err(Error::InvalidConfig(format!(
                    "size {n}: use 1..={MAX_SIZE}"
                )));
            }
            let (f, q) = pfm_synth::generate(n, seed, vocabulary, pfm_synth::DEFAULT_QUERIES);
            (f, q, vocabulary.to_string())
        }
        Corpus::Files { facts, queries } => (facts, queries, "file".to_owned()),
    };
    if queries.len() <= WARM_UP {
        return Err(Error::InvalidConfig(format!(
            "{} queries: need more than the {WARM_UP} warm-up queries",
            queries.len()
        )));
    }
    let n = facts.len() as u64;
    let replay = dense
        .then(|| {
            let mut model = pfm_dense::MiniLm::locate(1)?;
            dense::Replay::embed(&facts, dense::EMBEDDED, &mut model)
        })
        .transpose()?;
    let embedded = replay.as_ref().map(|(r, ms)| (r.vectors().to_vec(), *ms));
    let started = Instant::now();
    let mut memory = build_in_batches(
        facts.iter().map(SynthFact::observation),
        batch,
        replay.map(|(r, _)| Box::new(r) as Box<dyn Encoder>),
    )?;
    let build_time = started.elapsed();
    let rss_mb = resident_bytes().map_or(0.0, |b| b as f64 / MIB);
    let heap_mb = probe.heap_bytes().map(|b| b as f64 / MIB);
    if let Some(p) = profiler {
        p.profile(&format!("ingest-{n}-{vocabulary}"), &mut || {
            build_in_batches(facts.iter().map(SynthFact::observation), batch, None).map(drop)
        })?;
    }
    drop(facts);
    probe.release_free();
    let rss_rest_mb = resident_bytes().map_or(0.0, |b| b as f64 / MIB);

    let version = memory.version();
    let requests: Vec<_> = queries
        .iter()
        .map(|q| match recency {
            Some(r) => q.request().with_recency(r),
            None => q.request(),
        })
        .collect();
    let mut scratch = Scratch::default();
    for r in &requests[..WARM_UP] {
        retrieve_with(&version, r, &mut scratch)?;
    }
    let timed = &requests[WARM_UP..];
    let mut latency = histogram();
    let (mut chars, mut lines) = (0usize, 0usize);
    for r in timed {
        let t = Instant::now();
        let block = retrieve_with(&version, r, &mut scratch)?;
        record(&mut latency, t);
        chars += block.chars();
        lines += block.lines.len();
    }
    let longest_posting = timed
        .iter()
        .map(|r| {
            let terms =
                pfm::rank::query_terms(&r.context, &r.participants, &r.ranker, &version.params);
            let mask = r.ranker.field_mask(&version.params);
            terms
                .iter()
                .map(|t| u64::from(version.active.df(&t.term, mask)))
                .max()
                .unwrap_or(0)
        })
        .max()
        .unwrap_or(0);

    if let Some(p) = profiler {
        p.profile(&format!("retrieve-{n}-{vocabulary}"), &mut || {
            let until = Instant::now();
            while until.elapsed().as_secs_f64() < PROFILE_SECS {
                for r in timed {
                    retrieve_with(&version, r, &mut scratch)?;
                }
            }
            Ok(())
        })?;
    }
    let dense = embedded
        .map(|(vectors, embed_ms)| {
            let bytes = memory.vector_footprint().1;
            dense::measure(
                &version,
                &requests[..WARM_UP],
                timed,
                &vectors,
                embed_ms,
                bytes,
            )
        })
        .transpose()?;
    let commit = commit_to_visible(&mut memory, n)?;
    Ok(Row {
        n,
        vocabulary,
        queries: timed.len(),
        p50_us: latency.value_at_quantile(0.5) as f64 / 1e3,
        p99_us: latency.value_at_quantile(0.99) as f64 / 1e3,
        max_us: latency.max() as f64 / 1e3,
        add_us: build_time.as_secs_f64() * 1e6 / n.max(1) as f64,
        rss_mb,
        rss_rest_mb,
        heap_mb,
        batch,
        longest_posting,
        mean_block_chars: chars as f64 / timed.len() as f64,
        block_lines_total: lines,
        commit_visible_p50_us: commit.value_at_quantile(0.5) as f64 / 1e3,
        commit_visible_p99_us: commit.value_at_quantile(0.99) as f64 / 1e3,
        build_s: build_time.as_secs_f64(),
        reference: None,
        dense,
        recency,
    })
}

const MIB: f64 = 1024.0 * 1024.0;

/// A fresh store holding `facts`, observed in batches of [`BATCH`] with
/// background merges drained, embedding them with `encoder` if given: how
/// every `pfm scale` row (and the heap profile, `examples/heap.rs`, and the
/// retrieval bench) builds its store.
pub fn build(facts: &[SynthFact], encoder: Option<Box<dyn Encoder>>) -> Result<Memory> {
    build_in_batches(facts.iter().map(SynthFact::observation), BATCH, encoder)
}

/// A fresh store holding `observations`, committed `batch` at a time (one
/// `observe_batch` each; a batch of one is what `observe` commits) with
/// background merges drained: [`build`] with another batch size, for the
/// bulk-construction bench (`benches/build.rs`). `batch` is at least 1.
pub fn build_in_batches(
    observations: impl IntoIterator<Item = Observation>,
    batch: usize,
    encoder: Option<Box<dyn Encoder>>,
) -> Result<Memory> {
    assert!(
        batch > 0,
        "a build commits at least one observation a batch"
    );
    let mut memory = Memory::new(Config::default())?;
    if let Some(encoder) = encoder {
        memory.set_encoder(encoder, false)?;
    }
    let mut observations = observations.into_iter();
    loop {
        let chunk: Vec<Observation> = observations.by_ref().take(batch).collect();
        if chunk.is_empty() {
            break;
        }
        memory.observe_batch(chunk)?;
    }
    memory.wait_for_merges();
    Ok(memory)
}

/// Nanoseconds from 1 ns to one minute at 3 significant figures.
fn histogram() -> Histogram<u64> {
    // Infallible: the bounds and precision are in range.
    Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid histogram bounds")
}

fn record(h: &mut Histogram<u64>, since: Instant) {
    h.saturating_record(elapsed_ns(since));
}

fn elapsed_ns(since: Instant) -> u64 {
    since.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64
}

/// Times [`COMMITS`] single-fact commits, each a new fact with a term no
/// other fact has, from the `observe` call until a reader's version holds
/// it; checks (untimed) that every one is retrievable.
fn commit_to_visible(memory: &mut Memory, n: u64) -> Result<Histogram<u64>> {
    let mut h = histogram();
    for i in 0..COMMITS {
        let token = format!("visiblecheck{i}");
        let at = WallTime::from_secs(pfm_synth::BASE_SECS + n as i64 + 10 + i as i64);
        let observation = Observation::new(format!("{token} met the budget with ent1"), at)
            .with_entities(["ent1"])
            .with_participants(["user1"]);
        let t = Instant::now();
        let receipt = memory.observe(observation)?;
        let version = memory.version();
        record(&mut h, t);
        if version.seq < receipt.seq {
            return Err(Error::CommitFailed(format!(
                "commit {} not visible in version {}",
                receipt.seq, version.seq
            )));
        }
        let block =
            pfm::retrieve::retrieve(&version, &pfm::retrieve::Request::new(token.clone(), at))?;
        if !block.text.contains(&token) {
            return Err(Error::CommitFailed(format!(
                "committed fact {token} not retrievable"
            )));
        }
    }
    Ok(h)
}

/// The process's resident set in bytes (Linux `/proc/self/statm`).
pub fn resident_bytes() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).ok().map(|p| pages * p)
}
