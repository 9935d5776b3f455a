//! The index: immutable [`IndexVersion`]s over the active facts (and, when
//! configured, over every retained version), built copy-on-write.
//!
//! # Layout
//! - [`segment`]: an immutable segment — postings over the three BM25F fields
//!   (text, entities, participants), per-term presence counts, per-document
//!   lengths, recency, usage and graph nodes.
//! - [`fact_ids`]: a segment's fact ids, four bytes each while they fit.
//! - [`postings`]: a segment's postings, four bytes each for most.
//! - [`terms`]: a segment's term table (names end to end, ids by name).
//! - [`presence`]: a segment's per-term presence counts, one word for most terms.
//! - [`deletes`]: the copy-on-write bitset of a segment's deleted documents.
//! - [`inputs`]: each fact's terms as a segment reads them, kept so a
//!   restored store builds its segments without tokenizing again.
//! - [`corpus`]: the segments of one index with their deletions and the exact
//!   statistics of the live documents (N, document frequencies, lengths).
//! - [`timeline`]: every retained fact with its activity intervals, for
//!   as-of reads from a version.
//! - [`writer`]: applies commits (one new segment per commit, deletions by
//!   bitset) and merges segments by size tier, large merges in the background.
//!
//! A version also carries the memory graph and the gazetteer as they were at
//! its commit, so retrieval is a pure function of one version.

pub mod corpus;
pub mod deletes;
pub mod fact_ids;
pub mod inputs;
pub mod postings;
pub mod prefetch;
pub mod presence;
pub mod segment;
pub mod terms;
pub mod timeline;
pub mod writer;

pub use corpus::{Corpus, SegmentView};
pub use inputs::IndexInputs;
pub use segment::{Attrs, DocAttrs, DocInput, FIELDS, Posting, Segment};
pub use timeline::Timeline;
pub use writer::CorpusWriter;

use crate::config::ScoreParams;
use crate::extract::Gazetteer;
use crate::fact::Seq;
use crate::graph::Graph;
use crate::ledger::AsOf;
use crate::time::WallTime;

/// Everything retrieval reads, frozen at one commit.
///
/// # Invariants
/// 1. `active` lists exactly the current facts of the ledger at commit `seq`
///    (so at most one per key: Proposition 1 holds in every version).
/// 2. `history`, when present, lists exactly the retained facts at `seq`.
/// 3. `timeline` holds exactly the retained facts at `seq` with their
///    activity intervals (see [`timeline`]).
///
/// Established by `Memory`'s commit path; checked by `tests/prop_ledger.rs`.
#[derive(Clone, Debug)]
pub struct IndexVersion {
    /// The commit this version reflects.
    pub seq: Seq,
    /// Wall time of that commit.
    pub committed_at: WallTime,
    /// Index over the current facts.
    pub active: Corpus,
    /// Index over all retained facts (history included), if the store keeps one.
    pub history: Option<Corpus>,
    /// Every retained fact and when it was active (as-of reads).
    pub timeline: Timeline,
    /// The memory graph.
    pub graph: Graph,
    /// The names the store knows.
    pub gazetteer: Gazetteer,
    /// The scoring parameters the segments were built with.
    pub params: ScoreParams,
    /// For the view an as-of retrieval builds: the point in transaction
    /// time it shows, so what a block discloses (a contested value, its
    /// alternatives) is read as it was then. `None` for a published version.
    pub past: Option<AsOf>,
}

impl IndexVersion {
    /// An empty version (before the first commit).
    pub fn empty(params: ScoreParams, with_history: bool) -> Self {
        IndexVersion {
            seq: 0,
            committed_at: WallTime::EPOCH,
            active: Corpus::default(),
            history: with_history.then(Corpus::default),
            timeline: Timeline::default(),
            graph: Graph::default(),
            gazetteer: Gazetteer::default(),
            params,
            past: None,
        }
    }
}
