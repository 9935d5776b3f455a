//! Request arguments several endpoints share: times, keys, and the
//! typed reading of a JSON body.

use axum::http::StatusCode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::error::ApiError;
use pfm::fact::Key;
use pfm::time::WallTime;

/// A time from 1970-01-01 to 9999-12-31: milliseconds since the Unix
/// epoch, as a number or a string of digits (one rule for both), or a
/// written time [`WallTime::parse`] accepts: RFC 3339, RFC 2822, a date
/// such as `2025-06-02` or `2 June 2025`, or a date and time such as
/// `June 2, 2025 9:30 AM` (UTC unless an offset is given).
#[derive(Clone, Debug, Deserialize, ToSchema, JsonSchema)]
#[serde(untagged)]
pub enum TimeArg {
    /// Milliseconds since the epoch.
    Millis(i64),
    /// Milliseconds as digits, or a written time.
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
#[derive(Clone, Debug, Deserialize, ToSchema, JsonSchema)]
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
    pub(crate) fn key(self) -> Result<Key, ApiError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_times_resolve_and_bad_ones_name_the_forms() {
        let locomo = TimeArg::resolve("at", Some(TimeArg::Text("1:56 pm on 8 May, 2023".into())));
        assert_eq!(
            locomo.unwrap(),
            WallTime::parse("2023-05-08T13:56:00Z").unwrap()
        );
        let err =
            TimeArg::resolve("at", Some(TimeArg::Text("8 Maytember 2023".into()))).unwrap_err();
        assert_eq!(
            (err.status, err.code),
            (axum::http::StatusCode::BAD_REQUEST, "invalid_input")
        );
        assert!(err.message.contains("RFC 2822"), "{}", err.message);
    }
}
