//! The `/v1` endpoints: request and response bodies (with their OpenAPI
//! schemas) and the handlers. Handlers authenticate, check limits, and hand
//! blocking work to the request threads or the tenant's writer; none of
//! them blocks the executor.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::oneshot;
use utoipa::{OpenApi, ToSchema};

use super::error::{ApiError, ApiJson, ErrorBody};
use super::tenant::Tenant;
use super::writer::WriteOp;
use super::{AppState, Limits};
use pfm::block::Block;
use pfm::error::Error;
use pfm::fact::{Fact, FactId, Key};
use pfm::ledger::{AsOf, Forget};
use pfm::memory::{Observation, Receipt};
use pfm::retrieve::{Request, retrieve};
use pfm::rules::Rules;
use pfm::time::WallTime;
use pfm_serve::{Quantity, Served, Source, Timings};

/// A time: milliseconds since the Unix epoch, or a string such as
/// `2025-06-02` or `2025-06-02T09:30:00Z`.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum TimeArg {
    /// Milliseconds since the epoch.
    Millis(i64),
    /// A date or RFC 3339 time.
    Text(String),
}

impl TimeArg {
    fn resolve(arg: Option<TimeArg>) -> Result<WallTime, ApiError> {
        match arg {
            None => Ok(WallTime::now()),
            Some(TimeArg::Millis(ms)) => Ok(WallTime::from_millis(ms)),
            Some(TimeArg::Text(s)) => Ok(WallTime::parse(&s)?),
        }
    }
}

/// A slot key for structured ingestion or erasure.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyArg {
    /// Whose slot it is, e.g. `Alex Rivera`.
    pub entity: String,
    /// The slot, e.g. `meeting_time`.
    pub slot: String,
    /// An optional qualifier, e.g. `standup`.
    #[serde(default)]
    pub qualifier: Option<String>,
}

impl KeyArg {
    fn key(self) -> Result<Key, ApiError> {
        let key = Key::new(&self.entity, &self.slot)?;
        Ok(match self.qualifier {
            Some(q) => key.with_qualifier(&q)?,
            None => key,
        })
    }
}

/// One observation.
#[derive(Clone, Debug, Deserialize, ToSchema)]
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
    /// The key's value (defaults to the first typed value in the text).
    #[serde(default)]
    pub value: Option<String>,
    /// Entities the text is about.
    #[serde(default)]
    pub entities: Vec<String>,
    /// Provenance, e.g. a message id.
    #[serde(default)]
    pub source: Option<String>,
}

impl ObservationIn {
    fn observation(self) -> Result<Observation, ApiError> {
        let mut o = Observation::new(self.text, TimeArg::resolve(self.at)?)
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
        o.validate()?;
        Ok(o)
    }
}

/// `POST /v1/observe`: one observation, or `{"observations": [...]}`
/// committed together (all or none).
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
    /// `created`, `superseded`, `reobserved`, `absorbed`, `duplicate` or
    /// `history` (event-time ordering placed it behind a newer value).
    pub outcome: &'static str,
    /// The fact it created, restated, was absorbed into or duplicated.
    pub fact: u64,
    /// For `superseded`: the value it displaced, now history.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<u64>,
    /// For `history`: the newer version it was placed under.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newer: Option<u64>,
    /// The key it was filed under, `entity/slot[/qualifier]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

impl From<Receipt> for ReceiptOut {
    fn from(r: Receipt) -> Self {
        ReceiptOut {
            seq: r.seq,
            outcome: r.outcome.name(),
            fact: r.outcome.fact().0,
            previous: r.outcome.previous().map(|f| f.0),
            newer: r.outcome.newer().map(|f| f.0),
            key: r.key.map(|k| k.to_string()),
        }
    }
}

/// The answer to `POST /v1/observe`, sent once the commit is durable.
#[derive(Debug, Serialize, ToSchema)]
pub struct ObserveOut {
    /// One receipt per observation, in order.
    pub receipts: Vec<ReceiptOut>,
}

/// Retrieval mode.
#[derive(Clone, Copy, Debug, Default, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The newest published version, or a registered context's snapshot.
    #[default]
    Snapshot,
    /// A worker's retrieval on the newest version within `omega_us`, else
    /// the context's snapshot (or an empty block without a context).
    Fresh,
}

/// A point in transaction time for `as_of`.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum AsOfArg {
    /// Just after this commit.
    Seq(u64),
    /// At this commit-clock time.
    Time(TimeArg),
}

/// `POST /v1/retrieve` (and, without the per-call fields, `POST /v1/contexts`).
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrieveIn {
    /// The unfinished message (required unless `context_id` is given).
    #[serde(default)]
    pub context: Option<String>,
    /// A registered context to read (its request replaces the fields above).
    #[serde(default)]
    pub context_id: Option<u64>,
    /// Participants of the conversation.
    #[serde(default)]
    pub participants: Vec<String>,
    /// When the request is made; the server's clock if absent.
    #[serde(default)]
    pub at: Option<TimeArg>,
    /// At most this many facts (default 6).
    #[serde(default)]
    pub k: Option<usize>,
    /// At most this many characters in the block (default 800).
    #[serde(default)]
    pub budget: Option<usize>,
    /// The whole call's time budget in ms (default 50); bounds `omega_us`.
    #[serde(default)]
    pub deadline_ms: Option<u64>,
    /// `snapshot` (default) or `fresh`.
    #[serde(default)]
    pub mode: Option<Mode>,
    /// Fresh mode's waiting budget in µs (default 5,000, at most the deadline).
    #[serde(default)]
    pub omega_us: Option<u64>,
    /// Read the store as it was at a commit or time (builds that view).
    #[serde(default)]
    pub as_of: Option<AsOfArg>,
    /// Identity and abstention rules, e.g. `{"identity": "posterior",
    /// "abstain": {"slot": 0.5}}`.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub rules: Option<Value>,
}

impl RetrieveIn {
    fn request(&self, limits: &Limits) -> Result<Request, ApiError> {
        let context = self.context.clone().ok_or_else(|| {
            ApiError::bad_request("invalid_input", "context is required (or give context_id)")
        })?;
        if context.len() > limits.max_context {
            return Err(ApiError::bad_request(
                "invalid_input",
                format!(
                    "context is {} bytes, over the {}-byte limit: send the last message or two",
                    context.len(),
                    limits.max_context
                ),
            ));
        }
        let mut request = Request::new(context, TimeArg::resolve(self.at.clone())?)
            .with_participants(self.participants.clone());
        if let Some(k) = self.k {
            if k > limits.max_k {
                return Err(ApiError::bad_request(
                    "invalid_input",
                    format!("k = {k} is over the limit of {}", limits.max_k),
                ));
            }
            request = request.with_k(k);
        }
        if let Some(b) = self.budget {
            request = request.with_budget(b.min(limits.max_budget));
        }
        if let Some(rules) = &self.rules {
            let rules: Rules = serde_json::from_value(rules.clone())
                .map_err(|e| ApiError::bad_request("invalid_body", format!("rules: {e}")))?;
            request = request.with_rules(rules);
        }
        request.validate()?;
        Ok(request)
    }
}

/// One fact line of a block, with its provenance.
#[derive(Debug, Serialize, ToSchema)]
pub struct FactLine {
    /// The fact (see `GET /v1/facts/{id}` for its history).
    pub id: u64,
    /// Its score.
    pub score: f32,
    /// The line as it appears in the block.
    pub line: String,
    /// Its key, `entity/slot[/qualifier]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// When its source observation was made (ms since the epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stated_at: Option<i64>,
    /// Provenance given at observation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Participants of its source conversation.
    pub participants: Vec<String>,
}

/// What the request waited for, in µs.
#[derive(Debug, Serialize, ToSchema)]
pub struct TimingsOut {
    /// The snapshot read `r`.
    pub read_us: Option<f64>,
    /// The handoff to a worker `h` (fresh mode).
    pub handoff_us: Option<f64>,
    /// Fresh mode: the wait for the worker.
    pub wait_us: Option<f64>,
    /// `σ`: the wake-up delay of the request thread (fresh mode).
    pub sigma_us: Option<f64>,
    /// The whole call inside the server.
    pub total_us: f64,
}

/// The answer to `POST /v1/retrieve`.
#[derive(Debug, Serialize, ToSchema)]
pub struct RetrieveOut {
    /// The memory block, prompt-ready (empty when nothing qualifies).
    pub block: String,
    /// Whether the abstention gate emptied it.
    pub abstained: bool,
    /// Its facts, in block order.
    pub facts: Vec<FactLine>,
    /// `snapshot`, `fresh`, `fallback_timed_out`, `fallback_no_free_worker`
    /// or `as_of`.
    pub source: String,
    /// Whether fresh mode fell back.
    pub fallback: bool,
    /// The commit of the version it was read from.
    pub store_seq: u64,
    /// How old the snapshot was (µs), when it came from one.
    pub snapshot_age_us: Option<f64>,
    /// Timings.
    pub timings: TimingsOut,
}

fn us(d: Option<Duration>) -> Option<f64> {
    d.map(|d| d.as_secs_f64() * 1e6)
}

fn block_out(tenant: &Tenant, block: &Block) -> Vec<FactLine> {
    let version = tenant.runtime.version();
    block
        .lines
        .iter()
        .map(|l| {
            let body = version
                .active
                .find(l.fact)
                .map(|(v, d)| version.active.views()[v].segment.body(d).clone());
            FactLine {
                id: l.fact.0,
                score: l.score,
                line: l.line.clone(),
                key: body
                    .as_ref()
                    .and_then(|b| b.key.as_ref().map(|k| k.to_string())),
                stated_at: body.as_ref().map(|b| b.stated_at.millis()),
                source: body
                    .as_ref()
                    .and_then(|b| b.source.as_deref().map(str::to_owned)),
                participants: body
                    .map(|b| b.participants.iter().map(|p| p.to_string()).collect())
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// The authenticated tenant of a request (its bearer token), after the
/// tenant's rate limit admitted the request.
pub struct Authed(pub Arc<Tenant>);

impl FromRequestParts<AppState> for Authed {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let unauthorized = |m: &str| ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", m);
        let token = parts
            .headers
            .get(header::AUTHORIZATION)
            .ok_or_else(|| unauthorized("missing Authorization header: send `Authorization: Bearer <token>` (create one with `pfm token create --tenant NAME`)"))?
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| unauthorized("the Authorization header must be `Bearer <token>`"))?
            .to_owned();
        let tenant = match state.tenants.lookup(&token) {
            Some(t) => t,
            None => {
                // Maybe created since start: reread the token file (on a
                // request thread: it may open a tenant, which blocks).
                let tenants = state.tenants.clone();
                state.pool.run(move |_| tenants.reload()).await??;
                state
                    .tenants
                    .lookup(&token)
                    .ok_or_else(|| unauthorized("unknown token"))?
            }
        };
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

/// Remembers observations; answers once they are durable.
#[utoipa::path(post, path = "/v1/observe", request_body(content = ObservationIn, description = "one observation, or {\"observations\": [...]} (see ObserveBatch)"),
    responses((status = 200, body = ObserveOut), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 413, body = ErrorBody), (status = 422, body = ErrorBody), (status = 429, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn observe(
    State(state): State<AppState>,
    Authed(tenant): Authed,
    ApiJson(body): ApiJson<Value>,
) -> Result<axum::Json<ObserveOut>, ApiError> {
    let items: Vec<ObservationIn> = if body.get("observations").is_some() {
        parse::<ObserveBatch>(body)?.observations
    } else {
        vec![parse::<ObservationIn>(body)?]
    };
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
    let observations = items
        .into_iter()
        .enumerate()
        .map(|(i, o)| {
            o.observation().map_err(|mut e| {
                e.message = format!("observation {i}: {}", e.message);
                e
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (tx, rx) = oneshot::channel();
    tenant.write(WriteOp::Observe(observations, tx))?;
    let receipts = rx
        .await
        .map_err(|_| ApiError::unavailable("the writer stopped"))??;
    Ok(axum::Json(ObserveOut {
        receipts: receipts.into_iter().map(ReceiptOut::from).collect(),
    }))
}

fn parse<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, ApiError> {
    serde_json::from_value(v).map_err(|e| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
            e.to_string(),
        )
    })
}

/// Retrieves a memory block.
#[utoipa::path(post, path = "/v1/retrieve", request_body = RetrieveIn,
    responses((status = 200, body = RetrieveOut), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn retrieve_block(
    State(state): State<AppState>,
    Authed(tenant): Authed,
    ApiJson(body): ApiJson<RetrieveIn>,
) -> Result<axum::Json<RetrieveOut>, ApiError> {
    let deadline = Duration::from_millis(body.deadline_ms.unwrap_or(50));
    if deadline.is_zero() || deadline > Duration::from_secs(10) {
        return Err(ApiError::bad_request(
            "invalid_input",
            "deadline_ms must be from 1 to 10000",
        ));
    }
    let omega = match body.omega_us {
        Some(o) => Duration::from_micros(o),
        None => Duration::from_millis(5).min(deadline),
    };
    if omega > deadline {
        return Err(ApiError::bad_request(
            "invalid_input",
            format!(
                "omega_us = {} is over the deadline of {} ms",
                omega.as_micros(),
                deadline.as_millis()
            ),
        ));
    }
    let mode = body.mode.unwrap_or_default();
    let request = match body.context_id {
        Some(_) if body.context.is_some() || body.as_of.is_some() => {
            return Err(ApiError::bad_request(
                "invalid_input",
                "context_id reads a registered context: leave out context and as_of",
            ));
        }
        Some(_) => None,
        None => Some(body.request(&state.limits)?),
    };
    let as_of = match body.as_of {
        Some(AsOfArg::Seq(s)) => Some(AsOf::Seq(s)),
        Some(AsOfArg::Time(t)) => Some(AsOf::Time(TimeArg::resolve(Some(t))?)),
        None => None,
    };
    let context_id = body.context_id;
    let out = state
        .pool
        .run(move |local| -> Result<RetrieveOut, ApiError> {
            let started = Instant::now();
            // A direct read of the newest version, or of the as-of view,
            // is answered as a snapshot read (`as_of` names the latter).
            let direct = |block, store_seq, read| Served {
                block: Arc::new(block),
                source: Source::Snapshot,
                store_seq,
                snapshot_age: None,
                timings: Timings {
                    read,
                    ..Timings::default()
                },
            };
            let (served, as_of_view) = match (context_id, request, as_of) {
                (_, Some(request), Some(as_of)) => {
                    let block = tenant
                        .runtime
                        .exclusive(move |m| m.retrieve_as_of(&request, as_of))??;
                    (direct(block, tenant.runtime.version().seq, None), true)
                }
                (Some(id), _, _) => {
                    let ctx = tenant.runtime.context(id)?;
                    let (requester, _) = local.of(&tenant)?;
                    let served = match mode {
                        Mode::Snapshot => requester.snapshot(&ctx),
                        Mode::Fresh => requester.fresh(&ctx, omega)?,
                    };
                    (served, false)
                }
                (None, Some(request), None) => match mode {
                    Mode::Snapshot => {
                        let version = tenant.runtime.version();
                        let block = retrieve(&version, &request)?;
                        (direct(block, version.seq, Some(started.elapsed())), false)
                    }
                    Mode::Fresh => {
                        let (requester, _) = local.of(&tenant)?;
                        let request = Arc::new(request);
                        (requester.fresh_request(request, None, omega)?, false)
                    }
                },
                // Infallible: a request is built whenever context_id is absent.
                (None, None, _) => unreachable!("no context_id means a request"),
            };
            let total = started.elapsed();
            local.of(&tenant)?.1.record(Quantity::Retrieve, total);
            Ok(retrieve_out(&tenant, served, as_of_view, total))
        })
        .await??;
    Ok(axum::Json(out))
}

/// The response for a served block.
fn retrieve_out(tenant: &Tenant, s: Served, as_of_view: bool, total: Duration) -> RetrieveOut {
    let (name, fallback) = match s.source {
        _ if as_of_view => ("as_of", false),
        Source::Snapshot => ("snapshot", false),
        Source::Fresh => ("fresh", false),
        Source::FallbackTimedOut => ("fallback_timed_out", true),
        Source::FallbackNoFreeWorker => ("fallback_no_free_worker", true),
    };
    RetrieveOut {
        block: s.block.text.clone(),
        abstained: s.block.abstained,
        facts: block_out(tenant, &s.block),
        source: name.to_owned(),
        fallback,
        store_seq: s.store_seq,
        snapshot_age_us: us(s.snapshot_age),
        timings: TimingsOut {
            read_us: us(s.timings.read),
            handoff_us: us(s.timings.handoff),
            wait_us: us(s.timings.fresh),
            sigma_us: us(s.timings.sigma),
            total_us: total.as_secs_f64() * 1e6,
        },
    }
}

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
            "a context takes context, participants, at, k, budget and rules; mode, omega_us, deadline_ms go with each retrieve",
        ));
    }
    let follow_clock = body.at.is_none();
    let request = body.request(&state.limits)?;
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

/// A fact and its key's version history.
#[derive(Debug, Serialize, ToSchema)]
pub struct FactOut {
    /// The fact: `body` (text, entities, participants, key, value,
    /// stated_at, source) and `state` (status, intervals, last_observed,
    /// support, usage, supersedes, superseded_by).
    #[schema(value_type = Object)]
    pub fact: Fact,
    /// Every retained version of its key, newest first (the fact alone if
    /// it is keyless).
    #[schema(value_type = Vec<Object>)]
    pub history: Vec<Fact>,
}

/// A fact with its history.
#[utoipa::path(get, path = "/v1/facts/{id}", params(("id" = u64, Path, description = "fact id")),
    responses((status = 200, body = FactOut), (status = 404, body = ErrorBody), (status = 401, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn fact(
    State(state): State<AppState>,
    Authed(tenant): Authed,
    Path(id): Path<u64>,
) -> Result<axum::Json<FactOut>, ApiError> {
    let out = state
        .pool
        .run(move |_| {
            tenant
                .runtime
                .exclusive(move |m| -> Result<FactOut, Error> {
                    let id = FactId(id);
                    Ok(FactOut {
                        fact: m.fact(id)?.clone(),
                        history: m.history(id)?.into_iter().cloned().collect(),
                    })
                })
        })
        .await???;
    Ok(axum::Json(out))
}

/// `POST /v1/forget`: exactly one of `fact`, `key`, `entity`.
#[derive(Debug, Deserialize, ToSchema)]
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
    Ok(axum::Json(ForgetOut {
        erased: erased.into_iter().map(|id| id.0).collect(),
    }))
}

/// Liveness.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// Always `ok` while the server answers.
    pub status: &'static str,
    /// Tenants served.
    pub tenants: usize,
}

/// Liveness (no token needed).
#[utoipa::path(get, path = "/healthz", responses((status = 200, body = Health)))]
pub async fn healthz(State(state): State<AppState>) -> axum::Json<Health> {
    axum::Json(Health {
        status: "ok",
        tenants: state.tenants.all().len(),
    })
}

/// The OpenAPI document of this API.
#[derive(OpenApi)]
#[openapi(
    info(title = "pfm", description = "Personal fact memory for LLM agents: never stale, never the wrong person, never late."),
    paths(observe, retrieve_block, register_context, unregister_context, fact, forget, healthz),
    components(schemas(ObservationIn, ObserveBatch, KeyArg, TimeArg, ObserveOut, ReceiptOut, RetrieveIn, Mode, AsOfArg, RetrieveOut, FactLine, TimingsOut, ContextOut, FactOut, ForgetIn, ForgetOut, Health, ErrorBody)),
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
