//! `pfm eval`: the controlled revision benchmark.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use pfm_harness::eval::{self, EvalOptions, report};

#[derive(Args)]
pub struct EvalArgs {
    /// Benchmark seeds, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = pfm_harness::eval::SEEDS)]
    seeds: Vec<u64>,
    /// Arms, comma-separated: pfm, pfm_keyless, bm25, bm25_p,
    /// bm25_recency, bm25_recency_p, bm25_validity, bm25_validity_p, and
    /// the dense arms dense[_validity][_p], hybrid[_validity][_p] (these
    /// need scripts/fetch-models). Default: all sixteen.
    #[arg(long, value_delimiter = ',', default_values_t = pfm_harness::eval::arms::all())]
    arms: Vec<String>,
    /// Character budgets B, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = pfm_harness::eval::BUDGETS)]
    budgets: Vec<usize>,
    /// People per benchmark instance (12 paired + unique first names).
    /// Table 6 fixes the ambiguity counts, not the pool; 29 reproduces
    /// them, a larger pool spreads each person's facts thinner.
    #[arg(long, default_value_t = pfm_harness::eval::generator::DEFAULT_PEOPLE)]
    people: usize,
    /// Skip the key-noise grid (Table 16).
    #[arg(long)]
    no_key_noise: bool,
    /// Skip the identity, abstention, ablation and slice studies
    /// (Tables 3, 13 and 22).
    #[arg(long)]
    no_studies: bool,
    /// Skip the P-Mem probes (retraction, conflict, revision chains).
    #[arg(long)]
    no_probes: bool,
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
    /// LoCoMo's locomo10.json: the real-conversation study (evidence
    /// recall per category for pfm, the BM25 baselines and the dense arms)
    /// runs on it and its tables join the report.
    #[arg(long, default_value = pfm_harness::eval::locomo::DEFAULT_PATH)]
    locomo: PathBuf,
    /// Skip the LoCoMo study.
    #[arg(long, conflicts_with = "locomo_only")]
    no_locomo: bool,
    /// Run only the LoCoMo study and print its tables.
    #[arg(long)]
    locomo_only: bool,
    /// Run only the speculation-gate study and print its tables.
    #[arg(long, conflicts_with = "locomo_only")]
    gate_only: bool,
    /// Run only the key-discovery study (revision streams and the LoCoMo
    /// key audit) and print its tables.
    #[arg(long, conflicts_with_all = ["locomo_only", "gate_only"])]
    keys_only: bool,
    /// Write the LoCoMo key audit's sample to this label file (keeping
    /// the labels it already has) and exit; label its empty rows y or n.
    #[arg(long)]
    key_audit_sample: Option<PathBuf>,
}

impl EvalArgs {
    pub fn run(self) -> Result<()> {
        if self.locomo_only {
            print!("{}", eval::locomo::study(&self.locomo)?);
            return Ok(());
        }
        if let Some(path) = &self.key_audit_sample {
            let n = eval::keys::write_sample(path, &self.locomo)?;
            eprintln!("wrote {n} sampled keyed turns to {}", path.display());
            return Ok(());
        }
        if self.keys_only {
            let locomo = (!self.no_locomo).then_some(self.locomo.as_path());
            print!("{}", eval::keys::study(locomo)?);
            return Ok(());
        }
        if self.gate_only {
            let mut tables = String::new();
            eval::speculation::markdown(&mut tables, &eval::speculation::run()?);
            print!("{tables}");
            return Ok(());
        }
        let options = EvalOptions {
            seeds: self.seeds,
            arms: self.arms,
            budgets: self.budgets,
            people: self.people,
            key_noise: !self.no_key_noise,
            studies: !self.no_studies,
            probes: !self.no_probes,
            locomo: (!self.no_locomo).then_some(self.locomo),
            ..EvalOptions::default()
        };
        if self.accounting {
            print!("{}", report::accounting_table(&eval::accounting(&options)));
            return Ok(());
        }
        let done =
            eval::run_and_write(&options, &self.out, &self.results).context("eval run failed")?;
        crate::print(&done.summary, self.json, || done.markdown.clone())?;
        eprintln!(
            "wrote {} in {:.1} s",
            done.written.join(" and "),
            done.elapsed.as_secs_f64()
        );
        Ok(())
    }
}
