//! `POST /v1/contexts`, `DELETE /v1/contexts/{id}`: registered contexts,
//! whose blocks the snapshot publisher keeps ready.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::Serialize;
use utoipa::ToSchema;

use super::auth::Authed;
use super::retrieve::RetrieveIn;
use crate::AppState;
use crate::error::{ApiError, ApiJson, ErrorBody};

/// A registered context.
#[derive(Debug, Serialize, ToSchema)]
pub struct ContextOut {
    /// Its id, for `context_id` and `DELETE /v1/contexts/{id}`.
    pub id: u64,
    /// The commit its first snapshot was built from.
    pub store_seq: u64,
}

/// Registers a context: its snapshot is republished after every commit.
#[utoipa::path(post, path = "/v1/contexts", request_body = RetrieveIn,
    responses((status = 201, body = ContextOut), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn register_context(
    State(state): State<AppState>,
    Authed(tenant): Authed,
    ApiJson(body): ApiJson<RetrieveIn>,
) -> Result<impl IntoResponse, ApiError> {
    if body.context_id.is_some()
        || body.as_of.is_some()
        || body.mode.is_some()
        || body.omega_us.is_some()
        || body.deadline_ms.is_some()
    {
        return Err(ApiError::bad_request(
            "invalid_input",
            "a context takes context, participants, at, k, budget, rules, disclose, ranker and recency; mode, omega_us, deadline_ms go with each retrieve",
        ));
    }
    let follow_clock = body.at.is_none();
    let mut request = body.request(&state.limits, tenant.ranker.as_ref())?;
    if request.ranker.needs_vector() {
        // A context's text is fixed: it is encoded once, on a request
        // thread, and the snapshot publisher's retrievals reuse the vector.
        let job_tenant = tenant.clone();
        request = state
            .pool
            .run_for(&tenant.in_flight, move |local| -> Result<_, ApiError> {
                let encoded = local.of(&job_tenant)?.0.vectorize(&request)?;
                Ok(encoded.unwrap_or(request))
            })
            .await??;
    }
    let handle = tenant.runtime.register(request, follow_clock)?;
    let out = ContextOut {
        id: handle.id,
        store_seq: handle.snapshot().store_seq,
    };
    Ok((StatusCode::CREATED, axum::Json(out)))
}

/// Stops publishing a context.
#[utoipa::path(delete, path = "/v1/contexts/{id}", params(("id" = u64, Path, description = "context id")),
    responses((status = 204), (status = 404, body = ErrorBody), (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn unregister_context(
    Authed(tenant): Authed,
    Path(id): Path<u64>,
) -> Result<StatusCode, ApiError> {
    tenant.runtime.unregister(id)?;
    Ok(StatusCode::NO_CONTENT)
}
