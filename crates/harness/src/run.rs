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

impl RunMeta {
    /// This process's command line (as `pfm …`), the working tree's revision
    /// and this machine, dated `now`.
    pub fn here(now: jiff::Timestamp) -> RunMeta {
        RunMeta {
            command: std::iter::once("pfm".to_owned())
                .chain(std::env::args().skip(1))
                .collect::<Vec<_>>()
                .join(" "),
            revision: git_revision(),
            machine: machine(),
            date: now.strftime("%Y-%m-%d %H:%M UTC").to_string(),
        }
    }
}

/// The machine's host name, or "host" (names a run folder).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        .unwrap_or_else(|| "host".to_owned())
}

/// `git describe --always --dirty` of the working tree, or "unknown".
fn git_revision() -> String {
    std::process::Command::new("git")
        .args(["describe", "--always", "--dirty"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map_or_else(
            || "unknown".to_owned(),
            |o| String::from_utf8_lossy(&o.stdout).trim().to_owned(),
        )
}

/// The CPU model and core count, from /proc/cpuinfo where there is one.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    format!("{model}, {cores} cores")
}
