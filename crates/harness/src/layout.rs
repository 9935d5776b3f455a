//! `pfm layout`: the two storage layouts for many tenants, measured side by
//! side on redb with ledger-sized rows (issue 23):
//!
//! - **per tenant**: one redb file per tenant (`<dir>/files/<tenant>.redb`),
//!   what `pfm serve` does;
//! - **shared**: one redb file for every tenant, keys prefixed by the
//!   tenant (`(tenant, fact)`).
//!
//! For each: the time to create `tenants` tenants of `rows` rows (set-up,
//! written without fsync: what matters is the steady state), the bytes on
//! disk, what a server start must open, the time to open one tenant's rows,
//! a group commit of one row to each of `group` tenants made durable (one
//! fsync'd transaction per tenant file, or one for the shared file), and the
//! erasure of one tenant: its time, and whether any byte of its text is left
//! in the data directory afterwards (and, for the shared file, what a
//! compaction that removes it costs).

use std::path::{Path, PathBuf};
use std::time::Instant;

use redb::{Database, Durability, ReadableDatabase, TableDefinition};
use serde::Serialize;

use crate::load::{Quantiles, quantiles_of};
use pfm::error::{Error, Result};

const PER_TENANT: TableDefinition<u64, &[u8]> = TableDefinition::new("facts");
const SHARED: TableDefinition<(u32, u64), &[u8]> = TableDefinition::new("facts");

/// What to measure.
#[derive(Clone, Debug)]
pub struct LayoutOptions {
    /// Scratch directory (emptied first).
    pub dir: PathBuf,
    /// Tenants.
    pub tenants: u32,
    /// Rows per tenant.
    pub rows: u64,
    /// Tenants in one group commit.
    pub group: u32,
    /// Group commits (and single-tenant opens) measured.
    pub samples: usize,
}

/// One layout's measurements. Times in µs unless named otherwise.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LayoutReport {
    /// `per tenant` or `shared`.
    pub layout: String,
    /// Seconds to create every tenant (no fsync).
    pub create_secs: f64,
    /// Bytes on disk.
    pub disk_bytes: u64,
    /// Files a server holds open to serve `open` tenants: one per open
    /// tenant, or one.
    pub files: String,
    /// A start: what must be opened before the first request (µs).
    pub start_us: f64,
    /// Reading one tenant's rows (a cold open's storage part).
    pub open_tenant_us: Quantiles,
    /// One row to each of `group` tenants, durable (fsync).
    pub group_commit_us: Quantiles,
    /// Erasing one tenant.
    pub erase_us: f64,
    /// Whether the erased tenant's text is still in a file afterwards.
    pub erased_text_left: bool,
    /// Shared file: a compaction after the erasure (µs), and whether the
    /// text is left after it.
    pub compact_us: Option<f64>,
    /// After compaction.
    pub left_after_compact: Option<bool>,
}

/// The text that names a row: what an erasure check looks for.
fn marker(tenant: u32, fact: u64) -> String {
    format!("marker{tenant}x{fact} ")
}

/// A ledger-sized row (~400 bytes of JSON) naming its tenant and fact.
fn row(tenant: u32, fact: u64) -> Vec<u8> {
    format!(
        "{{\"id\":{fact},\"body\":{{\"text\":\"{}moved the quarterly planning review to the larger room on the third floor\",\"entities\":[\"ent{fact}\"],\"participants\":[\"user{tenant}\"],\"key\":null}},\"state\":{{\"status\":\"active\",\"intervals\":[{{\"from\":1700000000000,\"to\":null}}],\"last_observed\":1700000000000,\"usage\":0}},\"observed_at\":1700000000000}}",
        marker(tenant, fact)
    )
    .into_bytes()
}

fn storage(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Storage(format!("{what}: {e}"))
}

fn commit(txn: redb::WriteTransaction, durable: bool) -> Result<()> {
    let mut txn = txn;
    if !durable {
        txn.set_durability(Durability::None)
            .map_err(|e| storage("durability", e))?;
    }
    txn.commit().map_err(|e| storage("commit", e))
}

fn disk_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => disk_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// Whether any file under `dir` holds `needle`.
fn holds(dir: &Path, needle: &[u8]) -> bool {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            let p = e.path();
            match p.is_dir() {
                true => holds(&p, needle),
                false => {
                    std::fs::read(&p).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle))
                }
            }
        })
}

/// The time (µs) `read(t)` takes to read one tenant's rows, for `samples`
/// tenants spread over the range; each read must find every row.
fn read_times(
    options: &LayoutOptions,
    mut read: impl FnMut(u32) -> Result<usize>,
) -> Result<Quantiles> {
    let step = (options.tenants / options.samples.max(1) as u32).max(1);
    let mut times = Vec::with_capacity(options.samples);
    for i in 0..options.samples as u32 {
        let t = (i * step) % options.tenants;
        let started = Instant::now();
        let rows = read(t)?;
        times.push(started.elapsed().as_micros() as u64);
        if rows as u64 != options.rows {
            return Err(Error::InvalidState(format!(
                "tenant {t}: {rows} rows read back, {} written",
                options.rows
            )));
        }
    }
    Ok(quantiles_of(times))
}

fn per_tenant(options: &LayoutOptions, progress: &dyn Fn(&str)) -> Result<LayoutReport> {
    let dir = options.dir.join("files");
    std::fs::create_dir_all(&dir).map_err(Error::io(&dir))?;
    let path = |t: u32| dir.join(format!("t{t:06}.redb"));
    let started = Instant::now();
    for t in 0..options.tenants {
        if t % 10_000 == 0 {
            progress(&format!("  per tenant: creating tenant {t}"));
        }
        let db = Database::create(path(t)).map_err(|e| storage("create", e))?;
        let txn = db.begin_write().map_err(|e| storage("begin", e))?;
        {
            let mut table = txn
                .open_table(PER_TENANT)
                .map_err(|e| storage("table", e))?;
            for f in 0..options.rows {
                table
                    .insert(f, row(t, f).as_slice())
                    .map_err(|e| storage("insert", e))?;
            }
        }
        commit(txn, false)?;
    }
    let create_secs = started.elapsed().as_secs_f64();
    let open_tenant_us = read_times(options, |t| {
        let db = Database::open(path(t)).map_err(|e| storage("open", e))?;
        let txn = db.begin_read().map_err(|e| storage("read", e))?;
        let table = txn
            .open_table(PER_TENANT)
            .map_err(|e| storage("table", e))?;
        let rows = redb::ReadableTable::iter(&table).map_err(|e| storage("iter", e))?;
        Ok(rows.count())
    })?;
    // The group's files are open, as a serving tenant's is.
    let mut group_us = Vec::new();
    for s in 0..options.samples {
        let first = (s as u32 * options.group) % options.tenants;
        let dbs: Vec<Database> = (0..options.group)
            .map(|i| Database::open(path((first + i) % options.tenants)))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| storage("open", e))?;
        let started = Instant::now();
        for (i, db) in dbs.iter().enumerate() {
            let txn = db.begin_write().map_err(|e| storage("begin", e))?;
            {
                let mut table = txn
                    .open_table(PER_TENANT)
                    .map_err(|e| storage("table", e))?;
                let t = (first + i as u32) % options.tenants;
                table
                    .insert(
                        options.rows + s as u64,
                        row(t, options.rows + s as u64).as_slice(),
                    )
                    .map_err(|e| storage("insert", e))?;
            }
            commit(txn, true)?;
        }
        group_us.push(started.elapsed().as_micros() as u64);
    }
    let victim = options.tenants / 2;
    let started = Instant::now();
    std::fs::remove_file(path(victim)).map_err(Error::io(&path(victim)))?;
    let erase_us = started.elapsed().as_secs_f64() * 1e6;
    Ok(LayoutReport {
        layout: "per tenant".into(),
        create_secs,
        disk_bytes: disk_bytes(&dir),
        files: "one per open tenant".into(),
        start_us: 0.0,
        open_tenant_us,
        group_commit_us: quantiles_of(group_us),
        erase_us,
        erased_text_left: holds(&dir, marker(victim, 0).as_bytes()),
        compact_us: None,
        left_after_compact: None,
    })
}

fn shared(options: &LayoutOptions, progress: &dyn Fn(&str)) -> Result<LayoutReport> {
    let dir = options.dir.join("shared");
    std::fs::create_dir_all(&dir).map_err(Error::io(&dir))?;
    let path = dir.join("all.redb");
    let started = Instant::now();
    {
        let db = Database::create(&path).map_err(|e| storage("create", e))?;
        for chunk in (0..options.tenants).collect::<Vec<_>>().chunks(1_000) {
            if chunk[0] % 10_000 == 0 {
                progress(&format!("  shared: writing tenant {}", chunk[0]));
            }
            let txn = db.begin_write().map_err(|e| storage("begin", e))?;
            {
                let mut table = txn.open_table(SHARED).map_err(|e| storage("table", e))?;
                for &t in chunk {
                    for f in 0..options.rows {
                        table
                            .insert((t, f), row(t, f).as_slice())
                            .map_err(|e| storage("insert", e))?;
                    }
                }
            }
            commit(txn, true)?;
        }
    }
    let create_secs = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let mut db = Database::open(&path).map_err(|e| storage("open", e))?;
    let start_us = started.elapsed().as_secs_f64() * 1e6;
    let open_tenant_us = read_times(options, |t| {
        let txn = db.begin_read().map_err(|e| storage("read", e))?;
        let table = txn.open_table(SHARED).map_err(|e| storage("table", e))?;
        let rows = redb::ReadableTable::range(&table, (t, 0)..(t + 1, 0))
            .map_err(|e| storage("range", e))?;
        Ok(rows.count())
    })?;
    let mut group_us = Vec::new();
    for s in 0..options.samples {
        let first = (s as u32 * options.group) % options.tenants;
        let started = Instant::now();
        let txn = db.begin_write().map_err(|e| storage("begin", e))?;
        {
            let mut table = txn.open_table(SHARED).map_err(|e| storage("table", e))?;
            for i in 0..options.group {
                let t = (first + i) % options.tenants;
                let f = options.rows + s as u64;
                table
                    .insert((t, f), row(t, f).as_slice())
                    .map_err(|e| storage("insert", e))?;
            }
        }
        commit(txn, true)?;
        group_us.push(started.elapsed().as_micros() as u64);
    }
    let victim = options.tenants / 2;
    let started = Instant::now();
    let txn = db.begin_write().map_err(|e| storage("begin", e))?;
    {
        let mut table = txn.open_table(SHARED).map_err(|e| storage("table", e))?;
        table
            .retain_in((victim, 0)..(victim + 1, 0), |_, _| false)
            .map_err(|e| storage("erase", e))?;
    }
    commit(txn, true)?;
    let erase_us = started.elapsed().as_secs_f64() * 1e6;
    let needle = marker(victim, 0);
    let erased_text_left = holds(&dir, needle.as_bytes());
    let started = Instant::now();
    db.compact().map_err(|e| storage("compact", e))?;
    let compact_us = started.elapsed().as_secs_f64() * 1e6;
    drop(db);
    Ok(LayoutReport {
        layout: "shared".into(),
        create_secs,
        disk_bytes: disk_bytes(&dir),
        files: "one".into(),
        start_us,
        open_tenant_us,
        group_commit_us: quantiles_of(group_us),
        erase_us,
        erased_text_left,
        compact_us: Some(compact_us),
        left_after_compact: Some(holds(&dir, needle.as_bytes())),
    })
}

/// Measures both layouts; `progress` gets a line now and then.
pub fn run(options: &LayoutOptions, progress: &dyn Fn(&str)) -> Result<Vec<LayoutReport>> {
    if options.tenants < 2 || options.rows == 0 || options.group == 0 || options.samples == 0 {
        return Err(Error::InvalidConfig(
            "--tenants is at least 2, and --rows, --group and --samples at least 1".into(),
        ));
    }
    let _ = std::fs::remove_dir_all(&options.dir);
    progress("per-tenant files");
    let files = per_tenant(options, progress)?;
    progress("one shared file");
    let one = shared(options, progress)?;
    let _ = std::fs::remove_dir_all(&options.dir);
    Ok(vec![files, one])
}

/// The reports as a markdown table.
pub fn table(options: &LayoutOptions, reports: &[LayoutReport]) -> String {
    let mut out = format!(
        "pfm layout: {} tenants of {} rows, group commits of {} tenants\n\n\
         | layout | create (no fsync) | on disk | files held | start | one tenant's rows p50 / p99 µs | durable group commit p50 / p99 ms | erase one tenant | its text left after | compaction to remove it |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
        options.tenants, options.rows, options.group
    );
    for r in reports {
        let compact = match (r.compact_us, r.left_after_compact) {
            (Some(us), Some(left)) => format!("{:.1} s (text left: {left})", us / 1e6),
            _ => "not needed".into(),
        };
        out.push_str(&format!(
            "| {} | {:.1} s | {:.0} MB | {} | {:.1} ms | {:.0} / {:.0} | {:.1} / {:.1} | {:.1} ms | {} | {} |\n",
            r.layout,
            r.create_secs,
            r.disk_bytes as f64 / 1e6,
            r.files,
            r.start_us / 1e3,
            r.open_tenant_us.p50,
            r.open_tenant_us.p99,
            r.group_commit_us.p50 / 1e3,
            r.group_commit_us.p99 / 1e3,
            r.erase_us / 1e3,
            r.erased_text_left,
            compact
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_layouts_measure_and_only_the_shared_file_keeps_erased_text_until_compaction() {
        let dir = std::env::temp_dir().join(format!("pfm-layout-{}", std::process::id()));
        let options = LayoutOptions {
            dir: dir.clone(),
            tenants: 20,
            rows: 5,
            group: 4,
            samples: 3,
        };
        let reports = run(&options, &|_| {}).unwrap();
        assert_eq!(reports.len(), 2);
        assert!(
            !reports[0].erased_text_left,
            "a removed file leaves nothing"
        );
        assert_eq!(reports[1].left_after_compact, Some(false));
        assert!(
            reports
                .iter()
                .all(|r| r.disk_bytes > 0 && r.group_commit_us.max > 0.0)
        );
        assert!(table(&options, &reports).contains("| shared |"));
        assert!(!dir.exists());
    }
}
