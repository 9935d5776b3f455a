//! Fixtures shared by the integration tests.

use pfm::{Observation, WallTime};

/// Day `d` of June 2025, midnight UTC.
pub fn day(d: i64) -> WallTime {
    WallTime::parse("2025-06-01")
        .unwrap()
        .plus_millis((d - 1) * 86_400_000)
}

/// A message in the conversation with Alex Rivera on day `d`.
#[allow(dead_code)] // not every test binary uses every fixture
pub fn alex(text: &str, d: i64) -> Observation {
    Observation::new(text, day(d)).with_participants(["Alex Rivera"])
}
