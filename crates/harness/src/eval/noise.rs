//! Key noise (Section 7.2, Table 16): Proposition 1 assumes that revisions of
//! a slot share a key; this module breaks that premise after extraction.
//!
//! Starting from the keys and values the rule extractor filed in the clean
//! keyed store:
//! - a **missed merge** (rate `p`) gives a keyed message a key of its own:
//!   if it is a revision, the value it should have closed stays active; if a
//!   later revision should have closed it, it stays active itself. Either way
//!   a chain with `r ≥ 1` revisions keeps a stale value with probability
//!   `1 − (1 − p)^(r+1)` (this per-message rate reproduces the paper's
//!   stale exposure at every `p` of Table 16, where a per-revision rate
//!   would give `1 − (1 − p)^r`);
//! - a **false merge** (rate `q`) files a keyed message under another key of
//!   the instance, drawn uniformly, so it closes that key's value (possibly
//!   the current value of another chain) and leaves its own chain's previous
//!   value active.
//!
//! A keyed message is missed with probability `p`, else falsely merged with
//! probability `q`.

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

use super::arms::Filed;
use pfm::fact::Key;

/// The grid of Table 16.
pub const MISSED: [f64; 5] = [0.0, 0.05, 0.1, 0.2, 0.4];
/// False-merge rates of Table 16.
pub const FALSE: [f64; 4] = [0.0, 0.05, 0.1, 0.2];

/// Perturbs the clean store's filing of each message at rates `p` and `q`.
/// Deterministic in `rng_seed`.
pub fn perturb(filed: &[Filed], p: f64, q: f64, rng_seed: u64) -> Vec<Filed> {
    let mut keys: Vec<&Key> = filed.iter().flatten().map(|(k, _)| k).collect();
    keys.sort();
    keys.dedup();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(rng_seed);
    filed
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (key, value) = f.as_ref()?;
            let missed = rng.random_bool(p);
            let merged = !missed && rng.random_bool(q);
            let key = if missed {
                Key {
                    qualifier: Some(format!("missed merge {i}").into()),
                    ..key.clone()
                }
            } else if merged && keys.len() > 1 {
                let others: Vec<&&Key> = keys.iter().filter(|k| **k != key).collect();
                (*others[rng.random_range(0..others.len())]).clone()
            } else {
                key.clone()
            };
            Some((key, value.clone()))
        })
        .collect()
}
