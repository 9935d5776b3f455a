//! Where the ledger's files live. The server uses the operating system's
//! file system ([`Os`]); the crash tests (`crates/server/tests/crash.rs`)
//! use a disk that forgets every write and every rename not yet synced when
//! it "loses power", so a missing fsync fails them (a SIGKILL leaves the
//! page cache intact and would not). The durable ledger reaches files only
//! through [`Disk`] so that both run the same code.
//!
//! # Contract (POSIX, as the crash model assumes it)
//! A file's bytes are durable once redb syncs them (its backend's
//! `sync_data`); a file's name — a created file, a rename, a removal — is
//! durable only once its directory is synced ([`Disk::sync_dir`]).

use std::fmt::Debug;
use std::io;
use std::path::Path;

use redb::{Builder, Database, DatabaseError};

use crate::files;
use pfm::error::Result;

/// The file operations the durable ledger needs.
pub trait Disk: Debug + Send + Sync + 'static {
    /// Opens the redb database at `path` with `builder`, creating an empty
    /// file if there is none.
    fn database(&self, path: &Path, builder: &Builder) -> Result<Database, DatabaseError>;
    /// Whether a file or directory is at `path`.
    fn exists(&self, path: &Path) -> bool;
    /// Removes the file at `path`.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Renames `from` over `to` (atomically replacing it).
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Makes the names in `dir` durable (creations, renames, removals).
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Creates `dir` (and its parents), private to the owner.
    fn private_dir(&self, dir: &Path) -> Result<()>;
    /// Makes a file private to the owner (`mode`, on Unix).
    fn restrict(&self, path: &Path, mode: u32) -> Result<()>;
}

/// The operating system's file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct Os;

impl Disk for Os {
    fn database(&self, path: &Path, builder: &Builder) -> Result<Database, DatabaseError> {
        builder.create(path)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        std::fs::File::open(dir).and_then(|d| d.sync_all())
    }

    fn private_dir(&self, dir: &Path) -> Result<()> {
        files::private_dir(dir)
    }

    fn restrict(&self, path: &Path, mode: u32) -> Result<()> {
        files::restrict(path, mode)
    }
}
