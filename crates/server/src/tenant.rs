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
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};

use super::pool::InFlight;
use super::writer::{Fsync, WriteOp, Writer};
use super::{files, tokens};
use crate::durable::DurableLedger;
use pfm::config::Config;
use pfm::error::{Error, Result};
use pfm_serve::{Host, Runtime, ServeOptions};

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
}

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
    writer: Writer,
    limiter: DefaultDirectRateLimiter,
    ingest: DefaultDirectRateLimiter,
    /// Its jobs on the request threads (see `pool`).
    pub in_flight: InFlight,
}

impl std::fmt::Debug for Tenant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tenant")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Tenant {
    /// Opens a tenant's ledger (replaying it) and starts serving it on the
    /// shared executors. Must run on a thread that may block (not an async
    /// task).
    fn open(name: &str, dir: &Path, shared: &Shared) -> Result<Tenant> {
        let options = &shared.options;
        let (store, mut memory) = DurableLedger::open(dir, options.config.clone())?;
        if let Some(encoder) = &shared.encoder {
            // Vectors are not stored: a restart embeds every retained fact.
            memory.set_encoder(Box::new(encoder.clone()), false)?;
        }
        tracing::info!(
            tenant = name,
            facts = memory.ledger().len(),
            seq = memory.ledger().seq(),
            "tenant replayed"
        );
        let runtime = Arc::new(Runtime::attach(&shared.host, memory, &options.serve())?);
        let writer = Writer::start(store, runtime.clone(), options.fsync)?;
        Ok(Tenant {
            name: name.to_owned(),
            runtime,
            writer,
            limiter: RateLimiter::direct(Quota::per_second(options.rate_limit)),
            ingest: RateLimiter::direct(Quota::per_second(options.observe_rate)),
            in_flight: InFlight::default(),
        })
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
}

/// Every tenant, by token hash.
pub struct Tenants {
    data_dir: PathBuf,
    shared: Shared,
    by_hash: ArcSwap<HashMap<String, Arc<Tenant>>>,
    /// Hashes of the metrics tokens.
    metrics: ArcSwap<HashSet<String>>,
    /// Open tenants by name, and the token file's time when last read.
    open: Mutex<Opened>,
}

/// Open tenants by name, and when the token file was last read.
type Opened = (HashMap<String, Arc<Tenant>>, Option<std::time::SystemTime>);

impl std::fmt::Debug for Tenants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tenants")
            .field("data_dir", &self.data_dir)
            .finish_non_exhaustive()
    }
}

impl Tenants {
    /// Opens every tenant the token file names. Blocks (replays ledgers).
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
            },
            by_hash: ArcSwap::from_pointee(HashMap::new()),
            metrics: ArcSwap::from_pointee(HashSet::new()),
            open: Mutex::new((HashMap::new(), None)),
        };
        tenants.reload()?;
        Ok(tenants)
    }

    /// The tenant a token opens, if any (lock-free).
    pub fn lookup(&self, token: &str) -> Option<Arc<Tenant>> {
        self.by_hash.load().get(&tokens::hash(token)).cloned()
    }

    /// Whether a token opens `GET /metrics` (lock-free).
    pub fn is_metrics_token(&self, token: &str) -> bool {
        self.metrics.load().contains(&tokens::hash(token))
    }

    /// Rereads the token file if it changed, opening new tenants and
    /// dropping revoked tokens (their tenants stay open, unreachable until
    /// a new token names them). Blocks.
    pub fn reload(&self) -> Result<()> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let modified = tokens::modified(&self.data_dir);
        if open.1.is_some() && open.1 == modified {
            return Ok(());
        }
        let (hashes, metrics) = tokens::load(&self.data_dir)?;
        let mut by_hash = HashMap::new();
        for (hash, name) in hashes {
            tokens::check_tenant(&name)?;
            let tenant = match open.0.get(&name) {
                Some(t) => t.clone(),
                None => {
                    let dir = self.data_dir.join("tenants").join(&name);
                    let t = Arc::new(
                        Tenant::open(&name, &dir, &self.shared)
                            .map_err(|e| Error::InvalidState(format!("tenant {name}: {e}")))?,
                    );
                    open.0.insert(name.clone(), t.clone());
                    t
                }
            };
            by_hash.insert(hash, tenant);
        }
        self.by_hash.store(Arc::new(by_hash));
        self.metrics.store(Arc::new(metrics));
        open.1 = modified;
        Ok(())
    }

    /// Every open tenant.
    pub fn all(&self) -> Vec<Arc<Tenant>> {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let mut all: Vec<_> = open.0.values().cloned().collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        all
    }

    /// Finishes every tenant's queued writes durably. Blocks.
    pub fn close(&self) {
        for t in self.all() {
            t.close();
        }
    }
}
