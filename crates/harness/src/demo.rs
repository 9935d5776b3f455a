//! `pfm demo`: keyed supersession at work on a six-message revision chain,
//! then the identity posterior and the slot gate on the same store.

use std::fmt::Write as _;

use pfm::config::ChainOrder;
use pfm::rules::{Abstain, Identity, Rules};
use pfm::{Config, Memory, Observation, Request, Result, WallTime};

/// A day in June 2025.
fn june(day: u32, hour: u32) -> Result<WallTime> {
    WallTime::parse(&format!("2025-06-{day:02}T{hour:02}:00:00Z"))
}

/// The demo's transcript: a revision chain observed message by message,
/// with the block before and after each, then the rules at work.
pub fn run(event_time: bool, show_history: bool) -> Result<String> {
    // Written with `let _ = writeln!`: formatting into a String cannot fail.
    let mut out = String::new();
    let config = Config {
        ordering: if event_time {
            ChainOrder::EventTime
        } else {
            ChainOrder::Arrival
        },
        ..Config::default()
    };
    let mut memory = Memory::new(config)?;
    // Two people share a first name: without identity rules both Alexes'
    // standups compete for the block; the posterior (Eq. 2) keeps Alex
    // Rivera's, and the slot gate abstains where nothing answers.
    let messages = [
        (
            "The standup with Alex Rivera is moved to 9:30am.",
            "Alex Rivera",
            june(2, 9)?,
        ),
        (
            "The standup with Alex Chen is moved to 11am.",
            "Alex Chen",
            june(3, 10)?,
        ),
        (
            "Alex Rivera standup is rescheduled to 10:45am.",
            "Alex Rivera",
            june(9, 16)?,
        ),
        (
            "The standup with Alex Rivera is moved to room 16C.",
            "Alex Rivera",
            june(10, 8)?,
        ),
        (
            "New time for the standup with Alex Rivera: moved to 10:45 AM.",
            "Alex Rivera",
            june(11, 9)?,
        ),
        // Written on June 5, delivered late: arrival order lets it win.
        (
            "The standup with Alex Rivera is moved to 9am.",
            "Alex Rivera",
            june(5, 12)?,
        ),
    ];
    let ask_with = |memory: &Memory, context: &str, rules: Rules| -> Result<String> {
        let request = Request::new(context, june(12, 9)?)
            .with_participants(["Alex Rivera"])
            .with_rules(rules);
        let block = memory.retrieve(&request)?;
        Ok(match (block.is_empty(), block.abstained) {
            (_, true) => "(empty block: abstained)".to_owned(),
            (true, false) => "(empty block)".to_owned(),
            (false, false) => block.text,
        })
    };
    let ask = |memory: &Memory| ask_with(memory, "the standup with Alex is at", Rules::NONE);
    let _ = writeln!(
        out,
        "pfm demo: ordering = {}\nrequest: \"the standup with Alex is at\" (to Alex Rivera, 2025-06-12)\n",
        if event_time { "event time" } else { "arrival" }
    );
    let _ = writeln!(out, "before any observation:\n{}\n", ask(&memory)?);
    for (text, participant, at) in messages {
        let receipt =
            memory.observe(Observation::new(text, at).with_participants([participant]))?;
        let key = receipt
            .key
            .as_ref()
            .map_or_else(|| "no key".to_owned(), ToString::to_string);
        let _ = writeln!(
            out,
            "observe [{}] {text:?} to {participant}\n  -> commit {}: {} ({key})",
            at,
            receipt.seq,
            receipt.outcome.name()
        );
        let _ = writeln!(out, "{}\n", ask(&memory)?);
    }
    let gated = Rules {
        identity: Identity::Posterior,
        abstain: Abstain::Slot(0.5),
    };
    let _ = writeln!(
        out,
        "with rules {}:\n{}\n",
        serde_json::to_string(&gated).expect("rules serialize"),
        ask_with(&memory, "the standup with Alex is at", gated)?
    );
    let _ = writeln!(
        out,
        "\"the standup with Alex Chen is in\" (nobody has said where Alex Chen's standup is), same rules:\n{}\n",
        ask_with(&memory, "the standup with Alex Chen is in", gated)?
    );
    if show_history {
        let _ = writeln!(out, "history, newest first:");
        for fact in memory.ledger().active() {
            let chain = memory.history(fact.id())?;
            if chain.len() > 1 {
                for f in chain {
                    let active: Vec<String> = f
                        .state
                        .intervals
                        .iter()
                        .map(|i| match i.to() {
                            Some((to, _)) => format!("[{}, {to})", i.from()),
                            None => format!("[{}, now)", i.from()),
                        })
                        .collect();
                    let active = if active.is_empty() {
                        "never".to_owned()
                    } else {
                        active.join(" ")
                    };
                    let status = format!("{:?}", f.state.status).to_lowercase();
                    let _ = writeln!(
                        out,
                        "  {} {status:<12} active in commits {active:<10} support {}: {}",
                        f.id(),
                        f.state.support,
                        f.body.text()
                    );
                }
            }
        }
    }
    Ok(out)
}
