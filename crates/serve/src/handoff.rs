//! The fresh-mode handoff: a one-shot completion shared by one request and
//! the worker that runs its job. It is the job's cancel flag too.
//!
//! # Two halves
//! [`completion`] makes a [`Waiter`] for the request and a [`Delivery`] for
//! the workers. The type system carries the protocol's ownership rules, so
//! no safe call can race: only the one `Waiter` (not `Clone`, not `Send`:
//! it parks the thread that made it) can wait, take the reply, cancel or
//! reuse the slot, each through `&mut self`; a `Delivery` (cloneable, for a
//! hedge) can only deliver or ask whether the job is still wanted. Reuse
//! ([`Waiter::renew`]) needs proof that no `Delivery` is left
//! (`Shared::get_mut`), and resets the slot through that `&mut`.
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
//! Checked by loom-tests `fresh_handoff` and its broken variants, whose
//! faults are `cfg(loom)` code here: normal builds compile none of them.

use std::marker::PhantomData;

#[cfg(loom)]
use crate::sync::fault::{self, Fault};
use crate::sync::thread::{self, Thread};
use crate::sync::{AtomicU8, Deadline, Ordering, Shared, UnsafeCell};

const PENDING: u8 = 0;
const DONE: u8 = 1;
const CANCELLED: u8 = 2;
const CLAIMED: u8 = 3;

/// The state both halves share.
#[derive(Debug)]
struct Slot<T> {
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
// request no longer reads it), and read by the one `Waiter` only after it
// observed `DONE`; the CASes order the accesses, and a reset happens only
// through `&mut Slot` (no other handle exists).
unsafe impl<T: Send> Sync for Slot<T> {}

/// How a wait ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Waited<T> {
    /// The worker's reply, in time.
    Done(T),
    /// The deadline passed; the job is cancelled and its reply will be dropped.
    TimedOut,
}

/// A new completion for a job of the calling thread: the request's half
/// and the workers' half.
pub fn completion<T>() -> (Waiter<T>, Delivery<T>) {
    let slot = Shared::new(Slot {
        state: AtomicU8::new(PENDING),
        value: UnsafeCell::new(None),
        waiter: thread::current(),
    });
    let delivery = Delivery(slot.clone());
    (
        Waiter {
            slot,
            _thread_bound: PhantomData,
        },
        delivery,
    )
}

/// The request's half: waits, takes the reply, cancels, reuses the slot.
/// One per completion; bound to the thread that made it.
#[derive(Debug)]
pub struct Waiter<T> {
    slot: Shared<Slot<T>>,
    _thread_bound: PhantomData<*const ()>,
}

/// The workers' half: delivers the reply, or learns that the job is no
/// longer wanted. Cloned for a hedge.
#[derive(Debug)]
pub struct Delivery<T>(Shared<Slot<T>>);

impl<T> Clone for Delivery<T> {
    fn clone(&self) -> Self {
        Delivery(self.0.clone())
    }
}

impl<T> Delivery<T> {
    /// Whether both halves deliver the same job (a job and its hedge).
    pub fn same_job(&self, other: &Delivery<T>) -> bool {
        Shared::ptr_eq(&self.0, &other.0)
    }

    /// Whether the job no longer needs doing: the request gave up, or
    /// another worker (a hedge) is delivering or has delivered. A hint for
    /// the worker, checked between query terms: `Relaxed` suffices because
    /// the CASes in [`complete`] decide the outcome; a stale answer only costs
    /// the worker some extra work.
    ///
    /// [`complete`]: Delivery::complete
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.0.state.load(Ordering::Relaxed) != PENDING
    }

    /// Delivers the reply. Hands it back if the job was already settled
    /// (cancelled, or delivered by another worker).
    pub fn complete(&self, reply: T) -> Result<(), T> {
        let slot = &*self.0;
        // Only one worker can claim; the claim gives it the right to write.
        #[cfg(loom)]
        let unclaimed = fault::injected(Fault::UnclaimedDelivery);
        #[cfg(not(loom))]
        let unclaimed = false;
        if !unclaimed
            && slot
                .state
                .compare_exchange(PENDING, CLAIMED, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return Err(reply);
        }
        // SAFETY: we hold the claim; the request reads `value` only after
        // observing DONE, which only we can set now.
        slot.value.with_mut(|v| unsafe { *v = Some(reply) });
        #[cfg(loom)]
        let early_wake = fault::injected(Fault::WakeBeforeDone);
        #[cfg(not(loom))]
        let early_wake = false;
        if early_wake {
            slot.waiter.unpark();
        }
        // Release: the reply written above is visible to the request that
        // observes DONE with Acquire.
        let claimed = if unclaimed { PENDING } else { CLAIMED };
        match slot
            .state
            .compare_exchange(claimed, DONE, Ordering::Release, Ordering::Relaxed)
        {
            Ok(_) => {
                if !early_wake {
                    // After DONE: the request re-checks the state when it
                    // wakes, so this wake-up cannot be lost.
                    slot.waiter.unpark();
                }
                Ok(())
            }
            // SAFETY: CANCELLED is final and the request no longer reads `value`.
            Err(_) => Err(slot
                .value
                .with_mut(|v| unsafe { (*v).take() })
                .expect("reply written above")),
        }
    }
}

impl<T> Waiter<T> {
    /// Waits for the reply until `deadline`, then cancels.
    pub fn wait(&mut self, deadline: Deadline) -> Waited<T> {
        match self.wait_until(deadline) {
            Some(reply) => Waited::Done(reply),
            None => self.cancel(),
        }
    }

    /// Waits for the reply until `deadline` without cancelling. After a
    /// reply has been taken, returns `None` until [`renew`](Waiter::renew).
    pub fn wait_until(&mut self, mut deadline: Deadline) -> Option<T> {
        loop {
            // Acquire: pairs with the worker's Release CAS; the reply is visible.
            if self.slot.state.load(Ordering::Acquire) == DONE {
                return self.take();
            }
            if !deadline.park() {
                return None;
            }
        }
    }

    /// Gives up on the job, unless the reply is already there.
    pub fn cancel(&mut self) -> Waited<T> {
        let mut seen = PENDING;
        loop {
            match self.slot.state.compare_exchange(
                seen,
                CANCELLED,
                Ordering::Relaxed,
                Ordering::Acquire,
            ) {
                Ok(_) => return Waited::TimedOut,
                // A worker delivered: its reply is complete (Acquire).
                Err(DONE) => return self.take().map_or(Waited::TimedOut, Waited::Done),
                // Already cancelled.
                Err(CANCELLED) => return Waited::TimedOut,
                // A worker claimed it since we looked (only the request
                // cancels, and only DONE follows a claim): cancel the claim.
                // A retry follows a worker's progress, so there are at most two.
                Err(other) => seen = other,
            }
        }
    }

    /// Readies the slot for the next job of this thread and hands out its
    /// new delivery half, if no delivery half of the last job is left (the
    /// worker has let go: `Shared::get_mut` acquires its release of its
    /// reference, so its last access happened before the reset). `None`:
    /// make a new [`completion`].
    pub fn renew(&mut self) -> Option<Delivery<T>> {
        #[cfg(loom)]
        if fault::injected(Fault::SharedReplySlot) {
            // The broken variant: reuse without the proof, so a late
            // worker's reply can land in the next job's slot.
            self.slot.state.store(PENDING, Ordering::Relaxed);
            // SAFETY: none — this is the bug the model must catch.
            self.slot.value.with_mut(|v| unsafe { *v = None });
            return Some(Delivery(self.slot.clone()));
        }
        let slot = Shared::get_mut(&mut self.slot)?;
        slot.state = AtomicU8::new(PENDING);
        slot.value = UnsafeCell::new(None);
        Some(Delivery(self.slot.clone()))
    }

    fn take(&mut self) -> Option<T> {
        // SAFETY: called only after observing DONE (Acquire): the worker no
        // longer touches `value`, and `&mut self` is the only reader.
        self.slot.value.with_mut(|v| unsafe { (*v).take() })
    }
}
