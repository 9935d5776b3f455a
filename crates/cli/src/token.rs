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
    /// Create a bearer token for a tenant (creating the tenant if new), or
    /// with --metrics one that opens only GET /metrics, or with --admin one
    /// that opens only the tenant lifecycle API (/v1/tenants, /v1/tokens),
    /// and print it; only its SHA-256 is stored. A running server accepts
    /// it within a second.
    Create {
        /// The tenant: 1 to 64 characters of a-z, 0-9, '-', '_'.
        #[arg(long, required_unless_present_any = ["metrics", "admin"], conflicts_with_all = ["metrics", "admin"])]
        tenant: Option<String>,
        /// A metrics token (for Prometheus) instead of a tenant's.
        #[arg(long, conflicts_with = "admin")]
        metrics: bool,
        /// An admin token: creates, lists and deletes tenants and their
        /// tokens over HTTP; opens no tenant's memory.
        #[arg(long)]
        admin: bool,
        /// The server's data directory.
        #[arg(long, default_value = "pfm-data")]
        data_dir: PathBuf,
    },
    /// List the tokens: id (the first digits of its hash), scope, tenant,
    /// creation time. Tokens themselves are never stored.
    List {
        /// The server's data directory.
        #[arg(long, default_value = "pfm-data")]
        data_dir: PathBuf,
    },
    /// Revoke a token by id (from `list`), or every token of a tenant; a
    /// running server refuses it within a second, and closes a tenant no
    /// token names once idle. The tenant's data stays on disk (`pfm tenant
    /// delete` removes it).
    Revoke {
        /// At least 6 hex digits of a token id.
        #[arg(long, required_unless_present = "tenant", conflicts_with = "tenant")]
        id: Option<String>,
        /// Revoke every token of this tenant.
        #[arg(long)]
        tenant: Option<String>,
        /// The server's data directory.
        #[arg(long, default_value = "pfm-data")]
        data_dir: PathBuf,
    },
}

impl TokenArgs {
    pub fn run(self) -> Result<()> {
        use pfm_server::tokens;
        match self.action {
            TokenAction::Create {
                tenant,
                admin,
                data_dir,
                ..
            } => {
                let grant = match (&tenant, admin) {
                    (Some(t), _) => tokens::Grant::Tenant(t),
                    (None, true) => tokens::Grant::Admin,
                    (None, false) => tokens::Grant::Metrics,
                };
                let token = tokens::create(&data_dir, grant, jiff::Timestamp::now())?;
                let what = match grant {
                    tokens::Grant::Tenant(t) => format!("tenant {t}"),
                    tokens::Grant::Metrics => "metrics".to_owned(),
                    tokens::Grant::Admin => "admin".to_owned(),
                };
                eprintln!(
                    "created a {what} token in {} (shown once; only its hash is stored):",
                    data_dir.display()
                );
                println!("{token}");
            }
            TokenAction::List { data_dir } => {
                println!("{:<14}{:<9}{:<24}created", "id", "scope", "tenant");
                for t in tokens::list(&data_dir)? {
                    let scope = t.scope.name();
                    println!("{:<14}{scope:<9}{:<24}{}", t.id(), t.tenant, t.created);
                }
            }
            TokenAction::Revoke {
                id,
                tenant,
                data_dir,
            } => {
                let revoked = tokens::revoke(&data_dir, id.as_deref(), tenant.as_deref())?;
                if revoked.is_empty() {
                    anyhow::bail!("no such token: see `pfm token list`");
                }
                for t in revoked {
                    eprintln!("revoked {} ({} {})", t.id(), t.tenant, t.created);
                }
            }
        }
        Ok(())
    }
}
