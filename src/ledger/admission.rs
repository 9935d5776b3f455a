//! The text measures admission uses: the exact-duplicate hash, value-bearing
//! tokens and token Jaccard similarity.

use std::hash::BuildHasher;

use rustc_hash::{FxBuildHasher, FxHashSet};

use crate::text;

/// Hash of normalized text, for the exact-duplicate short-circuit (MemStrata).
/// Collisions are resolved by comparing the normalized texts.
pub fn text_hash(normalized: &str) -> u64 {
    FxBuildHasher.hash_one(normalized)
}

/// Whether a normalized token carries a value: it has a digit (times, dates,
/// amounts, rooms) or is a month. Two sentences that differ only in such
/// tokens state different values, however similar the rest is.
pub fn is_value_token(token: &str) -> bool {
    token.bytes().any(|b| b.is_ascii_digit()) || text::is_month(token)
}

/// The sorted, de-duplicated value-bearing tokens of normalized text.
pub fn value_tokens(normalized: &str) -> Vec<&str> {
    let mut v: Vec<&str> = text::tokens(normalized)
        .filter(|t| is_value_token(t))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Hash of the value-bearing tokens, bucketing absorption candidates.
pub fn value_hash(normalized: &str) -> u64 {
    FxBuildHasher.hash_one(value_tokens(normalized))
}

/// The set of content tokens (no stop words) of normalized text.
pub fn content_set(normalized: &str) -> FxHashSet<&str> {
    text::content_tokens(normalized).collect()
}

/// Token Jaccard similarity `|A ∩ B| / |A ∪ B|`; 1.0 for two empty sets.
pub fn jaccard(a: &FxHashSet<&str>, b: &FxHashSet<&str>) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let inter = a.iter().filter(|t| b.contains(*t)).count();
    inter as f64 / (a.len() + b.len() - inter) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::normalize;

    #[test]
    fn value_tokens_pick_numbers_and_months() {
        let n = normalize("The standup with Alex is moved to 9:30am on December 2 in room 16C");
        assert_eq!(value_tokens(&n), ["16c", "2", "9:30am", "dec"]);
    }

    #[test]
    fn jaccard_on_token_sets() {
        let a = normalize("Alex prefers oat milk in coffee");
        let b = normalize("Alex prefers oat milk in his coffee");
        let c = normalize("Alex prefers almond milk");
        assert_eq!(jaccard(&content_set(&a), &content_set(&b)), 1.0);
        let j = jaccard(&content_set(&a), &content_set(&c));
        assert!((j - 3.0 / 6.0).abs() < 1e-12, "{j}");
    }
}
