//! Authentication: the bearer token names the tenant, then the tenant's
//! rate limit admits the request.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};

use crate::AppState;
use crate::error::ApiError;
use crate::tenant::{Lookup, TenantRef};

/// The authenticated tenant of a request (its bearer token), after the
/// tenant's rate limit admitted the request.
pub struct Authed(pub TenantRef);

/// The bearer token of a request, or 401 saying how to send one.
pub fn bearer(headers: &HeaderMap) -> Result<&str, ApiError> {
    let unauthorized = |m: &str| ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", m);
    headers
        .get(header::AUTHORIZATION)
        .ok_or_else(|| unauthorized("missing Authorization header: send `Authorization: Bearer <token>` (create one with `pfm token create --tenant NAME`)"))?
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| unauthorized("the Authorization header must be `Bearer <token>`"))
}

impl FromRequestParts<AppState> for Authed {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let unauthorized = |m: &str| ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", m);
        let token = bearer(&parts.headers)?.to_owned();
        let mut found = state.tenants.lookup(&token);
        if matches!(found, Lookup::Unknown) {
            // Maybe created since start: reread the token file (on a
            // request thread: it blocks).
            let tenants = state.tenants.clone();
            state.pool.run(move |_| tenants.reload()).await??;
            found = state.tenants.lookup(&token);
        }
        let tenant = match found {
            Lookup::Open(t) => Some(t),
            // First request since start: open (replay) it on a request
            // thread (`None`: its token was revoked meanwhile).
            Lookup::Closed(name) => {
                let tenants = state.tenants.clone();
                state
                    .pool
                    .run(move |_| tenants.open_tenant(&name))
                    .await??
            }
            Lookup::Unknown => None,
        };
        let tenant = tenant.ok_or_else(|| unauthorized("unknown token"))?;
        if !tenant.admit() {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                "this tenant is over its request rate (--rate-limit): retry shortly",
            ));
        }
        Ok(Authed(tenant))
    }
}
