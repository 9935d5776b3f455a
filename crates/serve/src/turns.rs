//! Turns: work of one owner (a tenant's write path) run on shared
//! executors, at most one turn queued or running at a time, and never a
//! request left waiting without a turn.
//!
//! # Protocol
//! - A producer enqueues its request, then calls [`Turns::request`]: true
//!   means no turn was queued or running, and the producer must queue one.
//! - A turn ends with [`Turns::finish`], given a look at its queue: with
//!   requests waiting it keeps the flag and says "queue the next turn";
//!   with none it clears the flag, *then looks again*, and takes the flag
//!   back if a request arrived in between (the producer saw the flag still
//!   set and queued nothing).
//!
//! Both the producer's "set" and the turn's "clear" are swaps of the one
//! flag, so one reads the other's write: either the producer sees the flag
//! clear and queues the turn, or the turn's clear reads the producer's set
//! and with it sees the request enqueued before it (loom-tests
//! `writer_turns`, whose models found the lost wake-up when the clear was a
//! plain store; the broken twin clears without looking again).

#[cfg(loom)]
use crate::sync::fault::{self, Fault};
use crate::sync::{AtomicU8, Ordering};

/// The flag of one owner's turns.
#[derive(Debug, Default)]
pub struct Turns(AtomicU8);

impl Turns {
    /// After enqueueing a request: whether the caller must queue a turn.
    pub fn request(&self) -> bool {
        self.0.swap(1, Ordering::SeqCst) == 0
    }

    /// At the end of a turn, with `waiting` telling whether requests are
    /// queued: whether the caller must queue the next turn.
    pub fn finish(&self, waiting: impl Fn() -> bool) -> bool {
        if waiting() {
            return true;
        }
        // A read-modify-write, not a store: if a producer's `request` came
        // first, this reads its write and so sees the request it enqueued
        // before it (release/acquire suffices; no store-load fence needed).
        self.0.swap(0, Ordering::SeqCst);
        #[cfg(loom)]
        if fault::injected(Fault::ClearWithoutLooking) {
            return false;
        }
        waiting() && self.request()
    }

    /// Whether a turn is queued or running.
    pub fn scheduled(&self) -> bool {
        self.0.load(Ordering::SeqCst) != 0
    }

    /// Gives the flag up without a turn (the executor refused it).
    pub fn abandon(&self) {
        self.0.store(0, Ordering::SeqCst);
    }
}
