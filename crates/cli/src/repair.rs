//! `pfm repair`: inspect (and optionally clean) a tenant's ledger file.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use pfm::Config;

#[derive(Args)]
pub struct RepairArgs {
    /// The server's data directory.
    #[arg(long, default_value = "pfm-data")]
    data_dir: PathBuf,
    /// The tenant whose ledger to inspect.
    #[arg(long)]
    tenant: String,
    /// Delete the rows that do not decode (their facts are lost).
    #[arg(long)]
    drop_corrupt: bool,
}

impl RepairArgs {
    pub fn run(self) -> Result<()> {
        pfm_server::tokens::check_tenant(&self.tenant)?;
        let dir = self.data_dir.join("tenants").join(&self.tenant);
        let report = pfm_server::durable::repair(&dir, Config::default(), self.drop_corrupt)?;
        println!(
            "{}: {} rows read, {} corrupt",
            dir.join(pfm_server::durable::FILE).display(),
            report.rows,
            report.corrupt.len()
        );
        for (key, why) in &report.corrupt {
            println!("  row {key}: {why}");
        }
        if report.dropped {
            println!("dropped the corrupt rows; the ledger opens cleanly now");
        } else if !report.corrupt.is_empty() {
            anyhow::bail!(
                "the ledger has corrupt rows: rerun with --drop-corrupt to delete them (their facts are lost)"
            );
        } else {
            println!("the ledger opens cleanly");
        }
        Ok(())
    }
}
