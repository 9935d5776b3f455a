//! `pfm mcp`: one tenant's memory as an MCP server over stdio.

use anyhow::Result;
use clap::Args;

use crate::serve::{ServingArgs, init_logging};

#[derive(Args)]
pub struct McpArgs {
    /// The tenant whose memory the tools read and write: created in the
    /// data directory if it does not exist (with --ordering), so a
    /// `pfm serve` on the same directory serves the same memory.
    #[arg(long, default_value = "me")]
    tenant: String,
    #[command(flatten)]
    serving: ServingArgs,
}

impl McpArgs {
    pub fn run(self) -> Result<()> {
        // stdout carries the protocol: logs go to stderr only.
        init_logging();
        pfm_server::mcp::stdio::run(&self.serving.options()?, &self.tenant)?;
        Ok(())
    }
}
