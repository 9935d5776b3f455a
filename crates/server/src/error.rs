//! The one error shape every endpoint answers with:
//! `{"error": {"code": "...", "message": "..."}}`, with a 4xx status for bad
//! input and a 5xx only for the server's own failures. Codes are stable (a
//! client may match on them); messages are for people.

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use pfm::error::Error;

/// An error response.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// Stable machine-readable code.
    pub code: &'static str,
    /// What was wrong and what to do about it.
    pub message: String,
}

/// The body of every error response.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// One error.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable code, e.g. `invalid_json`, `unauthorized`, `rate_limited`.
    pub code: String,
    /// Human-readable explanation.
    pub message: String,
}

impl ApiError {
    /// An error with a status, code and message.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
        }
    }

    /// 400 with a code.
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// 404.
    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 503 `deadline_exceeded`: a retrieval could not answer within its
    /// deadline.
    pub fn deadline_exceeded(deadline: std::time::Duration) -> Self {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "deadline_exceeded",
            format!(
                "no block within the deadline of {} ms: retry, or give a longer deadline_ms",
                deadline.as_millis()
            ),
        )
    }

    /// 503: the server is shutting down or a tenant's runtime has stopped.
    pub fn unavailable(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::error!(code = self.code, message = %self.message, "request failed");
        }
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code.to_owned(),
                message: self.message,
            },
        };
        (self.status, axum::Json(body)).into_response()
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        let message = e.to_string();
        let (status, code) = match e {
            Error::UnknownFact(_) => (StatusCode::NOT_FOUND, "unknown_fact"),
            Error::UnknownContext(_) => (StatusCode::NOT_FOUND, "unknown_context"),
            Error::OpNotApplicable { .. } => (StatusCode::CONFLICT, "op_not_applicable"),
            Error::DenseUnavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "dense_unavailable"),
            Error::ShutDown(_) | Error::Cancelled => {
                (StatusCode::SERVICE_UNAVAILABLE, "unavailable")
            }
            Error::TooManyNames { .. }
            | Error::NameTooLong { .. }
            | Error::TextTooLong { .. }
            | Error::FieldTooLong { .. }
            | Error::ContextTooLong { .. }
            | Error::TooManyContexts { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "limit_exceeded"),
            Error::Storage(_)
            | Error::InvalidState(_)
            | Error::Io { .. }
            | Error::CommitFailed(_)
            | Error::WouldBlock(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
            _ => (StatusCode::BAD_REQUEST, "invalid_input"),
        };
        ApiError {
            status,
            code,
            message,
        }
    }
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> Self {
        let status = r.status();
        let code = match &r {
            JsonRejection::JsonSyntaxError(_) => "invalid_json",
            JsonRejection::JsonDataError(_) => "invalid_body",
            JsonRejection::MissingJsonContentType(_) => "unsupported_media_type",
            JsonRejection::BytesRejection(_) if status == StatusCode::PAYLOAD_TOO_LARGE => {
                "payload_too_large"
            }
            _ => "invalid_body",
        };
        ApiError::new(status, code, r.body_text())
    }
}

/// `axum::Json`, with rejections in the stable error shape (and unknown
/// fields rejected by the body types themselves).
#[derive(Debug, Clone, Copy, Default)]
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let axum::Json(value) = axum::Json::<T>::from_request(req, state).await?;
        Ok(ApiJson(value))
    }
}

/// Middleware: any error response a layer or the router produced without a
/// JSON body (405, 408 from the timeout, 413 from the body limit, 404 from
/// an unknown path) is given the stable shape.
pub async fn json_errors(request: Request, next: axum::middleware::Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (code, message) = match status {
        StatusCode::BAD_REQUEST => (
            "invalid_input",
            "the request is malformed: a path parameter or header does not parse",
        ),
        StatusCode::NOT_FOUND => ("not_found", "no such endpoint: see /v1/openapi.json"),
        StatusCode::METHOD_NOT_ALLOWED => (
            "method_not_allowed",
            "this endpoint does not take that method",
        ),
        StatusCode::REQUEST_TIMEOUT => (
            "timeout",
            "the request took longer than the server's request timeout",
        ),
        StatusCode::PAYLOAD_TOO_LARGE => (
            "payload_too_large",
            "the body is over the server's limit (--max-body)",
        ),
        _ => ("error", "the request failed"),
    };
    let mut out = ApiError::new(status, code, message).into_response();
    if let Some(allow) = response.headers().get(header::ALLOW) {
        out.headers_mut().insert(header::ALLOW, allow.clone());
    }
    out.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    out
}
