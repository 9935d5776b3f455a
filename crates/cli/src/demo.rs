//! `pfm demo`: keyed supersession at work.

use anyhow::Result;
use clap::Args;

#[derive(Args)]
pub struct DemoArgs {
    /// Order revisions by their stated time instead of arrival (a late
    /// message stating an older time then becomes history).
    #[arg(long)]
    event_time: bool,
    /// Print each fact's version history at the end.
    #[arg(long)]
    history: bool,
}

impl DemoArgs {
    pub fn run(self) -> Result<()> {
        print!("{}", pfm_harness::demo::run(self.event_time, self.history)?);
        Ok(())
    }
}
