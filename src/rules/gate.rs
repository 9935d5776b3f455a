//! Abstention gates (paper Section 5, Appendix D): when a request should get
//! an empty block rather than the best facts the store happens to have.

use super::identity::Resolution;
use super::slot::requested_slot;
use crate::rank::Scored;
use crate::text;

/// The slot gate: passes when the request asks for no slot the detector
/// knows, or when one of the `retrieved` facts states the requested slot for
/// an entity whose posterior is at least `tau`.
///
/// A request with no detectable slot passes because the gate has nothing to
/// check; the detector (and so the gate) depends on the slot inventory.
pub fn slot_passes(context: &str, retrieved: &[Scored], resolution: &Resolution, tau: f64) -> bool {
    let Some(slot) = requested_slot(context) else {
        return true;
    };
    retrieved.iter().any(|s| {
        s.body
            .key
            .as_ref()
            .is_some_and(|k| &*k.slot == slot.name && resolution.posterior(&k.entity) >= tau)
    })
}

/// The margin gate: passes when the top fact of `shortlist` (best first)
/// scores at least `tau` times the shortlist's mean and its text shares at
/// least a third of the request's distinct content terms. Needs no slot
/// inventory.
pub fn margin_passes(context: &str, shortlist: &[Scored], tau: f32) -> bool {
    let Some(top) = shortlist.first() else {
        return false;
    };
    let mean = shortlist.iter().map(|s| s.score).sum::<f32>() / shortlist.len() as f32;
    if top.score < tau * mean {
        return false;
    }
    let norm = text::normalize(context);
    let mut terms: Vec<&str> = text::content_tokens(&norm).collect();
    terms.sort_unstable();
    terms.dedup();
    if terms.is_empty() {
        return false;
    }
    let fact_norm = text::normalize(&top.body.text);
    let fact: Vec<&str> = text::content_tokens(&fact_norm).collect();
    let shared = terms.iter().filter(|t| fact.contains(t)).count();
    3 * shared >= terms.len()
}
