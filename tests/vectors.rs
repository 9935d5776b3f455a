//! Fact vectors live in the segments' scan rows only: they survive merges,
//! re-listing copies them out of the index, and a fact reinstated after its
//! row was merged away is embedded again — never served without a vector.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pfm::config::{Config, MergeMode};
use pfm::fact::Op;
use pfm::rank::Ranker;
use pfm::vector::{Encoder, Vector};
use pfm::{Key, Memory, Observation, Request};

mod common;

use common::{Words, day};

fn key() -> Key {
    Key::new("Halcyon", "budget_cap").unwrap()
}

fn budget(value: &str, d: i64) -> Observation {
    Observation::new(format!("The Halcyon budget cap is {value}."), day(d))
        .with_key(key(), Some(value))
}

/// The store's top fact for a dense query (the stand-in encoder embeds it).
fn dense_top(m: &Memory, query: &str) -> String {
    let v = Words::default().encode(&[query]).unwrap();
    let request = Request::new(query, day(90))
        .with_ranker(Ranker::named("dense_validity").unwrap())
        .with_k(1)
        .with_vector(Arc::new(Vector::quantize(&v[0])));
    let block = m.retrieve(&request).unwrap();
    block
        .lines
        .first()
        .map(|l| l.line.clone())
        .unwrap_or_default()
}

#[test]
fn vectors_survive_merges_and_a_reinstated_fact_is_embedded_again() {
    let encoded = Arc::new(AtomicUsize::new(0));
    let mut m = Memory::new(Config {
        merge: MergeMode::Inline,
        ..Config::default()
    })
    .unwrap();
    m.set_encoder(Box::new(Words(encoded.clone())), false)
        .unwrap();
    let old = m.observe(budget("$30k", 1)).unwrap().outcome.fact();
    let new = m.observe(budget("$40k", 2)).unwrap().outcome.fact();
    // Enough other facts, one commit each, that merges drop the superseded
    // row.
    for i in 0..60 {
        m.observe(Observation::new(
            format!("note {i} about the garden shed"),
            day(3 + i),
        ))
        .unwrap();
    }
    m.wait_for_merges();
    assert_eq!(
        encoded.load(Ordering::SeqCst),
        62,
        "each fact embedded once"
    );
    let (embedded, bytes) = m.vector_footprint();
    assert_eq!(embedded, 61, "every active fact has its row");
    // One copy: 16 components and a 4-byte scale per indexed row.
    assert!((61 * 20..70 * 20).contains(&bytes), "{bytes} bytes");
    assert!(
        m.version().active.vectors_of(old).is_none(),
        "the superseded row was merged away"
    );
    assert!(dense_top(&m, "what is the Halcyon budget cap").contains("$40k"));

    // Revoking the new value reinstates the old one, whose row is gone: it
    // is embedded again, once, and found by the dense arm.
    let mut revoke =
        Observation::new("That last budget update was wrong.", day(70)).with_key(key(), None);
    revoke.op = Op::Revoke;
    m.observe(revoke).unwrap();
    assert_ne!(m.ledger().active_for_key(&key()).unwrap().id(), new);
    assert_eq!(
        encoded.load(Ordering::SeqCst),
        64,
        "the revocation and the reinstated fact"
    );
    assert!(dense_top(&m, "what is the Halcyon budget cap").contains("$30k"));
    assert_eq!(m.vector_footprint().0, 61);
}
