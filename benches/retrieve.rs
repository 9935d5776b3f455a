//! What's measured: the read path and the write path of the core memory
//! layer on the synthetic scaling corpus (`shared/specs/synthetic-corpus.md`).
//! - `retrieve/{n}`: one whole retrieval call — PFM scoring of every posting
//!   of the query terms, shortlist 50, greedy selection under k = 6 and
//!   B = 800, block formatting — cycling through the corpus's 300 timed queries.
//! - `commit_publish/{n}/{b}`: observing a batch of `b` new facts as one
//!   commit: extraction, ledger rules, graph, one new segment, merges, and the
//!   publication of a new index version. The store grows by `b` facts per
//!   iteration, which is negligible next to `n`.
//!
//! Corpus: seed 7, wide vocabulary, n = 1,000 and 100,000, built in batches
//! of 1,000 with background merges drained before timing.
//! Notes: these are timings, so they live here and never in tests. Compare
//! medians side by side within one run; the machine is shared and noisy.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pfm::rank::Scratch;
use pfm::retrieve::retrieve_with;
use pfm::synth::{self, SynthQuery, Vocabulary};
use pfm::{Config, Memory, Observation, WallTime};

const SIZES: [u64; 2] = [1_000, 100_000];

fn build(n: u64) -> (Memory, Vec<SynthQuery>) {
    let (facts, queries) = synth::generate(n, 7, Vocabulary::Wide, synth::DEFAULT_QUERIES);
    let mut memory = Memory::new(Config::default()).expect("default config is valid");
    for chunk in facts.chunks(1000) {
        memory
            .observe_batch(chunk.iter().map(|f| f.observation()).collect())
            .expect("corpus observations are valid");
    }
    memory.wait_for_merges();
    (memory, queries[50..].to_vec())
}

fn benches(c: &mut Criterion) {
    for n in SIZES {
        let (mut memory, queries) = build(n);
        let version = memory.version();
        let requests: Vec<_> = queries.iter().map(SynthQuery::request).collect();
        let mut scratch = Scratch::default();
        let mut group = c.benchmark_group("retrieve");
        group.throughput(Throughput::Elements(1));
        group.bench_function(BenchmarkId::from_parameter(n), |b| {
            let mut i = 0;
            b.iter(|| {
                let request = &requests[i % requests.len()];
                i += 1;
                black_box(retrieve_with(&version, request, &mut scratch).expect("valid request"))
            })
        });
        group.finish();

        let mut group = c.benchmark_group("commit_publish");
        for batch in [1usize, 100] {
            group.throughput(Throughput::Elements(batch as u64));
            let mut next = 0u64;
            group.bench_function(BenchmarkId::new(n.to_string(), batch), |b| {
                b.iter(|| {
                    let observations: Vec<Observation> = (0..batch)
                        .map(|_| {
                            next += 1;
                            Observation::new(
                                format!(
                                    "ent{} met the budget with ent{}",
                                    next % 997,
                                    next % 991 + 1000
                                ),
                                WallTime::from_secs(synth::BASE_SECS + n as i64 + next as i64),
                            )
                            .with_participants([format!("user{}", next % 40)])
                        })
                        .collect();
                    black_box(
                        memory
                            .observe_batch(observations)
                            .expect("valid observations"),
                    )
                })
            });
        }
        group.finish();
    }
}

criterion_group! {
    name = core;
    config = Criterion::default().warm_up_time(Duration::from_secs(2)).measurement_time(Duration::from_secs(5));
    targets = benches
}
criterion_main!(core);
