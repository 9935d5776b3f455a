//! The store's heap by structure, for heaptrack (issue 24, `scale/README.md`).
//!
//! Builds the synthetic corpus (seed 7) like a `pfm scale` row — batches of
//! 1,000 observations, merges drained — drops the generator's input, and
//! exits *without* dropping the store, so every byte the store still holds
//! is reported by heaptrack as leaked at its allocation site. Runs on the
//! system allocator (heaptrack hooks `malloc`; mimalloc would bypass it).
//!
//! ```text
//! cargo build --release -p pfm-harness --example heap
//! heaptrack -o /tmp/heap target/release/examples/heap wide 100000
//! heaptrack_print -f /tmp/heap.zst -l 1 -n 0 -s 0 -a 0 -p 0 -t 0 --print-leaks 1 | scale/heap-by-structure
//! ```
use pfm::{Config, Memory};
use pfm_synth::Vocabulary;

fn main() {
    let mut args = std::env::args().skip(1);
    let voc = match args.next().as_deref() {
        Some("narrow") => Vocabulary::Narrow,
        Some("wide") | None => Vocabulary::Wide,
        Some(other) => {
            eprintln!("vocabulary must be wide or narrow, not {other:?}");
            std::process::exit(2);
        }
    };
    let n: u64 = match args.next().map(|s| s.parse()) {
        None => 100_000,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("facts must be a count: {e}");
            std::process::exit(2);
        }
    };
    let (facts, queries) = pfm_synth::generate(n, 7, voc, 350);
    drop(queries);
    let mut memory = Memory::new(Config::default()).expect("default config");
    for batch in facts.chunks(1000) {
        memory
            .observe_batch(batch.iter().map(|f| f.observation()).collect())
            .expect("synthetic observations are valid");
    }
    memory.wait_for_merges();
    drop(facts);
    eprintln!("built {n} facts; exiting with the store alive");
    // Deliberately not dropped: what is live now is the store's footprint.
    std::mem::forget(memory);
}
