//! `POST /v1/observe`: observations in, receipts out once durable.

use axum::extract::State;
use axum::http::StatusCode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::oneshot;
use utoipa::ToSchema;

use super::args::parse;
use super::args::{KeyArg, TimeArg};
use super::auth::Authed;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::idempotency::{Acked, check_id};
use crate::tenant::Tenant;
use crate::writer::WriteOp;
use crate::{AppState, Limits};
use pfm::fact::{FactId, Kind, Op};
use pfm::limits::check_names;
use pfm::memory::{MatchedBy, Observation};

/// One observation.
#[derive(Clone, Debug, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObservationIn {
    /// The message text, prompt-ready.
    pub text: String,
    /// Participants of the conversation it came from.
    #[serde(default)]
    pub participants: Vec<String>,
    /// When it was said; the server's clock if absent.
    #[serde(default)]
    pub at: Option<TimeArg>,
    /// A key, for structured ingestion (skips the extractor).
    #[serde(default)]
    pub key: Option<KeyArg>,
    /// The key's value. Absent: the first typed value in the text (a time,
    /// room, date or amount), or, when it has none, the whole normalized
    /// text.
    #[serde(default)]
    pub value: Option<String>,
    /// Entities the text is about.
    #[serde(default)]
    pub entities: Vec<String>,
    /// Provenance, e.g. a message id.
    #[serde(default)]
    pub source: Option<String>,
    /// How the observation relates to its key's current value (P-Mem's
    /// typed operations): `accept` (the default: the value becomes
    /// current, the old one superseded), `contest` (the current value
    /// stays, flagged contested; this value is kept as an alternative),
    /// `reject` (with a value: it replaces the current one, which is
    /// marked contradicted; without: the current one is contradicted and
    /// the value before it reinstated), `revoke` (the current value is
    /// retracted and the one before it reinstated; `value`, if given, must
    /// be the value revoked), `resolve` (a contested key is settled to
    /// `value` or to the alternative `target`), `noop` (support for the
    /// current value, nothing else changes). Any operation but `accept`
    /// needs a key: `key`, `target`, or a key the extractor finds in the
    /// text. One that cannot apply is a 409 `op_not_applicable`.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub op: Option<Op>,
    /// The fact the operation names (an alternative to resolve to, the
    /// current value to revoke, the fact a noop supports); gives the key
    /// when `key` is absent.
    #[serde(default)]
    pub target: Option<u64>,
    /// What the statement says about when its value holds, if you know
    /// (it overrides the speculation gate's reading of the text):
    /// `speculation` (a plan or possibility: staged as a pending plan of
    /// its key, never current, until a statement makes the value current —
    /// receipt `promoted` — or it is abandoned), `completed` (the change
    /// happened), `correction` (the current value was wrong), `abandonment`
    /// (a plan given up: the key's plans are retired and no value is
    /// committed), `other`.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub kind: Option<Kind>,
}

impl ObservationIn {
    pub(super) fn observation(self, limits: &Limits) -> Result<Observation, ApiError> {
        // The name lists first: they are what makes an observation costly.
        check_names("participant", &self.participants, limits.max_names)?;
        check_names("entity", &self.entities, limits.max_names)?;
        let mut o = Observation::new(self.text, TimeArg::resolve("at", self.at)?)
            .with_participants(self.participants)
            .with_entities(self.entities);
        if let Some(k) = self.key {
            o = o.with_key(k.key()?, self.value.as_deref());
        } else if self.value.is_some() {
            return Err(ApiError::bad_request(
                "invalid_input",
                "value is given without a key: add the key it belongs to, or leave value out",
            ));
        }
        o.source = self.source;
        o = o.with_op(self.op.unwrap_or_default(), self.target.map(FactId));
        o.kind = self.kind;
        o.validate()?;
        Ok(o)
    }
}

/// `POST /v1/observe`: one observation, or `{"observations": [...]}`
/// committed together (all or none); either may carry a top-level
/// `request_id` (idempotency key).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ObserveBatch {
    /// The observations.
    pub observations: Vec<ObservationIn>,
}

/// What the ledger did with one observation.
#[derive(Debug, Serialize, ToSchema)]
pub struct ReceiptOut {
    /// The commit that applied it.
    pub seq: u64,
    /// `created`, `superseded`, `reobserved`, `absorbed`, `duplicate`,
    /// `history` (event-time ordering placed it behind a newer value), for
    /// a typed operation `contested`, `rejected`, `revoked`, `resolved`,
    /// `supported`, and from the speculation gate `staged` (a plan, not
    /// current), `promoted` (the value is current and confirmed a plan),
    /// `abandoned` (plans retired; the statement kept without a key).
    pub outcome: String,
    /// The fact it created, restated, was absorbed into or duplicated; for
    /// `contested` the new alternative, for `revoked` (and `rejected`
    /// without a value) the tombstone that records the retraction, for
    /// `resolved` the value that now holds, for `supported` the fact
    /// supported.
    pub fact: u64,
    /// For `superseded` the value it displaced, for `rejected` / `revoked`
    /// the value retracted, for `contested` the value contested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<u64>,
    /// For `revoked` (and `rejected` without a value): the earlier value
    /// reinstated as current; absent when the key is left empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reinstated: Option<u64>,
    /// For `resolved`: the versions the resolution contradicted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub contradicted: Vec<u64>,
    /// For `promoted`: the plan the statement confirmed; for `abandoned`:
    /// the plans it retired.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plans: Vec<u64>,
    /// For `history`: the newer version it was placed under.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newer: Option<u64>,
    /// The key it was filed under, `entity/slot[/qualifier]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// How the extractor found the key, when it did (not when the request
    /// gave it): `slot` (the slot table), `exact` (a relation's canonical
    /// noun, or an open phrase's own key), `paraphrase` (another noun or a
    /// verb frame of the relation), `lexical` (an open phrase joined to a
    /// key with the same content words), `embedding` (joined by phrase
    /// embedding: see `cosine`) or `opened` (an open phrase that opened a
    /// key). Absent on a replayed receipt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_by: Option<String>,
    /// For `matched_by: embedding`: the phrase embeddings' cosine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cosine: Option<f32>,
}

impl From<Acked> for ReceiptOut {
    fn from(a: Acked) -> Self {
        ReceiptOut {
            seq: a.seq,
            outcome: a.outcome,
            fact: a.fact,
            previous: a.previous,
            reinstated: a.reinstated,
            contradicted: a.contradicted,
            plans: a.plans,
            newer: a.newer,
            key: a.key,
            matched_by: a.matched_by.map(|m| m.name().to_owned()),
            cosine: a.matched_by.and_then(MatchedBy::cosine),
        }
    }
}

/// The answer to `POST /v1/observe`, sent once the commit is durable.
#[derive(Debug, Serialize, ToSchema)]
pub struct ObserveOut {
    /// One receipt per observation, in order.
    pub receipts: Vec<ReceiptOut>,
    /// Whether these are the receipts of an earlier request with the same
    /// `request_id`: that request was committed, and this one wrote nothing.
    pub replayed: bool,
}

/// Remembers observations; answers once they are durable.
#[utoipa::path(post, path = "/v1/observe", request_body(content = ObservationIn, description = "one observation, or {\"observations\": [...]} (see ObserveBatch); either may carry a top-level \"request_id\": 1 to 128 visible ASCII characters, an idempotency key (a retry with a known id returns the original receipts with replayed: true and writes nothing). Example — an update, its retraction, the old value reinstated: {\"text\": \"The Halcyon budget cap is $30k.\", \"key\": {\"entity\": \"Halcyon\", \"slot\": \"budget_cap\"}, \"value\": \"$30k\"} → created, fact 0; the same with \"$50k\" → superseded, fact 1, previous 0; {\"text\": \"The $50k update was a mistake.\", \"key\": {...}, \"op\": \"revoke\"} → revoked, fact 2 (the tombstone), previous 1, reinstated 0", example = json!({"text": "The $50k update was a mistake.", "key": {"entity": "Halcyon", "slot": "budget_cap"}, "op": "revoke", "at": "2025-06-10"})),
    responses((status = 200, body = ObserveOut), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody), (status = 413, body = ErrorBody), (status = 422, body = ErrorBody), (status = 429, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn observe(
    State(state): State<AppState>,
    Authed(tenant): Authed,
    ApiJson(mut body): ApiJson<Value>,
) -> Result<axum::Json<ObserveOut>, ApiError> {
    let request_id = match body.as_object_mut() {
        Some(fields) => take_request_id(fields)?,
        None => None,
    };
    let items: Vec<ObservationIn> = if body.get("observations").is_some() {
        parse::<ObserveBatch>(body)?.observations
    } else {
        vec![parse::<ObservationIn>(body)?]
    };
    observe_items(&state, &tenant, items, request_id)
        .await
        .map(axum::Json)
}

/// Removes a top-level `request_id` (an idempotency key) from a body's
/// `fields` and checks it.
pub fn take_request_id(fields: &mut Map<String, Value>) -> Result<Option<String>, ApiError> {
    match fields.remove("request_id") {
        None => Ok(None),
        Some(Value::String(id)) => {
            check_id(&id).map_err(|m| ApiError::bad_request("invalid_input", m))?;
            Ok(Some(id))
        }
        Some(_) => Err(ApiError::bad_request(
            "invalid_input",
            "request_id must be a string (e.g. a UUID)",
        )),
    }
}

/// Commits `items` for `tenant` (all or none) and answers once they are
/// durable: the observe endpoint after its body is parsed, and MCP's
/// `remember`. Checks the batch and observation limits first.
pub async fn observe_items(
    state: &AppState,
    tenant: &Tenant,
    items: Vec<ObservationIn>,
    request_id: Option<String>,
) -> Result<ObserveOut, ApiError> {
    if items.is_empty() {
        return Err(ApiError::bad_request(
            "invalid_input",
            "observations is empty",
        ));
    }
    if items.len() > state.limits.max_batch {
        return Err(ApiError::bad_request(
            "batch_too_large",
            format!(
                "{} observations in one request, over the limit of {} (--max-batch): split the batch",
                items.len(),
                state.limits.max_batch
            ),
        ));
    }
    // Infallible: the batch is not empty and at most max_batch long.
    let n = std::num::NonZeroU32::new(u32::try_from(items.len()).unwrap_or(u32::MAX))
        .expect("a non-empty batch");
    match tenant.admit_observations(n) {
        Ok(true) => {}
        Ok(false) => {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                "this tenant is over its observation rate (--observe-rate): retry shortly",
            ));
        }
        Err(capacity) => {
            return Err(ApiError::bad_request(
                "batch_too_large",
                format!(
                    "{n} observations in one request, over this tenant's --observe-rate of {capacity} per second: split the batch"
                ),
            ));
        }
    }
    let observations = items
        .into_iter()
        .enumerate()
        .map(|(i, o)| {
            o.observation(&state.limits).map_err(|mut e| {
                e.message = format!("observation {i}: {}", e.message);
                e
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (tx, rx) = oneshot::channel();
    tenant.write(WriteOp::Observe(observations, request_id, tx))?;
    let observed = rx
        .await
        .map_err(|_| ApiError::unavailable("the writer stopped"))??;
    Ok(ObserveOut {
        receipts: observed
            .receipts
            .into_iter()
            .map(ReceiptOut::from)
            .collect(),
        replayed: observed.replayed,
    })
}
