//! `pfm tenant`: the tenants of a `pfm serve` data directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use pfm_server::{durable, tokens};

#[derive(Args)]
pub struct TenantArgs {
    #[command(subcommand)]
    action: TenantAction,
}

#[derive(Subcommand)]
enum TenantAction {
    /// Create a tenant with its own revision ordering (fixed for its life)
    /// and print its first token (shown once).
    Create {
        /// The tenant: 1 to 64 characters of a-z, 0-9, '-', '_'.
        #[arg(long)]
        tenant: String,
        /// arrival (the last value to arrive is current) or event-time (the
        /// value with the latest stated time is: a late-arriving old message
        /// becomes history).
        #[arg(long, default_value = "arrival")]
        ordering: pfm::config::ChainOrder,
        /// The server's data directory.
        #[arg(long, default_value = "pfm-data")]
        data_dir: PathBuf,
    },
    /// List the tenants: name, tokens, ledger size on disk. A tenant with
    /// a ledger and no token is unreachable until a token names it.
    List {
        /// The server's data directory.
        #[arg(long, default_value = "pfm-data")]
        data_dir: PathBuf,
    },
    /// Delete a tenant and everything it stored: its tokens are revoked,
    /// then (once a running server has closed it, within a second when it
    /// is idle) its ledger directory is removed. Cannot be undone.
    Delete {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// The server's data directory.
        #[arg(long, default_value = "pfm-data")]
        data_dir: PathBuf,
        /// Seconds to wait for a running server to close the tenant.
        #[arg(long, default_value_t = 10)]
        wait_secs: u64,
    },
}

/// Tenant name → (tokens, ledger directory if any).
fn tenants(data_dir: &Path) -> Result<BTreeMap<String, (usize, Option<PathBuf>)>> {
    let mut out: BTreeMap<String, (usize, Option<PathBuf>)> = BTreeMap::new();
    for t in tokens::list(data_dir)? {
        if t.scope == tokens::Scope::Tenant {
            out.entry(t.tenant.clone()).or_default().0 += 1;
        }
    }
    let root = data_dir.join("tenants");
    if let Ok(dirs) = std::fs::read_dir(&root) {
        for dir in dirs.flatten() {
            let name = dir.file_name().to_string_lossy().into_owned();
            if tokens::check_tenant(&name).is_ok() && dir.path().is_dir() {
                out.entry(name).or_default().1 = Some(dir.path());
            }
        }
    }
    Ok(out)
}

fn bytes_under(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

impl TenantArgs {
    pub fn run(self) -> Result<()> {
        match self.action {
            TenantAction::Create {
                tenant,
                ordering,
                data_dir,
            } => {
                tokens::check_tenant(&tenant)?;
                if tenants(&data_dir)?.contains_key(&tenant) {
                    bail!(
                        "tenant {tenant} exists in {}: `pfm token create --tenant {tenant}` gives it another token",
                        data_dir.display()
                    );
                }
                pfm_server::files::private_dir(&data_dir)?;
                pfm_server::files::private_dir(&data_dir.join("tenants"))?;
                let dir = data_dir.join("tenants").join(&tenant);
                let config = pfm::Config {
                    ordering,
                    ..pfm::Config::default()
                };
                // The ledger records its ordering with its first write.
                let (store, memory) = durable::DurableLedger::open(&dir, config)?;
                store.write(&durable::Batch::full(&memory))?;
                drop((store, memory));
                let token = tokens::create(&data_dir, Some(&tenant), jiff::Timestamp::now())?;
                eprintln!(
                    "created tenant {tenant} ({ordering:?} ordering) in {} with a token (shown once; only its hash is stored):",
                    data_dir.display()
                );
                println!("{token}");
            }
            TenantAction::List { data_dir } => {
                println!("{:<24}{:>8}{:>14}", "tenant", "tokens", "ledger bytes");
                for (name, (n, dir)) in tenants(&data_dir)? {
                    let bytes = dir.as_deref().map_or(0, bytes_under);
                    println!("{name:<24}{n:>8}{bytes:>14}");
                }
            }
            TenantAction::Delete {
                tenant,
                data_dir,
                wait_secs,
            } => {
                tokens::check_tenant(&tenant)?;
                let Some((n, dir)) = tenants(&data_dir)?.remove(&tenant) else {
                    bail!(
                        "no tenant {tenant} in {}: see `pfm tenant list`",
                        data_dir.display()
                    );
                };
                if n > 0 {
                    tokens::revoke(&data_dir, None, Some(&tenant))?;
                    eprintln!("revoked {n} token(s) of {tenant}");
                }
                if let Some(dir) = dir {
                    // A running server closes a tenant no token names once
                    // no request holds it; until then its ledger is locked.
                    let deadline = Instant::now() + Duration::from_secs(wait_secs);
                    while durable::is_open_elsewhere(&dir) {
                        if Instant::now() > deadline {
                            bail!(
                                "{tenant}'s ledger is still open in a running server after {wait_secs} s (a request holds it): its tokens are revoked; run this again to remove its data"
                            );
                        }
                        std::thread::sleep(Duration::from_millis(100));
                    }
                    std::fs::remove_dir_all(&dir)
                        .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
                    eprintln!("deleted {} and everything under it", dir.display());
                }
            }
        }
        Ok(())
    }
}
