//! What's measured: bulk construction (issue 24), a fresh store built the
//! way an import of a user's history builds it — the observations'
//! validation and extraction, the ledger's commits, the index segments,
//! the graph and the gazetteer, then the background merges drained — in
//! time per fact (criterion's throughput), against the single-fact commit
//! that publishes a version per fact.
//! - `bulk_build/batch_1000`: 20,000 facts, `observe_batch` of 1,000 at a
//!   time (the batches `pfm scale` builds its rows with).
//! - `bulk_build/batch_10000`: the same facts, 10,000 at a time.
//! - `bulk_build/single`: the first 2,000 of them, one commit each (a
//!   batch of one, which is what `observe` commits).
//!
//! Corpus: seed 7, wide vocabulary (`shared/specs/synthetic-corpus.md`).
//! The observations are made and the store dropped outside the timing.
//! Under mimalloc, as in `pfm`. Notes: the target (≤ 2.5 µs a fact) is at
//! 100,000 facts, which `pfm scale` measures once per row; this bench is
//! small enough for criterion's repeated samples, to compare a change with
//! its base side by side in one run (medians).

use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use pfm::Observation;
use pfm_harness::scale::build_in_batches;
use pfm_synth::Vocabulary;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const FACTS: usize = 20_000;
const SINGLE: usize = 2_000;

fn bench(c: &mut Criterion) {
    let (facts, _) = pfm_synth::generate(FACTS as u64, 7, Vocabulary::Wide, 0);
    let observations: Vec<Observation> = facts.iter().map(|f| f.observation()).collect();
    let mut group = c.benchmark_group("bulk_build");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(8));
    for (name, batch, n) in [
        ("batch_1000", 1_000, FACTS),
        ("batch_10000", 10_000, FACTS),
        ("single", 1, SINGLE),
    ] {
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(name, |b| {
            b.iter_batched(
                || observations[..n].to_vec(),
                |o| build_in_batches(o, batch, None).expect("corpus observations are valid"),
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
