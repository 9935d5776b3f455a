//! Dense vectors of facts and queries, and the encoder that makes them.
//!
//! The core library holds vectors and scans them; it never runs a model.
//! An [`Encoder`] (the `pfm-dense` crate's MiniLM, or a test's) is attached
//! to a [`crate::memory::Memory`], which embeds each new fact on the write
//! path, in one batch per commit, and lists the vectors with the fact in the
//! index (a version never mixes vectors of two states: they are part of the
//! segments). Query vectors are made by whoever runs the request (a
//! retrieval worker, the harness) and travel in [`crate::retrieve::Request`].
//!
//! # Storage
//! A vector is stored int8: `x ≈ scale · q` with `scale = max|x| / 127`
//! (per vector; MiniLM's outputs are L2-normalized, so the largest component
//! sets the grid). 384 dimensions cost 388 bytes rather than 1,536; the
//! ranking it gives is measured against the f32 one in `pfm-dense`'s tests.
//! Scores are the int8 dot product times both scales, which for normalized
//! inputs approximates cosine similarity.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::fact::{FactBody, FactId};

/// One int8-quantized vector (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Vector {
    scale: f32,
    data: Box<[i8]>,
}

impl Vector {
    /// Quantizes `x` (any length; all-zero gives a zero vector).
    pub fn quantize(x: &[f32]) -> Vector {
        let max = x.iter().fold(0f32, |m, v| m.max(v.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
        Vector {
            scale,
            data: x
                .iter()
                .map(|v| (v / scale).round().clamp(-127.0, 127.0) as i8)
                .collect(),
        }
    }

    /// A vector from its scale and components, as [`Vector::scale`] and
    /// [`Vector::data`] give them.
    pub fn from_parts(scale: f32, data: &[i8]) -> Vector {
        Vector {
            scale,
            data: data.into(),
        }
    }

    /// Number of dimensions.
    pub fn dim(&self) -> usize {
        self.data.len()
    }

    /// The approximate dot product with `other` (0 when the dimensions differ).
    #[inline]
    pub fn dot(&self, other: &Vector) -> f32 {
        if self.data.len() != other.data.len() {
            return 0.0;
        }
        similarity(dot_i8(&self.data, &other.data), self.scale, other)
    }

    /// The quantized components.
    pub fn data(&self) -> &[i8] {
        &self.data
    }

    /// The scale: component `i` is about `scale · data[i]`.
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// Bytes this vector occupies on the heap and inline.
    pub fn bytes(&self) -> usize {
        std::mem::size_of::<Vector>() + self.data.len()
    }
}

/// The exact dot product of two int8 slices of equal length, in i32
/// (|sum| <= 384 · 127² fits easily). A plain zip: the compiler vectorizes
/// it for whatever instruction set the caller is compiled for (see [`dots`]).
#[inline(always)]
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum()
}

/// The approximate dot product of a stored row with `query`, from their
/// exact int8 dot product `dot` and the row's scale: the score of the dense
/// arms, and of [`Vector::dot`].
#[inline]
pub fn similarity(dot: i32, row_scale: f32, query: &Vector) -> f32 {
    dot as f32 * row_scale * query.scale
}

/// The exact int8 dot products of `query` with consecutive rows of `rows`
/// (each `query.len()` long), into `out` (one per row; rows past
/// `out.len()` are not read). The dense arms' scan kernel.
///
/// The body is [`dot_i8`]'s plain loop, compiled three times: for AVX-512BW,
/// for AVX2 and for the baseline target, and the widest the CPU supports is
/// chosen at run time. A baseline x86-64 build only has SSE2, which widens
/// i8 products badly; measured on 100,000 × 384 rows here, the same loop takes
/// 19.8 ms baseline, 2.4 ms as AVX2 and 1.6 ms as AVX-512. Hand-written
/// intrinsics were not faster than the compiler's code for these targets.
pub fn dots(rows: &[i8], query: &[i8], out: &mut [i32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512bw") {
            // SAFETY: the CPU supports AVX-512F and BW (BW implies F).
            return unsafe { dots_avx512(rows, query, out) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2.
            return unsafe { dots_avx2(rows, query, out) };
        }
    }
    dots_baseline(rows, query, out);
}

#[inline(always)]
fn dots_baseline(rows: &[i8], query: &[i8], out: &mut [i32]) {
    if query.is_empty() {
        out.fill(0);
        return;
    }
    for (row, o) in rows.chunks_exact(query.len()).zip(out.iter_mut()) {
        *o = dot_i8(row, query);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
fn dots_avx512(rows: &[i8], query: &[i8], out: &mut [i32]) {
    dots_baseline(rows, query, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dots_avx2(rows: &[i8], query: &[i8], out: &mut [i32]) {
    dots_baseline(rows, query, out);
}

/// The vectors of one fact: its text, and (when the store keeps them for the
/// `_p` arms) its text with its participants' names.
#[derive(Clone, Debug, PartialEq)]
pub struct DocVectors {
    /// The embedding of the fact's text.
    pub text: Vector,
    /// The embedding of the text followed by the participants' names.
    pub with_participants: Option<Vector>,
}

/// A fact's vectors on their way into a segment (a segment copies them into
/// its [`Matrix`](crate::index::segment::Matrix) rows; the rows are then
/// the only copy).
pub type SharedVectors = Arc<DocVectors>;

/// A text encoder: sentences in, one vector per sentence out, all of
/// [`Encoder::dim`] components. Takes `&mut self` because model sessions
/// are not shareable (fastembed's `embed` takes `&mut self`); the write path
/// owns one, and each retrieval worker owns its own.
pub trait Encoder: Send + Sync {
    /// Number of dimensions of every vector it returns.
    fn dim(&self) -> usize;
    /// Embeds `texts`, in order.
    fn encode(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
}

/// A store's encoder and the vectors of the commit being applied. Owned by
/// the single writer ([`crate::memory::Memory`]). It keeps no vector past
/// its commit: once a fact is listed, its vectors live in the segments'
/// scan matrices only, and re-listing it copies them back out of the index
/// (one copy per fact, 388 bytes at 384 dimensions).
pub struct VectorStore {
    encoder: Box<dyn Encoder>,
    participants: bool,
    /// Vectors made for the commit being applied, until its documents are
    /// built.
    recent: FxHashMap<FactId, SharedVectors>,
    missed: u64,
}

impl std::fmt::Debug for VectorStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorStore")
            .field("dim", &self.encoder.dim())
            .field("participants", &self.participants)
            .field("recent", &self.recent.len())
            .field("missed", &self.missed)
            .finish()
    }
}

impl VectorStore {
    /// A store over `encoder`; `participants` also embeds each fact's text
    /// with its participants' names (for the `_p` arms: twice the vectors).
    pub fn new(encoder: Box<dyn Encoder>, participants: bool) -> Self {
        VectorStore {
            encoder,
            participants,
            recent: FxHashMap::default(),
            missed: 0,
        }
    }

    /// Embeds `texts` with the store's encoder (soft key identity's phrase
    /// embeddings: `memory::PhraseCache`).
    pub fn encode(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.encoder.encode(texts)
    }

    /// Embeds `facts` (those not embedded for this commit yet) in one
    /// encoder call. This runs after their commit, which cannot be undone:
    /// if the encoder fails, the facts stay lexical-only, the failure is
    /// counted ([`VectorStore::missed`]) and returned for the caller to
    /// report.
    pub fn embed(&mut self, facts: &[&FactBody]) -> Result<()> {
        let new: Vec<&FactBody> = facts
            .iter()
            .copied()
            .filter(|f| !self.recent.contains_key(&f.id))
            .collect();
        if new.is_empty() {
            return Ok(());
        }
        let with_p: Vec<String> = if self.participants {
            new.iter()
                .map(|f| with_participants(f.text(), f.participants()))
                .collect()
        } else {
            Vec::new()
        };
        let refs: Vec<&str> = new
            .iter()
            .map(|f| f.text())
            .chain(with_p.iter().map(String::as_str))
            .collect();
        let vectors = match self.encoder.encode(&refs) {
            Ok(v) if v.len() == refs.len() => v,
            Ok(v) => {
                self.missed += new.len() as u64;
                return Err(Error::DenseUnavailable(format!(
                    "the encoder returned {} vectors for {} texts",
                    v.len(),
                    refs.len()
                )));
            }
            Err(e) => {
                self.missed += new.len() as u64;
                return Err(e);
            }
        };
        let (text, with_p) = vectors.split_at(new.len());
        for (i, f) in new.iter().enumerate() {
            let v = DocVectors {
                text: Vector::quantize(&text[i]),
                with_participants: with_p.get(i).map(|v| Vector::quantize(v)),
            };
            self.recent.insert(f.id, Arc::new(v));
        }
        Ok(())
    }

    /// A fact's vectors if they were made for this commit.
    pub fn get(&self, id: FactId) -> Option<SharedVectors> {
        self.recent.get(&id).cloned()
    }

    /// Drops this commit's vectors once its documents are built.
    pub fn clear_recent(&mut self) {
        self.recent.clear();
    }

    /// Forgets an erased fact's vectors (if made for this commit).
    pub fn remove(&mut self, id: FactId) {
        self.recent.remove(&id);
    }

    /// Facts left without vectors because the encoder failed.
    pub fn missed(&self) -> u64 {
        self.missed
    }
}

/// The text a fact is embedded from for the `_p` arms, and the query text
/// of a `_p` request: the text, then the participants' names.
pub fn with_participants<S: AsRef<str>>(text: &str, participants: &[S]) -> String {
    let mut out = String::with_capacity(text.len() + 16 * participants.len());
    out.push_str(text);
    for p in participants {
        out.push(' ');
        out.push_str(p.as_ref());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int8_dot_is_exact() {
        for len in [0, 5, 32, 45, 384] {
            let a: Vec<i8> = (0..len).map(|i| (i * 37 % 255 - 127) as i8).collect();
            let b: Vec<i8> = (0..len).map(|i| (i * 91 % 255 - 127) as i8).collect();
            let naive: i32 = a
                .iter()
                .zip(&b)
                .map(|(x, y)| i32::from(*x) * i32::from(*y))
                .sum();
            assert_eq!(dot_i8(&a, &b), naive, "len {len}");
        }
    }

    #[test]
    fn every_scan_kernel_matches_the_plain_dot() {
        let dim = 45;
        let rows: Vec<i8> = (0..dim * 7).map(|i| (i * 53 % 255) as i8).collect();
        let query: Vec<i8> = (0..dim).map(|i| (i * 29 % 255) as i8).collect();
        let want: Vec<i32> = rows.chunks(dim).map(|r| dot_i8(r, &query)).collect();
        let mut got = vec![0; 7];
        dots(&rows, &query, &mut got);
        assert_eq!(got, want);
        dots_baseline(&rows, &query, &mut got);
        assert_eq!(got, want);
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                got.fill(0);
                // SAFETY: checked just above.
                unsafe { dots_avx2(&rows, &query, &mut got) };
                assert_eq!(got, want);
            }
            if std::arch::is_x86_feature_detected!("avx512bw") {
                got.fill(0);
                // SAFETY: checked just above.
                unsafe { dots_avx512(&rows, &query, &mut got) };
                assert_eq!(got, want);
            }
        }
        let mut short = vec![0; 3];
        dots(&rows, &query, &mut short);
        assert_eq!(short, want[..3]);
    }

    #[test]
    fn quantized_dot_tracks_the_exact_one() {
        let a: Vec<f32> = (0..384)
            .map(|i| ((i * 7 % 13) as f32 - 6.0) / 40.0)
            .collect();
        let b: Vec<f32> = (0..384)
            .map(|i| ((i * 5 % 11) as f32 - 5.0) / 35.0)
            .collect();
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let approx = Vector::quantize(&a).dot(&Vector::quantize(&b));
        assert!(
            (exact - approx).abs() < 0.01 * exact.abs().max(1.0),
            "{exact} vs {approx}"
        );
        assert_eq!(
            Vector::quantize(&[0.0; 4]).dot(&Vector::quantize(&[1.0; 4])),
            0.0
        );
        assert_eq!(
            Vector::quantize(&[1.0; 3]).dot(&Vector::quantize(&[1.0; 4])),
            0.0
        );
        assert_eq!(
            with_participants("moved to Lisbon", &["Ana Ruiz"]),
            "moved to Lisbon Ana Ruiz"
        );
    }
}
