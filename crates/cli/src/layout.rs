//! `pfm layout`: one redb file per tenant against one shared file.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use pfm_harness::layout::{self, LayoutOptions};

#[derive(Args)]
pub struct LayoutArgs {
    /// Tenants.
    #[arg(long, default_value_t = 100_000)]
    tenants: u32,
    /// Rows (facts) per tenant.
    #[arg(long, default_value_t = 10)]
    rows: u64,
    /// Tenants in one durable group commit.
    #[arg(long, default_value_t = 16)]
    group: u32,
    /// Group commits and single-tenant reads measured.
    #[arg(long, default_value_t = 100)]
    samples: usize,
    /// Scratch directory (emptied first and removed after; about 2 KB of
    /// disk per tenant per layout and row, plus 20 KB per tenant file).
    #[arg(long, default_value = "target/pfm-layout")]
    dir: PathBuf,
    /// Print one JSON array on stdout.
    #[arg(long)]
    json: bool,
}

impl LayoutArgs {
    pub fn run(self) -> Result<()> {
        let options = LayoutOptions {
            dir: self.dir,
            tenants: self.tenants,
            rows: self.rows,
            group: self.group,
            samples: self.samples,
        };
        let reports = layout::run(&options, &|line| eprintln!("{line}"))?;
        crate::print(&reports, self.json, || layout::table(&options, &reports))
    }
}
