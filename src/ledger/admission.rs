//! The text measures admission uses: the exact-duplicate hash and each
//! fact's admission signature (content and value-bearing tokens), which
//! makes absorption checks a merge of two short sorted arrays instead of a
//! re-normalization of every candidate.
//!
//! Tokens are compared by 64-bit hash; two different tokens collide with
//! probability about 2^-64 per comparison.

use std::hash::BuildHasher;

use rustc_hash::FxBuildHasher;

use crate::ids::FactId;
use crate::text;

/// Hash of normalized text, for the exact-duplicate short-circuit
/// (MemStrata): the 32 bits of it the text-hash map keeps
/// (`id_lists::HashedIds`). Collisions are resolved by comparing
/// the normalized texts.
pub fn text_hash(normalized: &str) -> u32 {
    super::id_lists::fold(FxBuildHasher.hash_one(normalized))
}

/// Whether a normalized token carries a value by its shape: it has a digit
/// (times, dates, amounts, rooms) or is a month. Two sentences that differ
/// in such tokens state different values, however similar the rest is.
pub fn is_value_token(token: &str) -> bool {
    token.bytes().any(|b| b.is_ascii_digit()) || text::is_month(token)
}

/// The hashes of the value-bearing tokens of a text, normalized: tokens
/// shaped like values ([`is_value_token`]), words capitalised in `raw` that
/// are not stop words (names and places: "born in Berkeley" / "born in
/// Botevgrad"), and every token inside double quotes (titles, quoted
/// values). Capitalisation is read from the raw text because normalization
/// lowercases it; a capitalised sentence opener counts too, which only
/// makes absorption rarer, never lossy. Hashed as they are found: every
/// admitted and every replayed fact computes them.
fn value_hashes(raw: &str, normalized: &str) -> Vec<u64> {
    let hash = |t: &str| FxBuildHasher.hash_one(t);
    let mut values: Vec<u64> = text::tokens(normalized)
        .filter(|t| is_value_token(t))
        .map(hash)
        .collect();
    let words = raw.split(|c: char| !c.is_alphanumeric());
    for word in words.filter(|w| w.chars().next().is_some_and(char::is_uppercase)) {
        let norm = text::normalize(word);
        values.extend(text::content_tokens(&norm).map(hash));
    }
    for (i, span) in raw.split(['"', '\u{201C}', '\u{201D}']).enumerate() {
        // Odd pieces lie between an opening and a closing quote.
        if i % 2 == 1 {
            values.extend(text::tokens(&text::normalize(span)).map(hash));
        }
    }
    values
}

/// What admission compares: the sorted, de-duplicated hashes of a text's
/// value-bearing tokens (`value_hashes`) and of its content tokens (no stop
/// words). Both lie in one allocation, values first: a store keeps one
/// signature per current fact, and two boxes cost a second allocation and
/// 16 bytes more each (issue 24's heap table).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// Text hash ([`text_hash`]), for the duplicate check: 32 bits, so a
    /// signature slot is 24 bytes.
    pub text: u32,
    values: u32,
    /// The value hashes (`..values`), then the content hashes.
    hashes: Box<[u64]>,
}

fn sorted(mut hashes: Vec<u64>) -> Vec<u64> {
    hashes.sort_unstable();
    hashes.dedup();
    hashes
}

impl Signature {
    /// The signature of a text, given as observed and [`text::normalize`]d.
    pub fn of(raw: &str, normalized: &str) -> Self {
        let mut hashes = sorted(value_hashes(raw, normalized));
        let values = u32::try_from(hashes.len()).expect("a text has fewer than 2^32 tokens");
        let content = text::content_tokens(normalized).map(|t| FxBuildHasher.hash_one(t));
        hashes.extend(sorted(content.collect()));
        Signature {
            text: text_hash(normalized),
            hashes: hashes.into(),
            values,
        }
    }

    fn values(&self) -> &[u64] {
        &self.hashes[..self.values as usize]
    }

    fn content(&self) -> &[u64] {
        &self.hashes[self.values as usize..]
    }

    /// Hash of the value-bearing tokens, bucketing absorption candidates.
    pub fn value_hash(&self) -> u64 {
        FxBuildHasher.hash_one(self.values())
    }

    /// Whether both texts carry the same value-bearing tokens.
    pub fn same_values(&self, other: &Signature) -> bool {
        self.values() == other.values()
    }

    /// Whether every content token of `self` is among `other`'s: `self`
    /// restates `other` (perhaps more briefly) and says nothing it lacks.
    /// "X is head of state" is not contained in "X is head of government",
    /// however many words they share.
    pub fn contained_in(&self, other: &Signature) -> bool {
        let mut theirs = other.content().iter();
        self.content().iter().all(|t| theirs.any(|o| o == t))
    }

    /// Token Jaccard similarity of the content tokens, `|A ∩ B| / |A ∪ B|`;
    /// 1.0 for two empty sets.
    pub fn jaccard(&self, other: &Signature) -> f64 {
        let (a, b) = (self.content(), other.content());
        if a.is_empty() && b.is_empty() {
            return 1.0;
        }
        let (mut i, mut j, mut inter) = (0, 0, 0usize);
        while i < a.len() && j < b.len() {
            match a[i].cmp(&b[j]) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    inter += 1;
                    i += 1;
                    j += 1;
                }
            }
        }
        inter as f64 / (a.len() + b.len() - inter) as f64
    }
}

/// The admission signature of each current fact, by fact id: one slot
/// per id up to the largest signed (ids are dense), so an entry costs its
/// 32 bytes and no hash-map slot (a map cost ~56 bytes a fact, issue 24's
/// heap table). Invariant: `len` counts the slots that hold a signature.
#[derive(Clone, Debug, Default)]
pub struct Signatures {
    by_id: Vec<Option<Signature>>,
    len: usize,
}

impl Signatures {
    /// The signature of fact `id`, if it has one.
    pub fn get(&self, id: FactId) -> Option<&Signature> {
        self.by_id.get(slot(id))?.as_ref()
    }

    /// Sets the signature of fact `id`.
    pub fn insert(&mut self, id: FactId, signature: Signature) {
        let i = slot(id);
        if i >= self.by_id.len() {
            // Grown by an eighth at a time rather than doubled: ids are
            // dense and only ever grow, so doubling left a quarter of the
            // slots spare on average (issue 24's heap table); an eighth
            // keeps the growth amortized O(1) per id.
            let capacity = self.by_id.capacity();
            if i >= capacity {
                let want = (i + 1).max(capacity + capacity / 8);
                self.by_id.reserve_exact(want - self.by_id.len());
            }
            self.by_id.resize(i + 1, None);
        }
        if self.by_id[i].replace(signature).is_none() {
            self.len += 1;
        }
    }

    /// Takes the signature of fact `id` out.
    pub fn remove(&mut self, id: FactId) -> Option<Signature> {
        let taken = self.by_id.get_mut(slot(id))?.take();
        self.len -= usize::from(taken.is_some());
        taken
    }

    /// How many facts have a signature.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no fact has one.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A fact id's slot (ids count up from 0 and index `Ledger::facts` too).
fn slot(id: FactId) -> usize {
    usize::try_from(id.0).expect("a fact id fits in memory's address space")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::normalize;

    fn sig(s: &str) -> Signature {
        Signature::of(s, &normalize(s))
    }

    #[test]
    fn value_tokens_pick_numbers_and_months() {
        let a = sig("The standup with Alex is moved to 9:30am on December 2 in room 16C");
        let b = sig("room 16C, 9:30 AM, Dec 2: the standup with Alex");
        let c = sig("The standup with Alex is moved to 9:30am on December 3 in room 16C");
        assert!(a.same_values(&b));
        assert!(!a.same_values(&c));
        assert_eq!(a.value_hash(), b.value_hash());
        assert_eq!(size_of::<Option<Signature>>(), 24, "a signature slot");
    }

    #[test]
    fn names_and_quoted_spans_carry_values() {
        let a = sig(
            "Ivan Vazov, Bulgarian poet, novelist and playwright of the revival, was born in Berkeley",
        );
        let b = sig(
            "Ivan Vazov, Bulgarian poet, novelist and playwright of the revival, was born in Botevgrad",
        );
        assert!(!a.same_values(&b), "place names are values");
        assert!(a.jaccard(&b) >= 0.8, "the case the old rule absorbed");
        let q = sig(r#"Alex's favourite film is "the shining""#);
        let r = sig(r#"Alex's favourite film is "the birds""#);
        assert!(
            !q.same_values(&r),
            "quoted spans are values, whatever their case"
        );
        assert!(sig("the standup is at 9am").same_values(&sig("The standup is at 9am")));
    }

    #[test]
    fn containment_is_one_way_and_ignores_stop_words() {
        let state = sig("Mark Rutte was the head of state of the Netherlands until 2024");
        let gov = sig("Mark Rutte was the head of government of the Netherlands until 2024");
        assert!(!state.contained_in(&gov) && !gov.contained_in(&state));
        let short = sig("Alex prefers oat milk");
        let long = sig("Alex prefers oat milk in the coffee");
        assert!(short.contained_in(&long));
        assert!(!long.contained_in(&short));
        assert!(sig("Alex prefers oat milk!").contained_in(&short));
    }

    #[test]
    fn jaccard_on_content_tokens() {
        let a = sig("Alex prefers oat milk in coffee");
        let b = sig("Alex prefers oat milk in his coffee");
        let c = sig("Alex prefers almond milk");
        assert_eq!(a.jaccard(&b), 1.0, "stop words do not count");
        // {alex, prefers, oat, milk, coffee} vs {alex, prefers, almond, milk}: 3 / 6.
        assert!((a.jaccard(&c) - 0.5).abs() < 1e-12);
        assert_eq!(sig("the of").jaccard(&sig("and")), 1.0);
    }
}
