//! Embeddings of short phrases (relation phrases, key names) with a bounded
//! cache, for soft key identity: the same phrase is asked for again and
//! again on the write path, and a model call costs about 2 ms.

use std::collections::HashMap;
use std::sync::Arc;

use pfm::error::Result;
use pfm::vector::Encoder;

/// Phrases kept before the cache starts over.
pub const DEFAULT_CAPACITY: usize = 4096;

/// An encoder with a cache of the phrases it has embedded. When the cache is
/// full it is emptied and refilled (a phrase vocabulary is small and
/// repetitive, so an exact LRU would buy little over this).
pub struct PhraseCache<E> {
    encoder: E,
    cache: HashMap<Box<str>, Arc<[f32]>>,
    capacity: usize,
    hits: u64,
    misses: u64,
}

impl<E: Encoder> PhraseCache<E> {
    /// A cache of at most `capacity` phrases (at least one) over `encoder`.
    pub fn new(encoder: E, capacity: usize) -> Self {
        PhraseCache {
            encoder,
            cache: HashMap::new(),
            capacity: capacity.max(1),
            hits: 0,
            misses: 0,
        }
    }

    /// The embeddings of `phrases`, in order; only the ones not cached reach
    /// the model, in one call.
    pub fn embed(&mut self, phrases: &[&str]) -> Result<Vec<Arc<[f32]>>> {
        let mut missing: Vec<&str> = phrases
            .iter()
            .copied()
            .filter(|p| !self.cache.contains_key(*p))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        self.hits += (phrases.len() - missing.len()) as u64;
        self.misses += missing.len() as u64;
        let fresh: HashMap<&str, Arc<[f32]>> = if missing.is_empty() {
            HashMap::new()
        } else {
            let vectors = self.encoder.encode(&missing)?;
            missing
                .iter()
                .copied()
                .zip(vectors.into_iter().map(Arc::from))
                .collect()
        };
        // Answered before the cache changes, so emptying it below never
        // drops a vector this call needs.
        let out = phrases
            .iter()
            .map(|p| match fresh.get(p) {
                Some(v) => v.clone(),
                // Infallible: a phrase not fresh was cached.
                None => self.cache[*p].clone(),
            })
            .collect();
        if self.cache.len() + fresh.len() > self.capacity {
            self.cache.clear();
        }
        for (p, v) in fresh {
            self.cache.insert(p.into(), v);
        }
        Ok(out)
    }

    /// Cosine similarity of two phrases' embeddings (they are normalized).
    pub fn similarity(&mut self, a: &str, b: &str) -> Result<f32> {
        let v = self.embed(&[a, b])?;
        Ok(v[0].iter().zip(v[1].iter()).map(|(x, y)| x * y).sum())
    }

    /// (hits, misses) since the cache was made.
    pub fn stats(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }
}
