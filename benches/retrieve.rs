//! What's measured: the read path and the write path of the core memory
//! layer on the synthetic scaling corpus (`shared/specs/synthetic-corpus.md`).
//! - `retrieve/{vocabulary}/{n}`: one whole retrieval call — PFM scoring with
//!   exact pruning, shortlist 50, greedy selection under k = 6 and B = 800,
//!   block formatting — cycling through the corpus's 300 timed queries, at
//!   n = 1,000, 20,000 and 100,000 in both vocabularies; `no_context` the
//!   same requests without conversation context (`pfm::rank::context`).
//! - `commit_publish/{n}/{b}`: observing a batch of `b` new facts as one
//!   commit: extraction, ledger rules, graph, one new segment, merges, and the
//!   publication of a new index version. With `b = 1` this is the
//!   commit-to-visible time of one fact (`observe` returns once a reader's
//!   `version()` holds it). The store grows by `b` facts per iteration, which
//!   is negligible next to `n` (20,000 and 100,000, wide).
//!
//! Corpus: seed 7, built in batches of 1,000 with background merges drained
//! before timing. `pfm scale` reports the same quantities with p99s.
//! Notes: these are timings, so they live here and never in tests. Compare
//! medians side by side within one run; the machine is shared and noisy.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pfm::rank::{Ranker, Scratch};
use pfm::retrieve::retrieve_with;
use pfm::{Memory, Observation, WallTime};
use pfm_synth::{SynthQuery, Vocabulary};

const SIZES: [u64; 3] = [1_000, 20_000, 100_000];
const COMMIT_SIZES: [u64; 2] = [20_000, 100_000];

fn build(n: u64, vocabulary: Vocabulary) -> (Memory, Vec<SynthQuery>) {
    let (facts, queries) = pfm_synth::generate(n, 7, vocabulary, pfm_synth::DEFAULT_QUERIES);
    let memory = pfm_harness::scale::build(&facts, None).expect("corpus observations are valid");
    (memory, queries[50..].to_vec())
}

fn retrieval(c: &mut Criterion) {
    for vocabulary in [Vocabulary::Wide, Vocabulary::Narrow] {
        let mut group = c.benchmark_group(format!("retrieve/{vocabulary}"));
        group.throughput(Throughput::Elements(1));
        for n in SIZES {
            let (memory, queries) = build(n, vocabulary);
            let version = memory.version();
            let requests: Vec<_> = queries.iter().map(SynthQuery::request).collect();
            // The same requests without conversation context, side by side:
            // what the context stage costs.
            let without: Vec<_> = requests
                .iter()
                .map(|r| {
                    r.clone().with_ranker(Ranker {
                        context: false,
                        ..Ranker::pfm()
                    })
                })
                .collect();
            let mut scratch = Scratch::default();
            for (id, requests) in [
                (BenchmarkId::from_parameter(n), &requests),
                (BenchmarkId::new("no_context", n), &without),
            ] {
                group.bench_function(id, |b| {
                    let mut i = 0;
                    b.iter(|| {
                        let request = &requests[i % requests.len()];
                        i += 1;
                        black_box(
                            retrieve_with(&version, request, &mut scratch).expect("valid request"),
                        )
                    })
                });
            }
        }
        group.finish();
    }
}

fn commits(c: &mut Criterion) {
    for n in COMMIT_SIZES {
        let (mut memory, _) = build(n, Vocabulary::Wide);

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
                                WallTime::from_secs(pfm_synth::BASE_SECS + n as i64 + next as i64),
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
    targets = retrieval, commits
}
criterion_main!(core);
