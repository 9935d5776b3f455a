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
pub(super) struct IdLists<K, L = Vec<FactId>> {
    one: FxHashMap<K, FactId>,
    many: FxHashMap<K, L>,
}

impl<K, L> Default for IdLists<K, L> {
    fn default() -> Self {
        Self {
            one: FxHashMap::default(),
            many: FxHashMap::default(),
        }
    }
}

/// How an [`IdLists`] holds a list of two ids or more.
pub(super) trait List {
    /// The list of `first` then `second`.
    fn pair(first: FactId, second: FactId) -> Self;
    /// Appends `id`.
    fn push(&mut self, id: FactId);
    /// Takes every occurrence of `id` off.
    fn remove_all(&mut self, id: FactId);
    /// The ids, in the order pushed.
    fn ids(&self) -> impl Iterator<Item = FactId> + '_;
}

impl List for Vec<FactId> {
    fn pair(first: FactId, second: FactId) -> Self {
        vec![first, second]
    }

    fn push(&mut self, id: FactId) {
        Vec::push(self, id);
    }

    fn remove_all(&mut self, id: FactId) {
        self.retain(|x| *x != id);
    }

    fn ids(&self) -> impl Iterator<Item = FactId> + '_ {
        self.iter().copied()
    }
}

/// Fact ids in the order pushed, in one or two bytes each where a
/// `Vec<FactId>` takes eight: each is the LEB128 varint of the zigzagged
/// wrapping difference from the id before it (the first from id 0). A
/// name's facts are pushed in creation order, so the differences are the
/// gaps between them; any order round-trips. At 100,000 synthetic wide
/// facts the name lists took 38 bytes a fact as `Vec`s (issue 24).
#[derive(Clone, Debug, Default)]
pub(super) struct IdRun {
    bytes: Vec<u8>,
    /// The id pushed last (0 before the first).
    last: u64,
}

/// The ids of an [`IdRun`], decoded.
struct RunIds<'a> {
    bytes: &'a [u8],
    prev: u64,
}

impl Iterator for RunIds<'_> {
    type Item = FactId;

    fn next(&mut self) -> Option<FactId> {
        let mut z = 0u64;
        for (i, &b) in self.bytes.iter().enumerate() {
            z |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                self.bytes = &self.bytes[i + 1..];
                let d = (z >> 1) ^ (z & 1).wrapping_neg();
                self.prev = self.prev.wrapping_add(d);
                return Some(FactId(self.prev));
            }
        }
        None
    }
}

impl List for IdRun {
    fn pair(first: FactId, second: FactId) -> Self {
        let mut run = IdRun::default();
        run.push(first);
        run.push(second);
        run
    }

    fn push(&mut self, id: FactId) {
        let d = id.0.wrapping_sub(self.last) as i64;
        let mut z = ((d << 1) ^ (d >> 63)) as u64;
        while z >= 0x80 {
            self.bytes.push(z as u8 | 0x80);
            z >>= 7;
        }
        self.bytes.push(z as u8);
        self.last = id.0;
    }

    fn remove_all(&mut self, id: FactId) {
        let kept: Vec<FactId> = self.ids().filter(|x| *x != id).collect();
        *self = IdRun::default();
        for k in kept {
            self.push(k);
        }
    }

    fn ids(&self) -> impl Iterator<Item = FactId> + '_ {
        RunIds {
            bytes: &self.bytes,
            prev: 0,
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

    /// Every key with its list, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&K, &[FactId])> {
        let one = self.one.iter().map(|(k, id)| (k, std::slice::from_ref(id)));
        one.chain(self.many.iter().map(|(k, ids)| (k, ids.as_slice())))
    }
}

impl<K: Hash + Eq, L: List> IdLists<K, L> {
    /// The ids `key` lists, in the order pushed.
    pub(super) fn ids<Q>(&self, key: &Q) -> impl Iterator<Item = FactId> + '_
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let one = self.one.get(key).copied();
        one.into_iter()
            .chain(self.many.get(key).into_iter().flat_map(L::ids))
    }

    /// Every key with its ids, in no particular order.
    pub(super) fn entries(&self) -> impl Iterator<Item = (&K, Vec<FactId>)> {
        let one = self.one.iter().map(|(k, id)| (k, vec![*id]));
        one.chain(self.many.iter().map(|(k, ids)| (k, ids.ids().collect())))
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
                self.many.insert(held, L::pair(first, id));
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
        list.remove_all(id);
        let (first, more) = {
            let mut left = list.ids();
            (left.next(), left.next().is_some())
        };
        // An emptied list goes; one id left moves back inline.
        if !more
            && let Some((held, _)) = self.many.remove_entry(key)
            && let Some(last) = first
        {
            self.one.insert(held, last);
        }
    }

    /// Number of keys listing at least one id.
    pub(super) fn len(&self) -> usize {
        self.one.len() + self.many.len()
    }
}

/// Hash → the fact ids it lists, for the maps whose keys are already
/// hashes and whose every hit is checked against the fact it names (the
/// text-hash map, whose hits are compared by text, and the absorption
/// buckets, whose hits are checked to name the entity and its values).
///
/// Such a map needs no more of a key than a filter does, so its keys are
/// 32 bits of a hash ([`fold`]; the text hash of an admission signature is
/// kept folded too): two keys that agree there share a list, which costs a
/// caller one more check, never a wrong answer. A key with a
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
    /// The ids listed under `key`, in the order pushed.
    pub(super) fn get(&self, key: u32) -> Ids<'_> {
        match self.one.find(spread(key), |&e| key_of(e) == key) {
            Some(&e) => Ids::One(Some(id_of(e))),
            None => Ids::Many(self.many.get(&key).map_or([].iter(), |ids| ids.iter())),
        }
    }

    /// Appends `id` to the list of `key`.
    pub(super) fn push(&mut self, key: u32, id: FactId) {
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

    /// Takes every occurrence of `id` off the list of `key`; a list left
    /// empty goes, one left with a single small id moves back inline.
    pub(super) fn remove(&mut self, key: u32, id: FactId) {
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

    /// Every key with its list, in no particular order.
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
    fn agrees<L: List>(lists: &IdLists<u8, L>, model: &FxHashMap<u8, Vec<FactId>>) {
        assert_eq!(lists.len(), model.len());
        for key in 0..8 {
            let expected = model.get(&key).map_or(&[][..], Vec::as_slice);
            assert_eq!(lists.ids(&key).collect::<Vec<_>>(), expected, "key {key}");
            assert_eq!(lists.contains_key(&key), !expected.is_empty());
            assert_eq!(lists.stored_key(&key).is_some(), !expected.is_empty());
        }
        for list in lists.many.values() {
            assert!(
                list.ids().count() >= 2,
                "a `many` list holds two ids or more"
            );
        }
        assert!(lists.one.keys().all(|k| !lists.many.contains_key(k)));
        let mut listed: Vec<(u8, Vec<FactId>)> =
            lists.entries().map(|(k, ids)| (*k, ids)).collect();
        listed.sort();
        let mut expected: Vec<(u8, Vec<FactId>)> =
            model.iter().map(|(k, ids)| (*k, ids.clone())).collect();
        expected.sort();
        assert_eq!(listed, expected);
    }

    /// Runs `ops` (push or remove, key, id) on both list layouts against
    /// the model.
    fn check_ops(ops: &[(bool, u8, u64)]) {
        let mut vecs: IdLists<u8> = IdLists::default();
        let mut runs: IdLists<u8, IdRun> = IdLists::default();
        let mut model: FxHashMap<u8, Vec<FactId>> = FxHashMap::default();
        for &(push, key, id) in ops {
            let id = FactId(id);
            if push {
                let new = vecs.push(key, id);
                assert_eq!(new, !model.contains_key(&key));
                assert_eq!(runs.push(key, id), new);
                model.entry(key).or_default().push(id);
            } else {
                vecs.remove(&key, id);
                runs.remove(&key, id);
                if let Some(list) = model.get_mut(&key) {
                    list.retain(|x| *x != id);
                    if list.is_empty() {
                        model.remove(&key);
                    }
                }
            }
            agrees(&vecs, &model);
            agrees(&runs, &model);
            for key in 0..8 {
                assert_eq!(
                    vecs.get(&key),
                    model.get(&key).map_or(&[][..], Vec::as_slice)
                );
            }
        }
    }

    #[test]
    fn a_list_moves_between_the_maps_as_it_grows_and_shrinks() {
        let mut lists: IdLists<u8> = IdLists::default();
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
            assert_eq!(
                lists.get(fold(h)).collect::<Vec<_>>(),
                expected,
                "hash {h:#x}"
            );
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
                    lists.push(fold(hash), id);
                    model.entry(fold(hash)).or_default().push(id);
                } else {
                    lists.remove(fold(hash), id);
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
            check_ops(&ops);
        }

        /// A run gives back any ids in the order pushed: gaps of any size,
        /// backwards, and the extremes of `u64`.
        #[test]
        fn runs_give_back_what_was_pushed(
            ids in prop::collection::vec(prop_oneof![
                Just(0u64), Just(u64::MAX), 0u64..300, any::<u64>(),
            ], 0..64),
            gone in any::<u64>(),
        ) {
            let mut run = IdRun::default();
            for &id in &ids {
                run.push(FactId(id));
            }
            let read: Vec<u64> = run.ids().map(|id| id.0).collect();
            prop_assert_eq!(&read, &ids);
            let gone = ids.get(gone as usize % ids.len().max(1)).copied().unwrap_or(gone);
            run.remove_all(FactId(gone));
            let kept: Vec<u64> = ids.iter().copied().filter(|&id| id != gone).collect();
            prop_assert_eq!(run.ids().map(|id| id.0).collect::<Vec<_>>(), kept);
        }
    }
}
