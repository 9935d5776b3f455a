//! The ledger on disk: every retained fact, one row each, in an embedded
//! [redb](https://docs.rs/redb) file (`<dir>/ledger.redb`), written before a
//! commit is acknowledged and read back into a [`Memory`] on start.
//!
//! # Why redb (and not fjall)
//! The ledger is small rows rewritten in place (a supersession rewrites the
//! old version's state), read whole at start, and erased for good on
//! request. redb is a copy-on-write B-tree in one file with ACID write
//! transactions: a commit is atomic (its new root is published by a
//! checksummed header slot, so a torn last write rolls back to the previous
//! commit on open) and costs one fsync, which is exactly group commit's unit.
//! fjall is an LSM tree with a write-ahead journal: faster for write-heavy
//! ingest, but an erased row lives on in older journal and SST files until
//! compaction reaches them, and "grep the data directory finds nothing after
//! erasure" is a requirement here. No hand-written storage engine either way.
//!
//! # What is stored
//! The ledger is the state; the gazetteer, graph and indexes are derived from
//! it on start by [`Memory::restore`]. Table `facts`: fact id → the fact
//! (body and state) as JSON. Table `meta`: the format, the next fact id,
//! the last commit's sequence number and wall time, and the store's revision
//! ordering (arrival or event time: a store keeps the one it was built
//! under), and which commit the checkpoint (below) was written at.
//! Table `settings`: the tenant's own retrieval defaults, when it was
//! created with any ([`Settings`]). Table `requests`: the
//! client request ids of idempotent writes → their receipts (see
//! `idempotency`). A [`Batch`] carries the rows one or more commits wrote
//! (the store's [`Journal`]) and the request ids they answer; one
//! [`DurableLedger::write`] applies it in one transaction.
//!
//! # Checkpoint
//! Table `checkpoint` holds, under `store`, every retained fact and the
//! index inputs ([`IndexInputs`]) of those the store indexes, as one
//! MessagePack blob, written when a tenant that changed since its open is
//! closed ([`Checkpoint`], [`DurableLedger::checkpoint`]).
//! An open reads it instead of the rows, and builds the index segments
//! without tokenizing a text, when it is current: `meta.checkpoint_at`
//! equals `meta.seq` and `meta.checkpoint_terms` is this build's
//! [`fingerprint`] of the tenant's scoring parameters. The rows stay the
//! truth: every write transaction removes `checkpoint_at` (so a checkpoint
//! is never read beside rows written after it), and a checkpoint that is
//! missing, stale, of another build, or that does not decode or restore is
//! passed over for the rows and written again at the next close. It is
//! committed without a sync of its own: the file's close makes it durable,
//! and a crash before that only leaves the previous state, whose marker
//! does not match.
//!
//! # Erasure
//! Deleting a row leaves its bytes in freed pages of the file, so after an
//! erasure [`DurableLedger::rewrite`] copies the surviving rows into a fresh
//! file, syncs it, renames it over the old one and syncs the directory: the
//! erased text is in no file of the data directory afterwards (the fresh
//! file has no checkpoint: the next close writes one from the surviving
//! facts).
//!
//! # Crashes
//! Every file operation goes through a [`Disk`]. A write is acknowledged
//! only after its transaction's fsync; the names of a new ledger file and
//! of the directories created for it are made durable (their directories
//! synced) before the store is used; a rewrite is
//! acknowledged only after the rename's directory sync. Checked by
//! `tests/crash.rs` on a disk that loses everything not synced, crashed at
//! every sync point of `write` and of `rewrite`.
//!
//! # Corruption
//! A row that does not decode is reported with the file, the table, the row
//! key and serde's position inside the row; the store refuses to open rather
//! than serve partial state. [`repair`] lists such rows and, asked to, drops
//! them (then the ledger's invariants are checked again).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use redb::{Database, Durability, ReadableDatabase, ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};

use crate::disk::{Disk, Os};
use crate::idempotency::LogChanges;
use pfm::config::{ChainOrder, Config, ScoreParams};
use pfm::error::{Error, Result};
use pfm::fact::{Fact, FactId, Seq};
use pfm::index::IndexInputs;
use pfm::index::inputs::fingerprint;
use pfm::memory::{Journal, Memory};
use pfm::rank::{Ranker, Recency};
use pfm::time::WallTime;

const FACTS: TableDefinition<u64, &[u8]> = TableDefinition::new("facts");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const REQUESTS: TableDefinition<&str, &[u8]> = TableDefinition::new("requests");
const SETTINGS: TableDefinition<&str, &str> = TableDefinition::new("settings");
const CHECKPOINT: TableDefinition<&str, &[u8]> = TableDefinition::new("checkpoint");

/// The checkpoint's row, and its two markers in `meta`.
const CHECKPOINT_ROW: &str = "store";
const CHECKPOINT_AT: &str = "checkpoint_at";
const CHECKPOINT_TERMS: &str = "checkpoint_terms";

/// The on-disk format this build writes and reads.
pub const FORMAT: u64 = 1;

/// The page cache each open ledger file keeps (redb's default is 1 GiB).
/// The ledger is read whole once, on open, and afterwards only written, so
/// a cache the size of the file would only duplicate in the heap what the
/// OS page cache already holds: measured at 1,000 facts, the default kept
/// 0.63 MB per open tenant (~23% of its store), 64 KiB keeps 0.12 MB, and
/// batched writes got faster, not slower (less cache to maintain).
const CACHE_BYTES: usize = 64 * 1024;

/// The ledger file inside a data directory.
pub const FILE: &str = "ledger.redb";

/// The ledger's counters, stored beside the facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// The id the next fact gets.
    pub next_id: u64,
    /// The last commit's sequence number.
    pub seq: Seq,
    /// The last commit's wall time.
    pub committed_at: WallTime,
    /// The store's revision ordering, fixed when its first commit is
    /// written (none in a ledger written before it was recorded).
    pub ordering: Option<ChainOrder>,
}

/// What a checkpoint is made of, taken from a store: a copy of its facts'
/// states beside their shared bodies, so taking it on the construction
/// actor is cheap and the tokenizing, encoding and writing
/// ([`DurableLedger::checkpoint`]) run on the thread that closes the
/// tenant, not on the threads every tenant's commits share.
#[derive(Clone, Debug)]
pub struct Checkpoint {
    seq: Seq,
    params: ScoreParams,
    /// Whether the store indexes every retained fact (a history index),
    /// not only the current ones: which facts need index inputs.
    history: bool,
    facts: Vec<Fact>,
}

impl Checkpoint {
    /// The checkpoint of `memory` as of its last commit.
    pub fn of(memory: &Memory) -> Checkpoint {
        Checkpoint {
            seq: memory.ledger().seq(),
            params: memory.config().score.clone(),
            history: memory.config().history_index,
            facts: memory.ledger().facts().cloned().collect(),
        }
    }
}

/// A checkpoint as written.
#[derive(Serialize)]
struct CheckpointOut<'a> {
    facts: &'a [Fact],
    inputs: &'a IndexInputs,
}

/// A checkpoint as read back.
#[derive(Deserialize)]
struct CheckpointIn {
    facts: Vec<Fact>,
    inputs: IndexInputs,
}

/// Where an open read the store from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The current checkpoint.
    Checkpoint,
    /// The rows (no current checkpoint of this build).
    Rows,
}

impl Meta {
    fn of(memory: &Memory) -> Meta {
        let ledger = memory.ledger();
        Meta {
            next_id: ledger.next_id(),
            seq: ledger.seq(),
            committed_at: ledger.committed_at(),
            ordering: Some(memory.config().ordering),
        }
    }
}

/// A tenant's own retrieval defaults, chosen when it is created and kept
/// for its life (a request still says otherwise for itself): absent, the
/// server's (`pfm serve --recency`, the `pfm` ranker).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// How recency decays (`span`, `fixed`, `off`).
    pub recency: Option<Recency>,
    /// The ranker of requests that name none (a [`Ranker::named`] name).
    pub ranker: Option<String>,
}

impl Settings {
    /// Whether every setting is valid (the ranker's name is known).
    pub fn validate(&self) -> Result<()> {
        self.ranker().map(drop)
    }

    /// The ranker of requests that name none, if the tenant has its own.
    pub fn ranker(&self) -> Result<Option<Ranker>> {
        self.ranker.as_deref().map(Ranker::named).transpose()
    }
}

/// Rows to write: encoded facts, ids to delete, and the counters after them.
#[derive(Clone, Debug)]
pub struct Batch {
    rows: Vec<(u64, Vec<u8>)>,
    deletes: Vec<u64>,
    meta: Meta,
    requests: LogChanges,
}

impl Batch {
    /// The rows a journal names, encoded from the store's current state.
    pub fn of(memory: &Memory, journal: &Journal) -> Batch {
        Batch {
            rows: journal
                .touched
                .iter()
                .filter_map(|id| memory.ledger().get(*id))
                .map(encode)
                .collect(),
            deletes: journal.erased.iter().map(|id| id.0).collect(),
            meta: Meta::of(memory),
            requests: LogChanges::default(),
        }
    }

    /// Every retained fact: the whole ledger.
    pub fn full(memory: &Memory) -> Batch {
        Batch {
            rows: memory.ledger().facts().map(encode).collect(),
            deletes: Vec::new(),
            meta: Meta::of(memory),
            requests: LogChanges::default(),
        }
    }

    /// The batch with request-id rows to write and delete (for a full
    /// batch: every row of the log).
    pub fn with_requests(mut self, requests: LogChanges) -> Batch {
        self.requests = requests;
        self
    }
}

fn encode(fact: &Fact) -> (u64, Vec<u8>) {
    // Infallible: facts are plain data (strings, numbers, enums).
    let json = serde_json::to_vec(fact).expect("facts serialize");
    (fact.id().0, json)
}

/// The durable ledger of one store.
pub struct DurableLedger {
    path: PathBuf,
    db: Database,
    disk: Arc<dyn Disk>,
    /// As read on open (or written since): a rewrite copies them.
    settings: Settings,
    /// Where the open read the store from.
    source: Source,
}

impl std::fmt::Debug for DurableLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableLedger")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// What [`repair`] found (and did).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepairReport {
    /// Rows read.
    pub rows: usize,
    /// Rows that do not decode, with why.
    pub corrupt: Vec<(u64, String)>,
    /// Whether the corrupt rows were deleted.
    pub dropped: bool,
}

fn storage(path: &Path, what: &str, e: impl std::fmt::Display) -> Error {
    Error::Storage(format!("{}: {what}: {e}", path.display()))
}

fn open_db(disk: &dyn Disk, path: &Path) -> Result<Database> {
    let mut builder = Database::builder();
    builder.set_cache_size(CACHE_BYTES);
    let shown = path.display().to_string();
    builder.set_repair_callback(move |session| {
        tracing::warn!(file = %shown, progress = session.progress(), "repairing the ledger file after an unclean shutdown");
    });
    disk.database(path, &builder).map_err(|e| {
        storage(
            path,
            "cannot open the ledger file (the tenant is not served: another process may hold it open, or `pfm repair` inspects it)",
            e,
        )
    })
}

/// Whether the ledger in `dir` is open in another process (a running
/// server holds each open tenant's file locked).
pub fn is_open_elsewhere(dir: &Path) -> bool {
    matches!(
        Database::open(dir.join(FILE)),
        Err(redb::DatabaseError::DatabaseAlreadyOpen)
    )
}

impl DurableLedger {
    /// Opens (or creates) the ledger in `dir` and rebuilds the store from it.
    /// Any unreadable row, unknown format or broken invariant is an error
    /// naming the file: nothing is served from partial state.
    pub fn open(dir: &Path, config: Config) -> Result<(DurableLedger, Memory)> {
        DurableLedger::open_on(Arc::new(Os), dir, config)
    }

    /// [`DurableLedger::open`] on another [`Disk`] (the crash tests').
    pub fn open_on(
        disk: Arc<dyn Disk>,
        dir: &Path,
        config: Config,
    ) -> Result<(DurableLedger, Memory)> {
        // A new file's or directory's name is durable only once the
        // directory holding it is synced: sync each that this call creates.
        let new_dirs: Vec<PathBuf> = dir
            .ancestors()
            .take_while(|d| !d.as_os_str().is_empty() && !disk.exists(d))
            .map(Path::to_owned)
            .collect();
        disk.private_dir(dir)?;
        let path = dir.join(FILE);
        let created = !disk.exists(&path);
        let db = open_db(&*disk, &path)?;
        disk.restrict(&path, 0o600)?;
        let holders = created.then_some(dir).into_iter();
        for holder in holders.chain(new_dirs.iter().filter_map(|d| d.parent())) {
            disk.sync_dir(holder)
                .map_err(|e| storage(holder, "sync the directory", e))?;
        }
        let mut store = DurableLedger {
            path,
            db,
            disk,
            settings: Settings::default(),
            source: Source::Rows,
        };
        store.settings = store.read_settings()?;
        let meta = store.read_meta()?;
        // A store keeps the ordering it was built under: its chains are
        // ordered by it (`Ledger::verify`), so `config` chooses only a
        // new store's.
        let mut config = Config {
            ordering: meta.ordering.unwrap_or(config.ordering),
            ..config
        };
        if let Some(recency) = store.settings.recency {
            config.score.recency = recency;
        }
        let (at, committed_at) = (meta.next_id, meta.committed_at);
        if let Some(CheckpointIn { facts, inputs }) = store.read_checkpoint(&meta, &config) {
            match Memory::restore_indexed(
                config.clone(),
                facts,
                at,
                meta.seq,
                committed_at,
                Some(inputs),
            ) {
                Ok(memory) => {
                    store.source = Source::Checkpoint;
                    return Ok((store, memory));
                }
                Err(e) => tracing::warn!(
                    file = %store.path.display(),
                    "the checkpoint does not restore ({e}); reading the rows"
                ),
            }
        }
        let facts = store.read_rows()?;
        let corrupt: Vec<_> = facts.iter().filter_map(|r| r.as_ref().err()).collect();
        if let Some((key, why)) = corrupt.first() {
            return Err(Error::InvalidState(format!(
                "{}: table facts, row {key}: {why} ({} corrupt row(s) in all; `pfm repair --drop-corrupt` removes them)",
                store.path.display(),
                corrupt.len()
            )));
        }
        let facts = facts.into_iter().filter_map(Result::ok).collect();
        let memory = Memory::restore(config, facts, at, meta.seq, committed_at)
            .map_err(|e| Error::InvalidState(format!("{}: {e}", store.path.display())))?;
        Ok((store, memory))
    }

    /// Where the open read the store from.
    pub fn source(&self) -> Source {
        self.source
    }

    /// Writes a store's facts and the index inputs of those it indexes as
    /// the file's checkpoint, unless the file's checkpoint is already of
    /// the same commit; returns whether it wrote. `checkpoint` must be of
    /// the store this ledger holds, with every commit written (a commit
    /// that was not leaves its sequence number ahead of the file's, and the
    /// checkpoint is never read). Committed without a sync: closing the
    /// file makes it durable.
    pub fn checkpoint(&mut self, checkpoint: &Checkpoint) -> Result<bool> {
        let p = &self.path;
        if !self.needs_checkpoint(checkpoint.seq, &checkpoint.params) {
            return Ok(false);
        }
        let terms = fingerprint(&checkpoint.params);
        let indexed = checkpoint
            .facts
            .iter()
            .filter(|f| checkpoint.history || f.state.is_current());
        let inputs = IndexInputs::of(indexed.map(|f| &*f.body), &checkpoint.params);
        let blob = rmp_serde::to_vec_named(&CheckpointOut {
            facts: &checkpoint.facts,
            inputs: &inputs,
        })
        .map_err(|e| storage(p, "encode the checkpoint", e))?;
        let mut txn = self.db.begin_write().map_err(|e| storage(p, "begin", e))?;
        txn.set_durability(Durability::None)
            .map_err(|e| storage(p, "begin", e))?;
        {
            let mut t = txn
                .open_table(CHECKPOINT)
                .map_err(|e| storage(p, "open checkpoint", e))?;
            t.insert(CHECKPOINT_ROW, blob.as_slice())
                .map_err(|e| storage(p, "write the checkpoint", e))?;
            let mut meta = txn
                .open_table(META)
                .map_err(|e| storage(p, "open meta", e))?;
            for (name, value) in [(CHECKPOINT_AT, checkpoint.seq), (CHECKPOINT_TERMS, terms)] {
                meta.insert(name, value)
                    .map_err(|e| storage(p, "write meta", e))?;
            }
        }
        txn.commit().map_err(|e| storage(p, "commit", e))?;
        Ok(true)
    }

    /// Whether a [`DurableLedger::checkpoint`] of commit `seq` under
    /// `params` would write: the file's checkpoint is not already marked
    /// as of that commit with index inputs made under `params`. Read from
    /// the file, so a close can ask before it copies the store's facts.
    pub fn needs_checkpoint(&self, seq: Seq, params: &ScoreParams) -> bool {
        let terms = fingerprint(params);
        let current = self.db.begin_read().ok().and_then(|txn| {
            let marks = txn.open_table(META).ok()?;
            Some(marked(&marks, seq, terms))
        });
        current != Some(true)
    }

    /// The tenant's own retrieval defaults.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    fn read_settings(&self) -> Result<Settings> {
        let p = &self.path;
        let txn = self.db.begin_read().map_err(|e| storage(p, "read", e))?;
        let table = match txn.open_table(SETTINGS) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Settings::default()),
            Err(e) => return Err(storage(p, "read settings", e)),
        };
        let get = |name: &str| -> Result<Option<String>> {
            Ok(table
                .get(name)
                .map_err(|e| storage(p, "read settings", e))?
                .map(|v| v.value().to_owned()))
        };
        let recency = get("recency")?
            .map(|r| {
                r.parse()
                    .map_err(|e| Error::InvalidState(format!("{}: {e}", p.display())))
            })
            .transpose()?;
        Ok(Settings {
            recency,
            ranker: get("ranker")?,
        })
    }

    /// The ledger file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The counters (an unknown format is an error).
    fn read_meta(&self) -> Result<Meta> {
        let p = &self.path;
        let txn = self.db.begin_read().map_err(|e| storage(p, "read", e))?;
        let t = match txn.open_table(META) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => {
                return Ok(Meta {
                    next_id: 0,
                    seq: 0,
                    committed_at: WallTime::EPOCH,
                    ordering: None,
                });
            }
            Err(e) => return Err(storage(p, "read meta", e)),
        };
        let get = |name: &str| -> Result<Option<u64>> {
            Ok(t.get(name)
                .map_err(|e| storage(p, "read meta", e))?
                .map(|v| v.value()))
        };
        let format = get("format")?.unwrap_or(FORMAT);
        if format != FORMAT {
            return Err(Error::InvalidState(format!(
                "{}: format {format}, but this build reads format {FORMAT}",
                p.display()
            )));
        }
        Ok(Meta {
            next_id: get("next_id")?.unwrap_or(0),
            seq: get("seq")?.unwrap_or(0),
            committed_at: WallTime::from_millis(get("committed_at")?.unwrap_or(0) as i64),
            ordering: get("ordering")?.map(|o| match o {
                0 => ChainOrder::Arrival,
                _ => ChainOrder::EventTime,
            }),
        })
    }

    /// Every row, decoded, or its key and why not.
    #[allow(clippy::type_complexity)]
    fn read_rows(&self) -> Result<Vec<Result<Fact, (u64, String)>>> {
        let p = &self.path;
        let txn = self.db.begin_read().map_err(|e| storage(p, "read", e))?;
        let mut facts = Vec::new();
        match txn.open_table(FACTS) {
            Ok(t) => {
                for row in t.iter().map_err(|e| storage(p, "read facts", e))? {
                    let (k, v) = row.map_err(|e| storage(p, "read facts", e))?;
                    facts.push(decode(k.value(), v.value()));
                }
            }
            Err(redb::TableError::TableDoesNotExist(_)) => {}
            Err(e) => return Err(storage(p, "read facts", e)),
        }
        Ok(facts)
    }

    /// The checkpoint, if the file has one of its last commit (`meta`)
    /// made by this build under `config`'s scoring parameters, and it
    /// decodes. Anything else is passed over (the rows are read instead),
    /// with a warning when a current checkpoint is unreadable.
    fn read_checkpoint(&self, meta: &Meta, config: &Config) -> Option<CheckpointIn> {
        let p = &self.path;
        let txn = self.db.begin_read().ok()?;
        let marks = txn.open_table(META).ok()?;
        if !marked(&marks, meta.seq, fingerprint(&config.score)) {
            return None;
        }
        let read = || -> std::result::Result<CheckpointIn, String> {
            let table = txn.open_table(CHECKPOINT).map_err(|e| e.to_string())?;
            let row = table
                .get(CHECKPOINT_ROW)
                .map_err(|e| e.to_string())?
                .ok_or("no checkpoint row")?;
            rmp_serde::from_slice(row.value()).map_err(|e| e.to_string())
        };
        read()
            .inspect_err(|why| {
                tracing::warn!(file = %p.display(), "the checkpoint does not decode ({why}); reading the rows");
            })
            .ok()
    }

    /// The stored request-id rows (see `idempotency`).
    pub fn requests(&self) -> Result<Vec<(String, Vec<u8>)>> {
        let p = &self.path;
        let txn = self.db.begin_read().map_err(|e| storage(p, "read", e))?;
        let table = match txn.open_table(REQUESTS) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
            Err(e) => return Err(storage(p, "read requests", e)),
        };
        let rows = table.iter().map_err(|e| storage(p, "read requests", e))?;
        rows.map(|row| {
            let (k, v) = row.map_err(|e| storage(p, "read requests", e))?;
            Ok((k.value().to_owned(), v.value().to_vec()))
        })
        .collect()
    }

    /// Applies a batch in one transaction and syncs it to disk before
    /// returning: the group commit. On error nothing of it is applied.
    pub fn write(&self, batch: &Batch) -> Result<()> {
        self.commit(batch, None)
    }

    /// A new tenant's first write: its whole ledger (a [`Batch::full`])
    /// and its retrieval `settings`, in one transaction. The settings are
    /// as `lifecycle::create` checked them, before anything was made.
    pub fn write_first(&mut self, full: &Batch, settings: Settings) -> Result<()> {
        self.commit(full, Some(&settings))?;
        self.settings = settings;
        Ok(())
    }

    /// [`DurableLedger::write`], with `settings` written in the same
    /// transaction when given.
    fn commit(&self, batch: &Batch, settings: Option<&Settings>) -> Result<()> {
        let p = &self.path;
        let txn = self.db.begin_write().map_err(|e| storage(p, "begin", e))?;
        {
            let mut facts = txn
                .open_table(FACTS)
                .map_err(|e| storage(p, "open facts", e))?;
            for (id, json) in &batch.rows {
                facts
                    .insert(*id, json.as_slice())
                    .map_err(|e| storage(p, "write a fact", e))?;
            }
            for id in &batch.deletes {
                facts
                    .remove(*id)
                    .map_err(|e| storage(p, "delete a fact", e))?;
            }
            let mut requests = txn
                .open_table(REQUESTS)
                .map_err(|e| storage(p, "open requests", e))?;
            for (id, row) in &batch.requests.rows {
                requests
                    .insert(id.as_str(), row.as_slice())
                    .map_err(|e| storage(p, "write a request id", e))?;
            }
            for id in &batch.requests.deletes {
                requests
                    .remove(id.as_str())
                    .map_err(|e| storage(p, "delete a request id", e))?;
            }
        }
        write_meta(&txn, p, batch.meta)?;
        forget_checkpoint(&txn, p)?;
        if let Some(settings) = settings {
            write_settings(&txn, p, settings)?;
        }
        txn.commit().map_err(|e| storage(p, "commit", e))
    }

    /// Replaces the file with one holding exactly `full` (a [`Batch::full`]):
    /// written beside it, synced, renamed over it, and the directory synced.
    /// Afterwards no byte of an erased fact is left in the data directory.
    pub fn rewrite(&mut self, full: &Batch) -> Result<()> {
        let disk = &*self.disk;
        let tmp = self.path.with_extension("redb.tmp");
        if disk.exists(&tmp) {
            disk.remove_file(&tmp)
                .map_err(|e| storage(&tmp, "remove", e))?;
        }
        {
            let fresh = DurableLedger {
                db: open_db(disk, &tmp)?,
                path: tmp.clone(),
                disk: self.disk.clone(),
                settings: Settings::default(),
                source: Source::Rows,
            };
            disk.restrict(&tmp, 0o600)?;
            fresh.commit(full, Some(&self.settings))?;
        }
        disk.rename(&tmp, &self.path)
            .map_err(|e| storage(&self.path, "replace", e))?;
        if let Some(dir) = self.path.parent() {
            disk.sync_dir(dir)
                .map_err(|e| storage(dir, "sync the directory", e))?;
        }
        self.db = open_db(disk, &self.path)?;
        Ok(())
    }
}

fn write_meta(txn: &redb::WriteTransaction, p: &Path, meta: Meta) -> Result<()> {
    let mut t = txn
        .open_table(META)
        .map_err(|e| storage(p, "open meta", e))?;
    for (name, value) in [
        ("format", FORMAT),
        ("next_id", meta.next_id),
        ("seq", meta.seq),
        ("committed_at", meta.committed_at.millis() as u64),
    ] {
        t.insert(name, value)
            .map_err(|e| storage(p, "write meta", e))?;
    }
    if let Some(ordering) = meta.ordering {
        let code = match ordering {
            ChainOrder::Arrival => 0,
            ChainOrder::EventTime => 1,
        };
        t.insert("ordering", code)
            .map_err(|e| storage(p, "write meta", e))?;
    }
    Ok(())
}

/// Whether the file's checkpoint is marked as of commit `seq` with index
/// inputs of fingerprint `terms`.
fn marked(meta: &impl ReadableTable<&'static str, u64>, seq: Seq, terms: u64) -> bool {
    let mark = |name: &str| meta.get(name).ok().flatten().map(|v| v.value());
    mark(CHECKPOINT_AT) == Some(seq) && mark(CHECKPOINT_TERMS) == Some(terms)
}

/// Removes the checkpoint's marker in a write transaction: the checkpoint
/// is not read beside rows this transaction writes.
fn forget_checkpoint(txn: &redb::WriteTransaction, p: &Path) -> Result<()> {
    let mut t = txn
        .open_table(META)
        .map_err(|e| storage(p, "open meta", e))?;
    t.remove(CHECKPOINT_AT)
        .map_err(|e| storage(p, "write meta", e))?;
    Ok(())
}

fn write_settings(txn: &redb::WriteTransaction, p: &Path, settings: &Settings) -> Result<()> {
    let mut t = txn
        .open_table(SETTINGS)
        .map_err(|e| storage(p, "open settings", e))?;
    let recency = settings.recency.map(Recency::name);
    for (name, value) in [("recency", recency), ("ranker", settings.ranker.as_deref())] {
        match value {
            Some(v) => t.insert(name, v).map(drop),
            None => t.remove(name).map(drop),
        }
        .map_err(|e| storage(p, "write settings", e))?;
    }
    Ok(())
}

fn decode(key: u64, bytes: &[u8]) -> Result<Fact, (u64, String)> {
    let fact: Fact = serde_json::from_slice(bytes).map_err(|e| {
        (
            key,
            format!("does not decode at byte column {}: {e}", e.column()),
        )
    })?;
    if fact.id() != FactId(key) {
        return Err((key, format!("holds fact {} under key {key}", fact.id())));
    }
    Ok(fact)
}

/// Inspects the ledger in `dir` (redb first repairs an unclean shutdown, if
/// any) and lists the rows that do not decode; with `drop_corrupt`, deletes
/// them and checks that the rest still forms a valid ledger.
pub fn repair(dir: &Path, config: Config, drop_corrupt: bool) -> Result<RepairReport> {
    let path = dir.join(FILE);
    if !path.exists() {
        return Err(Error::Storage(format!(
            "{}: no ledger file here",
            path.display()
        )));
    }
    let store = DurableLedger {
        db: open_db(&Os, &path)?,
        path,
        disk: Arc::new(Os),
        settings: Settings::default(),
        source: Source::Rows,
    };
    let facts = store.read_rows()?;
    let mut report = RepairReport {
        rows: facts.len(),
        corrupt: facts.into_iter().filter_map(Result::err).collect(),
        dropped: false,
    };
    if drop_corrupt && !report.corrupt.is_empty() {
        let p = &store.path;
        let txn = store.db.begin_write().map_err(|e| storage(p, "begin", e))?;
        {
            let mut t = txn
                .open_table(FACTS)
                .map_err(|e| storage(p, "open facts", e))?;
            for (id, _) in &report.corrupt {
                t.remove(*id).map_err(|e| storage(p, "delete a row", e))?;
            }
        }
        // The checkpoint may hold what the dropped rows held.
        forget_checkpoint(&txn, p)?;
        txn.commit().map_err(|e| storage(p, "commit", e))?;
        report.dropped = true;
    }
    drop(store);
    if report.corrupt.is_empty() || report.dropped {
        DurableLedger::open(dir, config)?;
    }
    Ok(report)
}
