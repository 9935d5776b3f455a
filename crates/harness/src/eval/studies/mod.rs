//! The identity, abstention, ablation and slice studies (paper Section 7.3,
//! Appendices D and N; Tables 3, 13 and 22).
//!
//! Each study is a set of *scenarios*: a store built from one corpus (the
//! main instance or a slice of it, under one configuration), a ranker and
//! the serving rules of [`pfm::rules`]. Every scenario's requests are
//! judged with Eq. (1) like the main tables; intervals come from the same
//! two-level bootstrap. Nothing here is timed, so the seeds run in parallel.
//!
//! - [`tables`]: the rows of Tables 3, 13 and 22, with the paper's values.

pub mod tables;

use std::collections::BTreeMap;

use serde::Serialize;

use super::arms::{self, Built};
use super::generator::{Instance, Query};
use super::judge::{Judged, judge};
use super::slices::{self, Case};
use super::{BUDGETS, K};
use pfm::config::{AdmissionParams, ChainOrder, Config, KeyGranularity, ScoreParams};
use pfm::error::Result;
use pfm::rank::{ParticipantTerms, Ranker, Recency};
use pfm::retrieve::{Request, retrieve};
use pfm::rules::{Abstain, Identity, Rules};

/// One judged request of a scenario.
#[derive(Clone, Debug, Serialize)]
pub struct Judgement {
    /// Scenario name (`corpus|ranker|rules`).
    pub scenario: String,
    /// Benchmark seed.
    pub seed: u64,
    /// Query index within the corpus.
    pub query: usize,
    /// Chain index.
    pub chain: usize,
    /// A same-named competitor exists.
    pub ambiguous: bool,
    /// The participant case of the chain (participants slice only).
    pub case: Option<Case>,
    /// The outcome.
    #[serde(flatten)]
    pub judged: Judged,
}

/// Every scenario's judgements, by scenario name, seeds in run order.
pub type Judgements = BTreeMap<String, Vec<Judgement>>;

/// The serving rules of Table 3's rows, in order, with their names.
pub fn rule_rows() -> Vec<(&'static str, Rules)> {
    let r = |identity, abstain| Rules { identity, abstain };
    vec![
        ("none", Rules::NONE),
        ("cutoff@0.7", r(Identity::Cutoff(0.7), Abstain::None)),
        (
            "participant filter",
            r(Identity::ParticipantFilter, Abstain::None),
        ),
        ("posterior", r(Identity::Posterior, Abstain::None)),
        (
            "posterior + slot gate",
            r(Identity::Posterior, Abstain::Slot(SLOT_TAU)),
        ),
        (
            "margin gate",
            r(Identity::None, Abstain::Margin(MARGIN_TAU)),
        ),
        // The schema-free gate (`"abstain": "auto"`, chosen on LoCoMo):
        // not in the paper; here for its cost on the controlled benchmark.
        ("coverage gate (auto)", r(Identity::None, Abstain::Auto)),
        (
            "posterior + coverage gate (auto)",
            r(Identity::Posterior, Abstain::Auto),
        ),
    ]
}

/// The slot gate's posterior threshold τ (the paper's default).
pub const SLOT_TAU: f64 = 0.5;
/// The margin gate's τ for Table 3's row (the middle of the paper's sweep).
pub const MARGIN_TAU: f32 = 2.0;
/// Slot-gate thresholds of the Appendix D sweep.
pub const SLOT_SWEEP: [f64; 3] = [0.3, 0.5, 0.7];
/// Margin-gate thresholds of the Appendix D sweep.
pub const MARGIN_SWEEP: [f32; 4] = [1.5, 2.0, 3.0, 5.0];
/// Relative cutoffs of Table 13.
pub const CUTOFFS: [f32; 3] = [0.5, 0.7, 0.9];

/// Appendix D's threshold sweeps: the slot gate (with the posterior) at
/// each τ of [`SLOT_SWEEP`], the margin gate at each τ of [`MARGIN_SWEEP`].
pub fn sweep_rules() -> Vec<(String, Rules)> {
    let slot = SLOT_SWEEP.iter().map(|tau| {
        let rules = Rules {
            identity: Identity::Posterior,
            abstain: Abstain::Slot(*tau),
        };
        (format!("slot@{tau}"), rules)
    });
    let margin = MARGIN_SWEEP.iter().map(|tau| {
        let rules = Rules {
            identity: Identity::None,
            abstain: Abstain::Margin(*tau),
        };
        (format!("margin@{tau}"), rules)
    });
    slot.chain(margin).collect()
}

/// Table 13's leave-one-out rankers over the keyed main store.
pub fn ranker_ablations() -> Vec<(&'static str, Ranker)> {
    let with = |f: &dyn Fn(&mut Ranker)| {
        let mut r = Ranker::pfm();
        f(&mut r);
        r
    };
    vec![
        ("full", Ranker::pfm()),
        (
            "no participant field",
            with(&|r| r.field_weights = Some([1.0, 2.5, 0.0])),
        ),
        (
            "no participant terms",
            with(&|r| r.participant_terms = ParticipantTerms::Off),
        ),
        (
            "no participant seeds",
            with(&|r| r.participant_seeds = false),
        ),
        (
            "no participants at all",
            with(&|r| {
                r.field_weights = Some([1.0, 2.5, 0.0]);
                r.participant_terms = ParticipantTerms::Off;
                r.participant_seeds = false;
            }),
        ),
        (
            "no entity field",
            with(&|r| r.field_weights = Some([1.0, 0.0, 2.0])),
        ),
        ("no graph", with(&|r| r.graph = false)),
        ("no usage", with(&|r| r.usage = false)),
        ("no recency", with(&|r| r.recency = false)),
        ("no positional decay", with(&|r| r.positional_decay = false)),
        ("no term cap", with(&|r| r.term_cap = false)),
    ]
}

/// Table 13's rows that change the store rather than the ranker.
pub fn store_ablations() -> Vec<(&'static str, Config)> {
    let keyed = Config::default();
    vec![
        (
            "no usage inheritance",
            Config {
                admission: AdmissionParams {
                    usage_inheritance: false,
                    ..AdmissionParams::default()
                },
                ..keyed.clone()
            },
        ),
        (
            // Absorb only drafts whose content tokens are the same set: the
            // near-duplicate (Jaccard 0.8) rule off, exact duplicates kept.
            "text only dedup",
            Config {
                admission: AdmissionParams {
                    jaccard: 1.0,
                    ..AdmissionParams::default()
                },
                ..keyed.clone()
            },
        ),
        (
            // As in the paper, time is then all that tells a newer value
            // from an older one: its recency.
            "no keys",
            Config {
                use_keys: false,
                score: ScoreParams {
                    recency: Recency::Fixed,
                    ..ScoreParams::default()
                },
                ..keyed
            },
        ),
    ]
}

/// The scenario name of a corpus, ranker and rule set.
pub fn scenario(corpus: &str, ranker: &str, rules: &str) -> String {
    format!("{corpus}|{ranker}|{rules}")
}

/// Runs every study on every seed.
pub fn run(seeds: &[u64], people: usize, progress: &indicatif::ProgressBar) -> Result<Judgements> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = seeds.len().div_ceil(threads).max(1);
    let results: Vec<Result<Judgements>> = std::thread::scope(|scope| {
        let handles: Vec<_> = seeds
            .chunks(chunk)
            .map(|seeds| {
                scope.spawn(move || {
                    let mut out = Judgements::new();
                    for &seed in seeds {
                        for (name, js) in seed_studies(seed, people)? {
                            out.entry(name).or_default().extend(js);
                        }
                        progress.inc(1);
                    }
                    Ok(out)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a study worker does not panic"))
            .collect()
    });
    let mut all = Judgements::new();
    for r in results {
        for (name, js) in r? {
            all.entry(name).or_default().extend(js);
        }
    }
    for js in all.values_mut() {
        js.sort_by_key(|j| (seeds.iter().position(|s| *s == j.seed), j.query));
    }
    Ok(all)
}

/// Every scenario of one seed.
fn seed_studies(seed: u64, people: usize) -> Result<Vec<(String, Vec<Judgement>)>> {
    let main = Instance::generate_with(seed, people);
    let keyed = Config::default();
    let mut out = Vec::new();
    let mut add = |corpus: &str,
                   instance: &Instance,
                   built: &Built,
                   ranker: (&str, &Ranker),
                   rules: (&str, Rules),
                   cases: Option<&[Case]>| {
        let js = judge_all(instance, built, ranker.1, rules.1, cases)?;
        let name = scenario(corpus, ranker.0, rules.0);
        out.push((
            name.clone(),
            js.into_iter()
                .map(|mut j| {
                    j.seed = seed;
                    j.scenario = name.clone();
                    j
                })
                .collect(),
        ));
        Result::Ok(())
    };
    let pfm = Ranker::pfm();
    let none = ("none", Rules::NONE);

    // The main corpus: Table 3's rules, the gate sweeps, Table 13.
    let store = arms::build_with(&main, keyed.clone(), None)?;
    for rules in rule_rows() {
        add("main", &main, &store, ("pfm", &pfm), rules, None)?;
    }
    for (name, rules) in sweep_rules() {
        add("main", &main, &store, ("pfm", &pfm), (&name, rules), None)?;
    }
    for (name, ranker) in ranker_ablations().iter().skip(1) {
        add("main", &main, &store, (name, ranker), none, None)?;
    }
    let bm25 = Ranker::named("bm25_validity_p")?;
    let filter = Rules {
        identity: Identity::ParticipantFilter,
        abstain: Abstain::None,
    };
    add(
        "main",
        &main,
        &store,
        ("bm25_validity_p", &bm25),
        ("participant filter", filter),
        None,
    )?;
    for x in CUTOFFS {
        let name = format!("cutoff@{x}");
        if rule_rows().iter().all(|(n, _)| *n != name) {
            let rules = Rules {
                identity: Identity::Cutoff(x),
                abstain: Abstain::None,
            };
            add("main", &main, &store, ("pfm", &pfm), (&name, rules), None)?;
        }
    }
    for (name, config) in store_ablations() {
        let built = arms::build_with(&main, config, None)?;
        add(name, &main, &built, ("pfm", &pfm), none, None)?;
    }

    // Out-of-order arrival under both orderings.
    let (late, _) = slices::out_of_order(&main);
    for (corpus, ordering) in [
        ("out of order", ChainOrder::Arrival),
        ("out of order, event time", ChainOrder::EventTime),
    ] {
        let config = Config {
            ordering,
            ..keyed.clone()
        };
        let built = arms::build_with(&late, config, None)?;
        add(corpus, &late, &built, ("pfm", &pfm), none, None)?;
    }

    // Participant cases: every rule of Table 3.
    let (told, cases) = slices::participant_cases(&main);
    let built = arms::build_with(&told, keyed.clone(), None)?;
    for rules in rule_rows() {
        add(
            "participants",
            &told,
            &built,
            ("pfm", &pfm),
            rules,
            Some(&cases),
        )?;
    }

    // Hard identity: every rule of Table 3 (and Table 22's three).
    let hard = slices::hard_identity(seed);
    let built = arms::build_with(&hard, keyed.clone(), None)?;
    for rules in rule_rows() {
        add("hard", &hard, &built, ("pfm", &pfm), rules, None)?;
    }
    for (name, rules) in sweep_rules() {
        add("hard", &hard, &built, ("pfm", &pfm), (&name, rules), None)?;
    }

    // Two instances of one slot type, under three key granularities.
    let multi = slices::multi_valued(seed);
    for (corpus, config) in [
        ("multi, key (entity, slot)", keyed.clone()),
        (
            "multi, key (entity, slot, noun)",
            Config {
                key_granularity: KeyGranularity::EntitySlotNoun,
                ..keyed.clone()
            },
        ),
        (
            "multi, keyless",
            Config {
                use_keys: false,
                ..keyed
            },
        ),
    ] {
        let built = arms::build_with(&multi, config, None)?;
        add(corpus, &multi, &built, ("pfm", &pfm), none, None)?;
    }
    Ok(out)
}

/// Judges every query of `instance` against `built` (k = 6, B = 800), the
/// paper's margin gate as the paper ran it ([`super::as_the_paper_gates`]).
fn judge_all(
    instance: &Instance,
    built: &Built,
    ranker: &Ranker,
    rules: Rules,
    cases: Option<&[Case]>,
) -> Result<Vec<Judgement>> {
    let version = built.memory.version();
    instance
        .queries
        .iter()
        .enumerate()
        .map(|(i, q): (usize, &Query)| {
            let request = Request::new(q.context.clone(), instance.query_time)
                .with_participants([q.participant.clone()])
                .with_k(K)
                .with_budget(BUDGETS[0])
                .with_ranker(ranker.clone())
                .with_rules(rules);
            let request = super::as_the_paper_gates(request, rules.abstain);
            let block = retrieve(&version, &request)?;
            Ok(Judgement {
                scenario: String::new(),
                seed: instance.seed,
                query: i,
                chain: q.chain,
                ambiguous: q.ambiguous(),
                case: cases.map(|c| c[q.chain]),
                judged: judge(&block, &q.labels),
            })
        })
        .collect()
}
