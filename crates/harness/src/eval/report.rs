//! Summaries of an [`Evaluation`] and their outputs: the `--json` object,
//! `eval/RESULTS.md` (ours beside the paper's in every cell), and a run
//! folder with markdown and per-query JSONL logs.
//!
//! Rates over answerable requests use Eq. (1)'s answerable case; requests
//! whose store holds no answer are counted and judged separately (the main
//! benchmark has none; the slices of the identity issue add them).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

pub use super::cells::Rate;
use super::stats::{self, Clusters, Tost, mean_sd};
use super::studies::Judgement;
use super::studies::tables::{self, Studies};
use super::{Accounting, Evaluation, Judged, NoiseRecord, Record, noise, paper};
pub use crate::run::RunMeta;

use super::cells::{RNG_SEED, cell, ci, f3, rate_of};

/// Deadlines (ms) at which clean-by-deadline Y(D) is reported.
pub const DEADLINES_MS: [f64; 6] = [0.05, 0.1, 0.2, 0.5, 1.0, 10.0];
/// Equivalence margin on clean retrieval (Section 6, fixed in advance).
pub const MARGIN: f64 = 0.02;
/// Permutation-test and TOST replicates.
const TEST_REPS: usize = 10_000;
/// One arm at one budget.
#[derive(Clone, Debug, Serialize)]
pub struct ArmSummary {
    /// Arm name.
    pub arm: String,
    /// Character budget.
    pub budget: usize,
    /// Answerable requests.
    pub queries: usize,
    /// Current-value recall C.
    pub current: f64,
    /// Stale exposure.
    pub stale: f64,
    /// Wrong-person exposure (misattribution).
    pub wrong: f64,
    /// Current and stale together.
    pub coinjection: f64,
    /// Clean retrieval Y.
    pub clean: f64,
    /// Abstention (empty block).
    pub abstained: f64,
    /// 95% interval of clean.
    pub clean_ci: (f64, f64),
    /// 95% intervals of current, stale, wrong, co-injection.
    pub current_ci: (f64, f64),
    /// See `current_ci`.
    pub stale_ci: (f64, f64),
    /// See `current_ci`.
    pub wrong_ci: (f64, f64),
    /// See `current_ci`.
    pub coinjection_ci: (f64, f64),
    /// Ambiguous requests, and wrong-person exposure among them.
    pub ambiguous: usize,
    /// Wrong-person exposures on ambiguous requests.
    pub ambiguous_wrong: usize,
    /// Wrong-person exposures in total.
    pub wrong_count: usize,
    /// Stale exposures in total.
    pub stale_count: usize,
    /// Unanswerable requests, and the share judged clean (abstained or free
    /// of relevant facts).
    pub unanswerable: usize,
    /// Clean share of unanswerable requests (`None` without any).
    pub unanswerable_clean: Option<f64>,
    /// Median measured retrieval time (all seeds), ms.
    pub p50_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// Clean by deadline: (D in ms, Y(D)).
    pub clean_by_deadline: Vec<(f64, f64)>,
}

/// The TOST comparison of Section 7.1.
#[derive(Clone, Debug, Serialize)]
pub struct TostSummary {
    /// First arm (difference = a − b).
    pub a: String,
    /// Second arm.
    pub b: String,
    /// Paired difference in clean retrieval.
    pub diff: f64,
    /// Its 90% interval.
    pub ci90: (f64, f64),
    /// TOST p-value against ±`margin`.
    pub p: f64,
    /// The margin.
    pub margin: f64,
    /// Whether the 90% interval lies inside the margin.
    pub equivalent: bool,
    /// Paired chain-level permutation test of a difference.
    pub permutation_p: f64,
}

/// One cell of the key-noise grid.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct NoiseSummary {
    /// Missed-merge rate.
    pub p: f64,
    /// False-merge rate.
    pub q: f64,
    /// Clean retrieval.
    pub clean: f64,
    /// Stale exposure.
    pub stale: f64,
    /// Current value held by no active fact.
    pub current_lost: f64,
}

/// Clean retrieval by revision depth for one arm (B = 800).
#[derive(Clone, Debug, Serialize)]
pub struct DepthRow {
    /// Arm.
    pub arm: String,
    /// Clean at d = 0..4 (`None` where no query has that depth).
    pub by_depth: [Option<f64>; 5],
    /// Requests at each depth.
    pub counts: [usize; 5],
    /// Under the benchmark's own mix.
    pub mix: f64,
    /// Reweighted to a store where 70% of facts are never revised.
    pub reweighted: f64,
}

/// Clean retrieval per seed for one arm (B = 800).
#[derive(Clone, Debug, Serialize)]
pub struct SeedRow {
    /// Arm.
    pub arm: String,
    /// (seed, clean).
    pub clean: Vec<(u64, f64)>,
    /// Mean over seeds.
    pub mean: f64,
    /// Sample standard deviation over seeds.
    pub sd: f64,
}

/// Everything the reports print.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Requests per arm and budget (all seeds).
    pub queries: usize,
    /// Seeds.
    pub seeds: Vec<u64>,
    /// Per arm and budget.
    pub arms: Vec<ArmSummary>,
    /// PFM vs BM25 + validity + P_t, when both ran.
    pub tost: Option<TostSummary>,
    /// The key-noise grid.
    pub key_noise: Vec<NoiseSummary>,
    /// Table 14.
    pub depth: Vec<DepthRow>,
    /// Table 15.
    pub per_seed: Vec<SeedRow>,
    /// Table 6.
    pub accounting: Vec<Accounting>,
    /// Tables 3, 13, 22 and the gate sweeps, when the studies ran.
    pub studies: Option<Studies>,
    /// The P-Mem probes, when they ran.
    pub probes: Option<super::provenance::Probes>,
    /// The speculation-gate study, when it ran.
    pub gate: Option<Vec<super::speculation::Row>>,
    /// Bootstrap replicates behind each interval.
    pub bootstrap_reps: usize,
    /// Wall time of the run, seconds.
    pub elapsed_s: f64,
}

/// Key of a request across arms.
type QueryKey = (u64, usize);

/// Summarizes an evaluation.
pub fn summarize(eval: &Evaluation) -> Summary {
    let reps = eval.options.bootstrap_reps;
    let mut groups: Vec<((String, usize), Vec<&Record>)> = Vec::new();
    for arm in &eval.options.arms {
        for &budget in &eval.options.budgets {
            let rs: Vec<&Record> = eval
                .records
                .iter()
                .filter(|r| &r.arm == arm && r.budget == budget)
                .collect();
            groups.push(((arm.clone(), budget), rs));
        }
    }
    let arms = groups
        .iter()
        .map(|((arm, budget), rs)| arm_summary(arm, *budget, rs, reps))
        .collect();
    let at800 = |arm: &str| -> Vec<&Record> {
        groups
            .iter()
            .find(|((a, b), _)| a == arm && *b == 800)
            .map(|(_, rs)| rs.clone())
            .unwrap_or_default()
    };
    let tost = paired(&at800("pfm"), &at800("bm25_validity_p")).map(|diffs| {
        let t: Tost = diffs.tost(MARGIN, TEST_REPS, RNG_SEED);
        TostSummary {
            a: "pfm".into(),
            b: "bm25_validity_p".into(),
            diff: t.diff,
            ci90: t.ci90,
            p: t.p,
            margin: t.margin,
            equivalent: t.equivalent,
            permutation_p: diffs.permutation_p(TEST_REPS, RNG_SEED),
        }
    });
    let depth = paper::TABLE14
        .iter()
        .map(|(arm, _)| *arm)
        .filter_map(|arm| depth_row(arm, &at800(arm)))
        .collect();
    let per_seed = paper::TABLE15
        .iter()
        .map(|(arm, _)| *arm)
        .filter_map(|arm| seed_row(arm, &at800(arm), &eval.options.seeds))
        .collect();
    Summary {
        queries: eval
            .records
            .iter()
            .filter(|r| {
                Some(&r.arm) == eval.options.arms.first()
                    && Some(&r.budget) == eval.options.budgets.first()
            })
            .count(),
        seeds: eval.options.seeds.clone(),
        arms,
        tost,
        key_noise: noise_summary(&eval.noise),
        depth,
        per_seed,
        accounting: eval.accounting.clone(),
        studies: (!eval.studies.is_empty()).then(|| tables::summarize(&eval.studies, reps)),
        probes: eval.probes.clone(),
        gate: eval.gate.clone(),
        bootstrap_reps: reps,
        elapsed_s: eval.elapsed.as_secs_f64(),
    }
}

fn rate(rs: &[&Record], reps: usize, f: impl Fn(&Judged) -> bool) -> Rate {
    rate_of(rs.iter().map(|r| (r.seed, r.chain, f(&r.judged))), reps)
}

fn share(rs: &[&Record], f: impl Fn(&Record) -> bool) -> f64 {
    if rs.is_empty() {
        0.0
    } else {
        rs.iter().filter(|r| f(r)).count() as f64 / rs.len() as f64
    }
}

fn arm_summary(arm: &str, budget: usize, all: &[&Record], reps: usize) -> ArmSummary {
    let rs: Vec<&Record> = all
        .iter()
        .copied()
        .filter(|r| r.judged.answerable)
        .collect();
    let unanswerable: Vec<&Record> = all
        .iter()
        .copied()
        .filter(|r| !r.judged.answerable)
        .collect();
    let current = rate(&rs, reps, |j| j.current);
    let stale = rate(&rs, reps, |j| j.stale);
    let wrong = rate(&rs, reps, |j| j.wrong);
    let coinjection = rate(&rs, reps, Judged::coinjection);
    let clean = rate(&rs, reps, |j| j.clean);
    let mut latencies: Vec<f64> = all.iter().map(|r| r.latency_us / 1e3).collect();
    latencies.sort_by(f64::total_cmp);
    ArmSummary {
        arm: arm.to_owned(),
        budget,
        queries: rs.len(),
        current: current.value,
        stale: stale.value,
        wrong: wrong.value,
        coinjection: coinjection.value,
        clean: clean.value,
        abstained: share(&rs, |r| r.judged.abstained),
        clean_ci: clean.ci,
        current_ci: current.ci,
        stale_ci: stale.ci,
        wrong_ci: wrong.ci,
        coinjection_ci: coinjection.ci,
        ambiguous: rs.iter().filter(|r| r.ambiguous).count(),
        ambiguous_wrong: rs.iter().filter(|r| r.ambiguous && r.judged.wrong).count(),
        wrong_count: rs.iter().filter(|r| r.judged.wrong).count(),
        stale_count: rs.iter().filter(|r| r.judged.stale).count(),
        unanswerable: unanswerable.len(),
        unanswerable_clean: (!unanswerable.is_empty())
            .then(|| share(&unanswerable, |r| r.judged.clean)),
        p50_ms: stats::quantile(&latencies, 0.5),
        p99_ms: stats::quantile(&latencies, 0.99),
        clean_by_deadline: DEADLINES_MS
            .iter()
            .map(|d| {
                (
                    *d,
                    share(all, |r| r.judged.clean && r.latency_us / 1e3 <= *d),
                )
            })
            .collect(),
    }
}

/// Per-query differences in clean retrieval, a − b, paired by request.
fn paired(a: &[&Record], b: &[&Record]) -> Option<Clusters> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let of_b: HashMap<QueryKey, &Record> = b.iter().map(|r| ((r.seed, r.query), *r)).collect();
    let diffs = a.iter().filter_map(|r| {
        let other = of_b.get(&(r.seed, r.query))?;
        let y = |r: &Record| f64::from(u8::from(r.judged.clean));
        Some((r.seed, r.chain, y(r) - y(other)))
    });
    Some(Clusters::new(diffs))
}

fn depth_row(arm: &str, rs: &[&Record]) -> Option<DepthRow> {
    if rs.is_empty() {
        return None;
    }
    let mut counts = [0usize; 5];
    let mut clean = [0usize; 5];
    for r in rs.iter().filter(|r| r.judged.answerable) {
        let d = r.depth.min(4);
        counts[d] += 1;
        clean[d] += usize::from(r.judged.clean);
    }
    let by_depth: [Option<f64>; 5] =
        std::array::from_fn(|d| (counts[d] > 0).then(|| clean[d] as f64 / counts[d] as f64));
    let total: usize = counts.iter().sum();
    Some(DepthRow {
        arm: arm.to_owned(),
        by_depth,
        counts,
        mix: clean.iter().sum::<usize>() as f64 / total.max(1) as f64,
        reweighted: (0..5)
            .map(|d| paper::REWEIGHT[d] * by_depth[d].unwrap_or(0.0))
            .sum(),
    })
}

fn seed_row(arm: &str, rs: &[&Record], seeds: &[u64]) -> Option<SeedRow> {
    if rs.is_empty() {
        return None;
    }
    let clean: Vec<(u64, f64)> = seeds
        .iter()
        .map(|s| {
            let of_seed: Vec<&Record> = rs
                .iter()
                .copied()
                .filter(|r| r.seed == *s && r.judged.answerable)
                .collect();
            (*s, share(&of_seed, |r| r.judged.clean))
        })
        .collect();
    let (mean, sd) = mean_sd(&clean.iter().map(|c| c.1).collect::<Vec<_>>());
    Some(SeedRow {
        arm: arm.to_owned(),
        clean,
        mean,
        sd,
    })
}

fn noise_summary(records: &[NoiseRecord]) -> Vec<NoiseSummary> {
    let mut out = Vec::new();
    for p in noise::MISSED {
        for q in noise::FALSE {
            let cell: Vec<&NoiseRecord> = records.iter().filter(|r| r.p == p && r.q == q).collect();
            if cell.is_empty() {
                continue;
            }
            let n = cell.len() as f64;
            let count =
                |f: &dyn Fn(&NoiseRecord) -> bool| cell.iter().filter(|r| f(r)).count() as f64 / n;
            out.push(NoiseSummary {
                p,
                q,
                clean: count(&|r| r.judged.clean),
                stale: count(&|r| r.judged.stale),
                current_lost: count(&|r| r.lost),
            });
        }
    }
    out
}

/// `= 0.038`, or `< 0.001` below what the replicates resolve.
fn p_value(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else {
        format!("= {p:.3}")
    }
}

fn find<'a>(summary: &'a Summary, arm: &str, budget: usize) -> Option<&'a ArmSummary> {
    summary
        .arms
        .iter()
        .find(|a| a.arm == arm && a.budget == budget)
}

/// `eval/RESULTS.md`: every table with the paper's value beside ours.
pub fn markdown(summary: &Summary, meta: &RunMeta) -> String {
    let mut md = String::new();
    let w = &mut md;
    let _ = writeln!(w, "# `pfm eval`: the controlled revision benchmark\n");
    let _ = writeln!(
        w,
        "Regenerated by `{}` at {} (revision {}) on {}; {:.1} s wall.\n",
        meta.command, meta.date, meta.revision, meta.machine, summary.elapsed_s
    );
    let _ = writeln!(
        w,
        "Each cell is **ours (95% interval) · paper**; ✱ marks a paper value outside our interval. \
         Intervals are two-level (seed, chain) bootstrap percentile intervals ({} replicates), or \
         Wilson intervals over chains where the observed rate is 0 or 1. {} answerable requests per \
         arm and budget over seeds {:?}; k = 6. Latencies are the whole `retrieve` call on this \
         machine over all seeds (the paper's are CPython on an Apple M2, seed 7). Arm names are \
         those of `pfm eval --arms` (see `crates/harness/src/eval/arms.rs`).\n",
        summary.bootstrap_reps, summary.queries, summary.seeds
    );

    table6(w, summary);
    table1(w, summary);
    table2(w, summary);
    table12(w, summary);
    table14(w, summary);
    table15(w, summary);
    table16(w, summary);
    deadline(w, summary);
    if let Some(studies) = &summary.studies {
        tables::markdown(w, studies);
    }
    if let Some(probes) = &summary.probes {
        super::provenance::markdown(w, probes);
    }
    if let Some(gate) = &summary.gate {
        super::speculation::markdown(w, gate);
    }
    md
}

fn table6(w: &mut String, s: &Summary) {
    let _ = writeln!(
        w,
        "## Table 6 — benchmark accounting per seed (ours · paper)\n"
    );
    w.push_str(&accounting_table(&s.accounting));
    let _ = writeln!(w);
}

/// Table 6 as markdown, the paper's count beside ours for its seeds.
pub fn accounting_table(accounting: &[Accounting]) -> String {
    let mut w = String::from(
        "| Seed | Msgs | Queries | Amb. chains | Amb. | Rev. | Canc. | Verb. | Para. | d=0 | d=1 | d=2 | d=3 | d=4 |\n",
    );
    w.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for a in accounting {
        let paper = paper::TABLE6.iter().find(|r| r[0] as u64 == a.seed);
        let cells: Vec<String> = a
            .columns()
            .iter()
            .enumerate()
            .map(|(i, v)| match paper {
                Some(p) => format!("{v} · {}", p[i + 1]),
                None => v.to_string(),
            })
            .collect();
        let _ = writeln!(w, "| s{} | {} |", a.seed, cells.join(" | "));
    }
    w
}

fn table1(w: &mut String, s: &Summary) {
    let _ = writeln!(
        w,
        "## Table 1 — prompt-level effects of keyed supersession\n"
    );
    let _ = writeln!(
        w,
        "| Store | B | Current ↑ | Stale ↓ | Wrong-person ↓ | Co-injection ↓ | Clean ↑ |"
    );
    let _ = writeln!(w, "|---|---|---|---|---|---|---|");
    for (arm, budget, p) in &paper::TABLE1 {
        let Some(a) = find(s, arm, *budget) else {
            continue;
        };
        let ours = [
            (a.current, a.current_ci),
            (a.stale, a.stale_ci),
            (a.wrong, a.wrong_ci),
            (a.coinjection, a.coinjection_ci),
            (a.clean, a.clean_ci),
        ];
        let cells: Vec<String> = ours
            .iter()
            .zip(p)
            .map(|((v, c), (pv, _))| cell(*v, Some(*c), Some(*pv)))
            .collect();
        let store = if *arm == "pfm" { "Keyed" } else { "Keyless" };
        let _ = writeln!(w, "| {store} | {budget} | {} |", cells.join(" | "));
    }
    if let Some(a) = find(s, "pfm", 800) {
        let _ = writeln!(
            w,
            "\nKeyed stale exposures: {} of {} requests. Wrong-person exposures: {}, of which {} on the {} ambiguous requests.",
            a.stale_count, a.queries, a.wrong_count, a.ambiguous_wrong, a.ambiguous
        );
    }
    let _ = writeln!(w);
}

fn table2(w: &mut String, s: &Summary) {
    let _ = writeln!(
        w,
        "## Table 2 — retrieval arms, same stores and selection (B = 800)\n"
    );
    let _ = writeln!(
        w,
        "| Method | Current ↑ | Stale ↓ | Wrong-person ↓ | Clean ↑ | p50 (ms) | p99 (ms) |"
    );
    let _ = writeln!(w, "|---|---|---|---|---|---|---|");
    for name in paper::TABLE2 {
        arm_row(w, s, name, false);
    }
    if let Some(t) = &s.tost {
        let (pd, pci, pp, pperm) = paper::TOST;
        let _ = writeln!(
            w,
            "\nTOST, clean retrieval of `{}` − `{}` (paired by request): difference {} (90% interval {}) · paper {} {}; \
             p_TOST {} · paper {pp:.3} against ±{}: **{}**. Paired chain-level permutation test p {} · paper {pperm:.2}.",
            t.a,
            t.b,
            f3(t.diff),
            ci(t.ci90),
            f3(pd),
            ci(pci),
            p_value(t.p),
            t.margin,
            if t.equivalent {
                "equivalent within the margin"
            } else {
                "equivalence not shown"
            },
            p_value(t.permutation_p)
        );
    }
    let _ = writeln!(w);
}

fn arm_row(w: &mut String, s: &Summary, name: &str, wide: bool) {
    let Some(p) = paper::TABLE12.iter().find(|r| r.arm == name) else {
        return;
    };
    match find(s, name, 800) {
        Some(a) => {
            let cells = [
                cell(a.current, None, Some(p.current)),
                cell(a.stale, None, Some(p.stale)),
                cell(a.wrong, None, Some(p.wrong)),
                cell(a.clean, Some(a.clean_ci), Some(p.clean.0)),
                format!("{:.3} · {}", a.p50_ms, p.p50_ms),
                format!("{:.3} · {}", a.p99_ms, p.p99_ms),
            ];
            let cells = if wide {
                [
                    &cells[3], &cells[0], &cells[1], &cells[2], &cells[4], &cells[5],
                ]
                .map(String::as_str)
                .join(" | ")
            } else {
                cells.join(" | ")
            };
            let _ = writeln!(w, "| {} (`{name}`) | {cells} |", p.label);
        }
        None => {
            let why = "not run (not in --arms)";
            let _ = writeln!(
                w,
                "| {} (`{name}`) | {why} · paper clean {} | | | | | |",
                p.label,
                f3(p.clean.0)
            );
        }
    }
}

fn table12(w: &mut String, s: &Summary) {
    let _ = writeln!(w, "## Table 12 — all retrieval arms (B = 800)\n");
    let _ = writeln!(
        w,
        "| Method | Clean ↑ | Current ↑ | Stale ↓ | Wrong ↓ | p50 (ms) | p99 (ms) |"
    );
    let _ = writeln!(w, "|---|---|---|---|---|---|---|");
    for r in &paper::TABLE12 {
        arm_row(w, s, r.arm, true);
    }
    let _ = writeln!(w);
}

fn opt(v: Option<f64>) -> String {
    v.map_or("–".into(), f3)
}

fn table14(w: &mut String, s: &Summary) {
    let _ = writeln!(
        w,
        "## Table 14 — clean retrieval by revision depth d (B = 800)\n"
    );
    let _ = writeln!(
        w,
        "| Method | d=0 | d=1 | d=2 | d=3 | d=4 | Benchmark mix | Reweighted |"
    );
    let _ = writeln!(w, "|---|---|---|---|---|---|---|---|");
    for (arm, p) in &paper::TABLE14 {
        let Some(r) = s.depth.iter().find(|r| r.arm == *arm) else {
            let _ = writeln!(w, "| `{arm}` | not run | | | | | | |");
            continue;
        };
        let mut cells: Vec<String> = (0..5)
            .map(|d| format!("{} · {} (n={})", opt(r.by_depth[d]), f3(p[d]), r.counts[d]))
            .collect();
        cells.push(format!("{} · {}", f3(r.mix), f3(p[5])));
        cells.push(format!("{} · {}", f3(r.reweighted), f3(p[6])));
        let _ = writeln!(w, "| `{arm}` | {} |", cells.join(" | "));
    }
    let _ = writeln!(
        w,
        "\nReweighting uses depth weights {:?} (70% of facts never revised).\n",
        paper::REWEIGHT
    );
}

fn table15(w: &mut String, s: &Summary) {
    let _ = writeln!(
        w,
        "## Table 15 — clean retrieval per benchmark seed (B = 800)\n"
    );
    let header: Vec<String> = s.seeds.iter().map(|x| format!("seed {x}")).collect();
    let _ = writeln!(w, "| Method | {} | Mean ± sd |", header.join(" | "));
    let _ = writeln!(w, "|---|{}---|", "---|".repeat(s.seeds.len()));
    for (arm, p) in &paper::TABLE15 {
        let Some(r) = s.per_seed.iter().find(|r| r.arm == *arm) else {
            let _ = writeln!(w, "| `{arm}` | not run{} |", " |".repeat(s.seeds.len()));
            continue;
        };
        let cells: Vec<String> = r
            .clean
            .iter()
            .map(
                |(seed, v)| match paper::SEED_COLUMNS.iter().position(|x| x == seed) {
                    Some(i) => format!("{} · {}", f3(*v), f3(p[i])),
                    None => f3(*v),
                },
            )
            .collect();
        let _ = writeln!(
            w,
            "| `{arm}` | {} | {} ± {} · {} ± {} |",
            cells.join(" | "),
            f3(r.mean),
            f3(r.sd),
            f3(p[5]),
            f3(p[6])
        );
    }
    let _ = writeln!(w);
}

fn table16(w: &mut String, s: &Summary) {
    if s.key_noise.is_empty() {
        return;
    }
    let _ = writeln!(
        w,
        "## Table 16 — key-noise grid: clean / stale / current lost (keyed PFM, B = 800)\n"
    );
    let _ = writeln!(
        w,
        "Each cell: ours, then the paper's on the next line of the cell.\n"
    );
    let head: Vec<String> = noise::FALSE.iter().map(|q| format!("q = {q}")).collect();
    let _ = writeln!(w, "| p \\ q | {} |", head.join(" | "));
    let _ = writeln!(w, "|---|{}", "---|".repeat(noise::FALSE.len()));
    for (i, p) in noise::MISSED.iter().enumerate() {
        let cells: Vec<String> = noise::FALSE
            .iter()
            .enumerate()
            .map(|(j, q)| {
                let ours = s.key_noise.iter().find(|c| c.p == *p && c.q == *q);
                let (pc, ps, pl) = paper::TABLE16[i][j];
                match ours {
                    Some(c) => format!(
                        "{} / {} / {}<br>paper {} / {} / {}",
                        f3(c.clean),
                        f3(c.stale),
                        f3(c.current_lost),
                        f3(pc),
                        f3(ps),
                        f3(pl)
                    ),
                    None => "–".into(),
                }
            })
            .collect();
        let _ = writeln!(w, "| {p} | {} |", cells.join(" | "));
    }
    let _ = writeln!(w);
}

fn deadline(w: &mut String, s: &Summary) {
    let _ = writeln!(
        w,
        "## Figure 2 analogue — clean retrieval by deadline Y(D), fresh retrieval (B = 800)\n"
    );
    let head: Vec<String> = DEADLINES_MS.iter().map(|d| format!("D = {d} ms")).collect();
    let _ = writeln!(w, "| Arm | {} |", head.join(" | "));
    let _ = writeln!(w, "|---|{}", "---|".repeat(DEADLINES_MS.len()));
    for a in s.arms.iter().filter(|a| a.budget == 800) {
        let cells: Vec<String> = a.clean_by_deadline.iter().map(|(_, y)| f3(*y)).collect();
        let _ = writeln!(w, "| `{}` | {} |", a.arm, cells.join(" | "));
    }
    let _ = writeln!(
        w,
        "\nUnanswerable requests (Eq. 1's second case) in this run: {}; the identity and abstention slices add them.",
        s.arms.first().map_or(0, |a| a.unanswerable)
    );
}

/// Writes the run folder: `results.md`, `summary.json`, `queries.jsonl`,
/// `noise.jsonl`, `studies.jsonl`.
pub fn write_run(
    dir: &Path,
    eval: &Evaluation,
    summary: &Summary,
    meta: &RunMeta,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("results.md"), markdown(summary, meta))?;
    let json = serde_json::to_string_pretty(&(meta, summary)).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("summary.json"), json)?;
    jsonl(&dir.join("queries.jsonl"), &eval.records)?;
    jsonl(&dir.join("noise.jsonl"), &eval.noise)?;
    let studies: Vec<&Judgement> = eval.studies.values().flatten().collect();
    jsonl(&dir.join("studies.jsonl"), &studies)
}

fn jsonl<T: Serialize>(path: &Path, rows: &[T]) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    for r in rows {
        serde_json::to_writer(&mut out, r).map_err(std::io::Error::other)?;
        std::io::Write::write_all(&mut out, b"\n")?;
    }
    std::io::Write::flush(&mut out)
}
