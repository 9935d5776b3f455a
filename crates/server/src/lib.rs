//! `pfm serve`: the memory server agents embed — HTTP/JSON under `/v1`,
//! tenants isolated by bearer token, each with a durable ledger that
//! survives `kill -9`.
//!
//! ```text
//!  HTTP (axum, tokio) ── auth (token hash → tenant, lock-free) ── rate limit
//!     │ observe / forget ──> tenant's Writer thread ── exclusive ──> construction actor
//!     │                         group commit: one redb transaction + fsync per batch, then ack
//!     │ retrieve / facts ──> request threads (Requester per tenant) ──> snapshot / worker pool
//!     └ /metrics, /healthz, /v1/openapi.json
//! ```
//!
//! # Layout
//! - [`durable`]: the ledger on disk (redb), written before a commit is
//!   acknowledged and read back into a `Memory` on start;
//!   [`ledger_file`]: a tenant's file, made by its first write.
//! - [`api`]: bodies, handlers, the OpenAPI document.
//! - [`error`]: the one error shape and the JSON extractor.
//! - [`tenant`]: tenants and their runtimes; [`tokens`]: the hashed token
//!   file; [`files`]: owner-only files and directories.
//! - [`writer`]: the durable write path (group commit);
//!   [`idempotency`]: client request ids and their receipts.
//! - [`pool`]: request threads; [`prometheus`]: `/metrics`; [`http`]: the
//!   accept loop (header-read timeout, graceful shutdown).
//!
//! # Shutdown
//! SIGINT or SIGTERM stops accepting connections and lets in-flight
//! requests finish ([`http::serve`], as mini-redis does it with a broadcast
//! of the signal); then every writer finishes its queue durably,
//! the request threads stop, and each runtime shuts down.

pub mod api;
pub mod disk;
pub mod durable;
pub mod error;
pub mod files;
pub mod http;
pub mod idempotency;
pub mod ledger_file;
pub mod lifecycle;
pub mod mcp;
pub mod pool;
pub mod prometheus;
pub mod tenant;
pub mod tokens;
pub mod writer;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{delete, get, post};
use tower_http::timeout::TimeoutLayer;

use pfm::error::{Error, Result};
use pool::RequestPool;
use tenant::{TenantOptions, Tenants};

/// Limits on what one request may ask, each checked before any work is
/// done for it (README, "Limits"). The core's own ceilings
/// (`pfm::limits`) stand behind them.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Largest body in bytes.
    pub max_body: usize,
    /// Most observations in one request.
    pub max_batch: usize,
    /// Longest retrieval context in bytes.
    pub max_context: usize,
    /// Most names in one list: an observation's participants, its
    /// entities, a retrieval's participants (at most
    /// [`pfm::limits::MAX_NAMES`]).
    pub max_names: usize,
    /// Largest `k`.
    pub max_k: usize,
    /// Largest budget (larger ones are clamped).
    pub max_budget: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body: 4 << 20,
            max_batch: 1000,
            max_context: 16 << 10,
            max_names: 64,
            max_k: 100,
            max_budget: 100_000,
        }
    }
}

/// What a front end serves from: the tenants under a data directory and
/// the request threads (the same for `pfm serve` over HTTP and `pfm mcp`
/// over stdio).
#[derive(Clone, Debug)]
pub struct ServingOptions {
    /// Where tenants' ledgers and the token file live.
    pub data_dir: PathBuf,
    /// Tenants' stores and runtimes.
    pub tenant: TenantOptions,
    /// Request limits.
    pub limits: Limits,
    /// Request threads (the blocking half of retrieval).
    pub request_threads: usize,
    /// Most request-thread jobs (queued or running) one tenant may have at
    /// once; fewer than `request_threads`, so other tenants always find one.
    pub tenant_request_threads: usize,
}

/// How the HTTP server runs.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Where to listen.
    pub addr: SocketAddr,
    /// The tenants and request threads.
    pub serving: ServingOptions,
    /// A request (body included) that takes longer is answered 408.
    pub request_timeout: Duration,
    /// A connection that has not sent its request headers within this is
    /// closed.
    pub header_read_timeout: Duration,
    /// `Host` header values `/mcp` accepts (DNS-rebinding protection of
    /// the MCP transport); empty accepts any.
    pub mcp_allowed_hosts: Vec<String>,
}

/// Shared by every handler.
#[derive(Clone)]
pub struct AppState {
    /// The tenants.
    pub tenants: Arc<Tenants>,
    /// The request threads.
    pub pool: Arc<RequestPool>,
    /// Request limits.
    pub limits: Arc<Limits>,
}

/// The router over a state.
pub fn router(state: AppState, request_timeout: Duration) -> Router {
    let max_body = state.limits.max_body;
    Router::new()
        .route("/v1/observe", post(api::observe))
        .route("/v1/retrieve", post(api::retrieve_block))
        .route("/v1/contexts", post(api::register_context))
        .route("/v1/contexts/{id}", delete(api::unregister_context))
        .route("/v1/facts/{id}", get(api::fact))
        .route("/v1/forget", post(api::forget))
        .route(
            "/v1/tenants",
            get(api::list_tenants).post(api::create_tenant),
        )
        .route("/v1/tenants/{tenant}", delete(api::delete_tenant))
        .route(
            "/v1/tenants/{tenant}/tokens",
            get(api::list_tokens).post(api::create_token),
        )
        .route("/v1/tokens/{id}", delete(api::revoke_token))
        .route("/v1/openapi.json", get(api::openapi))
        .route("/healthz", get(api::healthz))
        .route("/metrics", get(prometheus::metrics))
        .layer(DefaultBodyLimit::max(max_body))
        .layer(TimeoutLayer::with_status_code(
            axum::http::StatusCode::REQUEST_TIMEOUT,
            request_timeout,
        ))
        .layer(axum::middleware::from_fn(error::json_errors))
        .with_state(state)
}

/// The tenants, their evictor and the request threads, started for a
/// front end and stopped once it has answered everything in flight.
pub struct Backend {
    /// What the handlers share.
    pub state: AppState,
    stop_evicting: Arc<AtomicBool>,
    evictor: Option<std::thread::JoinHandle<()>>,
}

impl Backend {
    /// Reads the token file (tenants open on their first request) and
    /// starts the evictor and the request threads. Blocks.
    pub fn start(options: &ServingOptions) -> Result<Backend> {
        let tenants = Arc::new(Tenants::open(&options.data_dir, options.tenant.clone())?);
        let stop_evicting = Arc::new(AtomicBool::new(false));
        let evictor = tenants.start_evicting(stop_evicting.clone())?;
        let pool = Arc::new(RequestPool::start(
            options.request_threads,
            options.request_threads * 64,
            options.tenant_request_threads,
        )?);
        Ok(Backend {
            state: AppState {
                tenants,
                pool,
                limits: Arc::new(options.limits.clone()),
            },
            stop_evicting,
            evictor,
        })
    }

    /// Stops the evictor, makes every writer finish its queue durably and
    /// stops the request threads. Call it once nothing new can arrive.
    pub fn stop(self) {
        self.stop_evicting.store(true, Ordering::Release);
        if let Some(e) = self.evictor {
            let _ = e.join();
        }
        tracing::info!("draining writers");
        let AppState { tenants, pool, .. } = self.state;
        tenants.close();
        if let Ok(mut pool) = Arc::try_unwrap(pool) {
            pool.close();
        }
        drop(tenants);
        tracing::info!("stopped");
    }
}

/// Runs the server until SIGINT or SIGTERM; `ready` gets the bound address
/// once it listens. Must be called from a thread that may block (it opens
/// the tenants, then runs its own tokio runtime).
pub fn run(options: ServerOptions, ready: impl FnOnce(SocketAddr)) -> Result<()> {
    let backend = Backend::start(&options.serving)?;
    let state = backend.state.clone();
    let io = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("pfm-http")
        .build()
        .map_err(|e| Error::ShutDown(format!("cannot start the HTTP runtime: {e}")))?;
    let served = io.block_on(async {
        let listener = tokio::net::TcpListener::bind(options.addr)
            .await
            .map_err(|e| Error::Io {
                path: options.addr.to_string(),
                source: e,
            })?;
        let addr = listener.local_addr().map_err(|e| Error::Io {
            path: options.addr.to_string(),
            source: e,
        })?;
        tracing::info!(%addr, data_dir = %options.serving.data_dir.display(), tenants = state.tenants.registered(), "listening");
        tokio::spawn(watch_tokens(state.tenants.clone()));
        ready(addr);
        let stopped = tokio_util::sync::CancellationToken::new();
        let app = router(state, options.request_timeout).nest_service(
            "/mcp",
            mcp::http::service(
                backend.state.clone(),
                options.mcp_allowed_hosts.clone(),
                stopped.clone(),
            ),
        );
        http::serve(
            listener,
            app,
            options.header_read_timeout,
            shutdown_signal(),
        )
        .await;
        stopped.cancel();
        Ok(())
    });
    // Everything in flight has been answered; nothing new arrives.
    io.shutdown_timeout(Duration::from_secs(5));
    backend.stop();
    served
}

/// How often the token file's modification time is checked: a token
/// created or revoked with `pfm token` takes effect within this.
const TOKEN_RELOAD: Duration = Duration::from_millis(500);

/// Rereads the token file whenever it changes (on a blocking thread: a new
/// tenant's ledger is replayed there).
async fn watch_tokens(tenants: Arc<Tenants>) {
    let mut tick = tokio::time::interval(TOKEN_RELOAD);
    loop {
        tick.tick().await;
        let t = tenants.clone();
        if let Ok(Err(e)) = tokio::task::spawn_blocking(move || t.reload()).await {
            tracing::warn!("token file not reloaded: {e}");
        }
    }
}

pub(crate) async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
    tracing::info!("shutdown signal: finishing in-flight requests");
}
