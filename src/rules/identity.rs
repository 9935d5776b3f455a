//! Identity resolution: ambiguous mentions, alias pooling and the entity
//! posterior of Eq. (2) (paper Section 5, Appendix D).
//!
//! Mentions are the alphabetic non-stop tokens of the request that are not
//! part of a full name it spells out ("Alex Rivera" names one person; a bare
//! "Alex" may name several). A mention is *ambiguous* when two or more stored
//! entity names contain it; those names are its candidates. Candidates whose
//! token sets contain one another are aliases ("halcyon" and "the halcyon")
//! and pool into one outcome ([`alias_groups`]), so only genuinely competing
//! names are resolved; a mention whose candidates form one alias group is
//! resolved.
//!
//! For an outcome `g` (a set of alias names):
//!
//! ```text
//! ψ(g) = w_p · 1{g ∩ P_t ≠ ∅} + w_g · Σ_{p ∈ P_t} Σ_{e ∈ g} w_pe / Σ_v w_pv + w_r · 2^-((t - s_g) / T_rec)
//! π(g) = softmax(ψ / T)
//! ```
//!
//! with `w = (1, 1, 0.25)`, `T = 0.5`, `w_pe` the memory-graph edge between
//! participant `p` and entity `e` (over `p`'s published neighbours; ratios of
//! anchored weights are the same at every time), `s_g` the stated time of
//! the most recent active fact about any name of `g` (no such fact: the term
//! is 0) and `T_rec` the store's recency half-life.

use std::borrow::Cow;

use crate::config::ScoreParams;
use crate::extract::gazetteer::is_name_token;
use crate::fact::{FactBody, Name, name_key};
use crate::index::{Corpus, IndexVersion};
use crate::text;
use crate::time::{DAY_MS, WallTime};

/// Weight of interlocutor membership `w_p`.
pub const W_MEMBER: f64 = 1.0;
/// Weight of graph association with the interlocutor `w_g`.
pub const W_GRAPH: f64 = 1.0;
/// Weight of the entity's recency `w_r`.
pub const W_RECENCY: f64 = 0.25;
/// Softmax temperature `T`.
pub const TEMPERATURE: f64 = 0.5;

/// The entity field of the index (text, entities, participants).
const ENTITY_FIELD: usize = 1;

/// One outcome of Eq. (2): a group of alias names and its posterior.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Canonical names pooled into this outcome (sorted).
    pub names: Vec<Name>,
    /// `ψ`.
    pub psi: f64,
    /// `π`.
    pub posterior: f64,
}

/// An ambiguous mention and its outcomes, most probable first.
#[derive(Clone, Debug, PartialEq)]
pub struct Ambiguity {
    /// The mention token.
    pub token: String,
    /// Competing outcomes (at least two), by descending posterior, ties by name.
    pub outcomes: Vec<Outcome>,
}

impl Ambiguity {
    /// The winning outcomes: every outcome with the highest posterior.
    fn winners(&self) -> impl Iterator<Item = &Outcome> {
        let top = self.outcomes[0].posterior;
        self.outcomes.iter().take_while(move |o| o.posterior == top)
    }
}

/// Who a request refers to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Resolution {
    /// Names the request mentions without ambiguity (full names, tokens of
    /// one alias group).
    pub resolved: Vec<Name>,
    /// Its ambiguous mentions.
    pub ambiguous: Vec<Ambiguity>,
}

impl Resolution {
    /// Resolves the mentions of `context` for a request by `participants` at
    /// time `at` against one index version.
    pub fn of(
        version: &IndexVersion,
        context: &str,
        participants: &[String],
        at: WallTime,
    ) -> Resolution {
        let gazetteer = &version.gazetteer;
        let norm = text::normalize(context);
        let tokens: Vec<&str> = text::tokens(&norm).collect();
        let full = gazetteer.full_mentions(&tokens);
        let mut covered = vec![false; tokens.len()];
        let mut out = Resolution::default();
        for m in &full {
            covered[m.start..m.end].iter_mut().for_each(|c| *c = true);
            out.resolved.push(m.entity.clone());
        }
        let interlocutors: Vec<String> = participants.iter().map(|p| name_key(p)).collect();
        let half_life_ms = version.params.recency_half_life_days * DAY_MS as f64;
        for (i, tok) in tokens.iter().enumerate() {
            if covered[i] || !is_name_token(tok) || out.ambiguous.iter().any(|a| a.token == *tok) {
                continue;
            }
            let candidates: Vec<Name> = gazetteer.with_token(tok).cloned().collect();
            let groups = alias_groups(&candidates);
            if groups.len() < 2 {
                out.resolved.extend(groups.into_iter().flatten());
                continue;
            }
            let psi: Vec<f64> = groups
                .iter()
                .map(|g| {
                    let member = g.iter().any(|e| interlocutors.iter().any(|p| **p == **e));
                    let latest = g
                        .iter()
                        .filter_map(|e| latest_about(&version.active, &version.params, e))
                        .max();
                    let recency = latest.map_or(0.0, |s| {
                        (-((at.millis() - s.millis()) as f64) / half_life_ms).exp2()
                    });
                    W_MEMBER * f64::from(u8::from(member))
                        + W_GRAPH * association(version, &interlocutors, g)
                        + W_RECENCY * recency
                })
                .collect();
            let posterior = softmax(&psi, TEMPERATURE);
            let mut outcomes: Vec<Outcome> = groups
                .into_iter()
                .zip(psi.into_iter().zip(posterior))
                .map(|(names, (psi, posterior))| Outcome {
                    names,
                    psi,
                    posterior,
                })
                .collect();
            outcomes.sort_by(|a, b| {
                b.posterior
                    .total_cmp(&a.posterior)
                    .then(a.names.cmp(&b.names))
            });
            out.ambiguous.push(Ambiguity {
                token: (*tok).to_owned(),
                outcomes,
            });
        }
        out.resolved.sort_unstable();
        out.resolved.dedup();
        out
    }

    /// Whether the request mentions any known name.
    pub fn mentions_anyone(&self) -> bool {
        !self.resolved.is_empty() || !self.ambiguous.is_empty()
    }

    /// `π(e)` of a canonical name: its outcome's posterior when an ambiguous
    /// mention may mean it (the highest over mentions), 1 when the request
    /// names it unambiguously or names no one at all, and 0 for a name the
    /// request does not mention.
    pub fn posterior(&self, name: &str) -> f64 {
        let ambiguous = self
            .ambiguous
            .iter()
            .flat_map(|a| &a.outcomes)
            .filter(|o| o.names.iter().any(|n| &**n == name))
            .map(|o| o.posterior)
            .reduce(f64::max);
        match ambiguous {
            Some(p) => p,
            None if !self.mentions_anyone() || self.resolved.iter().any(|n| &**n == name) => 1.0,
            None => 0.0,
        }
    }

    /// Whether retrieval under the posterior keeps a fact: for every
    /// ambiguous mention the fact names a winning outcome or none of the
    /// candidates.
    pub fn keeps(&self, body: &FactBody) -> bool {
        let names = |o: &Outcome| o.names.iter().any(|n| body.entities().contains(n));
        self.ambiguous
            .iter()
            .all(|a| a.winners().any(names) || !a.outcomes.iter().any(names))
    }
}

/// Pools candidates into alias groups, sorted. Each *maximal* candidate
/// (one whose token set no other candidate's strictly contains) starts a
/// group; a smaller candidate joins the one group whose maximal name
/// contains it ("halcyon" joins "the halcyon"). A smaller name contained by
/// two rivals ("alex" beside "alex rivera" and "alex chen") is itself
/// ambiguous and names no outcome, so it is left out rather than allowed to
/// merge the rivals.
pub fn alias_groups(candidates: &[Name]) -> Vec<Vec<Name>> {
    let sets: Vec<Vec<&str>> = candidates
        .iter()
        .map(|c| {
            let mut t: Vec<&str> = text::tokens(c).collect();
            t.sort_unstable();
            t.dedup();
            t
        })
        .collect();
    let within = |small: usize, big: usize| {
        small != big
            && sets[small].len() < sets[big].len()
            && sets[small]
                .iter()
                .all(|t| sets[big].binary_search(t).is_ok())
    };
    let maximal: Vec<usize> = (0..candidates.len())
        .filter(|i| !(0..candidates.len()).any(|j| within(*i, j)))
        .collect();
    let mut groups: Vec<Vec<Name>> = maximal
        .iter()
        .map(|m| vec![candidates[*m].clone()])
        .collect();
    for i in (0..candidates.len()).filter(|i| !maximal.contains(i)) {
        let mut owners = maximal.iter().enumerate().filter(|(_, m)| within(i, **m));
        if let (Some((g, _)), None) = (owners.next(), owners.next()) {
            groups[g].push(candidates[i].clone());
        }
    }
    for g in &mut groups {
        g.sort_unstable();
    }
    groups.sort_unstable();
    groups
}

/// `softmax(x / temperature)`, computed stably.
pub fn softmax(x: &[f64], temperature: f64) -> Vec<f64> {
    let max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = x.iter().map(|v| ((v - max) / temperature).exp()).collect();
    let sum: f64 = e.iter().sum();
    e.into_iter().map(|v| v / sum).collect()
}

/// `Σ_{p ∈ P_t} Σ_{e ∈ g} w_pe / Σ_v w_pv` over the published neighbour lists.
fn association(version: &IndexVersion, interlocutors: &[String], group: &[Name]) -> f64 {
    let graph = &version.graph;
    let targets: Vec<_> = group.iter().filter_map(|e| graph.node(e)).collect();
    interlocutors
        .iter()
        .filter_map(|p| graph.node(p))
        .map(|p| {
            let neighbours = graph.neighbours(p);
            let total: f64 = neighbours.iter().map(|e| e.1).sum();
            let to_group: f64 = neighbours
                .iter()
                .filter(|e| targets.contains(&{ e.0 }))
                .map(|e| e.1)
                .sum();
            if total > 0.0 { to_group / total } else { 0.0 }
        })
        .sum()
}

/// The stated time of the most recent active fact whose entities include
/// `name`, found through the entity-field postings of the name's rarest
/// token in each segment.
fn latest_about(active: &Corpus, params: &ScoreParams, name: &str) -> Option<WallTime> {
    let tokens: Vec<Cow<str>> = text::tokens(name).map(|t| params.index_form(t)).collect();
    let mut latest: Option<WallTime> = None;
    for view in active.views() {
        let segment = &view.segment;
        let tids: Option<Vec<u32>> = tokens.iter().map(|t| segment.term(t)).collect();
        let Some(tid) = tids.and_then(|t| t.into_iter().min_by_key(|t| segment.postings(*t).len()))
        else {
            continue; // some token of the name is absent: no fact here names it
        };
        for p in segment.postings(tid).iter() {
            if p.tf[ENTITY_FIELD] == 0 || view.deletes.contains(p.doc) {
                continue;
            }
            let body = segment.body(p.doc);
            if body.entities().iter().any(|e| &**e == name) {
                latest = latest.max(Some(body.stated_at));
            }
        }
    }
    latest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(names: &[&str]) -> Vec<Vec<String>> {
        let names: Vec<Name> = names.iter().map(|n| Name::from(*n)).collect();
        alias_groups(&names)
            .into_iter()
            .map(|g| g.iter().map(ToString::to_string).collect())
            .collect()
    }

    #[test]
    fn aliases_pool_and_rivals_stay_apart() {
        assert_eq!(
            groups(&["halcyon", "the halcyon"]),
            [["halcyon", "the halcyon"]]
        );
        assert_eq!(
            groups(&["alex rivera", "alex chen"]),
            [["alex chen"], ["alex rivera"]]
        );
        // A bare "alex" is contained by both rivals: it names neither and
        // must not merge them.
        assert_eq!(
            groups(&["alex", "alex rivera", "alex chen"]),
            [["alex chen"], ["alex rivera"]]
        );
        assert_eq!(
            groups(&["halcyon", "the halcyon", "halcyon ops"]),
            [vec!["halcyon ops"], vec!["the halcyon"]]
        );
        assert_eq!(
            groups(&["rivera", "alex rivera", "alex chen"]),
            [vec!["alex chen"], vec!["alex rivera", "rivera"]]
        );
    }

    #[test]
    fn softmax_is_a_tempered_distribution() {
        let p = softmax(&[1.0, 0.0], TEMPERATURE);
        assert!((p[0] - 1.0 / (1.0 + (-2.0f64).exp())).abs() < 1e-12);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let q = softmax(&[700.0, 0.0, 700.0], TEMPERATURE);
        assert!((q[0] - 0.5).abs() < 1e-12 && q[1] < 1e-300);
    }
}
