//! Many runtimes on one host (one per tenant): each reads only its own
//! store through the shared workers, each tenant's share of the shared
//! queue is capped, and the one publisher keeps every tenant's contexts
//! fresh. Functional, never timed.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use pfm::config::{Config, MergeMode};
use pfm::{Memory, Observation, Request};
use pfm_serve::sync::queue;
use pfm_serve::{
    Admission, Construction, Fallback, Host, Metrics, Requester, Runtime, ServeOptions, Source,
    wall_clock,
};

#[path = "../../../tests/common/mod.rs"]
mod common;

use common::day;

fn options() -> ServeOptions {
    ServeOptions {
        workers: 2,
        queue: 8,
        pin_workers: false,
        tenant_jobs: Some(2),
        construction_threads: 2,
        ..ServeOptions::default()
    }
}

fn memory(tenant: usize) -> Memory {
    let mut m = Memory::new(Config {
        merge: MergeMode::Inline,
        ..Config::default()
    })
    .unwrap();
    m.observe(Observation::new(
        format!("The locker code of tenant {tenant} is {}.", 1000 + tenant),
        day(1),
    ))
    .unwrap();
    m
}

fn locker(d: i64) -> Request {
    Request::new("what is the locker code", day(d))
}

#[test]
fn tenants_on_one_host_read_only_their_own_store() {
    let host = Host::start(&options()).unwrap();
    let runtimes: Vec<Runtime> = (0..12)
        .map(|t| Runtime::attach(&host, memory(t), &options()).unwrap())
        .collect();
    // Commits on one tenant never reach another.
    runtimes[3]
        .observe(Observation::new(
            "The locker code of tenant 3 is now 7777.",
            day(2),
        ))
        .unwrap();
    for (t, runtime) in runtimes.iter().enumerate() {
        let mut requester = runtime.requester().unwrap();
        let served = requester
            .fresh_request(
                Arc::new(locker(3)),
                Fallback::Newest(runtime.publication()),
                Duration::from_secs(30),
            )
            .unwrap();
        let text = &served.block.text;
        assert!(text.contains(&format!("{}", 1000 + t)), "{t}: {text}");
        for other in (0..12).filter(|o| *o != t) {
            assert!(!text.contains(&format!("{}", 1000 + other)), "{t}: {text}");
        }
        assert_eq!(text.contains("7777"), t == 3, "{t}: {text}");
    }
    // The shared workers did the fresh jobs, in the host's metrics.
    assert!(
        host.metrics()
            .counters
            .cancelled_jobs
            .load(Ordering::Relaxed)
            <= 12
    );
}

#[test]
fn the_one_publisher_keeps_each_tenants_contexts_fresh() {
    let host = Host::start(&options()).unwrap();
    let a = Runtime::attach(&host, memory(1), &options()).unwrap();
    let b = Runtime::attach(&host, memory(2), &options()).unwrap();
    let ca = a.register(locker(3), false).unwrap();
    let cb = b.register(locker(3), false).unwrap();
    let before_b = cb.snapshot().block.text.clone();
    a.observe(Observation::new(
        "The locker code of tenant 1 is now 4242.",
        day(2),
    ))
    .unwrap();
    // The publisher republishes a's context; poll (not a timing check: the
    // deadline only keeps a broken publisher from hanging the test).
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ca.snapshot().block.text.contains("4242") {
        assert!(
            Instant::now() < deadline,
            "a's snapshot was never republished"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(cb.snapshot().block.text, before_b);
    assert!(!cb.snapshot().block.text.contains("4242"));
    // A dropped tenant's contexts are forgotten; the other still publishes.
    drop(a);
    b.observe(Observation::new(
        "The locker code of tenant 2 is now 5151.",
        day(2),
    ))
    .unwrap();
    while !cb.snapshot().block.text.contains("5151") {
        assert!(
            Instant::now() < deadline,
            "b's snapshot was never republished"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A tenant with its whole share of the queue falls back at once (counted
/// apart from "no free worker") while the queue still has room, and gets
/// its place back when its queued job is dropped.
#[test]
fn a_tenant_over_its_share_falls_back_and_its_place_comes_back() {
    let construction = Construction::new(memory(1), wall_clock());
    let metrics = Arc::new(Metrics::default());
    // Nobody serves this queue: a sent job stays queued, holding its place.
    let (tx, jobs) = queue::bounded(8);
    let admission = Admission::new(1);
    let mut requester = Requester::new(
        tx,
        construction.versions().clone(),
        metrics.clone(),
        wall_clock(),
    )
    .with_hedge(None)
    .with_admission(Some(admission.clone()));
    let fallback = Fallback::Newest(construction.versions());
    let omega = Duration::from_millis(1);
    let first = requester
        .fresh_request(Arc::new(locker(2)), fallback, omega)
        .unwrap();
    assert_eq!(first.source, Source::FallbackTimedOut);
    assert_eq!(admission.held(), 1, "the queued job holds its place");
    let second = requester
        .fresh_request(Arc::new(locker(2)), fallback, omega)
        .unwrap();
    assert_eq!(second.source, Source::FallbackNoFreeWorker);
    assert!(second.block.text.contains("1001"), "{}", second.block.text);
    assert_eq!(metrics.counters.over_share.load(Ordering::Relaxed), 1);
    assert_eq!(metrics.counters.no_free_worker.load(Ordering::Relaxed), 0);
    assert_eq!(jobs.len(), 1, "the refused request queued nothing");
    drop(jobs.try_recv().unwrap());
    assert_eq!(admission.held(), 0);
    let third = requester
        .fresh_request(Arc::new(locker(2)), fallback, omega)
        .unwrap();
    assert_eq!(third.source, Source::FallbackTimedOut);
    assert_eq!(jobs.len(), 1);
}

#[test]
fn a_zero_share_is_refused() {
    let bad = ServeOptions {
        tenant_jobs: Some(0),
        ..options()
    };
    assert!(Host::start(&bad).is_err());
    let host = Host::start(&options()).unwrap();
    assert!(Runtime::attach(&host, memory(0), &bad).is_err());
}
