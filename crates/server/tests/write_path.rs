//! The write path: each batch is applied, synced and published with the
//! facts it wrote on the construction actor, and only then acknowledged;
//! reads come from published versions.

mod support;

use std::time::{Duration, Instant};

use pfm::retrieve::retrieve_as_of;
use pfm::{AsOf, FactId, Request, WallTime};
use pfm_serve::ServeOptions;
use support::{observe, open_with, tempdir};

#[test]
fn a_write_is_published_before_its_answer_and_rebuilds_only_the_contexts_it_reaches() {
    let scratch = tempdir("publish");
    let dir = scratch.path();
    let (runtime, writer) = open_with(
        dir,
        ServeOptions {
            // No periodic full pass during the test: every rebuild below is
            // event-driven.
            publish_every: Duration::from_secs(3600),
            ..ServeOptions::default()
        },
    );
    let first = observe(
        &writer,
        "The standup with Alex Rivera is moved to 9:30am.",
        None,
    );
    observe(&writer, "The printer on floor 2 is broken again.", None);
    let at = WallTime::parse("2025-06-03").unwrap();
    let standup = runtime
        .register(
            Request::new("the standup with Alex is at", at).with_participants(["Alex Rivera"]),
            false,
        )
        .unwrap();
    let printer = runtime
        .register(Request::new("is the printer fixed", at), false)
        .unwrap();
    let before = printer.snapshot().produced_at;

    let answer = observe(
        &writer,
        "Alex Rivera standup is rescheduled to 10:45am.",
        None,
    );
    let seq = answer.receipts[0].seq;
    assert!(
        runtime.version().seq >= seq,
        "acknowledged before it was published"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while standup.snapshot().store_seq < seq || printer.snapshot().store_seq < seq {
        assert!(Instant::now() < deadline, "no event-driven republication");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(standup.snapshot().block.text.contains("10:45am"));
    assert_eq!(
        printer.snapshot().produced_at,
        before,
        "a write rebuilt a context it cannot reach"
    );

    // The past and a fact's history are read from the published version.
    let version = runtime.version();
    let past = retrieve_as_of(
        &version,
        &Request::new("the standup with Alex is at", at).with_participants(["Alex Rivera"]),
        AsOf::Seq(first.receipts[0].seq),
    )
    .unwrap();
    assert!(past.text.contains("9:30am"), "{}", past.text);
    let newest = FactId(answer.receipts[0].fact);
    let history = version.timeline.history(newest).unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[1].id(), FactId(first.receipts[0].fact));
    writer.close();
}

/// A closed writer has closed its ledger file, though the writer and its
/// runtime are still alive: an evicted tenant's next request reopens the
/// ledger at once (before, the file's lock lived on until the last turn's
/// closure let go of it, and a quick reopen was refused).
#[test]
fn a_closed_writer_frees_its_ledger_for_a_reopen() {
    let scratch = tempdir("close-reopen");
    let dir = scratch.path();
    let (runtime, writer) = support::open(dir);
    observe(
        &writer,
        "The standup with Alex Rivera is moved to 9:30am.",
        None,
    );
    writer.close();
    let (_store, memory) =
        pfm_server::durable::DurableLedger::open(dir, pfm::Config::default()).unwrap();
    assert_eq!(memory.ledger().len(), 1);
    drop((writer, runtime));
}
