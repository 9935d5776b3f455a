//! `/healthz` and the OpenAPI document.

use axum::extract::State;
use axum::response::IntoResponse;
use serde::Serialize;
use utoipa::{OpenApi, ToSchema};

use super::{
    AsOfArg, Conditions, ContextOut, FactLine, FactOut, ForgetIn, ForgetOut, KeyArg, Mode,
    ObservationIn, ObserveBatch, ObserveOut, ReceiptOut, RetrieveIn, RetrieveOut, StatusAt,
    TenantDeleted, TenantIn, TenantList, TenantOut, TimeArg, TimingsOut, TokenCreated, TokenList,
    TokenOut,
};
use crate::AppState;
use crate::error::ErrorBody;

/// Liveness.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// Always `ok` while the server answers.
    pub status: &'static str,
    /// Tenants registered (a token names them).
    pub tenants: usize,
    /// Of those, tenants open in memory (opened on their first request).
    pub open_tenants: usize,
}

/// Liveness (no token needed).
#[utoipa::path(get, path = "/healthz", responses((status = 200, body = Health)))]
pub async fn healthz(State(state): State<AppState>) -> axum::Json<Health> {
    axum::Json(Health {
        status: "ok",
        tenants: state.tenants.registered(),
        open_tenants: state.tenants.all().len(),
    })
}

/// The OpenAPI document of this API.
#[derive(OpenApi)]
#[openapi(
    info(title = "pfm", description = "Personal fact memory for LLM agents: never stale, never the wrong person, never late."),
    paths(super::observe::observe, super::retrieve::retrieve_block, super::contexts::register_context, super::contexts::unregister_context, super::facts::fact, super::facts::forget, super::tenants::list_tenants, super::tenants::create_tenant, super::tenants::delete_tenant, super::tenants::create_token, super::tenants::list_tokens, super::tenants::revoke_token, healthz),
    components(schemas(ObservationIn, ObserveBatch, KeyArg, TimeArg, ObserveOut, ReceiptOut, RetrieveIn, Mode, AsOfArg, RetrieveOut, FactLine, TimingsOut, ContextOut, FactOut, StatusAt, Conditions, ForgetIn, ForgetOut, TenantIn, TenantOut, TenantList, TenantDeleted, TokenCreated, TokenOut, TokenList, Health, ErrorBody)),
    modifiers(&BearerAuth)
)]
pub struct ApiDoc;

struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// `GET /v1/openapi.json`.
pub async fn openapi() -> impl IntoResponse {
    axum::Json(ApiDoc::openapi())
}
