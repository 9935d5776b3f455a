//! The `pfm scale` driver: every row runs in a child process of the calling
//! binary (`<exe> scale --one-row …`), so each store is built in a fresh
//! address space and memory readings do not carry over from earlier rows;
//! the reference engine, if any, is timed right after its row on the same
//! data; the run folder is written at the end, with every measured row even
//! when the reference engine failed on some (the run then fails, naming
//! them and the folder).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use pfm::error::{Error, Result};
use pfm_synth::Vocabulary;

use super::{
    Corpus, MAX_SIZE, MemoryProbe, Profiler, Reference, Row, RowOptions, measure, reference, report,
};
use crate::run::{RunMeta, hostname};

/// One row of `pfm scale`: a synthetic (size, vocabulary), or the spec's files.
#[derive(Clone, Debug)]
pub enum RowSpec {
    /// The generated corpus of this size and vocabulary.
    Synthetic(u64, Vocabulary),
    /// Facts and queries in the spec's JSONL.
    Files(PathBuf, PathBuf),
}

impl RowSpec {
    /// The rows a command line asks for: the files alone, or every
    /// (vocabulary, size) pair, sizes checked against [`MAX_SIZE`].
    pub fn plan(
        sizes: &[u64],
        vocabularies: &[Vocabulary],
        files: Option<(PathBuf, PathBuf)>,
    ) -> Result<Vec<RowSpec>> {
        if let Some((facts, queries)) = files {
            return Ok(vec![RowSpec::Files(facts, queries)]);
        }
        if sizes.is_empty() || vocabularies.is_empty() {
            return Err(Error::InvalidConfig(
                "scale needs at least one size and one vocabulary".into(),
            ));
        }
        if let Some(n) = sizes.iter().find(|n| !(1..=MAX_SIZE).contains(*n)) {
            return Err(Error::InvalidConfig(format!(
                "size {n}: use 1..={MAX_SIZE}"
            )));
        }
        Ok(vocabularies
            .iter()
            .flat_map(|v| sizes.iter().map(move |n| RowSpec::Synthetic(*n, *v)))
            .collect())
    }

    fn label(&self) -> String {
        match self {
            RowSpec::Synthetic(n, v) => format!("{n} {v}"),
            RowSpec::Files(f, _) => f.display().to_string(),
        }
    }

    /// The arguments that make a child process measure exactly this row.
    fn args(&self, seed: u64, options: &RowOptions) -> Vec<String> {
        let mut args: Vec<String> = match self {
            RowSpec::Synthetic(n, v) => vec![
                "--sizes".into(),
                n.to_string(),
                "--vocabularies".into(),
                v.to_string(),
                "--seed".into(),
                seed.to_string(),
            ],
            RowSpec::Files(f, q) => vec![
                "--facts".into(),
                f.display().to_string(),
                "--queries".into(),
                q.display().to_string(),
            ],
        };
        if options.dense {
            args.push("--dense".into());
        }
        if let Some(r) = options.recency {
            args.extend(["--recency".into(), r.name().into()]);
        }
        args.extend(["--batch".into(), options.batch.to_string()]);
        args
    }

    /// Measures this row in this process (the child side of [`run`]).
    pub fn measure_here(
        self,
        seed: u64,
        options: &RowOptions,
        probe: &dyn MemoryProbe,
        profiler: Option<&dyn Profiler>,
    ) -> Result<Row> {
        let corpus = match self {
            RowSpec::Synthetic(n, vocabulary) => Corpus::Synthetic {
                n,
                seed,
                vocabulary,
            },
            RowSpec::Files(facts, queries) => Corpus::Files {
                facts: pfm_synth::read_facts(&facts)?,
                queries: pfm_synth::read_queries(&queries)?,
            },
        };
        measure(corpus, probe, profiler, options)
    }

    /// Times the reference engine on this row's data: the files themselves,
    /// or the synthetic corpus written to a temporary folder (removed
    /// afterwards).
    fn reference(&self, bin: &Path, seed: u64) -> Result<Reference> {
        match self {
            RowSpec::Files(facts, queries) => reference::run(bin, facts, queries),
            RowSpec::Synthetic(n, vocabulary) => {
                let dir = std::env::temp_dir().join(format!("pfm-scale-{}", std::process::id()));
                let result = reference::write_corpus(&dir, *n, seed, *vocabulary)
                    .and_then(|(facts, queries)| reference::run(bin, &facts, &queries));
                let _ = std::fs::remove_dir_all(&dir);
                result
            }
        }
    }
}

/// What a `pfm scale` run measures and where it writes.
#[derive(Clone, Debug)]
pub struct ScaleRun {
    /// The rows, in order.
    pub rows: Vec<RowSpec>,
    /// Corpus seed.
    pub seed: u64,
    /// Folder that receives the run folder (`<date>-<host>/`).
    pub out: PathBuf,
    /// Also write pprof flamegraphs of every row into this folder.
    pub flamegraphs: Option<PathBuf>,
    /// Another engine to time on each row's data.
    pub reference: Option<PathBuf>,
    /// How each row is built and timed (`--dense`, `--recency`,
    /// `--batch`).
    pub options: RowOptions,
}

/// A finished `pfm scale` run, its folder written.
#[derive(Debug)]
pub struct Finished {
    /// The run folder.
    pub dir: PathBuf,
    /// The measured rows.
    pub rows: Vec<Row>,
    /// Its provenance header.
    pub meta: RunMeta,
}

/// Runs every row in a child process of `exe` (the `pfm` binary), with a
/// progress bar on stderr; `on_row` sees each row as it is measured. Writes
/// the run folder.
pub fn run(run: &ScaleRun, exe: &Path, on_row: &dyn Fn(&Row)) -> Result<Finished> {
    let bar = indicatif::ProgressBar::new(run.rows.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} rows {msg}",
        )
        .expect("static progress template parses"),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    let mut measured = Vec::new();
    let mut refused = Vec::new();
    for row in &run.rows {
        bar.set_message(format!("building and timing {}", row.label()));
        let mut cmd = Command::new(exe);
        cmd.arg("scale")
            .arg("--one-row")
            .args(row.args(run.seed, &run.options));
        if let Some(dir) = &run.flamegraphs {
            cmd.arg("--flamegraphs").arg(dir);
        }
        let output = cmd
            .stderr(Stdio::inherit())
            .output()
            .map_err(Error::io(exe))?;
        let failed = |what: String| Error::Io {
            path: exe.display().to_string(),
            source: std::io::Error::other(format!("row {}: {what}", row.label())),
        };
        if !output.status.success() {
            return Err(failed(format!("the child failed ({})", output.status)));
        }
        let line = String::from_utf8_lossy(&output.stdout);
        let mut measured_row: Row = serde_json::from_str(line.trim())
            .map_err(|e| failed(format!("unreadable row {line:?}: {e}")))?;
        if let Some(bin) = &run.reference {
            bar.set_message(format!("timing {} on {}", bin.display(), row.label()));
            // pfm's row is measured (a 10,000,000-fact row takes minutes):
            // a failing engine costs only its own columns. The run still
            // fails, once the folder holds every row.
            match row.reference(bin, run.seed) {
                Ok(r) => measured_row.reference = Some(r),
                Err(e) => {
                    let why = format!("row {}: {e}", row.label());
                    bar.suspend(|| eprintln!("{why}"));
                    refused.push(why);
                }
            }
        }
        bar.suspend(|| on_row(&measured_row));
        measured.push(measured_row);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let now = jiff::Timestamp::now();
    let meta = RunMeta::here(now);
    let dir = run
        .out
        .join(format!("{}-{}", now.strftime("%Y%m%d-%H%M%S"), hostname()));
    report::write_run(&dir, &measured, &meta)?;
    if !refused.is_empty() {
        return Err(Error::InvalidConfig(format!(
            "the reference engine failed on {} of {} rows ({}); pfm's rows are written to {}",
            refused.len(),
            measured.len(),
            refused.join("; "),
            dir.display()
        )));
    }
    Ok(Finished {
        dir,
        rows: measured,
        meta,
    })
}
