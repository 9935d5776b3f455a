//! The serving runtime, functionally (never timed): fresh mode in time and
//! late, cancellation, requests while construction is held, monotone
//! publication, event-driven republication, bad input.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use pfm::config::{Config, MergeMode};
use pfm::rules::{Abstain, Identity, Rules};
use pfm::{Error, Memory, Observation, Outcome, Request};
use pfm_serve::sync::queue;
use pfm_serve::{
    Changed, Construction, ContextHandle, Contexts, Fallback, Metrics, Requester, RetrievalJob,
    Runtime, ServeOptions, SnapshotPublisher, Source, Touched, Worker, completion, wall_clock,
};

// The fixtures the core's integration tests use too.
#[path = "../../../tests/common/mod.rs"]
mod common;

use common::{Words, alex, day};

fn memory() -> Memory {
    let mut m = Memory::new(Config {
        merge: MergeMode::Inline,
        ..Config::default()
    })
    .unwrap();
    m.keep_journal();
    m.observe(alex("The standup with Alex Rivera is moved to 9:30am.", 1))
        .unwrap();
    m.observe(Observation::new("The printer on floor 3 is fixed.", day(1)))
        .unwrap();
    m
}

fn standup(d: i64) -> Request {
    Request::new("the standup with Alex is at", day(d)).with_participants(["Alex Rivera"])
}

fn options() -> ServeOptions {
    ServeOptions {
        workers: 2,
        queue: 2,
        pin_workers: false,
        ..ServeOptions::default()
    }
}

/// The request path's parts without a runtime: a queue nobody serves yet,
/// so the test decides when (and whether) a worker runs a job. No hedging
/// unless a test asks for it.
struct Bench {
    construction: Construction,
    contexts: Contexts,
    metrics: Arc<Metrics>,
    jobs: queue::Receiver<RetrievalJob>,
    requester: Requester,
}

fn bench(capacity: usize, hedge: Option<f64>) -> Bench {
    let construction = Construction::new(memory(), wall_clock());
    let metrics = Arc::new(Metrics::default());
    let (tx, jobs) = queue::bounded(capacity);
    Bench {
        contexts: Contexts::default(),
        requester: Requester::new(
            tx,
            construction.versions().clone(),
            metrics.clone(),
            wall_clock(),
        )
        .with_hedge(hedge),
        construction,
        metrics,
        jobs,
    }
}

impl Bench {
    /// Registers the standup context on the current version.
    fn register(&self) -> pfm_serve::ContextHandle {
        self.contexts
            .register(
                standup(2),
                false,
                &self.construction.versions().load(),
                &wall_clock(),
            )
            .unwrap()
    }

    fn worker(&self) -> Worker {
        Worker::new(self.metrics.clone())
    }
}

#[test]
fn fresh_mode_returns_the_workers_block_in_time() {
    let runtime = Runtime::start(memory(), options()).unwrap();
    let context = runtime.register(standup(2), false).unwrap();
    runtime
        .observe(alex("Alex Rivera standup is rescheduled to 10:45am.", 3))
        .unwrap();
    let mut requester = runtime.requester().unwrap();
    let served = requester.fresh(&context, Duration::from_secs(10)).unwrap();
    assert_eq!(served.source, Source::Fresh);
    assert!(
        served.block.text.contains("10:45am"),
        "{}",
        served.block.text
    );
    assert!(
        !served.block.text.contains("9:30am"),
        "{}",
        served.block.text
    );
    assert_eq!(served.store_seq, runtime.version().seq);
    let t = served.timings;
    assert!(t.handoff.is_some() && t.sigma.is_some() && t.read.is_none());
}

#[test]
fn a_late_job_falls_back_to_the_snapshot_and_its_result_reaches_nobody() {
    let mut b = bench(4, None);
    let context = b.register();
    // No worker runs yet: the wait must time out.
    let late = b
        .requester
        .fresh(&context, Duration::from_millis(20))
        .unwrap();
    assert_eq!(late.source, Source::FallbackTimedOut);
    assert_eq!(late.block.text, context.snapshot().block.text);
    assert!(late.snapshot_age.is_some() && late.timings.read.is_some());
    assert!(late.timings.sigma.is_some());

    // The worker picks the abandoned job up afterwards: it must drop it.
    let mut worker = b.worker();
    let job = b.jobs.try_recv().unwrap();
    assert!(job.completion.is_cancelled());
    worker.serve(job);
    assert_eq!(b.metrics.counters.cancelled_jobs.load(Ordering::Relaxed), 1);
    assert_eq!(b.metrics.counters.fallbacks.load(Ordering::Relaxed), 1);

    // The next request of the same thread gets its own job's result: run a
    // worker thread for it, and change the store in between so the two
    // results differ.
    b.construction
        .commit(vec![alex(
            "Alex Rivera standup is rescheduled to 10:45am.",
            3,
        )])
        .unwrap();
    let jobs = b.jobs.clone();
    let handle = std::thread::spawn(move || {
        let job = jobs.recv().unwrap();
        worker.serve(job);
    });
    let served = b
        .requester
        .fresh(&context, Duration::from_secs(10))
        .unwrap();
    handle.join().unwrap();
    assert_eq!(served.source, Source::Fresh);
    assert!(
        served.block.text.contains("10:45am"),
        "{}",
        served.block.text
    );
    assert_eq!(served.store_seq, b.construction.versions().load().seq);
}

#[test]
fn a_cancelled_job_stops_and_delivers_nothing() {
    let b = bench(1, None);
    let (mut waiter, delivery) = completion();
    let job = RetrievalJob {
        request: Arc::new(standup(2)),
        versions: b.construction.versions().clone(),
        ticket: None,
        completion: delivery.clone(),
        deadline: Instant::now(),
    };
    // The request gives up (its deadline has passed) before the worker starts.
    assert!(matches!(
        waiter.wait(pfm_serve::sync::Deadline::after(Duration::ZERO)),
        pfm_serve::handoff::Waited::TimedOut
    ));
    b.worker().serve(job);
    assert_eq!(b.metrics.counters.cancelled_jobs.load(Ordering::Relaxed), 1);
    // Delivering now is refused: the reply goes back to the worker.
    let reply = pfm_serve::Reply {
        block: Ok(Arc::new(pfm::Block::default())),
        store_seq: 0,
        finished_at: Instant::now(),
    };
    assert!(delivery.complete(reply).is_err());
}

#[test]
fn a_full_queue_is_reported_not_waited_on() {
    let mut b = bench(1, None);
    let context = b.register();
    let first = b
        .requester
        .fresh(&context, Duration::from_millis(5))
        .unwrap();
    assert_eq!(first.source, Source::FallbackTimedOut);
    // The abandoned job still occupies the only queue slot.
    let second = b
        .requester
        .fresh(&context, Duration::from_secs(60))
        .unwrap();
    assert_eq!(second.source, Source::FallbackNoFreeWorker);
    assert_eq!(second.block.text, context.snapshot().block.text);
    assert_eq!(b.metrics.counters.no_free_worker.load(Ordering::Relaxed), 1);
}

/// Issue 17.5: a fresh request with no registered context whose worker
/// misses `ω` (or finds no free worker) used to answer `block: ""`; it now
/// answers the block of the newest version, retrieved by the request thread.
#[test]
fn a_fresh_request_without_a_context_never_falls_back_to_an_empty_block() {
    let mut b = bench(1, None);
    let request = Arc::new(standup(2));
    let newest = b.construction.versions().load();
    let expected = pfm::retrieve::retrieve(&newest, &request).unwrap();
    assert!(expected.text.contains("9:30am"), "{}", expected.text);
    let fallback = Fallback::Newest(b.construction.versions());
    let late = b
        .requester
        .fresh_request(request.clone(), fallback, Duration::from_millis(5))
        .unwrap();
    assert_eq!(late.source, Source::FallbackTimedOut);
    assert_eq!(late.block.text, expected.text);
    assert_eq!(late.store_seq, newest.seq);
    // The abandoned job still holds the only queue slot: no free worker.
    let refused = b
        .requester
        .fresh_request(request, fallback, Duration::from_secs(60))
        .unwrap();
    assert_eq!(refused.source, Source::FallbackNoFreeWorker);
    assert_eq!(refused.block.text, expected.text);
}

#[test]
fn requests_complete_while_construction_is_held_inside_a_commit() {
    let runtime = Arc::new(Runtime::start(memory(), options()).unwrap());
    let context = runtime.register(standup(2), false).unwrap();
    let (entered_tx, entered) = std::sync::mpsc::channel();
    let (release, release_rx) = std::sync::mpsc::channel::<()>();
    let held = {
        let runtime = runtime.clone();
        std::thread::spawn(move || {
            runtime
                .exclusive(move |_memory| {
                    entered_tx.send(()).unwrap();
                    release_rx.recv().unwrap();
                    ((), Touched::Nothing)
                })
                .unwrap();
        })
    };
    entered.recv().unwrap();
    // Construction is now inside the held operation; queue work behind it.
    runtime
        .submit(vec![alex(
            "Alex Rivera standup is rescheduled to 10:45am.",
            3,
        )])
        .unwrap();
    let mut requester = runtime.requester().unwrap();
    for _ in 0..20 {
        let s = requester.snapshot(&context);
        assert!(s.block.text.contains("9:30am"), "{}", s.block.text);
        let f = requester.fresh(&context, Duration::from_secs(10)).unwrap();
        assert_eq!(f.source, Source::Fresh);
        assert!(f.block.text.contains("9:30am"), "{}", f.block.text);
    }
    release.send(()).unwrap();
    held.join().unwrap();
}

#[test]
fn publication_is_monotone_for_every_request() {
    let runtime = Arc::new(Runtime::start(memory(), options()).unwrap());
    let context = runtime.register(standup(2), false).unwrap();
    let writer = {
        let runtime = runtime.clone();
        std::thread::spawn(move || {
            for i in 0..200 {
                let minute = i % 60;
                runtime
                    .submit(vec![alex(
                        &format!("Alex Rivera standup is rescheduled to 10:{minute:02}am."),
                        3,
                    )])
                    .unwrap();
                if i % 20 == 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        })
    };
    let mut requester = runtime.requester().unwrap();
    let (mut snap_seq, mut fresh_seq, mut version_seq) = (0, 0, 0);
    for _ in 0..400 {
        let s = requester.snapshot(&context);
        assert!(
            s.store_seq >= snap_seq,
            "snapshot went back: {} < {snap_seq}",
            s.store_seq
        );
        snap_seq = s.store_seq;
        let f = requester.fresh(&context, Duration::from_secs(10)).unwrap();
        if f.source == Source::Fresh {
            assert!(
                f.store_seq >= fresh_seq,
                "fresh went back: {} < {fresh_seq}",
                f.store_seq
            );
            fresh_seq = f.store_seq;
        }
        let v = runtime.version().seq;
        assert!(v >= version_seq);
        version_seq = v;
    }
    writer.join().unwrap();
}

/// A runtime with no periodic full pass (every rebuild is event-driven)
/// and two registered contexts: the standup, which a standup commit
/// reaches, and the printer, which it does not.
fn two_contexts() -> (Runtime, ContextHandle, ContextHandle) {
    let runtime = Runtime::start(
        memory(),
        ServeOptions {
            publish_every: Duration::from_secs(3600),
            ..options()
        },
    )
    .unwrap();
    let context = runtime.register(standup(2), false).unwrap();
    let printer = runtime
        .register(Request::new("is the printer fixed", day(2)), false)
        .unwrap();
    (runtime, context, printer)
}

#[test]
fn a_commit_republishes_affected_contexts_without_waiting_for_the_period() {
    let (runtime, context, printer) = two_contexts();
    let before = printer.snapshot().produced_at;
    let receipt = runtime
        .observe(alex("Alex Rivera standup is rescheduled to 10:45am.", 3))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while context.snapshot().store_seq < receipt.seq {
        assert!(Instant::now() < deadline, "no event-driven republication");
        std::thread::sleep(Duration::from_millis(1));
    }
    let snapshot = context.snapshot();
    assert!(
        snapshot.block.text.contains("10:45am"),
        "{}",
        snapshot.block.text
    );
    // The unaffected context is re-stamped, not rebuilt.
    while printer.snapshot().store_seq < receipt.seq {
        assert!(
            Instant::now() < deadline,
            "unaffected context not re-stamped"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(printer.snapshot().produced_at, before);
}

/// Exclusive access publishes what its closure says it touched: a read
/// publishes nothing, a targeted write rebuilds only the contexts its facts
/// reach (the others are re-stamped), and the caller hears back only after
/// the publication.
#[test]
fn exclusive_access_publishes_only_what_it_touched() {
    let (runtime, context, printer) = two_contexts();
    let before = printer.snapshot().produced_at;
    let versions = || runtime.metrics().counters.versions.load(Ordering::Relaxed);

    let published = versions();
    let facts = runtime
        .exclusive(|m| (m.ledger().facts().count(), Touched::Nothing))
        .unwrap();
    assert_eq!(facts, runtime.version().timeline.len());
    assert_eq!(versions(), published, "a read published a version");

    let seq = runtime
        .exclusive(|m| {
            m.take_journal(); // what building the store wrote
            let receipt = m
                .observe(alex("Alex Rivera standup is rescheduled to 10:45am.", 3))
                .unwrap();
            let touched = m.take_journal().touched.into_iter().collect();
            (receipt.seq, Touched::Facts(touched))
        })
        .unwrap();
    assert_eq!(runtime.version().seq, seq, "answered before publication");
    let deadline = Instant::now() + Duration::from_secs(30);
    while context.snapshot().store_seq < seq || printer.snapshot().store_seq < seq {
        assert!(Instant::now() < deadline, "no event-driven republication");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(context.snapshot().block.text.contains("10:45am"));
    assert_eq!(
        printer.snapshot().produced_at,
        before,
        "unreached context rebuilt"
    );
}

/// Identity and abstention rules are part of a registered request, so the
/// snapshot publisher applies them like a direct retrieval does.
#[test]
fn published_snapshots_apply_the_requests_rules() {
    let runtime = Runtime::start(memory(), options()).unwrap();
    let gated = Rules {
        identity: Identity::Posterior,
        abstain: Abstain::Slot(0.5),
    };
    let room = Request::new("the standup with Alex is in", day(2))
        .with_participants(["Alex Rivera"])
        .with_rules(gated);
    let room = runtime.register(room, false).unwrap();
    let time = runtime
        .register(standup(2).with_rules(gated), false)
        .unwrap();
    let (room, time) = (room.snapshot(), time.snapshot());
    assert!(
        room.block.abstained && room.block.lines.is_empty(),
        "{:?}",
        room.block
    );
    assert!(!time.block.abstained && time.block.text.contains("9:30am"));
}

#[test]
fn bad_input_is_a_typed_error() {
    let runtime = Runtime::start(memory(), options()).unwrap();
    assert!(matches!(
        runtime.context(99),
        Err(Error::UnknownContext(99))
    ));
    assert!(matches!(
        runtime.unregister(99),
        Err(Error::UnknownContext(99))
    ));
    assert!(matches!(
        runtime.register(standup(2).with_k(0), false),
        Err(Error::ZeroK)
    ));
    let context = runtime.register(standup(2), false).unwrap();
    let mut requester = runtime.requester().unwrap();
    assert!(matches!(
        requester.fresh(&context, Duration::ZERO),
        Err(Error::ZeroOmega)
    ));
    assert!(matches!(
        requester.fresh_request(
            Arc::new(standup(2).with_budget(3)),
            Fallback::Newest(runtime.publication()),
            Duration::from_millis(5)
        ),
        Err(Error::BudgetTooSmall { .. })
    ));
    assert!(matches!(
        runtime.observe(Observation::new("  ", day(1))),
        Err(Error::EmptyText)
    ));
    // A bad batch fails alone; the runtime keeps serving.
    runtime
        .observe(alex("Alex Rivera standup is rescheduled to 10:45am.", 3))
        .unwrap();
    assert!(matches!(
        Runtime::start(
            memory(),
            ServeOptions {
                workers: 0,
                ..options()
            }
        ),
        Err(Error::InvalidConfig(_))
    ));
    runtime.unregister(context.id).unwrap();
    assert!(matches!(
        runtime.context(context.id),
        Err(Error::UnknownContext(_))
    ));
}

#[test]
fn a_hedged_job_is_answered_by_the_first_worker_and_the_other_result_is_dropped() {
    let mut b = bench(4, Some(0.5));
    let context = b.register();
    let jobs = b.jobs.clone();
    let mut worker = b.worker();
    // Nobody serves the job until the hedge arrives (after half of omega);
    // then the hedge is served first, the original after it.
    let helper = std::thread::spawn(move || {
        while jobs.len() < 2 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let original = jobs.recv().unwrap();
        let hedge = jobs.recv().unwrap();
        assert!(original.completion.same_job(&hedge.completion));
        worker.serve(hedge);
        worker.serve(original);
    });
    let served = b.requester.fresh(&context, Duration::from_secs(6)).unwrap();
    helper.join().unwrap();
    assert_eq!(served.source, Source::Fresh);
    assert!(
        served.block.text.contains("9:30am"),
        "{}",
        served.block.text
    );
    let counters = &b.metrics.counters;
    assert_eq!(counters.hedges.load(Ordering::Relaxed), 1);
    assert_eq!(counters.cancelled_jobs.load(Ordering::Relaxed), 1);
    assert_eq!(counters.fallbacks.load(Ordering::Relaxed), 0);
}

#[test]
fn blocking_calls_from_an_async_task_are_an_error_not_a_panic() {
    let runtime = Runtime::start(memory(), options()).unwrap();
    let context = runtime.register(standup(2), false).unwrap();
    let executor = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    executor.block_on(async move {
        assert!(matches!(
            Runtime::start(memory(), options()),
            Err(Error::WouldBlock(_))
        ));
        assert!(matches!(
            runtime.observe(alex("Alex Rivera standup is rescheduled to 10:45am.", 3)),
            Err(Error::WouldBlock(_))
        ));
        // A snapshot read never blocks, so it is fine here.
        let mut requester = runtime.requester().unwrap();
        assert!(requester.snapshot(&context).block.text.contains("9:30am"));
        drop(requester);
        // Dropping the runtime inside the task stops it without blocking.
        drop(runtime);
    });
}

#[test]
fn a_snapshot_never_claims_a_commit_whose_change_it_has_not_examined() {
    let mut construction = Construction::new(memory(), wall_clock());
    let contexts = Arc::new(Contexts::default());
    let context = contexts
        .register(
            standup(4),
            false,
            &construction.versions().load(),
            &wall_clock(),
        )
        .unwrap();
    let before = context.snapshot().store_seq;
    let mut publisher = SnapshotPublisher::new(
        construction.versions().clone(),
        contexts.clone(),
        wall_clock(),
        Arc::new(Metrics::default()),
    );
    let receipt = construction
        .commit(vec![alex(
            "Alex Rivera standup is rescheduled to 10:45am.",
            3,
        )])
        .unwrap()
        .remove(0);
    // The publisher sees the new version before that commit's notice: it
    // must not re-stamp the snapshot past what its notices covered.
    publisher.publish_pass(&Changed::Facts {
        upto: before,
        facts: Vec::new(),
    });
    let stale = context.snapshot();
    assert_eq!(stale.store_seq, before);
    assert!(stale.block.text.contains("9:30am"), "{}", stale.block.text);
    // The notice arrives: the block is rebuilt from the new version.
    let Outcome::Superseded { fact, .. } = receipt.outcome else {
        panic!("{receipt:?}")
    };
    let body = construction.memory().fact(fact).unwrap().body.clone();
    publisher.publish_pass(&Changed::Facts {
        upto: receipt.seq,
        facts: vec![body],
    });
    let fresh = context.snapshot();
    assert_eq!(
        (fresh.store_seq, fresh.built_seq),
        (receipt.seq, receipt.seq)
    );
    assert!(fresh.block.text.contains("10:45am"), "{}", fresh.block.text);
}

fn dense_memory() -> Memory {
    let mut m = memory();
    m.set_encoder(Box::new(Words::default()), false).unwrap();
    m
}

/// A factory that counts the sessions it makes.
fn counting_factory() -> (
    pfm_serve::EncoderFactory,
    Arc<std::sync::atomic::AtomicUsize>,
) {
    let made = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = made.clone();
    let factory: pfm_serve::EncoderFactory = Arc::new(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        Ok(Box::new(Words::default()) as Box<dyn pfm::vector::Encoder>)
    });
    (factory, made)
}

fn dense_standup() -> Request {
    // One line: the stand-in vectors must rank the standup above the printer.
    standup(2)
        .with_ranker(pfm::rank::Ranker::named("dense_validity").unwrap())
        .with_k(1)
}

#[test]
fn a_worker_encodes_a_dense_query_itself_and_keeps_its_session() {
    let (factory, made) = counting_factory();
    let runtime = Runtime::start(
        dense_memory(),
        ServeOptions {
            encoder: Some(factory),
            hedge: None,
            ..options()
        },
    )
    .unwrap();
    let mut requester = runtime.requester().unwrap();
    let newest = Fallback::Newest(runtime.publication());
    for _ in 0..4 {
        let served = requester
            .fresh_request(Arc::new(dense_standup()), newest, Duration::from_secs(10))
            .unwrap();
        assert_eq!(served.source, Source::Fresh);
        assert!(
            served.block.text.contains("9:30am"),
            "{}",
            served.block.text
        );
    }
    // One session per worker that served, made once; the requester made none.
    let sessions = made.load(Ordering::SeqCst);
    assert!((1..=2).contains(&sessions), "{sessions} sessions");
}

#[test]
fn a_dense_fallback_is_encoded_on_the_calling_thread() {
    let (factory, made) = counting_factory();
    let construction = Construction::new(dense_memory(), wall_clock());
    let (tx, _jobs) = queue::bounded(1);
    let mut requester = Requester::new(
        tx,
        construction.versions().clone(),
        Arc::new(Metrics::default()),
        wall_clock(),
    )
    .with_hedge(None)
    .with_encoder(Some(factory));
    let fallback = Fallback::Newest(construction.versions());
    // Nobody serves the queue: the request falls back and encodes here.
    let late = requester
        .fresh_request(
            Arc::new(dense_standup()),
            fallback,
            Duration::from_millis(5),
        )
        .unwrap();
    assert_eq!(late.source, Source::FallbackTimedOut);
    assert!(late.block.text.contains("9:30am"), "{}", late.block.text);
    assert_eq!(made.load(Ordering::SeqCst), 1);
}

#[test]
fn a_dense_request_without_an_encoder_is_a_typed_error() {
    let runtime = Runtime::start(dense_memory(), options()).unwrap();
    let mut requester = runtime.requester().unwrap();
    let newest = Fallback::Newest(runtime.publication());
    let err = requester
        .fresh_request(Arc::new(dense_standup()), newest, Duration::from_secs(10))
        .unwrap_err();
    assert!(matches!(err, Error::DenseUnavailable(_)), "{err}");
    assert!(err.to_string().contains("scripts/fetch-models"), "{err}");
    // A request that brings its vector needs no encoder.
    let mut words = Words::default();
    let v = pfm::vector::Encoder::encode(&mut words, &["the standup with Alex is at Alex Rivera"])
        .unwrap();
    let request = dense_standup().with_vector(Arc::new(pfm::vector::Vector::quantize(&v[0])));
    let served = requester
        .fresh_request(Arc::new(request), newest, Duration::from_secs(10))
        .unwrap();
    assert!(
        served.block.text.contains("9:30am"),
        "{}",
        served.block.text
    );
}
