//! Which block lines the coverage gate counts as support, per LoCoMo
//! question (issue 22): the tool behind the abstention table's rules.
//!
//! `cargo run --release -p pfm-harness --example gate_support -- [TAU]
//! [CATEGORY] [PATH]` (defaults 0.15, 5, `../shared/data/locomo/locomo10.json`)
//! asks each conversation's store its questions of one category at the
//! defaults with no gate, then reads each block line alone through
//! [`gate::coverage_passes`]. For adversarial questions (category 5) it
//! prints those that get through and the lines that let them; for
//! answerable ones (1–4), those it abstains on, with their block and
//! whether the block held an evidence turn. It ends with the counts.
use std::path::PathBuf;

use pfm::config::Config;
use pfm::error::{Error, Result};
use pfm::rank::Scored;
use pfm::rules::gate;
use pfm::rules::identity::Resolution;
use pfm_harness::eval::locomo::{build, load};
use pfm_harness::eval::swap;

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let bad = |what: &str| Error::InvalidConfig(format!("{what}: usage: [TAU] [CATEGORY] [PATH]"));
    let tau: f32 = args
        .next()
        .map_or(Ok(0.15), |s| s.parse().map_err(|_| bad("TAU")))?;
    let category: u8 = args
        .next()
        .map_or(Ok(5), |s| s.parse().map_err(|_| bad("CATEGORY")))?;
    let path = args.next().map_or_else(
        || PathBuf::from("../shared/data/locomo/locomo10.json"),
        PathBuf::from,
    );
    let adversarial = category == 5;
    let (mut flagged, mut held, mut asked) = (0, 0, 0);
    for c in &load(&path)? {
        let store = build(c, Config::default(), None)?;
        let version = store.memory.version();
        let at = c.asked_at();
        let questions = c
            .questions
            .iter()
            .filter(|q| q.category == category && (adversarial || !q.evidence.is_empty()));
        for q in questions {
            asked += 1;
            let (block, lines) = swap::ungated(&version, c, q)?;
            let resolution = Resolution::of(&version, &q.text, &c.speakers, at);
            let supports: Vec<&Scored> = lines
                .iter()
                .filter(|s| {
                    gate::coverage_passes(
                        &version,
                        &q.text,
                        std::slice::from_ref(*s),
                        &resolution,
                        tau,
                    )
                })
                .collect();
            let evidence = block
                .lines
                .iter()
                .filter_map(|l| store.turns_of.get(&l.fact))
                .flatten()
                .any(|d| q.evidence.contains(d));
            let short = |s: &Scored| s.body.text().chars().take(160).collect::<String>();
            if adversarial && !supports.is_empty() {
                flagged += 1;
                println!("passes [{}] {}", c.id, q.text);
                for s in supports {
                    println!("    + {}", short(s));
                }
            } else if !adversarial && supports.is_empty() {
                flagged += 1;
                held += usize::from(evidence);
                println!(
                    "abstains [{}] {} (evidence in block: {evidence})",
                    c.id, q.text
                );
                for s in &lines {
                    println!("    - {}", short(s));
                }
            }
        }
    }
    if adversarial {
        println!("{flagged} of {asked} adversarial questions pass at tau {tau}");
    } else {
        println!(
            "{flagged} of {asked} category-{category} questions abstain at tau {tau}, {held} of \
             them over a block with evidence"
        );
    }
    Ok(())
}
