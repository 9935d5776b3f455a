//! `pfm token`: tenant tokens for `pfm serve`.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};

#[derive(Args)]
pub struct TokenArgs {
    #[command(subcommand)]
    action: TokenAction,
}

#[derive(Subcommand)]
enum TokenAction {
    /// Create a bearer token for a tenant (creating the tenant if new) and
    /// print it; only its SHA-256 is stored. A running server picks it up.
    Create {
        /// The tenant: 1 to 64 characters of a-z, 0-9, '-', '_'.
        #[arg(long)]
        tenant: String,
        /// The server's data directory.
        #[arg(long, default_value = "pfm-data")]
        data_dir: PathBuf,
    },
}

impl TokenArgs {
    pub fn run(self) -> Result<()> {
        match self.action {
            TokenAction::Create { tenant, data_dir } => {
                let token = pfm_server::tokens::create(&data_dir, &tenant, jiff::Timestamp::now())?;
                eprintln!(
                    "created a token for tenant {tenant} in {} (shown once; only its hash is stored):",
                    data_dir.display()
                );
                println!("{token}");
                Ok(())
            }
        }
    }
}
