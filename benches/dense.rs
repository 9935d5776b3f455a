//! What's measured (issue 20's targets; `scripts/fetch-models` first):
//! - `dense/encode_query`: MiniLM (fp32, two intra-op threads) encoding one
//!   11-word query (target: p50 <= 2 ms).
//! - `dense/embed_batch32`: the write path's embedding of 32 corpus facts in
//!   one call, one session on one thread; divide by 32 for a fact (target:
//!   <= 0.5 ms a fact).
//! - `dense/scan_100k`: `dense_validity` on 100,000 active facts — the exact
//!   int8 scan, top-50 and the block — with the query vector given (target:
//!   <= 3 ms).
//! - `dense/hybrid_100k`: the whole `hybrid_validity` call on the same store,
//!   the query's encoding included (target: p50 <= 5 ms).
//! - `dense/bm25_validity_100k`, `dense/pfm_100k`: the lexical arms on the
//!   same store and queries, side by side.
//!
//! Corpus: seed 7, wide vocabulary (`shared/specs/synthetic-corpus.md`),
//! 100,000 keyless facts. Their vectors for the scan benches come from a
//! deterministic stand-in encoder (pseudo-random unit vectors), because
//! embedding 100,000 facts with MiniLM takes minutes and the scan's cost
//! does not depend on the values; `encode_query` and `hybrid_100k` use the
//! real model. The vector memory per fact is printed at the start.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pfm::rank::Ranker;
use pfm::retrieve::Request;
use pfm::vector::{Encoder, Vector};
use pfm::{Config, Memory, WallTime};
use pfm_dense::MiniLm;
use pfm_synth::{SplitMix64, Vocabulary};

const QUERIES: [&str; 4] = [
    "remind me what we decided about the quarterly planning offsite next week",
    "what did Dana say about the vendor contract renewal deadline again",
    "where are we meeting for the design review with the platform team",
    "how much budget is left for the analytics migration this quarter",
];

/// Pseudo-random unit vectors seeded by the text (the scan benches' stand-in).
struct Hashed;

impl Encoder for Hashed {
    fn dim(&self) -> usize {
        pfm_dense::DIM
    }
    fn encode(&mut self, texts: &[&str]) -> pfm::error::Result<Vec<Vec<f32>>> {
        Ok(texts
            .iter()
            .map(|t| {
                let seed = t.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
                });
                let mut rng = SplitMix64::new(seed);
                let v: Vec<f32> = (0..pfm_dense::DIM)
                    .map(|_| (rng.uniform(2001) as f32 - 1000.0) / 1000.0)
                    .collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.into_iter().map(|x| x / norm).collect()
            })
            .collect())
    }
}

fn model(threads: usize) -> MiniLm {
    MiniLm::locate(threads).unwrap_or_else(|e| panic!("{e}"))
}

fn store() -> (Memory, Vec<String>) {
    let (facts, _) = pfm_synth::generate(100_000, 7, Vocabulary::Wide, 0);
    let mut memory = Memory::new(Config::default()).expect("default config is valid");
    memory
        .set_encoder(Box::new(Hashed), false)
        .expect("the stand-in encodes");
    for chunk in facts.chunks(1000) {
        memory
            .observe_batch(chunk.iter().map(|f| f.observation()).collect())
            .expect("corpus observations are valid");
    }
    memory.wait_for_merges();
    let texts = facts.iter().take(320).map(|f| f.text.clone()).collect();
    let (embedded, bytes) = memory.vector_footprint();
    eprintln!(
        "vectors: {embedded} facts, {:.0} bytes a fact (int8 text rows and scales, the only copy)",
        bytes as f64 / embedded.max(1) as f64
    );
    (memory, texts)
}

fn request(i: usize, ranker: &Ranker, vector: Option<Arc<Vector>>) -> Request {
    let mut r = Request::new(
        QUERIES[i % QUERIES.len()],
        WallTime::parse("2026-06-01").expect("a date"),
    )
    .with_ranker(ranker.clone());
    r.vector = vector;
    r
}

fn dense(c: &mut Criterion) {
    let mut encoder = model(2);
    let mut group = c.benchmark_group("dense");
    let mut i = 0;
    group.bench_function("encode_query", |b| {
        b.iter(|| {
            i += 1;
            black_box(
                encoder
                    .encode(&[QUERIES[i % QUERIES.len()]])
                    .expect("encodes"),
            )
        })
    });

    let (memory, texts) = store();
    let mut writer = model(1);
    let batches: Vec<Vec<&str>> = texts
        .chunks(32)
        .map(|c| c.iter().map(String::as_str).collect())
        .collect();
    group.throughput(Throughput::Elements(32));
    group.bench_function("embed_batch32", |b| {
        b.iter(|| {
            i += 1;
            black_box(writer.encode(&batches[i % batches.len()]).expect("encodes"))
        })
    });
    group.throughput(Throughput::Elements(1));

    let vectors: Vec<Arc<Vector>> = QUERIES
        .iter()
        .map(|q| Arc::new(Vector::quantize(&Hashed.encode(&[q]).expect("encodes")[0])))
        .collect();
    let version = memory.version();
    let dense = Ranker::named("dense_validity").expect("a ranker");
    group.bench_function("scan_100k", |b| {
        b.iter(|| {
            i += 1;
            let r = request(i, &dense, Some(vectors[i % vectors.len()].clone()));
            black_box(pfm::retrieve::retrieve(&version, &r).expect("retrieves"))
        })
    });
    let hybrid = Ranker::named("hybrid_validity").expect("a ranker");
    group.bench_function("hybrid_100k", |b| {
        b.iter(|| {
            i += 1;
            let q = QUERIES[i % QUERIES.len()];
            let v = Vector::quantize(&encoder.encode(&[q]).expect("encodes")[0]);
            let r = request(i, &hybrid, Some(Arc::new(v)));
            black_box(pfm::retrieve::retrieve(&version, &r).expect("retrieves"))
        })
    });
    for name in ["bm25_validity", "pfm"] {
        let ranker = Ranker::named(name).expect("a ranker");
        group.bench_function(format!("{name}_100k"), |b| {
            b.iter(|| {
                i += 1;
                black_box(
                    pfm::retrieve::retrieve(&version, &request(i, &ranker, None))
                        .expect("retrieves"),
                )
            })
        });
    }
    group.finish();
}

criterion_group!(benches, dense);
criterion_main!(benches);
