//! The P-Mem probes (the *Memory of Memory* paper, Sections 4.2.1–4.2.3;
//! Tables 6 and 8): what retention and typed operations buy, on our own
//! generator (the paper's ALFWorld-Revision data is not public).
//!
//! - **Retraction** (RQ4): a value `v1`, an erroneous update to `v2`, `d`
//!   distractors (0 or 32), then a retraction that names `v2` as wrong or
//!   only the slot, never restating `v1`. Recovered: the block holds `v1`
//!   and not `v2`.
//! - **Conflict** (RQ5): two reports of different values from different
//!   people with no precedence cue, 8 distractors, then a settling report;
//!   counterbalanced (the settled value is the first report's in even
//!   instances, the second's in odd ones).
//! - **Revision chains** (RQ3): chains of depth L = 1…16 interleaved with
//!   four distractor chains of the same slot, read after the last message.
//!
//! Arms: `pfm` (retention, typed operations), `crud` (retention off: an
//! update overwrites the cell and a retraction deletes it, the paper's CRUD
//! corner), `lww` (last write wins: every report is a plain update) and
//! `raw` (a keyless archive of every message, read by retrieval). Each pfm
//! probe runs both ways in: **structured** (the caller sends key, value and
//! operation: P-Mem's patch interface) and **text** (plain sentences; the
//! rule extractor keys them and its cues propose the operations).
//!
//! We have no LLM reader, so an arm's block is judged by token containment
//! (`pfm::text::contains`): where the paper's raw reader reassembles the
//! answer from several lines, we report what a reader is given — whether
//! the right value is in the block and whether a wrong one is beside it —
//! and, for chains, a deterministic reader that takes the value of the
//! latest-dated line (the analogue of the paper's arrival tags). Every rate
//! has a Wilson 95% interval; n = 140 per cell as in the paper.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

pub use super::cells::Tally;
use pfm::config::Config;
use pfm::disclose::Disclose;
use pfm::error::Result;
use pfm::fact::Op;
use pfm::{EntityKind, Forget, Key, Memory, Observation, Outcome, Request, WallTime, text};

/// Instances per probe cell (the paper's n).
pub const N: usize = 140;
/// Distractors between the erroneous update and its retraction.
pub const DISTANCES: [usize; 2] = [0, 32];
/// Distractors between the conflicting reports and the settling one.
pub const CONFLICT_DISTRACTORS: usize = 8;
/// Revision-chain depths.
pub const DEPTHS: [usize; 5] = [1, 2, 4, 8, 16];
/// Distractor chains interleaved with each target chain.
pub const DISTRACTOR_CHAINS: usize = 4;

/// One slot of the probes: the phrase that states it and the question.
struct Slot {
    name: &'static str,
    owner: EntityKind,
    /// `{o}` the owner, `{v}` the value.
    says: &'static str,
    /// How a retraction names the slot without its value.
    about: &'static str,
    query: &'static str,
    value: fn(usize) -> String,
}

static SLOTS: [Slot; 4] = [
    Slot {
        name: "budget_cap",
        owner: EntityKind::Project,
        says: "the budget cap for {o} is {v}",
        about: "the budget cap for {o}",
        query: "What is the budget cap for {o}?",
        value: |i| format!("${}k", 10 + i),
    },
    Slot {
        name: "room",
        owner: EntityKind::Person,
        says: "the sync with {o} is in {v}",
        about: "the sync with {o}",
        query: "Which room is the sync with {o} in?",
        value: |i| format!("room {}{}", 2 + i / 26, (b'A' + (i % 26) as u8) as char),
    },
    Slot {
        name: "meeting_time",
        owner: EntityKind::Person,
        says: "the standup with {o} is at {v}",
        about: "the standup with {o}",
        query: "When is the standup with {o}?",
        value: |i| {
            let half = if (i / 144) % 2 == 0 { "am" } else { "pm" };
            format!("{}:{:02}{half}", 1 + i % 12, 5 * ((i / 12) % 12))
        },
    },
    Slot {
        name: "deadline",
        owner: EntityKind::Project,
        says: "the {o} deadline is {v}",
        about: "the {o} deadline",
        query: "When is the {o} deadline?",
        value: |i| {
            const MONTHS: [&str; 12] = [
                "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
            ];
            format!("{} {}", MONTHS[i % 12], 1 + (i / 12) % 28)
        },
    },
];

const FIRST: [&str; 8] = [
    "Alex", "Priya", "Sam", "Mina", "Jon", "Ines", "Theo", "Rosa",
];
const LAST: [&str; 8] = [
    "Rivera",
    "Natarajan",
    "Okafor",
    "Lindqvist",
    "Brandt",
    "Moreau",
    "Castillo",
    "Yamada",
];
const PROJECTS: [&str; 8] = [
    "Halcyon", "Meridian", "Boreal", "Quasar", "Lantern", "Tessera", "Juniper", "Obsidian",
];
/// How the text path words a retraction (`{about}` the slot, `{v}` the
/// erroneous value; never the value before it), rotating over instances.
/// The last is a common phrasing the cue table does not hold: its misses
/// measure what the rules do not cover.
pub const RETRACTIONS: [&str; 4] = [
    "The {v} update to {about} was a mistake.",
    "Ignore the last update about {about}.",
    "Scratch that, {about} is not {v} after all.",
    "Forget what I said about {about}, that figure was off.",
];
/// How the text path words the conflicting report (`{says}` the statement);
/// the last is not in the cue table.
pub const HEARSAY: [&str; 3] = [
    "I heard {says}.",
    "Apparently {says}.",
    "Someone told me {says}.",
];
/// How the text path words the settling report; the last is not in the
/// cue table.
pub const SETTLING: [&str; 3] = [
    "Confirmed: {says}.",
    "I checked, it's settled: {says}.",
    "Final word from the organiser: {says}.",
];

/// Who reports: the first report and the second, conflicting one.
const REPORTERS: [&str; 2] = ["Dana Whitfield", "Omar Haddad"];

/// A probe's world: slot `s` of owner `o` (0 is the target).
struct World {
    slot: &'static Slot,
    owners: Vec<String>,
}

impl World {
    fn new(instance: usize, owners: usize) -> World {
        let slot = &SLOTS[instance % SLOTS.len()];
        let owners = (0..owners)
            .map(|o| {
                let i = instance / SLOTS.len() * 7 + o;
                match slot.owner {
                    EntityKind::Person => {
                        format!("{} {}", FIRST[i % 8], LAST[(i / 8 + i) % 8])
                    }
                    _ => format!("{} {}", PROJECTS[i % 8], 1 + i / 8),
                }
            })
            .collect();
        World { slot, owners }
    }

    fn key(&self, o: usize) -> Key {
        Key::new(&self.owners[o], self.slot.name).expect("probe keys are valid")
    }

    fn fill(&self, template: &str, o: usize, v: &str) -> String {
        template.replace("{o}", &self.owners[o]).replace("{v}", v)
    }

    fn says(&self, o: usize, v: &str) -> String {
        self.fill(self.slot.says, o, v)
    }

    /// The target's value `i`; distractors' values come from 100 up.
    fn value(&self, i: usize) -> String {
        (self.slot.value)(i)
    }

    fn store(&self, keyed: bool) -> Memory {
        let mut m = Memory::new(Config {
            use_keys: keyed,
            ..Config::default()
        })
        .expect("the default config is valid");
        for o in &self.owners {
            m.register_entity(o, self.slot.owner)
                .expect("probe names are valid");
        }
        m
    }

    fn ask(&self, m: &Memory, day: i64, disclose: Disclose) -> String {
        let request = Request::new(self.fill(self.slot.query, 0, ""), at(day))
            .with_k(10)
            .with_budget(2000)
            .with_disclose(disclose);
        m.retrieve(&request).expect("probe requests are valid").text
    }
}

fn at(day: i64) -> WallTime {
    WallTime::parse("2025-06-01")
        .expect("a date")
        .plus_millis(day * 86_400_000)
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// How a message reaches the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Path {
    /// Key, value and operation given (P-Mem's patch interface).
    Structured,
    /// Plain sentences; the extractor keys them, its cues propose operations.
    Text,
}

/// One message of a probe: a statement about owner `o` by `who`.
struct Message {
    text: String,
    o: usize,
    value: Option<String>,
    op: Op,
    who: &'static str,
}

/// Sends a message the way `path` says; returns what the ledger did.
fn send(m: &mut Memory, w: &World, msg: &Message, path: Path, day: i64) -> Result<Outcome> {
    let mut o = Observation::new(msg.text.clone(), at(day)).with_participants([msg.who]);
    if path == Path::Structured {
        o = o
            .with_key(w.key(msg.o), msg.value.as_deref())
            .with_op(msg.op, None);
    }
    Ok(m.observe(o)?.outcome)
}

/// CRUD: an update overwrites the cell, a retraction deletes it.
fn send_crud(m: &mut Memory, w: &World, msg: &Message, day: i64) -> Result<()> {
    m.forget(&Forget::Key(w.key(msg.o)), at(day))?;
    if msg.op == Op::Accept {
        send(m, w, msg, Path::Structured, day)?;
    }
    Ok(())
}

fn statement(w: &World, o: usize, v: &str, update: bool, who: &'static str) -> Message {
    let says = w.says(o, v);
    Message {
        text: if update {
            format!("Update: {says} now.")
        } else {
            format!("{}.", capital(&says))
        },
        o,
        value: Some(v.to_owned()),
        op: Op::Accept,
        who,
    }
}

/// `n` distractor statements about owners 1.. with values from 100 up.
fn distractors(w: &World, n: usize, from: usize) -> Vec<Message> {
    (0..n)
        .map(|j| {
            let o = 1 + j % (w.owners.len() - 1);
            statement(
                w,
                o,
                &w.value(100 + from + j),
                j >= w.owners.len() - 1,
                REPORTERS[0],
            )
        })
        .collect()
}

/// One row of the retraction probe.
#[derive(Clone, Debug, Serialize)]
pub struct RetractionRow {
    /// Arm.
    pub arm: &'static str,
    /// Way in (pfm only).
    pub path: Option<Path>,
    /// Distractors between the error and its retraction.
    pub distance: usize,
    /// The block holds `v1` and not `v2`.
    pub recovered: Tally,
    /// The block holds `v1` (beside anything else).
    pub v1_in_block: Tally,
    /// The retraction was applied as one (pfm: a `revoked` receipt).
    pub applied: Option<Tally>,
    /// Text path: unrecovered instances by the retraction's wording.
    pub missed: BTreeMap<&'static str, usize>,
}

/// One row of the conflict probe.
#[derive(Clone, Debug, Serialize)]
pub struct ConflictRow {
    /// Arm.
    pub arm: &'static str,
    /// Way in (pfm only).
    pub path: Option<Path>,
    /// The second report was recorded as a contest.
    pub contest_recorded: Option<Tally>,
    /// Pre-resolution blocks show both values (pfm: as a contested line).
    pub flagged: Tally,
    /// Pre-resolution blocks hold the eventual answer alone.
    pub pre_correct: Tally,
    /// The settling report was applied as a resolution.
    pub resolve_landed: Option<Tally>,
    /// Post-resolution blocks hold the settled value and not the other.
    pub post_correct: Tally,
    /// Text path: instances whose contest was not recorded, or whose
    /// resolution did not land, by the report's wording.
    pub missed: BTreeMap<&'static str, usize>,
}

/// One row of the revision-chain probe.
#[derive(Clone, Debug, Serialize)]
pub struct ChainRow {
    /// Arm and way in (`commit structured`, `commit text`, `raw`).
    pub arm: &'static str,
    /// Chain depth.
    pub depth: usize,
    /// The block holds the current value and no earlier one of the chain.
    pub clean: Tally,
    /// The latest-dated block line naming a chain value holds the current one.
    pub latest_dated: Tally,
}

/// Everything the probes measured.
#[derive(Clone, Debug, Serialize)]
pub struct Probes {
    /// Table 8 analogue.
    pub retraction: Vec<RetractionRow>,
    /// Section 4.2.3 analogue.
    pub conflict: Vec<ConflictRow>,
    /// Table 6 analogue.
    pub chains: Vec<ChainRow>,
}

/// Runs the three probes.
pub fn run() -> Result<Probes> {
    Ok(Probes {
        retraction: retraction()?,
        conflict: conflict()?,
        chains: chains()?,
    })
}

fn retraction() -> Result<Vec<RetractionRow>> {
    let mut rows = Vec::new();
    for d in DISTANCES {
        let arms: [(&str, Option<Path>); 4] = [
            ("pfm", Some(Path::Structured)),
            ("pfm", Some(Path::Text)),
            ("crud", None),
            ("raw", None),
        ];
        for (arm, path) in arms {
            let mut recovered = Vec::new();
            let mut v1_in = Vec::new();
            let mut applied = Vec::new();
            let mut missed: BTreeMap<&'static str, usize> = BTreeMap::new();
            for i in 0..N {
                let w = World::new(i, 6);
                let (v1, v2) = (w.value(0), w.value(1));
                let template = RETRACTIONS[i % RETRACTIONS.len()];
                let retract = Message {
                    text: template
                        .replace("{about}", &w.fill(w.slot.about, 0, ""))
                        .replace("{v}", &v2),
                    o: 0,
                    value: None,
                    op: Op::Revoke,
                    who: REPORTERS[0],
                };
                let mut msgs = vec![
                    statement(&w, 0, &v1, false, REPORTERS[0]),
                    statement(&w, 0, &v2, true, REPORTERS[0]),
                ];
                msgs.extend(distractors(&w, d, 0));
                msgs.push(retract);
                let mut m = w.store(arm != "raw");
                let mut revoked = false;
                for (day, msg) in msgs.iter().enumerate() {
                    let day = day as i64;
                    match (arm, path) {
                        ("crud", _) => send_crud(&mut m, &w, msg, day)?,
                        ("raw", _) => {
                            send(&mut m, &w, msg, Path::Text, day)?;
                        }
                        (_, Some(p)) => {
                            let out = send(&mut m, &w, msg, p, day)?;
                            revoked |= matches!(out, Outcome::Revoked { .. });
                        }
                        _ => unreachable!("every arm is listed"),
                    }
                }
                let block = w.ask(&m, msgs.len() as i64, Disclose::NONE);
                let ok = text::contains(&block, &v1) && !text::contains(&block, &v2);
                v1_in.push(text::contains(&block, &v1));
                recovered.push(ok);
                applied.push(revoked);
                if !ok && path == Some(Path::Text) {
                    *missed.entry(template).or_default() += 1;
                }
            }
            rows.push(RetractionRow {
                arm,
                path,
                distance: d,
                recovered: Tally::of(recovered),
                v1_in_block: Tally::of(v1_in),
                applied: (arm == "pfm").then(|| Tally::of(applied)),
                missed,
            });
        }
    }
    Ok(rows)
}

fn conflict() -> Result<Vec<ConflictRow>> {
    let arms: [(&str, Option<Path>); 4] = [
        ("pfm", Some(Path::Structured)),
        ("pfm", Some(Path::Text)),
        ("lww", None),
        ("raw", None),
    ];
    let mut rows = Vec::new();
    for (arm, path) in arms {
        let (mut recorded, mut flagged, mut pre, mut landed, mut post) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut missed: BTreeMap<&'static str, usize> = BTreeMap::new();
        for i in 0..N {
            let w = World::new(i, 6);
            let (v1, v2) = (w.value(0), w.value(1));
            let (gold, other) = if i % 2 == 0 { (&v1, &v2) } else { (&v2, &v1) };
            let first = statement(&w, 0, &v1, false, REPORTERS[0]);
            let (hearsay, settling) = (
                HEARSAY[i % HEARSAY.len()],
                SETTLING[(i / 2) % SETTLING.len()],
            );
            let second = Message {
                text: hearsay.replace("{says}", &w.says(0, &v2)),
                op: if arm == "pfm" {
                    Op::Contest
                } else {
                    Op::Accept
                },
                ..statement(&w, 0, &v2, false, REPORTERS[1])
            };
            let settle = Message {
                text: settling.replace("{says}", &w.says(0, gold)),
                op: if arm == "pfm" {
                    Op::Resolve
                } else {
                    Op::Accept
                },
                ..statement(&w, 0, gold, false, REPORTERS[0])
            };
            let mut m = w.store(arm != "raw");
            let way = path.unwrap_or(if arm == "raw" {
                Path::Text
            } else {
                Path::Structured
            });
            let mut day = 0i64;
            let mut step = |m: &mut Memory, msg: &Message| -> Result<Outcome> {
                day += 1;
                send(m, &w, msg, way, day)
            };
            step(&mut m, &first)?;
            let contested = matches!(step(&mut m, &second)?, Outcome::Contested { .. });
            recorded.push(contested);
            for msg in distractors(&w, CONFLICT_DISTRACTORS, 0) {
                step(&mut m, &msg)?;
            }
            let shown = w.ask(
                &m,
                20,
                Disclose {
                    alternatives: true,
                    ..Disclose::NONE
                },
            );
            let both = text::contains(&shown, &v1) && text::contains(&shown, &v2);
            flagged.push(if arm == "pfm" {
                both && shown.contains("(contested: ")
            } else {
                both
            });
            let before = w.ask(&m, 20, Disclose::NONE);
            pre.push(text::contains(&before, gold) && !text::contains(&before, other));
            let resolved = matches!(step(&mut m, &settle)?, Outcome::Resolved { .. });
            landed.push(resolved);
            let after = w.ask(&m, 21, Disclose::NONE);
            post.push(text::contains(&after, gold) && !text::contains(&after, other));
            if path == Some(Path::Text) {
                if !contested {
                    *missed.entry(hearsay).or_default() += 1;
                }
                if !resolved {
                    *missed.entry(settling).or_default() += 1;
                }
            }
        }
        rows.push(ConflictRow {
            arm,
            path,
            contest_recorded: (arm == "pfm").then(|| Tally::of(recorded)),
            flagged: Tally::of(flagged),
            pre_correct: Tally::of(pre),
            resolve_landed: (arm == "pfm").then(|| Tally::of(landed)),
            post_correct: Tally::of(post),
            missed,
        });
    }
    Ok(rows)
}

fn chains() -> Result<Vec<ChainRow>> {
    let arms: [(&str, Path, bool); 3] = [
        ("commit structured", Path::Structured, true),
        ("commit text", Path::Text, true),
        ("raw", Path::Text, false),
    ];
    let mut rows = Vec::new();
    for depth in DEPTHS {
        for (arm, path, keyed) in arms {
            let (mut clean, mut latest) = (Vec::new(), Vec::new());
            for i in 0..N {
                let w = World::new(i, 1 + DISTRACTOR_CHAINS);
                let mut m = w.store(keyed);
                // Round-robin over the five chains, one message a day.
                let mut day = 0i64;
                for step in 0..depth {
                    for o in 0..=DISTRACTOR_CHAINS {
                        let v = w.value(if o == 0 { step } else { 100 + o * 20 + step });
                        send(
                            &mut m,
                            &w,
                            &statement(&w, o, &v, step > 0, REPORTERS[0]),
                            path,
                            day,
                        )?;
                        day += 1;
                    }
                }
                let block = w.ask(&m, day, Disclose::NONE);
                let current = w.value(depth - 1);
                let stale = (0..depth - 1).any(|s| text::contains(&block, &w.value(s)));
                clean.push(text::contains(&block, &current) && !stale);
                latest.push(
                    latest_dated(&block, &(0..depth).map(|s| w.value(s)).collect::<Vec<_>>())
                        == Some(depth - 1),
                );
            }
            rows.push(ChainRow {
                arm,
                depth,
                clean: Tally::of(clean),
                latest_dated: Tally::of(latest),
            });
        }
    }
    Ok(rows)
}

/// The deterministic order reader: among the block's lines that name one of
/// `values`, the latest-dated line's value (its index in `values`).
fn latest_dated(block: &str, values: &[String]) -> Option<usize> {
    block
        .lines()
        .filter_map(|line| {
            let date = line.strip_prefix("- (")?.get(..10)?;
            let v = values.iter().rposition(|v| text::contains(line, v))?;
            Some((date.to_owned(), v))
        })
        .max()
        .map(|(_, v)| v)
}

/// The paper's values (P-Mem, Sections 4.2.1–4.2.3).
mod paper {
    /// Retraction recovery by arm and distance (pfm, crud, raw).
    pub fn recovery(arm: &str, distance: usize) -> Option<f64> {
        match (arm, distance) {
            ("pfm", _) => Some(1.0),
            ("crud", _) => Some(0.0),
            ("raw", 0) => Some(0.979),
            ("raw", 32) => Some(0.920),
            _ => None,
        }
    }
    /// Raw-read accuracy on revision chains (Table 6), L = 1, 2, 4, 8.
    pub fn raw_chain(depth: usize) -> Option<f64> {
        match depth {
            1 => Some(1.0),
            2 => Some(0.729),
            4 => Some(0.429),
            8 => Some(0.25),
            _ => None,
        }
    }
    /// Raw + arrival tags (Table 6).
    pub fn tagged_chain(depth: usize) -> Option<f64> {
        match depth {
            1 => Some(1.0),
            2 => Some(0.979),
            4 => Some(0.80),
            8 => Some(0.643),
            _ => None,
        }
    }
}

fn path_name(p: Option<Path>) -> &'static str {
    match p {
        Some(Path::Structured) => "structured",
        Some(Path::Text) => "text",
        None => "—",
    }
}

/// The text path's misses under a table, by wording.
fn misses<'a>(
    w: &mut String,
    rows: impl Iterator<Item = (usize, &'a BTreeMap<&'static str, usize>)>,
    label: &str,
) {
    let mut any = false;
    for (at, missed) in rows {
        for (wording, n) in missed {
            let place = if label.is_empty() {
                String::new()
            } else {
                format!(" at {label} = {at}")
            };
            let _ = writeln!(w, "- text path{place}: {n} misses worded \"{wording}\"");
            any = true;
        }
    }
    if !any {
        let _ = writeln!(w, "- text path: no misses");
    }
    let _ = writeln!(w);
}

/// The three probe tables, paper values beside ours.
pub fn markdown(w: &mut String, p: &Probes) {
    let _ = writeln!(
        w,
        "## P-Mem probes — retention, rollback, contest and resolve (our generator)\n\n\
         n = {N} per cell, Wilson 95% intervals, each cell **ours (interval) · paper**. \
         Blocks are judged by token containment (no LLM reader): where the paper's raw reader \
         reassembles an answer, we report what the block gives a reader. \
         `crates/harness/src/eval/provenance.rs` documents the generator and the arms.\n"
    );
    let _ = writeln!(
        w,
        "### Retraction probe (RQ4): an erroneous update, d distractors, a retraction that never restates v1\n\n\
         | Arm | Way in | d | Recovered (v1, not v2) | v1 in block | Retraction applied |\n|---|---|---|---|---|---|"
    );
    for r in &p.retraction {
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} | {} | {} |",
            r.arm,
            path_name(r.path),
            r.distance,
            r.recovered.cell(if r.arm == "raw" {
                None
            } else {
                paper::recovery(r.arm, r.distance)
            }),
            r.v1_in_block.cell(if r.arm == "raw" {
                paper::recovery(r.arm, r.distance)
            } else {
                None
            }),
            r.applied
                .map(|s| s.cell(None))
                .unwrap_or_else(|| "—".into()),
        );
    }
    let _ = writeln!(
        w,
        "\nThe paper's raw archival 97.9% / 92.0% is its LLM reader's recovery; we set it beside \
         *v1 in block*, the evidence our raw block hands a reader (the same block also holds v2 and \
         the retraction). CRUD deletes the cell, so it has nothing to recover."
    );
    misses(w, p.retraction.iter().map(|r| (r.distance, &r.missed)), "d");
    let _ = writeln!(
        w,
        "### Conflict probe (RQ5): two reports without precedence, {CONFLICT_DISTRACTORS} distractors, then a settling report\n\n\
         | Arm | Way in | Contest recorded | Conflict shown pre-resolution | Pre-resolution correct | Resolve landed | Post-resolution correct |\n|---|---|---|---|---|---|---|"
    );
    for r in &p.conflict {
        let pfm = r.arm == "pfm";
        let paper_flag = match r.arm {
            "pfm" => Some(1.0),
            "raw" => Some(0.964),
            _ => None,
        };
        let paper_post = match r.arm {
            "pfm" => Some(0.979),
            "raw" => Some(0.571),
            _ => None,
        };
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} | {} | {} | {} |",
            r.arm,
            path_name(r.path),
            r.contest_recorded
                .map(|s| s.cell(pfm.then_some(1.0)))
                .unwrap_or_else(|| "—".into()),
            r.flagged.cell(paper_flag),
            r.pre_correct.cell((r.arm == "lww").then_some(0.5)),
            r.resolve_landed
                .map(|s| s.cell(pfm.then_some(1.0)))
                .unwrap_or_else(|| "—".into()),
            r.post_correct.cell(paper_post),
        );
    }
    let _ = writeln!(
        w,
        "\nPre-resolution (without disclosure), pfm serves the incumbent (the first report), so its \
         answer is the eventual one in the half of the instances settled to the first report; LWW serves \
         the second, the paper's coin flip. With `disclose: [\"alternatives\"]` pfm shows both. Our settling report restates the value, so LWW's plain \
         update lands it too; the raw archive keeps both reports beside the settling one."
    );
    misses(w, p.conflict.iter().map(|r| (0, &r.missed)), "");
    let _ = writeln!(
        w,
        "Every text-path miss is a wording outside the cue table (`src/extract/cues.rs`), kept in \
         the generator on purpose to measure what the rules cover: an unrecognised retraction is \
         stored as a plain keyless statement (the erroneous value stays current); unrecognised \
         hearsay is a plain update (last write wins); a settling report on a cell that is not \
         contested — because its contest was missed, or its own wording was — is a plain update, so \
         its value still lands and post-resolution accuracy holds.\n"
    );
    let _ = writeln!(
        w,
        "### Revision chains (RQ3): depth L, four interleaved distractor chains, top 10\n\n\
         | Arm | L | Clean (current, no earlier value) | Latest-dated line is current |\n|---|---|---|---|"
    );
    for r in &p.chains {
        let raw = r.arm == "raw";
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} |",
            r.arm,
            r.depth,
            r.clean.cell(if raw {
                paper::raw_chain(r.depth)
            } else if r.depth <= 8 {
                Some(1.0)
            } else {
                None
            }),
            r.latest_dated.cell(if raw {
                paper::tagged_chain(r.depth)
            } else {
                None
            }),
        );
    }
    let _ = writeln!(
        w,
        "\nThe paper's raw column is its reader's accuracy on a similarity-ranked top 10 (100 / 72.9 / \
         42.9 / 25.0%); its arrival-tag column (100 / 97.9 / 80.0 / 64.3%) is set beside our \
         latest-dated-line reader, which sorts the block's own dates. The paper stops at L = 8.\n"
    );
}
