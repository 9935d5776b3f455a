//! The controlled revision benchmark of Appendix B: one instance per seed,
//! with its messages in arrival order, its queries and their labels.
//!
//! Structure (Appendix B, Table 6):
//! - 160 revision chains over person and project slots, each with `r` in
//!   0..=4 revisions (so `r + 1` messages) aged 0.3–27 days before the query
//!   time, later messages more recent;
//! - chains 0–11 belong to six pairs of people who share a first name, both
//!   members of a pair on the same person slot; later chains draw an unused
//!   (entity, slot) pair at random, cycling over the slot types;
//! - three message templates per slot, all messages of chain `i` use the first
//!   one when `i mod 10 = 7` and the chain has a revision (verbatim
//!   revisions); some revised meeting chains end in a cancellation, whose
//!   current value is the cancellation;
//! - a message's participant is the person for person slots and a fixed
//!   random person for project slots; queries carry it as `P_t`;
//! - 1,000 bot filler messages about eight names that occur in no chain, and
//!   twelve chit-chat messages to random people;
//! - 80 chains get a standard and a paraphrased query, 80 the standard one.
//!
//! Values are unique per instance after normalization, so a value's presence
//! in a block identifies its chain. Labels are stored as normalized token
//! sequences, ready for token-boundary containment.

use rand::rngs::Xoshiro256PlusPlus;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

use super::templates::{self, Fill, MEETING_NOUNS};
use pfm::extract::SLOTS;
use pfm::text;
use pfm::time::WallTime;

/// The benchmark seeds of the paper.
pub const SEEDS: [u64; 5] = [7, 11, 13, 17, 19];
/// Chains per instance.
pub const CHAINS: usize = 160;
/// Chains with two queries (the others have one).
pub const TWO_QUERY_CHAINS: usize = 80;
/// Filler messages per instance.
pub const FILLERS: usize = 1_000;
/// Chit-chat messages per instance.
pub const CHIT_CHAT: usize = 12;
/// Revision-count weights for `r = 0..=4`: the depth mix of Table 6, pooled
/// over its five seeds (238, 360, 318, 151, 133 of 1,200 queries).
const REVISION_WEIGHTS: [u32; 5] = [238, 360, 318, 151, 133];
/// Probability that a revised meeting chain that may be cancelled ends in a
/// cancellation (tuned to Table 6's 6–21 cancelled queries per seed).
const CANCEL_PROBABILITY: f64 = 0.4;
/// Message ages, in days before the query time.
const AGE_DAYS: (f64, f64) = (0.3, 27.0);
/// People per instance: the twelve of the six pairs and 17 with unique first
/// names. With about 86 person-slot chains this gives nearly every person a
/// chain on every person slot, which reproduces Table 6's 31–38 ambiguous
/// chains per seed (a larger pool, `pfm eval --people`, gives fewer).
pub const DEFAULT_PEOPLE: usize = 29;
/// The largest pool the name lists allow.
pub const MAX_PEOPLE: usize = 2 * templates::PAIRED_FIRST.len() + templates::UNIQUE_FIRST.len();
/// Query time of every instance (the messages precede it).
pub const QUERY_TIME_MS: i64 = 1_751_284_800_000; // 2025-06-30T12:00:00Z

/// What a slot is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Subject {
    /// A person (index into `Instance::people`).
    Person(usize),
    /// A project (index into `Instance::projects`).
    Project(usize),
}

/// A person of the instance.
#[derive(Clone, Debug, Serialize)]
pub struct Person {
    /// First name (how queries name them).
    pub first: String,
    /// Full name (how messages name them).
    pub full: String,
}

/// One revision chain.
#[derive(Clone, Debug, Serialize)]
pub struct Chain {
    /// Position in the instance (0..160).
    pub id: usize,
    /// Slot name (a row of `extract::SLOTS`).
    pub slot: &'static str,
    /// Whose slot.
    pub subject: Subject,
    /// The noun the messages use.
    pub noun: &'static str,
    /// The participant of its messages and `P_t` of its queries.
    pub participant: String,
    /// Values stated, oldest first (as written).
    pub values: Vec<String>,
    /// Whether the chain ends in a cancellation.
    pub cancelled: bool,
    /// Whether all its messages use the first template.
    pub verbatim: bool,
    /// Indices of its messages in `Instance::messages`, oldest first.
    pub messages: Vec<usize>,
}

impl Chain {
    /// Revision depth `d`: messages after the first (a cancellation counts).
    pub fn depth(&self) -> usize {
        self.messages.len() - 1
    }
}

/// One message, in arrival order.
#[derive(Clone, Debug, Serialize)]
pub struct Message {
    /// Text.
    pub text: String,
    /// Participants of the conversation.
    pub participants: Vec<String>,
    /// When it was said (and received).
    pub at: WallTime,
    /// The chain it belongs to, if any.
    pub chain: Option<usize>,
}

/// The labels of a query: normalized token sequences.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Labels {
    /// The chain's current value (`None`: the store holds no valid answer).
    pub current: Option<Vec<String>>,
    /// Superseded values of the chain (all values of a cancelled chain).
    pub superseded: Vec<Vec<String>>,
    /// Current values of same-slot chains whose person has the same first
    /// name (or, for an unanswerable request, every value of its slot).
    pub other: Vec<Vec<String>>,
}

/// One query: an unfinished message that ends right before the value.
#[derive(Clone, Debug, Serialize)]
pub struct Query {
    /// The chain it asks about.
    pub chain: usize,
    /// The unfinished message.
    pub context: String,
    /// `P_t`.
    pub participant: String,
    /// Whether it uses the paraphrased template.
    pub paraphrased: bool,
    /// Its labels.
    pub labels: Labels,
}

impl Query {
    /// Whether a same-named competitor exists (an ambiguous query).
    pub fn ambiguous(&self) -> bool {
        !self.labels.other.is_empty() && self.labels.current.is_some()
    }
}

/// One benchmark instance.
#[derive(Clone, Debug, Serialize)]
pub struct Instance {
    /// Its seed.
    pub seed: u64,
    /// People (pairs first).
    pub people: Vec<Person>,
    /// Project names.
    pub projects: Vec<String>,
    /// Chains.
    pub chains: Vec<Chain>,
    /// Messages in arrival order.
    pub messages: Vec<Message>,
    /// Queries.
    pub queries: Vec<Query>,
    /// When the queries are made.
    pub query_time: WallTime,
}

/// Table 6's accounting of one instance.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Accounting {
    /// Seed.
    pub seed: u64,
    /// Messages.
    pub messages: usize,
    /// Queries.
    pub queries: usize,
    /// Chains with a same-named competitor.
    pub ambiguous_chains: usize,
    /// Queries on such chains.
    pub ambiguous: usize,
    /// Queries on revised chains.
    pub revised: usize,
    /// Queries on cancelled chains.
    pub cancelled: usize,
    /// Queries on verbatim-revision chains.
    pub verbatim: usize,
    /// Paraphrased queries.
    pub paraphrased: usize,
    /// Queries by revision depth 0..=4.
    pub depth: [usize; 5],
}

impl Accounting {
    /// Table 6's columns after the seed, in its order.
    pub fn columns(&self) -> [usize; 13] {
        let d = self.depth;
        [
            self.messages,
            self.queries,
            self.ambiguous_chains,
            self.ambiguous,
            self.revised,
            self.cancelled,
            self.verbatim,
            self.paraphrased,
            d[0],
            d[1],
            d[2],
            d[3],
            d[4],
        ]
    }
}

/// The slot of a chain's entity kind.
fn is_person_slot(slot: &str) -> bool {
    matches!(slot, "meeting_time" | "room" | "day_rate")
}

/// Whether the slot's noun is a meeting (shared by time and room).
pub(super) fn is_meeting_slot(slot: &str) -> bool {
    matches!(slot, "meeting_time" | "room")
}

impl Instance {
    /// Generates the instance of `seed` with the default people pool; the
    /// same seed gives the same instance.
    pub fn generate(seed: u64) -> Instance {
        Instance::generate_with(seed, DEFAULT_PEOPLE)
    }

    /// Generates the instance of `seed` with `people` people (clamped to
    /// the twelve paired people and [`MAX_PEOPLE`]).
    pub fn generate_with(seed: u64, people: usize) -> Instance {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let people = pool(people, &mut rng);
        let projects: Vec<String> = templates::PROJECTS.iter().map(|p| p.to_string()).collect();
        let query_time = WallTime::from_millis(QUERY_TIME_MS);

        let mut chains = assign_chains(&people, projects.len(), &mut rng);
        let sole_meeting: Vec<bool> = chains
            .iter()
            .map(|c| {
                let meetings = chains
                    .iter()
                    .filter(|o| o.subject == c.subject && is_meeting_slot(o.slot));
                meetings.count() == 1
            })
            .collect();
        let mut used = std::collections::HashSet::new();
        let mut dated: Vec<Message> = Vec::new();
        for chain in &mut chains {
            fill_chain(chain, &people, sole_meeting[chain.id], &mut used, &mut rng);
            let t = templates::templates(chain.slot);
            let ages = ages(chain.values.len() + usize::from(chain.cancelled), &mut rng);
            let picks: Vec<&'static str> = (0..ages.len())
                .map(|i| match chain.values.get(i) {
                    None => t.cancel.expect("only meeting chains are cancelled"),
                    Some(_) if chain.verbatim => t.messages[0],
                    Some(_) => t.messages[rng.random_range(0..3usize)],
                })
                .collect();
            let (entity, _) = names(chain.subject, &people, &projects);
            dated.extend(chain_messages(chain, entity, &picks, &ages, query_time));
        }
        dated.extend(background(
            FILLERS, CHIT_CHAT, &people, query_time, &mut rng,
        ));
        Instance::assemble(
            seed, people, projects, chains, dated, query_time, &mut rng, true,
        )
    }

    /// Puts `dated` into arrival order (time order, ties keep generation
    /// order), records each chain's message indices and writes the queries:
    /// with `paraphrases`, [`TWO_QUERY_CHAINS`] random chains also get a
    /// paraphrased query.
    #[allow(clippy::too_many_arguments)] // the parts of an instance
    pub(super) fn assemble(
        seed: u64,
        people: Vec<Person>,
        projects: Vec<String>,
        mut chains: Vec<Chain>,
        mut dated: Vec<Message>,
        query_time: WallTime,
        rng: &mut Xoshiro256PlusPlus,
        paraphrases: bool,
    ) -> Instance {
        dated.sort_by_key(|m| m.at);
        for (i, m) in dated.iter().enumerate() {
            if let Some(c) = m.chain {
                chains[c].messages.push(i);
            }
        }
        let mut two = vec![false; chains.len()];
        if paraphrases {
            let mut order: Vec<usize> = (0..chains.len()).collect();
            order.shuffle(rng);
            for &c in order.iter().take(TWO_QUERY_CHAINS) {
                two[c] = true;
            }
        }
        let queries = queries(&chains, &people, &projects, &two);
        Instance {
            seed,
            people,
            projects,
            chains,
            messages: dated,
            queries,
            query_time,
        }
    }

    /// Table 6's accounting.
    pub fn accounting(&self) -> Accounting {
        let mut a = Accounting {
            seed: self.seed,
            messages: self.messages.len(),
            queries: self.queries.len(),
            ..Accounting::default()
        };
        a.ambiguous_chains = self
            .chains
            .iter()
            .filter(|c| !competitors(c, &self.chains, &self.people).is_empty())
            .count();
        for q in &self.queries {
            let c = &self.chains[q.chain];
            a.ambiguous += usize::from(q.ambiguous());
            a.revised += usize::from(c.depth() > 0);
            a.cancelled += usize::from(c.cancelled);
            a.verbatim += usize::from(c.verbatim);
            a.paraphrased += usize::from(q.paraphrased);
            a.depth[c.depth().min(4)] += 1;
        }
        a
    }
}

/// The twelve paired people, then people with unique first names, `n` in
/// all, with distinct surnames.
fn pool(n: usize, rng: &mut Xoshiro256PlusPlus) -> Vec<Person> {
    let firsts: Vec<&str> = templates::PAIRED_FIRST
        .iter()
        .flat_map(|f| [*f, *f])
        .chain(templates::UNIQUE_FIRST.iter().copied())
        .take(n.clamp(2 * templates::PAIRED_FIRST.len(), MAX_PEOPLE))
        .collect();
    people_named(&firsts, rng)
}

/// People with these first names (at most [`MAX_PEOPLE`]) and distinct
/// random surnames.
pub(super) fn people_named(firsts: &[&str], rng: &mut Xoshiro256PlusPlus) -> Vec<Person> {
    let mut surnames = templates::SURNAMES.to_vec();
    surnames.shuffle(rng);
    firsts
        .iter()
        .zip(surnames)
        .map(|(first, last)| Person {
            first: (*first).to_owned(),
            full: format!("{first} {last}"),
        })
        .collect()
}

/// `n` message ages in days before the query time, oldest first.
pub(super) fn ages(n: usize, rng: &mut Xoshiro256PlusPlus) -> Vec<f64> {
    let mut ages: Vec<f64> = (0..n)
        .map(|_| rng.random_range(AGE_DAYS.0..AGE_DAYS.1))
        .collect();
    ages.sort_by(|a, b| b.total_cmp(a));
    ages
}

/// A chain's messages: message `i` fills template `picks[i]` with value `i`
/// (none for a cancellation), `ages[i]` days before `query_time`, told by
/// the chain's participant.
pub(super) fn chain_messages(
    chain: &Chain,
    entity: &str,
    picks: &[&str],
    ages: &[f64],
    query_time: WallTime,
) -> Vec<Message> {
    picks
        .iter()
        .zip(ages)
        .enumerate()
        .map(|(i, (template, age))| Message {
            text: templates::fill(
                template,
                Fill {
                    entity,
                    short: entity,
                    noun: chain.noun,
                    value: chain.values.get(i).map_or("", String::as_str),
                },
            ),
            participants: vec![chain.participant.clone()],
            at: days_before(query_time, *age),
            chain: Some(chain.id),
        })
        .collect()
}

/// `fillers` bot messages and `chit_chat` messages to random people.
pub(super) fn background(
    fillers: usize,
    chit_chat: usize,
    people: &[Person],
    query_time: WallTime,
    rng: &mut Xoshiro256PlusPlus,
) -> Vec<Message> {
    let mut out = Vec::with_capacity(fillers + chit_chat);
    for _ in 0..fillers {
        let (text, bot) = templates::filler(rng);
        let age = rng.random_range(AGE_DAYS.0..AGE_DAYS.1);
        out.push(Message {
            text,
            participants: vec![bot.to_owned()],
            at: days_before(query_time, age),
            chain: None,
        });
    }
    for _ in 0..chit_chat {
        let p = &people[rng.random_range(0..people.len())];
        let age = rng.random_range(AGE_DAYS.0..AGE_DAYS.1);
        out.push(Message {
            text: templates::chit_chat(&p.first, rng),
            participants: vec![p.full.clone()],
            at: days_before(query_time, age),
            chain: None,
        });
    }
    out
}

/// A chain with nothing drawn yet.
pub(super) fn empty_chain(id: usize, slot: &'static str, subject: Subject) -> Chain {
    Chain {
        id,
        slot,
        subject,
        noun: "",
        participant: String::new(),
        values: Vec::new(),
        cancelled: false,
        verbatim: false,
        messages: Vec::new(),
    }
}

/// A revision count drawn from [`REVISION_WEIGHTS`].
pub(super) fn revisions(rng: &mut Xoshiro256PlusPlus) -> usize {
    let total: u32 = REVISION_WEIGHTS.iter().sum();
    let mut draw = rng.random_range(0..total);
    let mut revisions = 0;
    while draw >= REVISION_WEIGHTS[revisions] {
        draw -= REVISION_WEIGHTS[revisions];
        revisions += 1;
    }
    revisions
}

/// Draws a new value of `slot` whose normalized form is not in `used`.
pub(super) fn unique_value(
    slot: &str,
    used: &mut std::collections::HashSet<String>,
    rng: &mut Xoshiro256PlusPlus,
) -> String {
    loop {
        let v = templates::value(slot, rng);
        if used.insert(text::normalize(&v)) {
            return v;
        }
    }
}

/// Chains 0–11 on the pairs (pair `j` on person slot `j mod 3`), then unused
/// (entity, slot) pairs at random, cycling over the slot types.
fn assign_chains(people: &[Person], projects: usize, rng: &mut Xoshiro256PlusPlus) -> Vec<Chain> {
    let person_slots: Vec<&'static str> = SLOTS
        .iter()
        .map(|s| s.name)
        .filter(|s| is_person_slot(s))
        .collect();
    let mut out = Vec::with_capacity(CHAINS);
    let push = |subject: Subject, slot: &'static str, out: &mut Vec<Chain>| {
        out.push(empty_chain(out.len(), slot, subject));
    };
    for pair in 0..templates::PAIRED_FIRST.len() {
        let slot = person_slots[pair % person_slots.len()];
        push(Subject::Person(2 * pair), slot, &mut out);
        push(Subject::Person(2 * pair + 1), slot, &mut out);
    }
    let mut i = 0;
    while out.len() < CHAINS {
        let slot = SLOTS[i % SLOTS.len()].name;
        i += 1;
        let free: Vec<Subject> = if is_person_slot(slot) {
            (0..people.len()).map(Subject::Person).collect()
        } else {
            (0..projects).map(Subject::Project).collect()
        };
        let free: Vec<Subject> = free
            .into_iter()
            .filter(|s| !out.iter().any(|c| c.subject == *s && c.slot == slot))
            .collect();
        if let Some(s) = free.get(rng.random_range(0..free.len().max(1))) {
            push(*s, slot, &mut out);
        }
    }
    out
}

/// Draws a chain's depth, noun, participant, values, cancellation and
/// template mode. `used` holds the normalized values drawn so far.
///
/// A cancellation names just the meeting noun, which the time and room
/// slots share, so the extractor cancels the person's meeting time when it
/// is active and the room otherwise. A room chain may therefore be cancelled
/// only when it is its person's sole meeting chain; otherwise the generator
/// would be testing a mis-key, not the memory.
fn fill_chain(
    chain: &mut Chain,
    people: &[Person],
    sole_meeting: bool,
    used: &mut std::collections::HashSet<String>,
    rng: &mut Xoshiro256PlusPlus,
) {
    let revisions = revisions(rng);
    chain.noun = if is_meeting_slot(chain.slot) {
        MEETING_NOUNS[rng.random_range(0..MEETING_NOUNS.len())]
    } else {
        templates::slot_noun(chain.slot)
    };
    chain.participant = match chain.subject {
        Subject::Person(p) => people[p].full.clone(),
        Subject::Project(_) => people[rng.random_range(0..people.len())].full.clone(),
    };
    chain.cancelled = revisions > 0
        && (chain.slot == "meeting_time" || (chain.slot == "room" && sole_meeting))
        && rng.random_bool(CANCEL_PROBABILITY);
    chain.verbatim = chain.id % 10 == 7 && revisions > 0;
    let stated = revisions + 1 - usize::from(chain.cancelled);
    while chain.values.len() < stated {
        chain.values.push(unique_value(chain.slot, used, rng));
    }
}

/// Other chains on the same slot whose person shares this chain's first name.
pub(super) fn competitors<'a>(
    chain: &Chain,
    chains: &'a [Chain],
    people: &[Person],
) -> Vec<&'a Chain> {
    let Subject::Person(p) = chain.subject else {
        return Vec::new();
    };
    chains
        .iter()
        .filter(|c| c.id != chain.id && c.slot == chain.slot)
        .filter(|c| matches!(c.subject, Subject::Person(q) if q != p && people[q].first == people[p].first))
        .collect()
}

/// The normalized tokens of a value.
pub(super) fn label(value: &str) -> Vec<String> {
    text::normalized_tokens(value)
}

/// The current-value label of a chain: its last value, or for a cancelled
/// chain the cancellation itself (`<noun> with <entity> is cancelled`).
fn current_label(chain: &Chain, people: &[Person], projects: &[String]) -> Vec<String> {
    if chain.cancelled {
        let (entity, _) = names(chain.subject, people, projects);
        label(&format!("{} with {entity} is cancelled", chain.noun))
    } else {
        label(chain.values.last().expect("a chain states a value"))
    }
}

/// Queries and their labels: the standard query of every chain, and a
/// paraphrased one for the chains marked in `two`.
fn queries(chains: &[Chain], people: &[Person], projects: &[String], two: &[bool]) -> Vec<Query> {
    let mut out = Vec::new();
    for chain in chains {
        let (entity, short) = names(chain.subject, people, projects);
        let t = templates::templates(chain.slot);
        let superseded: Vec<Vec<String>> = if chain.cancelled {
            chain.values.iter().map(|v| label(v)).collect()
        } else {
            let n = chain.values.len() - 1;
            chain.values[..n].iter().map(|v| label(v)).collect()
        };
        let labels = Labels {
            current: Some(current_label(chain, people, projects)),
            superseded,
            other: competitors(chain, chains, people)
                .into_iter()
                .map(|c| current_label(c, people, projects))
                .collect(),
        };
        let fill = Fill {
            entity,
            short,
            noun: chain.noun,
            value: "",
        };
        let mut templates_used = vec![(t.query, false)];
        if two[chain.id] {
            templates_used.push((t.paraphrase, true));
        }
        for (template, paraphrased) in templates_used {
            out.push(Query {
                chain: chain.id,
                context: templates::fill(template, fill),
                participant: chain.participant.clone(),
                paraphrased,
                labels: labels.clone(),
            });
        }
    }
    out
}

/// How messages and queries name a chain's subject: (full, short).
pub(super) fn names<'a>(
    subject: Subject,
    people: &'a [Person],
    projects: &'a [String],
) -> (&'a str, &'a str) {
    match subject {
        Subject::Person(p) => (&people[p].full, &people[p].first),
        Subject::Project(p) => (&projects[p], &projects[p]),
    }
}

pub(super) fn days_before(t: WallTime, days: f64) -> WallTime {
    WallTime::from_millis(t.millis() - (days * 86_400_000.0) as i64)
}
