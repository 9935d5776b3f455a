//! Request threads: plain OS threads that run the blocking half of each
//! HTTP request (snapshot reads, fresh-mode waits, history lookups) off the
//! async executor. Each keeps one [`Requester`] and one metrics probe per
//! tenant, because both are bound to the thread that records with them
//! (the serving runtime's request path, see `serve::request`).
//!
//! # Fairness
//! The threads are shared by every tenant, so each tenant may have at most
//! `per_tenant` jobs in the pool (queued or running), fewer than there are
//! threads: a tenant that floods gets `429 tenant_busy` for the excess, and
//! a job of any other tenant finds a thread that no single tenant can hold.
//! A job's slot is released when the job ends, not when its HTTP request
//! does, so a request abandoned by a timeout still counts while it runs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;

use crossbeam_channel::{Sender, TrySendError};
use tokio::sync::oneshot;

use super::error::ApiError;
use super::tenant::Tenant;
use pfm::error::{Error, Result};
use pfm_serve::{Probe, Quantity, Requester, Runtime};

/// A request thread's state.
#[derive(Default)]
pub struct Local {
    /// Per open tenant: its runtime (weakly: a closed tenant's entry is
    /// dropped, and one reopened under its name gets a new one), the
    /// requester and probe.
    tenants: HashMap<String, Bound>,
    /// Scoring buffers for retrievals run on this thread.
    pub scratch: pfm::rank::Scratch,
}

/// A tenant's count of jobs in the pool.
#[derive(Debug, Default)]
pub struct InFlight(Arc<AtomicUsize>);

/// One job's place in its tenant's count, given back on drop.
struct Slot(Arc<AtomicUsize>);

impl InFlight {
    /// A slot if fewer than `cap` jobs are in flight.
    fn enter(&self, cap: usize) -> Option<Slot> {
        let held = self.0.fetch_add(1, Ordering::AcqRel);
        let slot = Slot(self.0.clone());
        (held < cap).then_some(slot)
    }

    /// Jobs in flight now.
    pub fn get(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A requester and probe bound to one runtime of a tenant.
type Bound = (Weak<Runtime>, (Requester, Probe));

impl Local {
    /// This thread's requester and probe for a tenant's current runtime.
    pub fn of(&mut self, tenant: &Tenant) -> Result<&mut (Requester, Probe)> {
        let current = self.tenants.get(&tenant.name).is_some_and(|(runtime, _)| {
            std::ptr::eq(runtime.as_ptr(), Arc::as_ptr(&tenant.runtime))
        });
        if !current {
            // Entries of closed tenants go with it (their runtimes are
            // gone), so a thread holds nothing of a tenant once it closes.
            self.tenants
                .retain(|_, (runtime, _)| runtime.strong_count() > 0);
            let requester = tenant.runtime.requester()?;
            let probe = tenant.runtime.metrics().probe_of(&[Quantity::Retrieve]);
            let bound = (Arc::downgrade(&tenant.runtime), (requester, probe));
            self.tenants.insert(tenant.name.clone(), bound);
        }
        // Infallible: present or inserted above.
        Ok(&mut self.tenants.get_mut(&tenant.name).expect("just inserted").1)
    }
}

type Job = Box<dyn FnOnce(&mut Local) + Send>;

/// The request threads.
pub struct RequestPool {
    tx: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
    per_tenant: usize,
}

impl RequestPool {
    /// Starts `n` threads sharing a queue of `queue` jobs, at most
    /// `per_tenant` of them (queued or running) from one tenant; `per_tenant`
    /// must be from 1 to `n - 1` (or 1 when `n` is 1).
    pub fn start(n: usize, queue: usize, per_tenant: usize) -> Result<RequestPool> {
        if n == 0 || per_tenant == 0 || (per_tenant >= n && n > 1) {
            return Err(Error::InvalidConfig(format!(
                "{n} request threads with {per_tenant} per tenant: use at least one thread, and from 1 to {} per tenant so that one tenant cannot hold them all",
                n.saturating_sub(1).max(1)
            )));
        }
        let (tx, rx) = crossbeam_channel::bounded::<Job>(queue);
        let threads = (0..n)
            .map(|i| {
                let rx = rx.clone();
                std::thread::Builder::new()
                    .name(format!("pfm-request-{i}"))
                    .spawn(move || {
                        let mut local = Local::default();
                        while let Ok(job) = rx.recv() {
                            job(&mut local);
                        }
                    })
                    .map_err(|e| Error::ShutDown(format!("cannot start a request thread: {e}")))
            })
            .collect::<Result<_>>()?;
        Ok(RequestPool {
            tx: Some(tx),
            threads,
            per_tenant,
        })
    }

    /// [`RequestPool::run`] for a tenant, within its share of the threads
    /// (see the module doc): over it, `429 tenant_busy` at once.
    pub async fn run_for<R: Send + 'static>(
        &self,
        tenant: &InFlight,
        f: impl FnOnce(&mut Local) -> R + Send + 'static,
    ) -> Result<R, ApiError> {
        let slot = tenant.enter(self.per_tenant).ok_or_else(|| {
            ApiError::new(
                axum::http::StatusCode::TOO_MANY_REQUESTS,
                "tenant_busy",
                format!(
                    "this tenant already has {} requests in progress (--tenant-request-threads): retry shortly",
                    self.per_tenant
                ),
            )
        })?;
        self.run(move |local| {
            let _slot = slot;
            f(local)
        })
        .await
    }

    /// Runs `f` on a request thread and awaits its result; a full queue is
    /// answered at once with 503 rather than queued without bound.
    pub async fn run<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Local) -> R + Send + 'static,
    ) -> Result<R, ApiError> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |local| {
            let _ = tx.send(f(local));
        });
        match self.tx.as_ref().map(|q| q.try_send(job)) {
            Some(Ok(())) => {}
            Some(Err(TrySendError::Full(_))) => {
                return Err(ApiError::unavailable(
                    "every request thread is busy and the queue is full: retry shortly",
                ));
            }
            _ => return Err(ApiError::unavailable("the server is shutting down")),
        }
        rx.await
            .map_err(|_| ApiError::unavailable("the request thread stopped"))
    }

    /// Lets the queued jobs finish and stops the threads.
    pub fn close(&mut self) {
        self.tx = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tenant at its share of the threads is refused at once, and another
    /// tenant's job still runs while the first one's jobs hold their slots.
    #[test]
    fn a_tenant_at_its_share_is_refused_and_another_still_runs() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let pool = RequestPool::start(2, 8, 1).unwrap();
        let (a, b) = (InFlight::default(), InFlight::default());
        let (entered_tx, entered) = crossbeam_channel::bounded::<()>(1);
        let (release, held) = crossbeam_channel::bounded::<()>(1);
        rt.block_on(async {
            let first = pool.run_for(&a, move |_| {
                entered_tx.send(()).unwrap();
                held.recv().unwrap();
            });
            let meanwhile = async {
                tokio::task::spawn_blocking(move || entered.recv().unwrap())
                    .await
                    .unwrap();
                assert_eq!(a.get(), 1);
                let refused = pool.run_for(&a, |_| ()).await.unwrap_err();
                assert_eq!(refused.code, "tenant_busy");
                assert_eq!(refused.status, axum::http::StatusCode::TOO_MANY_REQUESTS);
                assert_eq!(pool.run_for(&b, |_| 7).await.unwrap(), 7);
                release.send(()).unwrap();
            };
            let (first, ()) = tokio::join!(first, meanwhile);
            first.unwrap();
        });
        assert_eq!(a.get(), 0, "the slot is given back when the job ends");
        assert_eq!(b.get(), 0);
    }

    #[test]
    fn one_tenant_may_not_hold_every_thread() {
        assert!(RequestPool::start(4, 8, 4).is_err());
        assert!(RequestPool::start(4, 8, 0).is_err());
        assert!(RequestPool::start(1, 8, 1).is_ok());
    }
}
