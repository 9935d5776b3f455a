//! Index inputs: what [`Segment::build`](super::Segment::build) reads from
//! each fact's text and names (its distinct terms with their per-field
//! frequencies, and its per-field token counts), computed once and kept, so
//! a store restored with them builds its segments without normalizing,
//! tokenizing or stemming a single text again. A durable ledger keeps them
//! in its checkpoint beside the facts (`pfm_server::durable`).
//!
//! # Invariants
//! 1. `docs` is sorted by fact id, at most one entry per fact.
//! 2. A document's terms are listed in the order [`for_each_term`] calls
//!    back with them (term order), so a segment built from the inputs
//!    assigns the same term ids in the same order as one built from the
//!    text: the two segments are identical (checked by the unit test
//!    below).
//! 3. The inputs are valid only under the [`fingerprint`] they were made
//!    with: it changes with the stemming switch and with anything the
//!    tokenizer does to its probe text, so inputs made by another build or
//!    configuration are refused rather than read.

use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};

use super::segment::{FIELDS, for_each_term};
use super::terms::Terms;
use crate::config::ScoreParams;
use crate::fact::{BodyParts, FactBody, FactId, FactNames, Name};
use crate::time::WallTime;

/// The layout of these inputs; part of the [`fingerprint`].
const FORMAT: u64 = 1;

/// Per-field token counts of a document.
type Lens = [u16; FIELDS];
/// Per-field frequencies of a term in a document.
type Tf = [u8; FIELDS];

/// The index inputs of some facts (see the module doc). Well formed by
/// construction: decoding checks the layout ([`IndexInputs::of`] makes it).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Layout")]
pub struct IndexInputs {
    /// Every distinct term, in first-seen order.
    terms: Vec<Box<str>>,
    /// Per fact, by ascending id: its id, per-field token counts, and the
    /// end of its run in `postings`.
    docs: Vec<(FactId, Lens, u32)>,
    /// Each document's terms (indexes into `terms`) with their per-field
    /// frequencies, document after document.
    postings: Vec<(u32, Tf)>,
}

/// One fact's inputs.
#[derive(Clone, Copy, Debug)]
pub struct DocTerms<'a> {
    /// Its per-field token counts.
    pub lens: Lens,
    /// Its terms (indexes into [`IndexInputs::term`]) with frequencies.
    pub terms: &'a [(u32, Tf)],
}

impl IndexInputs {
    /// The inputs of the facts with these bodies, under `params`.
    pub fn of<'a>(bodies: impl IntoIterator<Item = &'a FactBody>, params: &ScoreParams) -> Self {
        let mut bodies: Vec<&FactBody> = bodies.into_iter().collect();
        bodies.sort_by_key(|b| b.id);
        bodies.dedup_by_key(|b| b.id);
        let mut inputs = IndexInputs::default();
        let mut table = Terms::default();
        for body in bodies {
            let lens = for_each_term(body, params, |term, tf| {
                inputs.postings.push((table.id(term), tf));
            });
            inputs
                .docs
                .push((body.id, lens, inputs.postings.len() as u32));
        }
        inputs.terms = table.names().into_iter().map(Box::from).collect();
        inputs
    }

    /// A fact's inputs, if these hold it.
    pub fn doc(&self, id: FactId) -> Option<DocTerms<'_>> {
        let i = self.docs.binary_search_by_key(&id, |d| d.0).ok()?;
        let start = if i == 0 { 0 } else { self.docs[i - 1].2 };
        let (_, lens, end) = self.docs[i];
        Some(DocTerms {
            lens,
            terms: self.postings.get(start as usize..end as usize)?,
        })
    }

    /// The `t`th distinct term (every term a [`DocTerms`] of these lists
    /// is one: the layout is checked when decoded).
    pub fn term(&self, t: u32) -> &str {
        &self.terms[t as usize]
    }

    /// How many distinct terms these hold.
    pub fn term_count(&self) -> usize {
        self.terms.len()
    }

    /// How many facts these hold.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether these hold no fact.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }
}

/// [`IndexInputs`] as decoded, before its layout is checked.
#[derive(Deserialize)]
struct Layout {
    terms: Vec<Box<str>>,
    docs: Vec<(FactId, Lens, u32)>,
    postings: Vec<(u32, Tf)>,
}

impl TryFrom<Layout> for IndexInputs {
    type Error = &'static str;

    /// Documents by ascending id, runs in order and ending at the last
    /// posting, term indexes in range.
    fn try_from(l: Layout) -> Result<Self, Self::Error> {
        let ordered = l
            .docs
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].2 <= w[1].2);
        let ends = l.docs.last().map_or(0, |d| d.2 as usize) == l.postings.len();
        let terms = l
            .postings
            .iter()
            .all(|(t, _)| (*t as usize) < l.terms.len());
        if !(ordered && ends && terms) {
            return Err("index inputs out of order or out of range");
        }
        Ok(IndexInputs {
            terms: l.terms,
            docs: l.docs,
            postings: l.postings,
        })
    }
}

/// What inputs made under `params` by this build are tagged with: inputs
/// tagged otherwise were made by another tokenizer or configuration and
/// must be computed again. A hash of the format, the stemming switch and
/// the terms of a probe fact that exercises normalization, stop words,
/// stemming, numbers, dates and names, so a change to any of them that the
/// probe sees changes it without anyone remembering to bump a version.
/// Computed once per process for each value of the stemming switch, the
/// only parameter the terms depend on.
pub fn fingerprint(params: &ScoreParams) -> u64 {
    static MADE: [std::sync::OnceLock<u64>; 2] =
        [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    *MADE[usize::from(params.stem)].get_or_init(|| probe_fingerprint(params.stem))
}

fn probe_fingerprint(stem: bool) -> u64 {
    let params = &ScoreParams {
        stem,
        ..ScoreParams::default()
    };
    let names = FactNames::new(
        [Name::from("o'neil"), Name::from("zoë's café")],
        [Name::from("Dr. Ana-María O'Neil"), Name::from("SAM")],
    );
    let parts = BodyParts {
        text: "On Mar 3rd, Dr. O'Neil's running clubs met at 9:30am; they're \
               paying $1,200.50 — the SAME café, \"Zoë's\", as in 2024!",
        key: None,
        value: None,
        stated_at: WallTime::EPOCH,
        source: None,
    };
    let probe = FactBody::new(FactId(0), names, parts);
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (FORMAT, params.stem).hash(&mut hasher);
    let lens = for_each_term(&probe, params, |term, tf| (term, tf).hash(&mut hasher));
    lens.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::segment::Segment;
    use crate::index::segment::fixtures::{body, doc};

    /// A segment's whole content, less its process-unique id.
    fn content(segment: &Segment) -> String {
        let shown = format!("{segment:?}");
        let after_id = shown.find(", ").expect("a segment shows its fields");
        shown[after_id..].to_owned()
    }

    #[test]
    fn a_segment_built_from_inputs_is_the_segment_built_from_text() {
        let docs = [
            (
                7,
                "Maya's running club meets on Mar 3rd at 9:30am.",
                &["maya"][..],
                &["Maya Lee", "Sam"][..],
            ),
            (
                2,
                "Sam moved the club's runs to the old café — running is fun!",
                &["sam"],
                &["Sam"],
            ),
            (
                5,
                "The budget is $1,200.50 for 2024; the budget was smaller.",
                &[],
                &["Maya Lee"],
            ),
            (
                9,
                "Nothing in common here except running.",
                &["nobody"],
                &[],
            ),
        ]
        .map(|(id, text, entities, participants)| {
            doc(id, text, entities, participants, Box::new([]))
        });
        for stem in [true, false] {
            let params = ScoreParams {
                stem,
                ..ScoreParams::default()
            };
            // Fact 9 is not in the inputs: its terms come from its text.
            let inputs = IndexInputs::of(docs[..3].iter().map(|d| &*d.body), &params);
            assert_eq!(inputs.len(), 3);
            assert!(inputs.doc(FactId(9)).is_none());
            let from_text = Segment::build(docs.to_vec(), &params);
            let from_inputs = Segment::build_with(docs.to_vec(), &params, Some(&inputs));
            assert_eq!(content(&from_text), content(&from_inputs), "stem {stem}");
            // And a fact's inputs are what the build reads from its text.
            let mut read = Vec::new();
            let lens = for_each_term(&docs[0].body, &params, |t, tf| {
                read.push((t.to_owned(), tf))
            });
            let kept = inputs.doc(FactId(7)).unwrap();
            assert_eq!(kept.lens, lens);
            let kept: Vec<_> = kept
                .terms
                .iter()
                .map(|&(t, tf)| (inputs.term(t).to_owned(), tf))
                .collect();
            assert_eq!(kept, read);
        }
    }

    #[test]
    fn decoding_refuses_a_layout_that_does_not_hold_together() {
        let params = ScoreParams::default();
        let inputs = IndexInputs::of(
            [&*body(1, "one two", &[], &[]), &*body(3, "three", &[], &[])],
            &params,
        );
        let json = serde_json::to_string(&inputs).unwrap();
        assert_eq!(serde_json::from_str::<IndexInputs>(&json).unwrap(), inputs);
        let bad = [
            // Documents out of order.
            r#"{"terms":["a"],"docs":[[3,[1,0,0],1],[1,[1,0,0],2]],"postings":[[0,[1,0,0]],[0,[1,0,0]]]}"#,
            // A term index out of range.
            r#"{"terms":["a"],"docs":[[1,[1,0,0],1]],"postings":[[4,[1,0,0]]]}"#,
            // Runs that do not end at the last posting.
            r#"{"terms":["a"],"docs":[[1,[1,0,0],3]],"postings":[[0,[1,0,0]]]}"#,
        ];
        for json in bad {
            assert!(serde_json::from_str::<IndexInputs>(json).is_err(), "{json}");
        }
    }

    #[test]
    fn the_fingerprint_follows_the_stemming_switch() {
        let stemmed = ScoreParams::default();
        let plain = ScoreParams {
            stem: !stemmed.stem,
            ..stemmed.clone()
        };
        assert_eq!(fingerprint(&stemmed), fingerprint(&stemmed.clone()));
        assert_ne!(fingerprint(&stemmed), fingerprint(&plain));
    }
}
