//! `pfm mcp`: the memory tools of one tenant over stdin and stdout, the
//! way an agent host runs a local MCP server (a command it starts, one
//! JSON-RPC message a line). The tenant's store is the one `pfm serve`
//! would serve from the same data directory: the same durable ledger,
//! serving runtime and request threads ([`Backend`]), so what one
//! remembers the other recalls (one process at a time: the ledger file is
//! locked while open).

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::transport::async_rw::AsyncRwTransport;

use super::MemoryTools;
use crate::{Backend, ServingOptions, lifecycle, shutdown_signal};
use pfm::error::{Error, Result};

/// Serves tenant `name` of `options.data_dir` over stdio until the client
/// closes stdin or SIGINT/SIGTERM arrives, then makes every write durable.
/// A tenant that does not exist is created (with the ordering of
/// `options`' config). Nothing but protocol messages goes to stdout.
pub fn run(options: &ServingOptions, name: &str) -> Result<()> {
    let ordering = options.tenant.config.ordering;
    if lifecycle::register(&options.data_dir, name, ordering, jiff::Timestamp::now())? {
        tracing::info!(tenant = name, "registered the tenant in the data directory");
    }
    let backend = Backend::start(options)?;
    let io = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("pfm-mcp")
        .build()
        .map_err(|e| Error::ShutDown(format!("cannot start the MCP runtime: {e}")))?;
    let state = backend.state.clone();
    let max_body = options.limits.max_body;
    let served = io.block_on(async move {
        let tenants = state.tenants.clone();
        let owned = name.to_owned();
        // Pinned for the process's life: stdio has no memory budget.
        let tenant = state
            .pool
            .run(move |_| tenants.open_tenant(&owned))
            .await
            .map_err(|e| Error::ShutDown(e.message))??
            .ok_or_else(|| Error::InvalidState(format!("no token names tenant {name} now")))?;
        tracing::info!(tenant = name, "serving MCP on stdio");
        // One message a line, at most --max-body bytes, as over HTTP (rmcp
        // drops a longer line unread and keeps the connection).
        let transport = AsyncRwTransport::new_server(tokio::io::stdin(), tokio::io::stdout())
            .with_max_line_length(max_body);
        let running = MemoryTools::new(state, Some(Arc::new(tenant.resident())))
            .serve(transport)
            .await
            .map_err(|e| Error::ShutDown(format!("MCP handshake on stdio failed: {e}")))?;
        let cancel = running.cancellation_token();
        tokio::select! {
            quit = running.waiting() => {
                tracing::info!(?quit, "the client closed stdio");
            }
            () = shutdown_signal() => cancel.cancel(),
        }
        Ok(())
    });
    io.shutdown_timeout(Duration::from_secs(5));
    backend.stop();
    served
}
