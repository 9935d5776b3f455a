//! Serving-time rules over the retrieved candidates (paper Section 5,
//! Appendix D): identity resolution and abstention.
//!
//! - [`slot`]: the slot detector — which slot of the benchmark inventory a
//!   request asks for, read from its noun or, where the time and room slots
//!   share their nouns, from its trailing cue. The slot gate builds on it.

pub mod slot;

pub use slot::requested_slot;
