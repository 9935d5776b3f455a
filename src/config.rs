//! Every frozen parameter of the PFM paper (Appendix A, Table 5) in one place,
//! plus the store's structural choices (ordering, key granularity, indexes).
//!
//! Defaults are the paper's values; ablations change one entry at a time.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Scoring parameters (Table 5, "Score" and "Query" rows).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScoreParams {
    /// BM25 saturation `k1` (shared by all fields).
    pub k1: f32,
    /// BM25 length normalization `b` (shared by all fields).
    pub b: f32,
    /// BM25F field weights `α` (text, entities, participants) of the PFM
    /// ranker; segments precompute document lengths under them.
    pub field_weights: [f32; 3],
    /// Query positional decay `λ`: a context term `d` content tokens before
    /// the end of the request weighs `λ^d` (the end of an unfinished message
    /// is what the continuation is about).
    pub positional_decay: f32,
    /// Participant weight `β`, added to the query weight of each token of the
    /// request's participants.
    pub participant_weight: f32,
    /// Term cap `m`: at most this many distinct context terms, the most
    /// heavily weighted (i.e. latest) kept.
    pub term_cap: usize,
    /// Recency floor `ε`: the recency factor never drops below it.
    pub recency_floor: f32,
    /// Recency half-life `T_rec` in days.
    pub recency_half_life_days: f64,
    /// How the recency factor decays unless a request says otherwise
    /// (see [`crate::rank::Recency`]; the paper's is `fixed`).
    #[serde(default)]
    pub recency: crate::rank::Recency,
    /// Usage weight `η`.
    pub usage_weight: f32,
    /// Usage half-life in days.
    pub usage_half_life_days: f64,
    /// Graph (association) weight `γ`.
    pub graph_weight: f32,
    /// Activation damping `ρ` from a seed to a neighbour.
    pub damping: f32,
    /// Non-seed nodes activated per request.
    pub non_seed_nodes: usize,
    /// Whether the request's participants seed the activation.
    pub participant_seeds: bool,
    /// Whether words are indexed and queried by their English stem
    /// ([`crate::text::index_form`]): `researching` finds `research`.
    /// Off gives plain lowercase matching (the baseline of the LoCoMo
    /// study); a store built with one setting is read with the same one,
    /// as the index is rebuilt from the ledger on open.
    #[serde(default = "stem_by_default")]
    pub stem: bool,
    /// Conversation context weight `ν`: a shortlisted fact gains `ν` times
    /// the best score among the facts said just before and after it in the
    /// same conversation ([`crate::rank::context`]); 0 turns it off.
    #[serde(default = "context_weight_default")]
    pub context_weight: f32,
    /// The longest pause, in minutes, between two facts of one conversation
    /// (for [`ScoreParams::context_weight`]).
    #[serde(default = "context_gap_default")]
    pub context_gap_minutes: f64,
}

fn stem_by_default() -> bool {
    true
}

fn context_weight_default() -> f32 {
    0.4
}

fn context_gap_default() -> f64 {
    10.0
}

impl ScoreParams {
    /// [`ScoreParams::context_gap_minutes`] in milliseconds.
    pub fn context_gap_ms(&self) -> i64 {
        (self.context_gap_minutes * 60_000.0) as i64
    }

    /// `token`'s form in the index under these parameters.
    pub fn index_form<'a>(&self, token: &'a str) -> std::borrow::Cow<'a, str> {
        crate::text::index_form(token, self.stem)
    }
}

impl Default for ScoreParams {
    fn default() -> Self {
        ScoreParams {
            k1: 1.2,
            b: 0.75,
            field_weights: [1.0, 2.5, 2.0],
            positional_decay: 0.95,
            participant_weight: 1.5,
            term_cap: 12,
            recency_floor: 0.15,
            recency_half_life_days: 30.0,
            recency: crate::rank::Recency::default(),
            usage_weight: 0.35,
            usage_half_life_days: 14.0,
            graph_weight: 0.8,
            damping: 0.5,
            non_seed_nodes: 12,
            participant_seeds: true,
            stem: true,
            context_weight: context_weight_default(),
            context_gap_minutes: context_gap_default(),
        }
    }
}

/// Memory-graph maintenance (Table 5, "Graph" and "Pruning" rows).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphParams {
    /// Edge half-life `T_g` in days.
    pub edge_half_life_days: f64,
    /// Neighbours stored (published) per node.
    pub neighbours_per_node: usize,
    /// Edges whose decayed weight falls below this are dropped by pruning.
    pub edge_threshold: f64,
}

impl Default for GraphParams {
    fn default() -> Self {
        GraphParams {
            edge_half_life_days: 30.0,
            neighbours_per_node: 64,
            edge_threshold: 0.05,
        }
    }
}

/// Admission rules for new drafts (Table 5, "Admission" row).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdmissionParams {
    /// Token Jaccard similarity at or above which a keyless draft is absorbed
    /// into an active fact that shares an entity.
    pub jaccard: f64,
    /// Absorption also requires equal value-bearing tokens.
    pub value_token_match: bool,
    /// A superseding fact inherits its predecessor's usage.
    pub usage_inheritance: bool,
    /// Exact duplicates of an active fact's text short-circuit.
    pub dedup: bool,
}

impl Default for AdmissionParams {
    fn default() -> Self {
        AdmissionParams {
            jaccard: 0.8,
            value_token_match: true,
            usage_inheritance: true,
            dedup: true,
        }
    }
}

/// Retention pruning (Table 5, "Pruning" row).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PruningParams {
    /// Keyless facts whose retention score falls below this are retired.
    pub retention_threshold: f64,
}

impl Default for PruningParams {
    fn default() -> Self {
        PruningParams {
            retention_threshold: 0.02,
        }
    }
}

/// Block selection (Table 5, "Selection" row).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SelectionParams {
    /// Facts per request `k`.
    pub k: usize,
    /// Character budget `B` of the whole block.
    pub budget: usize,
    /// Candidates scored before selection.
    pub shortlist: usize,
}

impl Default for SelectionParams {
    fn default() -> Self {
        SelectionParams {
            k: 6,
            budget: 800,
            shortlist: 50,
        }
    }
}

/// How a store orders revisions of one key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChainOrder {
    /// The last value to *arrive* is active (the paper's default; Proposition 1).
    #[default]
    Arrival,
    /// The value with the latest *stated* time is active; a late message that
    /// states an older time becomes history without closing the newer value.
    EventTime,
}

impl std::str::FromStr for ChainOrder {
    type Err = crate::error::Error;

    fn from_str(s: &str) -> crate::error::Result<Self> {
        match s {
            "arrival" => Ok(ChainOrder::Arrival),
            "event-time" | "event_time" => Ok(ChainOrder::EventTime),
            _ => Err(crate::error::Error::InvalidConfig(format!(
                "ordering {s:?}: use arrival or event-time"
            ))),
        }
    }
}

/// How fine the extractor's keys are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyGranularity {
    /// `(entity, slot)`: the paper's main setting.
    #[default]
    EntitySlot,
    /// `(entity, slot, noun)`: a standup and a sync of one person are two keys.
    EntitySlotNoun,
}

/// When index segments are merged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MergeMode {
    /// Small merges run inside the commit; large ones on a background thread
    /// whose result the next commit installs.
    #[default]
    Background,
    /// Every merge runs inside the commit that triggers it (deterministic
    /// segment layout; for tests and one-shot batch builds).
    Inline,
}

/// A store's whole configuration. `Config::default()` is the paper's:
/// keyed, arrival order, no history index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Scoring parameters.
    pub score: ScoreParams,
    /// Memory-graph parameters.
    pub graph: GraphParams,
    /// Admission rules.
    pub admission: AdmissionParams,
    /// Retention pruning.
    pub pruning: PruningParams,
    /// Default selection limits of a request.
    pub selection: SelectionParams,
    /// Revision ordering.
    pub ordering: ChainOrder,
    /// Key granularity of the rule extractor.
    pub key_granularity: KeyGranularity,
    /// Whether the rule extractor also keys relations of plain English
    /// (`extract::relations`: where someone lives, who runs a company),
    /// beside the slot table; `false` keys the slot table's six slots only.
    #[serde(default = "yes")]
    pub relations: bool,
    /// With `relations`: how relation phrases the table does not know are
    /// keyed (`extract::soft`: opened as keys of their own, and joined to a
    /// key of the same subject by their wording or embedding).
    #[serde(default)]
    pub soft_identity: crate::extract::soft::SoftIdentity,
    /// Whether keys are used at all; `false` makes a keyless store (the same
    /// drafts, keys ignored), the paper's "without update resolution" arm.
    pub use_keys: bool,
    /// Also index superseded history, for validity-agnostic rankers.
    pub history_index: bool,
    /// Segment merge scheduling.
    pub merge: MergeMode,
}

fn yes() -> bool {
    true
}

impl Default for Config {
    fn default() -> Self {
        Config {
            score: ScoreParams::default(),
            graph: GraphParams::default(),
            admission: AdmissionParams::default(),
            pruning: PruningParams::default(),
            selection: SelectionParams::default(),
            ordering: ChainOrder::default(),
            key_granularity: KeyGranularity::default(),
            relations: true,
            soft_identity: crate::extract::soft::SoftIdentity::default(),
            use_keys: true,
            history_index: false,
            merge: MergeMode::default(),
        }
    }
}

impl Config {
    /// Checks that every parameter is in range.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str| Err(Error::InvalidConfig(what.to_owned()));
        let s = &self.score;
        if !(s.k1 > 0.0 && s.k1.is_finite()) {
            return bad("score.k1 must be positive");
        }
        if !(0.0..=1.0).contains(&s.b) {
            return bad("score.b must be in [0, 1]");
        }
        if s.field_weights
            .iter()
            .any(|w| !(*w >= 0.0 && w.is_finite()))
            || s.field_weights.iter().all(|w| *w == 0.0)
        {
            return bad("score.field_weights must be >= 0 and not all zero");
        }
        if !(s.positional_decay > 0.0 && s.positional_decay <= 1.0) {
            return bad("score.positional_decay must be in (0, 1]");
        }
        if !(0.0..=1.0).contains(&s.recency_floor) {
            return bad("score.recency_floor must be in [0, 1]");
        }
        for (name, v) in [
            ("score.recency_half_life_days", s.recency_half_life_days),
            ("score.usage_half_life_days", s.usage_half_life_days),
            ("graph.edge_half_life_days", self.graph.edge_half_life_days),
        ] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(Error::InvalidConfig(format!("{name} must be positive")));
            }
        }
        for (name, v) in [
            ("score.participant_weight", s.participant_weight),
            ("score.usage_weight", s.usage_weight),
            ("score.graph_weight", s.graph_weight),
            ("score.damping", s.damping),
            ("score.context_weight", s.context_weight),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(Error::InvalidConfig(format!("{name} must be >= 0")));
            }
        }
        if !(s.context_gap_minutes >= 0.0 && s.context_gap_minutes <= 1e9) {
            return bad("score.context_gap_minutes must be in [0, 1e9]");
        }
        if s.term_cap == 0 {
            return bad("score.term_cap must be >= 1");
        }
        if !(0.0..=1.0).contains(&self.admission.jaccard) {
            return bad("admission.jaccard must be in [0, 1]");
        }
        if self.selection.k == 0 || self.selection.shortlist == 0 {
            return bad("selection.k and selection.shortlist must be >= 1");
        }
        if self.graph.neighbours_per_node == 0 {
            return bad("graph.neighbours_per_node must be >= 1");
        }
        Ok(())
    }
}
