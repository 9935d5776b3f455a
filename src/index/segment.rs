//! An immutable index segment: the documents of some facts, their BM25F
//! postings over three fields, per-term statistics, and the attributes the
//! ranker multiplies in (recency, usage, graph nodes).
//!
//! # Invariants
//! 1. Documents are sorted by `FactId`; a segment never holds two documents
//!    of one fact.
//! 2. Each term's postings are sorted by local document id.
//! 3. `presence[t][p - 1]` counts the documents whose fields containing `t`
//!    form the bit pattern `p` (bit 0 text, 1 entities, 2 participants), so a
//!    ranker that uses any subset of fields gets its exact document frequency.
//! 4. `rec[d] = 2^((s_d - A) / T_rec)` for the fixed [`TIME_ANCHOR`] `A`, so
//!    the recency decay at query time `t` is `rec[d] · 2^-((t - A) / T_rec)`:
//!    one `exp2` per query instead of one per document. `use_lin` likewise
//!    holds `U_d · 2^((u_d - A) / T_u)`. One anchor for every segment makes
//!    the product, and so every score, bit-identical however the index is
//!    cut into segments. In `f64` the factors stay finite for times within
//!    about 1,000 half-lives of `A` (2025 ± 39 years at the 14-day usage
//!    half-life, ± 84 years for recency).
//! 5. The forward data of document `d` ([`Segment::record`]) is the transpose
//!    of the postings: `(t, tf)` is among its terms, listed by ascending term
//!    id, exactly when `d` is on `t`'s posting list with frequencies `tf`.
//! 6. Bounds for pruning without reading a record: the anchored recency of
//!    every document of block `d >> BLOCK_SHIFT` is at most that block's
//!    [`Segment::block_rec`], and that of every posting's document at most
//!    its chunk's [`Segment::chunk_rec`]; a term on at least one document in [`DENSE`]
//!    has a bitmap ([`Segment::bitmap`]) whose bit `d` is set exactly when
//!    `d` is on its posting list.
//!
//! Built by [`Segment::build`]; checked by the unit tests below and by
//! `tests/index.rs`, which compares every layout of segments with one segment.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::deletes::DeleteSet;
use super::fact_ids::FactIds;
use super::inputs::IndexInputs;
use super::postings::{ONCE_IN, PackedPostings, Postings};
use super::prefetch::prefetch;
use super::presence::Presence;
use super::terms::Terms;
use crate::config::ScoreParams;
use crate::fact::{Fact, FactBody, FactId, Said, Usage, name_key};
use crate::graph::NodeId;
use crate::text;
use crate::time::{DAY_MS, WallTime};
use crate::vector::{DocVectors, SharedVectors, Vector};

/// Number of BM25F fields: text, entities, participants.
pub const FIELDS: usize = 3;

/// A posting: a document and the term's frequency in each field (saturating
/// at 255, far above where BM25 saturates).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posting {
    /// Local document id.
    pub doc: u32,
    /// Term frequency per field.
    pub tf: [u8; FIELDS],
}

/// Mutable per-document attributes the ranker reads, in absolute form.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DocAttrs {
    /// `s_f`, the fact's last observation.
    pub last_observed: WallTime,
    /// The fact's decayed usage count.
    pub usage: Usage,
}

/// A document's ranking attributes as a segment is built from them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Attrs {
    /// In absolute form, as the ledger holds them.
    Observed(DocAttrs),
    /// Already anchored (invariant 4), as a segment holds them: what a merge
    /// copies, so a segment keeps no absolute copy of its own.
    Anchored {
        /// `2^((s_d - A) / T_rec)`.
        rec: f64,
        /// `U_d · 2^((u_d - A) / T_u)`.
        use_lin: f64,
    },
}

impl Attrs {
    /// The anchored recency and usage (invariant 4) under `params`.
    fn anchored(self, params: &ScoreParams) -> (f64, f64) {
        match self {
            Attrs::Observed(a) => {
                let rec =
                    half_lives(a.last_observed, TIME_ANCHOR, params.recency_half_life_days).exp2();
                let u = a.usage;
                let use_lin = if u.value == 0.0 {
                    0.0
                } else {
                    u.value * half_lives(u.at, TIME_ANCHOR, params.usage_half_life_days).exp2()
                };
                (rec, use_lin)
            }
            Attrs::Anchored { rec, use_lin } => (rec, use_lin),
        }
    }
}

/// What the index needs to list one fact.
#[derive(Clone, Debug)]
pub struct DocInput {
    /// The fact's content (shared with the ledger).
    pub body: Arc<FactBody>,
    /// Its ranking attributes.
    pub attrs: Attrs,
    /// Graph nodes of its entities and participants.
    pub nodes: Box<[NodeId]>,
    /// Its dense vectors, when the store has an encoder.
    pub vectors: Option<SharedVectors>,
}

impl DocInput {
    /// A fact as the index lists it, with its graph nodes.
    pub fn of(fact: &Fact, nodes: Box<[NodeId]>) -> DocInput {
        DocInput {
            body: fact.body.clone(),
            attrs: Attrs::Observed(DocAttrs {
                last_observed: fact.state.last_observed,
                usage: fact.state.extras.usage(),
            }),
            nodes,
            vectors: None,
        }
    }
}

/// Calls `f(term, tf_per_field)` once per distinct term of a fact, in term
/// order, and returns the per-field token counts. Text is normalized and
/// stop words are dropped; entity and participant names are tokenized from
/// their canonical forms; every token is taken in its index form
/// ([`ScoreParams::index_form`]).
pub fn for_each_term(
    body: &FactBody,
    params: &ScoreParams,
    mut f: impl FnMut(&str, [u8; FIELDS]),
) -> [u16; FIELDS] {
    thread_local! {
        static SCRATCH: RefCell<TermScratch> = RefCell::default();
    }
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut scratch) => scratch.for_each_term(body, params, &mut f),
        // Only a callback that itself lists a fact's terms gets here.
        Err(_) => TermScratch::default().for_each_term(body, params, &mut f),
    })
}

/// [`for_each_term`]'s buffers, kept per thread: it runs on every fact a
/// commit indexes, and a fresh token list with an allocated string per
/// stemmed word each time was a twentieth of a bulk build (issue 24).
#[derive(Debug, Default)]
struct TermScratch {
    /// The index forms of the fact's tokens, end to end.
    forms: String,
    /// Each token's form as a range of `forms`, with its field.
    tokens: Vec<(u32, u32, u8)>,
}

impl TermScratch {
    fn for_each_term(
        &mut self,
        body: &FactBody,
        params: &ScoreParams,
        f: &mut impl FnMut(&str, [u8; FIELDS]),
    ) -> [u16; FIELDS] {
        self.forms.clear();
        self.tokens.clear();
        let norm = text::normalize(body.text());
        self.push(text::content_tokens(&norm), 0, params);
        for e in body.entities().iter() {
            self.push(text::tokens(e), 1, params);
        }
        for p in body.participants().iter() {
            self.push(text::tokens(&name_key(p)), 2, params);
        }
        let mut lens = [0u16; FIELDS];
        for &(_, _, field) in &self.tokens {
            lens[usize::from(field)] = lens[usize::from(field)].saturating_add(1);
        }
        let forms = self.forms.as_str();
        let form = |&(start, end, _): &(u32, u32, u8)| &forms[start as usize..end as usize];
        self.tokens
            .sort_unstable_by(|a, b| form(a).cmp(form(b)).then(a.2.cmp(&b.2)));
        let mut i = 0;
        while i < self.tokens.len() {
            let term = form(&self.tokens[i]);
            let mut tf = [0u8; FIELDS];
            while i < self.tokens.len() && form(&self.tokens[i]) == term {
                let field = usize::from(self.tokens[i].2);
                tf[field] = tf[field].saturating_add(1);
                i += 1;
            }
            f(term, tf);
        }
        lens
    }

    /// Appends the index forms of `tokens`, all in `field`.
    fn push<'a>(&mut self, tokens: impl Iterator<Item = &'a str>, field: u8, params: &ScoreParams) {
        for token in tokens {
            let start = self.forms.len() as u32;
            text::push_index_form(token, params.stem, &mut self.forms);
            self.tokens.push((start, self.forms.len() as u32, field));
        }
    }
}

/// The field-presence pattern of a posting, in `1..=7`.
#[inline]
pub fn pattern(tf: [u8; FIELDS]) -> usize {
    usize::from(tf[0] > 0) | usize::from(tf[1] > 0) << 1 | usize::from(tf[2] > 0) << 2
}

/// Document frequency from presence counts for the fields in `mask`.
#[inline]
pub fn df_for_mask(presence: &[u32; 7], mask: usize) -> u32 {
    (1..=7)
        .filter(|p| p & mask != 0)
        .map(|p| presence[p - 1])
        .sum()
}

/// The anchor `A` of invariant 4: 2025-01-01T00:00:00Z.
pub const TIME_ANCHOR: WallTime = WallTime::from_millis(1_735_689_600_000);

/// Documents per recency block (invariant 6): `1 << BLOCK_SHIFT`.
const BLOCK_SHIFT: u32 = 6;

/// Postings per recency chunk (invariant 6).
pub const CHUNK: usize = 128;

/// A term on at least one document in `DENSE` also gets a bitmap
/// (invariant 6); it then costs at most as much memory as its postings.
pub const DENSE: usize = 64;

/// The bitmap index of a sparse term (one without a bitmap).
const SPARSE: u32 = u32::MAX;

/// The words of a document's record header in `Segment::records`, by
/// position; the graph nodes follow it, then the term entries (invariant 5,
/// [`entry`]).
mod header {
    /// Anchored recency (an `f64`): its low 32 bits.
    pub const RECENCY_LO: usize = 0;
    /// Anchored recency: its high 32 bits.
    pub const RECENCY_HI: usize = 1;
    /// How many graph nodes follow the header.
    pub const NODES: usize = 2;
    /// How many terms the record lists (one entry word each); their
    /// overflow words fill the record up to the next one's start.
    pub const TERMS: usize = 3;
    /// The header's size in words.
    pub const WORDS: usize = 4;
}

/// A document's terms in its record: one entry word per term, by ascending
/// term id, then overflow words for the few terms that need them. Half the
/// eight bytes an `[id, tf]` pair took (issue 24).
///
/// An entry is `id << 3 | fields`, so a scan compares ids without decoding
/// and steps one word at a time: each next address is known before the
/// last word is read. With `fields` non-zero, the term is once in each field
/// whose bit is set and nowhere else (almost every term of a short fact).
/// With `fields` 0, its frequencies are in the overflow, packed
/// little-endian, one word per such entry in entry order. An id from
/// [`entry::HUGE`] up does not fit: its entry is `HUGE << 3` and its overflow is
/// two words, the id and the frequencies. Ids ascend, so such entries come
/// last and every other entry's overflow word is at the count of
/// `fields`-0 entries before it.
mod entry {
    use super::FIELDS;
    use crate::index::postings::once_in;

    /// The smallest id whose entry cannot hold it (`HUGE << 3` marks
    /// such an entry).
    pub use crate::index::postings::HUGE;

    /// Appends the entry of term `tid` with frequencies `tf` to `entries`,
    /// and its overflow, if any, to `overflow`.
    pub fn push(entries: &mut Vec<u32>, overflow: &mut Vec<u32>, tid: u32, tf: [u8; FIELDS]) {
        let [t0, t1, t2] = tf;
        let packed = u32::from_le_bytes([t0, t1, t2, 0]);
        if tid >= HUGE {
            entries.push(HUGE << 3);
            overflow.extend([tid, packed]);
            return;
        }
        match once_in(tf) {
            Some(bits) => entries.push(tid << 3 | bits),
            None => {
                entries.push(tid << 3);
                overflow.push(packed);
            }
        }
    }

    /// Frequencies packed little-endian in an overflow word.
    #[inline]
    pub fn unpack(w: u32) -> [u8; FIELDS] {
        let [t0, t1, t2, _] = w.to_le_bytes();
        [t0, t1, t2]
    }
}

/// A document's record: what the ranker reads per candidate besides its
/// postings, and its forward data (invariant 5).
#[derive(Clone, Copy, Debug)]
pub struct DocRecord<'a> {
    /// Anchored recency (invariant 4).
    pub recency: f64,
    /// Graph nodes of its entities and participants.
    pub nodes: &'a [NodeId],
    /// Its term entries, one per term by ascending id ([`entry`]).
    terms: &'a [u32],
    /// The overflow words of those entries that need them ([`entry`]),
    /// first; the slice runs on through the records after this one, of
    /// which nothing reads.
    overflow: &'a [u32],
}

/// A dense term's bitmap in one segment (invariant 6): bit `d` is set
/// exactly when document `d` has the term.
#[derive(Clone, Copy, Debug)]
pub struct Bitmap<'a>(&'a [u64]);

impl Bitmap<'_> {
    /// Whether document `doc` has the term.
    #[inline]
    pub fn contains(self, doc: u32) -> bool {
        self.0[doc as usize / 64] >> (doc % 64) & 1 != 0
    }
}

impl DocRecord<'_> {
    /// The document's per-field frequencies of a term id, if it has the term.
    #[inline]
    pub fn tf(&self, tid: u32) -> Option<[u8; FIELDS]> {
        if tid >= entry::HUGE {
            return self.huge_tf(tid);
        }
        // A fact has a few dozen terms at most: a scan beats a binary search.
        // A huge id's entry (`HUGE << 3`) is above every id that gets here.
        for (i, &w) in self.terms.iter().enumerate() {
            if w >> 3 >= tid {
                if w >> 3 != tid {
                    return None;
                }
                return Some(match w & 7 {
                    0 => {
                        let before = self.terms[..i].iter().filter(|&&e| e & 7 == 0).count();
                        entry::unpack(self.overflow[before])
                    }
                    fields => ONCE_IN[fields as usize],
                });
            }
        }
        None
    }

    /// [`DocRecord::tf`] of an id from [`entry::HUGE`] up: out of line, so
    /// that the common scan stays small enough to inline into the scorer.
    #[cold]
    #[inline(never)]
    fn huge_tf(&self, tid: u32) -> Option<[u8; FIELDS]> {
        self.terms().find(|&(t, _)| t == tid).map(|(_, tf)| tf)
    }

    /// Every `(term id, tf)` of the document, by ascending term id.
    pub fn terms(&self) -> impl Iterator<Item = (u32, [u8; FIELDS])> + '_ {
        let mut overflow = self.overflow;
        self.terms.iter().map(move |&w| {
            let mut next = || {
                let (&first, rest) = overflow.split_first().expect("an overflow word per entry");
                overflow = rest;
                first
            };
            match (w >> 3, w & 7) {
                (key, 0) if key < entry::HUGE => (key, entry::unpack(next())),
                (_, 0) => (next(), entry::unpack(next())),
                (key, fields) => (key, ONCE_IN[fields as usize]),
            }
        })
    }
}

static NEXT_SEGMENT_ID: AtomicU64 = AtomicU64::new(1);

/// A segment's vectors copied into rows, one per document in local id
/// order, so the exact scan reads memory sequentially rather than chasing a
/// pointer per document (a 100,000-fact scan is bound by those misses).
/// A document without vectors has a zero row and scale 0. `with_p` is empty
/// unless every document that has vectors has participant vectors too.
#[derive(Debug, Default)]
pub struct Matrix {
    /// Components per row (0: no document has vectors).
    pub dim: usize,
    /// Text rows, `dim` components each.
    pub text: Vec<i8>,
    /// Per row, its scale.
    pub text_scale: Vec<f32>,
    /// Text-plus-participants rows (or empty).
    pub with_p: Vec<i8>,
    /// Per row of `with_p`, its scale.
    pub with_p_scale: Vec<f32>,
}

impl Matrix {
    /// The vectors of local document `doc`, copied out of the rows (`None`
    /// when it has none).
    pub fn vectors(&self, doc: u32) -> Option<SharedVectors> {
        let d = doc as usize;
        let row = |rows: &[i8], scales: &[f32]| {
            let scale = *scales.get(d)?;
            (scale != 0.0)
                .then(|| Vector::from_parts(scale, &rows[d * self.dim..(d + 1) * self.dim]))
        };
        let text = row(&self.text, &self.text_scale)?;
        Some(Arc::new(DocVectors {
            text,
            with_participants: row(&self.with_p, &self.with_p_scale),
        }))
    }

    /// Whether local document `doc` has vectors.
    pub fn has(&self, doc: u32) -> bool {
        self.text_scale.get(doc as usize).is_some_and(|s| *s != 0.0)
    }

    /// Bytes of its rows and scales.
    pub fn bytes(&self) -> usize {
        self.text.len() + self.with_p.len() + 4 * (self.text_scale.len() + self.with_p_scale.len())
    }

    fn of(docs: &[DocInput]) -> Matrix {
        let Some(dim) = docs
            .iter()
            .find_map(|d| d.vectors.as_ref().map(|v| v.text.dim()))
        else {
            return Matrix::default();
        };
        let with_p = docs
            .iter()
            .filter_map(|d| d.vectors.as_ref())
            .all(|v| v.with_participants.as_ref().is_some_and(|p| p.dim() == dim));
        let mut m = Matrix {
            dim,
            ..Matrix::default()
        };
        let put =
            |rows: &mut Vec<i8>, scales: &mut Vec<f32>, v: Option<&crate::vector::Vector>| match v
                .filter(|v| v.dim() == dim)
            {
                Some(v) => {
                    rows.extend_from_slice(v.data());
                    scales.push(v.scale());
                }
                None => {
                    rows.resize(rows.len() + dim, 0);
                    scales.push(0.0);
                }
            };
        for d in docs {
            let v = d.vectors.as_deref();
            put(&mut m.text, &mut m.text_scale, v.map(|v| &v.text));
            if with_p {
                put(
                    &mut m.with_p,
                    &mut m.with_p_scale,
                    v.and_then(|v| v.with_participants.as_ref()),
                );
            }
        }
        m
    }
}

/// A segment's terms while it is built: their ids by name, and per id its
/// postings so far, presence counts and largest frequencies.
#[derive(Default)]
struct Dictionary {
    terms: Terms,
    lists: Vec<Vec<Posting>>,
    presence: Vec<[u32; 7]>,
    max_tf: Vec<[u8; FIELDS]>,
}

impl Dictionary {
    /// The id of a term, given the next one if it is new.
    fn id(&mut self, term: &str) -> u32 {
        let t = self.terms.id(term);
        if t as usize == self.lists.len() {
            self.lists.push(Vec::new());
            self.presence.push([0; 7]);
            self.max_tf.push([0; FIELDS]);
        }
        t
    }
}

/// An immutable segment.
#[derive(Debug)]
pub struct Segment {
    /// Unique per process; merge bookkeeping refers to segments by it.
    pub id: u64,
    fact_ids: FactIds,
    bodies: Vec<Arc<FactBody>>,
    /// Per document, when it was said ([`FactBody::said`]), and a hash of
    /// among whom: two columns, twelve bytes a document where a `Said`
    /// pads to sixteen.
    said_at: Vec<WallTime>,
    said_among: Vec<u32>,
    /// The documents' dense vectors, laid out for the exact scan (see
    /// [`Matrix`]): the only copy the store keeps of a listed fact's vectors.
    matrix: Matrix,
    /// Per-document token count per field.
    lens: Vec<[u16; FIELDS]>,
    /// Per-document length under the store's field weights: `Σ α_F · len_F`.
    dl: Vec<f32>,
    /// Start of each document's record in `records`.
    starts: Vec<u32>,
    /// Per block of documents, their largest anchored recency (invariant 6).
    block_rec: Vec<f64>,
    /// Per chunk of [`CHUNK`] consecutive postings (of any terms), the
    /// largest anchored recency of their documents (invariant 6).
    chunk_rec: Vec<f64>,
    /// The largest of `block_rec` (0 for an empty segment).
    max_rec: f64,
    /// The documents in increasing anchored recency (ties by id): a view
    /// finds its oldest and newest live document from either end.
    by_time: Box<[u32]>,
    /// Per term, its bitmap's index among `bitmaps` ([`SPARSE`]: a sparse
    /// term; four bytes a term where an `Option<u32>` took eight).
    dense: Vec<u32>,
    /// Bitmaps of the dense terms, `len.div_ceil(64)` words each.
    bitmaps: Vec<u64>,
    /// Anchored usage (invariant 4) per document; empty when no document
    /// has been used, which is most segments' case (eight bytes a document
    /// otherwise spent on zeros).
    use_lin: Vec<f64>,
    terms: Terms,
    /// Where each term's postings start in `postings`, and one more entry
    /// for the end of the last: term `t`'s are
    /// `posting_starts[t]..posting_starts[t + 1]`.
    posting_starts: Vec<u32>,
    presence: Presence,
    /// Per term, the largest frequency in each field (upper bounds for pruning).
    max_tf: Vec<[u8; FIELDS]>,
    /// Per term, the smallest length of each field among its documents
    /// (a lower bound on their BM25F length under any field weights).
    min_lens: Vec<[u16; FIELDS]>,
    postings: PackedPostings,
    /// Per document, in one place so that a candidate costs one cache miss:
    /// a header (see `header`), its graph nodes, then its term entries
    /// (invariant 5, [`entry`]).
    records: Vec<u32>,
    field_len_sums: [u64; FIELDS],
}

impl Segment {
    /// Builds a segment from documents (any order; at most one per fact),
    /// reading each one's terms from its text and names.
    pub fn build(docs: Vec<DocInput>, params: &ScoreParams) -> Segment {
        Segment::build_with(docs, params, None)
    }

    /// [`Segment::build`], taking the terms of each document that `inputs`
    /// holds from there rather than from its text: the same segment
    /// (invariant 2 of [`IndexInputs`]), without tokenizing. `inputs` must
    /// have been made under `params` (its [`fingerprint`](super::inputs::fingerprint)).
    pub fn build_with(
        mut docs: Vec<DocInput>,
        params: &ScoreParams,
        inputs: Option<&IndexInputs>,
    ) -> Segment {
        docs.sort_by_key(|d| d.body.id);
        // The segment's id of each of the inputs' terms, once looked up.
        let mut known = vec![u32::MAX; inputs.map_or(0, IndexInputs::term_count)];
        Segment::assemble(docs, params, |_, doc, dictionary, out| {
            let Some((inputs, terms)) = inputs.and_then(|i| Some((i, i.doc(doc.body.id)?))) else {
                return for_each_term(&doc.body, params, |term, tf| {
                    out.push((dictionary.id(term), tf))
                });
            };
            for &(t, tf) in terms.terms {
                let id = &mut known[t as usize];
                if *id == u32::MAX {
                    *id = dictionary.id(inputs.term(t));
                }
                out.push((*id, tf));
            }
            terms.lens
        })
    }

    /// Builds a segment from documents sorted by fact id; `terms_of(d,
    /// doc, dictionary, out)` pushes the `d`th document's distinct terms
    /// (ids from `dictionary`, any order) with their per-field
    /// frequencies onto `out` and returns its per-field token counts.
    fn assemble(
        docs: Vec<DocInput>,
        params: &ScoreParams,
        mut terms_of: impl FnMut(
            usize,
            &DocInput,
            &mut Dictionary,
            &mut Vec<(u32, [u8; FIELDS])>,
        ) -> [u16; FIELDS],
    ) -> Segment {
        let n = docs.len();
        let mut dictionary = Dictionary::default();
        let mut lens = Vec::with_capacity(n);
        let mut field_len_sums = [0u64; FIELDS];
        let mut starts = Vec::with_capacity(n);
        let mut dl = Vec::with_capacity(n);
        let mut block_rec: Vec<f64> = Vec::with_capacity(n.div_ceil(1 << BLOCK_SHIFT));
        let mut recs: Vec<f64> = Vec::with_capacity(n);
        let mut use_lin: Vec<f64> = Vec::with_capacity(n);
        let mut records = Vec::new();
        let mut doc_terms: Vec<(u32, [u8; FIELDS])> = Vec::new();
        let mut overflow = Vec::new();
        for (d, doc) in docs.iter().enumerate() {
            let d = d as u32;
            doc_terms.clear();
            let l = terms_of(d as usize, doc, &mut dictionary, &mut doc_terms);
            for &(tid, tf) in &doc_terms {
                dictionary.lists[tid as usize].push(Posting { doc: d, tf });
                dictionary.presence[tid as usize][pattern(tf) - 1] += 1;
                for (m, t) in dictionary.max_tf[tid as usize].iter_mut().zip(tf) {
                    *m = (*m).max(t);
                }
            }
            for (sum, l) in field_len_sums.iter_mut().zip(l) {
                *sum += u64::from(l);
            }
            lens.push(l);
            let (rec, lin) = doc.attrs.anchored(params);
            use_lin.push(lin);
            match block_rec.get_mut((d >> BLOCK_SHIFT) as usize) {
                Some(max) => *max = max.max(rec),
                None => block_rec.push(rec),
            }
            recs.push(rec);
            let rec = rec.to_bits();
            dl.push(doc_len(params.field_weights, l));
            starts.push(records.len() as u32);
            let mut head = [0u32; header::WORDS];
            head[header::RECENCY_LO] = rec as u32;
            head[header::RECENCY_HI] = (rec >> 32) as u32;
            head[header::NODES] = doc.nodes.len() as u32;
            head[header::TERMS] = doc_terms.len() as u32;
            records.extend(head);
            records.extend_from_slice(&doc.nodes);
            doc_terms.sort_unstable_by_key(|e| e.0);
            overflow.clear();
            for &(tid, tf) in &doc_terms {
                entry::push(&mut records, &mut overflow, tid, tf);
            }
            records.extend_from_slice(&overflow);
        }
        let Dictionary {
            mut terms,
            lists,
            presence,
            mut max_tf,
        } = dictionary;
        // What the segment keeps of the growing buffers, without their
        // spare capacity: a segment is never appended to, and the doubling
        // left up to half of each unused (issue 24's heap table).
        records.shrink_to_fit();
        terms.shrink_to_fit();
        max_tf.shrink_to_fit();
        let min_lens = lists
            .iter()
            .map(|list| {
                list.iter().fold([u16::MAX; FIELDS], |acc, p| {
                    let l = lens[p.doc as usize];
                    std::array::from_fn(|f| acc[f].min(l[f]))
                })
            })
            .collect();
        let words = n.div_ceil(64);
        let mut bitmaps = Vec::new();
        let dense = lists
            .iter()
            .map(|list| {
                if list.len() * DENSE < n {
                    return SPARSE;
                }
                let at = bitmaps.len();
                bitmaps.resize(at + words, 0u64);
                for p in list {
                    bitmaps[at + p.doc as usize / 64] |= 1 << (p.doc % 64);
                }
                (at / words.max(1)) as u32
            })
            .collect();
        bitmaps.shrink_to_fit();
        let mut posting_starts = Vec::with_capacity(lists.len() + 1);
        posting_starts.push(0);
        for list in &lists {
            posting_starts.push(posting_starts[posting_starts.len() - 1] + list.len() as u32);
        }
        // Per chunk of CHUNK postings (of any terms, in list order), its
        // documents' newest recency: read from the lists as built, before
        // they are packed.
        let mut chunk_rec: Vec<f64> = Vec::new();
        for (i, p) in lists.iter().flatten().enumerate() {
            let rec = recs[p.doc as usize];
            match chunk_rec.last_mut() {
                Some(max) if i % CHUNK != 0 => *max = max.max(rec),
                _ => chunk_rec.push(rec),
            }
        }
        let postings = PackedPostings::new(lists.into_iter().flatten());
        if use_lin.iter().all(|&u| u == 0.0) {
            use_lin = Vec::new();
        }
        Segment {
            id: NEXT_SEGMENT_ID.fetch_add(1, Ordering::Relaxed),
            fact_ids: FactIds::new(docs.iter().map(|d| d.body.id)),
            bodies: docs.iter().map(|d| d.body.clone()).collect(),
            said_at: docs.iter().map(|d| d.body.stated_at).collect(),
            said_among: docs.iter().map(|d| d.body.said().among).collect(),
            matrix: Matrix::of(&docs),
            lens,
            dl,
            starts,
            chunk_rec,
            max_rec: block_rec.iter().copied().fold(0.0, f64::max),
            by_time: {
                let mut order: Vec<u32> = (0..n as u32).collect();
                order.sort_by(|a, b| {
                    recs[*a as usize]
                        .total_cmp(&recs[*b as usize])
                        .then(a.cmp(b))
                });
                order.into()
            },
            block_rec,
            dense,
            bitmaps,
            use_lin,
            terms,
            posting_starts,
            presence: Presence::of(&presence),
            max_tf,
            min_lens,
            postings,
            records,
            field_len_sums,
        }
    }

    /// Merges the live documents of several segments into one. Returns the
    /// segment and, per source, each local document's new id (`u32::MAX` for
    /// deleted ones).
    pub fn merge(
        sources: &[(&Segment, &DeleteSet)],
        params: &ScoreParams,
    ) -> (Segment, Vec<Vec<u32>>) {
        // Each live document with where it comes from, in fact id order.
        let mut live: Vec<(DocInput, usize, u32)> = Vec::new();
        for (s, (seg, deletes)) in sources.iter().enumerate() {
            for d in 0..seg.len() as u32 {
                if !deletes.contains(d) {
                    live.push((seg.doc_input(d), s, d));
                }
            }
        }
        live.sort_by_key(|(doc, _, _)| doc.body.id);
        let (docs, origins): (Vec<DocInput>, Vec<(usize, u32)>) =
            live.into_iter().map(|(doc, s, d)| (doc, (s, d))).unzip();
        // A document's terms are read from its record in its source, not
        // from its text again: each source term's name is looked up once,
        // the first time a document of the merge has it.
        let names: Vec<Vec<&str>> = sources.iter().map(|(seg, _)| seg.term_names()).collect();
        let mut remaps: Vec<Vec<u32>> = names.iter().map(|n| vec![u32::MAX; n.len()]).collect();
        let merged = Segment::assemble(docs, params, |d, _, dictionary, out| {
            let (s, local) = origins[d];
            let source = sources[s].0;
            for (tid, tf) in source.record(local).terms() {
                let id = &mut remaps[s][tid as usize];
                if *id == u32::MAX {
                    *id = dictionary.id(names[s][tid as usize]);
                }
                out.push((*id, tf));
            }
            source.lens(local)
        });
        let remaps = sources
            .iter()
            .map(|(seg, deletes)| {
                (0..seg.len() as u32)
                    .map(|d| {
                        if deletes.contains(d) {
                            u32::MAX
                        } else {
                            // Infallible: every live source document was added.
                            merged
                                .find(seg.fact_id(d))
                                .expect("merged segment holds every live document")
                        }
                    })
                    .collect()
            })
            .collect();
        (merged, remaps)
    }

    /// Number of documents (deleted ones included).
    pub fn len(&self) -> usize {
        self.fact_ids.len()
    }

    /// Whether the segment has no documents.
    pub fn is_empty(&self) -> bool {
        self.fact_ids.is_empty()
    }

    /// The fact of a local document.
    #[inline]
    pub fn fact_id(&self, doc: u32) -> FactId {
        self.fact_ids.get(doc)
    }

    /// The body of a local document.
    #[inline]
    pub fn body(&self, doc: u32) -> &Arc<FactBody> {
        &self.bodies[doc as usize]
    }

    /// When and among whom a local document was said.
    #[inline]
    pub fn said(&self, doc: u32) -> Said {
        Said {
            at: self.said_at[doc as usize],
            among: self.said_among[doc as usize],
        }
    }

    /// The local document of a fact, if the segment holds one.
    pub fn find(&self, fact: FactId) -> Option<u32> {
        self.fact_ids.find(fact)
    }

    /// Rebuilds the input of a local document (for merges): its attributes
    /// as this segment anchored them, so the merged segment holds the same
    /// bits.
    pub fn doc_input(&self, doc: u32) -> DocInput {
        DocInput {
            body: self.bodies[doc as usize].clone(),
            attrs: Attrs::Anchored {
                rec: self.rec(doc),
                use_lin: self.use_lin(doc),
            },
            nodes: self.record(doc).nodes.into(),
            vectors: self.matrix.vectors(doc),
        }
    }

    /// The segment's vectors in scan order.
    pub fn matrix(&self) -> &Matrix {
        &self.matrix
    }

    /// Token counts per field of a local document.
    #[inline]
    pub fn lens(&self, doc: u32) -> [u16; FIELDS] {
        self.lens[doc as usize]
    }

    /// Document lengths under the store's field weights.
    #[inline]
    pub fn dl(&self) -> &[f32] {
        &self.dl
    }

    /// Anchored usage of a local document (invariant 4).
    #[inline]
    pub fn use_lin(&self, doc: u32) -> f64 {
        self.use_lin.get(doc as usize).copied().unwrap_or(0.0)
    }

    /// The id of a term in this segment.
    #[inline]
    pub fn term(&self, term: &str) -> Option<u32> {
        self.terms.get(term)
    }

    /// Every term's name, by term id.
    fn term_names(&self) -> Vec<&str> {
        self.terms.names()
    }

    /// Postings of a term id.
    #[inline]
    pub fn postings(&self, tid: u32) -> Postings<'_> {
        let t = tid as usize;
        self.postings
            .slice(self.posting_starts[t] as usize..self.posting_starts[t + 1] as usize)
    }

    /// Presence counts of a term id (invariant 3).
    #[inline]
    pub fn presence(&self, tid: u32) -> [u32; 7] {
        self.presence.get(tid)
    }

    /// Largest per-field frequency of a term id in this segment.
    #[inline]
    pub fn max_tf(&self, tid: u32) -> [u8; FIELDS] {
        self.max_tf[tid as usize]
    }

    /// Smallest per-field lengths among a term id's documents.
    #[inline]
    pub fn min_lens(&self, tid: u32) -> [u16; FIELDS] {
        self.min_lens[tid as usize]
    }

    /// Whether any document of the segment has been used.
    #[inline]
    pub fn any_usage(&self) -> bool {
        !self.use_lin.is_empty()
    }

    /// The record of a local document (invariant 5).
    #[inline]
    pub fn record(&self, doc: u32) -> DocRecord<'_> {
        let start = self.starts[doc as usize] as usize;
        // Not cut at the record's end: that would cost reading the next
        // start, and the entries say how many overflow words are this one's.
        let (head, body) = self.records[start..].split_at(header::WORDS);
        let (nodes, terms) = (head[header::NODES] as usize, head[header::TERMS] as usize);
        let (nodes, body) = body.split_at(nodes);
        let (terms, overflow) = body.split_at(terms);
        DocRecord {
            recency: f64::from_bits(
                u64::from(head[header::RECENCY_LO]) | u64::from(head[header::RECENCY_HI]) << 32,
            ),
            nodes,
            terms,
            overflow,
        }
    }

    /// The size of the documents' records in bytes.
    pub fn record_bytes(&self) -> usize {
        self.records.len() * std::mem::size_of::<u32>()
    }

    /// The largest anchored recency among the documents of `doc`'s block
    /// (invariant 6).
    #[inline]
    pub fn block_rec(&self, doc: u32) -> f64 {
        self.block_rec[(doc >> BLOCK_SHIFT) as usize]
    }

    /// Where a term's postings start among the segment's postings, for
    /// [`Segment::chunk_rec`].
    #[inline]
    pub fn postings_start(&self, tid: u32) -> usize {
        self.posting_starts[tid as usize] as usize
    }

    /// The largest anchored recency among the documents of the postings in
    /// chunk `i` (postings `i * CHUNK ..`, invariant 6).
    #[inline]
    pub fn chunk_rec(&self, i: usize) -> f64 {
        self.chunk_rec[i]
    }

    /// The largest anchored recency in the segment.
    #[inline]
    pub fn max_rec(&self) -> f64 {
        self.max_rec
    }

    /// A document's anchored recency (from its record).
    #[inline]
    pub fn rec(&self, doc: u32) -> f64 {
        self.record(doc).recency
    }

    /// The documents in increasing anchored recency (ties by id).
    pub fn by_time(&self) -> &[u32] {
        &self.by_time
    }

    /// A dense term's bitmap (invariant 6); `None` for a sparse term.
    #[inline]
    pub fn bitmap(&self, tid: u32) -> Option<Bitmap<'_>> {
        let words = self.len().div_ceil(64);
        match self.dense[tid as usize] {
            SPARSE => None,
            i => Some(Bitmap(
                &self.bitmaps[i as usize * words..(i as usize + 1) * words],
            )),
        }
    }

    /// Asks the CPU to start loading a document's record (its first two
    /// cache lines), for a caller that knows it will read it a few steps
    /// ahead.
    #[inline]
    pub fn prefetch(&self, doc: u32) {
        if let Some(&s) = self.starts.get(doc as usize) {
            prefetch(&self.records, s as usize);
            prefetch(&self.records, s as usize + 16);
        }
    }

    /// Sum of token counts per field over all documents (deleted included).
    pub fn field_len_sums(&self) -> [u64; FIELDS] {
        self.field_len_sums
    }

    /// Number of distinct terms.
    pub fn term_count(&self) -> usize {
        self.presence.len()
    }
}

/// A document's BM25F length `Σ α_F · len_F` (one expression everywhere, so
/// precomputed and on-the-fly lengths are bit-identical).
#[inline]
pub fn doc_len(alpha: [f32; FIELDS], lens: [u16; FIELDS]) -> f32 {
    alpha[0] * f32::from(lens[0]) + alpha[1] * f32::from(lens[1]) + alpha[2] * f32::from(lens[2])
}

/// A posting's merged term frequency `Σ α_F · tf_F`.
#[inline]
pub fn merged_tf(alpha: [f32; FIELDS], tf: [u8; FIELDS]) -> f32 {
    alpha[0] * f32::from(tf[0]) + alpha[1] * f32::from(tf[1]) + alpha[2] * f32::from(tf[2])
}

/// `(t - anchor)` in half-lives of `half_life_days`.
pub fn half_lives(t: WallTime, anchor: WallTime, half_life_days: f64) -> f64 {
    (t.millis() - anchor.millis()) as f64 / (half_life_days * DAY_MS as f64)
}

/// Segments the unit tests of the index and the scorer share.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;
    use crate::fact::{BodyParts, FactNames, Name};

    pub(crate) fn body(
        id: u64,
        text: &str,
        entities: &[&str],
        participants: &[&str],
    ) -> Arc<FactBody> {
        Arc::new(FactBody::new(
            FactId(id),
            FactNames::new(
                entities.iter().map(|e| Name::from(*e)),
                participants.iter().map(|p| Name::from(*p)),
            ),
            BodyParts::new(text, WallTime::from_secs(id as i64)),
        ))
    }

    /// A document of [`body`], observed at its id's second, with `nodes`.
    pub(crate) fn doc(
        id: u64,
        text: &str,
        entities: &[&str],
        participants: &[&str],
        nodes: Box<[NodeId]>,
    ) -> DocInput {
        DocInput {
            body: body(id, text, entities, participants),
            attrs: Attrs::Observed(DocAttrs {
                last_observed: WallTime::from_secs(id as i64),
                usage: Usage::default(),
            }),
            nodes,
            vectors: None,
        }
    }

    /// 300 documents (five blocks); "common" on every other one (dense),
    /// "rare" on two (sparse), observed out of id order.
    pub(crate) fn three_hundred() -> Segment {
        let docs: Vec<DocInput> = (0..300u64)
            .map(|id| {
                let mut text = format!("doc{id}");
                if id % 2 == 0 {
                    text.push_str(" common");
                }
                if id == 7 || id == 250 {
                    text.push_str(" rare");
                }
                DocInput {
                    body: body(id, &text, &[], &[]),
                    attrs: Attrs::Observed(DocAttrs {
                        last_observed: WallTime::from_secs(((id * 7919) % 1000) as i64 * 86_400),
                        usage: Usage::default(),
                    }),
                    nodes: Box::new([]),
                    vectors: None,
                }
            })
            .collect();
        Segment::build(docs, &ScoreParams::default())
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{self, body, three_hundred};
    use super::*;

    #[test]
    fn fields_and_presence_patterns() {
        let b = body(
            0,
            "Alex met Alex at the cafe",
            &["alex rivera"],
            &["Alex Rivera"],
        );
        let mut seen = Vec::new();
        let lens = for_each_term(&b, &ScoreParams::default(), |t, tf| {
            seen.push((t.to_owned(), tf))
        });
        assert_eq!(lens, [4, 2, 2], "stop words dropped from text");
        assert_eq!(
            seen,
            [
                ("alex".to_owned(), [2, 1, 1]),
                ("cafe".to_owned(), [1, 0, 0]),
                ("met".to_owned(), [1, 0, 0]),
                ("rivera".to_owned(), [0, 1, 1]),
            ]
        );
        assert_eq!(pattern([2, 1, 1]), 7);
        assert_eq!(pattern([0, 1, 1]), 6);
        let mut presence = [0u32; 7];
        presence[6] = 3; // in all three fields
        presence[0] = 2; // text only
        assert_eq!(df_for_mask(&presence, 0b001), 5);
        assert_eq!(df_for_mask(&presence, 0b010), 3);
    }

    #[test]
    fn forward_data_is_the_transpose_of_the_postings() {
        let p = ScoreParams::default();
        let doc = |id, text, entities: &[&str], participants: &[&str]| {
            fixtures::doc(id, text, entities, participants, (0..id as u32).collect())
        };
        let seg = Segment::build(
            vec![
                doc(1, "Alex met Sam at the cafe", &["alex", "sam"], &["Sam"]),
                doc(2, "the cafe closed, the cafe reopened", &[], &[]),
                doc(3, "Sam emailed Alex about the budget", &["alex"], &["Alex"]),
            ],
            &p,
        );
        let mut pairs = 0;
        for d in 0..seg.len() as u32 {
            let view = seg.record(d);
            assert_eq!(view.nodes, (0..=d).collect::<Vec<_>>());
            let terms: Vec<_> = view.terms().collect();
            assert!(terms.windows(2).all(|w| w[0].0 < w[1].0), "ascending");
            for (tid, tf) in terms {
                assert!(
                    seg.postings(tid)
                        .iter()
                        .any(|p| p == Posting { doc: d, tf })
                );
                assert_eq!(view.tf(tid), Some(tf));
                pairs += 1;
            }
        }
        for tid in 0..seg.term_count() as u32 {
            for posting in seg.postings(tid).iter() {
                assert_eq!(seg.record(posting.doc).tf(tid), Some(posting.tf));
            }
            for d in 0..seg.len() as u32 {
                if !seg.postings(tid).iter().any(|q| q.doc == d) {
                    assert_eq!(seg.record(d).tf(tid), None);
                }
            }
        }
        assert_eq!(pairs, seg.postings.len());
        assert_eq!(seg.record(1).tf(seg.term("cafe").unwrap()), Some([2, 0, 0]));
    }

    proptest::proptest! {
        /// Term entries read back as written, by id and in order: one
        /// entry word each, and overflow words for a term more than once in
        /// a field or in none (one) and for a huge id (two).
        #[test]
        fn term_entries_read_back_in_either_form(
            entries in proptest::collection::btree_map(
                proptest::prop_oneof![0..64u32, entry::HUGE - 2..=entry::HUGE + 2, proptest::num::u32::ANY],
                proptest::array::uniform3(proptest::prop_oneof![0..=2u8, proptest::num::u8::ANY]),
                0..24,
            ),
            absent in proptest::prop_oneof![0..64u32, entry::HUGE - 2..=entry::HUGE + 2, proptest::num::u32::ANY],
        ) {
            let (mut terms, mut overflow) = (Vec::new(), Vec::new());
            let mut expected_overflow = 0;
            for (&tid, &tf) in &entries {
                entry::push(&mut terms, &mut overflow, tid, tf);
                let once = tf.iter().all(|&t| t <= 1) && tf != [0; FIELDS];
                expected_overflow += match (tid >= entry::HUGE, once) {
                    (true, _) => 2,
                    (false, true) => 0,
                    (false, false) => 1,
                };
            }
            proptest::prop_assert_eq!(terms.len(), entries.len());
            proptest::prop_assert_eq!(overflow.len(), expected_overflow);
            let record = DocRecord { recency: 0.0, nodes: &[], terms: &terms, overflow: &overflow };
            let read: Vec<_> = record.terms().collect();
            let written: Vec<_> = entries.iter().map(|(&t, &tf)| (t, tf)).collect();
            proptest::prop_assert_eq!(read, written);
            for (&tid, &tf) in &entries {
                proptest::prop_assert_eq!(record.tf(tid), Some(tf));
            }
            if !entries.contains_key(&absent) {
                proptest::prop_assert_eq!(record.tf(absent), None);
            }
        }
    }

    #[test]
    fn block_recency_and_bitmaps_bound_what_records_hold() {
        let seg = three_hundred();
        let mut max = 0.0f64;
        for d in 0..seg.len() as u32 {
            let rec = seg.record(d).recency;
            assert!(rec <= seg.block_rec(d), "doc {d}");
            max = max.max(rec);
        }
        assert_eq!(seg.max_rec(), max);
        for d in (0..seg.len() as u32).step_by(1 << BLOCK_SHIFT) {
            let block = d..(d + (1 << BLOCK_SHIFT)).min(seg.len() as u32);
            let top = block.map(|e| seg.record(e).recency).fold(0.0, f64::max);
            assert_eq!(seg.block_rec(d), top, "the block's newest, not more");
        }
        let common = seg.term("common").unwrap();
        let bitmap = seg
            .bitmap(common)
            .expect("a term on half the documents is dense");
        for d in 0..seg.len() as u32 {
            assert_eq!(
                bitmap.contains(d),
                seg.record(d).tf(common).is_some(),
                "doc {d}"
            );
        }
        assert!(seg.bitmap(seg.term("rare").unwrap()).is_none());
        for tid in 0..seg.term_count() as u32 {
            let start = seg.postings_start(tid);
            for (j, p) in seg.postings(tid).iter().enumerate() {
                assert!(seg.record(p.doc).recency <= seg.chunk_rec((start + j) / CHUNK));
            }
        }
        let all: Vec<Posting> = seg.postings.all().iter().collect();
        for (i, chunk) in all.chunks(CHUNK).enumerate() {
            let top = chunk
                .iter()
                .map(|p| seg.record(p.doc).recency)
                .fold(0.0, f64::max);
            assert_eq!(seg.chunk_rec(i), top, "the chunk's newest, not more");
        }
        assert!(seg.record_bytes() > 0);
    }

    #[test]
    fn usage_is_kept_only_where_a_document_was_used() {
        let p = ScoreParams::default();
        let doc = |id, use_lin| DocInput {
            attrs: Attrs::Anchored { rec: 1.0, use_lin },
            ..fixtures::doc(id, "word", &[], &[], Box::new([]))
        };
        let unused = Segment::build(vec![doc(1, 0.0), doc(2, 0.0)], &p);
        assert!(!unused.any_usage() && unused.use_lin.is_empty());
        assert_eq!((unused.use_lin(0), unused.use_lin(1)), (0.0, 0.0));
        let used = Segment::build(vec![doc(3, 0.0), doc(4, 2.5)], &p);
        assert!(used.any_usage());
        assert_eq!((used.use_lin(0), used.use_lin(1)), (0.0, 2.5));
        let none = DeleteSet::default();
        let (merged, _) = Segment::merge(&[(&unused, &none), (&used, &none)], &p);
        assert!(merged.any_usage());
        let by_fact = |f| merged.use_lin(merged.find(FactId(f)).unwrap());
        assert_eq!(
            (by_fact(1), by_fact(2), by_fact(3), by_fact(4)),
            (0.0, 0.0, 0.0, 2.5)
        );
        let mut gone = DeleteSet::default();
        gone.insert(used.find(FactId(4)).unwrap());
        let (merged, _) = Segment::merge(&[(&unused, &none), (&used, &gone)], &p);
        assert!(!merged.any_usage(), "the used document was deleted");
    }

    #[test]
    fn merge_keeps_live_documents_and_remaps() {
        let p = ScoreParams::default();
        let doc = |id, text| DocInput {
            body: body(id, text, &[], &[]),
            attrs: Attrs::Observed(DocAttrs {
                last_observed: WallTime::from_secs(id as i64),
                usage: Usage::default(),
            }),
            nodes: Box::new([]),
            vectors: None,
        };
        let a = Segment::build(vec![doc(4, "delta"), doc(1, "alpha")], &p);
        let b = Segment::build(vec![doc(2, "beta"), doc(3, "gamma")], &p);
        assert_eq!(a.fact_id(0), FactId(1), "sorted by fact id");
        let mut del = DeleteSet::default();
        del.insert(b.find(FactId(2)).unwrap());
        let (m, remaps) = Segment::merge(&[(&a, &DeleteSet::default()), (&b, &del)], &p);
        assert_eq!(m.len(), 3);
        assert_eq!(remaps, vec![vec![0, 2], vec![u32::MAX, 1]]);
        assert!(m.term("beta").is_none());
        assert_eq!(
            m.postings(m.term("gamma").unwrap())
                .iter()
                .collect::<Vec<_>>(),
            [Posting {
                doc: 1,
                tf: [1, 0, 0]
            }]
        );
    }

    /// A merge reads its documents' terms from the sources' records; what
    /// it builds is what building the same documents from their text
    /// builds (term ids aside).
    #[test]
    fn a_merge_indexes_what_a_build_from_text_indexes() {
        let p = ScoreParams::default();
        let doc = |id, text, entities: &[&str], participants: &[&str]| {
            fixtures::doc(id, text, entities, participants, Box::new([]))
        };
        let docs = [
            doc(1, "Ana moved to Lisbon in May", &["lisbon"], &["Ana"]),
            doc(
                2,
                "the budget is 1,200 EUR; budget due Dec 3",
                &[],
                &["Ben Ruiz"],
            ),
            doc(
                3,
                "Lisbon standup at 9:30 AM",
                &["lisbon"],
                &["Ana", "Ben Ruiz"],
            ),
            doc(4, "Ben's check-in moved", &["ben"], &[]),
            doc(5, "standup standup standup", &[], &["Ana"]),
        ];
        let a = Segment::build(vec![docs[3].clone(), docs[0].clone(), docs[4].clone()], &p);
        let b = Segment::build(vec![docs[1].clone(), docs[2].clone()], &p);
        let mut del = DeleteSet::default();
        del.insert(a.find(FactId(5)).unwrap());
        let (merged, _) = Segment::merge(&[(&a, &del), (&b, &DeleteSet::default())], &p);
        let fresh = Segment::build(docs[..4].to_vec(), &p);
        let by_name = |seg: &Segment, d: u32| {
            let names = seg.term_names();
            let mut terms: Vec<(String, [u8; FIELDS])> = seg
                .record(d)
                .terms()
                .map(|(t, tf)| (names[t as usize].to_owned(), tf))
                .collect();
            terms.sort();
            terms
        };
        assert_eq!(merged.len(), fresh.len());
        for d in 0..fresh.len() as u32 {
            assert_eq!(merged.fact_id(d), fresh.fact_id(d));
            assert_eq!(by_name(&merged, d), by_name(&fresh, d));
            assert_eq!(merged.lens(d), fresh.lens(d));
            assert_eq!(
                merged.dl()[d as usize].to_bits(),
                fresh.dl()[d as usize].to_bits()
            );
        }
        let mut names = fresh.term_names();
        names.sort_unstable();
        assert_eq!(names.len(), merged.term_names().len());
        for name in names {
            let (x, y) = (fresh.term(name).unwrap(), merged.term(name).unwrap());
            assert!(
                fresh.postings(x).iter().eq(merged.postings(y).iter()),
                "{name}"
            );
            assert_eq!(fresh.presence(x), merged.presence(y));
            assert_eq!(fresh.max_tf[x as usize], merged.max_tf[y as usize]);
            assert_eq!(fresh.min_lens[x as usize], merged.min_lens[y as usize]);
        }
        assert_eq!(merged.field_len_sums, fresh.field_len_sums);
    }
}
