//! Idempotent writes through the tenant's writer: a request whose client
//! went away (a 408: the HTTP layer dropped the answer) was committed, and
//! its retry with the same `request_id` returns the original receipts and
//! writes nothing, before and after a restart and an erasure rewrite.

mod support;

use pfm::{Forget, WallTime};
use pfm_server::writer::{Observed, WriteOp};
use support::{facts, observation, observe, open, tempdir};
use tokio::sync::oneshot;

#[test]
fn a_retried_request_id_is_answered_from_its_commit_and_writes_nothing() {
    let scratch = tempdir("retry");
    let dir = scratch.path();
    let (runtime, writer) = open(dir);
    let text = "The standup with Alex Rivera is moved to 9:30am.";

    // The first attempt's client gives up before the answer (a 408).
    let (tx, rx) = oneshot::channel();
    writer
        .send(WriteOp::Observe(
            vec![observation(text)],
            Some("req-1".into()),
            tx,
        ))
        .unwrap();
    drop(rx);
    // The retry: the same id, so the original receipts, nothing new.
    let retry = observe(&writer, text, Some("req-1"));
    assert!(retry.replayed);
    assert_eq!(retry.receipts.len(), 1);
    assert_eq!(retry.receipts[0].outcome, "created");
    assert_eq!(
        retry.receipts[0].key.as_deref(),
        Some("alex rivera/meeting_time")
    );
    assert_eq!(facts(&runtime), 1);
    let seq = runtime.version().seq;

    // A different body under a known id is still the old request: the id
    // names the request, not its text.
    let other = observe(
        &writer,
        "The standup with Alex Rivera is moved to 11am.",
        Some("req-1"),
    );
    assert!(other.replayed);
    assert_eq!(other.receipts, retry.receipts);
    assert_eq!(runtime.version().seq, seq, "nothing was committed");

    // Without an id, the same text is a new request (which the ledger
    // finds a duplicate of the active fact).
    let again = observe(&writer, text, None);
    assert!(!again.replayed);
    assert_eq!(again.receipts[0].outcome, "duplicate");

    // After a restart the id is still known (it was stored with its commit).
    writer.close();
    drop(writer);
    drop(runtime);
    let (runtime, writer) = open(dir);
    let after = observe(&writer, text, Some("req-1"));
    assert!(after.replayed);
    assert_eq!(after.receipts, retry.receipts);
    assert_eq!(facts(&runtime), 1);

    // An erasure rewrites the file: the ids survive it, the key does not
    // come back with the replay.
    let (tx, rx) = oneshot::channel();
    writer
        .send(WriteOp::Forget(
            Forget::Fact(pfm::FactId(retry.receipts[0].fact)),
            WallTime::parse("2025-06-03").unwrap(),
            tx,
        ))
        .unwrap();
    rx.blocking_recv().unwrap().unwrap();
    let erased = observe(&writer, text, Some("req-1"));
    assert!(erased.replayed);
    assert_eq!(
        erased.receipts[0].key, None,
        "an erased fact's key is not repeated"
    );
    assert_eq!(facts(&runtime), 0);
    writer.close();
}

#[test]
fn the_same_id_twice_in_one_batch_runs_once() {
    let scratch = tempdir("batch");
    let dir = scratch.path();
    let (runtime, writer) = open(dir);
    let receivers: Vec<_> = (0..2)
        .map(|_| {
            let (tx, rx) = oneshot::channel();
            let o = vec![observation("Alex Rivera's room is 16C.")];
            writer
                .send(WriteOp::Observe(o, Some("dup".into()), tx))
                .unwrap();
            rx
        })
        .collect();
    let answers: Vec<Observed> = receivers
        .into_iter()
        .map(|rx| rx.blocking_recv().unwrap().unwrap())
        .collect();
    assert!(!answers[0].replayed && answers[1].replayed);
    assert_eq!(answers[0].receipts, answers[1].receipts);
    assert_eq!(facts(&runtime), 1);
}
