//! [`IdLists`]: the ledger's lookup maps from a key to the facts it lists.
//!
//! Most entries list one fact (a text hash, an absorption bucket, a name
//! in one fact, a key with one version), so a list is held in one of two
//! maps: `one` holds a single id inline in the entry (16 bytes for a `u64`
//! key), `many` a `Vec` for the keys with two ids or more. A single map of
//! inline-two `SmallVec`s costs 32 bytes an entry for every key. Measured
//! with `scripts/heap-by-structure` at 100,000 wide facts, the lookup maps
//! (admission signatures included) went from 26.2 to 20.1 MiB with this
//! layout, the whole heap from 102.8 to 96.7 MiB (issue 24).

use std::borrow::Borrow;
use std::collections::hash_map::Entry;
use std::hash::Hash;

use rustc_hash::FxHashMap;

use crate::fact::FactId;

/// Key → the fact ids it lists, in the order they were pushed.
///
/// Invariant: a key is in at most one of `one` and `many`, and a list in
/// `many` holds at least two ids (a key whose list empties is gone; one
/// that drops to a single id moves back to `one`).
#[derive(Clone, Debug)]
pub(super) struct IdLists<K> {
    one: FxHashMap<K, FactId>,
    many: FxHashMap<K, Vec<FactId>>,
}

impl<K> Default for IdLists<K> {
    fn default() -> Self {
        Self {
            one: FxHashMap::default(),
            many: FxHashMap::default(),
        }
    }
}

impl<K: Hash + Eq> IdLists<K> {
    /// The ids `key` lists (empty when none).
    pub(super) fn get<Q>(&self, key: &Q) -> &[FactId]
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        match self.one.get(key) {
            Some(id) => std::slice::from_ref(id),
            None => self.many.get(key).map_or(&[], Vec::as_slice),
        }
    }

    /// The key as the map holds it, if it lists any id.
    pub(super) fn stored_key<Q>(&self, key: &Q) -> Option<&K>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.one
            .get_key_value(key)
            .map(|(k, _)| k)
            .or_else(|| self.many.get_key_value(key).map(|(k, _)| k))
    }

    /// Whether `key` lists any id.
    pub(super) fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.one.contains_key(key) || self.many.contains_key(key)
    }

    /// Appends `id` to `key`'s list; returns whether `key` listed no id
    /// before.
    pub(super) fn push(&mut self, key: K, id: FactId) -> bool {
        if let Some(list) = self.many.get_mut(&key) {
            list.push(id);
            return false;
        }
        match self.one.entry(key) {
            Entry::Vacant(slot) => {
                slot.insert(id);
                true
            }
            Entry::Occupied(single) => {
                let (held, first) = single.remove_entry();
                self.many.insert(held, vec![first, id]);
                false
            }
        }
    }

    /// Takes every occurrence of `id` off `key`'s list; a list left empty
    /// goes, one left with a single id moves back inline.
    pub(super) fn remove<Q>(&mut self, key: &Q, id: FactId)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        if self.one.get(key) == Some(&id) {
            self.one.remove(key);
            return;
        }
        let Some(list) = self.many.get_mut(key) else {
            return;
        };
        list.retain(|x| *x != id);
        if list.len() < 2
            && let Some((held, list)) = self.many.remove_entry(key)
            && let [last] = list[..]
        {
            self.one.insert(held, last);
        }
    }

    /// Number of keys listing at least one id.
    pub(super) fn len(&self) -> usize {
        self.one.len() + self.many.len()
    }

    /// Whether no key lists an id.
    pub(super) fn is_empty(&self) -> bool {
        self.one.is_empty() && self.many.is_empty()
    }

    /// Every key with its list, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&K, &[FactId])> {
        let one = self.one.iter().map(|(k, id)| (k, std::slice::from_ref(id)));
        one.chain(self.many.iter().map(|(k, ids)| (k, ids.as_slice())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The lists against a model: a map of plain `Vec`s, with empty lists
    /// removed.
    fn agrees(lists: &IdLists<u8>, model: &FxHashMap<u8, Vec<FactId>>) {
        assert_eq!(lists.len(), model.len());
        assert_eq!(lists.is_empty(), model.is_empty());
        for key in 0..=u8::MAX {
            let expected = model.get(&key).map_or(&[][..], Vec::as_slice);
            assert_eq!(lists.get(&key), expected, "key {key}");
            assert_eq!(lists.contains_key(&key), !expected.is_empty());
            assert_eq!(lists.stored_key(&key).is_some(), !expected.is_empty());
        }
        for list in lists.many.values() {
            assert!(list.len() >= 2, "a `many` list holds two ids or more");
        }
        assert!(lists.one.keys().all(|k| !lists.many.contains_key(k)));
        let listed: usize = lists.iter().map(|(_, ids)| ids.len()).sum();
        assert_eq!(listed, model.values().map(Vec::len).sum::<usize>());
    }

    #[test]
    fn a_list_moves_between_the_maps_as_it_grows_and_shrinks() {
        let mut lists = IdLists::default();
        lists.push(1u8, FactId(10));
        assert!(lists.one.contains_key(&1));
        lists.push(1, FactId(11));
        lists.push(1, FactId(12));
        assert_eq!(lists.get(&1), [FactId(10), FactId(11), FactId(12)]);
        lists.remove(&1, FactId(11));
        assert_eq!(lists.get(&1), [FactId(10), FactId(12)]);
        lists.remove(&1, FactId(10));
        assert_eq!(lists.get(&1), [FactId(12)]);
        assert!(lists.one.contains_key(&1) && lists.many.is_empty());
        lists.remove(&1, FactId(99));
        assert_eq!(lists.get(&1), [FactId(12)]);
        lists.remove(&1, FactId(12));
        assert!(lists.is_empty());
    }

    proptest! {
        #[test]
        fn lists_agree_with_a_map_of_vecs(
            ops in prop::collection::vec((any::<bool>(), 0u8..6, 0u64..5), 0..200)
        ) {
            let mut lists = IdLists::default();
            let mut model: FxHashMap<u8, Vec<FactId>> = FxHashMap::default();
            for (push, key, id) in ops {
                let id = FactId(id);
                if push {
                    let new = lists.push(key, id);
                    prop_assert_eq!(new, !model.contains_key(&key));
                    model.entry(key).or_default().push(id);
                } else {
                    lists.remove(&key, id);
                    if let Some(list) = model.get_mut(&key) {
                        list.retain(|x| *x != id);
                        if list.is_empty() {
                            model.remove(&key);
                        }
                    }
                }
                agrees(&lists, &model);
            }
        }
    }
}
