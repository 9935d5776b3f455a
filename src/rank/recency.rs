//! How the recency factor decays: the store's default
//! ([`crate::config::ScoreParams::recency`]) or a request's own.
//!
//! The PFM paper fixes the half-life (`T_rec` = 30 days). On the controlled
//! benchmark that barely matters (the "no recency" ablation moves clean
//! retrieval by −0.004, inside its interval: keys, not recency, keep it
//! current), but on real conversations spread over months it buries still
//! valid old facts under recent small talk (LoCoMo: most block lines come
//! from the last fifth of the timeline, where a third of the evidence is).
//! So the half-life can follow the store's own time span, and by default
//! there is no factor at all: measured on both corpora, the controlled
//! benchmark does not move without it (clean retrieval −0.004, inside its
//! interval) and LoCoMo finds more evidence with it off than under any
//! decay (`eval/RESULTS.md`). A request or tenant that wants the latest
//! first asks for `span` or `fixed`.
//!
//! Every mode keeps the factor a non-decreasing function of a document's
//! anchored recency, which the block-max bounds of dynamic pruning rely on:
//! with `T' = T / p`, `2^-(Δ/T') = (2^-(Δ/T))^p`, so a mode only changes the
//! exponent `p` applied to the stored decay.

use serde::{Deserialize, Serialize};

use crate::config::ScoreParams;
use crate::index::Corpus;

/// The recency factor's decay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Recency {
    /// The configured half-life `T_rec` (the paper's).
    Fixed,
    /// A half-life of `max(T_rec, span)`, where `span` is the time between
    /// the oldest and the newest fact the store indexes: a store whose
    /// facts span a year halves a fact's weight over that year, not every
    /// month.
    Span,
    /// No recency factor (the default: keys keep answers current, and on
    /// real conversations any decay buries still valid old facts).
    #[default]
    Off,
}

impl std::str::FromStr for Recency {
    type Err = crate::error::Error;

    fn from_str(s: &str) -> crate::error::Result<Self> {
        [Recency::Fixed, Recency::Span, Recency::Off]
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| {
                crate::error::Error::InvalidConfig(format!("recency {s:?}: use fixed, span or off"))
            })
    }
}

impl Recency {
    /// Its name, as `from_str` (and serde) read it.
    pub fn name(self) -> &'static str {
        match self {
            Recency::Fixed => "fixed",
            Recency::Span => "span",
            Recency::Off => "off",
        }
    }

    /// The exponent on the stored decay (see the module docs), or `None`
    /// when the factor is off.
    pub fn power(self, params: &ScoreParams, corpus: &Corpus) -> Option<f64> {
        match self {
            Recency::Off => None,
            Recency::Fixed => Some(1.0),
            Recency::Span => {
                let t = params.recency_half_life_days;
                let span = corpus.span_half_lives() * t;
                Some(if span > t { t / span } else { 1.0 })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Recency;

    #[test]
    fn a_recency_reads_back_from_its_name_as_serde_writes_it() {
        for r in [Recency::Fixed, Recency::Span, Recency::Off] {
            assert_eq!(r.name().parse::<Recency>().unwrap(), r);
            assert_eq!(serde_json::to_value(r).unwrap(), r.name());
        }
        assert!("sometimes".parse::<Recency>().is_err());
    }
}
