//! A fact body's names and strings in one allocation behind one word
//! (issue 24).
//!
//! A body held its names in one box and its text, value and source in
//! another: two allocations a fact and two 16-byte fat pointers in every
//! body, the store's most numerous object. [`Packed`] lays out the names'
//! pointers and then the bytes in one block and keeps the counts beside its
//! pointer, in 16 bytes. No crate offers this layout (a `Box<[T]>` is a fat
//! pointer to one element type; `triomphe`'s `ThinArc` holds one slice
//! type behind a reference count of its own), so it is written by hand and
//! kept small: every unsafe block of the fact body is here.

use std::alloc::{self, Layout};
use std::mem::size_of;
use std::ptr::{self, NonNull};
use std::{fmt, slice, str};

use crate::names::Name;

/// Names, entities first, then a string, in one allocation.
///
/// # Invariants
/// 1. `ptr` points to a block of `layout(names, bytes)` from the global
///    allocator, or is dangling (and aligned for [`Name`]) when that
///    layout's size is zero.
/// 2. The block holds `names` initialized [`Name`]s from its start, then
///    `bytes` bytes of UTF-8 from offset `size_of::<Name>() * names`.
/// 3. `entities <= names`.
///
/// [`Packed::new`] establishes them and nothing changes the counts or the
/// pointer afterwards; the tests below check the contents round-trip and
/// that every name is dropped once.
pub(super) struct Packed {
    ptr: NonNull<u8>,
    bytes: u32,
    names: u16,
    entities: u16,
}

// SAFETY: a `Packed` owns its block as a `Box` owns its value: it lends the
// contents only through `&self` (shared) or `&mut self` (unique), and
// `Name` is `Send + Sync`.
unsafe impl Send for Packed {}
// SAFETY: as for `Send`.
unsafe impl Sync for Packed {}

/// The block of `names` names and `bytes` bytes.
fn layout(names: usize, bytes: usize) -> Layout {
    let (layout, offset) = Layout::array::<Name>(names)
        .and_then(|n| n.extend(Layout::array::<u8>(bytes)?))
        // Infallible: at most 65,535 names and 4 GiB of bytes.
        .expect("a packed body's block fits a layout");
    debug_assert_eq!(offset, size_of::<Name>() * names);
    layout
}

impl Packed {
    /// `names`, of which the first `entities` are entities, then `strings`
    /// end to end. An error says which count is too large: at most 65,535
    /// names and 4 GiB of bytes (an observation is held far below both).
    pub(super) fn new(
        names: Box<[Name]>,
        entities: usize,
        strings: &[&str],
    ) -> Result<Packed, String> {
        let count = u16::try_from(names.len())
            .map_err(|_| format!("a fact of {} names has more than 65,535", names.len()))?;
        let entities = u16::try_from(entities)
            .ok()
            .filter(|&e| e <= count)
            .ok_or_else(|| format!("{entities} entities among {count} names"))?;
        let total: usize = strings.iter().map(|s| s.len()).sum();
        let bytes = u32::try_from(total)
            .map_err(|_| format!("a fact's strings of {total} bytes are too long"))?;
        let layout = layout(names.len(), total);
        let ptr = if layout.size() == 0 {
            NonNull::<Name>::dangling().cast()
        } else {
            // SAFETY: the layout's size is not zero.
            let raw = unsafe { alloc::alloc(layout) };
            NonNull::new(raw).unwrap_or_else(|| alloc::handle_alloc_error(layout))
        };
        let mut names = names.into_vec();
        // SAFETY: the block has room for `count` names from its start and
        // `total` bytes after them (`layout`), and each is written once.
        // The names are moved: the vector forgets them before it is dropped.
        unsafe {
            ptr::copy_nonoverlapping(names.as_ptr(), ptr.as_ptr().cast::<Name>(), names.len());
            names.set_len(0);
            let mut at = ptr.as_ptr().add(size_of::<Name>() * count as usize);
            for s in strings {
                ptr::copy_nonoverlapping(s.as_ptr(), at, s.len());
                at = at.add(s.len());
            }
        }
        Ok(Packed {
            ptr,
            bytes,
            names: count,
            entities,
        })
    }

    /// Every name, entities first.
    pub(super) fn names(&self) -> &[Name] {
        // SAFETY: invariants 1 and 2: `names` initialized, aligned names at
        // the block's start, borrowed for as long as `self` is.
        unsafe { slice::from_raw_parts(self.ptr.as_ptr().cast::<Name>(), self.names as usize) }
    }

    /// Every name, to replace in place.
    pub(super) fn names_mut(&mut self) -> &mut [Name] {
        // SAFETY: as in `names`, and `&mut self` makes the borrow unique.
        unsafe { slice::from_raw_parts_mut(self.ptr.as_ptr().cast::<Name>(), self.names as usize) }
    }

    /// How many of the names are entities.
    pub(super) fn entities(&self) -> usize {
        self.entities as usize
    }

    /// The strings, end to end.
    pub(super) fn str(&self) -> &str {
        // SAFETY: invariant 2: `bytes` bytes of UTF-8 after the names.
        unsafe {
            let at = self
                .ptr
                .as_ptr()
                .add(size_of::<Name>() * self.names as usize);
            str::from_utf8_unchecked(slice::from_raw_parts(at, self.bytes as usize))
        }
    }
}

impl Drop for Packed {
    fn drop(&mut self) {
        let layout = layout(self.names as usize, self.bytes as usize);
        // SAFETY: invariants 1 and 2: the names are initialized and dropped
        // here once; the block came from the global allocator with this
        // layout unless its size is zero.
        unsafe {
            ptr::drop_in_place(self.names_mut());
            if layout.size() != 0 {
                alloc::dealloc(self.ptr.as_ptr(), layout);
            }
        }
    }
}

impl fmt::Debug for Packed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Packed")
            .field("names", &self.names())
            .field("entities", &self.entities)
            .field("str", &self.str())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(of: &[&str]) -> Box<[Name]> {
        of.iter().map(|n| Name::from(*n)).collect()
    }

    #[test]
    fn contents_read_back_as_given() {
        for (given, entities, strings) in [
            (&[][..], 0, &[][..]),
            (&[][..], 0, &["", ""][..]),
            (&["alex"][..], 1, &[][..]),
            (&[][..], 0, &["Alex moved to Lisbon.", "lisbon"][..]),
            (
                &["alex rivera", "lisbon", "Sam"][..],
                2,
                &["Alex moved.", "", "msg-7"][..],
            ),
        ] {
            let packed = Packed::new(names(given), entities, strings).unwrap();
            assert_eq!(packed.names(), &names(given)[..]);
            assert_eq!(packed.entities(), entities);
            assert_eq!(packed.str(), strings.concat());
        }
    }

    #[test]
    fn names_are_moved_in_and_dropped_once() {
        let shared = Name::from("alex rivera");
        let packed = Packed::new(Box::new([shared.clone(), shared.clone()]), 1, &["text"]).unwrap();
        assert_eq!(Name::strong_count(&shared), Some(3), "moved in, not cloned");
        let mut packed = packed;
        packed.names_mut()[1] = Name::from("sam");
        assert_eq!(
            Name::strong_count(&shared),
            Some(2),
            "the replaced name is dropped"
        );
        drop(packed);
        assert_eq!(
            Name::strong_count(&shared),
            Some(1),
            "the rest go with the block"
        );
    }

    #[test]
    fn counts_that_do_not_fit_are_refused() {
        let many: Box<[Name]> = (0..=u16::MAX as usize)
            .map(|i| Name::from(i.to_string()))
            .collect();
        assert!(Packed::new(many, 0, &[]).unwrap_err().contains("65,535"));
        assert!(
            Packed::new(names(&["a"]), 2, &[]).is_err(),
            "more entities than names"
        );
        assert_eq!(size_of::<Packed>(), 16);
    }
}
