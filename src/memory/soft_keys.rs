//! Soft key identity on the write path (`extract::soft`): the keys an open
//! statement's subject already has, as candidates, and the store's cache of
//! phrase embeddings.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::extract::soft::{Candidate, ObjectClass, PhraseEmbedder};
use crate::extract::{relations, slots};
use crate::fact::Key;
use crate::ledger::Ledger;
use crate::limits::MAX_SOFT_CANDIDATES;
use crate::vector::VectorStore;

/// Most phrase embeddings a store caches; a full cache is emptied (the
/// phrases a store meets are few: every relation phrase of its subjects).
pub const MAX_CACHED_PHRASES: usize = 4096;

/// Embeddings of relation phrases, one model call per distinct phrase.
/// `None` remembers a phrase the encoder failed on (not retried).
#[derive(Debug, Default)]
pub struct PhraseCache {
    vectors: FxHashMap<String, Option<Arc<[f32]>>>,
}

/// The embedder soft identity calls: the cache, over the store's encoder
/// (none: no embedding step).
pub struct Embedder<'a> {
    pub cache: &'a mut PhraseCache,
    pub vectors: Option<&'a mut VectorStore>,
}

impl PhraseEmbedder for Embedder<'_> {
    fn embed(&mut self, phrase: &str) -> Option<Arc<[f32]>> {
        let store = self.vectors.as_deref_mut()?;
        if let Some(v) = self.cache.vectors.get(phrase) {
            return v.clone();
        }
        if self.cache.vectors.len() >= MAX_CACHED_PHRASES {
            self.cache.vectors.clear();
        }
        let v = store
            .encode(&[phrase])
            .ok()
            .and_then(|mut out| out.pop())
            .map(unit);
        self.cache.vectors.insert(phrase.to_owned(), v.clone());
        v
    }
}

/// `v` scaled to unit length, so a dot product is a cosine.
fn unit(v: Vec<f32>) -> Arc<[f32]> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter().map(|x| x / norm).collect()
    } else {
        v.into()
    }
}

/// The keys `subject` has (its newest [`MAX_SOFT_CANDIDATES`] with a
/// retained version, and those `opened` earlier in the batch being
/// drafted), as soft identity compares them: a relation row's key by every
/// noun of the row; any other key but a slot's (an open phrase's, or a
/// client's: `home_city`) by its slot's words and its latest value's class.
pub fn candidates(ledger: &Ledger, subject: &str, opened: &[(Key, ObjectClass)]) -> Vec<Candidate> {
    let stored = ledger.keys_of(subject);
    let stored = &stored[stored.len().saturating_sub(MAX_SOFT_CANDIDATES)..];
    let mut out: Vec<Candidate> = Vec::new();
    for key in stored {
        if slots::slot(&key.slot).is_some() {
            continue;
        }
        let candidate = match relations::relation(&key.slot) {
            Some(row) => Candidate {
                key: Key::clone(key),
                phrases: row.nouns.iter().map(|n| (*n).to_owned()).collect(),
                class: ObjectClass::of_type(row.object),
            },
            None => {
                let Some(value) = ledger.latest_value(key) else {
                    continue;
                };
                by_slot(key, ObjectClass::of_value(value))
            }
        };
        out.push(candidate);
    }
    for (key, class) in opened.iter().filter(|(k, _)| &*k.entity == subject) {
        if !out.iter().any(|c| &c.key == key) {
            out.push(by_slot(key, *class));
        }
    }
    out
}

/// A key that is no relation row's, compared by its slot's words (stored
/// or opened earlier in the batch alike).
fn by_slot(key: &Key, class: ObjectClass) -> Candidate {
    Candidate {
        key: key.clone(),
        phrases: vec![key.slot.replace('_', " ")],
        class,
    }
}
