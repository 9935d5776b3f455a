//! Idempotent writes: an observe may carry a client `request_id`; the
//! writer keeps each id's receipts, so a retried id is answered with the
//! original receipts and writes nothing. This is what makes a timed-out
//! write safe to retry: the retry either finds the commit (and says so) or
//! finds nothing and commits.
//!
//! # Invariants
//! 1. An id is recorded in the same durable transaction as the commit it
//!    names (table `requests` of the ledger file), never before or after:
//!    after a crash an id is known exactly when its write survived.
//! 2. Only a write that succeeded is recorded; a refused one may be retried
//!    with its id and runs again.
//! 3. The log keeps the newest [`MAX_IDS`] ids and at most [`MAX_RECEIPTS`]
//!    receipts in all, forgetting the oldest first; a retry after that
//!    runs again (README, "Idempotency").
//! 4. Stored receipts hold ids and outcomes only, no text: a key is looked
//!    up again at replay, so an erased fact's key is not repeated.

use std::collections::{HashMap, VecDeque};

use serde::{Deserialize, Serialize};

use pfm::error::{Error, Result};
use pfm::fact::{FactId, Key};
use pfm::memory::{MatchedBy, Memory, Receipt};

/// Most request ids remembered per tenant.
pub const MAX_IDS: usize = 10_000;

/// Most receipts remembered per tenant, over all ids.
pub const MAX_RECEIPTS: usize = 200_000;

/// Longest request id, in bytes.
pub const MAX_ID_BYTES: usize = 128;

/// Checks a client's request id: 1 to [`MAX_ID_BYTES`] visible ASCII
/// characters (a UUID, a hash, a message id); the error says what is wrong.
pub fn check_id(id: &str) -> std::result::Result<(), String> {
    if id.is_empty() || id.len() > MAX_ID_BYTES || !id.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(format!(
            "request_id must be 1 to {MAX_ID_BYTES} visible ASCII characters without spaces (e.g. a UUID); got {} bytes",
            id.len()
        ));
    }
    Ok(())
}

/// What the ledger did with one observation, as a client is told.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Acked {
    /// The commit that applied it.
    pub seq: u64,
    /// The outcome's name (`created`, `superseded`, …).
    pub outcome: String,
    /// The fact it created, restated, was absorbed into or duplicated.
    pub fact: u64,
    /// For `superseded`: the value it displaced.
    pub previous: Option<u64>,
    /// For `history`: the newer version it was placed under.
    pub newer: Option<u64>,
    /// For a retraction (`revoked`, `rejected` without a value): the
    /// predecessor it reinstated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reinstated: Option<u64>,
    /// For `resolved`: the versions it contradicted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contradicted: Vec<u64>,
    /// For `promoted`: the plan it confirmed; for `abandoned`: the plans.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plans: Vec<u64>,
    /// The key it was filed under; not stored (invariant 4).
    #[serde(skip)]
    pub key: Option<String>,
    /// How the extractor found the key; not stored, so a replayed receipt
    /// has none.
    #[serde(skip)]
    pub matched_by: Option<MatchedBy>,
}

impl From<Receipt> for Acked {
    fn from(r: Receipt) -> Self {
        Acked {
            seq: r.seq,
            outcome: r.outcome.name().to_owned(),
            fact: r.outcome.fact().0,
            previous: r.outcome.previous().map(|f| f.0),
            newer: r.outcome.newer().map(|f| f.0),
            reinstated: r.outcome.reinstated().map(|f| f.0),
            contradicted: r.outcome.contradicted().iter().map(|f| f.0).collect(),
            plans: r.outcome.plans().iter().map(|f| f.0).collect(),
            key: r.key.as_ref().map(Key::to_string),
            matched_by: r.matched_by,
        }
    }
}

/// Stored receipts with their keys looked up in the store as it is now
/// (and no `matched_by`: a replay says what was filed, not how it was
/// read, the same before a restart and after).
pub fn with_keys(memory: &Memory, stored: &[Acked]) -> Vec<Acked> {
    stored
        .iter()
        .map(|a| Acked {
            key: memory
                .fact(FactId(a.fact))
                .ok()
                .and_then(|f| f.body.key.as_deref().map(Key::to_string)),
            matched_by: None,
            ..a.clone()
        })
        .collect()
}

/// One stored id: its place in the log and its receipts.
#[derive(Debug, Serialize, Deserialize)]
struct Row {
    order: u64,
    receipts: Vec<Acked>,
}

/// The ids a tenant's writer remembers (see the module doc).
#[derive(Debug, Default)]
pub struct RequestLog {
    receipts: HashMap<String, Vec<Acked>>,
    /// Ids oldest first, with their place numbers.
    order: VecDeque<(u64, String)>,
    next: u64,
    held: usize,
}

/// What a batch must write to the `requests` table: rows to insert and ids
/// to delete.
#[derive(Clone, Debug, Default)]
pub struct LogChanges {
    /// Encoded rows by id.
    pub rows: Vec<(String, Vec<u8>)>,
    /// Forgotten ids.
    pub deletes: Vec<String>,
}

impl RequestLog {
    /// The log as stored (rows from the `requests` table).
    pub fn restore(rows: Vec<(String, Vec<u8>)>) -> Result<RequestLog> {
        let mut decoded = rows
            .into_iter()
            .map(|(id, bytes)| {
                serde_json::from_slice::<Row>(&bytes)
                    .map(|row| (id.clone(), row))
                    .map_err(|e| Error::InvalidState(format!("table requests, row {id:?}: {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        decoded.sort_by_key(|(_, row)| row.order);
        let mut log = RequestLog::default();
        for (id, row) in decoded {
            log.next = row.order + 1;
            log.held += row.receipts.len();
            log.order.push_back((row.order, id.clone()));
            log.receipts.insert(id, row.receipts);
        }
        Ok(log)
    }

    /// The receipts of a recorded id.
    pub fn get(&self, id: &str) -> Option<&[Acked]> {
        self.receipts.get(id).map(Vec::as_slice)
    }

    /// Records an id's receipts, forgetting the oldest ids beyond the
    /// bounds; returns what the `requests` table must change.
    pub fn record(&mut self, id: String, receipts: Vec<Acked>, changes: &mut LogChanges) {
        let order = self.next;
        self.next += 1;
        let row = Row { order, receipts };
        // Infallible: plain numbers and strings.
        changes.rows.push((
            id.clone(),
            serde_json::to_vec(&row).expect("rows serialize"),
        ));
        self.held += row.receipts.len();
        self.order.push_back((order, id.clone()));
        self.receipts.insert(id, row.receipts);
        while self.order.len() > MAX_IDS || (self.held > MAX_RECEIPTS && self.order.len() > 1) {
            let Some((_, old)) = self.order.pop_front() else {
                break;
            };
            if let Some(r) = self.receipts.remove(&old) {
                self.held -= r.len();
            }
            changes.rows.retain(|(id, _)| *id != old);
            changes.deletes.push(old);
        }
    }

    /// Every row, for a rewrite of the whole file.
    pub fn rows(&self) -> Vec<(String, Vec<u8>)> {
        self.order
            .iter()
            .map(|(order, id)| {
                let row = Row {
                    order: *order,
                    receipts: self.receipts[id].clone(),
                };
                // Infallible: plain numbers and strings.
                (
                    id.clone(),
                    serde_json::to_vec(&row).expect("rows serialize"),
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acked(fact: u64) -> Acked {
        Acked {
            seq: fact + 1,
            outcome: "created".into(),
            fact,
            previous: None,
            newer: None,
            reinstated: None,
            contradicted: Vec::new(),
            plans: Vec::new(),
            key: Some("alex/room".into()),
            matched_by: Some(MatchedBy::Slot),
        }
    }

    #[test]
    fn records_survive_a_restore_without_their_keys_and_the_oldest_go_first() {
        let mut log = RequestLog::default();
        let mut changes = LogChanges::default();
        for i in 0..MAX_IDS as u64 + 2 {
            log.record(format!("r{i}"), vec![acked(i)], &mut changes);
        }
        assert_eq!(changes.deletes, ["r0", "r1"]);
        assert!(log.get("r0").is_none() && log.get("r2").is_some());
        let restored = RequestLog::restore(log.rows()).unwrap();
        let again = restored.get("r2").unwrap();
        assert_eq!(again[0].fact, 2);
        assert_eq!(again[0].key, None, "keys are not stored");
        assert_eq!(restored.order.len(), MAX_IDS);
        assert_eq!(restored.next, MAX_IDS as u64 + 2);
    }

    #[test]
    fn receipts_are_bounded_in_all() {
        let mut log = RequestLog::default();
        let mut changes = LogChanges::default();
        let big = vec![acked(0); MAX_RECEIPTS / 2 + 1];
        log.record("a".into(), big.clone(), &mut changes);
        log.record("b".into(), big.clone(), &mut changes);
        assert!(log.get("a").is_none() && log.get("b").is_some());
        // One id over the bound alone is still kept: it was just written.
        log.record("c".into(), vec![acked(0); MAX_RECEIPTS + 1], &mut changes);
        assert!(log.get("c").is_some() && log.get("b").is_none());
    }

    #[test]
    fn ids_are_short_visible_ascii() {
        assert!(check_id("3f2a-uuid").is_ok());
        assert!(check_id("").is_err());
        assert!(check_id("has space").is_err());
        assert!(check_id(&"x".repeat(MAX_ID_BYTES + 1)).is_err());
    }
}
