//! Registered contexts, their published snapshots, and the snapshot
//! publisher that keeps them fresh.
//!
//! # Invariants
//! 1. A context always has a complete snapshot: the first is published
//!    before the context becomes visible to the publisher or to requests.
//! 2. Only the publisher thread stores a registered context's snapshot, and
//!    it builds each from the newest index version it loaded, so one
//!    context's published store sequence never decreases (a request never
//!    sees it go backwards).
//! 3. A snapshot's block and store sequence come from one version and are
//!    published together by one pointer store.
//!
//! Checked by `tests/serve.rs` (`publication_is_monotone`) and loom-tests
//! `snapshot_vs_request`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};

use super::Clock;
use super::metrics::{Counters, Metrics, Probe, Quantity};
#[cfg(loom)]
use crate::sync::fault::{self, Fault};
use crate::sync::{Publication, Shared};
use pfm::block::Block;
use pfm::error::{Error, Result};
use pfm::fact::{FactBody, FactId, Seq};
use pfm::index::IndexVersion;
use pfm::pmap::PMap;
use pfm::rank::context::moves;
use pfm::rank::scorer::{DfMemo, corpus_of, score_bound};
use pfm::rank::{QueryTerm, Scratch, query_terms};
use pfm::retrieve::{Request, retrieve_with};

/// Identifies a registered context.
pub type ContextId = u64;

/// A finished block for one context, immutable once published.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The context it answers.
    pub context: ContextId,
    /// The block.
    pub block: Arc<Block>,
    /// The newest commit the block is known to reflect: the version it was
    /// built from, or a later one whose changes cannot reach it.
    pub store_seq: Seq,
    /// The commit of the index version the block was built from.
    pub built_seq: Seq,
    /// When it was built.
    pub produced_at: Instant,
}

/// An open conversation whose memory block is kept ready: the request the
/// agent will make, and its latest published snapshot.
#[derive(Debug)]
pub struct Context {
    /// Its id.
    pub id: ContextId,
    /// The request (context text, participants, k, budget, ranker).
    pub request: Arc<Request>,
    /// Whether each retrieval uses the clock's time instead of `request.at`.
    pub follow_clock: bool,
    /// The request's weighted query terms (for [`score_bound`]).
    terms: Vec<QueryTerm>,
    /// The latest snapshot, published by the publisher thread only.
    snapshot: Publication<Snapshot>,
}

impl Context {
    /// The latest published snapshot: one load, no lock (the request path's
    /// snapshot read `r`).
    #[inline]
    pub fn snapshot(&self) -> Shared<Snapshot> {
        self.snapshot.load()
    }

    /// Whether a change to `fact` can change this context's block in
    /// `version`: it is in the block or, with conversation context, can move
    /// the score of a fact in the block; or it could now make a fact score
    /// at least as high as the block's last line (any score, if the block
    /// has room).
    fn touched_by(
        &self,
        fact: &FactBody,
        current: &Snapshot,
        version: &IndexVersion,
        memo: &mut DfMemo,
    ) -> bool {
        let lines = &current.block.lines;
        let ranker = &self.request.ranker;
        // The facts the ranker reads (none: the bound above is infinite).
        let corpus = corpus_of(version, ranker);
        let bound = score_bound(version, &self.terms, ranker, fact, memo);
        let moved = |line: FactId| {
            ranker.context
                && corpus.is_none_or(|c| moves(c, &version.params, fact, bound.own > 0.0, line))
        };
        if lines.iter().any(|l| l.fact == fact.id || moved(l.fact)) {
            return true;
        }
        let floor = match lines.last() {
            Some(last) if lines.len() >= self.request.k => last.score,
            _ => 0.0,
        };
        bound.moved > 0.0 && bound.moved >= floor
    }

    /// The request as it should run now.
    pub(crate) fn request_at(&self, clock: &Clock) -> Arc<Request> {
        request_at(&self.request, self.follow_clock, clock)
    }
}

/// `request` at the clock's time if it follows the clock.
fn request_at(request: &Arc<Request>, follow_clock: bool, clock: &Clock) -> Arc<Request> {
    if follow_clock {
        Arc::new(Request {
            at: clock(),
            ..(**request).clone()
        })
    } else {
        request.clone()
    }
}

/// A registered context as requests hold it.
pub type ContextHandle = Shared<Context>;

/// The registered contexts: a copy-on-write table published like an index
/// version, so a lookup by id is one load and a map probe.
pub struct Contexts {
    table: Publication<PMap<ContextId, ContextHandle>>,
    /// Serializes registration (never taken on the request path).
    writer: std::sync::Mutex<ContextId>,
    /// Most contexts registered at once: every commit republishes each of
    /// them, so this bounds the publisher's work per commit.
    limit: usize,
}

/// Most contexts a runtime keeps registered unless told otherwise.
pub const DEFAULT_MAX_CONTEXTS: usize = 1_000;

impl std::fmt::Debug for Contexts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Contexts")
            .field("registered", &self.table.load().len())
            .finish()
    }
}

impl Default for Contexts {
    /// At most [`DEFAULT_MAX_CONTEXTS`].
    fn default() -> Self {
        Contexts::with_limit(DEFAULT_MAX_CONTEXTS)
    }
}

impl Contexts {
    /// An empty table that holds at most `limit` contexts.
    pub fn with_limit(limit: usize) -> Self {
        Contexts {
            table: Publication::new(Shared::new(PMap::default())),
            writer: std::sync::Mutex::new(0),
            limit,
        }
    }

    /// Registers a context with its first snapshot, built from `version`;
    /// refused once the limit is reached.
    pub fn register(
        &self,
        request: Request,
        follow_clock: bool,
        version: &IndexVersion,
        clock: &Clock,
    ) -> Result<ContextHandle> {
        request.validate()?;
        let mut next = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        if self.table.load().len() >= self.limit {
            return Err(Error::TooManyContexts { max: self.limit });
        }
        *next += 1;
        let id = *next;
        let request = Arc::new(request);
        let first = build(
            id,
            &request_at(&request, follow_clock, clock),
            version,
            &mut Scratch::default(),
        )?;
        let terms = query_terms(
            &request.context,
            &request.participants,
            &request.ranker,
            &version.params,
        );
        let handle = Shared::new(Context {
            id,
            request,
            follow_clock,
            terms,
            snapshot: Publication::new(Shared::new(first)),
        });
        let mut table = (*self.table.load()).clone();
        table.insert(id, handle.clone());
        // PUBLISH: the context and its first snapshot are complete before
        // the table that names them is stored (invariant 1).
        self.table.store(Shared::new(table));
        Ok(handle)
    }

    /// Stops publishing a context. Requests holding its handle keep reading
    /// its last snapshot.
    pub fn unregister(&self, id: ContextId) -> Result<()> {
        let _guard = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let mut table = (*self.table.load()).clone();
        if table.remove(&id).is_none() {
            return Err(Error::UnknownContext(id));
        }
        self.table.store(Shared::new(table));
        Ok(())
    }

    /// A registered context.
    pub fn get(&self, id: ContextId) -> Result<ContextHandle> {
        self.table
            .load()
            .get(&id)
            .cloned()
            .ok_or(Error::UnknownContext(id))
    }

    /// How many contexts are registered.
    pub fn len(&self) -> usize {
        self.table.load().len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Runs a context's retrieval on one version.
fn build(
    id: ContextId,
    request: &Request,
    version: &IndexVersion,
    scratch: &mut Scratch,
) -> Result<Snapshot> {
    let block = retrieve_with(version, request, scratch)?;
    Ok(Snapshot {
        context: id,
        block: Arc::new(block),
        store_seq: version.seq,
        built_seq: version.seq,
        produced_at: Instant::now(),
    })
}

/// Republishes registered contexts' snapshots: after every new index
/// version (event-driven) and on a fixed period.
pub struct SnapshotPublisher {
    versions: Shared<Publication<IndexVersion>>,
    contexts: Shared<Contexts>,
    clock: Clock,
    scratch: Scratch,
    memo: DfMemo,
    probe: Probe,
    metrics: Arc<Metrics>,
}

impl SnapshotPublisher {
    /// A publisher over `versions` and `contexts`.
    pub fn new(
        versions: Shared<Publication<IndexVersion>>,
        contexts: Shared<Contexts>,
        clock: Clock,
        metrics: Arc<Metrics>,
    ) -> Self {
        SnapshotPublisher {
            versions,
            contexts,
            clock,
            scratch: Scratch::default(),
            memo: DfMemo::default(),
            probe: metrics.probe_of(&[Quantity::Publish]),
            metrics,
        }
    }

    /// One pass over the registered contexts with the newest version.
    /// A context is rebuilt if `changed` can affect it, and otherwise
    /// re-stamped with the newest sequence the notices cover (its block is
    /// what retrieval would return, up to the drift of collection
    /// statistics, which the periodic full pass bounds).
    /// Returns how many blocks it rebuilt.
    ///
    /// A store without registered contexts returns before it loads its
    /// version: the publisher passes over every open tenant every
    /// `publish_every`, and most tenants of a many-tenant server register
    /// none (loading each one's version was 5% of a 100,000-tenant server's
    /// CPU, 2026-12-05). A context registered after this check is in the
    /// next pass, as one registered after the table's load below is.
    pub fn publish_pass(&mut self, changed: &Changed) -> usize {
        if self.contexts.table.load().is_empty() {
            return 0;
        }
        let version = self.versions.load();
        let table = self.contexts.table.load();
        self.memo.clear();
        let mut rebuilt = 0;
        for context in table.values() {
            let current = context.snapshot();
            // A context is rebuilt when a notice's fact can reach it and its
            // block was built before the notice's commits — even if it was
            // re-stamped past them (a version can be loaded before its
            // commit's notice arrives); it is re-stamped only up to the
            // commits whose notices this pass has examined.
            let (affected, examined) = match changed {
                Changed::Everything => (true, version.seq),
                Changed::Facts { upto, facts } => (
                    current.built_seq < *upto
                        && facts
                            .iter()
                            .any(|f| context.touched_by(f, &current, &version, &mut self.memo)),
                    (*upto).min(version.seq),
                ),
            };
            if affected {
                rebuilt += usize::from(self.publish(context, &version));
            } else if current.store_seq < examined {
                // PUBLISH: a copy of a complete snapshot with a newer seq.
                context.snapshot.store(Shared::new(Snapshot {
                    store_seq: examined,
                    ..(*current).clone()
                }));
            }
        }
        rebuilt
    }

    /// Publishes one context's snapshot from `version`.
    fn publish(&mut self, context: &Context, version: &IndexVersion) -> bool {
        let started = Instant::now();
        // Requests were validated at registration; a failure here would be a
        // bug, and the previous snapshot stays in place.
        let request = context.request_at(&self.clock);
        let Ok(snapshot) = build(context.id, &request, version, &mut self.scratch) else {
            return false;
        };
        // The broken variant (loom builds only): the sequence published apart.
        #[cfg(loom)]
        if fault::injected(Fault::SplitSnapshot) {
            let previous = context.snapshot();
            context.snapshot.store(Shared::new(Snapshot {
                store_seq: previous.store_seq,
                ..snapshot.clone()
            }));
        }
        // PUBLISH: block and store sequence travel in one immutable value;
        // a request sees all of it or the previous one (invariant 3; loom:
        // snapshot_vs_request).
        context.snapshot.store(Shared::new(snapshot));
        self.probe.record(Quantity::Publish, started.elapsed());
        Counters::bump(&self.metrics.counters.publications);
        true
    }
}

/// A runtime's number on its [`crate::Host`].
pub type TenantId = u64;

/// What a host's publisher thread is told.
pub enum Notice {
    /// Start publishing a runtime's contexts.
    Attach(TenantId, Box<SnapshotPublisher>),
    /// What one of its commits changed.
    Changed(TenantId, Changed),
    /// The runtime stopped: forget its contexts.
    Detach(TenantId),
    /// The host stops.
    Stop,
}

/// One attached runtime's publisher and what is pending for it.
struct Feed {
    publisher: Box<SnapshotPublisher>,
    pending: Option<Changed>,
    /// When its next event-driven pass may start.
    ready_at: Instant,
}

/// A host's publisher thread: every attached runtime's contexts, on one
/// thread, so the thread count does not grow with tenants. A runtime's
/// pass runs when one of its notices arrives (merged with any that arrive
/// during the pass or the pause after it) and, for every runtime, on a
/// fixed `period` (a full pass). The pause after a runtime's pass is as
/// long as the pass was, so one tenant's publication takes at most half
/// of the thread however fast its construction commits, and a commit is
/// reflected within two of its passes. Returns on [`Notice::Stop`] or
/// when every sender is gone.
pub fn run_publisher(notices: Receiver<Notice>, period: Duration) {
    let mut feeds: HashMap<TenantId, Feed> = HashMap::new();
    let mut next_full = Instant::now() + period;
    loop {
        let now = Instant::now();
        let wake = feeds
            .values()
            .filter(|f| f.pending.is_some())
            .map(|f| f.ready_at)
            .min()
            .map_or(next_full, |r| r.min(next_full));
        match notices.recv_timeout(wake.saturating_duration_since(now)) {
            Ok(Notice::Attach(id, publisher)) => {
                feeds.insert(
                    id,
                    Feed {
                        publisher,
                        pending: None,
                        ready_at: now,
                    },
                );
            }
            Ok(Notice::Changed(id, notice)) => {
                if let Some(feed) = feeds.get_mut(&id) {
                    match &mut feed.pending {
                        Some(p) => p.absorb(notice),
                        None => feed.pending = Some(notice),
                    }
                }
            }
            Ok(Notice::Detach(id)) => {
                feeds.remove(&id);
            }
            Ok(Notice::Stop) | Err(RecvTimeoutError::Disconnected) => return,
            Err(RecvTimeoutError::Timeout) => {}
        }
        let now = Instant::now();
        let full = now >= next_full;
        for feed in feeds.values_mut() {
            let changed = if full {
                feed.pending = None;
                Changed::Everything
            } else if feed.pending.is_some() && now >= feed.ready_at {
                feed.pending.take().unwrap_or(Changed::Everything)
            } else {
                continue;
            };
            let started = Instant::now();
            feed.publisher.publish_pass(&changed);
            let ended = Instant::now();
            feed.ready_at = ended + (ended - started);
        }
        if full {
            next_full = Instant::now() + period;
        }
    }
}

/// What a commit changed, as construction tells the publisher.
#[derive(Clone, Debug)]
pub enum Changed {
    /// Anything may have changed (pruning passes, exclusive access, the
    /// periodic pass).
    Everything,
    /// These facts were added, revised, re-observed or retired by the
    /// commits up to `upto`.
    Facts {
        /// The newest commit the notice covers.
        upto: Seq,
        /// The facts.
        facts: Vec<Arc<FactBody>>,
    },
}

impl Changed {
    /// Merges a later notice into this one.
    pub fn absorb(&mut self, later: Changed) {
        match (&mut *self, later) {
            (Changed::Everything, _) => {}
            (_, Changed::Everything) => *self = Changed::Everything,
            (
                Changed::Facts { upto, facts },
                Changed::Facts {
                    upto: later_upto,
                    facts: later_facts,
                },
            ) => {
                *upto = (*upto).max(later_upto);
                facts.extend(later_facts);
            }
        }
    }
}
