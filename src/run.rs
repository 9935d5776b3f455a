//! Provenance of a harness run: the header every report (`pfm eval`,
//! `pfm scale`) carries, so a table can be traced to the command, the
//! revision and the machine that produced it.

use serde::Serialize;

/// Who ran what, where.
#[derive(Clone, Debug, Serialize)]
pub struct RunMeta {
    /// The command line.
    pub command: String,
    /// `git describe` of the tree.
    pub revision: String,
    /// The machine, in words (CPU model and cores).
    pub machine: String,
    /// When (UTC).
    pub date: String,
}
