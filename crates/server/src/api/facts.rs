//! `GET /v1/facts/{id}` and `POST /v1/forget`: a fact with its history,
//! and erasure.

use axum::extract::{Path, Query};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;
use utoipa::{IntoParams, ToSchema};

use super::args::KeyArg;
use super::auth::Authed;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::tenant::Tenant;
use crate::writer::WriteOp;
use pfm::error::Error;
use pfm::fact::{Fact, FactId, Status};
use pfm::ledger::Forget;
use pfm::time::WallTime;

/// A fact and its key's version history.
#[derive(Debug, Serialize, ToSchema)]
pub struct FactOut {
    /// The fact: `body` (text, entities, participants, key, value,
    /// stated_at, source) and `state` (status, intervals, last_observed,
    /// support, usage, supersedes, superseded_by).
    #[schema(value_type = Object)]
    pub fact: Fact,
    /// Every version of its key's chain, newest first (the fact alone if
    /// it is keyless), each with its status: `active`, `contested`,
    /// `superseded`, `contradicted`, `revoked`, `pruned`.
    #[schema(value_type = Vec<Object>)]
    pub history: Vec<Fact>,
    /// What hangs off those versions, oldest first: alternatives (status
    /// `alternative` while pending, `edges.alternative_of` naming the value
    /// contested), tombstones (status `tombstone`, `edges.revokes` naming
    /// the value retracted) and the key's plans (status `pending`, or
    /// `confirmed` / `abandoned` once settled).
    #[schema(value_type = Vec<Object>)]
    pub related: Vec<Fact>,
    /// For a pending plan: what settles it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Conditions>,
    /// With `?as_of=SEQ`: each of those facts' status just after commit
    /// SEQ (`null`: it did not exist yet), as it was then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub as_of: Option<Vec<StatusAt>>,
}

/// What settles a pending plan (AgentMemGate's resolution conditions, as
/// the ledger applies them).
#[derive(Debug, Serialize, ToSchema)]
pub struct Conditions {
    /// What confirms the plan (its value becomes current).
    pub confirm: String,
    /// What abandons it.
    pub abandon: String,
}

impl Conditions {
    fn of(plan: &Fact) -> Option<Conditions> {
        let (key, value) = (plan.body.key.as_ref()?, plan.body.value()?);
        (plan.state.status == Status::Pending).then(|| Conditions {
            confirm: format!("a statement that makes {key} = {value:?} current"),
            abandon: format!(
                "an abandonment of the plan (\"decided not to\", \"fell through\", \"staying … after all\"), or a completed change or correction of {key} to another value"
            ),
        })
    }
}

/// A fact's status at a past commit.
#[derive(Debug, Serialize, ToSchema)]
pub struct StatusAt {
    /// The fact.
    pub fact: u64,
    /// Its status then (`active`, `contested`, `superseded`, …), or `null`.
    #[schema(value_type = Option<String>)]
    pub status: Option<Status>,
}

/// `GET /v1/facts/{id}` query parameters.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct FactQuery {
    /// A commit sequence number: also report each status as it was then.
    #[serde(default)]
    pub as_of: Option<u64>,
}

/// A fact with its history.
#[utoipa::path(get, path = "/v1/facts/{id}", params(("id" = u64, Path, description = "fact id"), FactQuery),
    responses((status = 200, body = FactOut), (status = 404, body = ErrorBody), (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn fact(
    Authed(tenant): Authed,
    Path(id): Path<u64>,
    Query(query): Query<FactQuery>,
) -> Result<axum::Json<FactOut>, ApiError> {
    fact_out(&tenant, FactId(id), query.as_of).map(axum::Json)
}

/// A fact with its key's history, its related facts and, with `as_of`,
/// their statuses then: the fact endpoint, and MCP's `history`. Read from
/// the newest published version (its timeline holds every retained fact's
/// state), never through the writer.
pub fn fact_out(tenant: &Tenant, id: FactId, as_of: Option<u64>) -> Result<FactOut, ApiError> {
    let version = tenant.runtime.version();
    let fact = version.timeline.get(id).ok_or(Error::UnknownFact(id))?;
    let history = version.timeline.history(id)?;
    let mut related = version.timeline.related(&history);
    if let Some(key) = &fact.body.key {
        related.extend(
            version
                .timeline
                .plans(key)
                .iter()
                .filter_map(|p| version.timeline.get(*p)),
        );
        related.sort_by_key(|f| f.id());
        // A plan read by itself is its own history.
        related.retain(|f| history.iter().all(|h| h.id() != f.id()));
    }
    let as_of = as_of.map(|seq| {
        std::iter::once(fact)
            .chain(history.iter().copied())
            .chain(related.iter().copied())
            .map(|f| StatusAt {
                fact: f.id().0,
                status: f.state.status_at(seq),
            })
            .collect()
    });
    Ok(FactOut {
        conditions: Conditions::of(fact),
        fact: fact.clone(),
        related: related.into_iter().cloned().collect(),
        history: history.into_iter().cloned().collect(),
        as_of,
    })
}

/// `POST /v1/forget`: exactly one of `fact`, `key`, `entity`.
#[derive(Debug, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ForgetIn {
    /// A fact (and, if keyed, every version of its key).
    #[serde(default)]
    pub fact: Option<u64>,
    /// Every version of a key.
    #[serde(default)]
    pub key: Option<KeyArg>,
    /// Every fact naming an entity.
    #[serde(default)]
    pub entity: Option<String>,
}

/// What was erased.
#[derive(Debug, Serialize, ToSchema)]
pub struct ForgetOut {
    /// The erased facts' ids.
    pub erased: Vec<u64>,
}

/// Erases facts for good (from memory, history and disk).
#[utoipa::path(post, path = "/v1/forget", request_body = ForgetIn,
    responses((status = 200, body = ForgetOut), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody), (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn forget(
    Authed(tenant): Authed,
    ApiJson(body): ApiJson<ForgetIn>,
) -> Result<axum::Json<ForgetOut>, ApiError> {
    forget_what(&tenant, body).await.map(axum::Json)
}

/// Erases what `body` names through `tenant`'s writer and answers once
/// the erasure is durable: the forget endpoint, and MCP's `forget`.
pub async fn forget_what(tenant: &Tenant, body: ForgetIn) -> Result<ForgetOut, ApiError> {
    let what = match (body.fact, body.key, body.entity) {
        (Some(id), None, None) => Forget::Fact(FactId(id)),
        (None, Some(k), None) => Forget::Key(k.key()?),
        (None, None, Some(e)) => Forget::Entity(e),
        _ => {
            return Err(ApiError::bad_request(
                "invalid_input",
                "give exactly one of fact, key, entity",
            ));
        }
    };
    let (tx, rx) = oneshot::channel();
    tenant.write(WriteOp::Forget(what, WallTime::now(), tx))?;
    let erased = rx
        .await
        .map_err(|_| ApiError::unavailable("the writer stopped"))??;
    Ok(ForgetOut {
        erased: erased.into_iter().map(|id| id.0).collect(),
    })
}
