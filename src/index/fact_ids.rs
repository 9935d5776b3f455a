//! A segment's fact ids by local document, four bytes each while they fit.
//!
//! Fact ids are dense and count every fact a store ever created, so they
//! fit 32 bits in any store that has created fewer than 2^32 facts: a
//! segment then keeps them as `u32`s, half the eight bytes a document a
//! `Vec<FactId>` took (issue 24). A segment holding any larger id keeps
//! them all in full.
//!
//! Invariant: the ids are the segment's documents' facts in local document
//! order, ascending (segment invariant 1), whichever form holds them.

use crate::fact::FactId;

/// The fact ids of a segment's documents, by local document.
#[derive(Debug)]
pub enum FactIds {
    /// Every id below 2^32.
    Narrow(Vec<u32>),
    /// Some id from 2^32 up.
    Wide(Vec<FactId>),
}

impl FactIds {
    /// The ids, ascending, in the narrow form when they all fit (read
    /// twice rather than collected twice).
    pub fn new(ids: impl Iterator<Item = FactId> + Clone) -> FactIds {
        let narrow = |id: FactId| u32::try_from(id.0).ok();
        if ids.clone().all(|id| narrow(id).is_some()) {
            FactIds::Narrow(ids.filter_map(narrow).collect())
        } else {
            FactIds::Wide(ids.collect())
        }
    }

    /// How many documents.
    pub fn len(&self) -> usize {
        match self {
            FactIds::Narrow(ids) => ids.len(),
            FactIds::Wide(ids) => ids.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The fact of local document `doc`.
    #[inline]
    pub fn get(&self, doc: u32) -> FactId {
        match self {
            FactIds::Narrow(ids) => FactId(u64::from(ids[doc as usize])),
            FactIds::Wide(ids) => ids[doc as usize],
        }
    }

    /// The local document of `fact`, if one holds it.
    pub fn find(&self, fact: FactId) -> Option<u32> {
        let at = match self {
            FactIds::Narrow(ids) => ids.binary_search(&u32::try_from(fact.0).ok()?),
            FactIds::Wide(ids) => ids.binary_search(&fact),
        };
        at.ok().map(|d| d as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Either form returns each id at its document and finds each
        /// document by its id, and nothing for an id it does not hold.
        #[test]
        fn ids_read_back_and_are_found(
            ids in proptest::collection::btree_set(
                prop_oneof![0..1_000u64, (1u64 << 32) - 2..(1 << 32) + 2, any::<u64>()],
                0..40,
            ),
            absent in prop_oneof![0..1_000u64, (1u64 << 32) - 2..(1 << 32) + 2, any::<u64>()],
        ) {
            let ids: Vec<FactId> = ids.into_iter().map(FactId).collect();
            let held = FactIds::new(ids.iter().copied());
            prop_assert_eq!(
                matches!(held, FactIds::Narrow(_)),
                ids.iter().all(|id| id.0 <= u64::from(u32::MAX))
            );
            prop_assert_eq!(held.len(), ids.len());
            for (doc, &id) in ids.iter().enumerate() {
                prop_assert_eq!(held.get(doc as u32), id);
                prop_assert_eq!(held.find(id), Some(doc as u32));
            }
            if !ids.contains(&FactId(absent)) {
                prop_assert_eq!(held.find(FactId(absent)), None);
            }
        }
    }
}
