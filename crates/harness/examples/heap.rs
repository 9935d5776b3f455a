//! The store's heap by structure, for heaptrack (issue 24, `scale/README.md`).
//!
//! Builds the synthetic corpus (seed 7) with `pfm scale`'s own builder
//! (`pfm_harness::scale::build`: batches of 1,000 observations, merges
//! drained), drops the generator's input, and exits *without* dropping the
//! store, so every byte the store still holds is reported by heaptrack as
//! leaked at its allocation site. Runs on the system allocator (heaptrack
//! hooks `malloc`; mimalloc would bypass it). `scripts/heap-by-structure
//! wide 100000` builds it, runs it under heaptrack and buckets the report.
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
    let memory = pfm_harness::scale::build(&facts, None).expect("synthetic observations are valid");
    drop(facts);
    eprintln!("built {n} facts; exiting with the store alive");
    // Deliberately not dropped: what is live now is the store's footprint.
    std::mem::forget(memory);
}
