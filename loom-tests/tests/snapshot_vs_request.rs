//! The snapshot publisher racing requests (Proposition 2, assumption i, for
//! snapshots): one request's store sequence never goes back, and the block
//! it gets belongs to one snapshot (its text is the one built at its store
//! sequence). Runs the real `SnapshotPublisher::publish_pass`,
//! `Construction::commit` and `Requester::snapshot`.

#![cfg(loom)]

use loom_tests::{construction_with, explore, explore_broken, rejects, spawn, standup};
use pfm::{Request, WallTime};
use pfm_serve::sync::fault::Fault;
use pfm_serve::sync::{Shared, queue};
use pfm_serve::{Changed, Contexts, Metrics, Requester, SnapshotPublisher, wall_clock};
use std::sync::Arc;

fn model() {
    let mut construction = construction_with(standup("9:30am", 1_750_000_000));
    let contexts = Shared::new(Contexts::default());
    let request = Request::new(
        "the standup with Alex is at",
        WallTime::from_secs(1_750_200_000),
    )
    .with_participants(["Alex Rivera"]);
    let context = contexts
        .register(
            request,
            false,
            &construction.versions().load(),
            &wall_clock(),
        )
        .unwrap();
    let first = context.snapshot().store_seq;
    let metrics = Arc::new(Metrics::default());
    let mut publisher = SnapshotPublisher::new(
        construction.versions().clone(),
        contexts.clone(),
        wall_clock(),
        metrics.clone(),
    );
    // Construction commits the revision, then the publisher runs: the
    // request races both publications.
    construction
        .commit(vec![standup("10:45am", 1_750_086_400)])
        .unwrap();
    let versions = construction.versions().clone();
    let writer = spawn(move || {
        publisher.publish_pass(&Changed::Everything);
        construction
            .commit(vec![standup("11:15am", 1_750_100_000)])
            .unwrap();
        publisher.publish_pass(&Changed::Everything);
    });
    let (tx, _rx) = queue::bounded(1);
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (tx, metrics, context) = (tx.clone(), metrics.clone(), context.clone());
            let versions = versions.clone();
            spawn(move || {
                let mut requester = Requester::new(tx, versions, metrics, wall_clock());
                let mut last = 0;
                for _ in 0..2 {
                    let served = requester.snapshot(&context);
                    let expected = match served.store_seq - first {
                        0 => "9:30am",
                        1 => "10:45am",
                        _ => "11:15am",
                    };
                    assert!(
                        served.block.text.contains(expected),
                        "snapshot at seq {} holds the block of another version: {}",
                        served.store_seq,
                        served.block.text
                    );
                    assert!(served.store_seq >= last, "store sequence went back");
                    last = served.store_seq;
                }
            })
        })
        .collect();
    for reader in readers {
        reader.join().unwrap();
    }
    writer.join().unwrap();
}

#[test]
fn monotone_and_whole_snapshots() {
    assert!(explore("snapshot_vs_request", model) > 1);
}

#[test]
fn publishing_block_and_sequence_separately_is_caught() {
    let output = rejects("broken_split_snapshot");
    assert!(output.contains("another version"), "{output}");
}

#[test]
#[ignore = "broken variant: run by publishing_block_and_sequence_separately_is_caught, expected to fail"]
fn broken_split_snapshot() {
    explore_broken("snapshot_vs_request", Fault::SplitSnapshot, model);
}
