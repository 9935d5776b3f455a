//! The synchronization primitives of the serving protocols, in one place
//! (crossbeam's `primitive` pattern): std, arc-swap and real time in normal
//! builds; loom's checked stand-ins under `--cfg loom`. The serving code
//! (version publication, snapshot publication, the fresh-mode handoff with
//! its timeout and cancel flag, the commit) uses only what this module
//! exports, so the models in `loom-tests/` check the code that serves
//! requests, not a re-implementation of it.
//!
//! # What the loom build changes
//! - Atomics, [`Shared`] (the shared pointer of the protocols' state),
//!   [`thread`] handles and [`UnsafeCell`] are loom's, so
//!   every interleaving and every weak-memory outcome of the protocols is
//!   explored, and a payload read without a happens-before edge to its write
//!   is reported as a race.
//! - [`Publication`] (arc-swap in normal builds, which has no loom support)
//!   becomes a single `AtomicPtr` to an immutable node: `store` builds the
//!   node (payload written through a loom cell) and publishes it with one
//!   `Release` swap; `load` is one `Acquire` load followed by a checked read
//!   of the payload. That is exactly what the proofs use from `ArcSwap`:
//!   (a) a single-pointer publication, (b) a reader sees the whole value
//!   written before the `store` (release/acquire), (c) a reader never blocks
//!   on the writer, (d) per reader, loads are monotone in store order
//!   (coherence of one atomic location). What it leaves out is reclamation —
//!   nodes are freed when the publication is dropped — which is arc-swap's
//!   own tested concern and no part of Propositions 1 and 2.
//! - A timed wait ([`Deadline`]) has no clock: a finite deadline may expire
//!   at any scheduling point (it allows one yield to the other threads, then
//!   reports expiry), so loom explores both "the worker finished in time" and
//!   "the timeout fired first"; [`Deadline::never`] parks for real, so a
//!   missing wake-up is a deadlock loom reports.
//! - `fault` (loom builds only) can switch on one deliberate bug at a
//!   time, so each model is shown to catch the bug it is about. Every fault
//!   is `cfg(loom)` code: normal builds compile none of it.

/// The shared pointer of the protocols' state (publications, completions):
/// std's `Arc`, or loom's under `--cfg loom`. Named apart from `Arc`, which
/// in the serving modules always means std's (data no protocol races on:
/// requests, blocks, metrics, the clock), so one name never means both.
#[cfg(not(loom))]
pub use std::sync::Arc as Shared;
#[cfg(not(loom))]
pub use std::sync::atomic::{AtomicPtr, AtomicU8, AtomicU64, AtomicUsize, Ordering};

/// Loom's `Arc` (see the normal build's [`Shared`]).
#[cfg(loom)]
pub use loom::sync::Arc as Shared;
#[cfg(loom)]
pub use loom::sync::atomic::{AtomicPtr, AtomicU8, AtomicU64, AtomicUsize, Ordering};

/// std's mutex and condition variable, or loom's under `--cfg loom`.
#[cfg(not(loom))]
pub use std::sync::{Condvar, Mutex, MutexGuard};

/// Loom's mutex and condition variable (see the normal build's).
#[cfg(loom)]
pub use loom::sync::{Condvar, Mutex, MutexGuard};

/// Thread handles, parking and yielding.
pub mod thread {
    #[cfg(not(loom))]
    pub use std::thread::{Thread, current, park, yield_now};

    #[cfg(loom)]
    pub use loom::thread::{Thread, current, park, yield_now};
}

/// An interior-mutable cell with loom's closure API (`with`, `with_mut`), so
/// loom sees every access to a payload shared between threads.
#[derive(Debug, Default)]
pub struct UnsafeCell<T> {
    #[cfg(not(loom))]
    inner: std::cell::UnsafeCell<T>,
    #[cfg(loom)]
    inner: loom::cell::UnsafeCell<T>,
}

impl<T> UnsafeCell<T> {
    /// A cell holding `value`.
    pub fn new(value: T) -> Self {
        UnsafeCell {
            #[cfg(not(loom))]
            inner: std::cell::UnsafeCell::new(value),
            #[cfg(loom)]
            inner: loom::cell::UnsafeCell::new(value),
        }
    }

    /// Reads through a raw pointer.
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        #[cfg(not(loom))]
        return f(self.inner.get());
        #[cfg(loom)]
        return self.inner.with(f);
    }

    /// Writes through a raw pointer.
    #[inline]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(not(loom))]
        return f(self.inner.get());
        #[cfg(loom)]
        return self.inner.with_mut(f);
    }
}

/// A value published by one writer to many readers with a single pointer
/// store; readers never block and never see a partial value.
///
/// # Invariants
/// 1. `load` returns a value that was complete before the `store` that
///    published it (release/acquire on one pointer).
/// 2. For one reader, successive loads never return an older store than a
///    previous load returned (coherence of one atomic location).
///
/// Checked by loom-tests `publication` (and its broken variants).
pub struct Publication<T> {
    #[cfg(not(loom))]
    current: arc_swap::ArcSwap<T>,
    #[cfg(loom)]
    current: AtomicPtr<Node<T>>,
}

impl<T: std::fmt::Debug> std::fmt::Debug for Publication<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Publication").field(&self.load()).finish()
    }
}

#[cfg(not(loom))]
impl<T> Publication<T> {
    /// A publication of `value`.
    pub fn new(value: Shared<T>) -> Self {
        Publication {
            current: arc_swap::ArcSwap::new(value),
        }
    }

    /// Publishes `value`: readers that load after this see it or a newer one.
    #[inline]
    pub fn store(&self, value: Shared<T>) {
        // PUBLISH: `value` is complete (we own it); arc-swap's swap is a
        // release, so a reader sees all of it or the previous value
        // (loom: publication::no_torn_version).
        self.current.store(value);
    }

    /// The newest published value.
    #[inline]
    pub fn load(&self) -> Shared<T> {
        // An acquire load of one pointer plus a reference-count increment:
        // no lock, no waiting on the writer.
        self.current.load_full()
    }
}

/// A published value in the loom build.
#[cfg(loom)]
struct Node<T> {
    /// The payload, written before publication and only read after; a loom
    /// cell, so a read without a happens-before edge to the write is a race.
    value: UnsafeCell<Option<Shared<T>>>,
    /// The node this one replaced, freed with the publication.
    previous: *mut Node<T>,
}

#[cfg(loom)]
impl<T> Publication<T> {
    /// A publication of `value`.
    pub fn new(value: Shared<T>) -> Self {
        let publication = Publication {
            current: AtomicPtr::new(std::ptr::null_mut()),
        };
        publication.store(value);
        publication
    }

    /// Publishes `value` with one `Release` swap.
    pub fn store(&self, value: Shared<T>) {
        let early = fault::injected(fault::Fault::PublishBeforeComplete);
        let (now, later) = if early {
            (None, Some(value))
        } else {
            (Some(value), None)
        };
        let node = Box::into_raw(Box::new(Node {
            value: UnsafeCell::new(now),
            previous: std::ptr::null_mut(),
        }));
        let order = if fault::injected(fault::Fault::RelaxedPublication) {
            Ordering::Relaxed
        } else {
            Ordering::Release
        };
        let previous = self.current.swap(node, order);
        // SAFETY: `node` is ours until the publication is dropped; only this
        // (single) writer touches `previous` and, in the broken variant, the
        // payload after publication.
        unsafe {
            (*node).previous = previous;
            if let Some(value) = later {
                (*node).value.with_mut(|v| *v = Some(value));
            }
        }
    }

    /// The newest published value: one `Acquire` load, then the payload.
    pub fn load(&self) -> Shared<T> {
        let order = if fault::injected(fault::Fault::RelaxedPublication) {
            Ordering::Relaxed
        } else {
            Ordering::Acquire
        };
        let node = self.current.load(order);
        // SAFETY: nodes are freed only when the publication is dropped.
        let value = unsafe { (*node).value.with(|v| (*v).clone()) };
        value.expect("torn publication: a reader saw a node before its value was written")
    }
}

#[cfg(loom)]
impl<T> Drop for Publication<T> {
    fn drop(&mut self) {
        let mut node = self.current.load(Ordering::Acquire);
        while !node.is_null() {
            // SAFETY: every node was made by `Box::into_raw` in `store` and is
            // reachable exactly once along the `previous` chain.
            let boxed = unsafe { Box::from_raw(node) };
            node = boxed.previous;
        }
    }
}

// SAFETY (loom build): nodes are immutable once published and owned by the
// publication; `T` crosses threads only through `Shared<T>`.
#[cfg(loom)]
unsafe impl<T: Send + Sync> Send for Publication<T> {}
#[cfg(loom)]
unsafe impl<T: Send + Sync> Sync for Publication<T> {}

/// When a timed wait gives up.
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    #[cfg(not(loom))]
    at: Option<std::time::Instant>,
    #[cfg(loom)]
    finite: bool,
}

impl Deadline {
    /// A deadline `timeout` from now.
    #[cfg(not(loom))]
    pub fn after(timeout: std::time::Duration) -> Self {
        Deadline {
            at: Some(std::time::Instant::now() + timeout),
        }
    }

    /// A deadline that may expire at any scheduling point (loom has no clock).
    #[cfg(loom)]
    pub fn after(_timeout: std::time::Duration) -> Self {
        Deadline {
            finite: !fault::injected(fault::Fault::WaitWithoutTimeout),
        }
    }

    /// No deadline: wait until woken.
    pub fn never() -> Self {
        Deadline {
            #[cfg(not(loom))]
            at: None,
            #[cfg(loom)]
            finite: false,
        }
    }

    /// Blocks the calling thread until it is unparked, the deadline passes
    /// (returns `false`), or spuriously. Callers re-check their condition.
    #[cfg(not(loom))]
    pub fn park(&mut self) -> bool {
        match self.at {
            None => {
                std::thread::park();
                true
            }
            Some(at) => {
                let now = std::time::Instant::now();
                if now >= at {
                    return false;
                }
                std::thread::park_timeout(at - now);
                true
            }
        }
    }

    /// loom: a finite deadline yields once and then has expired; `never`
    /// parks until unparked (a lost wake-up is a deadlock loom reports).
    #[cfg(loom)]
    pub fn park(&mut self) -> bool {
        if self.finite {
            loom::thread::yield_now();
            self.finite = false;
            false
        } else {
            loom::thread::park();
            true
        }
    }
}

/// Shares a value the writer also keeps (a std `Arc`) with readers: the same
/// pointer in normal builds; a copy under loom, whose `Arc` is its own type.
#[cfg(not(loom))]
#[inline]
pub fn share<T: Clone>(value: std::sync::Arc<T>) -> Shared<T> {
    value
}

/// Shares a value the writer also keeps (loom build: a copy).
#[cfg(loom)]
pub fn share<T: Clone>(value: std::sync::Arc<T>) -> Shared<T> {
    Shared::new((*value).clone())
}

pub mod queue;

/// Deliberate bugs for the loom models' broken variants.
#[cfg(loom)]
pub mod fault {
    /// One deliberate bug.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Fault {
        /// No fault.
        None,
        /// Publish with `Relaxed` store and load instead of release/acquire.
        RelaxedPublication,
        /// Publish the pointer, then write the payload.
        PublishBeforeComplete,
        /// The fresh-mode wait has no timeout.
        WaitWithoutTimeout,
        /// The worker wakes the request before it marks the job done.
        WakeBeforeDone,
        /// Two workers of a hedged job deliver without claiming it first.
        UnclaimedDelivery,
        /// One reply slot per requester, reused across requests (no job
        /// identity), so a late result can reach the next request.
        SharedReplySlot,
        /// A supersession is published as two versions (old value retired,
        /// then new value added).
        SplitCommit,
        /// The snapshot publisher writes the block and the store sequence as
        /// two publications.
        SplitSnapshot,
        /// Per-tenant admission checks the cap, then claims a place, as two
        /// steps.
        CheckThenEnter,
        /// A turn clears its flag without looking at its queue again.
        ClearWithoutLooking,
        /// A request looks at its tenant's retired flag, then pins it, as
        /// two steps.
        CheckThenPin,
        /// An open's flight is removed, then what it opened is published,
        /// in two critical sections.
        RemoveThenPublish,
        /// An open of a tenant runs without waiting for its close.
        OpenWhileClosing,
        /// A job-queue receiver announces itself as a sleeper and parks
        /// without looking at the queue again.
        SleepWithoutLooking,
    }

    // Per OS thread: loom runs a model's threads as coroutines on the thread
    // of the test that calls `loom::model`, so a fault injected there is seen
    // by every thread of that model and by no other test running alongside.
    std::thread_local! {
        static INJECTED: std::cell::Cell<Fault> = const { std::cell::Cell::new(Fault::None) };
    }

    /// Switches `fault` on for the models this test thread runs.
    pub fn inject(fault: Fault) {
        INJECTED.with(|f| f.set(fault));
    }

    /// Whether `fault` is switched on.
    #[inline]
    pub fn injected(fault: Fault) -> bool {
        INJECTED.with(|f| f.get() == fault)
    }
}
