//! The `/v1` endpoints: request and response bodies (with their OpenAPI
//! schemas) and the handlers. Handlers authenticate, check limits, and hand
//! blocking work to the request threads or the tenant's writer; none of
//! them blocks the executor.
//!
//! # Layout
//! - [`auth`]: the authenticated tenant of a request.
//! - [`args`]: arguments several endpoints share (times, keys).
//! - [`observe`](mod@observe), [`retrieve`](mod@retrieve), [`contexts`],
//!   [`facts`]: one file per resource, its bodies and handlers.
//! - [`tenants`]: the tenant lifecycle, to an admin token.
//! - [`service`]: `/healthz` and the OpenAPI document.

pub mod args;
pub mod auth;
pub mod contexts;
pub mod facts;
pub mod observe;
pub mod retrieve;
pub mod service;
pub mod tenants;

pub use args::{KeyArg, TimeArg};
pub use auth::Authed;
pub use contexts::{ContextOut, register_context, unregister_context};
pub use facts::{Conditions, FactOut, ForgetIn, ForgetOut, StatusAt, fact, forget};
pub use observe::{ObservationIn, ObserveBatch, ObserveOut, ReceiptOut, observe};
pub use retrieve::{AsOfArg, FactLine, Mode, RetrieveIn, RetrieveOut, TimingsOut, retrieve_block};
pub use service::{ApiDoc, Health, healthz, openapi};
pub use tenants::{
    TenantDeleted, TenantIn, TenantList, TenantOut, TokenCreated, TokenList, TokenOut,
    create_tenant, create_token, delete_tenant, list_tenants, list_tokens, revoke_token,
};
