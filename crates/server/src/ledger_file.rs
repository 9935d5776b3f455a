//! A tenant's ledger file, made by its first write. A registered tenant
//! that has written nothing has no file: its reads are served from an
//! empty store, and closing it syncs nothing. Making a redb file costs
//! two syncs and its directories' (and 73 KB of disk), and closing an open
//! one two more, so on a server of 100,000 tenants whose new users read
//! before they write, most opens and closes under churn did only that.
//!
//! # Invariant
//! A write that writes rows makes the file first, in the same batch and
//! on the same actor turn, before it is acknowledged: what
//! [`DurableLedger::open`] syncs for a new file (the file's and its
//! directories' names) is durable before the write's transaction is, as
//! when the file was made on open. A batch that writes nothing makes
//! nothing.

use std::path::{Path, PathBuf};

use crate::durable::{Batch, Checkpoint, DurableLedger, FILE, Settings, Source};
use pfm::config::{Config, ScoreParams};
use pfm::error::{Error, Result};
use pfm::fact::Seq;
use pfm::memory::Memory;
use pfm::time::WallTime;

/// A tenant's ledger: its file, or where its first write will make one.
#[derive(Debug)]
pub enum LedgerFile {
    /// The file, open.
    Made(DurableLedger),
    /// No file yet: the first write makes one in `dir` with `config`.
    Unmade {
        /// The tenant's directory (made with the file, if missing).
        dir: PathBuf,
        /// What a new store is made with (its revision ordering).
        config: Config,
    },
}

impl From<DurableLedger> for LedgerFile {
    fn from(store: DurableLedger) -> Self {
        LedgerFile::Made(store)
    }
}

impl LedgerFile {
    /// Opens the ledger in `dir` if it has a file (replaying it, as
    /// [`DurableLedger::open`]), and otherwise an empty store that makes
    /// its file on its first write.
    /// A file that cannot be looked up (a directory it may not read) is
    /// an error, not an empty store: reads must not answer from nothing
    /// while the tenant's facts are on disk.
    pub fn open(dir: &Path, config: Config) -> Result<(LedgerFile, Memory)> {
        let path = dir.join(FILE);
        if path.try_exists().map_err(Error::io(&path))? {
            let (store, memory) = DurableLedger::open(dir, config)?;
            return Ok((LedgerFile::Made(store), memory));
        }
        // What `DurableLedger::open` restores from a new file.
        let memory = Memory::restore(config.clone(), Vec::new(), 0, 0, WallTime::EPOCH)?;
        let dir = dir.to_owned();
        Ok((LedgerFile::Unmade { dir, config }, memory))
    }

    /// Whether the open read a current checkpoint rather than the rows
    /// (see `durable`, "Checkpoint").
    pub fn from_checkpoint(&self) -> bool {
        matches!(self, LedgerFile::Made(store) if store.source() == Source::Checkpoint)
    }

    /// The ledger file's path (made or not).
    pub fn path(&self) -> PathBuf {
        match self {
            LedgerFile::Made(store) => store.path().to_owned(),
            LedgerFile::Unmade { dir, .. } => dir.join(FILE),
        }
    }

    /// The tenant's own retrieval defaults (none before the file exists:
    /// a tenant created with settings has its file from its creation).
    pub fn settings(&self) -> Settings {
        match self {
            LedgerFile::Made(store) => store.settings().clone(),
            LedgerFile::Unmade { .. } => Settings::default(),
        }
    }

    /// The stored request-id rows (see `idempotency`).
    pub fn requests(&self) -> Result<Vec<(String, Vec<u8>)>> {
        match self {
            LedgerFile::Made(store) => store.requests(),
            LedgerFile::Unmade { .. } => Ok(Vec::new()),
        }
    }

    /// [`DurableLedger::write`], making the file first if there is none.
    pub fn write(&mut self, batch: &Batch) -> Result<()> {
        self.made()?.write(batch)
    }

    /// [`DurableLedger::rewrite`], making the file first if there is none.
    pub fn rewrite(&mut self, full: &Batch) -> Result<()> {
        self.made()?.rewrite(full)
    }

    /// [`DurableLedger::needs_checkpoint`]; a store with no file has
    /// nothing to keep.
    pub fn needs_checkpoint(&self, seq: Seq, params: &ScoreParams) -> bool {
        match self {
            LedgerFile::Made(store) => store.needs_checkpoint(seq, params),
            LedgerFile::Unmade { .. } => false,
        }
    }

    /// [`DurableLedger::checkpoint`]; a store with no file has nothing to
    /// keep.
    pub fn checkpoint(&mut self, checkpoint: &Checkpoint) -> Result<bool> {
        match self {
            LedgerFile::Made(store) => store.checkpoint(checkpoint),
            LedgerFile::Unmade { .. } => Ok(false),
        }
    }

    /// The open file, made now if there was none.
    fn made(&mut self) -> Result<&mut DurableLedger> {
        if let LedgerFile::Unmade { dir, config } = self {
            // The store it returns is empty: the writer's store is the one
            // serving the tenant since its open.
            let (store, _) = DurableLedger::open(dir, config.clone())?;
            *self = LedgerFile::Made(store);
        }
        match self {
            LedgerFile::Made(store) => Ok(store),
            // Infallible: made just above.
            LedgerFile::Unmade { .. } => unreachable!("the file was made above"),
        }
    }
}
