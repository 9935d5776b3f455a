//! A tenant's write path: observe and forget requests queue in arrival
//! order and are applied in *turns* on the tenant's construction actor (the
//! only writer of the store, a task on the host's shared construction
//! threads): a turn takes one batch, applies it, makes what it wrote
//! durable, publishes it, and only then answers it. No thread is the
//! tenant's own, so an idle tenant costs no thread.
//!
//! # Turns
//! At most one turn of a tenant is queued or running, and no request is
//! left without one ([`pfm_serve::Turns`], loom-tests `writer_turns`). One
//! batch per turn keeps tenants that share the construction threads taking
//! turns.
//!
//! # Group commit
//! With [`Fsync::Group`] a batch is the first waiting request and every
//! request that arrives while the batch is collected, cut when the queue is
//! empty, when the window has passed since the first, or at
//! [`MAX_GROUP`] requests: under load, the requests that queued while the
//! previous batch was being synced share the next fsync; an idle server
//! syncs at once and adds no delay. With [`Fsync::Always`] every request is
//! its own transaction and fsync. A forget ends its batch; a batch that
//! erased anything rewrites the ledger file (see `ledger::durable`), so no
//! erased byte stays on disk, and a batch that wrote nothing syncs nothing.
//!
//! # Idempotency
//! An observe may carry a client request id (see `idempotency`). Before a
//! batch runs, each id the log knows is answered with its recorded receipts
//! and does no work; an id that appears twice in one batch runs once and
//! both get its receipts. The ids of the batch's successful observes are
//! written in the batch's own transaction.
//!
//! # Failure
//! A failed sync answers the batch's requests with an error (none was
//! acknowledged) and stops the writer: the memory may now hold changes the
//! disk does not, so later writes are refused until a restart replays the
//! disk. Nothing is published for the failed batch, so readers never see
//! it; nothing acknowledged is ever lost.
//!
//! # Order
//! Each batch is applied, synced and published (with the facts it wrote,
//! so the snapshot publisher rebuilds only the contexts they reach) on the
//! construction actor, and only then acknowledged: a client that hears
//! back reads its own write.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use tokio::sync::oneshot;

use crate::durable::{Batch, Checkpoint};
use crate::idempotency::{Acked, LogChanges, RequestLog, with_keys};
use crate::ledger_file::LedgerFile;
use pfm::config::ScoreParams;
use pfm::error::{Error, Result};
use pfm::fact::{FactId, Seq};
use pfm::ledger::Forget;
use pfm::memory::{Memory, Observation};
use pfm::time::WallTime;
use pfm_serve::{Probe, Quantity, Runtime, Touched, Turns};

/// Most requests in one batch.
pub const MAX_GROUP: usize = 1024;

/// When writes reach the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fsync {
    /// One transaction and fsync per request.
    Always,
    /// One per batch, a batch collected for at most this long.
    Group(Duration),
}

impl std::str::FromStr for Fsync {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            Error::InvalidConfig(format!(
                "fsync {s:?}: use `always` or `group:N` with N the window in milliseconds (1 to 1000), e.g. group:5"
            ))
        };
        if s == "always" {
            return Ok(Fsync::Always);
        }
        let ms: u64 = s
            .strip_prefix("group:")
            .map(|n| n.trim_end_matches("ms"))
            .and_then(|n| n.parse().ok())
            .ok_or_else(bad)?;
        if !(1..=1000).contains(&ms) {
            return Err(bad());
        }
        Ok(Fsync::Group(Duration::from_millis(ms)))
    }
}

impl std::fmt::Display for Fsync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fsync::Always => f.write_str("always"),
            Fsync::Group(d) => write!(f, "group:{}ms", d.as_millis()),
        }
    }
}

/// The answer to an observe.
#[derive(Clone, Debug)]
pub struct Observed {
    /// One receipt per observation, in order.
    pub receipts: Vec<Acked>,
    /// Whether they are the recorded receipts of an earlier request with
    /// the same id (nothing was written this time).
    pub replayed: bool,
}

/// A write request.
pub enum WriteOp {
    /// Observations, committed together (all or none), with the client's
    /// request id if it gave one.
    Observe(
        Vec<Observation>,
        Option<String>,
        oneshot::Sender<Result<Observed>>,
    ),
    /// An erasure.
    Forget(Forget, WallTime, oneshot::Sender<Result<Vec<FactId>>>),
}

/// What the construction actor is handed: the requests without their
/// reply channels.
enum Work {
    Observe(Vec<Observation>),
    /// A request id the log knows: its receipts, keys to look up again.
    Replay(Vec<Acked>),
    /// The same id as the batch's `n`-th request: its answer.
    SameAs(usize),
    Forget(Forget, WallTime),
}

enum Done {
    Observe(Result<Observed>),
    Forget(Result<Vec<FactId>>),
}

/// Where a request's answer goes.
enum Reply {
    Observe(oneshot::Sender<Result<Observed>>),
    Forget(oneshot::Sender<Result<Vec<FactId>>>),
}

impl Reply {
    /// Where a request's answer goes.
    fn of(op: WriteOp) -> Reply {
        match op {
            WriteOp::Observe(_, _, tx) => Reply::Observe(tx),
            WriteOp::Forget(_, _, tx) => Reply::Forget(tx),
        }
    }

    fn answer(self, result: Done) {
        match (self, result) {
            (Reply::Observe(tx), Done::Observe(r)) => {
                let _ = tx.send(r);
            }
            (Reply::Forget(tx), Done::Forget(r)) => {
                let _ = tx.send(r);
            }
            // Infallible: results are built from the requests, in order.
            _ => unreachable!("results follow their requests"),
        }
    }

    fn refuse(self, why: &str) {
        let e = Error::Storage(why.to_owned());
        match self {
            Reply::Observe(tx) => {
                let _ = tx.send(Err(e));
            }
            Reply::Forget(tx) => {
                let _ = tx.send(Err(e));
            }
        }
    }
}

/// The handle on a tenant's write path.
pub struct Writer {
    tx: Sender<(WriteOp, Instant)>,
    turns: Arc<Queue>,
    closed: AtomicBool,
}

/// A tenant's queue of requests and what its turns share.
struct Queue {
    rx: Receiver<(WriteOp, Instant)>,
    /// Whether a turn is queued or running (at most one is).
    scheduled: Turns,
    /// The durable state; turns run one at a time on the actor, so the lock
    /// is never contended.
    state: Mutex<State>,
    runtime: Arc<Runtime>,
    fsync: Fsync,
    /// Fewest retained facts for which the close writes a checkpoint.
    checkpoint_min_facts: usize,
}

struct State {
    /// None once the writer is closed: [`Writer::close`] drops the ledger,
    /// which closes its file (and frees its lock for a reopen) there and
    /// then, not whenever the last turn's closure lets go of the queue.
    durable: Option<Durable>,
    /// Why writes are refused, after a failed sync.
    failed: Option<String>,
    probe: Probe,
}

/// A batch that was applied, synced and (by the time it is answered)
/// published.
struct Answers {
    replies: Vec<Reply>,
    done: Vec<Done>,
    arrived: Vec<Instant>,
}

impl Writer {
    /// The write path over a store and the runtime serving it; its close
    /// writes the ledger's checkpoint when the store holds at least
    /// `checkpoint_min_facts` facts. Fails if the stored request ids do not
    /// decode.
    pub fn start(
        store: impl Into<LedgerFile>,
        runtime: Arc<Runtime>,
        fsync: Fsync,
        checkpoint_min_facts: usize,
    ) -> Result<Writer> {
        let store = store.into();
        let log = RequestLog::restore(store.requests()?)
            .map_err(|e| Error::InvalidState(format!("{}: {e}", store.path().display())))?;
        let (tx, rx) = crossbeam_channel::unbounded();
        let probe = runtime.metrics().probe_of(&[Quantity::Observe]);
        Ok(Writer {
            tx,
            turns: Arc::new(Queue {
                rx,
                scheduled: Turns::default(),
                state: Mutex::new(State {
                    durable: Some(Durable { store, log }),
                    failed: None,
                    probe,
                }),
                runtime,
                fsync,
                checkpoint_min_facts,
            }),
            closed: AtomicBool::new(false),
        })
    }

    /// Queues a request (never blocks).
    pub fn send(&self, op: WriteOp) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            return Err(Error::ShutDown("the writer has stopped".into()));
        }
        self.tx
            .send((op, Instant::now()))
            .map_err(|_| Error::ShutDown("the writer has stopped".into()))?;
        if self.turns.scheduled.request() {
            Queue::queue(&self.turns);
        }
        Ok(())
    }

    /// Stops taking requests, finishes the queued ones (durably), waits,
    /// writes the ledger's checkpoint if the store changed since it was
    /// read (see `durable`, "Checkpoint"), and closes the ledger file:
    /// when this returns, the tenant's ledger may be opened again (an
    /// evicted tenant's next request reopens it at once). From an async
    /// task it cannot wait: the queued requests still run, and the file
    /// closes after the last of them, with no checkpoint.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        let turns = &self.turns;
        while !turns.rx.is_empty() || turns.scheduled.scheduled() {
            // Waits behind every turn already queued on the actor.
            if turns.runtime.exclusive(|_| ((), Touched::Nothing)).is_err() {
                return;
            }
        }
        // The facts are taken on the actor, which alone holds the store
        // (no turn follows), and only when the file's checkpoint is not
        // already of its last commit (a tenant that only answered reads
        // since it was opened from one); the checkpoint is made and
        // written here, off the construction threads every tenant's
        // commits share.
        let min = turns.checkpoint_min_facts;
        let at = turns.runtime.exclusive(move |memory| {
            let pays = memory.ledger().len() >= min;
            let at = (memory.ledger().seq(), memory.config().score.clone());
            (pays.then_some(at), Touched::Nothing)
        });
        if let Ok(Some((seq, params))) = at
            && turns.needs_checkpoint(seq, &params)
            && let Ok(checkpoint) = turns
                .runtime
                .exclusive(|memory| (Checkpoint::of(memory), Touched::Nothing))
        {
            turns.checkpoint(&checkpoint);
        }
        turns.state().durable = None;
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.close();
    }
}

impl Queue {
    /// Queues a turn on the actor; if construction has stopped, refuses
    /// what is waiting.
    fn queue(turns: &Arc<Queue>) {
        let (run, after) = (turns.clone(), turns.clone());
        let queued = turns.runtime.spawn_exclusive(
            move |memory| run.batch(memory),
            move |answers| {
                if let Some(answers) = answers {
                    after.answer(answers);
                }
                after.next();
            },
        );
        if let Err(e) = queued {
            // Construction stopped (shutdown): nothing queued will run.
            let why = e.to_string();
            while let Ok((op, _)) = turns.rx.try_recv() {
                Reply::of(op).refuse(&why);
            }
            turns.scheduled.abandon();
        }
    }

    /// After a turn: the next one if requests are waiting (see
    /// [`Turns::finish`]).
    fn next(self: &Arc<Self>) {
        if self.scheduled.finish(|| !self.rx.is_empty()) {
            Queue::queue(self);
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One batch, on the actor: applied and synced; what readers may see
    /// is published when this returns, and only then answered.
    fn batch(&self, memory: &mut Memory) -> (Option<Answers>, Touched) {
        let Ok(first) = self.rx.try_recv() else {
            return (None, Touched::Nothing);
        };
        let group = collect(first, &self.rx, self.fsync);
        let arrived: Vec<Instant> = group.iter().map(|(_, t)| *t).collect();
        let mut state = self.state();
        let State {
            durable, failed, ..
        } = &mut *state;
        let Some(durable) = durable else {
            for (op, _) in group {
                Reply::of(op).refuse("the tenant was closed: retry the request");
            }
            return (None, Touched::Nothing);
        };
        let (work, replies, ids) = split(group, &durable.log);
        if let Some(why) = failed {
            for reply in replies {
                reply.refuse(why);
            }
            return (None, Touched::Nothing);
        }
        let done = apply(memory, work);
        let (synced, touched) = durable.sync(memory, ids, &done);
        match synced {
            Ok(()) => (
                Some(Answers {
                    replies,
                    done,
                    arrived,
                }),
                touched,
            ),
            Err(e) => {
                let why = format!(
                    "the ledger could not be made durable ({e}); restart the server to replay it from disk"
                );
                tracing::error!(file = %durable.store.path().display(), "{why}");
                for reply in replies {
                    reply.refuse(&why);
                }
                *failed = Some(why);
                (None, Touched::Nothing)
            }
        }
    }

    /// Whether a close at commit `seq` should write a checkpoint: every
    /// write reached the file, and its checkpoint is not already of `seq`
    /// under `params` ([`LedgerFile::needs_checkpoint`]).
    fn needs_checkpoint(&self, seq: Seq, params: &ScoreParams) -> bool {
        let state = self.state();
        match (&state.durable, &state.failed) {
            (Some(durable), None) => durable.store.needs_checkpoint(seq, params),
            _ => false,
        }
    }

    /// Writes the ledger's checkpoint, unless a write failed (the store is
    /// then ahead of its file). A checkpoint that cannot be written is
    /// only a slower next open: it is logged, not raised.
    fn checkpoint(&self, checkpoint: &Checkpoint) {
        let mut state = self.state();
        let State {
            durable, failed, ..
        } = &mut *state;
        if let (Some(durable), None) = (durable, failed)
            && let Err(e) = durable.store.checkpoint(checkpoint)
        {
            tracing::warn!(file = %durable.store.path().display(), "no checkpoint written: {e}");
        }
    }

    /// Acknowledges a published batch.
    fn answer(&self, answers: Answers) {
        let committed: usize = answers
            .done
            .iter()
            .map(|d| match d {
                Done::Observe(Ok(o)) if !o.replayed => o.receipts.len(),
                _ => 0,
            })
            .sum();
        self.runtime
            .metrics()
            .counters
            .observations
            .fetch_add(committed as u64, Ordering::Relaxed);
        let mut state = self.state();
        for ((reply, result), t) in answers
            .replies
            .into_iter()
            .zip(answers.done)
            .zip(answers.arrived)
        {
            state.probe.record(Quantity::Observe, t.elapsed());
            reply.answer(result);
        }
    }
}

/// Splits a batch's requests into work and replies (see "Idempotency").
/// Returns, per request, its work and where its answer goes, and the ids
/// to record, by request index.
fn split(
    group: Vec<(WriteOp, Instant)>,
    log: &RequestLog,
) -> (Vec<Work>, Vec<Reply>, Vec<Option<String>>) {
    let mut first: std::collections::HashMap<String, usize> = Default::default();
    let mut work = Vec::with_capacity(group.len());
    let mut replies = Vec::with_capacity(group.len());
    let mut ids = Vec::with_capacity(group.len());
    for (i, (op, _)) in group.into_iter().enumerate() {
        match op {
            WriteOp::Observe(o, id, tx) => {
                let known = id.as_deref().and_then(|id| log.get(id));
                let earlier = id.as_ref().and_then(|id| first.get(id).copied());
                work.push(match (known, earlier) {
                    (Some(receipts), _) => Work::Replay(receipts.to_vec()),
                    (None, Some(n)) => Work::SameAs(n),
                    (None, None) => {
                        if let Some(id) = &id {
                            first.insert(id.clone(), i);
                        }
                        Work::Observe(o)
                    }
                });
                replies.push(Reply::Observe(tx));
                ids.push(id.filter(|id| first.get(id) == Some(&i)));
            }
            WriteOp::Forget(f, at, tx) => {
                work.push(Work::Forget(f, at));
                replies.push(Reply::Forget(tx));
                ids.push(None);
            }
        }
    }
    (work, replies, ids)
}

/// Runs a batch's work on the store, in order.
fn apply(memory: &mut Memory, work: Vec<Work>) -> Vec<Done> {
    let mut done: Vec<Done> = Vec::with_capacity(work.len());
    for w in work {
        let d = match w {
            Work::Observe(o) => Done::Observe(memory.observe_batch(o).map(|r| Observed {
                receipts: r.into_iter().map(Acked::from).collect(),
                replayed: false,
            })),
            Work::Replay(stored) => Done::Observe(Ok(Observed {
                receipts: with_keys(memory, &stored),
                replayed: true,
            })),
            Work::SameAs(n) => match &done[n] {
                Done::Observe(Ok(o)) => Done::Observe(Ok(Observed {
                    receipts: o.receipts.clone(),
                    replayed: true,
                })),
                Done::Observe(Err(e)) => Done::Observe(Err(Error::CommitFailed(format!(
                    "an earlier request with this request_id failed: {e}"
                )))),
                // Infallible: SameAs names an earlier observe.
                Done::Forget(_) => unreachable!("SameAs names an observe"),
            },
            Work::Forget(f, at) => Done::Forget(memory.forget(&f, at)),
        };
        done.push(d);
    }
    done
}

/// The writer's durable state, used by the turns on the construction
/// actor, so a batch is applied and synced there, and published only once
/// it is durable.
struct Durable {
    store: LedgerFile,
    log: RequestLog,
}

impl Durable {
    /// Makes durable what the batch just applied to `memory` wrote, with
    /// the ids of its successful observes (invariant 1 of `idempotency`:
    /// in the commit's own transaction), and says what readers may now see:
    /// nothing if the sync failed, everything after an erasure (a rewrite
    /// of the whole ledger), else the facts the commits wrote.
    fn sync(
        &mut self,
        memory: &mut Memory,
        ids: Vec<Option<String>>,
        done: &[Done],
    ) -> (Result<()>, Touched) {
        let mut changes = LogChanges::default();
        for (id, d) in ids.into_iter().zip(done) {
            if let (Some(id), Done::Observe(Ok(o))) = (id, d) {
                self.log.record(id, o.receipts.clone(), &mut changes);
            }
        }
        let journal = memory.take_journal();
        let (synced, touched) = if !journal.erased.is_empty() {
            let all = LogChanges {
                rows: self.log.rows(),
                deletes: Vec::new(),
            };
            let synced = self.store.rewrite(&Batch::full(memory).with_requests(all));
            (synced, Touched::Everything)
        } else if journal.is_empty() && changes.rows.is_empty() && changes.deletes.is_empty() {
            (Ok(()), Touched::Nothing)
        } else {
            let synced = self
                .store
                .write(&Batch::of(memory, &journal).with_requests(changes));
            (
                synced,
                Touched::Facts(journal.touched.into_iter().collect()),
            )
        };
        match synced {
            Ok(()) => (Ok(()), touched),
            Err(e) => (Err(e), Touched::Nothing),
        }
    }
}

/// The batch that starts with `first` (see the module doc).
fn collect(
    first: (WriteOp, Instant),
    rx: &Receiver<(WriteOp, Instant)>,
    fsync: Fsync,
) -> Vec<(WriteOp, Instant)> {
    let ends = |op: &WriteOp| matches!(op, WriteOp::Forget(..));
    let stop = ends(&first.0);
    let mut group = vec![first];
    let Fsync::Group(window) = fsync else {
        return group;
    };
    let deadline = Instant::now() + window;
    while !stop && group.len() < MAX_GROUP {
        match rx.try_recv() {
            Ok(next) => {
                let last = ends(&next.0);
                group.push(next);
                if last {
                    break;
                }
            }
            Err(_) => break,
        }
        if Instant::now() >= deadline {
            break;
        }
    }
    group
}
