//! [`IdLists`] and [`HashedIds`]: the ledger's lookup maps from a key to
//! the facts it lists.
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
use std::hash::{BuildHasher, Hash};

use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashMap};

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

    /// Every key with its list, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&K, &[FactId])> {
        let one = self.one.iter().map(|(k, id)| (k, std::slice::from_ref(id)));
        one.chain(self.many.iter().map(|(k, ids)| (k, ids.as_slice())))
    }
}

/// Hash → the fact ids it lists, for the maps whose keys are already
/// hashes and whose every hit is checked against the fact it names (the
/// text-hash map, whose hits are compared by text, and the absorption
/// buckets, whose hits are checked to name the entity and its values).
///
/// Such a map needs no more of a key than a filter does, so it keeps 32
/// bits of it ([`fold`]): two keys that agree there share a list, which
/// costs a caller one more check, never a wrong answer. A key with a
/// single id below 2^32 is then one `u64` in `one` (`key << 32 | id`), 9
/// bytes a bucket where `IdLists<u64>` takes 17; at 100,000 synthetic wide
/// facts the two maps hold about four buckets a fact (issue 24).
///
/// Invariant: a folded key is in at most one of `one` and `many`; a list
/// in `many` holds two ids or more, or one id of 2^32 or above.
#[derive(Clone, Debug, Default)]
pub(super) struct HashedIds {
    one: HashTable<u64>,
    many: FxHashMap<u32, Vec<FactId>>,
}

/// The 32 bits of a key hash that [`HashedIds`] keeps (FxHash mixes its
/// high bits best).
pub(super) fn fold(hash: u64) -> u32 {
    (hash >> 32) as u32
}

/// The hash a folded key is filed under in `one`.
fn spread(key: u32) -> u64 {
    FxBuildHasher.hash_one(key)
}

/// The entry of `one` for a folded key and an id below 2^32.
fn entry(key: u32, id: u32) -> u64 {
    u64::from(key) << 32 | u64::from(id)
}

/// The folded key of an entry of `one`.
fn key_of(entry: u64) -> u32 {
    (entry >> 32) as u32
}

/// The id of an entry of `one`.
fn id_of(entry: u64) -> FactId {
    FactId(entry & u64::from(u32::MAX))
}

/// The ids of one [`HashedIds`] list, in the order they were pushed.
pub(super) enum Ids<'a> {
    /// An id held inline (or none).
    One(Option<FactId>),
    /// A list of `many`.
    Many(std::slice::Iter<'a, FactId>),
}

impl Iterator for Ids<'_> {
    type Item = FactId;

    fn next(&mut self) -> Option<FactId> {
        match self {
            Ids::One(id) => id.take(),
            Ids::Many(ids) => ids.next().copied(),
        }
    }
}

impl HashedIds {
    /// The ids listed under `hash` (folded), in the order pushed.
    pub(super) fn get(&self, hash: u64) -> Ids<'_> {
        let key = fold(hash);
        match self.one.find(spread(key), |&e| key_of(e) == key) {
            Some(&e) => Ids::One(Some(id_of(e))),
            None => Ids::Many(self.many.get(&key).map_or([].iter(), |ids| ids.iter())),
        }
    }

    /// Appends `id` to the list of `hash` (folded).
    pub(super) fn push(&mut self, hash: u64, id: FactId) {
        let key = fold(hash);
        if let Some(list) = self.many.get_mut(&key) {
            list.push(id);
            return;
        }
        match self.one.find_entry(spread(key), |&e| key_of(e) == key) {
            Ok(held) => {
                let (first, _) = held.remove();
                self.many.insert(key, vec![id_of(first), id]);
            }
            Err(_) => match u32::try_from(id.0) {
                Ok(small) => {
                    self.one
                        .insert_unique(spread(key), entry(key, small), |&e| spread(key_of(e)));
                }
                Err(_) => {
                    self.many.insert(key, vec![id]);
                }
            },
        }
    }

    /// Takes every occurrence of `id` off the list of `hash` (folded); a
    /// list left empty goes, one left with a single small id moves back
    /// inline.
    pub(super) fn remove(&mut self, hash: u64, id: FactId) {
        let key = fold(hash);
        if let Ok(held) = self.one.find_entry(spread(key), |&e| key_of(e) == key) {
            if id_of(*held.get()) == id {
                held.remove();
            }
            return;
        }
        let Some(list) = self.many.get_mut(&key) else {
            return;
        };
        list.retain(|x| *x != id);
        match list[..] {
            [] => {
                self.many.remove(&key);
            }
            [last] => {
                if let Ok(small) = u32::try_from(last.0) {
                    self.many.remove(&key);
                    self.one
                        .insert_unique(spread(key), entry(key, small), |&e| spread(key_of(e)));
                }
            }
            _ => {}
        }
    }

    /// Whether no key lists an id.
    pub(super) fn is_empty(&self) -> bool {
        self.one.is_empty() && self.many.is_empty()
    }

    /// Every folded key with its list, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u32, Ids<'_>)> {
        let one = self
            .one
            .iter()
            .map(|&e| (key_of(e), Ids::One(Some(id_of(e)))));
        one.chain(self.many.iter().map(|(&k, ids)| (k, Ids::Many(ids.iter()))))
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
        assert_eq!(lists.len(), 0);
    }

    /// A hashed map against a model keyed by the folded hash.
    fn hashed_agrees(lists: &HashedIds, model: &FxHashMap<u32, Vec<FactId>>, hashes: &[u64]) {
        assert_eq!(lists.is_empty(), model.is_empty());
        for &h in hashes {
            let expected = model.get(&fold(h)).map_or(&[][..], Vec::as_slice);
            assert_eq!(lists.get(h).collect::<Vec<_>>(), expected, "hash {h:#x}");
        }
        for list in lists.many.values() {
            assert!(list.len() >= 2 || list[0].0 > u64::from(u32::MAX));
        }
        assert!(
            lists
                .one
                .iter()
                .all(|&e| !lists.many.contains_key(&key_of(e)))
        );
        let mut listed: Vec<(u32, Vec<FactId>)> =
            lists.iter().map(|(k, ids)| (k, ids.collect())).collect();
        listed.sort();
        let mut expected: Vec<(u32, Vec<FactId>)> =
            model.iter().map(|(k, ids)| (*k, ids.clone())).collect();
        expected.sort();
        assert_eq!(listed, expected);
    }

    proptest! {
        /// `HashedIds` lists what a map of `Vec`s keyed by the folded hash
        /// lists: hashes that differ only in their low bits share a list,
        /// and ids of 2^32 and above are kept whole.
        #[test]
        fn hashed_lists_agree_with_a_map_of_vecs(
            ops in prop::collection::vec((any::<bool>(), 0usize..6, 0usize..5), 0..200)
        ) {
            // Six hashes: three pairs that fold to the same key.
            let hashes = [1u64 << 32, (1 << 32) | 7, 2 << 32, (2 << 32) | 9, u64::MAX, u64::MAX - 3];
            let ids = [0u64, 1, u64::from(u32::MAX), 1 << 32, u64::MAX - 1];
            let mut lists = HashedIds::default();
            let mut model: FxHashMap<u32, Vec<FactId>> = FxHashMap::default();
            for (push, h, id) in ops {
                let (hash, id) = (hashes[h], FactId(ids[id]));
                if push {
                    lists.push(hash, id);
                    model.entry(fold(hash)).or_default().push(id);
                } else {
                    lists.remove(hash, id);
                    if let Some(list) = model.get_mut(&fold(hash)) {
                        list.retain(|x| *x != id);
                        if list.is_empty() {
                            model.remove(&fold(hash));
                        }
                    }
                }
                hashed_agrees(&lists, &model, &hashes);
            }
        }
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
