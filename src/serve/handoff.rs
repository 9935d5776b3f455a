//! The fresh-mode handoff: a one-shot completion shared by one request and
//! the worker that runs its job. It is the job's cancel flag too.
//!
//! # Protocol
//! `state` moves once, from `PENDING` to `DONE` (the worker won) or to
//! `CANCELLED` (the request's deadline won), by compare-and-swap, so exactly
//! one side decides the outcome:
//! - worker: write the reply into `value`, then CAS `PENDING → DONE`
//!   (`Release`: the reply is visible to whoever sees `DONE`), then unpark
//!   the request; if the CAS finds `CANCELLED` it takes its reply back and
//!   drops it — a cancelled job's result reaches nobody.
//! - request: until `DONE` (`Acquire`) or the deadline, park; at the deadline
//!   CAS `PENDING → CANCELLED` and fall back; if that CAS finds `DONE`, the
//!   reply arrived in time after all and is taken.
//!
//! The request takes no lock and never waits for anything but `DONE` or its
//! own deadline; the worker's unpark follows its CAS, so a wake-up cannot be
//! lost (the park token survives an unpark that comes before the park).
//! Checked by loom-tests `fresh_handoff` and its broken variants.

use crate::sync::fault::{self, Fault};
use crate::sync::thread::{self, Thread};
use crate::sync::{AtomicU8, Deadline, Ordering, UnsafeCell};

const PENDING: u8 = 0;
const DONE: u8 = 1;
const CANCELLED: u8 = 2;

/// A one-shot reply slot, the cancel flag of its job.
#[derive(Debug)]
pub struct Completion<T> {
    /// `PENDING`, then `DONE` or `CANCELLED`, set once by CAS.
    state: AtomicU8,
    /// The reply; written by the worker before `DONE`, read by the request
    /// only after it saw `DONE`.
    value: UnsafeCell<Option<T>>,
    /// The request thread, woken when the reply is ready.
    waiter: Thread,
}

// SAFETY: `value` is accessed by the worker only before its CAS to `DONE`
// (or after a failed one, when the request no longer reads it) and by the
// request only after it observed `DONE`; the CAS orders the two.
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

    /// Whether the request gave up. A hint for the worker, checked between
    /// query terms: `Relaxed` suffices because the CAS in [`complete`] decides
    /// the outcome; a stale `false` only costs the worker some extra work.
    ///
    /// [`complete`]: Completion::complete
    #[inline]
    pub fn is_cancelled(&self) -> bool {
        self.state.load(Ordering::Relaxed) == CANCELLED
    }

    /// Delivers the reply (worker side). Hands it back if the request has
    /// already given up.
    pub fn complete(&self, reply: T) -> Result<(), T> {
        // SAFETY: before our CAS the request does not read `value` (it reads
        // only after observing DONE, which only we can set).
        self.value.with_mut(|v| unsafe { *v = Some(reply) });
        if fault::injected(Fault::WakeBeforeDone) {
            self.waiter.unpark();
        }
        // Release: the reply written above is visible to the request that
        // observes DONE with Acquire.
        match self
            .state
            .compare_exchange(PENDING, DONE, Ordering::Release, Ordering::Relaxed)
        {
            Ok(_) => {
                if !fault::injected(Fault::WakeBeforeDone) {
                    // After the CAS: the request re-checks the state when it
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
    pub fn wait(&self, mut deadline: Deadline) -> Waited<T> {
        loop {
            // Acquire: pairs with the worker's Release CAS; the reply is visible.
            if self.state.load(Ordering::Acquire) == DONE {
                return Waited::Done(self.take());
            }
            if !deadline.park() {
                break;
            }
        }
        match self
            .state
            .compare_exchange(PENDING, CANCELLED, Ordering::Relaxed, Ordering::Acquire)
        {
            Ok(_) => Waited::TimedOut,
            // The worker won the race: its reply is complete (Acquire above).
            Err(_) => Waited::Done(self.take()),
        }
    }

    /// Readies a used completion for the next job of the same request
    /// thread. Only sound when the caller holds the only reference (the
    /// worker has let go), which [`super::request::Requester`] checks with
    /// `Arc::get_mut` — skipping that check is the `SharedReplySlot` fault.
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
