//! The tenant lifecycle, to an admin token (`pfm token create --admin`):
//! `GET`/`POST /v1/tenants`, `DELETE /v1/tenants/{tenant}`,
//! `GET`/`POST /v1/tenants/{tenant}/tokens`, `DELETE /v1/tokens/{id}`. An
//! admin token opens no tenant's memory, and tenant tokens do not open
//! these. Every change goes through the same token file and tenant
//! directories as `pfm token` / `pfm tenant`, so the two can be mixed.

use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::IntoResponse;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::auth::bearer;
use crate::AppState;
use crate::durable::Settings;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::lifecycle::{self, TenantInfo};
use crate::tenant::Deletion;
use crate::tokens::{self, Grant, Scope};
use pfm::config::ChainOrder;

/// How long `DELETE /v1/tenants/{tenant}` waits for requests that hold the
/// tenant to finish before it answers 409 with the data still on disk.
const DELETE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Most tenants one `GET /v1/tenants` lists (`limit`).
pub const MAX_LIST: usize = 10_000;

/// A request made with an admin token.
pub struct Admin;

impl FromRequestParts<AppState> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let token = bearer(&parts.headers)?.to_owned();
        if !state.tenants.is_admin_token(&token) {
            // Maybe created since the file was last read.
            let tenants = state.tenants.clone();
            state.pool.run(move |_| tenants.reload()).await??;
        }
        if state.tenants.is_admin_token(&token) {
            Ok(Admin)
        } else {
            Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "the tenant lifecycle needs an admin token (`pfm token create --admin`); tenant and metrics tokens do not open it",
            ))
        }
    }
}

/// A tenant as listed.
#[derive(Debug, Serialize, ToSchema)]
pub struct TenantOut {
    /// Its name.
    pub tenant: String,
    /// Tokens that open it.
    pub tokens: usize,
    /// Whether it is open in memory now (opened on its first request).
    pub open: bool,
    /// Bytes of its ledger on disk (0 before its first request).
    pub ledger_bytes: u64,
}

/// `GET /v1/tenants`: a page of tenants in name order.
#[derive(Debug, Serialize, ToSchema)]
pub struct TenantList {
    /// The tenants after `after`, at most `limit`.
    pub tenants: Vec<TenantOut>,
    /// The `after` of the next page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

/// A page of `GET /v1/tenants`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    /// Tenants whose names sort after this one (the previous page's `next`).
    pub after: Option<String>,
    /// Most tenants to list: 1 to 10,000 (default 1,000).
    pub limit: Option<usize>,
}

/// `POST /v1/tenants`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TenantIn {
    /// The tenant: 1 to 64 characters of `a-z`, `0-9`, `-`, `_`.
    pub tenant: String,
    /// `arrival` (default: the last value to arrive is current) or
    /// `event_time` (the value with the latest stated time is); fixed for
    /// the tenant's life.
    #[schema(value_type = Option<String>)]
    pub ordering: Option<ChainOrder>,
    /// The tenant's recency decay for requests that do not say: `span`,
    /// `fixed` or `off`; absent, the server's (`pfm serve --recency`).
    /// Fixed for the tenant's life.
    #[schema(value_type = Option<String>)]
    #[serde(default)]
    pub recency: Option<pfm::rank::Recency>,
    /// The tenant's ranker for requests that name none (see
    /// `/v1/retrieve`'s `ranker`); absent, `pfm`. Fixed for the tenant's
    /// life.
    #[serde(default)]
    pub ranker: Option<String>,
}

/// A new token, shown once (only its hash is stored).
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenCreated {
    /// The tenant it opens.
    pub tenant: String,
    /// The bearer token.
    pub token: String,
    /// Its id (for `DELETE /v1/tokens/{id}`).
    pub id: String,
}

/// A token as listed (never the token itself).
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenOut {
    /// Its id: the first 12 hex digits of its hash.
    pub id: String,
    /// `tenant`, `metrics` or `admin`.
    pub scope: String,
    /// The tenant it opens (empty for the other scopes).
    pub tenant: String,
    /// When it was created (RFC 3339).
    pub created: String,
}

/// `GET /v1/tenants/{tenant}/tokens`, `DELETE /v1/tokens/{id}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenList {
    /// The tokens.
    pub tokens: Vec<TokenOut>,
}

/// `DELETE /v1/tenants/{tenant}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct TenantDeleted {
    /// The tenant.
    pub tenant: String,
    /// Tokens revoked.
    pub tokens_revoked: usize,
    /// Whether a ledger directory was removed (none before the tenant's
    /// first request).
    pub data_removed: bool,
}

fn token_out(t: &tokens::TokenEntry) -> TokenOut {
    TokenOut {
        id: t.id().to_owned(),
        scope: t.scope.name().to_owned(),
        tenant: t.tenant.clone(),
        created: t.created.clone(),
    }
}

fn no_tenant(name: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "unknown_tenant",
        format!("no tenant {name}: see GET /v1/tenants"),
    )
}

/// Lists tenants, a page at a time.
#[utoipa::path(get, path = "/v1/tenants", params(ListQuery),
    responses((status = 200, body = TenantList), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn list_tenants(
    State(state): State<AppState>,
    _: Admin,
    Query(query): Query<ListQuery>,
) -> Result<axum::Json<TenantList>, ApiError> {
    let limit = query.limit.unwrap_or(1000);
    if !(1..=MAX_LIST).contains(&limit) {
        return Err(ApiError::bad_request(
            "invalid_input",
            format!("limit {limit}: give 1 to {MAX_LIST}"),
        ));
    }
    let tenants = state.tenants.clone();
    let page = state
        .pool
        .run(move |_| -> Result<TenantList, ApiError> {
            let all = lifecycle::list(tenants.data_dir())?;
            let after: Vec<&TenantInfo> = all
                .iter()
                .filter(|t| query.after.as_deref().is_none_or(|a| t.name.as_str() > a))
                .collect();
            let next = (after.len() > limit).then(|| after[limit - 1].name.clone());
            let tenants = after
                .into_iter()
                .take(limit)
                .map(|t| TenantOut {
                    tenant: t.name.clone(),
                    tokens: t.tokens,
                    open: tenants.is_open(&t.name),
                    ledger_bytes: t.ledger_bytes(),
                })
                .collect();
            Ok(TenantList { tenants, next })
        })
        .await??;
    Ok(axum::Json(page))
}

/// Creates a tenant with its first token.
#[utoipa::path(post, path = "/v1/tenants", request_body = TenantIn,
    responses((status = 201, body = TokenCreated), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn create_tenant(
    State(state): State<AppState>,
    _: Admin,
    ApiJson(body): ApiJson<TenantIn>,
) -> Result<impl IntoResponse, ApiError> {
    let tenants = state.tenants.clone();
    let name = body.tenant.clone();
    let settings = Settings {
        recency: body.recency,
        ranker: body.ranker,
    };
    let token = state
        .pool
        .run(move |_| {
            lifecycle::create(
                tenants.data_dir(),
                &name,
                body.ordering.unwrap_or_default(),
                settings,
                jiff::Timestamp::now(),
            )
        })
        .await??;
    let Some(token) = token else {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "tenant_exists",
            format!(
                "tenant {} exists: POST /v1/tenants/{}/tokens gives it another token",
                body.tenant, body.tenant
            ),
        ));
    };
    let out = TokenCreated {
        tenant: body.tenant,
        id: tokens::id_of(&token),
        token,
    };
    Ok((StatusCode::CREATED, axum::Json(out)))
}

/// Deletes a tenant and everything it stored: its tokens are revoked at
/// once; its data is removed once no request holds it (409 if requests
/// still did after 10 s: delete again).
#[utoipa::path(delete, path = "/v1/tenants/{tenant}",
    params(("tenant" = String, Path, description = "The tenant")),
    responses((status = 200, body = TenantDeleted), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn delete_tenant(
    State(state): State<AppState>,
    _: Admin,
    Path(name): Path<String>,
) -> Result<axum::Json<TenantDeleted>, ApiError> {
    tokens::check_tenant(&name)?;
    let tenants = state.tenants.clone();
    let asked = name.clone();
    let deletion = state
        .pool
        .run(move |_| tenants.delete(&asked, DELETE_WAIT))
        .await??;
    match deletion {
        Deletion::NotFound => Err(no_tenant(&name)),
        Deletion::Deleted { revoked, removed } => Ok(axum::Json(TenantDeleted {
            tenant: name,
            tokens_revoked: revoked,
            data_removed: removed,
        })),
        Deletion::Busy { revoked } => Err(ApiError::new(
            StatusCode::CONFLICT,
            "tenant_in_use",
            format!(
                "{revoked} token(s) of {name} revoked, but requests still held it after {} s: its data is still on disk; delete it again",
                DELETE_WAIT.as_secs()
            ),
        )),
    }
}

/// Gives a tenant another token.
#[utoipa::path(post, path = "/v1/tenants/{tenant}/tokens",
    params(("tenant" = String, Path, description = "The tenant")),
    responses((status = 201, body = TokenCreated), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn create_token(
    State(state): State<AppState>,
    _: Admin,
    Path(name): Path<String>,
) -> Result<impl IntoResponse, ApiError> {
    let tenants = state.tenants.clone();
    let asked = name.clone();
    let token = state
        .pool
        .run(move |_| -> pfm::error::Result<Option<String>> {
            let dir = tenants.data_dir();
            if lifecycle::find(dir, &asked)?.is_none() {
                return Ok(None);
            }
            tokens::create(dir, Grant::Tenant(&asked), jiff::Timestamp::now()).map(Some)
        })
        .await??
        .ok_or_else(|| no_tenant(&name))?;
    let out = TokenCreated {
        tenant: name,
        id: tokens::id_of(&token),
        token,
    };
    Ok((StatusCode::CREATED, axum::Json(out)))
}

/// Lists a tenant's tokens (ids and times, never the tokens).
#[utoipa::path(get, path = "/v1/tenants/{tenant}/tokens",
    params(("tenant" = String, Path, description = "The tenant")),
    responses((status = 200, body = TokenList), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn list_tokens(
    State(state): State<AppState>,
    _: Admin,
    Path(name): Path<String>,
) -> Result<axum::Json<TokenList>, ApiError> {
    let tenants = state.tenants.clone();
    let asked = name.clone();
    let found = state
        .pool
        .run(move |_| -> pfm::error::Result<Option<Vec<TokenOut>>> {
            let dir = tenants.data_dir();
            if lifecycle::find(dir, &asked)?.is_none() {
                return Ok(None);
            }
            let own = tokens::list(dir)?
                .iter()
                .filter(|t| t.scope == Scope::Tenant && t.tenant == asked)
                .map(token_out)
                .collect();
            Ok(Some(own))
        })
        .await??;
    let tokens = found.ok_or_else(|| no_tenant(&name))?;
    Ok(axum::Json(TokenList { tokens }))
}

/// Revokes one token by id (at least 6 of its hex digits): the server
/// refuses it from then on; a tenant left with no token is closed once
/// idle, and its data stays (`DELETE /v1/tenants/{tenant}` removes it).
#[utoipa::path(delete, path = "/v1/tokens/{id}",
    params(("id" = String, Path, description = "The token's id, or at least 6 of its first hex digits")),
    responses((status = 200, body = TokenList), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn revoke_token(
    State(state): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> Result<axum::Json<TokenList>, ApiError> {
    let id = tokens::check_id(&id)?;
    let tenants = state.tenants.clone();
    let revoked = state
        .pool
        .run(move |_| -> pfm::error::Result<Vec<TokenOut>> {
            let revoked = tokens::revoke(tenants.data_dir(), Some(&id), None)?;
            if !revoked.is_empty() {
                tenants.reload()?;
            }
            Ok(revoked.iter().map(token_out).collect())
        })
        .await??;
    if revoked.is_empty() {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "unknown_token",
            "no token has that id: see GET /v1/tenants/{tenant}/tokens",
        ));
    }
    Ok(axum::Json(TokenList { tokens: revoked }))
}
