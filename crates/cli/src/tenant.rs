//! `pfm tenant`: the tenants of a `pfm serve` data directory.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use pfm_server::{durable, lifecycle, tokens};

#[derive(Args)]
pub struct TenantArgs {
    #[command(subcommand)]
    action: TenantAction,
}

#[derive(Subcommand)]
enum TenantAction {
    /// Create a tenant with its own revision ordering and retrieval
    /// defaults (fixed for its life) and print its first token (shown
    /// once).
    Create {
        /// The tenant: 1 to 64 characters of a-z, 0-9, '-', '_'.
        #[arg(long)]
        tenant: String,
        /// arrival (the last value to arrive is current) or event-time (the
        /// value with the latest stated time is: a late-arriving old message
        /// becomes history).
        #[arg(long, default_value = "arrival")]
        ordering: pfm::config::ChainOrder,
        /// The tenant's recency decay for retrievals that do not say: span,
        /// fixed or off. Default: the server's (`pfm serve --recency`).
        #[arg(long)]
        recency: Option<pfm::rank::Recency>,
        /// The tenant's ranker for retrievals that name none (pfm,
        /// bm25_validity[_p], dense_validity, hybrid_validity, ...).
        /// Default: pfm.
        #[arg(long)]
        ranker: Option<String>,
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

impl TenantArgs {
    pub fn run(self) -> Result<()> {
        match self.action {
            TenantAction::Create {
                tenant,
                ordering,
                recency,
                ranker,
                data_dir,
            } => {
                let settings = durable::Settings { recency, ranker };
                let Some(token) = lifecycle::create(
                    &data_dir,
                    &tenant,
                    ordering,
                    settings,
                    jiff::Timestamp::now(),
                )?
                else {
                    bail!(
                        "tenant {tenant} exists in {}: `pfm token create --tenant {tenant}` gives it another token",
                        data_dir.display()
                    );
                };
                eprintln!(
                    "created tenant {tenant} ({ordering:?} ordering) in {} with a token (shown once; only its hash is stored):",
                    data_dir.display()
                );
                println!("{token}");
            }
            TenantAction::List { data_dir } => {
                println!("{:<24}{:>8}{:>14}", "tenant", "tokens", "ledger bytes");
                for t in lifecycle::list(&data_dir)? {
                    let (name, n, bytes) = (&t.name, t.tokens, t.ledger_bytes());
                    println!("{name:<24}{n:>8}{bytes:>14}");
                }
            }
            TenantAction::Delete {
                tenant,
                data_dir,
                wait_secs,
            } => {
                let Some(lifecycle::TenantInfo { tokens: n, dir, .. }) =
                    lifecycle::find(&data_dir, &tenant)?
                else {
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
                    lifecycle::remove_data(&dir)?;
                    eprintln!("deleted {} and everything under it", dir.display());
                }
            }
        }
        Ok(())
    }
}
