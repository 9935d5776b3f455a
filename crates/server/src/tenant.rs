//! Tenants: each has its own store, durable ledger (in
//! `<data-dir>/tenants/<name>/`), serving runtime and write path. The
//! threads are shared: one [`Host`] (construction threads where each
//! tenant's construction actor is a task, one retrieval worker pool with a
//! per-tenant share of its queue, one snapshot publisher), the request
//! threads and the HTTP front, so the thread count is fixed by the options
//! whatever the number of tenants. What is shared carries no tenant's data
//! from one request to the next: a job carries its own tenant's store, and
//! every handler gets its tenant from the bearer token, so no request can
//! reach another tenant's facts.

use std::collections::{HashMap, HashSet};
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};

use super::pool::InFlight;
use super::writer::{Fsync, WriteOp, Writer};
use super::{files, lifecycle, tokens};
use crate::ledger_file::LedgerFile;
use pfm::config::Config;
use pfm::error::{Error, Result};
use pfm::rank::Ranker;
use pfm_serve::{Close, Host, Locked, Opening, Pin, Residency, Runtime, ServeOptions};

/// How each tenant's store is served.
#[derive(Clone, Debug)]
pub struct TenantOptions {
    /// The store's parameters.
    pub config: Config,
    /// Retrieval worker threads, shared by every tenant.
    pub workers: usize,
    /// Construction threads, shared: this many tenants commit at once.
    pub construction_threads: usize,
    /// Most fresh-mode jobs one tenant may have queued or running in the
    /// shared worker queue (the excess falls back to the snapshot at once).
    pub tenant_jobs: usize,
    /// When writes reach the disk.
    pub fsync: Fsync,
    /// Requests per second per tenant (bursts of up to this many).
    pub rate_limit: NonZeroU32,
    /// Observations per second per tenant (bursts of up to this many): a
    /// write's work is per observation, and it runs on the tenant's writer
    /// and construction threads, outside the request threads' cap.
    pub observe_rate: NonZeroU32,
    /// Most registered contexts per tenant.
    pub max_contexts: usize,
    /// The dense arm's files: when set, each tenant's store embeds its facts
    /// (MiniLM, one session shared by every tenant's write path) and the
    /// dense rankers are served.
    pub models: Option<pfm_dense::ModelDir>,
    /// Open tenants' estimated memory above which the least recently used
    /// idle ones are closed ([`Tenant::estimated_bytes`]); `None` keeps
    /// every opened tenant open.
    pub memory_budget: Option<u64>,
    /// Open tenants with series of their own on `/metrics` (the most
    /// active; the others are summed).
    pub metrics_tenants: usize,
    /// Fewest retained facts for which a close writes the ledger's
    /// checkpoint (see `durable`, "Checkpoint"): a smaller ledger opens
    /// from its rows in well under a millisecond.
    pub checkpoint_min_facts: usize,
}

/// An open tenant's memory before its first fact, as estimated for the
/// budget: 300 empty tenants opened over HTTP took 0.24 MB of RSS each
/// (mostly its runtime's latency histograms: 13 merged), and serving
/// 1,000 open tenants for 30 s added about 0.27 MB each (a probe's few
/// histograms on each request thread that serves it, 8–30 KB each). With
/// 32-bit histogram buckets (2026-12-05), 3,000 near-empty tenants served
/// took 0.17 MB each. Since a tenant that has not written holds no ledger
/// file (`ledger_file`), 100,000 tenants under a 4 GiB budget grew by about
/// 0.13 MB of RSS per extra open tenant when this estimate fell from 0.5 to
/// 0.2 MB; the budget then closed 40–85% fewer tenants, and RSS ended at
/// 3.97–3.98 GB (3.78 GB at 10,000 tenants, less than before: less churn).
pub const TENANT_BASE_BYTES: u64 = 200_000;

/// A fact's memory in an open store, as estimated for the budget, in RSS
/// (what an operator's budget means): measured with `pfm load --tenants
/// 1000` (1,000 tenants of 100–2,000 facts, 1.04 M facts, all open), 3.69
/// GB of RSS after 30 s of serving, 3.1 KB per fact after the base (the
/// resident ledger, indexes, graph and gazetteer of each store; 3.6 KB
/// before `pfm` turned transparent huge pages off, 2026-12-04). Since the
/// graph writer stopped copying its small nodes' lists (2026-12-05) the
/// same run ends at 3.28 GB, 2.7 KB per fact; the estimate keeps 3.1 KB
/// because tenants closed and reopened leave the heap fragmented: 10,000
/// tenants under a 4 GiB budget (about 1,100 open at a time, 5,700
/// evictions in 30 s) ended at 3.85–3.90 GB of RSS.
pub const FACT_BYTES: u64 = 3_100;

/// How long a tenant must be unused before it may be closed for the
/// budget: a tenant in active use is never closed between its requests.
pub const MIN_IDLE: Duration = Duration::from_secs(2);

/// Opens a request tries before it gives up on a tenant that keeps being
/// closed under it.
const OPEN_TRIES: usize = 3;

/// How often the budget is checked.
const EVICT_EVERY: Duration = Duration::from_millis(500);

impl TenantOptions {
    /// The serving options of the host and of each tenant's runtime.
    fn serve(&self) -> ServeOptions {
        ServeOptions {
            construction_threads: self.construction_threads,
            tenant_jobs: Some(self.tenant_jobs),
            workers: self.workers,
            queue: self.workers,
            pin_workers: false,
            // Graph pruning is not in the durable ledger: a restart
            // would bring pruned edges back, so the server never prunes.
            prune_every: None,
            max_contexts: self.max_contexts,
            encoder: self.models.clone().map(|dir| -> pfm_serve::EncoderFactory {
                // One MiniLM session on one thread per worker and per
                // request thread that serves a dense request.
                Arc::new(move || {
                    Ok(Box::new(pfm_dense::MiniLm::load(&dir, 1)?)
                        as Box<dyn pfm::vector::Encoder>)
                })
            }),
            ..ServeOptions::default()
        }
    }
}

/// One tenant's memory.
pub struct Tenant {
    /// Its name.
    pub name: String,
    /// Its serving runtime.
    pub runtime: Arc<Runtime>,
    /// Its own ranker for requests that name none (created with one:
    /// `durable::Settings`); its own recency is in its store's config.
    pub ranker: Option<Ranker>,
    writer: Writer,
    limiter: DefaultDirectRateLimiter,
    ingest: DefaultDirectRateLimiter,
    /// Its jobs on the request threads (see `pool`).
    pub in_flight: InFlight,
    /// Its requests' pins, against eviction.
    residency: Residency,
    /// When it was last used, in milliseconds since the server started.
    last_use: AtomicU64,
}

/// A tenant as a request holds it: pinned, so it is not closed under the
/// request (`pfm_serve::residency`).
pub struct TenantRef {
    tenant: Arc<Tenant>,
    _pin: Pin,
    /// How long this request spent opening the tenant (none: it was open).
    opened: Option<Duration>,
}

impl TenantRef {
    /// How long this request spent opening its tenant: its first request
    /// since start or since the tenant was closed for the memory budget.
    pub fn opened(&self) -> Option<Duration> {
        self.opened
    }

    /// The same pin, as held past the request that opened the tenant (by
    /// `pfm mcp`, for the process's life): its later requests did not open
    /// it.
    pub fn resident(self) -> TenantRef {
        TenantRef {
            opened: None,
            ..self
        }
    }
}

impl std::ops::Deref for TenantRef {
    type Target = Arc<Tenant>;

    fn deref(&self) -> &Arc<Tenant> {
        &self.tenant
    }
}

impl std::fmt::Debug for Tenant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tenant")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Tenant {
    /// Opens a tenant's ledger (reading its checkpoint or its rows) and
    /// starts serving it on the shared executors; says whether it read a
    /// checkpoint. Must run on a thread that may block (not an async task).
    fn open(name: &str, dir: &Path, shared: &Shared) -> Result<(Tenant, bool)> {
        let options = &shared.options;
        let (store, mut memory) = LedgerFile::open(dir, options.config.clone())?;
        let from_checkpoint = store.from_checkpoint();
        let ranker = store.settings().ranker()?;
        if let Some(encoder) = &shared.encoder {
            // Vectors are not stored: a restart embeds every retained fact.
            memory.set_encoder(Box::new(encoder.clone()), false)?;
        }
        // Debug: `record_open` logs each open at info already (a server
        // under churn opens hundreds a second).
        tracing::debug!(
            tenant = name,
            facts = memory.ledger().len(),
            seq = memory.ledger().seq(),
            from_checkpoint,
            "tenant read"
        );
        let runtime = Arc::new(Runtime::attach(&shared.host, memory, &options.serve())?);
        let writer = Writer::start(
            store,
            runtime.clone(),
            options.fsync,
            options.checkpoint_min_facts,
        )?;
        let tenant = Tenant {
            name: name.to_owned(),
            runtime,
            ranker,
            writer,
            limiter: RateLimiter::direct_with_clock(
                Quota::per_second(options.rate_limit),
                shared.clock.clone(),
            ),
            ingest: RateLimiter::direct_with_clock(
                Quota::per_second(options.observe_rate),
                shared.clock.clone(),
            ),
            in_flight: InFlight::default(),
            residency: Residency::default(),
            last_use: AtomicU64::new(shared.millis()),
        };
        Ok((tenant, from_checkpoint))
    }

    /// The tenant pinned for a request, unless it has been retired (then
    /// it is being closed: open it again).
    fn pin(self: &Arc<Tenant>, now: u64) -> Option<TenantRef> {
        let pin = self.residency.pin()?;
        self.last_use.fetch_max(now, Ordering::Relaxed);
        Some(TenantRef {
            tenant: self.clone(),
            _pin: pin,
            opened: None,
        })
    }

    /// Its memory as the budget estimates it: [`TENANT_BASE_BYTES`] and
    /// [`FACT_BYTES`] per fact its indexes hold.
    pub fn estimated_bytes(&self) -> u64 {
        let version = self.runtime.version();
        let facts =
            version.active.live_docs() + version.history.as_ref().map_or(0, |h| h.live_docs());
        TENANT_BASE_BYTES + facts * FACT_BYTES
    }

    /// Queues a write.
    pub fn write(&self, op: WriteOp) -> Result<()> {
        self.writer.send(op)
    }

    /// Whether a request may go ahead under the tenant's rate limit.
    pub fn admit(&self) -> bool {
        self.limiter.check().is_ok()
    }

    /// Whether `n` observations may be written now under the tenant's
    /// observation rate; `Err(capacity)` if `n` is more than the rate
    /// allows in any one second.
    pub fn admit_observations(&self, n: NonZeroU32) -> std::result::Result<bool, u32> {
        match self.ingest.check_n(n) {
            Ok(outcome) => Ok(outcome.is_ok()),
            Err(governor::InsufficientCapacity(capacity)) => Err(capacity),
        }
    }

    /// Finishes queued writes durably and stops taking new ones (the
    /// runtime stops when the last handle on it is dropped).
    fn close(&self) {
        self.writer.close();
    }
}

/// What every tenant is opened with.
struct Shared {
    options: TenantOptions,
    host: Arc<Host>,
    /// The write path's MiniLM session, when the dense arm is on.
    encoder: Option<pfm_dense::SharedMiniLm>,
    /// When the server started (the tenants' last-use clock).
    started: Instant,
    /// The rate limiters' clock, made once: making one reads the CPU's
    /// features with `cpuid`, which a VM traps (1% of a 100,000-tenant
    /// server's CPU when every open made two, 2026-12-05).
    clock: governor::clock::DefaultClock,
}

impl Shared {
    fn millis(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

/// Every tenant, by token hash. A tenant is opened (its ledger replayed) on
/// its first request, not at start, so a server with many registered users
/// starts in the time of reading its token file and holds in memory only
/// the tenants that have been used; under a memory budget, the least
/// recently used idle tenants are closed again ([`Tenants::evict`]).
pub struct Tenants {
    data_dir: PathBuf,
    shared: Shared,
    /// Every registered tenant, as the token file last said.
    registry: ArcSwap<Registry>,
    /// Open tenants by name (read lock-free by [`Tenants::lookup`];
    /// replaced only under the `open` lock).
    live: ArcSwap<HashMap<String, Arc<Tenant>>>,
    /// Hashes of the metrics tokens.
    metrics: ArcSwap<HashSet<String>>,
    /// Hashes of the admin tokens (the lifecycle API).
    admins: ArcSwap<HashSet<String>>,
    /// Serializes changes to the open tenants and rereading the token
    /// file, and runs each open once (`pfm_serve::opening`): held for
    /// bookkeeping only, never while a ledger is replayed, so tenants open
    /// in parallel.
    open: Opening<Gate, Arc<Tenant>>,
    /// Opens and evictions, under their own lock (read by `/metrics`
    /// without waiting for an open in progress).
    turnover: Mutex<Turnover>,
}

/// What the `open` lock guards besides the open tenants.
#[derive(Default)]
struct Gate {
    /// The token file's time when last read.
    read_at: Option<std::time::SystemTime>,
}

/// The token file as read: computed once per change of the file, so a
/// lookup, `/healthz` and the orphan check each cost one map access.
#[derive(Default)]
struct Registry {
    /// Token hash → tenant name.
    by_hash: HashMap<String, String>,
    /// The names a token names.
    names: HashSet<String>,
}

/// Opens and closes since start, for `/metrics` (under a lock of their
/// own: opens record here from outside the `open` lock).
#[derive(Default)]
struct Turnover {
    /// Tenants closed for the memory budget.
    evictions: u64,
    /// Opens that read a checkpoint instead of the ledger's rows.
    from_checkpoint: u64,
    /// Every open's time, µs (auto-resizing: most opens take milliseconds);
    /// its count is the number of opens.
    open_us: Option<hdrhistogram::Histogram<u64>>,
}

/// What opening tenants has cost since start.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OpenStats {
    /// Tenants opened.
    pub opens: u64,
    /// Tenants closed for the memory budget.
    pub evictions: u64,
    /// Opens that read a checkpoint instead of the ledger's rows.
    pub from_checkpoint: u64,
    /// Open time quantiles, µs: median, 99th percentile, most.
    pub open_us: [u64; 3],
}

/// What [`Tenants::delete`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deletion {
    /// No such tenant.
    NotFound,
    /// Its tokens revoked (how many) and, if it had a ledger directory,
    /// that directory removed.
    Deleted {
        /// Tokens revoked.
        revoked: usize,
        /// Whether a ledger directory was removed.
        removed: bool,
    },
    /// Its tokens revoked, but requests still held it when the wait ran
    /// out: its data is still on disk (deleting again finishes the job).
    Busy {
        /// Tokens revoked.
        revoked: usize,
    },
}

/// What a token opens.
pub enum Lookup {
    /// An open tenant, pinned for the request.
    Open(TenantRef),
    /// A registered tenant not open yet: [`Tenants::open_tenant`] opens it.
    Closed(String),
    /// No tenant.
    Unknown,
}

impl std::fmt::Debug for Tenants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tenants")
            .field("data_dir", &self.data_dir)
            .finish_non_exhaustive()
    }
}

impl Tenants {
    /// Reads the token file and starts the shared executors; opens no
    /// tenant (see [`Tenants::open_tenant`]). Blocks.
    pub fn open(data_dir: &Path, options: TenantOptions) -> Result<Tenants> {
        files::private_dir(data_dir)?;
        files::private_dir(&data_dir.join("tenants"))?;
        let host = Host::start(&options.serve())?;
        let encoder = options
            .models
            .as_ref()
            .map(|models| pfm_dense::MiniLm::load(models, 1).map(pfm_dense::SharedMiniLm::new))
            .transpose()?;
        let tenants = Tenants {
            data_dir: data_dir.to_owned(),
            shared: Shared {
                options,
                host,
                encoder,
                started: Instant::now(),
                clock: governor::clock::DefaultClock::default(),
            },
            registry: ArcSwap::from_pointee(Registry::default()),
            live: ArcSwap::from_pointee(HashMap::new()),
            metrics: ArcSwap::from_pointee(HashSet::new()),
            admins: ArcSwap::from_pointee(HashSet::new()),
            open: Opening::default(),
            turnover: Mutex::new(Turnover::default()),
        };
        tenants.reload()?;
        Ok(tenants)
    }

    /// Closes least recently used idle tenants every half second while the
    /// open ones are over the memory budget, until `stop` is set (no thread
    /// without a budget). The thread is scheduled like the tenants'
    /// construction threads ([`pfm_serve::Background`]): no request waits
    /// for a close but a request for the tenant being closed, and a close
    /// (freeing a whole store) must not take cores from the retrieves of
    /// open tenants.
    pub fn start_evicting(
        self: &Arc<Tenants>,
        stop: Arc<std::sync::atomic::AtomicBool>,
    ) -> Result<Option<std::thread::JoinHandle<()>>> {
        let Some(budget) = self.shared.options.memory_budget else {
            return Ok(None);
        };
        let tenants = self.clone();
        let background = self.shared.options.serve().background;
        std::thread::Builder::new()
            .name("pfm-evict".into())
            .spawn(move || {
                background.apply();
                while !stop.load(Ordering::Acquire) {
                    std::thread::sleep(EVICT_EVERY);
                    tenants.evict(budget);
                }
            })
            .map(Some)
            .map_err(|e| Error::InvalidState(format!("cannot start the eviction thread: {e}")))
    }

    /// While the open tenants' estimated memory is over `budget`, closes
    /// the least recently used one that is idle (unused for [`MIN_IDLE`],
    /// no registered context, no request pinning it): its queued writes
    /// are made durable, then it is dropped; its next request opens it
    /// again, after the close. The closes run outside the `open` lock (a
    /// ledger file's close syncs it, and freeing a store takes
    /// milliseconds): opens of other tenants publish meanwhile. Returns how
    /// many were closed. Blocks.
    ///
    /// Each tenant is retired just before its own close, not the pass's
    /// all at once: a pass under churn closes hundreds (about 1.5 ms
    /// each), and a request for a tenant retired at the start of the pass
    /// would wait for every close before its own (up to 1.7 s measured,
    /// 2026-12-05). Now it waits for one close at most, and a tenant used
    /// again while the pass runs is skipped.
    pub fn evict(&self, budget: u64) -> usize {
        // Names, not tenants: a closed tenant's memory is freed by its
        // close, not when the pass ends.
        let mut order: Vec<(u64, String, u64)> = self
            .live
            .load()
            .values()
            .map(|t| {
                let used = t.last_use.load(Ordering::Relaxed);
                (used, t.name.clone(), t.estimated_bytes())
            })
            .collect();
        let mut total: u64 = order.iter().map(|(_, _, bytes)| bytes).sum();
        if total <= budget {
            return 0;
        }
        order.sort_unstable();
        let idle_ms = u64::try_from(MIN_IDLE.as_millis()).unwrap_or(u64::MAX);
        let mut closed = 0;
        for (_, name, bytes) in order {
            if total <= budget {
                break;
            }
            let mut gate = self.gate();
            let Some(t) = self.live.load().get(&name).cloned() else {
                continue;
            };
            let idle = self
                .shared
                .millis()
                .saturating_sub(t.last_use.load(Ordering::Relaxed))
                >= idle_ms;
            if !idle || t.runtime.contexts_registered() > 0 || !t.residency.retire() {
                continue;
            }
            drop(t);
            let closes = self.take_out(&mut gate, std::slice::from_ref(&name));
            drop(gate);
            for (tenant, close) in closes {
                tenant.close();
                drop(tenant);
                self.gate().end_close(close);
            }
            total = total.saturating_sub(bytes);
            closed += 1;
        }
        if closed > 0 {
            tracing::info!(
                closed,
                estimated_bytes = total,
                budget,
                "closed idle tenants over the memory budget"
            );
        }
        self.turnover().evictions += closed as u64;
        closed
    }

    fn turnover(&self) -> std::sync::MutexGuard<'_, Turnover> {
        self.turnover.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What opening tenants has cost since start.
    pub fn open_stats(&self) -> OpenStats {
        let t = self.turnover();
        let q = |h: &hdrhistogram::Histogram<u64>| {
            [h.value_at_quantile(0.5), h.value_at_quantile(0.99), h.max()]
        };
        OpenStats {
            opens: t.open_us.as_ref().map_or(0, |h| h.len()),
            evictions: t.evictions,
            from_checkpoint: t.from_checkpoint,
            open_us: t.open_us.as_ref().map(q).unwrap_or_default(),
        }
    }

    /// Takes retired tenants out of the open ones, makes their queued
    /// writes durable and drops them, all under the `open` lock (rare
    /// closes that must be over when the caller goes on: a revoked or
    /// deleted tenant).
    fn close_retired(&self, gate: &mut Locked<'_, Gate, Arc<Tenant>>, names: &[String]) {
        for (tenant, close) in self.take_out(gate, names) {
            tenant.close();
            gate.end_close(close);
        }
    }

    /// Takes retired tenants out of the open ones and marks each closing
    /// (an open of it waits for [`Locked::end_close`]).
    fn take_out(
        &self,
        gate: &mut Locked<'_, Gate, Arc<Tenant>>,
        names: &[String],
    ) -> Vec<(Arc<Tenant>, Close)> {
        if names.is_empty() {
            return Vec::new();
        }
        let mut kept = HashMap::clone(&self.live.load());
        let taken = names
            .iter()
            .filter_map(|name| kept.remove(name).map(|t| (t, gate.begin_close(name))))
            .collect();
        self.live.store(Arc::new(kept));
        taken
    }

    /// Closes open tenants that no token names any more (revoked, or the
    /// tenant deleted: `pfm tenant delete` waits for this), once no request
    /// pins them. Called after each token-file check. Blocks.
    fn close_orphans(&self, gate: &mut Locked<'_, Gate, Arc<Tenant>>) {
        let registry = self.registry.load();
        let orphans: Vec<String> = self
            .live
            .load()
            .values()
            .filter(|t| !registry.names.contains(&t.name) && t.residency.retire())
            .map(|t| t.name.clone())
            .collect();
        if !orphans.is_empty() {
            tracing::info!(closed = orphans.len(), "closing tenants no token names");
        }
        self.close_retired(gate, &orphans);
    }

    /// What a token opens (lock-free).
    pub fn lookup(&self, token: &str) -> Lookup {
        let registry = self.registry.load();
        let Some(name) = registry.by_hash.get(&tokens::hash(token)) else {
            return Lookup::Unknown;
        };
        match self
            .live
            .load()
            .get(name)
            .and_then(|t| t.pin(self.shared.millis()))
        {
            Some(t) => Lookup::Open(t),
            None => Lookup::Closed(name.clone()),
        }
    }

    /// Opens a registered tenant (replaying its ledger) unless it is open,
    /// and returns it pinned for the request. The replay runs outside the
    /// `open` lock, so other tenants open meanwhile; a second request for
    /// the same tenant waits for the first one's open. `None` when no token
    /// names the tenant any more (deleted or revoked since the request's
    /// lookup): the request's token is unknown now, as it is to a later
    /// lookup. Blocks: call it on a request thread.
    pub fn open_tenant(&self, name: &str) -> Result<Option<TenantRef>> {
        tokens::check_tenant(name)?;
        let opened = self.open_registered(name);
        if opened.is_err() && !self.registry.load().names.contains(name) {
            return Ok(None);
        }
        opened.map(Some)
    }

    /// [`Tenants::open_tenant`] of a tenant a token named at lookup.
    fn open_registered(&self, name: &str) -> Result<TenantRef> {
        let started = Instant::now();
        // A tenant the evictor retires between its open and the pin below
        // (idle for MIN_IDLE first, so hardly ever) is opened again.
        for _ in 0..OPEN_TRIES {
            let tenant = self
                .open
                .open(
                    name,
                    |_| self.live.load().get(name).cloned(),
                    || {
                        // A tenant deleted since the request's lookup is not
                        // opened (its directory would be made again): a
                        // delete stores the registry without it, then waits
                        // for the opens in flight (`Tenants::delete`).
                        if !self.registry.load().names.contains(name) {
                            return Err(format!("tenant {name} has been deleted"));
                        }
                        let dir = lifecycle::tenant_dir(&self.data_dir, name);
                        let opened = Tenant::open(name, &dir, &self.shared);
                        let from_checkpoint = matches!(opened, Ok((_, true)));
                        self.record_open(name, started.elapsed(), from_checkpoint);
                        opened
                            .map(|(tenant, _)| Arc::new(tenant))
                            .map_err(|e| format!("tenant {name}: {e}"))
                    },
                    |_, tenant| {
                        let mut live = HashMap::clone(&self.live.load());
                        live.insert(name.to_owned(), tenant.clone());
                        self.live.store(Arc::new(live));
                    },
                )
                .map_err(Error::InvalidState)?;
            if let Some(mut pinned) = tenant.pin(self.shared.millis()) {
                pinned.opened = Some(started.elapsed());
                return Ok(pinned);
            }
        }
        Err(Error::InvalidState(format!(
            "tenant {name} is being closed: retry the request"
        )))
    }

    fn gate(&self) -> Locked<'_, Gate, Arc<Tenant>> {
        self.open.lock()
    }

    /// Counts an open and its time (for `/metrics`).
    fn record_open(&self, name: &str, took: Duration, from_checkpoint: bool) {
        tracing::info!(
            tenant = name,
            ms = took.as_secs_f64() * 1e3,
            from_checkpoint,
            "tenant opened on its first request"
        );
        let mut turnover = self.turnover();
        turnover.from_checkpoint += u64::from(from_checkpoint);
        let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX).max(1);
        turnover
            .open_us
            .get_or_insert_with(|| {
                // Infallible: 2 significant digits is a valid precision.
                hdrhistogram::Histogram::new(2).expect("histogram precision")
            })
            .record(us)
            // Infallible: an auto-resizing histogram takes any u64 a
            // Duration's µs fit in.
            .expect("auto-resizing histogram");
    }

    /// Whether a token opens `GET /metrics` (lock-free).
    pub fn is_metrics_token(&self, token: &str) -> bool {
        self.metrics.load().contains(&tokens::hash(token))
    }

    /// Whether a token opens the lifecycle API (lock-free).
    pub fn is_admin_token(&self, token: &str) -> bool {
        self.admins.load().contains(&tokens::hash(token))
    }

    /// Whether a tenant is open in memory now.
    pub fn is_open(&self, name: &str) -> bool {
        self.live.load().contains_key(name)
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Deletes a tenant and everything it stored: revokes its tokens (its
    /// requests are refused from then on), closes it once no request
    /// holds it and no open or eviction of it is in flight, waiting up to
    /// `wait`, then removes its ledger directory — under the `open` lock,
    /// so no open can make it again. Blocks.
    pub fn delete(&self, name: &str, wait: Duration) -> Result<Deletion> {
        if lifecycle::find(&self.data_dir, name)?.is_none() {
            return Ok(Deletion::NotFound);
        }
        let revoked = tokens::revoke(&self.data_dir, None, Some(name))?.len();
        self.reload()?;
        let deadline = Instant::now() + wait;
        loop {
            let mut gate = self.gate();
            self.close_orphans(&mut gate);
            if !self.is_open(name) && !gate.in_flight(name) && !gate.closing(name) {
                // Looked up now, not before the close: a tenant's first
                // write makes its directory (`ledger_file`), and one may
                // have run since the tenant was found.
                let dir = lifecycle::existing_dir(&self.data_dir, name);
                if let Some(dir) = &dir {
                    lifecycle::remove_data(dir)?;
                }
                return Ok(Deletion::Deleted {
                    revoked,
                    removed: dir.is_some(),
                });
            }
            drop(gate);
            if Instant::now() >= deadline {
                return Ok(Deletion::Busy { revoked });
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Rereads the token file if it changed: new tenants become reachable
    /// (opened on their first request), revoked tokens are dropped, and an
    /// open tenant no token names any more is closed once idle. Blocks.
    pub fn reload(&self) -> Result<()> {
        let mut gate = self.gate();
        let modified = tokens::modified(&self.data_dir);
        if gate.read_at.is_some() && gate.read_at == modified {
            self.close_orphans(&mut gate);
            return Ok(());
        }
        let loaded = tokens::load(&self.data_dir)?;
        for name in loaded.tenants.values() {
            tokens::check_tenant(name)?;
        }
        let names = loaded.tenants.values().cloned().collect();
        self.registry.store(Arc::new(Registry {
            by_hash: loaded.tenants,
            names,
        }));
        self.metrics.store(Arc::new(loaded.metrics));
        self.admins.store(Arc::new(loaded.admins));
        gate.read_at = modified;
        self.close_orphans(&mut gate);
        Ok(())
    }

    /// Open tenants with series of their own on `/metrics`.
    pub fn metrics_tenants(&self) -> usize {
        self.shared.options.metrics_tenants
    }

    /// Registered tenants (those a token names).
    pub fn registered(&self) -> usize {
        self.registry.load().names.len()
    }

    /// Every open tenant, by name.
    pub fn all(&self) -> Vec<Arc<Tenant>> {
        let mut all: Vec<_> = self.live.load().values().cloned().collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        all
    }

    /// Finishes every open tenant's queued writes durably. Blocks.
    pub fn close(&self) {
        for t in self.all() {
            t.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> TenantOptions {
        let one = NonZeroU32::new(1000).expect("nonzero");
        TenantOptions {
            config: Config::default(),
            workers: 1,
            construction_threads: 1,
            tenant_jobs: 1,
            fsync: Fsync::Always,
            rate_limit: one,
            observe_rate: one,
            max_contexts: 4,
            models: None,
            memory_budget: None,
            metrics_tenants: 1,
            checkpoint_min_facts: 0,
        }
    }

    /// A new data directory whose token file registers tenant `name`, and
    /// its tenants.
    fn one_tenant(name: &str) -> (PathBuf, Tenants) {
        let dir = std::env::temp_dir().join(format!("pfm-tenant-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        tokens::create(&dir, tokens::Grant::Tenant(name), jiff::Timestamp::now()).unwrap();
        let tenants = Tenants::open(&dir, options()).unwrap();
        (dir, tenants)
    }

    /// A request that looked a closed tenant up before it was deleted, and
    /// opens it after, is refused and makes no directory: the delete
    /// removed the tenant's data, and an open would make it anew.
    #[test]
    fn an_open_after_the_tenant_is_deleted_is_refused_and_makes_nothing() {
        let (dir, tenants) = one_tenant("gone");
        assert_eq!(tenants.registered(), 1);
        tokens::revoke(&dir, None, Some("gone")).unwrap();
        tenants.reload().unwrap();
        assert!(tenants.open_tenant("gone").unwrap().is_none());
        assert!(!lifecycle::tenant_dir(&dir, "gone").exists());
        tenants.close();
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A tenant that has only been read has no ledger file (nor
    /// directory); its first write makes one, which a reopen replays and
    /// a delete removes (`ledger_file`).
    #[test]
    fn a_tenant_makes_its_ledger_file_on_its_first_write() {
        let (dir, tenants) = one_tenant("new");
        let file = lifecycle::tenant_dir(&dir, "new").join(crate::durable::FILE);
        let read = tenants.open_tenant("new").unwrap().unwrap();
        assert_eq!(read.runtime.version().timeline.len(), 0);
        assert!(!file.parent().unwrap().exists(), "a read makes nothing");
        let (tx, rx) = tokio::sync::oneshot::channel();
        let at = pfm::time::WallTime::parse("2025-06-02").unwrap();
        let observation = pfm::memory::Observation::new("Alex lives in Lisbon.", at);
        read.write(WriteOp::Observe(vec![observation], None, tx))
            .unwrap();
        assert_eq!(rx.blocking_recv().unwrap().unwrap().receipts.len(), 1);
        assert!(file.exists(), "an acknowledged write made the file");
        drop(read);
        tenants.close();
        let tenants = Tenants::open(&dir, options()).unwrap();
        let reopened = tenants.open_tenant("new").unwrap().unwrap();
        assert_eq!(reopened.runtime.version().timeline.len(), 1);
        drop(reopened);
        let deleted = tenants.delete("new", Duration::from_secs(10)).unwrap();
        assert!(matches!(deleted, Deletion::Deleted { removed: true, .. }));
        assert!(!file.parent().unwrap().exists());
        tenants.close();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
