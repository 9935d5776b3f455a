//! A segment's term table: each distinct term's name once, its id by name.
//!
//! A map of `Box<str>` to id cost every term an allocation of its own and a
//! 24-byte entry, in every segment that lists it; across a store's
//! segments that was about 25% of their heap (issue 24's heap table). Here
//! the names lie end to end in one string, in id order, and the lookup
//! table holds bare ids (4 bytes an entry) hashed by the names they index.
//! Written by hand because it is the index's own structure; hashing and
//! probing are hashbrown's `HashTable`.
//!
//! Invariants: `ends` has one entry per id, ascending; term `t`'s name is
//! `names[ends[t - 1]..ends[t]]` (from 0 for `t = 0`); `ids` holds every id
//! once, and names are distinct.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

/// Term names and their ids (`0..len`, in insertion order).
#[derive(Clone, Default)]
pub struct Terms {
    names: String,
    ends: Vec<u32>,
    ids: HashTable<u32>,
}

fn hash(name: &str) -> u64 {
    FxBuildHasher.hash_one(name)
}

/// Term `t`'s name, from the table's parts (so a probe can read names
/// while the id table is borrowed mutably).
fn name_in<'a>(names: &'a str, ends: &[u32], t: u32) -> &'a str {
    let t = t as usize;
    let start = if t == 0 { 0 } else { ends[t - 1] as usize };
    &names[start..ends[t] as usize]
}

impl Terms {
    /// The id of `term`, if the table holds it.
    #[inline]
    pub fn get(&self, term: &str) -> Option<u32> {
        self.ids
            .find(hash(term), |&t| name_in(&self.names, &self.ends, t) == term)
            .copied()
    }

    /// The id of `term`, given the next one if it is new.
    pub fn id(&mut self, term: &str) -> u32 {
        let Terms { names, ends, ids } = self;
        let entry = ids.entry(
            hash(term),
            |&t| name_in(names, ends, t) == term,
            |&t| hash(name_in(names, ends, t)),
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(found) => *found.get(),
            hashbrown::hash_table::Entry::Vacant(slot) => {
                let t = ends.len() as u32;
                names.push_str(term);
                ends.push(u32::try_from(names.len()).expect("a segment's term names fit in 4 GiB"));
                slot.insert(t);
                t
            }
        }
    }

    /// Term `t`'s name. Panics if `t` is not an id of the table.
    #[inline]
    pub fn name(&self, t: u32) -> &str {
        name_in(&self.names, &self.ends, t)
    }

    /// How many terms the table holds.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Lets go of spare capacity: a built segment's table never grows.
    pub fn shrink_to_fit(&mut self) {
        let Terms { names, ends, ids } = self;
        names.shrink_to_fit();
        ends.shrink_to_fit();
        ids.shrink_to_fit(|&t| hash(name_in(names, ends, t)));
    }
}

impl std::fmt::Debug for Terms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terms").field("len", &self.len()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    proptest::proptest! {
        /// The table gives the ids a map from name to first-seen position
        /// gives, names them back, and keeps them after a shrink.
        #[test]
        fn the_table_is_a_map_from_names_to_first_ids(
            words in proptest::collection::vec("[a-z]{0,4}|é|naïve", 0..200),
        ) {
            let mut table = Terms::default();
            let mut model: HashMap<String, u32> = HashMap::new();
            for w in &words {
                let next = model.len() as u32;
                let want = *model.entry(w.clone()).or_insert(next);
                proptest::prop_assert_eq!(table.id(w), want);
            }
            table.shrink_to_fit();
            proptest::prop_assert_eq!(table.len(), model.len());
            for (w, &t) in &model {
                proptest::prop_assert_eq!(table.get(w), Some(t));
                proptest::prop_assert_eq!(table.name(t), w.as_str());
            }
            proptest::prop_assert_eq!(table.get("not a term"), None);
        }
    }
}
