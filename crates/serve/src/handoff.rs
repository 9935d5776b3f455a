//! The fresh-mode handoff: a one-shot completion shared by one request and
//! the worker that runs its job. It is the job's cancel flag too.
//!
//! # Protocol
//! `state` starts `PENDING` and ends `DONE` (a worker delivered) or
//! `CANCELLED` (the request's deadline won); every move is a
//! compare-and-swap, so exactly one party decides the outcome even when two
//! workers run the same job (a hedge):
//! - worker: CAS `PENDING → CLAIMED` (only one worker can), write the reply
//!   into `value`, CAS `CLAIMED → DONE` (`Release`: the reply is visible to
//!   whoever sees `DONE`), then unpark the request. If the first CAS fails
//!   the job is settled (another worker claimed it, or it was cancelled); if
//!   the second fails the request cancelled meanwhile: either way the worker
//!   keeps its reply and drops it — a late result reaches nobody.
//! - request: until `DONE` (`Acquire`) or the deadline, park; at the deadline
//!   CAS `PENDING`/`CLAIMED → CANCELLED` and fall back; if the state is
//!   `DONE`, the reply arrived in time after all and is taken.
//!
//! The request takes no lock and never waits for anything but `DONE` or its
//! own deadline (a worker between claim and delivery can be cancelled); the
//! worker's unpark follows its `DONE`, so a wake-up cannot be lost (the park
//! token survives an unpark that comes before the park).
//! Checked by loom-tests `fresh_handoff` and its broken variants.

use crate::sync::fault::{self, Fault};
use crate::sync::thread::{self, Thread};
use crate::sync::{AtomicU8, Deadline, Ordering, UnsafeCell};

const PENDING: u8 = 0;
const DONE: u8 = 1;
const CANCELLED: u8 = 2;
const CLAIMED: u8 = 3;

/// A one-shot reply slot, the cancel flag of its job.
#[derive(Debug)]
pub struct Completion<T> {
    /// `PENDING`, `CLAIMED` (a worker is delivering), then `DONE` or
    /// `CANCELLED`; every move is a CAS.
    state: AtomicU8,
    /// The reply; written by the claiming worker before `DONE`, read by the
    /// request only after it saw `DONE`.
    value: UnsafeCell<Option<T>>,
    /// The request thread, woken when the reply is ready.
    waiter: Thread,
}

// SAFETY: `value` is written only by the one worker whose `PENDING → CLAIMED`
// CAS succeeded, before its `CLAIMED → DONE` CAS (or, if that fails, when the
// request no longer reads it), and read by the request only after it
// observed `DONE`; the CASes order the accesses.
unsafe impl<T: Send> Sync for Completion<T> {}

/// How a wait ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Waited<T> {
    /// The worker's reply, in time.
    Done(T),
    /// The deadline passed; the job is cancelled and its reply will be dropped.
    TimedOut,
}

impl<T> Completion<T> {
    /// A pending completion that will wake the calling thread.
    pub fn new() -> Self {
        Completion {
            state: AtomicU8::new(PENDING),
            value: UnsafeCell::new(None),
            waiter: thread::current(),
        }
    }

    /// Whether the job no longer needs doing: the request gave up, or
    /// another worker (a hedge) is delivering or has delivered. A hint for
    /// the worker, checked between query terms: `Relaxed` suffices because
    /// the CASes in [`complete`] decide the outcome; a stale answer only costs
    /// the worker some extra work.
    ///
    /// [`complete`]: Completion::complete
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.state.load(Ordering::Relaxed) != PENDING
    }

    /// Delivers the reply (worker side). Hands it back if the job was
    /// already settled (cancelled, or delivered by another worker).
    pub fn complete(&self, reply: T) -> Result<(), T> {
        // Only one worker can claim; the claim gives it the right to write.
        let unclaimed = fault::injected(Fault::UnclaimedDelivery);
        if !unclaimed
            && self
                .state
                .compare_exchange(PENDING, CLAIMED, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return Err(reply);
        }
        // SAFETY: we hold the claim; the request reads `value` only after
        // observing DONE, which only we can set now.
        self.value.with_mut(|v| unsafe { *v = Some(reply) });
        if fault::injected(Fault::WakeBeforeDone) {
            self.waiter.unpark();
        }
        // Release: the reply written above is visible to the request that
        // observes DONE with Acquire.
        let claimed = if unclaimed { PENDING } else { CLAIMED };
        match self
            .state
            .compare_exchange(claimed, DONE, Ordering::Release, Ordering::Relaxed)
        {
            Ok(_) => {
                if !fault::injected(Fault::WakeBeforeDone) {
                    // After DONE: the request re-checks the state when it
                    // wakes, so this wake-up cannot be lost.
                    self.waiter.unpark();
                }
                Ok(())
            }
            // SAFETY: CANCELLED is final and the request no longer reads `value`.
            Err(_) => Err(self
                .value
                .with_mut(|v| unsafe { (*v).take() })
                .expect("reply written above")),
        }
    }

    /// Waits for the reply until `deadline` (request side), then cancels.
    pub fn wait(&self, deadline: Deadline) -> Waited<T> {
        match self.wait_until(deadline) {
            Some(reply) => Waited::Done(reply),
            None => self.cancel(),
        }
    }

    /// Waits for the reply until `deadline` without cancelling.
    pub fn wait_until(&self, mut deadline: Deadline) -> Option<T> {
        loop {
            // Acquire: pairs with the worker's Release CAS; the reply is visible.
            if self.state.load(Ordering::Acquire) == DONE {
                return Some(self.take());
            }
            if !deadline.park() {
                return None;
            }
        }
    }

    /// Gives up on the job, unless the reply is already there.
    pub fn cancel(&self) -> Waited<T> {
        let mut seen = PENDING;
        loop {
            match self
                .state
                .compare_exchange(seen, CANCELLED, Ordering::Relaxed, Ordering::Acquire)
            {
                Ok(_) => return Waited::TimedOut,
                // A worker delivered: its reply is complete (Acquire).
                Err(DONE) => return Waited::Done(self.take()),
                // A worker claimed it since we looked (only the request
                // cancels, and only DONE follows a claim): cancel the claim.
                // A retry follows a worker's progress, so there are at most two.
                Err(other) => seen = other,
            }
        }
    }

    /// Readies a used completion for the next job of the same request
    /// thread. Only sound when the caller holds the only reference (the
    /// worker has let go), which [`super::request::Requester`] checks with
    /// `Shared::get_mut` — skipping that check is the `SharedReplySlot` fault.
    pub fn reset(&self) {
        self.state.store(PENDING, Ordering::Relaxed);
        // SAFETY: no other thread holds this completion (see above).
        self.value.with_mut(|v| unsafe { *v = None });
    }

    fn take(&self) -> T {
        // SAFETY: called only after observing DONE (Acquire); the worker no
        // longer touches `value`.
        self.value
            .with_mut(|v| unsafe { (*v).take() })
            .expect("DONE is set only after the reply is written")
    }
}

impl<T> Default for Completion<T> {
    fn default() -> Self {
        Self::new()
    }
}
