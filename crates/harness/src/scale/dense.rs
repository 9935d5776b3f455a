//! `pfm scale --dense`: the lexical/dense crossover (paper Appendix I,
//! Figure 1). On the row's own store, after the lexical timing, each timed
//! query is also answered by a MiniLM retriever: the query's encoding (one
//! sentence, one call, as a request would) plus the exact int8 scan of every
//! active fact's vector (`dense_validity`: active facts only, like pfm), and the reciprocal-rank fusion of both
//! (`hybrid_validity`); the report puts their whole-call cost beside pfm's.
//!
//! # Where the fact vectors come from
//! Embedding a fact costs milliseconds on this class of machine, so a
//! 1,000,000-fact row would spend hours in the model. The first
//! [`EMBEDDED`] facts are embedded by MiniLM (timed: the write path's cost
//! per fact), and the store's encoder then replays those vectors for the
//! facts it did not see, in turn, cyclically ([`Replay`]). The scan's cost does not depend
//! on the values (it scores every row; nothing is pruned), so the timing is
//! the one real vectors would give; what this row does not measure is the
//! quality of the dense ranking at size (that is `pfm eval`'s and LoCoMo's).
//!
//! # int8 against f32
//! The store keeps int8 vectors ([`pfm::vector`]). Over the really embedded
//! facts, each timed query's top 10 by exact f32 cosine is compared with its
//! top 10 by the int8 score: the row's `int8_recall_at_10` is the mean
//! overlap, the ranking lost to quantization.

use std::time::Instant;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

use pfm::error::{Error, Result};
use pfm::index::IndexVersion;
use pfm::rank::{Ranker, Scratch};
use pfm::retrieve::{Request, retrieve_with};
use pfm::vector::{Encoder, Vector};
use pfm_dense::MiniLm;
use pfm_synth::SynthFact;

use super::{elapsed_ns, histogram};

/// Facts embedded by the model in each row (the rest replay their vectors).
pub const EMBEDDED: usize = 1_000;
/// The ranking depth of the int8-against-f32 comparison.
const RECALL_AT: usize = 10;

/// What `--dense` adds to a row.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DenseRow {
    /// Facts embedded by MiniLM (the rest replay their vectors).
    pub embedded: usize,
    /// The model's cost per fact on the write path, in batches of
    /// [`pfm_dense::BATCH`] on one thread, milliseconds.
    pub embed_ms_per_fact: f64,
    /// Query encoding (one sentence, two intra-op threads), microseconds.
    pub encode_p50_us: f64,
    /// 99th percentile.
    pub encode_p99_us: f64,
    /// The `dense_validity` call given the query vector (exact scan, top 50, block).
    pub scan_p50_us: f64,
    /// 99th percentile.
    pub scan_p99_us: f64,
    /// The whole dense call: encoding plus scan, per query.
    pub dense_p50_us: f64,
    /// 99th percentile.
    pub dense_p99_us: f64,
    /// The whole `hybrid_validity` call: encoding plus BM25 and scan, fused.
    pub hybrid_p50_us: f64,
    /// 99th percentile.
    pub hybrid_p99_us: f64,
    /// Vector bytes per fact: the segments' scan rows, the only copy.
    pub vector_bytes_per_fact: f64,
    /// Mean overlap of the int8 and f32 top 10 over the embedded facts.
    pub int8_recall_at_10: f64,
}

/// An encoder that hands out precomputed vectors: a text that was embedded
/// gets its own vector; any other gets the next one in turn, cyclically
/// (see the module docs). Matching by text, not by call order, keeps each
/// embedded fact paired with its vector when the store absorbs
/// near-duplicate facts instead of recording them (the narrow vocabulary
/// has many).
pub struct Replay {
    own: HashMap<String, usize>,
    vectors: Vec<Vec<f32>>,
    next: usize,
}

impl Replay {
    /// Embeds the first `min(M, facts)` facts with `model` and returns the
    /// replaying encoder and the model's milliseconds per fact.
    pub fn embed(facts: &[SynthFact], m: usize, model: &mut MiniLm) -> Result<(Replay, f64)> {
        let texts: Vec<&str> = facts.iter().take(m).map(|f| f.text.as_str()).collect();
        if texts.is_empty() {
            return Err(Error::InvalidConfig(
                "--dense needs at least one fact".into(),
            ));
        }
        let t = Instant::now();
        let vectors = model.encode(&texts)?;
        let per_fact = t.elapsed().as_secs_f64() * 1e3 / texts.len() as f64;
        Ok((Replay::new(&texts, vectors), per_fact))
    }

    fn new(texts: &[&str], vectors: Vec<Vec<f32>>) -> Replay {
        let own = texts
            .iter()
            .enumerate()
            .map(|(i, t)| ((*t).to_owned(), i))
            .collect();
        Replay {
            own,
            vectors,
            next: 0,
        }
    }

    /// The really embedded vectors, in fact order.
    pub fn vectors(&self) -> &[Vec<f32>] {
        &self.vectors
    }
}

impl Encoder for Replay {
    fn dim(&self) -> usize {
        pfm_dense::DIM
    }

    fn encode(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|text| {
                let i = self.own.get(*text).copied().unwrap_or_else(|| {
                    self.next += 1;
                    (self.next - 1) % self.vectors.len()
                });
                self.vectors[i].clone()
            })
            .collect())
    }
}

/// Times the dense and hybrid arms on `version` for the `timed` requests
/// after the `warm_up` ones (the lexical pass's), and compares int8 with
/// f32 over `embedded`.
pub fn measure(
    version: &IndexVersion,
    warm_up: &[Request],
    timed: &[Request],
    embedded: &[Vec<f32>],
    embed_ms_per_fact: f64,
    vector_bytes: usize,
) -> Result<DenseRow> {
    let mut model = MiniLm::locate(2)?;
    let dense = Ranker::named("dense_validity")?;
    let hybrid = Ranker::named("hybrid_validity")?;
    let mut scratch = Scratch::default();
    let mut encode = |r: &Request| -> Result<(Vec<f32>, u64)> {
        let t = Instant::now();
        let mut v = model.encode(&[r.context.as_str()])?;
        let ns = elapsed_ns(t);
        v.pop()
            .map(|v| (v, ns))
            .ok_or_else(|| Error::DenseUnavailable("the model returned no vector".into()))
    };
    let mut call = |r: &Request, ranker: &Ranker, v: &std::sync::Arc<Vector>| -> Result<u64> {
        let request = r.clone().with_ranker(ranker.clone()).with_vector(v.clone());
        let t = Instant::now();
        retrieve_with(version, &request, &mut scratch)?;
        Ok(elapsed_ns(t))
    };
    for r in warm_up {
        let v = std::sync::Arc::new(Vector::quantize(&encode(r)?.0));
        call(r, &dense, &v)?;
        call(r, &hybrid, &v)?;
    }
    let [mut enc, mut scan, mut whole, mut fused] = [(); 4].map(|()| histogram());
    let mut recall = 0.0;
    for r in timed {
        let (v, encode_ns) = encode(r)?;
        recall += overlap(&v, embedded);
        let v = std::sync::Arc::new(Vector::quantize(&v));
        let scan_ns = call(r, &dense, &v)?;
        let hybrid_ns = call(r, &hybrid, &v)?;
        enc.saturating_record(encode_ns);
        scan.saturating_record(scan_ns);
        whole.saturating_record(encode_ns + scan_ns);
        fused.saturating_record(encode_ns + hybrid_ns);
    }
    let n = version.active.live_docs().max(1) as f64;
    let us = |h: &Histogram<u64>, q: f64| h.value_at_quantile(q) as f64 / 1e3;
    Ok(DenseRow {
        embedded: embedded.len(),
        embed_ms_per_fact,
        encode_p50_us: us(&enc, 0.5),
        encode_p99_us: us(&enc, 0.99),
        scan_p50_us: us(&scan, 0.5),
        scan_p99_us: us(&scan, 0.99),
        dense_p50_us: us(&whole, 0.5),
        dense_p99_us: us(&whole, 0.99),
        hybrid_p50_us: us(&fused, 0.5),
        hybrid_p99_us: us(&fused, 0.99),
        vector_bytes_per_fact: vector_bytes as f64 / n,
        int8_recall_at_10: recall / timed.len().max(1) as f64,
    })
}

/// The share of `query`'s exact f32 top [`RECALL_AT`] over `rows` that its
/// int8 top [`RECALL_AT`] keeps.
fn overlap(query: &[f32], rows: &[Vec<f32>]) -> f64 {
    let q8 = Vector::quantize(query);
    let exact = top(rows
        .iter()
        .map(|r| r.iter().zip(query).map(|(a, b)| a * b).sum()));
    let int8 = top(rows.iter().map(|r| Vector::quantize(r).dot(&q8)));
    let kept = int8.iter().filter(|i| exact.contains(i)).count();
    kept as f64 / exact.len().max(1) as f64
}

/// The indices of the [`RECALL_AT`] largest scores (ties to the lower index).
fn top(scores: impl Iterator<Item = f32>) -> Vec<usize> {
    let mut s: Vec<(usize, f32)> = scores.enumerate().collect();
    s.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    s.into_iter().take(RECALL_AT).map(|(i, _)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_is_one_for_clear_winners_and_counts_losses() {
        let rows: Vec<Vec<f32>> = (0..20)
            .map(|i| vec![i as f32 / 20.0, 1.0 - i as f32 / 20.0])
            .collect();
        // The top 10 by x are rows 10..20 under both scores.
        assert_eq!(overlap(&[1.0, 0.0], &rows), 1.0);
        assert_eq!(top([0.1, 0.3, 0.2].into_iter()), vec![1, 2, 0]);
    }

    #[test]
    fn replay_pairs_embedded_texts_with_their_vectors_and_cycles_the_rest() {
        let mut replay = Replay::new(&["a", "b"], vec![vec![1.0], vec![2.0]]);
        let got = replay.encode(&["b", "x", "y", "a", "z"]).unwrap();
        assert_eq!(got, [[2.0], [1.0], [2.0], [1.0], [1.0]]);
    }
}
