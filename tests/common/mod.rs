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

/// A stand-in encoder for tests of the vector plumbing (the real model's
/// are in `pfm-dense` and over HTTP): a bag of words hashed into 16
/// dimensions, so texts that share words get similar vectors. Counts the
/// texts it encodes.
#[allow(dead_code)] // not every test binary uses every fixture
#[derive(Default)]
pub struct Words(pub std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl pfm::vector::Encoder for Words {
    fn dim(&self) -> usize {
        16
    }
    fn encode(&mut self, texts: &[&str]) -> pfm::error::Result<Vec<Vec<f32>>> {
        self.0
            .fetch_add(texts.len(), std::sync::atomic::Ordering::SeqCst);
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = [0.0f32; 16];
                for w in t.split_whitespace() {
                    let h = w
                        .to_lowercase()
                        .bytes()
                        .fold(7u32, |h, b| h.wrapping_mul(31) ^ u32::from(b));
                    v[h as usize % 16] += 1.0;
                }
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
                v.iter().map(|x| x / norm).collect()
            })
            .collect())
    }
}
