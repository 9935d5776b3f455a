//! Fixtures shared by the integration tests.

use pfm::{Observation, WallTime};

/// Day `d` of June 2025, midnight UTC.
pub fn day(d: i64) -> WallTime {
    WallTime::parse("2025-06-01")
        .unwrap()
        .plus_millis((d - 1) * 86_400_000)
}

/// Every retained fact, body and state, oldest first: a change to any
/// field of any fact changes these rows.
#[allow(dead_code)] // not every test binary uses every fixture
pub fn rows(m: &pfm::Memory) -> Vec<String> {
    m.ledger().facts().map(|f| format!("{f:?}")).collect()
}

/// A message in the conversation with Alex Rivera on day `d`.
#[allow(dead_code)] // not every test binary uses every fixture
pub fn alex(text: &str, d: i64) -> Observation {
    Observation::new(text, day(d)).with_participants(["Alex Rivera"])
}

/// The store rebuilt from its retained facts, as a restart does; checks
/// that it holds exactly the same facts.
#[allow(dead_code)] // not every test binary uses every fixture
pub fn restored(m: &pfm::Memory) -> pfm::Memory {
    let l = m.ledger();
    let r = pfm::Memory::restore(
        m.config().clone(),
        l.facts().cloned().collect(),
        l.next_id(),
        l.seq(),
        l.committed_at(),
    )
    .unwrap();
    assert_eq!(rows(&r), rows(m));
    r
}
