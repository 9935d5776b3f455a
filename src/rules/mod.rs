//! Serving-time rules over the retrieved candidates (paper Section 5,
//! Appendix D): identity resolution and abstention.
//!
//! Supersession decides which value of a slot is active; it does not decide
//! which person an ambiguous name means or whether the store holds an answer
//! at all. These rules do, per request ([`Rules`] is a field of
//! [`Request`](crate::retrieve::Request), so the server and the snapshot
//! publisher apply them too). They run between the shortlist and block
//! selection:
//!
//! 1. identity ([`Identity`]): keep the argmax entity of Eq. (2), keep only
//!    facts told by the interlocutor, or cut facts far below the top score;
//! 2. abstention ([`Abstain`]): the margin gate looks at the filtered
//!    shortlist, the slot and coverage gates at the selected block; a failed
//!    gate returns an empty block marked `abstained`.
//!
//! - [`slot`]: the slot detector (noun, or trailing cue for shared nouns);
//! - [`identity`]: mentions, alias pooling and the posterior of Eq. (2);
//! - [`gate`]: the slot, margin and coverage gates;
//! - [`about`]: whom each sentence of a labelled turn is about (coverage).

pub mod about;
pub mod gate;
pub mod identity;
pub mod slot;

use crate::disclose::Disclose;
use serde::{Deserialize, Serialize};

pub use identity::Resolution;
pub use slot::requested_slot;

use crate::block::{self, Block};
use crate::error::{Error, Result};
use crate::fact::name_key;
use crate::index::IndexVersion;
use crate::rank::Scored;
use crate::rank::scorer::Query;

/// Which facts about whom a request may see.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Identity {
    /// Every retrieved fact.
    #[default]
    None,
    /// Facts about the argmax entity of each ambiguous mention (Eq. 2) and
    /// facts naming none of its candidates.
    Posterior,
    /// Only facts whose source observation had one of the request's
    /// participants (the hard participant filter).
    ParticipantFilter,
    /// Only facts whose source observation had every one of the request's
    /// participants: identity by provenance, a person being their name in a
    /// conversation with these people. Two speakers called John in
    /// conversations with different company are two people; a fact from the
    /// same company about a third party is kept. No participants: no filter.
    Company,
    /// Only facts scoring at least this fraction of the top score, in (0, 1].
    Cutoff(f32),
}

/// When a request gets an empty block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Abstain {
    /// Never.
    #[default]
    None,
    /// Unless a selected fact states the requested slot for an entity with
    /// posterior at least this threshold (the paper's τ = 0.5).
    Slot(f64),
    /// Unless the top fact scores at least this many times the shortlist
    /// mean and shares a third of the request's content terms (τ ∈ {1.5, 2,
    /// 3, 5} in the paper).
    Margin(f32),
    /// Unless a selected fact supports the request (see
    /// [`gate::coverage_passes`]): what it says of the people the request
    /// names, if it names any, carries at least this idf-weighted share of
    /// the request's other content terms, and no fact says more of it about
    /// someone else by over [`gate::SWAP_MARGIN`]. Needs no schema.
    Coverage(f32),
    /// [`Abstain::Coverage`] at [`gate::DEFAULT_COVERAGE`].
    Auto,
}

/// The serving-time rules of one request. JSON: `{"identity": "posterior",
/// "abstain": {"slot": 0.5}}`, `{"identity": {"cutoff": 0.7}}`; both fields
/// default to `none`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Rules {
    /// The identity rule.
    pub identity: Identity,
    /// The abstention gate.
    pub abstain: Abstain,
}

impl Rules {
    /// No rule: the block is the ranker's.
    pub const NONE: Rules = Rules {
        identity: Identity::None,
        abstain: Abstain::None,
    };

    /// Checks the thresholds.
    pub fn validate(&self) -> Result<()> {
        if let Identity::Cutoff(x) = self.identity
            && !(x > 0.0 && x <= 1.0)
        {
            return Err(Error::InvalidConfig(format!(
                "rules.identity.cutoff must be in (0, 1], got {x}"
            )));
        }
        match self.abstain {
            Abstain::Slot(tau) if !(0.0..=1.0).contains(&tau) => Err(Error::InvalidConfig(
                format!("rules.abstain.slot must be in [0, 1], got {tau}"),
            )),
            Abstain::Margin(tau) if !(tau >= 0.0 && tau.is_finite()) => Err(Error::InvalidConfig(
                format!("rules.abstain.margin must be a finite number >= 0, got {tau}"),
            )),
            Abstain::Coverage(tau) if !(0.0..=1.0).contains(&tau) => Err(Error::InvalidConfig(
                format!("rules.abstain.coverage must be in [0, 1], got {tau}"),
            )),
            _ => Ok(()),
        }
    }

    /// Whether a rule needs the request's entity resolution.
    fn needs_resolution(&self) -> bool {
        self.identity == Identity::Posterior
            || matches!(
                self.abstain,
                Abstain::Slot(_) | Abstain::Coverage(_) | Abstain::Auto
            )
    }
}

/// Applies `rules` to a shortlist (best first) and selects the block under
/// `k` facts and `budget` characters.
pub fn select(
    version: &IndexVersion,
    query: &Query<'_>,
    rules: &Rules,
    mut list: Vec<Scored>,
    k: usize,
    budget: usize,
    disclose: Disclose,
) -> Block {
    let resolution = if rules.needs_resolution() {
        Resolution::of(version, query.context, query.participants, query.at)
    } else {
        Resolution::default()
    };
    match rules.identity {
        Identity::None => {}
        Identity::Posterior => list.retain(|s| resolution.keeps(&s.body)),
        Identity::ParticipantFilter => {
            let p: Vec<String> = query.participants.iter().map(|p| name_key(p)).collect();
            list.retain(|s| s.body.participant_keys().any(|k| p.contains(&k)));
        }
        Identity::Company => {
            let p: Vec<String> = query.participants.iter().map(|p| name_key(p)).collect();
            list.retain(|s| {
                let had: Vec<String> = s.body.participant_keys().collect();
                p.iter().all(|k| had.contains(k))
            });
        }
        Identity::Cutoff(x) => {
            if let Some(top) = list.first().map(|s| s.score) {
                list.retain(|s| s.score >= x * top);
            }
        }
    }
    if let Abstain::Margin(tau) = rules.abstain
        && !gate::margin_passes(query.context, &list, tau)
    {
        return Block::abstained();
    }
    let block = block::select_annotated(&list, k, budget, |s| {
        disclose.note(&version.timeline, s.fact, version.past)
    });
    // Selection takes a prefix of the list (it stops at the first line that
    // does not fit), so the selected facts are its first `lines.len()`.
    let selected = &list[..block.lines.len()];
    let abstain = match rules.abstain {
        Abstain::Auto => Abstain::Coverage(gate::DEFAULT_COVERAGE),
        a => a,
    };
    let passes = match abstain {
        Abstain::Slot(tau) => gate::slot_passes(query.context, selected, &resolution, tau),
        Abstain::Coverage(tau) => {
            gate::coverage_passes(version, query.context, selected, &resolution, tau)
        }
        Abstain::None | Abstain::Margin(_) | Abstain::Auto => true,
    };
    if !passes {
        return Block::abstained();
    }
    block
}
