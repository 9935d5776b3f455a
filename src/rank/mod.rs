//! Ranking: the PFM scorer and the baseline arms, which share one interface.
//!
//! # The PFM score
//! For request `q` at time `t` and fact `f`:
//!
//! ```text
//! score(q, f) = BM25F(q, f) · R(f, t) · (1 + η · U(f, t) / (1 + U(f, t))) · (1 + γ · A(q, f))
//! ```
//!
//! - `BM25F` is Eq. (3) of the paper over the text, entity and participant
//!   fields (weights 1.0 / 2.5 / 2.0), with query weights from positional
//!   decay and the additive participant weight `β`.
//! - `R = ε + (1 - ε) · 2^-((t - s_f) / T_rec)` is recency with floor `ε`.
//! - `U` is the fact's decayed usage count; the factor is bounded by `1 + η`.
//! - `A ∈ [0, 1]` is the strongest activation among the fact's entities and
//!   participants after one hop of spreading from the request's seeds.
//!
//! The shortlist (the best `n` by that score) is then ranked in conversation
//! context: each fact gains `ν` times the best score among the facts said
//! just before and after it among the same people ([`context`]); a reply
//! seldom repeats the words of what it answers.
//!
//! The paper fixes each term's parameters but not how the terms combine. We
//! multiply: BM25F's scale moves with query length and idf, so an additive
//! bonus of fixed size would mean a lot to one query and nothing to another,
//! while a factor changes every query's ranking by the same proportion. The
//! product also keeps a fact with no lexical evidence at zero, so the
//! candidates are exactly the documents on the query terms' posting lists and
//! retrieval cost follows those lists, as Appendix H reports. Every factor is
//! bounded, which dynamic pruning needs, and each is switched off for the
//! ablations by a [`Ranker`] flag.

pub mod context;
mod cursor;
pub mod dense;
mod holders;
mod maxscore;
mod plan;
pub mod query;
pub mod recency;
pub mod scorer;
mod topn;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub use query::{QueryTerm, normalized_query_terms, query_terms};
pub use recency::Recency;
pub use scorer::{Scored, Scratch, shortlist};

/// How a request's participants enter the query.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParticipantTerms {
    /// Not at all.
    Off,
    /// Each participant token with the additive weight `β` (PFM).
    Weighted,
    /// Each participant token with weight 1, as plain query words (BM25 + P_t).
    Plain,
}

/// Whether and how an arm reads dense vectors (see [`dense`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DenseMode {
    /// Lexical only.
    #[default]
    Off,
    /// An exact scan of the vectors only.
    Dense,
    /// Reciprocal rank fusion of the BM25 and dense shortlists.
    Hybrid,
}

/// A retrieval arm: which signals the scorer uses. All arms share the
/// selection rule and the block format.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ranker {
    /// Stable snake_case name (`pfm`, `bm25_validity_p`, …).
    pub name: String,
    /// BM25F field weights (text, entities, participants); a zero drops the
    /// field. `None` means the store's `ScoreParams::field_weights` (PFM's
    /// 1.0 / 2.5 / 2.0), for which segments keep precomputed lengths.
    pub field_weights: Option<[f32; 3]>,
    /// How participants enter the query.
    pub participant_terms: ParticipantTerms,
    /// Positional decay of context terms.
    pub positional_decay: bool,
    /// Cap the number of context terms.
    pub term_cap: bool,
    /// Multiply by recency.
    pub recency: bool,
    /// Multiply by the usage factor.
    pub usage: bool,
    /// Multiply by the association factor.
    pub graph: bool,
    /// Participants seed the graph activation.
    pub participant_seeds: bool,
    /// A fact borrows from its conversation neighbours' scores
    /// ([`context`]).
    #[serde(default)]
    pub context: bool,
    /// Retrieve from active facts only; `false` reads every retained version.
    pub validity: bool,
    /// Whether the arm reads dense vectors (the request then carries a
    /// query vector). With [`DenseMode::Hybrid`], the flags above describe
    /// its BM25 half.
    #[serde(default)]
    pub dense: DenseMode,
}

impl Ranker {
    /// The PFM reference ranker with every term on.
    pub fn pfm() -> Self {
        Ranker {
            name: "pfm".into(),
            field_weights: None,
            participant_terms: ParticipantTerms::Weighted,
            positional_decay: true,
            term_cap: true,
            recency: true,
            usage: true,
            graph: true,
            participant_seeds: true,
            context: true,
            validity: true,
            dense: DenseMode::Off,
        }
    }

    /// A BM25 baseline over the text field. `participants` supplies the
    /// participant names to the query and to the fact text (as a field of
    /// text weight, which is the same as appending them to the text).
    pub fn bm25(validity: bool, recency: bool, participants: bool) -> Self {
        let mut name = String::from("bm25");
        if validity {
            name.push_str("_validity");
        }
        if recency {
            name.push_str("_recency");
        }
        if participants {
            name.push_str("_p");
        }
        Ranker {
            name,
            field_weights: Some([1.0, 0.0, if participants { 1.0 } else { 0.0 }]),
            participant_terms: if participants {
                ParticipantTerms::Plain
            } else {
                ParticipantTerms::Off
            },
            positional_decay: false,
            term_cap: false,
            recency,
            usage: false,
            graph: false,
            participant_seeds: false,
            context: false,
            validity,
            dense: DenseMode::Off,
        }
    }

    /// A dense or hybrid arm (Table 12): `dense[_validity][_p]` or
    /// `hybrid[_validity][_p]`. `participants` appends the participants'
    /// names to the query text and reads the facts' vectors of text plus
    /// participants; a hybrid arm's BM25 half is `bm25[_validity][_p]`.
    pub fn dense(mode: DenseMode, validity: bool, participants: bool) -> Self {
        let mut ranker = Ranker::bm25(validity, false, participants);
        let prefix = match mode {
            DenseMode::Off => return ranker,
            DenseMode::Dense => "dense",
            DenseMode::Hybrid => "hybrid",
        };
        ranker.name = ranker.name.replacen("bm25", prefix, 1);
        ranker.dense = mode;
        ranker
    }

    /// Whether requests with this ranker need a query vector.
    pub fn needs_vector(&self) -> bool {
        self.dense != DenseMode::Off
    }

    /// Whether the dense half reads text-plus-participants vectors.
    pub fn dense_with_participants(&self) -> bool {
        self.participant_terms != ParticipantTerms::Off
    }

    /// The text to embed as this ranker's query: the context, followed by
    /// the participants' names for a `_p` arm.
    pub fn query_text(&self, context: &str, participants: &[String]) -> String {
        if self.dense_with_participants() {
            crate::vector::with_participants(context, participants)
        } else {
            context.to_owned()
        }
    }

    /// The arm with this name: `pfm`, `bm25[_validity][_recency][_p]`,
    /// `dense[_validity][_p]` or `hybrid[_validity][_p]`.
    pub fn named(name: &str) -> Result<Self> {
        let max = crate::limits::MAX_RANKER_NAME_BYTES;
        if name.len() > max {
            return Err(Error::InvalidConfig(format!(
                "ranker name is {} bytes, over the {max}-byte limit: use pfm, bm25[_validity][_recency][_p], \
                 dense[_validity][_p] or hybrid[_validity][_p]",
                name.len()
            )));
        }
        if name == "pfm" {
            return Ok(Ranker::pfm());
        }
        let unknown = || {
            Error::InvalidConfig(format!(
                "unknown ranker {name:?}: use pfm, bm25[_validity][_recency][_p] (e.g. bm25_validity_p), \
                 dense[_validity][_p] or hybrid[_validity][_p]"
            ))
        };
        let (mode, mut rest) = [
            ("bm25", DenseMode::Off),
            ("dense", DenseMode::Dense),
            ("hybrid", DenseMode::Hybrid),
        ]
        .into_iter()
        .find_map(|(prefix, mode)| name.strip_prefix(prefix).map(|r| (mode, r)))
        .ok_or_else(unknown)?;
        let mut flag = |suffix: &str| match rest.strip_prefix(suffix) {
            Some(r) => {
                rest = r;
                true
            }
            None => false,
        };
        let validity = flag("_validity");
        // Recency is a lexical arm's factor; the dense arms have none.
        let recency = mode == DenseMode::Off && flag("_recency");
        let participants = flag("_p");
        if !rest.is_empty() {
            return Err(unknown());
        }
        Ok(match mode {
            DenseMode::Off => Ranker::bm25(validity, recency, participants),
            _ => Ranker::dense(mode, validity, participants),
        })
    }

    /// The field weights this ranker uses with a store's parameters.
    pub fn weights(&self, params: &crate::config::ScoreParams) -> [f32; 3] {
        self.field_weights.unwrap_or(params.field_weights)
    }

    /// The fields with non-zero weight, as a bit mask (bit 0 text).
    pub fn field_mask(&self, params: &crate::config::ScoreParams) -> usize {
        self.weights(params)
            .iter()
            .enumerate()
            .filter(|(_, w)| **w > 0.0)
            .map(|(i, _)| 1 << i)
            .sum()
    }
}

impl Default for Ranker {
    fn default() -> Self {
        Ranker::pfm()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in [
            "pfm",
            "bm25",
            "bm25_p",
            "bm25_validity",
            "bm25_validity_p",
            "bm25_recency",
            "bm25_validity_recency_p",
            "dense",
            "dense_validity_p",
            "hybrid_p",
            "hybrid_validity",
        ] {
            assert_eq!(Ranker::named(name).unwrap().name, name);
        }
        assert!(Ranker::named("bm25_p_validity").is_err());
        assert!(Ranker::named("dense_recency").is_err());
        assert!(Ranker::named("hybrid_p_validity").is_err());
        let long = "bm25".to_owned() + &"_p".repeat(1000);
        let err = Ranker::named(&long).unwrap_err().to_string();
        assert!(err.contains("32-byte limit") && err.len() < 200, "{err}");
        assert!(Ranker::named("dense").unwrap().needs_vector());
        assert!(!Ranker::named("bm25_p").unwrap().needs_vector());
        let p = crate::config::ScoreParams::default();
        assert_eq!(Ranker::bm25(true, false, true).field_mask(&p), 0b101);
        assert_eq!(Ranker::pfm().field_mask(&p), 0b111);
    }
}
