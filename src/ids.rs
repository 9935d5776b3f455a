//! The identifiers every layer names: fact ids and commit sequence numbers.
//! A leaf module (it imports nothing of the crate), so `error`, `fact` and
//! `time` can all name a fact without importing each other.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Commit sequence number: the ledger's transaction time. Every commit that
/// changes the store gets the next one; intervals are half-open in it.
pub type Seq = u64;

/// Identifies a fact for its whole life (history included). Never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FactId(pub u64);

impl fmt::Display for FactId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "f{}", self.0)
    }
}
