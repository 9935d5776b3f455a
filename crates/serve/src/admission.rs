//! Per-tenant admission to a shared worker queue: when many tenants'
//! runtimes share one [`crate::Host`], each may have at most `cap` fresh
//! jobs queued or running at once, so one tenant cannot fill the queue and
//! starve the others (a request over its share falls back at once, as when
//! no worker is free).
//!
//! # Invariant
//! At no point do more than `cap` tickets of one admission exist: `enter`
//! claims a place with one atomic read-modify-write and gives it back if
//! the place was past the cap, so two racing requests can never both take
//! the last place (loom-tests `tenant_admission`; the broken twin checks,
//! then increments, and loom finds the two tickets).

#[cfg(loom)]
use crate::sync::fault::{self, Fault};
use crate::sync::{AtomicUsize, Ordering, Shared};

/// A tenant's share of the shared worker queue.
#[derive(Clone, Debug)]
pub struct Admission {
    held: Shared<AtomicUsize>,
    cap: usize,
}

/// One admitted job's place, given back when the job is dropped (by the
/// worker that ran it, or by the queue if it is never run).
#[derive(Debug)]
pub struct Ticket(Shared<AtomicUsize>);

impl Admission {
    /// At most `cap` jobs at once (at least one).
    pub fn new(cap: usize) -> Self {
        Admission {
            held: Shared::new(AtomicUsize::new(0)),
            cap: cap.max(1),
        }
    }

    /// A place for one more job, unless `cap` are already held.
    pub fn enter(&self) -> Option<Ticket> {
        #[cfg(loom)]
        if fault::injected(Fault::CheckThenEnter) {
            // The broken twin: the check and the claim are two steps.
            if self.held.load(Ordering::Acquire) >= self.cap {
                return None;
            }
            self.held.fetch_add(1, Ordering::AcqRel);
            return Some(Ticket(self.held.clone()));
        }
        let before = self.held.fetch_add(1, Ordering::AcqRel);
        let ticket = Ticket(self.held.clone());
        // Over the cap: dropping the ticket gives the place back.
        (before < self.cap).then_some(ticket)
    }

    /// Places held now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }

    /// The cap.
    pub fn cap(&self) -> usize {
        self.cap
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
