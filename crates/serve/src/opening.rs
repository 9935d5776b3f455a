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
    /// run by one request at a time for `name` outside the lock and, on
    /// success, `publish`ed into the state before any other request looks.
    pub fn open(
        &self,
        name: &str,
        find: impl FnOnce(&mut S) -> Option<V>,
        open: impl FnOnce() -> Result<V, String>,
        publish: impl FnOnce(&mut S, &V),
    ) -> Result<V, String> {
        let (flight, leader) = {
            let mut inner = self.lock();
            if let Some(v) = find(&mut inner) {
                return Ok(v);
            }
            match inner.0.flights.get(name) {
                Some(f) => (f.clone(), false),
                None => {
                    let f = Shared::new(Flight {
                        result: Mutex::new(None),
                        done: Condvar::new(),
                    });
                    inner.0.flights.insert(name.to_owned(), f.clone());
                    (f, true)
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
}
