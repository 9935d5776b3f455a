//! A copy-on-write bitset of deleted documents, one per segment view.
//!
//! Written by hand because it is part of the index's publication cost: a
//! commit that deletes one document copies one 4,096-bit chunk and the
//! chunk-pointer vector (one pointer per 4,096 documents), never the whole
//! bitset, and a reader tests a bit with two loads. Chunks are shared between
//! index versions through `Arc`.

use std::sync::Arc;

const CHUNK_BITS: usize = 4096;
const WORDS: usize = CHUNK_BITS / 64;

type Chunk = [u64; WORDS];

/// Deleted local document ids of one segment.
#[derive(Clone, Debug, Default)]
pub struct DeleteSet {
    chunks: Vec<Option<Arc<Chunk>>>,
    count: u32,
}

impl DeleteSet {
    /// Whether `doc` is deleted.
    #[inline]
    pub fn contains(&self, doc: u32) -> bool {
        let d = doc as usize;
        match self.chunks.get(d / CHUNK_BITS) {
            Some(Some(chunk)) => chunk[(d % CHUNK_BITS) / 64] & (1 << (d % 64)) != 0,
            _ => false,
        }
    }

    /// Marks `doc` deleted; returns whether it was live before.
    pub fn insert(&mut self, doc: u32) -> bool {
        let d = doc as usize;
        let c = d / CHUNK_BITS;
        if self.chunks.len() <= c {
            self.chunks.resize(c + 1, None);
        }
        let chunk = Arc::make_mut(self.chunks[c].get_or_insert_with(|| Arc::new([0; WORDS])));
        let (w, bit) = ((d % CHUNK_BITS) / 64, 1u64 << (d % 64));
        let was_live = chunk[w] & bit == 0;
        chunk[w] |= bit;
        self.count += u32::from(was_live);
        was_live
    }

    /// Number of deleted documents.
    pub fn len(&self) -> u32 {
        self.count
    }

    /// Whether nothing is deleted.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_share_untouched_chunks_and_diverge_on_write() {
        let mut a = DeleteSet::default();
        assert!(a.insert(3));
        assert!(!a.insert(3));
        assert!(a.insert(10_000));
        let mut b = a.clone();
        assert!(b.insert(4));
        assert!(a.contains(3) && a.contains(10_000) && !a.contains(4));
        assert!(b.contains(3) && b.contains(4) && b.contains(10_000));
        assert_eq!((a.len(), b.len()), (2, 3));
        assert!(!b.contains(1_000_000));
        // The chunk b did not write is still shared with a.
        assert!(Arc::ptr_eq(
            a.chunks[2].as_ref().unwrap(),
            b.chunks[2].as_ref().unwrap()
        ));
    }
}
