//! What's measured: the commit of one typed operation (P-Mem) against the
//! commit of one plain keyed supersession, on the same 100,000-fact store,
//! each an `observe` of one observation (extraction skipped: the key is
//! given), ledger rules, index and graph changes, and the publication of a
//! new version.
//! - `typed_commit/supersede`: `accept` of a new value (the baseline).
//! - `typed_commit/reject`: `reject` with a value (the head contradicted).
//! - `typed_commit/revoke`: `revoke` of the head, which walks the chain and
//!   reopens the predecessor; each timed revoke follows an untimed accept,
//!   so every cell keeps its history.
//! - `typed_commit/contest`: a contest against a head an untimed accept
//!   just installed (a head collects at most 16 alternatives).
//! - `typed_commit/resolve`: the resolution of an untimed contest to its
//!   alternative.
//!
//! - `gate/classify`: the speculation gate's classifier on one normalized
//!   statement, cycling over plans, completed changes, corrections,
//!   abandonments and plain statements (the target, issue 19: at most 2 µs
//!   at the median).
//!
//! - `erase/fact`: `Memory::forget` of one fact: each timed erasure
//!   takes out a fact an untimed observation just added (a corpus fact of
//!   seed 8, so its participants and entities are the store's, hubs of the
//!   graph among them), so the store keeps its size. An erasure recomputes
//!   the exact graph weights around the fact's names (issue 24's graph
//!   change made it about 5x cheaper here, `scale/README.md`).
//!
//! Corpus: seed 7, wide vocabulary (`shared/specs/synthetic-corpus.md`),
//! 100,000 keyless facts plus 1,000 keyed cells with two values each; the
//! operations cycle over the cells. Notes: compare medians side by side in
//! one run; the target (issue 18) is a typed operation within 2x of a
//! supersession.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use pfm::fact::Op;
use pfm::{Config, Forget, Key, Memory, Observation, WallTime};
use pfm_synth::Vocabulary;

const CELLS: usize = 1_000;

fn key(i: usize) -> Key {
    Key::new(&format!("Project {i}"), "budget_cap").expect("a valid key")
}

fn say(i: usize, op: Op, value: Option<&str>, n: u64) -> Observation {
    let at = WallTime::parse("2026-06-01")
        .expect("a date")
        .plus_millis(n as i64);
    let text = match value {
        Some(v) => format!("The Project {i} budget cap is {v}."),
        None => format!("Scratch the last Project {i} budget update ({n})."),
    };
    Observation::new(text, at)
        .with_key(key(i), value)
        .with_op(op, None)
}

fn build() -> Memory {
    let (facts, _) = pfm_synth::generate(100_000, 7, Vocabulary::Wide, 0);
    let mut memory = Memory::new(Config::default()).expect("default config is valid");
    for chunk in facts.chunks(1000) {
        memory
            .observe_batch(chunk.iter().map(|f| f.observation()).collect())
            .expect("corpus observations are valid");
    }
    for i in 0..CELLS {
        for v in ["$10k", "$20k"] {
            memory
                .observe(say(i, Op::Accept, Some(v), 0))
                .expect("valid");
        }
    }
    memory.wait_for_merges();
    memory
}

/// One benchmark: the operation timed, whether it carries a value, and the
/// untimed operation (with a value) run before it on the same cell.
struct Case {
    name: &'static str,
    prepare: Option<Op>,
    op: Op,
    valued: bool,
}

const CASES: [Case; 5] = [
    Case {
        name: "supersede",
        prepare: None,
        op: Op::Accept,
        valued: true,
    },
    Case {
        name: "reject",
        prepare: None,
        op: Op::Reject,
        valued: true,
    },
    Case {
        name: "revoke",
        prepare: Some(Op::Accept),
        op: Op::Revoke,
        valued: false,
    },
    Case {
        name: "contest",
        prepare: Some(Op::Accept),
        op: Op::Contest,
        valued: true,
    },
    Case {
        name: "resolve",
        prepare: Some(Op::Contest),
        op: Op::Resolve,
        valued: true,
    },
];

/// Runs `case` `iters` times, cycling over the cells; only its own commit
/// is timed.
fn timed(memory: &mut Memory, case: &Case, iters: u64, next: &mut u64) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        *next += 1;
        let (i, n) = (*next as usize % CELLS, *next);
        let value = format!("${n}");
        if let Some(op) = case.prepare {
            memory
                .observe(say(i, op, Some(&value), n))
                .expect("the preparation applies");
        }
        let o = say(i, case.op, case.valued.then_some(value.as_str()), n);
        let started = Instant::now();
        black_box(memory.observe(o).expect("the operation applies"));
        total += started.elapsed();
    }
    total
}

fn typed_commits(c: &mut Criterion) {
    let mut memory = build();
    let mut next = 0u64;
    let mut group = c.benchmark_group("typed_commit");
    for case in &CASES {
        group.bench_function(case.name, |b| {
            b.iter_custom(|iters| timed(&mut memory, case, iters, &mut next))
        });
    }
    group.finish();
}

fn erase(c: &mut Criterion) {
    let mut memory = build();
    let (added, _) = pfm_synth::generate(10_000, 8, Vocabulary::Wide, 0);
    let mut next = 0;
    let mut group = c.benchmark_group("erase");
    group.bench_function("fact", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let observation = added[next % added.len()].observation();
                next += 1;
                let fact = memory
                    .observe(observation)
                    .expect("corpus observations are valid")
                    .outcome
                    .fact();
                let at = memory.ledger().committed_at();
                let started = Instant::now();
                black_box(
                    memory
                        .forget(&Forget::Fact(fact), at)
                        .expect("a retained fact can be erased"),
                );
                total += started.elapsed();
            }
            total
        })
    });
    group.finish();
}

/// Statements of each kind the gate tells apart, as they reach it, with
/// the value each is keyed with.
const STATEMENTS: [(&str, &str); 10] = [
    (
        "I might move the standup with Alex Rivera to 10am next week.",
        "10am",
    ),
    (
        "We're thinking about pushing the Halcyon launch to Dec 3.",
        "dec 3",
    ),
    (
        "I'm planning to raise my day rate to $1,200 in January.",
        "$1,200",
    ),
    ("The Halcyon launch finally moved to Dec 3.", "dec 3"),
    ("I've been living in Tacoma since March.", "tacoma"),
    (
        "Actually, the budget cap for Halcyon is $45k, not $50k.",
        "$45k",
    ),
    (
        "The Seattle move fell through, so I'm staying in Portland after all.",
        "portland",
    ),
    (
        "The standup with Alex Rivera is moved to 10:45am.",
        "10:45am",
    ),
    ("The budget cap for Halcyon is 45,000 EUR.", "45,000 eur"),
    ("Priya Natarajan's day rate is now $1,150.", "$1,150"),
];

fn gate(c: &mut Criterion) {
    let normalized: Vec<(String, String)> = STATEMENTS
        .iter()
        .map(|(s, v)| (pfm::text::normalize(s), pfm::text::normalize(v)))
        .collect();
    let mut group = c.benchmark_group("gate");
    group.bench_function("classify", |b| {
        let mut i = 0;
        b.iter(|| {
            i += 1;
            let (text, value) = &normalized[i % normalized.len()];
            black_box(pfm::extract::gate::classify(text, Some(value)))
        })
    });
    group.finish();
}

/// Observations as a user sends them (a slot statement, relation
/// statements in both frames, a hedged one, and plain keyless chat).
const TEXTS: &[&str] = &[
    "The standup with Alex Rivera is moved to 10:45 AM.",
    "Ann Lee moved to Denver last month.",
    "The CEO of Quillon Tech is Rosa Mendes.",
    "Ann Lee: my favourite food is sushi.",
    "Ann Lee might move to Osaka next year.",
    "Thanks! Appreciate your encouragement, it means a lot to me and the kids.",
];

/// The rule extractor on one observation (slot and relation tables).
fn extract(c: &mut Criterion) {
    let mut g = pfm::extract::GazetteerWriter::default();
    g.register("Alex Rivera", pfm::extract::EntityKind::Person);
    let gazetteer = g.view().clone();
    let people: Vec<pfm::fact::Name> = vec!["ann lee".into(), "bo chan".into()];
    let texts: Vec<(&str, String)> = TEXTS
        .iter()
        .map(|t| (*t, pfm::text::normalize(t)))
        .collect();
    let extractor = pfm::extract::Extractor::default();
    let mut group = c.benchmark_group("extract");
    group.bench_function("observation", |b| {
        let mut i = 0;
        b.iter(|| {
            i += 1;
            let (raw, norm) = &texts[i % texts.len()];
            black_box(extractor.extract(raw, norm, &gazetteer, &people, |_| false))
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(4));
    targets = gate, extract, typed_commits, erase
}
criterion_main!(benches);
