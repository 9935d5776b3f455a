//! The dense and hybrid arms (Table 12's Dense and Hybrid rows).
//!
//! - **Dense**: an exact scan of the live documents' vectors (no approximate
//!   index: a personal store is small, and the scan is the baseline the
//!   lexical/dense crossover study times). Score: the quantized dot product
//!   of the query vector and the fact's vector ([`crate::vector`]), which is
//!   cosine similarity for MiniLM's normalized outputs.
//! - **Hybrid**: reciprocal rank fusion of the BM25 shortlist and the dense
//!   one, `Σ 1 / (RRF_K + rank)` over the lists a fact is on (ranks from 1),
//!   as in Cormack et al. (2009). Both lists are `n` long.
//!
//! Ties go to the newer fact, as in the lexical arms, so a shortlist does
//! not depend on segment layout.

use std::collections::HashMap;

use super::scorer::{Cancel, Query, Scored, drain};
use super::topn::Entry;
use super::{Ranker, Scratch};
use crate::error::{Error, Result};
use crate::fact::FactId;
use crate::index::Corpus;
use crate::vector::{Vector, dots, similarity};

/// The rank offset of reciprocal rank fusion (Cormack et al.'s 60).
pub const RRF_K: f32 = 60.0;

/// Rows scored per kernel call (16 KiB of scores on the stack), and
/// between cancellation checks.
const CANCEL_EVERY: usize = 4096;

/// The best `n` live documents of `corpus` by similarity to `vector`.
/// A document without vectors (listed before an encoder was attached) is
/// never a candidate; if no live document has one, that is an error, so a
/// store without an encoder does not answer every dense query with nothing.
pub(super) fn shortlist(
    corpus: &Corpus,
    vector: &Vector,
    query: &Query<'_>,
    ranker: &Ranker,
    n: usize,
    scratch: &mut Scratch,
) -> Result<Vec<Scored>> {
    let participants = ranker.dense_with_participants();
    let views = corpus.views();
    let top = &mut scratch.top;
    top.reset(n);
    let q = vector.data();
    let mut embedded = false;
    let mut scanned = 0usize;
    for (i, view) in views.iter().enumerate() {
        let segment = &view.segment;
        let m = segment.matrix();
        if m.dim == 0 {
            scanned += view.live();
            continue;
        }
        if m.dim != q.len() {
            top.reset(0);
            return Err(Error::DenseUnavailable(format!(
                "the query vector has {} dimensions, the store's {}",
                q.len(),
                m.dim
            )));
        }
        let (rows, scales) = match (participants, m.with_p.is_empty()) {
            (false, _) => (&m.text, &m.text_scale),
            (true, false) => (&m.with_p, &m.with_p_scale),
            (true, true) => {
                top.reset(0);
                return Err(Error::DenseUnavailable(
                    "this store embeds fact text only, so a _p dense arm has no vectors to read: \
                     attach the encoder with participant vectors on"
                        .into(),
                ));
            }
        };
        let mut dot = [0i32; CANCEL_EVERY];
        for (chunk, (block, block_scales)) in rows
            .chunks(CANCEL_EVERY * m.dim)
            .zip(scales.chunks(CANCEL_EVERY))
            .enumerate()
        {
            if query.cancel.is_some_and(Cancel::is_cancelled) {
                top.reset(0);
                return Err(Error::Cancelled);
            }
            dots(block, q, &mut dot[..block_scales.len()]);
            for (j, (d, scale)) in dot.iter().zip(block_scales).enumerate() {
                let doc = (chunk * CANCEL_EVERY + j) as u32;
                if *scale == 0.0 || view.deletes.contains(doc) {
                    continue;
                }
                scanned += 1;
                embedded = true;
                top.offer(Entry {
                    score: similarity(*d, *scale, vector),
                    fact: segment.fact_id(doc),
                    view: i as u32,
                    doc,
                });
            }
        }
    }
    if !embedded && scanned > 0 {
        top.reset(0);
        return Err(Error::DenseUnavailable(
            "the store has no encoder attached, so its facts have no vectors \
             (attach one with Memory::set_encoder; the server does so when started with --models)"
                .into(),
        ));
    }
    Ok(drain(top, views))
}

/// Reciprocal rank fusion of two shortlists, the best `n` first.
pub(super) fn fuse(lists: [Vec<Scored>; 2], n: usize) -> Vec<Scored> {
    let mut fused: HashMap<FactId, Scored> = HashMap::new();
    for list in lists {
        for (rank, s) in list.into_iter().enumerate() {
            let gain = 1.0 / (RRF_K + rank as f32 + 1.0);
            fused
                .entry(s.fact)
                .and_modify(|f| f.score += gain)
                .or_insert(Scored { score: gain, ..s });
        }
    }
    let mut out: Vec<Scored> = fused.into_values().collect();
    out.sort_unstable_by(|a, b| b.score.total_cmp(&a.score).then(b.fact.cmp(&a.fact)));
    out.truncate(n);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::{BodyParts, FactBody, FactNames};
    use crate::time::WallTime;
    use std::sync::Arc;

    fn scored(id: u64, score: f32) -> Scored {
        Scored {
            fact: FactId(id),
            score,
            body: Arc::new(FactBody::new(
                FactId(id),
                FactNames::new([], []),
                BodyParts::new("x", WallTime::EPOCH),
            )),
        }
    }

    #[test]
    fn fusion_rewards_agreement_then_rank() {
        let lexical = vec![scored(1, 9.0), scored(2, 5.0), scored(3, 1.0)];
        let dense = vec![scored(3, 0.9), scored(2, 0.8), scored(4, 0.1)];
        let ids: Vec<u64> = fuse([lexical, dense], 3).iter().map(|s| s.fact.0).collect();
        // 2: 1/62 + 1/62; 3: 1/63 + 1/61; 1: 1/61 (beats 4: 1/63).
        assert_eq!(ids, vec![3, 2, 1]);
    }
}
