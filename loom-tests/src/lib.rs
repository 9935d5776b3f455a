//! Loom models of the serving protocols behind Propositions 1 and 2 of the
//! PFM paper, one test file per protocol under `tests/`. Every model drives
//! `pfm`'s real serving code through its sync shim (`pfm_serve::sync`), which
//! swaps in loom's primitives under `--cfg loom`.
//!
//! Run: `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p loom-tests --release -- --nocapture`
//! (`LOOM_MAX_PREEMPTIONS`, default 3 here, bounds the preemptions per
//! execution). Without `--cfg loom` the test files compile to nothing.
//!
//! Each model has a broken twin: the same code with one deliberate bug
//! switched on through `pfm_serve::sync::fault`, which loom must reject.

#![cfg(loom)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use pfm_serve::sync::fault::{self, Fault};

/// Explores every interleaving of `model` (within the preemption bound)
/// and reports how many executions that took and how long.
pub fn explore(name: &str, model: impl Fn() + Sync + Send + 'static) -> usize {
    let runs = std::sync::Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    let started = Instant::now();
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(3);
    }
    let bound = builder.preemption_bound;
    let model = std::sync::Arc::new(model);
    builder.check(move || {
        counter.fetch_add(1, Ordering::Relaxed);
        let model = model.clone();
        spawn(move || model()).join().unwrap();
    });
    let n = runs.load(Ordering::Relaxed);
    eprintln!(
        "loom model {name}: {n} interleavings explored in {:.2} s (preemption bound {bound:?})",
        started.elapsed().as_secs_f64()
    );
    n
}

/// Stack of every model thread: the models run pfm's real store and
/// scorer, deeper than loom's default coroutine stack.
const STACK: usize = 256 << 10;

/// `loom::thread::spawn` with a stack deep enough for pfm's code.
pub fn spawn<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> loom::thread::JoinHandle<T> {
    loom::thread::Builder::new()
        .stack_size(STACK)
        .spawn(f)
        .expect("loom spawns threads")
}

/// Explores `model` with `bug` switched on. Meant for an `#[ignore]`d
/// child test that [`rejects`] runs in its own process: loom's failure
/// (an assertion, a causality violation, a deadlock) fails that process.
pub fn explore_broken(name: &str, bug: Fault, model: impl Fn() + Sync + Send + 'static) {
    fault::inject(bug);
    let n = explore(name, model);
    eprintln!("BROKEN VARIANT ACCEPTED: {name} with {bug:?} passed {n} interleavings");
}

/// Runs the ignored test `child` of the current test binary in a child
/// process (a loom deadlock aborts its process rather than unwinding) and
/// returns its output; panics unless it failed.
pub fn rejects(child: &str) -> String {
    let started = Instant::now();
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new(exe)
        .args([
            child,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .expect("the test binary runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.status.success(),
        "loom accepted the broken variant {child}:\n{text}"
    );
    // The line after the first "panicked at" is the failure's message.
    let reason = text
        .lines()
        .skip_while(|l| !l.contains("panicked at"))
        .nth(1)
        .unwrap_or("(no panic message)")
        .trim()
        .to_string();
    eprintln!(
        "loom rejected broken variant {child} in {:.2} s: {reason}",
        started.elapsed().as_secs_f64()
    );
    text
}

/// "The standup with Alex Rivera is moved to {value}.", keyed
/// (alex rivera, meeting_time), stated at `secs`.
pub fn standup(value: &str, secs: i64) -> pfm::Observation {
    pfm::Observation::new(
        format!("The standup with Alex Rivera is moved to {value}."),
        pfm::WallTime::from_secs(secs),
    )
    .with_participants(["Alex Rivera"])
    .with_key(standup_key(), Some(value))
}

/// The key the standup observations are filed under.
pub fn standup_key() -> pfm::Key {
    pfm::Key::new("alex rivera", "meeting_time").expect("a valid key")
}

/// Construction over a store (inline merges: no background thread inside a
/// model) that has observed `first`.
pub fn construction_with(first: pfm::Observation) -> pfm_serve::Construction {
    let mut memory = pfm::Memory::new(pfm::Config {
        merge: pfm::config::MergeMode::Inline,
        ..pfm::Config::default()
    })
    .expect("the default config is valid");
    memory.observe(first).expect("a valid observation");
    pfm_serve::Construction::new(memory, pfm_serve::wall_clock())
}
