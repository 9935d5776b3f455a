//! From a request to weighted query terms.

use std::borrow::Cow;

use super::{ParticipantTerms, Ranker};
use crate::config::ScoreParams;
use crate::fact::name_key;
use crate::text;

/// A query term and its weight `q_t(w)`.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryTerm {
    /// The normalized term.
    pub term: String,
    /// Its weight.
    pub weight: f32,
}

/// The weighted terms of a request, sorted by term (so score sums are
/// computed in one order whatever the request's word order).
///
/// Context terms are the content tokens of the normalized context, in their
/// index form ([`ScoreParams::index_form`]), as are participant tokens. With
/// positional decay a token `d` content tokens before the end weighs `λ^d`
/// (the end of an unfinished message says what comes next); a repeated term
/// keeps its largest weight. With the term cap only the `m` heaviest distinct
/// terms stay (ties: the later occurrence). Participant tokens then add `β`
/// (weighted) or 1 (plain) to their term's weight.
pub fn query_terms(
    context: &str,
    participants: &[String],
    ranker: &Ranker,
    params: &ScoreParams,
) -> Vec<QueryTerm> {
    normalized_query_terms(&text::normalize(context), participants, ranker, params)
}

/// [`query_terms`] of a context that is already normalized.
pub fn normalized_query_terms(
    norm: &str,
    participants: &[String],
    ranker: &Ranker,
    params: &ScoreParams,
) -> Vec<QueryTerm> {
    let toks: Vec<Cow<str>> = text::content_tokens(norm)
        .map(|t| params.index_form(t))
        .collect();
    let n = toks.len();
    // (term, weight, last position)
    let mut terms: Vec<(String, f32, usize)> = Vec::with_capacity(n);
    for (i, t) in toks.iter().enumerate() {
        let w = if ranker.positional_decay {
            params.positional_decay.powi((n - 1 - i) as i32)
        } else {
            1.0
        };
        match terms.iter_mut().find(|(term, ..)| term == t) {
            Some(e) => {
                if w >= e.1 {
                    e.1 = w;
                    e.2 = i;
                }
            }
            None => terms.push((t.clone().into_owned(), w, i)),
        }
    }
    if ranker.term_cap && terms.len() > params.term_cap {
        terms.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.2.cmp(&a.2)));
        terms.truncate(params.term_cap);
    }
    let extra = match ranker.participant_terms {
        ParticipantTerms::Off => None,
        ParticipantTerms::Weighted => Some(params.participant_weight),
        ParticipantTerms::Plain => Some(1.0),
    };
    if let Some(extra) = extra {
        for p in participants {
            let key = name_key(p);
            for tok in text::tokens(&key).map(|t| params.index_form(t)) {
                match terms.iter_mut().find(|(term, ..)| *term == tok) {
                    Some(e) => e.1 += extra,
                    None => terms.push((tok.into_owned(), extra, usize::MAX)),
                }
            }
        }
    }
    let mut out: Vec<QueryTerm> = terms
        .into_iter()
        .map(|(term, weight, _)| QueryTerm { term, weight })
        .collect();
    out.sort_by(|a, b| a.term.cmp(&b.term));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weights(context: &str, participants: &[&str], ranker: &Ranker) -> Vec<(String, f32)> {
        let p: Vec<String> = participants.iter().map(|s| s.to_string()).collect();
        query_terms(context, &p, ranker, &ScoreParams::default())
            .into_iter()
            .map(|q| (q.term, q.weight))
            .collect()
    }

    #[test]
    fn positional_decay_and_participants() {
        let got = weights(
            "the standup with Alex is at",
            &["Alex Rivera"],
            &Ranker::pfm(),
        );
        // content tokens: standup (d=1), alex (d=0); participants add β = 1.5.
        assert_eq!(
            got,
            [
                ("alex".into(), 1.0 + 1.5),
                ("rivera".into(), 1.5),
                ("standup".into(), 0.95)
            ]
        );
        let plain = weights(
            "the standup with Alex is at",
            &["Alex Rivera"],
            &Ranker::bm25(true, false, true),
        );
        assert_eq!(
            plain,
            [
                ("alex".into(), 2.0),
                ("rivera".into(), 1.0),
                ("standup".into(), 1.0)
            ]
        );
        let off = weights(
            "the standup with Alex is at",
            &["Alex Rivera"],
            &Ranker::bm25(true, false, false),
        );
        assert_eq!(off, [("alex".into(), 1.0), ("standup".into(), 1.0)]);
    }

    #[test]
    fn term_cap_keeps_the_latest_terms() {
        let context = "a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12 a13 a14";
        let got = weights(context, &[], &Ranker::pfm());
        assert_eq!(got.len(), 12);
        assert!(!got.iter().any(|(t, _)| t == "a1" || t == "a2"));
        // A repeated term keeps its latest (heaviest) weight.
        let got = weights("budget x budget", &[], &Ranker::pfm());
        assert_eq!(got, [("budget".into(), 1.0), ("x".into(), 0.95)]);
    }
}
