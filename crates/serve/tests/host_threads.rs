//! The thread count of a host does not grow with its runtimes. Alone in its
//! test binary, so no other test's threads are counted.

use pfm::config::{Config, MergeMode};
use pfm::{Memory, Observation};
use pfm_serve::{Host, Runtime, ServeOptions};

#[path = "../../../tests/common/mod.rs"]
mod common;

/// Threads of this process whose name starts with `pfm-` (Linux's /proc).
fn pfm_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("this test counts threads through /proc/self/task (Linux)")
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with("pfm-"))
        .count()
}

/// [`pfm_threads`] once it reads `want`, or after 5 s: a new thread names
/// itself once it runs, so under load it may not be named yet when counted.
fn pfm_threads_settled(want: usize) -> usize {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let n = pfm_threads();
        if n == want || std::time::Instant::now() > deadline {
            return n;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn attaching_runtimes_starts_no_thread() {
    let options = ServeOptions {
        workers: 2,
        queue: 8,
        pin_workers: false,
        construction_threads: 2,
        tenant_jobs: Some(1),
        ..ServeOptions::default()
    };
    let host = Host::start(&options).unwrap();
    let base = pfm_threads_settled(5);
    // Two construction threads, one publisher, two workers.
    assert_eq!(base, 5, "a host's threads");
    let runtimes: Vec<Runtime> = (0..200)
        .map(|t| {
            let mut m = Memory::new(Config {
                merge: MergeMode::Inline,
                ..Config::default()
            })
            .unwrap();
            m.observe(Observation::new(
                format!("Tenant {t} keeps bees."),
                common::day(1),
            ))
            .unwrap();
            Runtime::attach(&host, m, &options).unwrap()
        })
        .collect();
    for r in &runtimes {
        r.observe(Observation::new("And a cat.", common::day(2)))
            .unwrap();
    }
    assert_eq!(pfm_threads(), base, "200 runtimes, no new thread");
    drop(runtimes);
    assert_eq!(pfm_threads(), base);
}
