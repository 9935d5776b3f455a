//! The request path. Snapshot mode is one load of the context's published
//! snapshot; fresh mode hands a job to a free worker (`h`), waits at most `ω`
//! and, on timeout, cancels the job and falls back to the snapshot; a job
//! still running at half of `ω` is also handed to a second worker (a hedge).
//! Nothing here takes a lock, spawns a thread or waits on construction: it
//! performs atomic loads, one or two non-blocking queue sends, and timed waits.
//!
//! Requests run on the caller's thread (a [`Requester`] per thread) rather
//! than in an actor or a tokio task: an actor hop would put a mailbox and a
//! second scheduling delay in front of every snapshot read, and a task's
//! wake-up would wait behind the executor's other tasks; on the caller's
//! thread the only scheduling delay is the OS waking it, which is the `σ`
//! of Proposition 2 and is measured here.

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::Clock;
use super::admission::Admission;
use super::encode::{EncoderFactory, QueryEncoder};
use super::handoff::{Delivery, Waited, Waiter, completion};
use super::metrics::{Counters, Metrics, Probe, Quantity};

/// What a requester's probe records: the request path's quantities.
const REQUEST_QUANTITIES: [Quantity; 6] = [
    Quantity::QueueDepth,
    Quantity::Handoff,
    Quantity::Sigma,
    Quantity::FreshWait,
    Quantity::Read,
    Quantity::SnapshotAge,
];
use super::pool::{Reply, RetrievalJob};
use super::snapshot::Context;
use crate::sync::queue::{Sender, TrySendError};
use crate::sync::{Deadline, Publication, Shared};
use pfm::block::Block;
use pfm::error::{Error, Result};
use pfm::fact::Seq;
use pfm::index::IndexVersion;
use pfm::retrieve::{Request, retrieve};

/// By default a fresh job is hedged after half of `ω`.
pub const DEFAULT_HEDGE: f64 = 0.5;

/// Where a response's block came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The context's published snapshot (snapshot mode).
    Snapshot,
    /// A worker's retrieval, in time (fresh mode).
    Fresh,
    /// The snapshot, because the worker did not finish within `ω`.
    FallbackTimedOut,
    /// The snapshot, because no worker was free to take the job (part of `h`).
    FallbackNoFreeWorker,
}

/// What a fresh request answers with when its worker misses `ω` or none is
/// free: never an empty block that looks like an answer.
#[derive(Clone, Copy, Debug)]
pub enum Fallback<'a> {
    /// A registered context's published snapshot (one load).
    Snapshot(&'a Context),
    /// The request itself, retrieved on the calling thread from the newest
    /// published version: later than `ω`, but the right block.
    Newest(&'a Publication<IndexVersion>),
}

/// Timings of one response, measured on the request thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Timings {
    /// `r`: the snapshot read, if one was made.
    pub read: Option<Duration>,
    /// `h`: the handoff to the queue (fresh mode).
    pub handoff: Option<Duration>,
    /// Fresh mode: from the handoff to the response.
    pub fresh: Option<Duration>,
    /// `σ` as Table 8 defines it (fresh mode).
    pub sigma: Option<Duration>,
}

/// A response.
#[derive(Clone, Debug)]
pub struct Served {
    /// The memory block.
    pub block: Arc<Block>,
    /// Where it came from.
    pub source: Source,
    /// The commit of the index version it was built from.
    pub store_seq: Seq,
    /// How old the snapshot was, when the block came from one.
    pub snapshot_age: Option<Duration>,
    /// What the request waited for.
    pub timings: Timings,
}

/// A request thread's handle on the serving runtime. Not `Send`: a fresh
/// wait parks the thread that created it, and its probe is that thread's.
pub struct Requester {
    jobs: Sender<RetrievalJob>,
    /// The store the jobs read.
    versions: Shared<Publication<IndexVersion>>,
    /// This tenant's share of a shared queue (`None`: uncapped).
    admission: Option<Admission>,
    metrics: Arc<Metrics>,
    probe: Probe,
    clock: Clock,
    /// The last job's completion, reused when the worker has let go of it.
    spare: Option<Waiter<Reply>>,
    /// After this fraction of `ω` without a reply, the job is also handed to
    /// a second worker (a hedge against a stalled one).
    hedge_after: Option<f64>,
    /// Encodes dense queries answered on this thread (fallbacks, direct
    /// reads).
    encoder: QueryEncoder,
    _thread_bound: PhantomData<*const ()>,
}

impl std::fmt::Debug for Requester {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Requester").finish_non_exhaustive()
    }
}

impl Requester {
    /// A requester for the calling thread, handing jobs that read
    /// `versions` to `jobs`.
    pub fn new(
        jobs: Sender<RetrievalJob>,
        versions: Shared<Publication<IndexVersion>>,
        metrics: Arc<Metrics>,
        clock: Clock,
    ) -> Self {
        Requester {
            jobs,
            versions,
            admission: None,
            probe: metrics.probe_of(&REQUEST_QUANTITIES),
            metrics,
            clock,
            spare: None,
            hedge_after: Some(DEFAULT_HEDGE),
            encoder: QueryEncoder::new(None),
            _thread_bound: PhantomData,
        }
    }

    /// Caps this tenant's jobs in a shared queue (see [`Admission`]): a
    /// fresh request over the share falls back at once, and a hedge over
    /// it is not sent.
    pub fn with_admission(mut self, admission: Option<Admission>) -> Self {
        self.admission = admission;
        self
    }

    /// Hedges a fresh job after `fraction` of `ω` (in `(0, 1)`), or never.
    pub fn with_hedge(mut self, fraction: Option<f64>) -> Self {
        self.hedge_after = fraction.filter(|f| *f > 0.0 && *f < 1.0);
        self
    }

    /// Encodes dense and hybrid queries answered on this thread with
    /// sessions from `factory`.
    pub fn with_encoder(mut self, factory: Option<EncoderFactory>) -> Self {
        self.encoder = QueryEncoder::new(factory);
        self
    }

    /// `request` with its query vector, encoded on this thread, when a
    /// dense or hybrid ranker needs one and it carries none (`None`: use
    /// `request` as it is). For reads this thread answers itself, and for
    /// contexts registered with a dense ranker (encoded once, so the
    /// publisher's retrievals reuse the vector).
    pub fn vectorize(&mut self, request: &Request) -> Result<Option<Request>> {
        self.encoder.vectorize(request)
    }

    /// Snapshot mode: one load of the context's published snapshot.
    #[inline]
    pub fn snapshot(&mut self, context: &Context) -> Served {
        Counters::bump(&self.metrics.counters.snapshot_reads);
        self.read(context, Source::Snapshot)
    }

    /// Fresh mode for a registered context: its request, run by a worker on
    /// the newest version if that finishes within `omega`, else the snapshot.
    pub fn fresh(&mut self, context: &Context, omega: Duration) -> Result<Served> {
        let request = context.request_at(&self.clock);
        self.fresh_request(request, Fallback::Snapshot(context), omega)
    }

    /// Fresh mode for any request; a late or refused job answers from
    /// `fallback`.
    pub fn fresh_request(
        &mut self,
        request: Arc<Request>,
        fallback: Fallback<'_>,
        omega: Duration,
    ) -> Result<Served> {
        if omega.is_zero() {
            return Err(Error::ZeroOmega);
        }
        request.validate()?;
        Counters::bump(&self.metrics.counters.fresh_requests);
        let (mut completion, delivery) = self.completion();
        let start = Instant::now();
        let ticket = self.admission.as_ref().map(Admission::enter);
        let over_share = matches!(ticket, Some(None));
        let sent = if over_share {
            None
        } else {
            let job = RetrievalJob {
                request: request.clone(),
                versions: self.versions.clone(),
                ticket: ticket.flatten(),
                completion: delivery.clone(),
                deadline: start + omega,
            };
            let depth = self.jobs.len() as u64;
            self.probe.count(Quantity::QueueDepth, depth);
            Some(self.jobs.try_send(job))
        };
        let handoff = start.elapsed();
        self.probe.record(Quantity::Handoff, handoff);
        match sent {
            Some(Ok(())) => {}
            None | Some(Err(TrySendError::Full(_))) => {
                Counters::bump(if over_share {
                    &self.metrics.counters.over_share
                } else {
                    &self.metrics.counters.no_free_worker
                });
                return self.fall_back(
                    fallback,
                    &request,
                    Source::FallbackNoFreeWorker,
                    start,
                    handoff,
                    None,
                );
            }
            Some(Err(TrySendError::Disconnected(_))) => {
                return Err(Error::ShutDown("the worker pool has stopped".into()));
            }
        }
        let waited = match self.hedge_after {
            Some(fraction) => {
                match completion.wait_until(Deadline::after(omega.mul_f64(fraction))) {
                    Some(reply) => Waited::Done(reply),
                    None => {
                        // Hedge: the same job (same completion) to a second
                        // worker, if one is free; whichever finishes first
                        // delivers, the other's reply is dropped.
                        let ticket = self.admission.as_ref().map(Admission::enter);
                        if !matches!(ticket, Some(None)) {
                            let hedge = RetrievalJob {
                                request: request.clone(),
                                versions: self.versions.clone(),
                                ticket: ticket.flatten(),
                                completion: delivery,
                                deadline: start + omega,
                            };
                            if self.jobs.try_send(hedge).is_ok() {
                                Counters::bump(&self.metrics.counters.hedges);
                            }
                        }
                        let left = omega.saturating_sub(start.elapsed());
                        match completion.wait_until(Deadline::after(left)) {
                            Some(reply) => Waited::Done(reply),
                            None => completion.cancel(),
                        }
                    }
                }
            }
            None => completion.wait(Deadline::after(omega)),
        };
        let resumed = Instant::now();
        self.spare = Some(completion);
        match waited {
            Waited::Done(reply) => {
                let sigma = resumed.saturating_duration_since(reply.finished_at);
                let fresh = resumed - start;
                self.probe.record(Quantity::Sigma, sigma);
                self.probe.record(Quantity::FreshWait, fresh);
                Ok(Served {
                    block: reply.block?,
                    source: Source::Fresh,
                    store_seq: reply.store_seq,
                    snapshot_age: None,
                    timings: Timings {
                        handoff: Some(handoff),
                        fresh: Some(fresh),
                        sigma: Some(sigma),
                        read: None,
                    },
                })
            }
            Waited::TimedOut => {
                Counters::bump(&self.metrics.counters.fallbacks);
                self.fall_back(
                    fallback,
                    &request,
                    Source::FallbackTimedOut,
                    start,
                    handoff,
                    Some(omega),
                )
            }
        }
    }

    /// A pending completion for the next job: the previous one if the
    /// worker has let go of it (no allocation), else a new one.
    fn completion(&mut self) -> (Waiter<Reply>, Delivery<Reply>) {
        if let Some(mut waiter) = self.spare.take()
            && let Some(delivery) = waiter.renew()
        {
            return (waiter, delivery);
        }
        completion()
    }

    /// One load of the context's snapshot, timed (`r`), as a response.
    fn read(&mut self, context: &Context, source: Source) -> Served {
        let start = Instant::now();
        let snapshot = context.snapshot();
        let read = start.elapsed();
        let age = Instant::now().saturating_duration_since(snapshot.produced_at);
        self.probe.record(Quantity::Read, read);
        self.probe.record(Quantity::SnapshotAge, age);
        Served {
            block: snapshot.block.clone(),
            source,
            store_seq: snapshot.store_seq,
            snapshot_age: Some(age),
            timings: Timings {
                read: Some(read),
                ..Timings::default()
            },
        }
    }

    /// Answers from the fallback. On a timeout, `σ` is the observed wait
    /// minus `ω` and the read (a retrieval on this thread counts as the read).
    fn fall_back(
        &mut self,
        fallback: Fallback<'_>,
        request: &Request,
        source: Source,
        start: Instant,
        handoff: Duration,
        omega: Option<Duration>,
    ) -> Result<Served> {
        let mut served = match fallback {
            Fallback::Snapshot(c) => self.read(c, source),
            Fallback::Newest(versions) => {
                let began = Instant::now();
                let version = versions.load();
                let encoded = self.encoder.vectorize(request)?;
                let block: Block = retrieve(&version, encoded.as_ref().unwrap_or(request))?;
                Served {
                    block: Arc::new(block),
                    source,
                    store_seq: version.seq,
                    snapshot_age: None,
                    timings: Timings {
                        read: Some(began.elapsed()),
                        ..Timings::default()
                    },
                }
            }
        };
        let read = served.timings.read;
        let fresh = start.elapsed();
        self.probe.record(Quantity::FreshWait, fresh);
        let sigma = omega.map(|w| {
            fresh
                .saturating_sub(handoff)
                .saturating_sub(w)
                .saturating_sub(read.unwrap_or_default())
        });
        if let Some(s) = sigma {
            self.probe.record(Quantity::Sigma, s);
        }
        served.timings = Timings {
            read,
            handoff: Some(handoff),
            fresh: Some(fresh),
            sigma,
        };
        Ok(served)
    }
}
