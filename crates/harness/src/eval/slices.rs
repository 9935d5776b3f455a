//! The benchmark slices of Appendix N (Table 22), each breaking one
//! assumption of the main benchmark, from the same generator:
//!
//! - [`multi_valued`]: one person holds two meetings of one slot type (a
//!   standup and a sync), so a key at (entity, slot) is too coarse;
//! - [`out_of_order`]: 30% of the revised chains arrive permuted, their
//!   stated times unchanged;
//! - [`participant_cases`]: the participant of a chain's messages is the
//!   subject, a third party, a group with the subject, or absent, while
//!   queries keep the subject as `P_t`;
//! - [`hard_identity`]: twelve pairs of people who share a first name hold
//!   standups with the same noun, template and arrival day, plus one room
//!   query per pair that the store cannot answer.

use rand::rngs::Xoshiro256PlusPlus;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

use super::generator::{
    self, CHIT_CHAT, FILLERS, Instance, Labels, QUERY_TIME_MS, Query, Subject, background,
    chain_messages, empty_chain, label, people_named, unique_value,
};
use super::templates::{self, Fill};
use pfm::time::WallTime;

/// People of the multi-valued slice (unique first names).
pub const MULTI_PEOPLE: usize = 24;
/// Filler messages of the multi-valued slice.
pub const MULTI_FILLERS: usize = 200;
/// Share of revised chains delivered out of order.
pub const OUT_OF_ORDER_SHARE: f64 = 0.3;
/// Same-first-name pairs of the hard identity slice.
pub const HARD_PAIRS: usize = 12;

/// Salts that give each slice its own random stream per seed.
const MULTI_SALT: u64 = 0x6d75_6c74_6900_0000;
const ORDER_SALT: u64 = 0x6f72_6465_7200_0000;
const CASE_SALT: u64 = 0x6361_7365_0000_0000;
const HARD_SALT: u64 = 0x6861_7264_0000_0000;

fn rng(seed: u64, salt: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(seed ^ salt)
}

/// Multi-valued slots: [`MULTI_PEOPLE`] people with unique first names,
/// each with a standup and a sync chain of two revisions (three messages),
/// one standard query per chain, and [`MULTI_FILLERS`] filler messages.
pub fn multi_valued(seed: u64) -> Instance {
    let mut rng = rng(seed, MULTI_SALT);
    let people = people_named(&templates::UNIQUE_FIRST[..MULTI_PEOPLE], &mut rng);
    let query_time = WallTime::from_millis(QUERY_TIME_MS);
    let t = templates::templates("meeting_time");
    let mut used = std::collections::HashSet::new();
    let (mut chains, mut dated) = (Vec::new(), Vec::new());
    for (p, person) in people.iter().enumerate() {
        for noun in ["standup", "sync"] {
            let mut chain = empty_chain(chains.len(), "meeting_time", Subject::Person(p));
            chain.noun = noun;
            chain.participant = person.full.clone();
            for _ in 0..3 {
                chain
                    .values
                    .push(unique_value(chain.slot, &mut used, &mut rng));
            }
            let ages = generator::ages(3, &mut rng);
            let picks: Vec<&str> = (0..3)
                .map(|_| t.messages[rng.random_range(0..3usize)])
                .collect();
            dated.extend(chain_messages(
                &chain,
                &person.full,
                &picks,
                &ages,
                query_time,
            ));
            chains.push(chain);
        }
    }
    dated.extend(background(MULTI_FILLERS, 0, &people, query_time, &mut rng));
    Instance::assemble(
        seed,
        people,
        Vec::new(),
        chains,
        dated,
        query_time,
        &mut rng,
        false,
    )
}

/// The main instance with the messages of [`OUT_OF_ORDER_SHARE`] of its
/// revised chains randomly permuted in arrival order, stated times
/// unchanged. Labels stay those of the stated order: the current value is
/// the latest *stated* one. Returns the instance and the permuted chains.
pub fn out_of_order(main: &Instance) -> (Instance, Vec<usize>) {
    let mut rng = rng(main.seed, ORDER_SALT);
    let mut out = main.clone();
    let mut revised: Vec<usize> = main
        .chains
        .iter()
        .filter(|c| c.messages.len() > 1)
        .map(|c| c.id)
        .collect();
    revised.shuffle(&mut rng);
    revised.truncate((revised.len() as f64 * OUT_OF_ORDER_SHARE).round() as usize);
    revised.sort_unstable();
    for &c in &revised {
        // Arrival positions of the chain's messages, in stated order.
        let positions = main.chains[c].messages.clone();
        // A uniformly random permutation, which may happen to keep the
        // order (a two-message chain does so half the time): this reading
        // of "permuted" reproduces the paper's current and stale rates,
        // forcing a change overshoots them (stale 0.22 against 0.156).
        let mut perm: Vec<usize> = (0..positions.len()).collect();
        perm.shuffle(&mut rng);
        // Position `positions[i]` now receives the message stated `perm[i]`-th.
        for (i, &k) in perm.iter().enumerate() {
            out.messages[positions[i]] = main.messages[positions[k]].clone();
            out.chains[c].messages[k] = positions[i];
        }
    }
    (out, revised)
}

/// Who the participant of a chain's messages is (queries keep the subject,
/// or a project's contact, as `P_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Case {
    /// The person the fact is about (the main benchmark's setting).
    Subject,
    /// Another person tells it.
    ThirdParty,
    /// A pair: the subject and another person.
    Group,
    /// No participant is recorded.
    Missing,
}

impl Case {
    /// Every case, in report order.
    pub const ALL: [Case; 4] = [Case::Subject, Case::ThirdParty, Case::Group, Case::Missing];

    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            Case::Subject => "subject",
            Case::ThirdParty => "third party",
            Case::Group => "group",
            Case::Missing => "missing",
        }
    }
}

/// The order chains are assigned cases in. Subject and group come twice, so
/// the query counts are near the paper's 400 / 200 / 400 / 200.
const CASE_CYCLE: [Case; 6] = [
    Case::Subject,
    Case::ThirdParty,
    Case::Group,
    Case::Subject,
    Case::Missing,
    Case::Group,
];

/// The main instance with chain `i`'s messages told per case
/// `CASE_CYCLE[i mod 6]`; returns the instance and each chain's case.
pub fn participant_cases(main: &Instance) -> (Instance, Vec<Case>) {
    let mut rng = rng(main.seed, CASE_SALT);
    let mut out = main.clone();
    let mut cases = Vec::with_capacity(main.chains.len());
    for chain in &main.chains {
        let case = CASE_CYCLE[chain.id % CASE_CYCLE.len()];
        let other = loop {
            let p = &main.people[rng.random_range(0..main.people.len())];
            if p.full != chain.participant {
                break p.full.clone();
            }
        };
        let participants = match case {
            Case::Subject => vec![chain.participant.clone()],
            Case::ThirdParty => vec![other],
            Case::Group => vec![chain.participant.clone(), other],
            Case::Missing => Vec::new(),
        };
        for &m in &chain.messages {
            out.messages[m].participants = participants.clone();
        }
        cases.push(case);
    }
    (out, cases)
}

/// Hard identity: [`HARD_PAIRS`] pairs of people who share a first name;
/// both members hold a standup chain with the same revision count and
/// template whose messages arrive within a day of their partner's; one
/// standard query per person, and one room query per pair (asked by a
/// random member) that no message answers, labelled with every meeting
/// value in the corpus. Fillers and chit-chat as in the main benchmark.
pub fn hard_identity(seed: u64) -> Instance {
    let mut rng = rng(seed, HARD_SALT);
    let firsts: Vec<&str> = templates::PAIRED_FIRST
        .iter()
        .chain(templates::UNIQUE_FIRST.iter())
        .take(HARD_PAIRS)
        .flat_map(|f| [*f, *f])
        .collect();
    let people = people_named(&firsts, &mut rng);
    let query_time = WallTime::from_millis(QUERY_TIME_MS);
    let t = templates::templates("meeting_time");
    let mut used = std::collections::HashSet::new();
    let (mut chains, mut dated) = (Vec::new(), Vec::new());
    for pair in 0..HARD_PAIRS {
        let revisions = generator::revisions(&mut rng);
        let template = t.messages[rng.random_range(0..3usize)];
        let first = generator::ages(revisions + 1, &mut rng);
        for member in [2 * pair, 2 * pair + 1] {
            let mut chain = empty_chain(chains.len(), "meeting_time", Subject::Person(member));
            chain.noun = "standup";
            chain.participant = people[member].full.clone();
            for _ in 0..=revisions {
                chain
                    .values
                    .push(unique_value(chain.slot, &mut used, &mut rng));
            }
            // The partner's messages land within half a day of the first's,
            // kept in order and inside the benchmark's age range.
            let mut ages: Vec<f64> = first
                .iter()
                .map(|a| {
                    let shift = if member % 2 == 0 {
                        0.0
                    } else {
                        rng.random_range(-0.5..0.5)
                    };
                    (a + shift).clamp(0.3, 27.0)
                })
                .collect();
            ages.sort_by(|a, b| b.total_cmp(a));
            let picks = vec![template; ages.len()];
            dated.extend(chain_messages(
                &chain,
                &people[member].full,
                &picks,
                &ages,
                query_time,
            ));
            chains.push(chain);
        }
    }
    dated.extend(background(
        FILLERS, CHIT_CHAT, &people, query_time, &mut rng,
    ));
    let mut instance = Instance::assemble(
        seed,
        people,
        Vec::new(),
        chains,
        dated,
        query_time,
        &mut rng,
        false,
    );
    let every_value: Vec<Vec<String>> = instance
        .chains
        .iter()
        .flat_map(|c| c.values.iter().map(|v| label(v)))
        .collect();
    let room = templates::templates("room").query;
    for pair in 0..HARD_PAIRS {
        let asker = 2 * pair + rng.random_range(0..2usize);
        let person = &instance.people[asker];
        instance.queries.push(Query {
            chain: asker, // the asker's own chain: chain i is person i's
            context: templates::fill(
                room,
                Fill {
                    entity: &person.full,
                    short: &person.first,
                    noun: "standup",
                    value: "",
                },
            ),
            participant: person.full.clone(),
            paraphrased: false,
            labels: Labels {
                current: None,
                superseded: Vec::new(),
                other: every_value.clone(),
            },
        });
    }
    instance
}
