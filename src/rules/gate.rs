//! Abstention gates (paper Section 5, Appendix D): when a request should get
//! an empty block rather than the best facts the store happens to have.

use std::borrow::Cow;

use super::about;
use super::identity::Resolution;
use super::slot::requested_slot;
use rustc_hash::FxHashSet;

use crate::index::IndexVersion;
use crate::rank::Scored;
use crate::text;

/// The coverage gate's threshold for `"abstain": "auto"`: with
/// [`SWAP_MARGIN`], a pair on LoCoMo's grid (`eval/RESULTS.md`) that
/// abstains on at most 5% of answerable questions and within 0.01 of the
/// most any such pair abstains on adversarial ones (τ = 0.08 with margin
/// 0.30: 0.049 and 0.511), with more room under the 5% (0.046 and 0.507).
pub const DEFAULT_COVERAGE: f32 = 0.12;

/// The slot gate: passes when the request asks for no slot the detector
/// knows, or when one of the `retrieved` facts states the requested slot for
/// an entity whose posterior is at least `tau`.
///
/// A request with no detectable slot passes because the gate has nothing to
/// check; the detector (and so the gate) depends on the slot inventory.
pub fn slot_passes(context: &str, retrieved: &[Scored], resolution: &Resolution, tau: f64) -> bool {
    let Some(slot) = requested_slot(context) else {
        return true;
    };
    retrieved.iter().any(|s| {
        s.body
            .key
            .as_ref()
            .is_some_and(|k| &*k.slot == slot.name && resolution.posterior(&k.entity) >= tau)
    })
}

/// The margin gate: passes when the top fact of `shortlist` (best first)
/// scores at least `tau` times the shortlist's mean and its text shares at
/// least a third of the request's distinct content terms. Needs no slot
/// inventory.
pub fn margin_passes(context: &str, shortlist: &[Scored], tau: f32) -> bool {
    let Some(top) = shortlist.first() else {
        return false;
    };
    let mean = shortlist.iter().map(|s| s.score).sum::<f32>() / shortlist.len() as f32;
    if top.score < tau * mean {
        return false;
    }
    let norm = text::normalize(context);
    let mut terms: Vec<&str> = text::content_tokens(&norm).collect();
    terms.sort_unstable();
    terms.dedup();
    if terms.is_empty() {
        return false;
    }
    let fact_norm = text::normalize(top.body.text());
    let fact: Vec<&str> = text::content_tokens(&fact_norm).collect();
    let shared = terms.iter().filter(|t| fact.contains(t)).count();
    3 * shared >= terms.len()
}

/// The coverage gate: passes when the `selected` facts support the request
/// ([`support`]): one of them carries at least `tau` of the request's
/// weighted content terms in what it says of the request's people, and no
/// fact's statements about anyone else carry more than that by over
/// [`SWAP_MARGIN`]. A request without content terms passes only if a fact
/// names its person.
pub fn coverage_passes(
    version: &IndexVersion,
    context: &str,
    selected: &[Scored],
    resolution: &Resolution,
    tau: f32,
) -> bool {
    support(version, context, selected, resolution)
        .is_some_and(|s| s.passes(f64::from(tau), SWAP_MARGIN))
}

/// How far another person's statements may cover a request better than
/// those about the request's own people before the coverage gate reads the
/// request as asked of the wrong person: "what did Ana realize after her
/// race?" over a block where Ben says much more about his race than anyone
/// says about Ana's. Chosen with the threshold on LoCoMo's adversarial
/// questions (the event is the other speaker's; see [`DEFAULT_COVERAGE`]);
/// its curve and a split-half check of the choice are in
/// `eval/RESULTS.md`.
pub const SWAP_MARGIN: f64 = 0.35;

/// How well a block supports a request: the best share of the request's
/// weighted content terms that one fact carries in what it says of the
/// request's people, and in what it says of anyone else.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Support {
    /// Best share among the facts' statements about the request's people
    /// (all of them, if it names no one); `None` when no fact says
    /// anything about them.
    pub named: Option<f64>,
    /// Best share among the facts' statements about other people.
    pub other: f64,
}

impl Support {
    /// The coverage gate's decision at threshold `tau` and swap margin
    /// `margin` ([`coverage_passes`]).
    pub fn passes(&self, tau: f64, margin: f64) -> bool {
        self.named
            .is_some_and(|n| n >= tau && n + margin >= self.other)
    }
}

/// The [`Support`] the `selected` facts give the request; `None` when the
/// request has neither content terms nor people to look for.
///
/// A fact's statements are about the request's people when
/// 1. it names one of the people the request names (`resolution`: known
///    names, an ambiguous mention by any of its candidates; and
///    [`unseen_names`], names the store has never seen) — a name counts in
///    the fact's entities or text, not in its participants (who was
///    present is not who it is about); and
/// 2. in a turn labelled with its speaker, only the statements about them
///    count ([`about`]: in "Ana: Thanks, Ben! How was your race?" Ben is
///    only addressed and the question asserts nothing).
///
/// A request's content terms are weighted by their idf in the active
/// corpus's text field, so a word the store never saw (often the sign of a
/// question about something else) weighs most and a common one least.
/// Terms are compared in their index form; names as written.
pub fn support(
    version: &IndexVersion,
    context: &str,
    selected: &[Scored],
    resolution: &Resolution,
) -> Option<Support> {
    let names: Vec<&str> = resolution
        .resolved
        .iter()
        .map(|n| &**n)
        .chain(
            resolution
                .ambiguous
                .iter()
                .flat_map(|a| &a.outcomes)
                .flat_map(|o| o.names.iter().map(|n| &**n)),
        )
        .collect();
    let unseen = unseen_names(version, context);
    let names: Vec<&str> = names
        .into_iter()
        .chain(unseen.iter().map(String::as_str))
        .collect();
    // Sets and token runs made once: with the unseen names, a request's
    // names grow with its context (up to `MAX_CONTEXT_BYTES`), so a lookup
    // per term or a tokenization per fact would make the gate quadratic.
    let runs: Vec<Vec<&str>> = names.iter().map(|n| text::tokens(n).collect()).collect();
    let name_tokens: FxHashSet<&str> = runs.iter().flatten().copied().collect();
    let norm = text::normalize(context);
    // Terms are compared in their index form (a question's "painting"
    // is covered by a fact's "painted"); names as written.
    let params = &version.params;
    let mut terms: Vec<Cow<str>> = text::content_tokens(&norm)
        .filter(|t| !name_tokens.contains(t))
        .map(|t| params.index_form(t))
        .collect();
    terms.sort_unstable();
    terms.dedup();
    let corpus = &version.active;
    let n = corpus.live_docs().max(1) as f64;
    // Bit 0 of a field mask is the text field.
    let idf = |t: &str| {
        let df = f64::from(corpus.df(t, 1));
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    };
    let weights: Vec<f64> = terms.iter().map(|t| idf(t)).collect();
    let total: f64 = weights.iter().sum();
    if total <= 0.0 && names.is_empty() {
        return None;
    }
    let mut support = Support::default();
    for s in selected {
        let body = &s.body;
        let sentences = about::sentences(body);
        let fact_norm;
        // The words that can support the request: in a labelled turn, those
        // of the sentences about one of its people; otherwise all of them,
        // if the fact names one. The rest are the other people's words.
        let (words, others): (Vec<&str>, Vec<&str>) = match &sentences {
            Some(list) => {
                let (theirs, rest): (Vec<&about::Sentence>, Vec<&about::Sentence>) =
                    list.iter().partition(|x| {
                        names.is_empty() || x.people.iter().any(|p| names.contains(&&**p))
                    });
                (sentence_words(&theirs), sentence_words(&rest))
            }
            None => {
                fact_norm = text::normalize(body.text());
                let fact: Vec<&str> = text::tokens(&fact_norm).collect();
                let named = names.is_empty()
                    || names.iter().zip(&runs).any(|(n, run)| {
                        body.entities().iter().any(|e| &**e == *n) || contains_run(&fact, run)
                    });
                if named {
                    (fact, Vec::new())
                } else {
                    (Vec::new(), fact)
                }
            }
        };
        let covered = |words: &[&str]| -> f64 {
            let forms: Vec<Cow<str>> = words.iter().map(|t| params.index_form(t)).collect();
            let shared: f64 = terms
                .iter()
                .zip(&weights)
                .filter(|(t, _)| forms.contains(t))
                .map(|(_, w)| w)
                .sum();
            shared / total
        };
        // With no content terms (the request names someone), a statement
        // about them is whole support and one about anyone else none.
        if !words.is_empty() {
            let x = if total > 0.0 { covered(&words) } else { 1.0 };
            support.named = Some(support.named.map_or(x, |n| n.max(x)));
        }
        if !others.is_empty() && total > 0.0 {
            support.other = support.other.max(covered(&others));
        }
    }
    Some(support)
}

/// Names the request writes that the store has never seen: words it
/// capitalizes past each sentence's first (as people write names, in
/// scripts that have case), which are no stop word, in no field of any
/// active fact and in no name the store knows. No fact can name them, so
/// a request about such a name alone finds no support: a store asked about
/// someone it knows nothing of abstains instead of answering with facts
/// about whoever else matched the rest of the question.
pub fn unseen_names(version: &IndexVersion, context: &str) -> Vec<String> {
    // Bits 0–2 of a field mask: text, entities, participants.
    const ANY_FIELD: usize = 0b111;
    let mut unseen: Vec<String> = Vec::new();
    let mut listed: FxHashSet<String> = FxHashSet::default();
    let mut sentence_start = true;
    for word in context.split_whitespace() {
        let bare = word.trim_matches(|c: char| !c.is_alphanumeric());
        let capitalized = bare.chars().next().is_some_and(char::is_uppercase);
        if capitalized && !sentence_start {
            let norm = text::normalize(bare);
            for t in text::content_tokens(&norm) {
                if listed.contains(t) {
                    continue;
                }
                let known = version.active.df(&version.params.index_form(t), ANY_FIELD) > 0
                    || version.gazetteer.with_token(t).next().is_some();
                if !known {
                    listed.insert(t.to_owned());
                    unseen.push(t.to_owned());
                }
            }
        }
        if !bare.is_empty() {
            sentence_start = word.ends_with(['.', '?', '!']);
        }
    }
    unseen
}

/// The tokens of `sentences`, in order.
fn sentence_words<'a>(sentences: &[&'a about::Sentence]) -> Vec<&'a str> {
    sentences
        .iter()
        .flat_map(|x| text::tokens(&x.text))
        .collect()
}

/// Whether `run` occurs as consecutive tokens of `tokens`.
fn contains_run(tokens: &[&str], run: &[&str]) -> bool {
    !run.is_empty() && tokens.windows(run.len()).any(|w| w == run)
}
