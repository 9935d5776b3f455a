//! Whether an open tenant may be closed: the requests that use it *pin*
//! it, and an evictor *retires* it (then closes and drops it) only when no
//! pin is held; once it is retired, no request pins it.
//!
//! # Invariant
//! A pin and a retirement never both succeed. The pin count and the retired
//! flag are one atomic word (the flag is its top bit), and each side
//! changes it with one read-modify-write: `pin` adds one and keeps the pin
//! only if the word it replaced had no flag (else it takes the one back);
//! `retire` swaps 0 for the flag, which succeeds only when no pin is held
//! and the tenant is not retired yet. Read-modify-writes of one word are
//! totally ordered, so whichever comes first, the other sees it (loom-tests
//! `residency`; the broken twin reads the word, then adds its pin, and loom
//! finds a request using a retired tenant). Both sides are lock-free: a pin
//! is one atomic operation on the request path.

#[cfg(loom)]
use crate::sync::fault::{self, Fault};
use crate::sync::{AtomicUsize, Ordering, Shared};

/// The retired flag: the top bit of the word.
const RETIRED: usize = 1 << (usize::BITS - 1);

/// An open tenant's pins and retired flag, in one word.
#[derive(Clone, Debug, Default)]
pub struct Residency(Shared<AtomicUsize>);

/// One request's hold on a tenant, given back when dropped.
#[derive(Debug)]
pub struct Pin(Shared<AtomicUsize>);

impl Residency {
    /// A pin, unless the tenant is retired (then the caller opens it
    /// again).
    pub fn pin(&self) -> Option<Pin> {
        #[cfg(loom)]
        if fault::injected(Fault::CheckThenPin) {
            // The broken twin: reads the word, then adds its pin.
            if self.0.load(Ordering::Acquire) & RETIRED != 0 {
                return None;
            }
            self.0.fetch_add(1, Ordering::AcqRel);
            return Some(Pin(self.0.clone()));
        }
        let before = self.0.fetch_add(1, Ordering::AcqRel);
        let pin = Pin(self.0.clone());
        // Retired: dropping the pin takes the one back.
        (before & RETIRED == 0).then_some(pin)
    }

    /// Retires the tenant if no pin is held (and it is not retired yet).
    pub fn retire(&self) -> bool {
        self.0
            .compare_exchange(0, RETIRED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Pins held now (a refused pin counts for an instant).
    pub fn pins(&self) -> usize {
        self.0.load(Ordering::Acquire) & !RETIRED
    }
}

impl Drop for Pin {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_tenant_is_not_retired_and_a_retired_one_is_not_pinned() {
        let r = Residency::default();
        let pin = r.pin().unwrap();
        assert!(!r.retire());
        assert!(r.pin().is_some(), "a failed retirement leaves it open");
        drop(pin);
        assert!(r.retire());
        assert!(!r.retire(), "retired once");
        assert!(r.pin().is_none());
        assert_eq!(r.pins(), 0);
    }
}
