//! Recency modes (`pfm::rank::Recency`): the paper's fixed half-life, one
//! that follows the store's own time span (the default), and none. Two
//! facts that match a query equally, a year apart, and the factor between
//! their scores under each mode.

use pfm::config::Config;
use pfm::rank::Recency;
use pfm::retrieve::{Request, retrieve};
use pfm::{Memory, Observation, WallTime};

const DAY: i64 = 86_400;
const START: i64 = 1_735_689_600; // 2025-01-01

/// A store with the same sentence said at `start` and `days` later, and
/// a filler fact between so neither end is the only document.
fn store(days: i64) -> Memory {
    let mut m = Memory::new(Config::default()).unwrap();
    for (text, at) in [
        ("Ana plays the cello on weekends", START),
        ("the garden needs water", START + days * DAY / 2),
        ("Ana plays the cello with friends", START + days * DAY),
    ] {
        m.observe(Observation::new(text, WallTime::from_secs(at)))
            .unwrap();
    }
    m
}

/// The old fact's score over the new one's for "Ana cello", asked a day
/// after the last fact.
fn old_over_new(m: &Memory, days: i64, recency: Option<Recency>) -> f32 {
    let mut r = Request::new(
        "does Ana play the cello",
        WallTime::from_secs(START + (days + 1) * DAY),
    );
    if let Some(mode) = recency {
        r = r.with_recency(mode);
    }
    let block = retrieve(&m.version(), &r).unwrap();
    let score = |needle: &str| {
        block
            .lines
            .iter()
            .find(|l| l.line.contains(needle))
            .unwrap_or_else(|| panic!("{needle:?} not in {:?}", block.text))
            .score
    };
    score("weekends") / score("friends")
}

#[test]
fn span_recency_keeps_an_old_valid_fact_within_reach() {
    let m = store(360);
    let fixed = old_over_new(&m, 360, Some(Recency::Fixed));
    let span = old_over_new(&m, 360, Some(Recency::Span));
    let off = old_over_new(&m, 360, Some(Recency::Off));
    // Fixed: twelve 30-day half-lives, the old fact sits at the floor (0.15).
    assert!(fixed < 0.2, "fixed {fixed}");
    // Span: one half-life over the store's 360 days: about 0.5 · 0.85 + 0.15.
    assert!((0.5..0.65).contains(&span), "span {span}");
    // Off: the two lines differ only in their last words.
    assert!((0.9..1.1).contains(&off), "off {off}");
    // The store's default is off: keys, not decay, keep answers current.
    assert_eq!(old_over_new(&m, 360, None), off);
}

#[test]
fn span_recency_is_the_fixed_one_in_a_store_shorter_than_a_half_life() {
    let m = store(20);
    assert_eq!(
        old_over_new(&m, 20, Some(Recency::Span)),
        old_over_new(&m, 20, Some(Recency::Fixed))
    );
}

#[test]
fn recency_is_a_request_field_over_json() {
    let r: Request =
        serde_json::from_str(r#"{"context": "x", "at": 0, "recency": "off"}"#).unwrap();
    assert_eq!(r.recency, Some(Recency::Off));
    let r: Request = serde_json::from_str(r#"{"context": "x", "at": 0}"#).unwrap();
    assert_eq!(r.recency, None);
    assert!(
        serde_json::from_str::<Request>(r#"{"context": "x", "at": 0, "recency": "soon"}"#).is_err()
    );
}
