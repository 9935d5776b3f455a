//! The persistent hash map behind everything an index version shares with
//! the writer (gazetteer, graph, deletion statistics): `imbl`'s HAMT, so a
//! clone is O(1) and an update copies one path, with the Fx hasher instead of
//! SipHash because these lookups sit on the read path.
//!
//! Fx is not keyed: a caller who controls names could craft collisions and
//! slow down its *own* store. The server keeps tenants in separate stores.

/// A persistent map with the Fx hasher.
pub type PMap<K, V> =
    imbl::GenericHashMap<K, V, rustc_hash::FxBuildHasher, imbl::shared_ptr::DefaultSharedPtr>;
