//! The controlled benchmark: the generator's labels are consistent, its
//! templates key as intended, key noise does what it says, and keyed
//! supersession never exposes a stale value.

use std::collections::HashMap;

use pfm::fact::name_key;
use pfm::text;
use pfm_harness::eval::arms::{self, StoreKind};
use pfm_harness::eval::generator::{CHAINS, Instance, Subject};
use pfm_harness::eval::{EvalOptions, noise, report, slices};

fn tokens_of(s: &str) -> Vec<String> {
    text::normalized_tokens(s)
}

/// Every current value occurs in exactly one chain — in its last message and
/// in no other message of the instance — and every superseded value occurs
/// only in its own chain's messages.
#[test]
fn labels_are_consistent() {
    for seed in pfm_harness::eval::SEEDS {
        let instance = Instance::generate(seed);
        assert_eq!(instance.chains.len(), CHAINS);
        let messages: Vec<Vec<String>> = instance
            .messages
            .iter()
            .map(|m| tokens_of(&m.text))
            .collect();
        let holders = |label: &Vec<String>| -> Vec<usize> {
            (0..messages.len())
                .filter(|i| text::contains_tokens(&messages[*i], label))
                .collect()
        };
        let mut currents = HashMap::new();
        for q in &instance.queries {
            let chain = &instance.chains[q.chain];
            let current = q
                .labels
                .current
                .as_ref()
                .expect("main-benchmark queries are answerable");
            assert_eq!(
                holders(current),
                [*chain.messages.last().unwrap()],
                "seed {seed} chain {}: current value {current:?}",
                chain.id
            );
            if let Some(other) = currents.insert(current.clone(), chain.id) {
                assert_eq!(
                    other, chain.id,
                    "seed {seed}: a current value in two chains"
                );
            }
            for s in &q.labels.superseded {
                let found = holders(s);
                assert!(
                    !found.is_empty(),
                    "seed {seed}: superseded value {s:?} stated nowhere"
                );
                assert!(
                    found.iter().all(|m| chain.messages.contains(m)),
                    "seed {seed} chain {}: superseded value {s:?} outside its chain",
                    chain.id
                );
            }
            // Competitors are other people with the same first name, on the same slot.
            let Subject::Person(p) = chain.subject else {
                assert!(q.labels.other.is_empty());
                continue;
            };
            assert!(q.context.contains(&instance.people[p].first));
            assert!(
                !q.context.contains(&instance.people[p].full),
                "queries use first names"
            );
        }
        let a = instance.accounting();
        assert_eq!((a.queries, a.paraphrased), (240, 80));
        assert_eq!(a.depth.iter().sum::<usize>(), 240);
        assert!(
            a.ambiguous > 0 && a.cancelled > 0 && a.verbatim > 0,
            "{a:?}"
        );
        // Chains 0-11: six pairs sharing a first name, each pair on one slot.
        for pair in 0..6 {
            let (x, y) = (&instance.chains[2 * pair], &instance.chains[2 * pair + 1]);
            let (Subject::Person(a), Subject::Person(b)) = (x.subject, y.subject) else {
                panic!("chains 0-11 are on people");
            };
            assert_eq!(x.slot, y.slot);
            assert_eq!(instance.people[a].first, instance.people[b].first);
            assert_ne!(a, b);
        }
    }
}

#[test]
fn generation_is_deterministic_per_seed() {
    let a = serde_json::to_string(&Instance::generate(11)).unwrap();
    assert_eq!(a, serde_json::to_string(&Instance::generate(11)).unwrap());
    assert_ne!(a, serde_json::to_string(&Instance::generate(13)).unwrap());
}

/// The rule extractor files every chain message under its chain's
/// (entity, slot) key, and nothing else under a key: the benchmark measures
/// the memory, not template mismatches.
#[test]
fn every_chain_message_keys_to_its_chain() {
    let instance = Instance::generate(7);
    let built = arms::build(&instance, StoreKind::Keyed, None).unwrap();
    let filed = built.filed();
    for (i, m) in instance.messages.iter().enumerate() {
        match m.chain {
            None => assert!(
                filed[i].is_none(),
                "filler keyed: {:?} -> {:?}",
                m.text,
                filed[i]
            ),
            Some(c) => {
                let chain = &instance.chains[c];
                let entity = match chain.subject {
                    Subject::Person(p) => name_key(&instance.people[p].full),
                    Subject::Project(p) => name_key(&instance.projects[p]),
                };
                let (key, _) = filed[i]
                    .as_ref()
                    .unwrap_or_else(|| panic!("unkeyed: {:?}", m.text));
                assert_eq!(
                    (&*key.entity, &*key.slot),
                    (entity.as_str(), chain.slot),
                    "{:?}",
                    m.text
                );
            }
        }
    }
    // One active fact per chain, holding its current value.
    for chain in &instance.chains {
        let last = *chain.messages.last().unwrap();
        let fact = built
            .memory
            .fact(built.receipts[last].outcome.fact())
            .unwrap();
        assert!(
            fact.state.is_current(),
            "chain {} lost its current value",
            chain.id
        );
    }
}

#[test]
fn key_noise_misses_and_merges_at_its_rates() {
    let instance = Instance::generate(7);
    let built = arms::build(&instance, StoreKind::Keyed, None).unwrap();
    let filed = built.filed();
    let keyed = filed.iter().flatten().count();
    assert_eq!(noise::perturb(&filed, 0.0, 0.0, 1), filed);
    let all_missed = noise::perturb(&filed, 1.0, 0.0, 1);
    let mut keys: Vec<_> = all_missed
        .iter()
        .flatten()
        .map(|(k, _)| k.clone())
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), keyed, "every message has a key of its own");
    let all_merged = noise::perturb(&filed, 0.0, 1.0, 1);
    assert_eq!(all_merged.len(), filed.len());
    for (clean, noisy) in filed.iter().zip(&all_merged) {
        match (clean, noisy) {
            (Some((k, v)), Some((n, w))) => assert!(k != n && v == w),
            (None, None) => {}
            _ => panic!("noise never adds or drops a message's value"),
        }
    }
    let some = noise::perturb(&filed, 0.2, 0.0, 9);
    assert_eq!(some.len(), filed.len());
    let changed = filed.iter().zip(&some).filter(|(a, b)| a != b).count() as f64;
    assert!(
        (changed / keyed as f64 - 0.2).abs() < 0.06,
        "{changed} of {keyed}"
    );
}

/// Keyed supersession exposes no superseded value at either budget; the
/// keyless store, fed the same drafts, does.
#[test]
fn keyed_store_never_exposes_a_stale_value() {
    let options = EvalOptions {
        seeds: vec![7],
        arms: vec!["pfm".into(), "pfm_keyless".into()],
        key_noise: false,
        studies: false,
        probes: false,
        bootstrap_reps: 200,
        progress: false,
        ..EvalOptions::default()
    };
    let evaluation = pfm_harness::eval::run(&options).unwrap();
    assert_eq!(evaluation.records.len(), 240 * 2 * 2);
    let summary = report::summarize(&evaluation);
    for s in &summary.arms {
        if s.arm == "pfm" {
            assert_eq!(s.stale_count, 0, "B = {}", s.budget);
            assert!(s.current > 0.8, "{s:?}");
        } else {
            assert!(s.stale > 0.2, "{s:?}");
        }
    }
    assert!(!options.is_full());
}

/// Appendix D: the slot detector agrees with the generator's slot on every
/// main-benchmark query (all five seeds, standard and paraphrased templates).
#[test]
fn slot_detector_agrees_with_the_generator() {
    // Every query template of the main benchmark and of the slices; an
    // unanswerable hard-slice request asks for a room.
    let mut checked = [0; 3];
    for seed in pfm_harness::eval::SEEDS {
        let sets = [
            Instance::generate(seed),
            slices::hard_identity(seed),
            slices::multi_valued(seed),
        ];
        for (set, instance) in sets.iter().enumerate() {
            for q in &instance.queries {
                let detected = pfm::rules::requested_slot(&q.context).map(|s| s.name);
                let expected = match q.labels.current {
                    Some(_) => instance.chains[q.chain].slot,
                    None => "room",
                };
                assert_eq!(detected, Some(expected), "{:?}", q.context);
                checked[set] += 1;
            }
        }
    }
    assert_eq!(checked, [1_200, 180, 240]);
}

/// The P-Mem probes' structured path (P-Mem's patch interface) recovers
/// every retracted value and records and settles every conflict; CRUD
/// recovers nothing; the commit path stays clean at every chain depth.
#[test]
fn probes_structured_path_recovers_every_retraction_and_settles_every_conflict() {
    use pfm_harness::eval::provenance::{self, Path};
    let p = provenance::run().unwrap();
    for r in &p.retraction {
        match (r.arm, r.path) {
            ("pfm", Some(Path::Structured)) => {
                assert_eq!(r.recovered.k, r.recovered.n, "{r:?}")
            }
            ("crud", _) => assert_eq!(r.recovered.k, 0, "{r:?}"),
            _ => {}
        }
    }
    let structured = p
        .conflict
        .iter()
        .find(|r| r.arm == "pfm" && r.path == Some(Path::Structured))
        .unwrap();
    let all = |s: Option<provenance::Tally>| s.is_some_and(|s| s.k == s.n && s.n == provenance::N);
    assert!(
        all(structured.contest_recorded) && all(structured.resolve_landed),
        "{structured:?}"
    );
    assert_eq!(structured.flagged.k, provenance::N);
    assert_eq!(structured.post_correct.k, provenance::N);
    for r in p.chains.iter().filter(|r| r.arm.starts_with("commit")) {
        assert_eq!(r.clean.k, r.clean.n, "{r:?}");
    }
    let raw_deep = p
        .chains
        .iter()
        .find(|r| r.arm == "raw" && r.depth == 16)
        .unwrap();
    assert!(
        raw_deep.clean.k < raw_deep.clean.n,
        "the archive holds stale values: {raw_deep:?}"
    );
}

/// The speculation gate on the split its rules were written from: no plan
/// is ever current, every completed change commits at once; the ungated
/// arm is contaminated on the same conversations.
#[test]
fn the_gate_keeps_every_core_plan_out_of_the_store() {
    let rows = pfm_harness::eval::speculation::run().unwrap();
    let row = |split: &str, arm: &str| {
        rows.iter()
            .find(|r| r.split == split && r.arm == arm)
            .unwrap()
    };
    let gated = row("core", "gated");
    assert_eq!(
        (gated.pending_contamination.k, gated.end_contamination.k),
        (0, 0),
        "{gated:?}"
    );
    assert_eq!(gated.immediate_commit.k, gated.immediate_commit.n);
    assert_eq!(gated.task_accuracy.k, gated.task_accuracy.n, "{gated:?}");
    let ungated = row("core", "ungated");
    assert_eq!(
        ungated.pending_contamination.k,
        ungated.pending_contamination.n
    );
    let held = row("held-out", "gated");
    assert_eq!(held.over_held.k, 0, "controls commit at once: {held:?}");
}
