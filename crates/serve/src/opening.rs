//! Opening closed tenants: one open per tenant at a time, many tenants at
//! once. A request for a tenant that is not open calls
//! [`Opening::open`]; the first such request (the leader) runs the open
//! outside every lock, and requests for the same tenant meanwhile wait for
//! its result instead of opening it again.
//!
//! # Invariant
//! While a tenant stays open, it is opened once: no two requests both run
//! its open. The state the caller guards (`S`: its table of open tenants)
//! and the in-flight opens are under one lock, and the leader, in one
//! critical section, publishes what it opened into `S` and removes its
//! flight; a request checks `S`, then the flights, under the same lock, so
//! it finds the tenant in one or the other (loom-tests `opening`; the broken
//! twin removes the flight and publishes in two critical sections, and loom
//! finds a second open). A failed open is published nowhere: the next
//! request tries again.
//!
//! A tenant is closed outside the lock too (closing a ledger file syncs it,
//! and freeing a store takes milliseconds: under the lock, every open's
//! publish would wait behind it). The caller takes the tenant out of `S`
//! and marks it closing in one critical section ([`Locked::begin_close`]),
//! closes it unlocked, then [`Locked::end_close`]s it. While it is
//! closing, an open of it waits before it runs: no two opens of a tenant's
//! file overlap, whoever does the second (loom-tests `opening`; the broken
//! twin opens without waiting, and loom finds the file opened while its
//! close runs).

#[cfg(loom)]
use crate::sync::fault::{self, Fault};
use crate::sync::{Condvar, Mutex, MutexGuard, Shared};
use std::collections::HashMap;

/// The caller's state `S` and the opens in flight, under one lock.
pub struct Opening<S, V> {
    inner: Mutex<Inner<S, V>>,
}

struct Inner<S, V> {
    state: S,
    flights: HashMap<String, Shared<Flight<V>>>,
    closes: HashMap<String, Shared<Closing>>,
}

/// One close running outside the lock: done once the caller ends it.
struct Closing {
    closed: Mutex<bool>,
    done: Condvar,
}

impl Closing {
    fn wait(&self) {
        let mut closed = self.closed.lock().unwrap_or_else(|e| e.into_inner());
        while !*closed {
            closed = self.done.wait(closed).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// A tenant taken out of the caller's state to be closed outside the lock
/// ([`Locked::begin_close`]); hand it to [`Locked::end_close`] once
/// closed.
#[must_use = "an open of the tenant waits until the close is ended"]
pub struct Close {
    name: String,
    closing: Shared<Closing>,
}

/// One open in flight: its result once the leader has it.
struct Flight<V> {
    result: Mutex<Option<Result<V, String>>>,
    done: Condvar,
}

impl<S: Default, V> Default for Opening<S, V> {
    fn default() -> Self {
        Opening {
            inner: Mutex::new(Inner {
                state: S::default(),
                flights: HashMap::new(),
                closes: HashMap::new(),
            }),
        }
    }
}

/// The caller's state, locked (no open can publish meanwhile).
pub struct Locked<'a, S, V>(MutexGuard<'a, Inner<S, V>>);

impl<S, V> Locked<'_, S, V> {
    /// Whether an open of `name` is in flight (a caller that removes what
    /// it would open waits for it: the flight cannot start anew once the
    /// caller's state says `name` is gone, if its open checks that).
    pub fn in_flight(&self, name: &str) -> bool {
        self.0.flights.contains_key(name)
    }

    /// Whether `name` is being closed outside the lock.
    pub fn closing(&self, name: &str) -> bool {
        self.0.closes.contains_key(name)
    }

    /// Marks `name`, which the caller takes out of its state in this
    /// critical section, as closing: until [`Locked::end_close`], an open
    /// of it waits before it runs.
    pub fn begin_close(&mut self, name: &str) -> Close {
        let closing = Shared::new(Closing {
            closed: Mutex::new(false),
            done: Condvar::new(),
        });
        let previous = self.0.closes.insert(name.to_owned(), closing.clone());
        debug_assert!(previous.is_none(), "{name} closed twice at once");
        Close {
            name: name.to_owned(),
            closing,
        }
    }

    /// Ends a close [`Locked::begin_close`] began: opens of the tenant
    /// waiting for it go on (once this lock is released).
    pub fn end_close(&mut self, close: Close) {
        self.0.closes.remove(&close.name);
        *close
            .closing
            .closed
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = true;
        close.closing.done.notify_all();
    }
}

impl<S, V> std::ops::Deref for Locked<'_, S, V> {
    type Target = S;

    fn deref(&self) -> &S {
        &self.0.state
    }
}

impl<S, V> std::ops::DerefMut for Locked<'_, S, V> {
    fn deref_mut(&mut self) -> &mut S {
        &mut self.0.state
    }
}

impl<S, V: Clone> Opening<S, V> {
    /// Locks the caller's state (for changes that are not opens: closing
    /// tenants, rereading the registry).
    pub fn lock(&self) -> Locked<'_, S, V> {
        Locked(self.inner.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// `find(state)` if it finds `name` open; else the result of `open()`,
    /// run by one request at a time for `name` outside the lock, after any
    /// close of `name` in progress, and, on success, `publish`ed into the
    /// state before any other request looks.
    pub fn open(
        &self,
        name: &str,
        find: impl FnOnce(&mut S) -> Option<V>,
        open: impl FnOnce() -> Result<V, String>,
        publish: impl FnOnce(&mut S, &V),
    ) -> Result<V, String> {
        let (flight, leader, closing) = {
            let mut inner = self.lock();
            if let Some(v) = find(&mut inner) {
                return Ok(v);
            }
            match inner.0.flights.get(name) {
                Some(f) => (f.clone(), false, None),
                None => {
                    let f = Shared::new(Flight {
                        result: Mutex::new(None),
                        done: Condvar::new(),
                    });
                    inner.0.flights.insert(name.to_owned(), f.clone());
                    (f, true, inner.0.closes.get(name).cloned())
                }
            }
        };
        if !leader {
            let mut result = flight.result.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(r) = &*result {
                    return r.clone();
                }
                result = flight.done.wait(result).unwrap_or_else(|e| e.into_inner());
            }
        }
        #[cfg(loom)]
        // The broken twin opens without waiting for the close.
        let closing = closing.filter(|_| !fault::injected(Fault::OpenWhileClosing));
        if let Some(closing) = closing {
            closing.wait();
        }
        let result = open();
        #[cfg(loom)]
        if fault::injected(Fault::RemoveThenPublish) {
            // The broken twin: the flight leaves before the tenant is
            // published, in a critical section of its own.
            self.lock().0.flights.remove(name);
            loom::thread::yield_now();
        }
        {
            let mut inner = self.lock();
            inner.0.flights.remove(name);
            if let Ok(v) = &result {
                publish(&mut inner, v);
            }
        }
        *flight.result.lock().unwrap_or_else(|e| e.into_inner()) = Some(result.clone());
        flight.done.notify_all();
        result
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn a_failed_open_is_published_nowhere_and_the_next_request_tries_again() {
        let opening: Opening<Option<u32>, u32> = Opening::default();
        let failed = opening.open("t", |s| *s, || Err("disk".into()), |s, v| *s = Some(*v));
        assert_eq!(failed, Err("disk".to_owned()));
        assert_eq!(*opening.lock(), None);
        let opened = opening.open("t", |s| *s, || Ok(3), |s, v| *s = Some(*v));
        assert_eq!(opened, Ok(3));
        // Open now: found, not opened again.
        let found = opening.open("t", |s| *s, || panic!("opened twice"), |_, _| {});
        assert_eq!(found, Ok(3));
    }

    #[test]
    fn an_open_waits_for_the_close_of_its_tenant_and_not_for_others() {
        let opening: Opening<Option<u32>, u32> = Opening::default();
        let close = {
            let mut locked = opening.lock();
            *locked = None;
            locked.begin_close("t")
        };
        assert!(opening.lock().closing("t"));
        let file_open = std::sync::atomic::AtomicBool::new(true);
        std::thread::scope(|s| {
            let reopen = s.spawn(|| {
                opening.open(
                    "t",
                    |s| *s,
                    || Ok(u32::from(!file_open.swap(true, Ordering::SeqCst))),
                    |s, v| *s = Some(*v),
                )
            });
            // Another tenant opens meanwhile, without waiting.
            assert_eq!(opening.open("u", |_| None, || Ok(5), |_, _| {}), Ok(5));
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(!reopen.is_finished(), "the open ran while its close did");
            file_open.store(false, Ordering::SeqCst);
            opening.lock().end_close(close);
            assert_eq!(
                reopen.join().unwrap(),
                Ok(1),
                "opened with the file still open"
            );
        });
        assert!(!opening.lock().closing("t"));
    }
}
