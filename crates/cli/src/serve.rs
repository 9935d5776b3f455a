//! `pfm serve`: the HTTP/JSON memory server.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use pfm::Config;
use pfm_server::tenant::TenantOptions;
use pfm_server::{Limits, ServerOptions, ServingOptions};

/// What `pfm serve` and `pfm mcp` serve from: the data directory, its
/// tenants' stores and the threads that serve them.
#[derive(Args)]
pub struct ServingArgs {
    /// Where tenants' ledgers and the token file live.
    #[arg(long, default_value = "pfm-data")]
    data_dir: PathBuf,
    /// always (fsync every request) or group:N (one fsync per batch of
    /// requests, a batch collected for at most N ms).
    #[arg(long, default_value = "group:5")]
    fsync: pfm_server::writer::Fsync,
    /// Retrieval worker threads, shared by every tenant.
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// Construction threads, shared by every tenant (each tenant's commits
    /// run one at a time, on one of them; this many tenants commit and
    /// fsync at once).
    #[arg(long, default_value_t = 2)]
    construction_threads: usize,
    /// Most fresh-mode jobs one tenant may have queued or running in the
    /// shared worker queue; the excess falls back to the snapshot at once.
    /// Default: half the workers (at least 1).
    #[arg(long)]
    tenant_jobs: Option<usize>,
    /// Request threads (blocking half of retrieval, shared by tenants).
    #[arg(long, default_value_t = 8)]
    request_threads: usize,
    /// Most request-thread jobs one tenant may have at once (queued or
    /// running); the excess is answered 429 tenant_busy. Default: half the
    /// request threads (at least 1); must be below --request-threads.
    #[arg(long)]
    tenant_request_threads: Option<usize>,
    /// Requests per second per tenant (and burst size).
    #[arg(long, default_value = "10000")]
    rate_limit: std::num::NonZeroU32,
    /// Observations per second per tenant (and burst size): writes are
    /// charged per observation, so one tenant's bulk writes cannot take the
    /// machine from the others. Raise it for a bulk import.
    #[arg(long, default_value = "5000")]
    observe_rate: std::num::NonZeroU32,
    /// Largest request body in bytes.
    #[arg(long, default_value_t = 4 << 20)]
    max_body: usize,
    /// Most observations in one request.
    #[arg(long, default_value_t = 1000)]
    max_batch: usize,
    /// Most names in one list: an observation's participants or entities,
    /// a retrieval's participants (1 to 256).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u16).range(1..=256))]
    max_names: u16,
    /// Longest retrieval context in bytes (at most 65536).
    #[arg(long, default_value_t = 16 << 10, value_parser = clap::value_parser!(u32).range(1..=65536))]
    max_context_bytes: u32,
    /// Most registered contexts per tenant (each is republished after
    /// every commit).
    #[arg(long, default_value_t = pfm_serve::DEFAULT_MAX_CONTEXTS)]
    max_contexts: usize,
    /// The dense arm's files (`scripts/fetch-models` puts them in
    /// `models/`): with it, tenants' facts are embedded with MiniLM and
    /// `/v1/retrieve` serves the dense and hybrid rankers. Without it those
    /// rankers answer 503 dense_unavailable.
    #[arg(long, env = "PFM_MODELS")]
    models: Option<PathBuf>,
    /// How recency decays for requests that do not say (`recency` in
    /// /v1/retrieve): off (no recency factor: keys keep answers current),
    /// span (the half-life stretches to each store's own time span) or
    /// fixed (the paper's 30 days).
    #[arg(long, default_value = "off")]
    recency: pfm::rank::Recency,
    /// Revision ordering of new tenants: arrival (the last value to arrive
    /// is current) or event-time (the value with the latest stated time is:
    /// a late-arriving old message becomes history and never wins). A
    /// tenant keeps the ordering it was created under.
    #[arg(long, default_value = "arrival")]
    ordering: pfm::config::ChainOrder,
    /// Memory the open tenants may use, estimated (e.g. `4GiB`, `512MB`):
    /// over it, the least recently used tenants idle for 2 s (no request,
    /// no registered context) are closed, their writes durable, and
    /// reopened on their next request. An estimate, not a cap on RSS:
    /// 0.2 MB per open tenant and 3.1 KB per fact (README). Default: no
    /// budget, an opened tenant stays open.
    #[arg(long)]
    memory_budget: Option<bytesize::ByteSize>,
    /// Open tenants with series of their own on /metrics: the most active
    /// ones; the others are summed under `tenant="(others)"`.
    #[arg(long, default_value_t = 20)]
    metrics_tenants: usize,
    /// Fewest facts for which closing a tenant that changed writes its
    /// checkpoint (its facts and index terms in one record of its ledger
    /// file), which its next open reads instead of the rows, about 30%
    /// faster; the write costs the close about as much as one such open
    /// saves (README). Smaller ledgers open from their rows in well under
    /// a millisecond. 0 checkpoints every tenant that wrote.
    #[arg(long, default_value_t = 256)]
    checkpoint_min_facts: usize,
}

impl ServingArgs {
    /// The serving options these flags give.
    pub fn options(self) -> Result<ServingOptions> {
        Ok(ServingOptions {
            data_dir: self.data_dir,
            tenant: TenantOptions {
                config: {
                    let mut config = Config::default();
                    config.score.recency = self.recency;
                    config.ordering = self.ordering;
                    config
                },
                workers: self.workers,
                construction_threads: self.construction_threads,
                tenant_jobs: self.tenant_jobs.unwrap_or((self.workers / 2).max(1)),
                fsync: self.fsync,
                rate_limit: self.rate_limit,
                observe_rate: self.observe_rate,
                max_contexts: self.max_contexts,
                models: self.models.map(pfm_dense::ModelDir::at).transpose()?,
                memory_budget: self.memory_budget.map(|b| b.as_u64()),
                metrics_tenants: self.metrics_tenants,
                checkpoint_min_facts: self.checkpoint_min_facts,
            },
            limits: Limits {
                max_body: self.max_body,
                max_batch: self.max_batch,
                max_names: usize::from(self.max_names),
                max_context: self.max_context_bytes as usize,
                ..Limits::default()
            },
            request_threads: self.request_threads,
            tenant_request_threads: self
                .tenant_request_threads
                .unwrap_or((self.request_threads / 2).max(1)),
        })
    }
}

#[derive(Args)]
pub struct ServeArgs {
    /// Address to listen on (port 0 picks a free one; the bound address
    /// is printed on stdout as `listening on ADDR`).
    #[arg(long, default_value = "127.0.0.1:7878")]
    addr: std::net::SocketAddr,
    #[command(flatten)]
    serving: ServingArgs,
    /// Seconds before a request (body upload included) is answered 408.
    #[arg(long, default_value_t = 30)]
    request_timeout_secs: u64,
    /// Seconds a connection may take to send its request headers before
    /// it is closed.
    #[arg(long, default_value_t = 5)]
    header_timeout_secs: u64,
    /// `Host` header values `/mcp` answers (MCP's DNS-rebinding check,
    /// comma-separated, `host` or `host:port`); `any` answers every host
    /// (the bearer token still guards it).
    #[arg(long, value_delimiter = ',', default_value = "localhost,127.0.0.1,::1")]
    mcp_allowed_hosts: Vec<String>,
    /// Create this tenant with a fresh token at start if the data
    /// directory has no token yet (the token is printed once on stdout).
    #[arg(long)]
    bootstrap_tenant: Option<String>,
}

impl ServeArgs {
    pub fn run(self) -> Result<()> {
        init_logging();
        let data_dir = &self.serving.data_dir;
        if let Some(tenant) = &self.bootstrap_tenant
            && let Some(token) =
                pfm_server::tokens::bootstrap(data_dir, tenant, jiff::Timestamp::now())?
        {
            println!("token for tenant {tenant}: {token}");
        }
        let any_host = self.mcp_allowed_hosts.iter().any(|h| h == "any");
        let options = ServerOptions {
            addr: self.addr,
            serving: self.serving.options()?,
            request_timeout: Duration::from_secs(self.request_timeout_secs),
            header_read_timeout: Duration::from_secs(self.header_timeout_secs),
            mcp_allowed_hosts: if any_host {
                Vec::new()
            } else {
                self.mcp_allowed_hosts
            },
        };
        pfm_server::run(options, |addr| {
            use std::io::Write;
            println!("listening on {addr}");
            let _ = std::io::stdout().flush();
        })?;
        Ok(())
    }
}

/// `tracing` to stderr, filtered by RUST_LOG (default `info`, with the MCP
/// SDK's per-request lines at `warn`).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}
