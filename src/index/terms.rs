//! A segment's term table: each distinct term's name once, its id by name.
//!
//! A map of `Box<str>` to id cost every term an allocation of its own and a
//! 24-byte entry, in every segment that lists it; across a store's
//! segments that was about a tenth of their heap (issue 24's heap table).
//! Here the names lie end to end in one string, and the lookup table holds
//! 12-byte entries (id, where the name starts, its length) hashed by the
//! names they point at, so a probe reads the entry and then the name, as
//! the map did. Written by hand because it is the index's own structure;
//! hashing and probing are hashbrown's `HashTable`.
//!
//! Invariants: every entry's `start..start + len` is a name in `names` on
//! character boundaries; ids are `0..len()`, each in one entry; names are
//! distinct.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

/// One term: its id and where its name lies in the table's string.
#[derive(Clone, Copy)]
struct Entry {
    id: u32,
    start: u32,
    len: u32,
}

/// Term names and their ids (`0..len`, in insertion order).
#[derive(Clone, Default)]
pub struct Terms {
    names: String,
    entries: HashTable<Entry>,
}

fn hash(name: &str) -> u64 {
    FxBuildHasher.hash_one(name)
}

/// An entry's name, from the table's string (so a probe can read names
/// while the entries are borrowed mutably).
fn name_in(names: &str, e: Entry) -> &str {
    &names[e.start as usize..(e.start + e.len) as usize]
}

impl Terms {
    /// The id of `term`, if the table holds it.
    #[inline]
    pub fn get(&self, term: &str) -> Option<u32> {
        self.entries
            .find(hash(term), |&e| name_in(&self.names, e) == term)
            .map(|e| e.id)
    }

    /// The id of `term`, given the next one if it is new.
    pub fn id(&mut self, term: &str) -> u32 {
        let next = self.entries.len() as u32;
        let Terms { names, entries } = self;
        let entry = entries.entry(
            hash(term),
            |&e| name_in(names, e) == term,
            |&e| hash(name_in(names, e)),
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(found) => found.get().id,
            hashbrown::hash_table::Entry::Vacant(slot) => {
                let start = names.len();
                names.push_str(term);
                let fits =
                    |n: usize| u32::try_from(n).expect("a segment's term names fit in 4 GiB");
                slot.insert(Entry {
                    id: next,
                    start: fits(start),
                    len: fits(term.len()),
                });
                next
            }
        }
    }

    /// Every term's name, by id.
    pub fn names(&self) -> Vec<&str> {
        let mut names = vec![""; self.entries.len()];
        for &e in &self.entries {
            names[e.id as usize] = name_in(&self.names, e);
        }
        names
    }

    /// How many terms the table holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Lets go of spare capacity: a built segment's table never grows.
    pub fn shrink_to_fit(&mut self) {
        let Terms { names, entries } = self;
        names.shrink_to_fit();
        entries.shrink_to_fit(|&e| hash(name_in(names, e)));
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
            let names = table.names();
            for (w, &t) in &model {
                proptest::prop_assert_eq!(table.get(w), Some(t));
                proptest::prop_assert_eq!(names[t as usize], w.as_str());
            }
            proptest::prop_assert_eq!(table.get("not a term"), None);
        }
    }
}
