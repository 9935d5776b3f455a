//! Disclosure modes (P-Mem Section 3.4): what a block line may show beside
//! the current value, read from the version's timeline. The block stays
//! current-value-first; a line's note is appended only if the whole line
//! still fits the budget (else the line goes without it), so the paper's
//! block format is unchanged when a request discloses nothing (the default).
//!
//! ```text
//! - (2025-06-11, to Alex Rivera) The sync is in room 4B. (contested: room 4b vs room 2a)
//! - (2025-06-11) The Halcyon budget cap is $30k. (was $50k until 2025-06-12; 3 observations)
//! ```

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::fact::{Fact, FactId, Status};
use crate::index::Timeline;
use crate::ledger::AsOf;

/// How many disclosure modes there are (the longest `disclose` list).
pub const MODES: usize = 4;

/// Alternatives a contested line names (the rest are counted).
pub const SHOWN_ALTERNATIVES: usize = 3;

/// Which provenance a block line discloses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Vec<String>", into = "Vec<String>")]
pub struct Disclose {
    /// How many observations support the value, when more than one.
    pub support: bool,
    /// A contested value's alternatives.
    pub alternatives: bool,
    /// The value the current one displaced, and until when it held.
    pub history: bool,
    /// The key's pending plans (staged speculations) and when each was
    /// said: those pending now, or at the as-of point of an as-of read.
    pub pending: bool,
}

impl Disclose {
    /// Nothing disclosed (the default).
    pub const NONE: Disclose = Disclose {
        support: false,
        alternatives: false,
        history: false,
        pending: false,
    };

    /// Whether nothing is disclosed.
    pub fn is_none(&self) -> bool {
        *self == Disclose::NONE
    }

    /// The note for one fact, if this mode has anything to say about it:
    /// its provenance now, or as it was at `past` (an as-of read). The
    /// support count is always today's.
    pub fn note(&self, timeline: &Timeline, id: FactId, past: Option<AsOf>) -> Option<String> {
        if self.is_none() {
            return None;
        }
        let fact = timeline.get(id)?;
        let status = |f: &Fact| past.map_or(Some(f.state.status), |at| at.status(&f.state));
        let value = |f: &Fact| f.body.value().unwrap_or(f.body.text()).to_owned();
        let mut parts: Vec<String> = Vec::new();
        if self.alternatives && status(fact) == Some(Status::Contested) {
            let pending: Vec<&Fact> = fact
                .state
                .edges()
                .alternatives
                .iter()
                .filter_map(|a| timeline.get(*a))
                .filter(|a| status(a) == Some(Status::Alternative))
                .collect();
            let mut vs = vec![value(fact)];
            vs.extend(pending.iter().take(SHOWN_ALTERNATIVES).map(|a| value(a)));
            let mut part = format!("contested: {}", vs.join(" vs "));
            if pending.len() > SHOWN_ALTERNATIVES {
                let _ = write!(part, " (+{} more)", pending.len() - SHOWN_ALTERNATIVES);
            }
            parts.push(part);
        }
        if self.history
            && let Some(older) = fact.state.supersedes.get().and_then(|o| timeline.get(o))
            && let Some((_, until)) = older.state.intervals.last().and_then(|i| i.to())
        {
            let mut part = format!("was {} until ", value(older));
            until.write_date(&mut part);
            parts.push(part);
        }
        if self.pending
            && let Some(key) = &fact.body.key
        {
            for p in timeline.pending_plans(key, past).take(SHOWN_ALTERNATIVES) {
                let mut part = format!("planned: {}, ", value(p));
                p.body.stated_at.write_date(&mut part);
                parts.push(part);
            }
        }
        if self.support && fact.state.support > 1 {
            parts.push(format!("{} observations", fact.state.support));
        }
        (!parts.is_empty()).then(|| format!("({})", parts.join("; ")))
    }
}

impl TryFrom<Vec<String>> for Disclose {
    type Error = Error;
    fn try_from(modes: Vec<String>) -> Result<Disclose> {
        if modes.len() > MODES {
            return Err(Error::InvalidConfig(format!(
                "disclose lists {} modes: name each of \"support\", \"alternatives\", \"history\", \"pending\" at most once",
                modes.len()
            )));
        }
        let mut d = Disclose::NONE;
        for m in modes {
            match m.as_str() {
                "support" => d.support = true,
                "alternatives" => d.alternatives = true,
                "history" => d.history = true,
                "pending" => d.pending = true,
                other => {
                    return Err(Error::InvalidConfig(format!(
                        "disclose mode {other:?}: use any of \"support\", \"alternatives\", \"history\", \"pending\""
                    )));
                }
            }
        }
        Ok(d)
    }
}

impl From<Disclose> for Vec<String> {
    fn from(d: Disclose) -> Vec<String> {
        [
            (d.support, "support"),
            (d.alternatives, "alternatives"),
            (d.history, "history"),
            (d.pending, "pending"),
        ]
        .into_iter()
        .filter(|(on, _)| *on)
        .map(|(_, m)| m.to_owned())
        .collect()
    }
}
