//! The corpus writer: applies a commit's additions and deletions copy-on-write
//! and keeps the number of segments logarithmic by merging.
//!
//! A commit of `b` documents builds one segment of `b` documents and clones
//! the view list, so its cost is O(b + segments), independent of store size.
//! Merges follow a tiered policy: when `MERGE_FACTOR` or more adjacent
//! segments share a size tier (`⌊log8(live docs)⌋`), they are merged into one
//! of a higher tier, so every document is rewritten O(log n) times and a version
//! holds at most `MERGE_FACTOR - 1` segments per tier. Merges of up to
//! `INLINE_MERGE_DOCS` documents run inside the commit (bounded cost);
//! larger ones run on a background thread over a snapshot, and the first
//! commit after they finish installs the result, re-applying deletions that
//! happened in the meantime through the merge's id map. A segment more than
//! half deleted (revisions supersede its facts) is rewritten on its own, so
//! posting lists never fill up with deleted documents.

use std::ops::Range;
use std::sync::Arc;
use std::thread;

use crossbeam_channel::{Receiver, TryRecvError, bounded};

use super::corpus::{Corpus, SegmentView};
use super::deletes::DeleteSet;
use super::inputs::IndexInputs;
use super::segment::{DocInput, Segment};
use crate::config::{MergeMode, ScoreParams};
use crate::fact::FactId;

/// Segments merged at once, and the base of the size tiers.
pub const MERGE_FACTOR: usize = 8;
/// Merges up to this many documents run inside the commit: the first tier
/// only (eight one-document segments). A 64-document merge inside a
/// single-fact commit took ~70 µs, which set the commit-to-visible p99 near
/// 100 µs (`pfm scale`); at 8 the p99 is 50–70 µs at 100,000 facts.
pub const INLINE_MERGE_DOCS: usize = 8;

struct MergeDone {
    merged: Segment,
    remaps: Vec<Vec<u32>>,
}

/// A merge running on a background thread.
struct InFlight {
    /// Ids of the merged segments, oldest first (a contiguous run).
    sources: Vec<u64>,
    /// Their deletions when the merge started.
    snapshot: Vec<DeleteSet>,
    done: Receiver<MergeDone>,
}

/// Maintains one corpus (the active index or the history index).
pub struct CorpusWriter {
    corpus: Corpus,
    /// Documents added since the last commit.
    pending: Vec<DocInput>,
    /// Terms for the next commit's segment, made earlier (a restore's).
    inputs: Option<Arc<IndexInputs>>,
    params: ScoreParams,
    mode: MergeMode,
    in_flight: Option<InFlight>,
}

impl std::fmt::Debug for CorpusWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CorpusWriter")
            .field("segments", &self.corpus.views().len())
            .field("live_docs", &self.corpus.live_docs())
            .field("pending", &self.pending.len())
            .field("merging", &self.in_flight.is_some())
            .finish()
    }
}

fn tier(live: usize) -> u32 {
    if live <= 1 {
        0
    } else {
        live.ilog(MERGE_FACTOR)
    }
}

impl CorpusWriter {
    /// An empty corpus.
    pub fn new(params: ScoreParams, mode: MergeMode) -> Self {
        CorpusWriter {
            corpus: Corpus::default(),
            pending: Vec::new(),
            inputs: None,
            params,
            mode,
            in_flight: None,
        }
    }

    /// Queues a document for the next commit. The fact must not have a live
    /// document already (remove it first).
    pub fn add(&mut self, doc: DocInput) {
        self.pending.push(doc);
    }

    /// The next commit's segment takes the terms of the documents that
    /// `inputs` holds from there instead of their text (see
    /// [`Segment::build_with`]); later commits tokenize as usual.
    pub fn take_terms_from(&mut self, inputs: Arc<IndexInputs>) {
        self.inputs = Some(inputs);
    }

    /// Removes a fact's document (queued or live); returns whether it had one.
    pub fn remove(&mut self, fact: FactId) -> bool {
        if let Some(i) = self.pending.iter().position(|d| d.body.id == fact) {
            self.pending.swap_remove(i);
            return true;
        }
        self.corpus.delete(fact)
    }

    /// A fact's vectors from a queued document or the corpus (see
    /// [`Corpus::vectors_of`]).
    pub fn vectors_of(&self, fact: FactId) -> Option<crate::vector::SharedVectors> {
        self.pending
            .iter()
            .rev()
            .find(|d| d.body.id == fact)
            .and_then(|d| d.vectors.clone())
            .or_else(|| self.corpus.vectors_of(fact))
    }

    /// The corpus as of the last commit (without queued documents).
    pub fn corpus(&self) -> &Corpus {
        &self.corpus
    }

    /// Publishes queued changes: builds one segment from the queued documents,
    /// installs a finished background merge, and schedules merges.
    pub fn commit(&mut self) -> Corpus {
        if !self.pending.is_empty() {
            let docs = std::mem::take(&mut self.pending);
            let seg = Segment::build_with(docs, &self.params, self.inputs.as_deref());
            self.corpus
                .views_mut()
                .push(SegmentView::new(Arc::new(seg)));
        }
        self.inputs = None;
        self.install_finished(false);
        self.schedule_merges();
        self.corpus.refresh();
        self.corpus.clone()
    }

    /// Blocks until a background merge (if any) finishes and installs it,
    /// then runs any merges that became due. For tests and benches.
    pub fn wait_for_merges(&mut self) -> Corpus {
        while self.in_flight.is_some() {
            self.install_finished(true);
            self.schedule_merges();
        }
        self.corpus.refresh();
        self.corpus.clone()
    }

    /// Whether a background merge is running.
    pub fn merging(&self) -> bool {
        self.in_flight.is_some()
    }

    fn install_finished(&mut self, block: bool) {
        let Some(flight) = &self.in_flight else {
            return;
        };
        let done = if block {
            flight.done.recv().ok()
        } else {
            match flight.done.try_recv() {
                Ok(d) => Some(d),
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => None,
            }
        };
        // Infallible: checked `Some` above.
        let flight = self.in_flight.take().expect("in-flight merge present");
        let Some(done) = done else {
            // The merge thread died (it cannot panic short of a bug or OOM):
            // the source segments are still in place, so nothing is lost.
            return;
        };
        let views = self.corpus.views_mut();
        let Some(start) = views.iter().position(|v| v.segment.id == flight.sources[0]) else {
            return;
        };
        let end = start + flight.sources.len();
        let mut merged = SegmentView::new(Arc::new(done.merged));
        for (i, view) in views[start..end].iter().enumerate() {
            debug_assert_eq!(view.segment.id, flight.sources[i]);
            for d in 0..view.segment.len() as u32 {
                if view.deletes.contains(d) && !flight.snapshot[i].contains(d) {
                    merged.delete(done.remaps[i][d as usize]);
                }
            }
        }
        views.splice(start..end, [merged]);
    }

    /// A segment that is mostly deletions (rewritten alone, which drops
    /// them: each deletion is paid for once, amortized), else the newest run
    /// of at least `MERGE_FACTOR` adjacent segments of one tier; never one
    /// that a background merge holds.
    fn due_run(&self) -> Option<Range<usize>> {
        let views = self.corpus.views();
        let locked = |v: &SegmentView| {
            self.in_flight
                .as_ref()
                .is_some_and(|f| f.sources.contains(&v.segment.id))
        };
        if let Some(i) = views.iter().position(|v| {
            let total = v.segment.len();
            total >= MERGE_FACTOR && 2 * v.live() < total && !locked(v)
        }) {
            return Some(i..i + 1);
        }
        let mut end = views.len();
        while end > 0 {
            if locked(&views[end - 1]) {
                end -= 1;
                continue;
            }
            let t = tier(views[end - 1].live());
            let mut start = end - 1;
            while start > 0 && !locked(&views[start - 1]) && tier(views[start - 1].live()) == t {
                start -= 1;
            }
            if end - start >= MERGE_FACTOR {
                return Some(start..end);
            }
            end = start;
        }
        None
    }

    /// Merges every due run: small ones now, one large one in the background.
    fn schedule_merges(&mut self) {
        while let Some(run) = self.due_run() {
            let views = self.corpus.views();
            let docs: usize = views[run.clone()].iter().map(SegmentView::live).sum();
            if self.mode == MergeMode::Inline || docs <= INLINE_MERGE_DOCS {
                let (merged, _) = {
                    let sources: Vec<(&Segment, &DeleteSet)> = views[run.clone()]
                        .iter()
                        .map(|v| (&*v.segment, &v.deletes))
                        .collect();
                    Segment::merge(&sources, &self.params)
                };
                self.corpus
                    .views_mut()
                    .splice(run, [SegmentView::new(Arc::new(merged))]);
                continue;
            }
            if self.in_flight.is_some() {
                return;
            }
            let snapshot: Vec<(Arc<Segment>, DeleteSet)> = views[run]
                .iter()
                .map(|v| (v.segment.clone(), v.deletes.clone()))
                .collect();
            let (tx, rx) = bounded(1);
            let params = self.params.clone();
            let job = snapshot.clone();
            let spawned = thread::Builder::new()
                .name("pfm-merge".into())
                .spawn(move || {
                    let sources: Vec<(&Segment, &DeleteSet)> =
                        job.iter().map(|(s, d)| (&**s, d)).collect();
                    let (merged, remaps) = Segment::merge(&sources, &params);
                    let _ = tx.send(MergeDone { merged, remaps });
                });
            if spawned.is_ok() {
                self.in_flight = Some(InFlight {
                    sources: snapshot.iter().map(|(s, _)| s.id).collect(),
                    snapshot: snapshot.into_iter().map(|(_, d)| d).collect(),
                    done: rx,
                });
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::Usage;
    use crate::index::segment::{Attrs, DocAttrs, fixtures};
    use crate::time::WallTime;

    fn doc(id: u64) -> DocInput {
        DocInput {
            body: fixtures::body(id, &format!("word{} common", id % 13), &[], &[]),
            attrs: Attrs::Observed(DocAttrs {
                last_observed: WallTime::from_secs(id as i64),
                usage: Usage::default(),
            }),
            nodes: Box::new([]),
            vectors: None,
        }
    }

    #[test]
    fn background_merge_keeps_deletions_made_while_it_ran() {
        let mut w = CorpusWriter::new(ScoreParams::default(), MergeMode::Background);
        let mut next = 0u64;
        // Single-document commits until a merge too large to run inline starts.
        while !w.merging() {
            w.add(doc(next));
            next += 1;
            w.commit();
            assert!(next < 20_000, "a background merge should have started");
        }
        // Delete documents that are inside the merge's snapshot.
        let deleted: Vec<u64> = (0..next).step_by(3).collect();
        for &id in &deleted {
            assert!(w.remove(FactId(id)));
        }
        let corpus = w.wait_for_merges();
        assert!(!w.merging());
        let live: Vec<u64> = corpus.live().map(|(v, d)| v.segment.fact_id(d).0).collect();
        let want: Vec<u64> = (0..next).filter(|id| id % 3 != 0).collect();
        let mut live_sorted = live.clone();
        live_sorted.sort();
        assert_eq!(live_sorted, want);
        assert_eq!(corpus.live_docs(), want.len() as u64);
        assert_eq!(corpus.df("common", 0b111), want.len() as u32);
        let word0 = want.iter().filter(|id| *id % 13 == 0).count() as u32;
        assert_eq!(corpus.df("word0", 0b111), word0);
        assert!(
            corpus.views().len() < MERGE_FACTOR * 6,
            "segments stay logarithmic"
        );
    }
}
