//! `POST /v1/retrieve`: a memory block, from a snapshot or a fresh
//! retrieval, or an as-of view.

use pfm::disclose::Disclose;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::State;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::args::TimeArg;
use super::auth::Authed;
use crate::error::{ApiError, ApiJson, ErrorBody};
use crate::tenant::{Tenant, TenantRef};
use crate::{AppState, Limits};
use pfm::block::Block;
use pfm::error::Error;
use pfm::ledger::AsOf;
use pfm::limits::check_names;
use pfm::rank::scorer::Cancel;
use pfm::retrieve::{Request, retrieve_as_of, retrieve_cancellable};
use pfm::rules::Rules;
use pfm_serve::{Fallback, Quantity, Served, Source, Timings};

/// Retrieval mode.
#[derive(Clone, Copy, Debug, Default, Deserialize, ToSchema, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The newest published version, or a registered context's snapshot.
    #[default]
    Snapshot,
    /// A worker's retrieval on the newest version within `omega_us`, else
    /// the context's snapshot (without a context: the request retrieved on
    /// the newest version by the request thread itself, late but right).
    Fresh,
}

/// A point in transaction time for `as_of`.
#[derive(Clone, Debug, Deserialize, ToSchema, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum AsOfArg {
    /// Just after this commit.
    Seq(u64),
    /// At this commit-clock time.
    Time(TimeArg),
}

/// `POST /v1/retrieve` (and, without the per-call fields, `POST /v1/contexts`).
#[derive(Clone, Debug, Deserialize, ToSchema, JsonSchema)]
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
    /// "abstain": {"slot": 0.5}}` or `{"abstain": "auto"}` (the schema-free
    /// coverage gate).
    #[serde(default)]
    #[schema(value_type = Object)]
    pub rules: Option<Value>,
    /// Provenance to show beside each value: any of `support` (how many
    /// observations support it), `alternatives` (a contested value's
    /// rivals), `history` (the value it displaced and until when). Appended
    /// to a line only when the line still fits the budget. Default: none.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    #[schemars(with = "Option<Vec<String>>")]
    pub disclose: Option<Disclose>,
    /// The retrieval arm (at most 32 bytes): `pfm` (default),
    /// `bm25_validity[_p]`, or, when the server runs with `--models`,
    /// `dense_validity` and `hybrid_validity` (MiniLM; the query is embedded
    /// by whoever retrieves: the worker in fresh mode, the request thread
    /// for a snapshot read, once at registration for a context). The server embeds fact text only, so the
    /// dense `_p` arms answer 503 dense_unavailable; names without
    /// `_validity` read superseded facts, which this server does not index.
    #[serde(default)]
    pub ranker: Option<String>,
    /// How recency decays: `off` (default: no recency factor; keys keep
    /// answers current), `span` (the half-life stretches to the store's own
    /// time span, so an old fact that is still valid is not buried) or
    /// `fixed` (the paper's 30-day half-life).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub recency: Option<pfm::rank::Recency>,
}

impl RetrieveIn {
    /// The core request, with `tenant_ranker` (the tenant's own default,
    /// if it has one) when the body names no ranker.
    pub(super) fn request(
        &self,
        limits: &Limits,
        tenant_ranker: Option<&pfm::rank::Ranker>,
    ) -> Result<Request, ApiError> {
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
        check_names("participant", &self.participants, limits.max_names)?;
        let mut request = Request::new(context, TimeArg::resolve("at", self.at.clone())?)
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
        if let Some(d) = self.disclose {
            request = request.with_disclose(d);
        }
        match (&self.ranker, tenant_ranker) {
            (Some(r), _) => request = request.with_ranker(pfm::rank::Ranker::named(r)?),
            (None, Some(r)) => request = request.with_ranker(r.clone()),
            (None, None) => {}
        }
        if let Some(r) = self.recency {
            request = request.with_recency(r);
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
    /// The whole call inside the server (after its tenant was open).
    pub total_us: f64,
    /// The time this request spent opening its tenant before the call:
    /// present on a tenant's first request since the server started or
    /// since the tenant was closed under `--memory-budget`.
    pub open_us: Option<f64>,
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

pub(super) fn us(d: Option<Duration>) -> Option<f64> {
    d.map(|d| d.as_secs_f64() * 1e6)
}

pub(super) fn block_out(tenant: &Tenant, block: &Block) -> Vec<FactLine> {
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
                source: body.as_ref().and_then(|b| b.source().map(str::to_owned)),
                participants: body
                    .map(|b| b.participants().iter().map(|p| p.to_string()).collect())
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// How far past its deadline a retrieval may answer: the time to send a
/// request-thread job and wake its handler.
const DEADLINE_SLACK: Duration = Duration::from_millis(20);

/// A retrieval's deadline, as the scorer's cancel flag: it stops between
/// query terms once the deadline has passed.
struct Until(Instant);

impl Cancel for Until {
    fn is_cancelled(&self) -> bool {
        Instant::now() >= self.0
    }
}

/// Retrieves a memory block. Answers within `deadline_ms` (plus a few ms):
/// with the block, or `503 deadline_exceeded`.
#[utoipa::path(post, path = "/v1/retrieve", request_body = RetrieveIn,
    responses((status = 200, body = RetrieveOut), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody), (status = 429, body = ErrorBody), (status = 503, body = ErrorBody)),
    security(("bearer" = [])))]
pub async fn retrieve_block(
    State(state): State<AppState>,
    Authed(tenant): Authed,
    ApiJson(body): ApiJson<RetrieveIn>,
) -> Result<axum::Json<RetrieveOut>, ApiError> {
    retrieve(&state, &tenant, body).await.map(axum::Json)
}

/// Serves one retrieval for `tenant` on a request thread, within its
/// deadline: the retrieve endpoint after its body is parsed, and MCP's
/// `recall`.
pub async fn retrieve(
    state: &AppState,
    tenant: &TenantRef,
    body: RetrieveIn,
) -> Result<RetrieveOut, ApiError> {
    let arrived = Instant::now();
    let deadline = Duration::from_millis(body.deadline_ms.unwrap_or(50));
    if deadline.is_zero() || deadline > Duration::from_secs(10) {
        return Err(ApiError::bad_request(
            "invalid_input",
            "deadline_ms must be from 1 to 10000",
        ));
    }
    let until = arrived + deadline;
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
        None => Some(body.request(&state.limits, tenant.ranker.as_ref())?),
    };
    let as_of = match body.as_of {
        Some(AsOfArg::Seq(s)) => Some(AsOf::Seq(s)),
        Some(AsOfArg::Time(t)) => Some(AsOf::Time(TimeArg::resolve("as_of", Some(t))?)),
        None => None,
    };
    let context_id = body.context_id;
    let opened = tenant.opened();
    let job_tenant = Arc::clone(tenant);
    let job = state.pool.run_for(
        &tenant.in_flight,
        move |local| -> Result<RetrieveOut, ApiError> {
            let tenant = job_tenant;
            let started = Instant::now();
            if started >= until {
                // It waited for a thread past its deadline: no work for it.
                return Err(ApiError::deadline_exceeded(deadline));
            }
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
                    // From the newest published version's timeline, never
                    // through the writer.
                    let version = tenant.runtime.version();
                    let block = retrieve_as_of(&version, &request, as_of)?;
                    (direct(block, version.seq, None), true)
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
                        // Answered on this thread, so encoded here too (a
                        // fresh request's worker encodes its own).
                        let request = match local.of(&tenant)?.0.vectorize(&request)? {
                            Some(encoded) => encoded,
                            None => request,
                        };
                        let version = tenant.runtime.version();
                        let cancel = Until(until);
                        let block = retrieve_cancellable(
                            &version,
                            &request,
                            Some(&cancel),
                            &mut local.scratch,
                        )
                        .map_err(|e| match e {
                            Error::Cancelled => ApiError::deadline_exceeded(deadline),
                            e => e.into(),
                        })?;
                        (direct(block, version.seq, Some(started.elapsed())), false)
                    }
                    Mode::Fresh => {
                        let (requester, _) = local.of(&tenant)?;
                        let request = Arc::new(request);
                        let newest = Fallback::Newest(tenant.runtime.publication());
                        (requester.fresh_request(request, newest, omega)?, false)
                    }
                },
                // Infallible: a request is built whenever context_id is absent.
                (None, None, _) => unreachable!("no context_id means a request"),
            };
            let total = started.elapsed();
            local.of(&tenant)?.1.record(Quantity::Retrieve, total);
            let mut out = retrieve_out(&tenant, served, as_of_view, total);
            out.timings.open_us = us(opened);
            Ok(out)
        },
    );
    // The answer is due by the deadline whatever the thread is doing (an
    // as-of view waits for the writer); the job's own checks stop its work.
    let left = until.saturating_duration_since(Instant::now()) + DEADLINE_SLACK;
    let out = tokio::time::timeout(left, job)
        .await
        .map_err(|_| ApiError::deadline_exceeded(deadline))???;
    Ok(out)
}

/// The response for a served block.
pub(super) fn retrieve_out(
    tenant: &Tenant,
    s: Served,
    as_of_view: bool,
    total: Duration,
) -> RetrieveOut {
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
            open_us: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: &str) -> Result<Request, ApiError> {
        let input: RetrieveIn = serde_json::from_str(body)
            .map_err(|e| ApiError::bad_request("invalid_body", e.to_string()))?;
        input.request(&Limits::default(), None)
    }

    #[test]
    fn a_tenant_ranker_is_the_default_and_a_request_overrides_it() {
        let tenant = pfm::rank::Ranker::named("bm25_validity").unwrap();
        let ranker = |body: &str| {
            let input: RetrieveIn = serde_json::from_str(body).unwrap();
            let request = input.request(&Limits::default(), Some(&tenant)).unwrap();
            request.ranker.name
        };
        assert_eq!(ranker(r#"{"context": "x"}"#), "bm25_validity");
        assert_eq!(ranker(r#"{"context": "x", "ranker": "pfm"}"#), "pfm");
    }

    #[test]
    fn ranker_and_recency_are_per_request() {
        let r = parse(
            r#"{"context": "where does Ana live", "recency": "off", "ranker": "bm25_validity"}"#,
        )
        .unwrap();
        assert_eq!(r.recency, Some(pfm::rank::Recency::Off));
        assert_eq!(r.ranker.name, "bm25_validity");
        let r = parse(r#"{"context": "where does Ana live"}"#).unwrap();
        assert_eq!((r.recency, r.ranker.name.as_str()), (None, "pfm"));
        assert!(parse(r#"{"context": "x", "recency": "soon"}"#).is_err());
    }
}
