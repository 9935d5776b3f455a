//! The text measures admission uses: the exact-duplicate hash and each
//! fact's admission signature (content and value-bearing tokens), which
//! makes absorption checks a merge of two short sorted arrays instead of a
//! re-normalization of every candidate.
//!
//! Tokens are compared by hash: a store keeps 32 bits of each, and a
//! match on those is confirmed on 64 bits ([`Signature`]), where two
//! different tokens collide with probability about 2^-64 per comparison.

use std::fmt;
use std::hash::BuildHasher;
use std::marker::PhantomData;
use std::ptr::NonNull;

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
    // Most texts quote nothing: one scan for a quote byte (each of the
    // three marks holds one) instead of splitting character by character.
    if !raw.bytes().any(|b| b == b'"' || b == 0xE2) {
        return values;
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
///
/// A store keeps each signature with 32-bit hashes ([`Signature`], folded
/// from the 64-bit ones): half the bytes, and still a filter with no false
/// negatives for what absorption asks first, since hashing keeps equal
/// sets equal and a subset a subset. Only a candidate that passes it is
/// confirmed on `Exact` signatures, recomputed from both texts, so a
/// 32-bit collision can never absorb a fact (issue 24).
///
/// Sixteen bytes, and as an `Option` too (a signature slot): the hashes are
/// a `Box<[H]>` held as a thin pointer with the two counts beside it, where
/// the box's own length and a text hash made a slot 24 bytes. No crate
/// holds a boxed slice's length outside it, so the few unsafe lines are
/// here, each with its `SAFETY` comment. The text hash a store needs to
/// unlist a fact is the fact's text's, recomputed then ([`Measures`]).
pub struct Signature<H = u32> {
    /// The value hashes (`..values`), then the content hashes: the
    /// pointer of a `Box<[H]>` of `len` hashes, owned.
    hashes: NonNull<H>,
    len: u32,
    values: u32,
    owns: PhantomData<Box<[H]>>,
}

const _: () = assert!(std::mem::size_of::<Option<Signature>>() == 16);

// SAFETY: a signature owns its hashes as the `Box<[H]>` it was made from
// does, and shares them only through `&self`.
unsafe impl<H: Send> Send for Signature<H> {}
// SAFETY: as above; `&Signature` gives out only `&[H]`.
unsafe impl<H: Sync> Sync for Signature<H> {}

impl<H> Signature<H> {
    /// A signature of `hashes`, the first `values` of them value hashes.
    fn from_parts(hashes: Vec<H>, values: u32) -> Self {
        let len = u32::try_from(hashes.len()).expect("a text has fewer than 2^32 tokens");
        Signature {
            hashes: NonNull::from(Box::leak(hashes.into_boxed_slice())).cast(),
            len,
            values,
            owns: PhantomData,
        }
    }

    /// All the hashes, values first.
    fn hashes(&self) -> &[H] {
        // SAFETY: `hashes` and `len` are the pointer and length of the box
        // `from_parts` leaked, which lives until `drop`.
        unsafe { std::slice::from_raw_parts(self.hashes.as_ptr(), self.len as usize) }
    }

    /// The value hashes.
    fn values(&self) -> &[H] {
        &self.hashes()[..self.values as usize]
    }

    /// The content hashes.
    fn content(&self) -> &[H] {
        &self.hashes()[self.values as usize..]
    }
}

impl<H> Drop for Signature<H> {
    fn drop(&mut self) {
        let all = std::ptr::slice_from_raw_parts_mut(self.hashes.as_ptr(), self.len as usize);
        // SAFETY: `all` is the box `from_parts` leaked, rebuilt once, here.
        drop(unsafe { Box::from_raw(all) });
    }
}

impl<H: Clone> Clone for Signature<H> {
    fn clone(&self) -> Self {
        Signature::from_parts(self.hashes().to_vec(), self.values)
    }
}

impl<H: PartialEq> PartialEq for Signature<H> {
    fn eq(&self, other: &Self) -> bool {
        self.values == other.values && self.hashes() == other.hashes()
    }
}

impl<H: Eq> Eq for Signature<H> {}

impl<H: fmt::Debug> fmt::Debug for Signature<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Signature")
            .field("values", &self.values())
            .field("content", &self.content())
            .finish()
    }
}

/// A signature on 64-bit token hashes, computed when admission must be
/// sure; two different tokens collide with probability about 2^-64.
pub type Exact = Signature<u64>;

fn sorted<H: Ord>(mut hashes: Vec<H>) -> Vec<H> {
    hashes.sort_unstable();
    hashes.dedup();
    hashes
}

/// The signature of a text, given as observed and [`text::normalize`]d,
/// each token's 64-bit hash cut to `H` by `width`.
fn signature<H: Ord>(raw: &str, normalized: &str, width: impl Fn(u64) -> H) -> Signature<H> {
    let mut hashes = sorted(
        value_hashes(raw, normalized)
            .into_iter()
            .map(&width)
            .collect(),
    );
    let values = u32::try_from(hashes.len()).expect("a text has fewer than 2^32 tokens");
    let content = text::content_tokens(normalized).map(|t| width(FxBuildHasher.hash_one(t)));
    hashes.extend(sorted(content.collect()));
    Signature::from_parts(hashes, values)
}

impl Exact {
    /// The exact signature of a text, given as observed and
    /// [`text::normalize`]d.
    pub fn new(raw: &str, normalized: &str) -> Self {
        signature(raw, normalized, |h| h)
    }
}

impl Signature {
    /// The stored signature of a text, given as observed and
    /// [`text::normalize`]d: `Exact::new`'s with each hash folded to 32
    /// bits.
    pub fn of(raw: &str, normalized: &str) -> Self {
        signature(raw, normalized, super::id_lists::fold)
    }

    /// Hash of the value-bearing tokens, bucketing absorption candidates.
    pub fn value_hash(&self) -> u64 {
        FxBuildHasher.hash_one(self.values())
    }
}

/// What admission measures of a new text: its text hash ([`text_hash`],
/// for the duplicate check and the text-hash map) and its [`Signature`]
/// (kept while the fact is current).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Measures {
    /// The text hash.
    pub text: u32,
    /// The signature.
    pub signature: Signature,
}

impl Measures {
    /// The measures of a text, given as observed and [`text::normalize`]d.
    pub fn of(raw: &str, normalized: &str) -> Self {
        Measures {
            text: text_hash(normalized),
            signature: Signature::of(raw, normalized),
        }
    }
}

impl<H: Ord> Signature<H> {
    /// Whether both texts carry the same value-bearing tokens.
    pub fn same_values(&self, other: &Self) -> bool {
        self.values() == other.values()
    }

    /// Whether every content token of `self` is among `other`'s: `self`
    /// restates `other` (perhaps more briefly) and says nothing it lacks.
    /// "X is head of state" is not contained in "X is head of government",
    /// however many words they share.
    pub fn contained_in(&self, other: &Self) -> bool {
        let mut theirs = other.content().iter();
        self.content().iter().all(|t| theirs.any(|o| o == t))
    }

    /// Token Jaccard similarity of the content tokens, `|A ∩ B| / |A ∪ B|`;
    /// 1.0 for two empty sets.
    pub fn jaccard(&self, other: &Self) -> f64 {
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
/// 16 bytes and no hash-map slot (a map cost ~56 bytes a fact, issue 24's
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
            let extra = i + 1 - self.by_id.len();
            super::reserve_by_eighths(&mut self.by_id, extra);
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

    fn exact(s: &str) -> Exact {
        Exact::new(s, &normalize(s))
    }

    #[test]
    fn quoted_words_are_values_in_straight_and_curly_quotes() {
        let hash = |t: &str| FxBuildHasher.hash_one(t);
        let values = |text: &str| value_hashes(text, &normalize(text));
        for text in [
            "we read \"dune\" today",
            "we read \u{201C}dune\u{201D} today",
        ] {
            assert_eq!(values(text), vec![hash("dune")], "{text}");
        }
        assert!(values("we read dune today").is_empty());
        // A curly apostrophe shares the quotes' first byte and quotes nothing.
        assert!(values("we read dune\u{2019}s sequel").is_empty());
    }

    #[test]
    fn a_signature_holds_its_hashes_as_built_and_clones_them() {
        for text in [
            "",
            "the of",
            "Ana moved to Lisbon in May 2024",
            "\"Dune\" by Frank Herbert",
        ] {
            let normalized = normalize(text);
            let (s, e) = (sig(text), exact(text));
            let values = value_hashes(text, &normalized);
            assert_eq!(s.values().len(), sorted(values.clone()).len(), "{text}");
            assert_eq!(e.values(), &sorted(values)[..], "{text}");
            let content: Vec<u64> = text::content_tokens(&normalized)
                .map(|t| FxBuildHasher.hash_one(t))
                .collect();
            assert_eq!(e.content(), &sorted(content)[..], "{text}");
            let copy = s.clone();
            assert_eq!(copy, s);
            assert_eq!(format!("{copy:?}"), format!("{s:?}"));
            drop(s);
            assert_eq!(
                copy.hashes().len(),
                copy.values().len() + copy.content().len()
            );
        }
        assert_ne!(sig("Ana moved to Lisbon"), sig("Ana moved to Porto"));
    }

    /// Two lowercase content words (not stop words, not value-shaped) whose
    /// token hashes agree in the 32 bits a store keeps: a birthday search
    /// over five-letter words, deterministic since FxHash is fixed.
    fn colliding_words() -> (String, String) {
        let mut seen = rustc_hash::FxHashMap::default();
        for i in 0u32..26u32.pow(5) {
            let word: String = (0..5)
                .map(|k| char::from(b'a' + (i / 26u32.pow(k) % 26) as u8))
                .collect();
            if text::is_stop_word(&word) || is_value_token(&word) {
                continue;
            }
            let folded = super::super::id_lists::fold(FxBuildHasher.hash_one(word.as_str()));
            if let Some(other) = seen.insert(folded, word.clone()) {
                return (other, word);
            }
        }
        unreachable!("26^5 words hold a 32-bit collision")
    }

    #[test]
    fn a_stored_collision_passes_the_filter_and_fails_the_exact_check() {
        let (a, b) = colliding_words();
        let (x, y) = (format!("alex likes {a}"), format!("alex likes {b}"));
        assert!(
            sig(&x).contained_in(&sig(&y)),
            "the stored signatures collide"
        );
        assert_eq!(sig(&x).jaccard(&sig(&y)), 1.0);
        assert!(!exact(&x).contained_in(&exact(&y)));
        assert!(exact(&x).jaccard(&exact(&y)) < 1.0);
    }

    #[test]
    fn a_stored_collision_never_absorbs_a_fact() {
        let (a, b) = colliding_words();
        let mut m = crate::Memory::new(crate::Config::default()).unwrap();
        let said = |words: &str, day: i64| {
            crate::Observation::new(
                format!("Alex Rivera likes {words}"),
                crate::time::WallTime::from_secs(1_767_225_600 + day * 86_400),
            )
            .with_entities(["Alex Rivera"])
        };
        let first = m.observe(said(&a, 0)).unwrap();
        let again = m.observe(said(&format!("{a}!!"), 1)).unwrap();
        assert_eq!(
            again.outcome,
            crate::Outcome::Absorbed {
                into: first.outcome.fact()
            },
            "the same words restated are absorbed"
        );
        let other = m.observe(said(&b, 2)).unwrap();
        assert!(
            matches!(other.outcome, crate::Outcome::Created { .. }),
            "{a:?} and {b:?} differ: {other:?}"
        );
    }

    /// The stored signature is a filter with no false negatives: whatever
    /// two texts' exact signatures say of values and containment, their
    /// stored ones say too.
    #[test]
    fn stored_signatures_keep_what_exact_ones_find() {
        let words = [
            "alex", "likes", "oat", "milk", "on", "floor", "3", "4", "Berlin", "the",
        ];
        for mask_a in 1u32..1 << words.len() {
            for mask_b in [mask_a, mask_a | 0b11, (mask_a * 7) & 0x3ff, 0x3ff] {
                let text = |mask: u32| {
                    let picked = words.iter().enumerate().filter(|(i, _)| mask >> i & 1 == 1);
                    picked.map(|(_, w)| *w).collect::<Vec<_>>().join(" ")
                };
                let (x, y) = (text(mask_a), text(mask_b));
                let (ex, ey) = (exact(&x), exact(&y));
                let (sx, sy) = (sig(&x), sig(&y));
                if ex.same_values(&ey) {
                    assert!(sx.same_values(&sy), "{x:?} / {y:?}");
                }
                if ex.contained_in(&ey) {
                    assert!(sx.contained_in(&sy), "{x:?} / {y:?}");
                }
            }
        }
    }

    #[test]
    fn value_tokens_pick_numbers_and_months() {
        let a = sig("The standup with Alex is moved to 9:30am on December 2 in room 16C");
        let b = sig("room 16C, 9:30 AM, Dec 2: the standup with Alex");
        let c = sig("The standup with Alex is moved to 9:30am on December 3 in room 16C");
        assert!(a.same_values(&b));
        assert!(!a.same_values(&c));
        assert_eq!(a.value_hash(), b.value_hash());
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
