//! `/mcp` on `pfm serve`: the memory tools over MCP's streamable HTTP
//! transport, stateless (no session is kept between requests: a request
//! carries everything, so 100,000 tenants' agents hold no server memory
//! between calls) and answered as JSON. Every request, the `initialize`
//! handshake included, is authenticated as the `/v1` endpoints are: its
//! bearer token names the tenant (401 otherwise), the tenant's rate limit
//! admits it, and the pinned tenant rides in the request's extensions to
//! the tool call ([`RequestTenant`]).

use std::sync::Arc;

use axum::Router;
use axum::extract::{FromRequestParts, Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::{MemoryTools, RequestTenant};
use crate::AppState;
use crate::api::Authed;

/// The `/mcp` service over `state`. `allowed_hosts` are the `Host` header
/// values it answers (rmcp's DNS-rebinding check; empty: any); `stop`
/// ends its streams at shutdown.
pub fn service(state: AppState, allowed_hosts: Vec<String>, stop: CancellationToken) -> Router {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_allowed_hosts(allowed_hosts)
        .with_max_request_body_bytes(state.limits.max_body)
        .with_cancellation_token(stop);
    let tools = state.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(MemoryTools::new(tools.clone(), None)),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    Router::new()
        .fallback_service(mcp)
        .layer(middleware::from_fn_with_state(state, authenticate))
}

/// Authenticates an `/mcp` request as `/v1` does, and hands its pinned
/// tenant to the tool call.
async fn authenticate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    match Authed::from_request_parts(&mut parts, &state).await {
        Ok(Authed(tenant)) => {
            parts.extensions.insert(RequestTenant(Arc::new(tenant)));
            next.run(Request::from_parts(parts, body)).await
        }
        Err(e) => e.into_response(),
    }
}
