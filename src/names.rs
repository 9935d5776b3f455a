//! One shared copy of each name the store's facts repeat.
//!
//! A participant or an entity is named by many facts. Each fact holding
//! its own `Arc<str>` of the name cost ~40 bytes a fact on the 100,000-fact
//! synthetic store (issue 24's heap table, `scale/README.md`); facts take
//! their names from [`Names`] instead, which hands out one [`Name`] per
//! distinct name.

use rustc_hash::FxHashSet;

use crate::fact::FactBody;

/// A name a fact holds: a shared, immutable string in one word (the
/// length lives in the allocation with the count and the bytes), where an
/// `Arc<str>` is a 16-byte fat pointer; a fact holds several (issue 24).
/// It hashes, compares and serializes as the `str` it holds.
pub type Name = arcstr::ArcStr;

/// The distinct names the store's facts hold.
///
/// Invariant: right after [`Names::forget_unused`], every entry is held by
/// something besides this set (a fact, a published version). Erasure calls
/// it, so a name whose every fact was erased is not kept in memory by the
/// set once no reader holds those facts either.
#[derive(Clone, Debug, Default)]
pub struct Names(FxHashSet<Name>);

impl Names {
    /// The shared copy of `name`.
    pub fn get(&mut self, name: &str) -> Name {
        if let Some(n) = self.0.get(name) {
            return n.clone();
        }
        let n = Name::from(name);
        self.0.insert(n.clone());
        n
    }

    /// Makes a body's participants and entities the shared copies (a body
    /// decoded from storage holds its own).
    pub fn share(&mut self, body: &mut FactBody) {
        for name in body.names_mut() {
            *name = self.get(name);
        }
    }

    /// Drops the names nothing else holds.
    pub fn forget_unused(&mut self) {
        self.0
            .retain(|n| Name::strong_count(n).is_none_or(|held| held > 1));
    }

    /// How many distinct names are held.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no name is held.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_held_once_and_forgotten_with_its_last_holder() {
        let mut names = Names::default();
        let a = names.get("Ana");
        let b = names.get("Ana");
        assert!(Name::ptr_eq(&a, &b));
        let ben = names.get("Ben");
        assert_eq!(names.len(), 2);
        drop(ben);
        names.forget_unused();
        assert_eq!(names.len(), 1);
        drop((a, b));
        names.forget_unused();
        assert!(names.is_empty());
    }
}
