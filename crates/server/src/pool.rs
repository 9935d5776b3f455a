//! Request threads: plain OS threads that run the blocking half of each
//! HTTP request (snapshot reads, fresh-mode waits, history lookups) off the
//! async executor. Each keeps one [`Requester`] and one metrics probe per
//! tenant, because both are bound to the thread that records with them
//! (the serving runtime's request path, see `serve::request`).

use std::collections::HashMap;
use std::thread::JoinHandle;

use crossbeam_channel::{Sender, TrySendError};
use tokio::sync::oneshot;

use super::error::ApiError;
use super::tenant::Tenant;
use pfm::error::{Error, Result};
use pfm_serve::{Probe, Requester};

/// A request thread's state.
#[derive(Default)]
pub struct Local {
    tenants: HashMap<String, (Requester, Probe)>,
}

impl Local {
    /// This thread's requester and probe for a tenant.
    pub fn of(&mut self, tenant: &Tenant) -> Result<&mut (Requester, Probe)> {
        if !self.tenants.contains_key(&tenant.name) {
            let requester = tenant.runtime.requester()?;
            let probe = tenant.runtime.metrics().probe();
            self.tenants.insert(tenant.name.clone(), (requester, probe));
        }
        // Infallible: inserted above.
        Ok(self.tenants.get_mut(&tenant.name).expect("just inserted"))
    }
}

type Job = Box<dyn FnOnce(&mut Local) + Send>;

/// The request threads.
pub struct RequestPool {
    tx: Option<Sender<Job>>,
    threads: Vec<JoinHandle<()>>,
}

impl RequestPool {
    /// Starts `n` threads sharing a queue of `queue` jobs.
    pub fn start(n: usize, queue: usize) -> Result<RequestPool> {
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
        })
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
