//! Request arguments several endpoints share: times, keys, and the
//! typed reading of a JSON body.

use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::error::ApiError;
use pfm::fact::Key;
use pfm::time::WallTime;

/// A time from 1970-01-01 to 9999-12-31: milliseconds since the Unix
/// epoch, as a number or a string of digits (one rule for both), or a
/// date or RFC 3339 string such as `2025-06-02` or `2025-06-02T09:30:00Z`.
#[derive(Clone, Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum TimeArg {
    /// Milliseconds since the epoch.
    Millis(i64),
    /// Milliseconds as digits, a date or an RFC 3339 time.
    Text(String),
}

impl TimeArg {
    /// The time `field` names, or the server's clock when absent.
    pub(super) fn resolve(field: &'static str, arg: Option<TimeArg>) -> Result<WallTime, ApiError> {
        let t = match arg {
            None => return Ok(WallTime::now()),
            Some(TimeArg::Millis(ms)) => WallTime::from_millis(ms),
            Some(TimeArg::Text(s)) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
                let ms = s.parse::<i64>().map_err(|_| {
                    ApiError::bad_request("invalid_input", format!("{field} = {s} is too large"))
                })?;
                WallTime::from_millis(ms)
            }
            Some(TimeArg::Text(s)) => WallTime::parse(&s)?,
        };
        Ok(t.checked(field)?)
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
