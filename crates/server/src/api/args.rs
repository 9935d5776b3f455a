//! Request arguments several endpoints share: times, keys, and the
//! typed reading of a JSON body.

use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::error::ApiError;
use pfm::fact::Key;
use pfm::time::WallTime;

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
    pub(super) fn resolve(arg: Option<TimeArg>) -> Result<WallTime, ApiError> {
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
    pub(super) fn key(self) -> Result<Key, ApiError> {
        let key = Key::new(&self.entity, &self.slot)?;
        Ok(match self.qualifier {
            Some(q) => key.with_qualifier(&q)?,
            None => key,
        })
    }
}

pub(super) fn parse<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, ApiError> {
    serde_json::from_value(v).map_err(|e| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_body",
            e.to_string(),
        )
    })
}
