//! The memory tools over the Model Context Protocol (the official Rust SDK,
//! `rmcp`): `remember`, `recall`, `forget` and `history`, for agent hosts
//! that reach memory through MCP. Over stdio (`pfm mcp`, one tenant:
//! [`stdio`]) and over streamable HTTP at `/mcp` on `pfm serve`, where
//! each request's bearer token names the tenant ([`http`]).
//!
//! A tool call is an HTTP/JSON request in another envelope: its arguments
//! deserialize into the same body types, and it runs the same function the
//! endpoint runs ([`observe_items`], [`retrieve`], [`forget_what`],
//! [`fact_out`]), so it takes the same request threads, writer and
//! `Requester`, and no lock of its own. An error is a tool error (the call
//! is answered, `isError: true`) carrying the API's
//! `{"error": {"code", "message"}}` and its HTTP status; the server keeps
//! serving.

pub mod http;
pub mod stdio;

use std::sync::{Arc, LazyLock};

use axum::http::StatusCode;
use rmcp::handler::server::common::schema_for_type;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::AppState;
use crate::api::facts::{fact_out, forget_what};
use crate::api::observe::{observe_items, take_request_id};
use crate::api::retrieve::retrieve;
use crate::api::{ForgetIn, KeyArg, ObservationIn, RetrieveIn};
use crate::error::ApiError;
use crate::tenant::TenantRef;
use pfm::fact::FactId;

/// What the server tells a model about itself when it connects.
const INSTRUCTIONS: &str = "pfm is this user's long-term memory of facts from conversations. \
Call `recall` with the user's latest message before you answer, and put the returned `block` \
in your context: it holds only current values, about the right people. Call `remember` with \
each message that states a fact worth keeping (a new value of the same thing replaces the old \
one). `history` shows how a value changed; `forget` erases for good when the user asks.";

const REMEMBER: &str = "Store what was said, so that later `recall` calls find it. Pass the \
message as said (`text`) and who took part (`participants`). pfm finds the fact's key itself \
when it can (\"The standup with Alex Rivera is moved to 10:45am\" is alex rivera/meeting_time), \
and a later value of the same key supersedes the old one, so recall never shows the stale value. \
When you know exactly which attribute the text sets, pass `key` ({\"entity\", \"slot\"}, e.g. \
{\"entity\": \"user\", \"slot\": \"home_city\"}) and `value` (\"Seattle\"): revisions of that key \
are then exact. `op` says how it relates to the key's current value: accept (default: it becomes \
current), contest (someone disputes it: both are kept, the current one flagged), reject (the \
current value was wrong), revoke (retract the latest value: the one before comes back), resolve \
(settle a contested key to `value`), noop (support for the current value). `kind` overrides the \
speculation gate's reading: speculation (a plan or maybe: staged, never current until a later \
statement confirms it), completed (the change happened), correction, abandonment (a plan given \
up), other. `at` is when it was said (ms since the epoch, or a date such as \"2025-06-02\" or \
\"June 2, 2025 9:30 AM\"); default now. Returns the receipt: `outcome` (created, superseded, \
reobserved, absorbed, duplicate, staged, promoted, contested, rejected, revoked, resolved, ...), \
the `fact` id, the value it displaced (`previous`), the `key` it was filed under, and \
`replayed` (true when a `request_id` was seen before: nothing was written).";

const REQUEST_ID: &str = "An idempotency key (1 to 128 visible ASCII characters, e.g. a \
UUID): if you retry a call that may have gone through, send the same request_id and the \
original receipt comes back with replayed: true, nothing written twice.";

const RECALL: &str = "Get the memory block to put in your prompt before you answer: at most `k` \
facts (default 6) in at most `budget` characters (default 800), current values only, one line \
each, e.g. \"- (2025-06-09, to Alex Rivera) The standup with Alex Rivera is moved to 10:45am.\" \
(when it was said, and to whom). Pass the user's latest message or your question as `context`, \
and the people in the conversation as `participants` (it tells two people of one name apart). \
An empty `block` means nothing relevant is stored. `rules` such as {\"abstain\": \"auto\"} empty \
the block when no fact covers the question (`abstained: true`). `disclose` adds provenance to \
lines: alternatives (a contested value's rivals), history (the value it replaced), support (how \
many observations), pending (plans staged but not current). `facts` gives each line's fact id, \
key and source: pass an id to `history` or `forget`. `mode`: snapshot (default, fastest) or \
fresh (includes writes of the last few milliseconds).";

const FORGET: &str = "Erase for good, from memory, history and disk: one fact (`fact`: an id; \
a keyed fact takes every version of its key with it), every version of a key (`key`: \
{\"entity\", \"slot\"}), or every fact that names an entity (`entity`: a name). Give exactly one. \
Use it when the user asks you to forget something, not to correct a value (for that, \
`remember` the new value, or use op reject or revoke). Returns the erased fact ids.";

const HISTORY: &str = "How a value changed: the versions of a fact's key, newest first, each \
with its status (active, contested, superseded, contradicted, revoked, ...) and when it was \
stated and current, plus what hangs off them (`related`: contested alternatives, retractions, \
the key's plans, pending ones with the `conditions` that settle them). Give `fact` (an id from recall or \
remember) or `key` ({\"entity\", \"slot\"}). `as_of` (a commit number, the receipts' `seq`) adds \
each one's status just after that commit.";

/// `history`'s arguments: exactly one of `fact`, `key`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryIn {
    /// A fact id (from `recall`'s facts or `remember`'s receipt).
    #[serde(default)]
    pub fact: Option<u64>,
    /// A key: the newest fact filed under it, and so every version of it.
    #[serde(default)]
    pub key: Option<KeyArg>,
    /// A commit number (a receipt's `seq`): also report each status as it
    /// was just after that commit.
    #[serde(default)]
    pub as_of: Option<u64>,
}

/// The tools' definitions: names, descriptions written for a model, the
/// input schemas of the body types they take, and hints.
static TOOLS: LazyLock<Vec<Tool>> = LazyLock::new(|| {
    // (name, title, description, input schema, read-only, destructive)
    [
        (
            "remember",
            "Remember a fact",
            REMEMBER,
            remember_schema(),
            false,
            false,
        ),
        (
            "recall",
            "Recall memory for the prompt",
            RECALL,
            schema_for_type::<RetrieveIn>(),
            true,
            false,
        ),
        (
            "forget",
            "Erase facts",
            FORGET,
            schema_for_type::<ForgetIn>(),
            false,
            true,
        ),
        (
            "history",
            "A value's history",
            HISTORY,
            schema_for_type::<HistoryIn>(),
            true,
            false,
        ),
    ]
    .into_iter()
    .map(
        |(name, title, description, schema, read_only, destructive)| {
            Tool::new(name, description, schema)
                .with_title(title)
                .with_annotations(
                    ToolAnnotations::new()
                        .read_only(read_only)
                        .destructive(destructive)
                        .open_world(false),
                )
        },
    )
    .collect()
});

/// `remember`'s input: an observation, and the request id `/v1/observe`
/// takes beside it.
fn remember_schema() -> Arc<JsonObject> {
    let mut schema = JsonObject::clone(&schema_for_type::<ObservationIn>());
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.insert(
            "request_id".into(),
            json!({"type": "string", "description": REQUEST_ID}),
        );
    }
    Arc::new(schema)
}

/// The memory tools of one connection (stdio) or one request (HTTP).
#[derive(Clone)]
pub struct MemoryTools {
    state: AppState,
    /// Over stdio, the one tenant, pinned for the process's life; over
    /// HTTP `None`: each request's [`RequestTenant`] names it.
    tenant: Option<Arc<TenantRef>>,
}

/// The tenant an HTTP request's bearer token opened, pinned for the
/// request ([`http`] puts it in the request's extensions, which rmcp hands
/// to the tool call).
#[derive(Clone)]
pub struct RequestTenant(pub Arc<TenantRef>);

impl MemoryTools {
    /// The tools over `state`, each call acting on `tenant` (stdio) or on
    /// the tenant its HTTP request authenticated (`None`).
    pub fn new(state: AppState, tenant: Option<Arc<TenantRef>>) -> MemoryTools {
        MemoryTools { state, tenant }
    }

    fn tenant_of(&self, context: &RequestContext<RoleServer>) -> Result<Arc<TenantRef>, ApiError> {
        if let Some(t) = &self.tenant {
            return Ok(t.clone());
        }
        context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.extensions.get::<RequestTenant>())
            .map(|t| t.0.clone())
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "no tenant: send `Authorization: Bearer <token>`",
                )
            })
    }

    /// Runs one tool: the same function as its endpoint.
    async fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        tenant: &TenantRef,
    ) -> Result<Value, ApiError> {
        match name {
            "remember" => {
                let mut arguments = arguments;
                let request_id = take_request_id(&mut arguments)?;
                let o: ObservationIn = parse(arguments)?;
                let mut out = observe_items(&self.state, tenant, vec![o], request_id).await?;
                let mut receipt = to_value(out.receipts.pop());
                if let Some(fields) = receipt.as_object_mut() {
                    fields.insert("replayed".into(), Value::Bool(out.replayed));
                }
                Ok(receipt)
            }
            "recall" => {
                let out = retrieve(&self.state, tenant, parse(arguments)?).await?;
                Ok(to_value(out))
            }
            "forget" => Ok(to_value(forget_what(tenant, parse(arguments)?).await?)),
            "history" => {
                let h: HistoryIn = parse(arguments)?;
                let id = match (h.fact, h.key) {
                    (Some(id), None) => FactId(id),
                    (None, Some(key)) => {
                        let key = key.key()?;
                        let t = Arc::clone(tenant);
                        // A scan of the tenant's facts: on a request thread.
                        self.state
                            .pool
                            .run_for(&tenant.in_flight, move |_| {
                                t.runtime.version().timeline.newest_of(&key).ok_or_else(|| {
                                    ApiError::new(
                                        StatusCode::NOT_FOUND,
                                        "unknown_key",
                                        format!("no fact is filed under key {key}"),
                                    )
                                })
                            })
                            .await??
                    }
                    _ => {
                        return Err(ApiError::bad_request(
                            "invalid_input",
                            "give exactly one of fact, key",
                        ));
                    }
                };
                Ok(to_value(fact_out(tenant, id, h.as_of)?))
            }
            _ => Err(ApiError::not_found(format!("no tool named {name:?}"))),
        }
    }
}

/// A tool's arguments as its body type; a wrong type or an unknown field
/// is `invalid_body`, as over HTTP.
fn parse<T: serde::de::DeserializeOwned>(arguments: Map<String, Value>) -> Result<T, ApiError> {
    serde_json::from_value(Value::Object(arguments))
        .map_err(|e| ApiError::bad_request("invalid_body", e.to_string()))
}

fn to_value(out: impl serde::Serialize) -> Value {
    // Infallible: the answer types are plain structs with string-keyed
    // fields (a non-finite float becomes null).
    serde_json::to_value(out).unwrap_or(Value::Null)
}

/// An API error as a tool error: the call is answered, with the HTTP
/// API's body and status.
fn tool_error(e: &ApiError) -> CallToolResult {
    CallToolResult::structured_error(json!({
        "error": {"code": e.code, "message": e.message, "status": e.status.as_u16()}
    }))
}

impl ServerHandler for MemoryTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("pfm", env!("CARGO_PKG_VERSION"))
                    .with_title("pfm: personal fact memory"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(TOOLS.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        TOOLS.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !TOOLS.iter().any(|t| t.name == request.name) {
            return Err(ErrorData::invalid_params(
                format!(
                    "no tool named {:?}: the tools are remember, recall, forget, history",
                    request.name
                ),
                None,
            ));
        }
        let result = match self.tenant_of(&context) {
            Ok(tenant) => self
                .call(
                    &request.name,
                    request.arguments.unwrap_or_default(),
                    &tenant,
                )
                .await
                .map_or_else(|e| tool_error(&e), CallToolResult::structured),
            Err(e) => tool_error(&e),
        };
        Ok(result.into())
    }
}
