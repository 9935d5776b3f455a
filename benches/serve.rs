//! What's measured: the serving runtime's request path, on an otherwise idle
//! runtime (no ingestion; `pfm load` measures it under construction).
//! - `serve/snapshot_read`: snapshot mode — one load of a registered
//!   context's published snapshot (the `r` of Proposition 2) and the
//!   response around it.
//! - `serve/fresh_round_trip`: fresh mode end to end — handoff to a parked
//!   worker (`h`), its retrieval, the completion signal and the request
//!   thread resuming (`σ`).
//! - `serve/handoff_only`: `try_send` of a job to a parked worker — the
//!   queue push and the worker's wake-up call, without waiting.
//!
//! Corpus: seed 7, wide vocabulary, 20,000 facts (Appendix G's store); 16
//! registered contexts from the corpus's queries; 2 workers, unpinned.
//! Notes: timings live here, never in tests; compare medians within a run.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use pfm::{Config, Memory};
use pfm_serve::{Runtime, ServeOptions};
use pfm_synth::Vocabulary;

fn runtime() -> (Runtime, Vec<pfm_serve::ContextHandle>) {
    let (facts, queries) = pfm_synth::generate(20_000, 7, Vocabulary::Wide, 16);
    let mut memory = Memory::new(Config::default()).expect("default config is valid");
    for chunk in facts.chunks(1000) {
        let batch = chunk
            .iter()
            .map(pfm_synth::SynthFact::observation)
            .collect();
        memory
            .observe_batch(batch)
            .expect("synthetic facts are valid");
    }
    memory.wait_for_merges();
    let runtime = Runtime::start(
        memory,
        ServeOptions {
            workers: 2,
            queue: 2,
            pin_workers: false,
            prune_every: None,
            ..ServeOptions::default()
        },
    )
    .expect("valid options");
    let contexts = queries
        .iter()
        .map(|q| runtime.register(q.request(), false).expect("valid query"))
        .collect();
    (runtime, contexts)
}

fn serve(c: &mut Criterion) {
    let (runtime, contexts) = runtime();
    let mut requester = runtime.requester().expect("runtime is running");
    let mut group = c.benchmark_group("serve");
    group.measurement_time(Duration::from_secs(5));
    let mut i = 0usize;
    group.bench_function("snapshot_read", |b| {
        b.iter(|| {
            i = (i + 1) % contexts.len();
            black_box(requester.snapshot(&contexts[i]))
        })
    });
    group.bench_function("fresh_round_trip", |b| {
        b.iter(|| {
            i = (i + 1) % contexts.len();
            black_box(requester.fresh(&contexts[i], Duration::from_secs(1)))
        })
    });
    let (tx, rx) = pfm_serve::sync::queue::bounded::<u64>(1);
    let parked = std::thread::spawn(move || while rx.recv().is_ok() {});
    group.bench_function("handoff_only", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                // Let the receiver park again, then time the send alone.
                std::thread::sleep(Duration::from_micros(200));
                let start = Instant::now();
                let _ = black_box(tx.try_send(1));
                total += start.elapsed();
            }
            total
        })
    });
    drop(tx);
    let _ = parked.join();
    group.finish();
    drop(requester);
    runtime.shutdown();
}

criterion_group!(benches, serve);
criterion_main!(benches);
