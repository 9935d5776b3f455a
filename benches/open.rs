//! What's measured: opening a tenant's durable ledger, what a cold request
//! to an evicted tenant pays before its retrieval (issue 23's cold open):
//! redb's open and read of every row, the rows' decoding, and
//! `Memory::restore` (the ledger's lookup maps and checks, then the
//! gazetteer, graph, timeline and index segments rebuilt from the facts).
//! - `tenant_open/1000_facts`: `DurableLedger::open` of the ledger below,
//!   from its rows (no checkpoint).
//! - `tenant_open/1000_facts_checkpoint`: the same ledger with a current
//!   checkpoint (what an evicted tenant that wrote leaves): the facts
//!   decoded from one MessagePack blob, the segments built from the stored
//!   index inputs without tokenizing.
//! - `tenant_close/after_a_write` and `tenant_close/after_a_write_checkpoint`:
//!   what an eviction's close of that tenant costs after one acknowledged
//!   write, without and with writing the checkpoint (its encoding, its
//!   commit, and the close's syncs that make it durable).
//!
//! Corpus: seed 7, wide vocabulary (`shared/specs/synthetic-corpus.md`),
//! the first 1,000 facts, each under its own key (`pfm load --tenants`
//! preloads its tenants this way), then 100 of them revised (history).
//! Notes: the ledger is written once to a temporary directory; each
//! iteration opens it, and drops it untimed (the file lock is released
//! before the next open). Under mimalloc, as in `pfm serve`. Compare medians side by side
//! in one run.

use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use pfm::{Config, Key, Memory};
use pfm_server::durable::{Batch, Checkpoint, DurableLedger, Source};
use pfm_synth::Vocabulary;

// The server's allocator: an open's many small allocations are part of
// its cost.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const FACTS: usize = 1_000;

fn ledger(checkpoint: bool) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "pfm-bench-open-{checkpoint}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let (facts, _) = pfm_synth::generate(FACTS as u64 + 100, 7, Vocabulary::Wide, 0);
    let mut memory = Memory::new(Config::default()).expect("default config is valid");
    let keyed = |i: usize, f: &pfm_synth::SynthFact, owner: &pfm_synth::SynthFact| {
        let key = Key::new(&owner.entities[0], &format!("fact{i}")).expect("a valid key");
        f.observation().with_key(key, None)
    };
    let first: Vec<_> = (0..FACTS).map(|i| keyed(i, &facts[i], &facts[i])).collect();
    memory
        .observe_batch(first)
        .expect("corpus observations are valid");
    let revisions: Vec<_> = (0..100)
        .map(|j| keyed(j * 10, &facts[FACTS + j], &facts[j * 10]))
        .collect();
    memory
        .observe_batch(revisions)
        .expect("corpus observations are valid");
    let (mut store, _) = DurableLedger::open(&dir, Config::default()).expect("a new ledger");
    store.write(&Batch::full(&memory)).expect("written");
    if checkpoint {
        store
            .checkpoint(&Checkpoint::of(&memory))
            .expect("checkpoint written");
    }
    drop(store);
    let (store, _) = DurableLedger::open(&dir, Config::default()).expect("reopens");
    let want = if checkpoint {
        Source::Checkpoint
    } else {
        Source::Rows
    };
    assert_eq!(store.source(), want, "the bench opens what it says");
    dir
}

fn open(c: &mut Criterion) {
    let mut group = c.benchmark_group("tenant_open");
    for (name, checkpoint) in [("1000_facts", false), ("1000_facts_checkpoint", true)] {
        let dir = ledger(checkpoint);
        group.bench_function(name, |b| {
            // Each dropped untimed before the next (one open at a time: the
            // file is locked): closing (redb's commit and fsync) is an
            // eviction's cost, not a cold request's.
            b.iter_batched(
                || (),
                |()| DurableLedger::open(&dir, Config::default()).expect("opens"),
                BatchSize::PerIteration,
            )
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
    group.finish();
    let dir = ledger(false);
    let mut group = c.benchmark_group("tenant_close");
    for (name, checkpoint) in [("after_a_write", false), ("after_a_write_checkpoint", true)] {
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    let (store, mut memory) =
                        DurableLedger::open(&dir, Config::default()).expect("opens");
                    let at = pfm::WallTime::parse("2025-06-02").expect("a date");
                    memory
                        .observe(pfm::Observation::new("Alex Rivera moved to Porto.", at))
                        .expect("a valid observation");
                    let journal = memory.take_journal();
                    store.write(&Batch::of(&memory, &journal)).expect("written");
                    (store, memory)
                },
                |(mut store, memory)| {
                    if checkpoint {
                        store
                            .checkpoint(&Checkpoint::of(&memory))
                            .expect("checkpoint written");
                    }
                    drop(store);
                    memory
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(5));
    targets = open
}
criterion_main!(benches);
