//! Wall-clock time as the store sees it: milliseconds since the Unix epoch, UTC.
//!
//! Parsing goes through `jiff`; formatting the block's `YYYY-MM-DD` label is a
//! few integer operations (Howard Hinnant's `civil_from_days`) because it runs
//! once per block line on the read path.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// A point in wall-clock time, in milliseconds since 1970-01-01T00:00:00Z.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct WallTime(i64);

/// Milliseconds in one day.
pub const DAY_MS: i64 = 86_400_000;

impl WallTime {
    /// The Unix epoch: the earliest time an observation or request may
    /// carry.
    pub const EPOCH: WallTime = WallTime(0);

    /// 9999-12-31T23:59:59.999Z: the latest time an observation or request
    /// may carry (four-digit years; recency and dates stay finite).
    pub const LATEST: WallTime = WallTime(253_402_300_799_999);

    /// Whether the time lies from [`WallTime::EPOCH`] to [`WallTime::LATEST`].
    pub const fn in_range(self) -> bool {
        self.0 >= Self::EPOCH.0 && self.0 <= Self::LATEST.0
    }

    /// `self`, or [`Error::TimeOutOfRange`] naming `field`.
    pub fn checked(self, field: &'static str) -> Result<Self, Error> {
        if self.in_range() {
            Ok(self)
        } else {
            Err(Error::TimeOutOfRange {
                field,
                millis: self.0,
            })
        }
    }

    /// From milliseconds since the epoch.
    pub const fn from_millis(ms: i64) -> Self {
        WallTime(ms)
    }

    /// The system clock now (the epoch if the clock is set before it).
    pub fn now() -> Self {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        WallTime(ms)
    }

    /// From whole seconds since the epoch (the synthetic corpus uses these).
    pub const fn from_secs(secs: i64) -> Self {
        WallTime(secs.saturating_mul(1000))
    }

    /// Milliseconds since the epoch.
    pub const fn millis(self) -> i64 {
        self.0
    }

    /// This time plus `ms` milliseconds (saturating).
    pub const fn plus_millis(self, ms: i64) -> Self {
        WallTime(self.0.saturating_add(ms))
    }

    /// Days elapsed from `earlier` to `self` (negative if `earlier` is later).
    pub fn days_since(self, earlier: WallTime) -> f64 {
        (self.0 - earlier.0) as f64 / DAY_MS as f64
    }

    /// Parses a time as users write it (see [`ACCEPTED_FORMS`]): RFC 3339
    /// (`2025-06-11T09:30:00Z`, any offset), RFC 2822 (`Wed, 11 Jun 2025
    /// 09:30:00 +0000`), a civil date or date-time (`2025-06-11`,
    /// `2025-06-11 09:30`), a written date with an optional 12-hour time
    /// (`11 June 2025`, `June 11, 2025 9:30 AM`, LoCoMo's `9:30 am on 11
    /// June, 2025`; month names full or abbreviated, any case), or an integer
    /// number of seconds since the epoch. A time without an offset is UTC;
    /// a date without a time is its midnight.
    pub fn parse(input: &str) -> Result<Self, Error> {
        if input.len() > MAX_TIME_BYTES {
            return Err(Error::InvalidTime {
                input: input.chars().take(32).collect::<String>() + "…",
                reason: format!(
                    "{} bytes, over the {MAX_TIME_BYTES}-byte limit of a written time",
                    input.len()
                ),
            });
        }
        let s = input.trim();
        let invalid = |reason: String| Error::InvalidTime {
            input: input.to_owned(),
            reason,
        };
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
            let secs: i64 = s
                .parse()
                .map_err(|e| invalid(format!("seconds since the epoch: {e}")))?;
            return Ok(WallTime::from_secs(secs));
        }
        if let Ok(ts) = jiff::Timestamp::from_str(s) {
            return Ok(WallTime(ts.as_millisecond()));
        }
        if let Ok(zoned) = jiff::fmt::rfc2822::parse(s) {
            return Ok(WallTime(zoned.timestamp().as_millisecond()));
        }
        let civil = jiff::civil::DateTime::from_str(s)
            .or_else(|_| {
                jiff::civil::Date::from_str(s).map(|d| d.to_datetime(jiff::civil::Time::midnight()))
            })
            .or_else(|_| written(s))
            .map_err(|e| invalid(format!("expected {ACCEPTED_FORMS}: {e}")))?;
        let ts = civil
            .to_zoned_datetime(jiff::tz::TimeZone::UTC)
            .map_err(|e| invalid(e.to_string()))?
            .timestamp();
        Ok(WallTime(ts.as_millisecond()))
    }

    /// The UTC calendar date as `(year, month, day)`.
    pub fn civil_date(self) -> (i64, u32, u32) {
        civil_from_days(self.0.div_euclid(DAY_MS))
    }

    /// Writes the UTC date as `YYYY-MM-DD` into `out`.
    pub fn write_date(self, out: &mut String) {
        use std::fmt::Write;
        let (y, m, d) = self.civil_date();
        // Infallible: writing to a String cannot fail.
        let _ = write!(out, "{y:04}-{m:02}-{d:02}");
    }

    /// Writes the UTC time of day as `THH:MMZ` into `out` (after a date:
    /// `2025-06-11T15:04Z`, a form no stated value takes).
    pub fn write_time_of_day(self, out: &mut String) {
        use std::fmt::Write;
        let minutes = self.0.div_euclid(60_000).rem_euclid(24 * 60);
        // Infallible: writing to a String cannot fail.
        let _ = write!(out, "T{:02}:{:02}Z", minutes / 60, minutes % 60);
    }
}

impl fmt::Display for WallTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match jiff::Timestamp::from_millisecond(self.0) {
            Ok(ts) => write!(f, "{ts}"),
            Err(_) => write!(f, "{}ms", self.0),
        }
    }
}

impl FromStr for WallTime {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        WallTime::parse(s)
    }
}

/// The longest text [`WallTime::parse`] reads: every accepted form fits
/// in far less, and a longer one is refused before any parsing.
pub const MAX_TIME_BYTES: usize = 64;

/// The forms [`WallTime::parse`] accepts, for error messages.
pub const ACCEPTED_FORMS: &str = "RFC 3339 (2025-06-11T09:30:00Z), RFC 2822 (Wed, 11 Jun 2025 09:30:00 +0000), \
     a date (2025-06-11, 11 June 2025, June 11, 2025), a date and time (2025-06-11 09:30, \
     June 11, 2025 9:30 AM, 9:30 am on 11 June, 2025) or epoch seconds; without an offset, UTC";

/// Written dates, each with `%B` (full month names; `%b` is tried too, for
/// abbreviations). jiff matches names and am/pm in any case and takes one-
/// or two-digit days and hours.
const WRITTEN: [&str; 6] = [
    "%I:%M %p on %d %B, %Y",
    "%B %d, %Y %I:%M %p",
    "%d %B %Y %I:%M %p",
    "%d %B %Y",
    "%d %B, %Y",
    "%B %d, %Y",
];

/// A written date (see [`WRITTEN`]), whitespace runs collapsed; the error
/// is the last form's.
fn written(s: &str) -> Result<jiff::civil::DateTime, jiff::Error> {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut last = None;
    for form in WRITTEN {
        for form in [form.to_owned(), form.replace("%B", "%b")] {
            match jiff::civil::DateTime::strptime(&form, &s) {
                Ok(t) => return Ok(t),
                Err(e) => last = Some(e),
            }
        }
    }
    // Infallible: WRITTEN is not empty, so some form was tried.
    Err(last.expect("written forms were tried"))
}

/// Days since 1970-01-01 to a proleptic Gregorian `(year, month, day)`.
/// From Howard Hinnant, "chrono-Compatible Low-Level Date Algorithms".
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_accepted_forms() {
        let t = WallTime::parse("2025-06-11T09:30:00Z").unwrap();
        assert_eq!(t.millis(), 1_749_634_200_000);
        assert_eq!(WallTime::parse("2025-06-11T11:30:00+02:00").unwrap(), t);
        assert_eq!(WallTime::parse("2025-06-11 09:30").unwrap(), t);
        assert_eq!(
            WallTime::parse("2025-06-11").unwrap().millis(),
            1_749_600_000_000
        );
        assert_eq!(
            WallTime::parse("1767225600").unwrap(),
            WallTime::from_secs(1_767_225_600)
        );
    }

    #[test]
    fn parses_dates_as_people_write_them() {
        let t = WallTime::parse("2023-05-08T13:56:00Z").unwrap();
        for written in [
            "1:56 pm on 8 May, 2023",
            "1:56 PM on 8 May, 2023",
            "May 8, 2023 1:56 PM",
            "8 May 2023 1:56 pm",
            "Mon, 8 May 2023 13:56:00 +0000",
            "Mon, 8 May 2023 15:56:00 +0200",
            "  1:56  pm on 8 May,  2023 ",
        ] {
            assert_eq!(WallTime::parse(written).unwrap(), t, "{written}");
        }
        let day = WallTime::parse("2023-09-08").unwrap();
        for written in [
            "8 September 2023",
            "8 Sep 2023",
            "8 september, 2023",
            "September 8, 2023",
            "Sep 8, 2023",
        ] {
            assert_eq!(WallTime::parse(written).unwrap(), day, "{written}");
        }
        assert_eq!(
            WallTime::parse("10:37 am on 27 June, 2023").unwrap(),
            WallTime::parse("2023-06-27T10:37:00Z").unwrap()
        );
        // A written date that names an impossible day is refused.
        assert!(WallTime::parse("31 February 2023").is_err());
        let long = format!("8 May 2023{}", " ".repeat(MAX_TIME_BYTES));
        let err = WallTime::parse(&long).unwrap_err().to_string();
        assert!(err.contains("64-byte limit"), "{err}");
        assert!(WallTime::parse("13:56 pm on 8 May, 2023").is_err());
    }

    #[test]
    fn rejects_what_does_not_parse_with_the_input_in_the_message() {
        let err = WallTime::parse("next tuesday").unwrap_err().to_string();
        assert!(
            err.contains("RFC 2822") && err.contains("9:30 am on 11 June, 2025"),
            "{err}"
        );
        let err = WallTime::parse("next tuesday").unwrap_err();
        assert!(err.to_string().contains("next tuesday"), "{err}");
        assert!(WallTime::parse("2025-13-40").is_err());
        assert!(WallTime::parse("").is_err());
    }

    #[test]
    fn civil_dates_match_jiff() {
        for ms in [
            0,
            1_749_634_200_000,
            -86_400_001,
            951_782_400_000,
            4_102_444_800_000,
        ] {
            let ours = WallTime(ms).civil_date();
            let zoned = jiff::Timestamp::from_millisecond(ms)
                .unwrap()
                .to_zoned_datetime(jiff::tz::TimeZone::UTC);
            let d = zoned.date();
            assert_eq!(
                ours,
                (d.year() as i64, d.month() as u32, d.day() as u32),
                "{ms}"
            );
        }
        let mut s = String::new();
        WallTime::parse("2025-06-11T23:59:59Z")
            .unwrap()
            .write_date(&mut s);
        assert_eq!(s, "2025-06-11");
    }
}
