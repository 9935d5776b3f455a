//! The speculation-gate study (the AgentMemGate paper, Sections 4–6;
//! Tables 2 and 3): does a plan enter the store as a current value?
//!
//! The paper's plan-to-outcome data is not public, so this is the generator
//! its Table 1 describes. A conversation is about one user field (home
//! city, grocery store, employer, …): a first session states the current
//! value, a second a plan to change it (a speculation of one of five hedge
//! strengths), a third (maybe) the outcome — the plan came true, was
//! abandoned, or stays open — with unrelated turns between; a *control*
//! states a completed change with no plan before it. Keys are given
//! (the paper fixes field matching too); the gate reads each statement's
//! text, so classification is what is measured.
//!
//! Splits: `core` (60: 20 per outcome), `held-out` (147: 44 per outcome and
//! 15 controls, long free-text values) in families B to F, `hedge` (5
//! strengths × 20 open plans) and `confirmation` (4 wordings × 20 plans
//! that came true) in family F.
//! **Template families**, in the order written: the phrase table was first
//! written from A and measured on B; B's misses shaped its extension; C,
//! written before that extension, shaped the gate's second, structural
//! version; D (20 phrasings of every statement type) was written and
//! committed before the structural version; its misses then shaped the
//! rows written as structure and the rule that a revision needs an
//! assertion; E, written before those, measured them and its misses
//! shaped two rows; F, written before those two, is the held-out measure
//! (`eval/README.md`).
//!
//! Metrics (paper Section 4), each with a Wilson 95% interval:
//! pending-window contamination (an at-risk plan — abandoned or open — is
//! the field's current value at any point while it is pending), at-end
//! contamination, immediate commit (a completed change is current right
//! after it is said), over-holding (a control's change is not), and task
//! accuracy (one probe of the final store: its current value is the true
//! one and the block holds it; a statement that merely names the other
//! value, such as a kept abandonment, does not count against it).
//!
//! The outcome statements carry the field's value as given keys do, so in
//! the `ungated` and `plan-typed` arms an abandonment that names the plan's
//! value commits it, as a literal extractor would. Arms: `ungated` (every statement commits as said), `plan-typed`
//! (a statement the gate calls a speculation is written under a separate
//! `<field>_plan` key, hidden from reads; nothing promotes it) and `gated`.

use std::fmt::Write as _;

use serde::Serialize;

pub use super::cells::Tally;
use pfm::config::Config;
use pfm::error::Result;
use pfm::extract::gate;
use pfm::fact::Kind;
use pfm::{Key, Memory, Observation, Request, WallTime, text};

/// A user field: its name, how a sentence names it, and its values.
struct Field {
    slot: &'static str,
    noun: &'static str,
    short: [&'static str; 4],
    long: [&'static str; 4],
}

static FIELDS: [Field; 4] = [
    Field {
        slot: "home_city",
        noun: "the city I live in",
        short: ["Seattle", "Tacoma", "Portland", "Boise"],
        long: [
            "a loft near the waterfront in Seattle",
            "my aunt's old house in Tacoma",
            "a shared flat in southeast Portland",
            "the cabin outside Boise",
        ],
    },
    Field {
        slot: "grocery_store",
        noun: "my grocery store",
        short: ["Safeway", "Trader Joe's", "Whole Foods", "Aldi"],
        long: [
            "the co-op on Fifth Street",
            "the Korean market by the station",
            "the farm stand on Route 9",
            "the big Costco out by the highway",
        ],
    },
    Field {
        slot: "employer",
        noun: "where I work",
        short: ["Acme", "Globex", "Initech", "Umbrella"],
        long: [
            "the design studio on Pine Street",
            "the county hospital's lab",
            "a small robotics startup downtown",
            "the public library system",
        ],
    },
    Field {
        slot: "gym",
        noun: "my gym",
        short: ["Crunch", "Equinox", "Planet Fitness", "the YMCA"],
        long: [
            "the climbing gym in the old warehouse",
            "the pool at the community center",
            "a boxing club on Main",
            "the yoga place above the bakery",
        ],
    },
];

/// Family A: the phrasings the gate's table was written from. `{n}` is the
/// field's noun, `{v}` the value.
const FAMILY_A: Templates = Templates {
    current: &[
        "{n} is {v}.",
        "Right now {n} is {v}.",
        "These days {n} is {v}.",
        "For context, {n} is {v}.",
        "Currently {n} is {v}.",
    ],
    // By hedge strength 1 (firm) to 5 (a bare possibility), two each.
    plans: [
        &[
            "I'm scheduled to change {n} to {v}.",
            "I will switch {n} to {v} soon.",
        ],
        &[
            "I'm planning to change {n} to {v}.",
            "I'm going to make {v} {n}.",
        ],
        &[
            "I'm hoping to change {n} to {v}.",
            "I want to make {v} {n}.",
        ],
        &[
            "I'm thinking about making {v} {n}.",
            "I'm considering {v} for {n}.",
        ],
        &["I might change {n} to {v}.", "Maybe {v} will be {n}."],
    ],
    confirm: [
        &["I finally switched: {n} is {v}."],
        &["It happened: {n} is officially {v}."],
        &["As of today {n} is {v}."],
        &["We did it, {n} is {v} now."],
    ],
    abandon: &[
        "I decided not to change {n} to {v}.",
        "The switch to {v} fell through.",
        "I changed my mind about {v}.",
        "I'm not going to make {v} {n}.",
    ],
    completed: &["I just moved: {n} is {v}.", "I finally changed {n} to {v}."],
};

/// Family B: measured after the table was first written; its misses
/// shaped the table's extension (seen).
const FAMILY_B: Templates = Templates {
    current: &[
        "I should mention {n} is {v}.",
        "{n}? That would be {v}.",
        "Quick fact about me: {n} is {v}.",
        "{v} is {n}, has been for a while.",
        "If it matters, {n} is {v}.",
    ],
    plans: [
        &[
            "It's on the calendar: {n} becomes {v} next month.",
            "The paperwork for {v} as {n} is filed.",
        ],
        &[
            "My plan is to make {v} {n}.",
            "Next month {n} becomes {v}, that's the idea.",
        ],
        &[
            "I'd love for {n} to be {v} someday.",
            "Part of me wants {v} as {n}.",
        ],
        &[
            "I've been toying with {v} for {n}.",
            "I keep weighing {v} for {n}.",
        ],
        &[
            "There's a chance {n} ends up being {v}.",
            "Who knows, {n} could be {v} eventually.",
        ],
    ],
    confirm: [
        &["Done deal: {n} is now {v}."],
        &["Settled in nicely, {n} is {v}."],
        &["{v} is {n} now, moved over last week."],
        &["Signed everything, {n} is {v}."],
    ],
    abandon: &[
        "Scrap the {v} idea.",
        "{v} isn't happening.",
        "Forget about {v}, not worth it.",
        "We dropped the {v} plan.",
    ],
    completed: &[
        "Moved over to {v} last week, so {n} is {v}.",
        "{n} switched to {v} yesterday.",
    ],
};

/// Family C: written after family B's misses were seen and before the
/// gate's table was extended from them, so neither the first table nor the
/// extension was written from it.
const FAMILY_C: Templates = Templates {
    current: &[
        "Just so you know, {n} is {v}.",
        "{n} has been {v} for ages.",
        "At the moment it's {v} for {n}.",
        "Noting that {n} is {v}.",
        "Okay so {n} is {v}.",
    ],
    plans: [
        &[
            "Starting Monday, {n} switches to {v}.",
            "I've booked the change: {n} will be {v} from the first.",
        ],
        &[
            "The goal is to have {v} as {n} by spring.",
            "I've decided {v} is going to be {n} next.",
        ],
        &[
            "Ideally {n} would be {v}.",
            "I'm really keen on {v} for {n}.",
        ],
        &[
            "I'm mulling over {v} for {n}.",
            "{v} for {n} is on my shortlist.",
        ],
        &[
            "It's possible {n} turns into {v}.",
            "Not sure yet, but {n} could turn out to be {v}.",
        ],
    ],
    confirm: [
        &["All done, {n} is {v} as of this week."],
        &["The switch is complete: {n} is {v}."],
        &["Made it official, {n} is now {v}."],
        &["{n} is {v} now, everything's sorted."],
    ],
    abandon: &[
        "The {v} thing is off.",
        "Not doing {v} after all.",
        "{v} won't work out, so forget it.",
        "We backed out of {v}.",
    ],
    completed: &[
        "Switched {n} to {v} over the weekend.",
        "{n} is {v} since last Tuesday.",
    ],
};

/// Family D: written and committed before the gate's second, structural
/// version (by the same author as the rules), 20 phrasings of every
/// statement type; the held-out measure. Every other family is seen (C's
/// misses shaped the structural rules).
const FAMILY_D: Templates = Templates {
    current: &[
        "For the record, {n} is {v}.",
        "{n} is {v}, in case you need it.",
        "I'm happy with {n}: it's {v}.",
        "Fyi {n} is {v}.",
        "{n} is {v} and I like it that way.",
        "You asked about {n}; it's {v}.",
        "{v} is {n} at present.",
        "Nothing fancy, {n} is just {v}.",
        "These past months {n} has been {v}.",
        "{n} remains {v}.",
        "Yep, {n} is {v}.",
        "{n} is {v}, same as last year.",
        "To answer your question, {n} is {v}.",
        "Honestly {n} is {v} and it works.",
        "{n} is {v}, which suits me.",
        "Reminder: {n} is {v}.",
        "{n} is {v} these days, no complaints.",
        "I'd say {n} is {v}.",
        "As things stand, {n} is {v}.",
        "{n} is {v}, if you were wondering.",
    ],
    plans: [
        &[
            "From next week on, {n} will be {v}.",
            "{n} is set to become {v} in two weeks.",
            "The change to {v} for {n} is booked for the end of the month.",
            "Come April, {n} changes to {v}.",
        ],
        &[
            "I'm determined to get {n} changed to {v}.",
            "My next step is switching {n} to {v}.",
            "I've made up my mind to go with {v} for {n}.",
            "We're aiming for {v} as {n} this summer.",
        ],
        &[
            "I wish {n} were {v}.",
            "It would be great if {n} became {v}.",
            "My dream is for {n} to be {v}.",
            "I've got my heart set on {v} for {n}.",
        ],
        &[
            "I've been looking at {v} as an option for {n}.",
            "{v} is a contender for {n}.",
            "I'm debating {v} for {n}.",
            "I'm tempted by {v} for {n}.",
        ],
        &[
            "{n} may well become {v}.",
            "Depending on how things go, {n} might be {v}.",
            "{v} as {n}? Not out of the question.",
            "I haven't decided, but {v} could be {n}.",
        ],
    ],
    confirm: [
        &[
            "I went ahead and switched {n} to {v}.",
            "{n} is {v} now, the switch is done.",
            "We made the move: {n} is {v}.",
            "It's official, {n} is {v}.",
            "I changed {n} to {v} last week.",
        ],
        &[
            "It finally went through: {n} is {v}.",
            "Good news, {n} is now {v}.",
            "The plan worked out and {n} is {v}.",
            "It came through, so {n} is {v}.",
            "That's sorted, {n} is {v}.",
        ],
        &[
            "{n} is now {v}.",
            "Now {n} is {v}.",
            "{v} is {n} now.",
            "{n} has become {v}.",
            "{n} is {v} as of Monday.",
        ],
        &[
            "Last week {n} became {v}.",
            "I started with {v} as {n} yesterday.",
            "{n} turned into {v} over the holidays.",
            "We completed the move, so {n} is {v}.",
            "Since Friday {n} has been {v}.",
        ],
    ],
    abandon: &[
        "I'm not switching to {v} after all.",
        "The {v} plan is dead.",
        "{v} is no longer on the table.",
        "We scrapped the idea of {v}.",
        "I've ruled out {v}.",
        "{v} didn't pan out.",
        "I passed on {v} in the end.",
        "I decided against {v}.",
        "No more talk of {v}, it's cancelled.",
        "I'm sticking with what I have, so no {v}.",
        "{v} is off the list.",
        "I've given up on the {v} idea.",
        "The {v} option collapsed.",
        "Turns out {v} won't happen.",
        "Never mind about {v}.",
        "I let the {v} thing go.",
        "{v} got cancelled.",
        "I pulled out of {v}.",
        "{v} was a no-go.",
        "Dropping {v}, it's not for me.",
    ],
    completed: &[
        "I moved, so {n} is {v} now.",
        "Last month {n} changed to {v}.",
        "{n} switched over to {v} two weeks ago.",
        "I've started going to {v}, that's {n} now.",
        "{n} became {v} this spring.",
        "We relocated and {n} is {v}.",
        "I made the jump: {n} is {v}.",
        "Since the start of the month {n} is {v}.",
        "{n} is {v} now, changed it on Tuesday.",
        "I left the old one, {n} is {v} today.",
        "{n} changed: it's {v}.",
        "Switched! {n} is {v}.",
        "After the move, {n} is {v}.",
        "I signed up and {n} is {v} as of yesterday.",
        "{n} is {v} ever since the spring.",
        "We've transferred everything, {n} is {v}.",
        "I'm now with {v}, that's {n}.",
        "Out with the old: {n} is {v}.",
        "{n} was changed to {v} this week.",
        "Started at {v} on Monday, so {n} is {v}.",
    ],
};

/// Family E: written after the gate's structural version and before the
/// rules that D's misses shaped (`eval/README.md`); their first measure,
/// and seen since: its misses shaped two rows.
const FAMILY_E: Templates = Templates {
    current: &[
        "{n} is {v} right now.",
        "Quick note: {n} is {v}.",
        "{v}, that's {n}.",
        "{n}? {v}.",
        "I've got {v} as {n}.",
        "Currently {n} is {v}.",
        "{n} is {v}, has been for a while.",
        "Just so you know, {n} is {v}.",
        "{n} is good old {v}.",
        "At the moment {n} is {v}.",
        "Oh, {n} is {v}.",
        "{n} is {v} and that's unlikely to change.",
        "I rely on {v}, that's {n}.",
        "{n} is {v}, nothing new there.",
        "Everyone knows {n} is {v}.",
        "{n} is {v} for now.",
        "My answer is the same as always: {n} is {v}.",
        "{n} is still {v}.",
        "I'm all set with {v} as {n}.",
        "{n} is {v}, simple as that.",
    ],
    plans: [
        &[
            "{n} switches to {v} on the first of next month.",
            "The paperwork is done and {n} becomes {v} on Friday.",
            "Everything is arranged for {n} to be {v} starting in March.",
            "{v} takes over as {n} at the end of the month.",
        ],
        &[
            "I'm set on making {v} {n}.",
            "I've decided {n} is going to be {v}.",
            "I'm working toward moving {n} over to {v}.",
            "My intent is for {n} to be {v} by fall.",
        ],
        &[
            "I'd really like {n} to be {v}.",
            "Nothing would make me happier than {v} as {n}.",
            "I keep picturing {v} as {n}.",
            "{v} as {n} sounds like heaven to me.",
        ],
        &[
            "I'm weighing up {v} for {n}.",
            "{v} is in the running for {n}.",
            "I'm comparing {v} against the others for {n}.",
            "I've been researching {v} for {n}.",
        ],
        &[
            "There's some talk of {v} becoming {n}.",
            "Perhaps {n} ends up being {v}, who can say.",
            "{v} for {n}, maybe, maybe not.",
            "I suppose {n} could turn out to be {v} one day.",
        ],
    ],
    confirm: [
        &[
            "I did it, {n} is {v}.",
            "Done: I switched {n} over to {v}.",
            "{n} has been switched to {v}.",
            "Took the plunge, {n} is {v}.",
            "I moved {n} to {v} this weekend.",
        ],
        &[
            "Happy to report {n} is {v}.",
            "The move is complete and {n} is {v}.",
            "All settled: {n} is {v}.",
            "It's happened, {n} is {v}.",
            "Success, {n} is {v}.",
        ],
        &[
            "{n} is {v} these days.",
            "These days {n} is {v}.",
            "Right now {n} is {v}.",
            "{n} is currently {v}.",
            "At this point {n} is {v}.",
        ],
        &[
            "Two weeks ago {n} switched to {v}.",
            "On Saturday {n} became {v}.",
            "{n} has been {v} since the weekend.",
            "I joined {v} earlier this month, that's {n}.",
            "Back in March {n} changed to {v}.",
        ],
    ],
    abandon: &[
        "Scratch {v}, it's not happening.",
        "I've backed away from {v}.",
        "{v} isn't going ahead.",
        "We're not doing {v} anymore.",
        "{v} is out.",
        "I've let go of the idea of {v}.",
        "The {v} thing is over.",
        "{v} won't be happening.",
        "I talked myself out of {v}.",
        "Forget {v}.",
        "Plans for {v} have been shelved.",
        "{v} didn't work for us in the end.",
        "I'm done thinking about {v}.",
        "We said no to {v}.",
        "{v} lost out.",
        "The deal with {v} collapsed.",
        "I'm staying put, {v} is not for me.",
        "I've moved on from {v}.",
        "{v} is a dead end.",
        "No {v} for me after all.",
    ],
    completed: &[
        "I switched {n} to {v} over the weekend.",
        "{n} has been {v} for a few days now.",
        "I transferred to {v}, so that's {n} now.",
        "I finished moving, {n} is {v}.",
        "{n} is {v} since last Monday.",
        "As of this week {n} is {v}.",
        "New chapter: {n} is {v}.",
        "I've switched: {n} is {v}.",
        "{n} went from the old place to {v} this month.",
        "The change happened, {n} is {v}.",
        "I swapped {n} for {v} a few days ago.",
        "I've been with {v} for a week, that's {n}.",
        "{n} is {v} starting today.",
        "We moved {n} to {v} recently.",
        "{n}: {v}, as of last Friday.",
        "I ended up going with {v} for {n}.",
        "Turns out {n} is {v} now, since the switch.",
        "I picked {v}, and {n} has been {v} since.",
        "{n} changed hands, it's {v} now.",
        "Got it done, {n} is {v}.",
    ],
};

/// Family F: written after E's measure of the assertion rule and before
/// any rule E's misses shaped; the held-out measure, and the hedge and
/// confirmation splits' phrasings.
const FAMILY_F: Templates = Templates {
    current: &[
        "We've had {v} as {n} for years.",
        "{n} happens to be {v}.",
        "Lately {n} has been {v}.",
        "Ha, {n}? That'd be {v}.",
        "{v} is {n}, has been forever.",
        "Okay so {n} is {v}.",
        "I go with {v} for {n}.",
        "{n} would be {v}, I guess.",
        "Count {v} as {n}.",
        "{n} is {v}, like always.",
        "{v} has been {n} since I can remember.",
        "Pretty sure {n} is {v}.",
        "{n} is {v} and I love it.",
        "My whole routine revolves around {v}, that's {n}.",
        "{n}, for what it's worth, is {v}.",
        "Still {v} for {n}.",
        "{n} is {v} and has been for a good while.",
        "I'm a regular at {v}, that's {n}.",
        "Put down {v} as {n}.",
        "{n} is {v}, no drama.",
    ],
    plans: [
        &[
            "{n} will officially be {v} after the lease runs out.",
            "I signed the papers and {n} becomes {v} next Monday.",
            "The switch of {n} to {v} happens on the 15th.",
            "It's locked in: {n} flips to {v} in March.",
        ],
        &[
            "I'm going for {v} as {n}.",
            "I'll make {v} {n} once things calm down.",
            "I've resolved that {n} should be {v}.",
            "The move to {v} for {n} is what I'm working on.",
        ],
        &[
            "Honestly {v} as {n} would be a dream.",
            "I'm craving a change to {v} for {n}.",
            "{v} for {n} is the dream.",
            "If only {n} were {v}.",
        ],
        &[
            "I'm scoping out {v} for {n}.",
            "{v} has caught my eye for {n}.",
            "I've got {v} on my radar for {n}.",
            "I'm sizing up {v} as {n}.",
        ],
        &[
            "Who knows, {n} might end up {v}.",
            "There's an outside chance {n} becomes {v}.",
            "{v} for {n} is a long shot.",
            "Maybe one day {v} will be {n}.",
        ],
    ],
    confirm: [
        &[
            "Switched {n} to {v}, done and dusted.",
            "I made the change, {n} is {v}.",
            "{n} is {v} now that I switched.",
            "Moved {n} over to {v}.",
            "I went through with it: {n} is {v}.",
        ],
        &[
            "It all worked out, {n} is {v}.",
            "The switch went smoothly, {n} is {v}.",
            "We pulled it off, {n} is {v}.",
            "Everything's finalized: {n} is {v}.",
            "The plan happened, {n} is {v}.",
        ],
        &[
            "{n} is {v} at this point.",
            "Nowadays {n} is {v}.",
            "{n} is {v}, that's where things are.",
            "{v} is {n} now.",
            "{n} is officially {v}.",
        ],
        &[
            "A month ago {n} became {v}.",
            "Over the summer {n} switched to {v}.",
            "I joined {v} in the fall, so that's {n}.",
            "{n} has been {v} since Tuesday.",
            "We finished moving {n} to {v} last week.",
        ],
    ],
    abandon: &[
        "{v} is off, we're staying.",
        "I backed out of {v}.",
        "I'm not going ahead with {v}.",
        "{v} was never going to work.",
        "Decided against {v} in the end.",
        "No to {v}.",
        "We nixed {v}.",
        "{v} is not happening now.",
        "I gave {v} a pass.",
        "The {v} idea died.",
        "Not {v}, not anymore.",
        "Abandoned the {v} plan.",
        "I walked away from {v}.",
        "{v} fell apart.",
        "We're done with {v} as an idea.",
        "{v}? Dropped it.",
        "I've shelved {v} for good.",
        "Change of plans, no {v}.",
        "I'll pass on {v}.",
        "{v} didn't make the cut.",
    ],
    completed: &[
        "Just moved {n} to {v}.",
        "{n} is {v} now, made the switch last week.",
        "I joined {v}, so {n} is {v}.",
        "I changed {n} to {v} on Monday.",
        "{n} officially became {v}.",
        "We've gone with {v} for {n} since March.",
        "{n} flipped to {v} a few days back.",
        "I transferred {n} to {v} yesterday.",
        "Say hello to {n}: {v}.",
        "{n}: now {v}.",
        "I'm with {v} now for {n}.",
        "I settled on {v}, and {n} is {v}.",
        "Swapped {n} to {v} last month.",
        "{n} is {v} after the change.",
        "The switch is done: {n} is {v}.",
        "{n} finally became {v}.",
        "I left my old place and {n} is {v}.",
        "Ended up with {v} as {n}, it's done.",
        "{n} moved to {v} this week.",
        "{v} became {n} on the first.",
    ],
};

/// One family's phrasings of each statement type.
struct Templates {
    current: &'static [&'static str],
    /// By hedge strength 1 (firm) to 5 (a bare possibility).
    plans: [&'static [&'static str]; 5],
    /// By confirmation wording (the `confirmation` splits).
    confirm: [&'static [&'static str]; 4],
    abandon: &'static [&'static str],
    completed: &'static [&'static str],
}

/// A template family.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    /// What the gate's table was first written from.
    A,
    /// Seen: its misses shaped the table's extension.
    B,
    /// Written before the table's extension from B; its misses shaped the
    /// structural rules (seen).
    C,
    /// Written before the structural rules; its misses shaped the rules
    /// that followed (seen).
    D,
    /// Written before the rules that D's misses shaped; the first measure
    /// of them.
    E,
    /// Held out: written before any rule E's misses would shape.
    F,
}

const FILLER: [&str; 6] = [
    "The weather has been great lately.",
    "I watched a documentary about octopuses last night.",
    "My sister is visiting next weekend.",
    "I'm reading a long novel about sailors.",
    "Traffic was awful this morning.",
    "I tried a new pasta recipe yesterday.",
];

/// How a conversation's plan ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bucket {
    /// The plan came true (a completed statement of its value).
    CameTrue,
    /// The plan was abandoned.
    Abandoned,
    /// No outcome before the end.
    Open,
    /// No plan: a completed change, which must commit at once.
    Control,
}

/// The arms.
pub const ARMS: [&str; 3] = ["ungated", "plan-typed", "gated"];

/// One split's conversations.
struct Conversation {
    field: &'static Field,
    bucket: Bucket,
    current: String,
    next: String,
    /// Each turn's text and what it is.
    turns: Vec<(String, Role)>,
}

/// What a turn of a conversation is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Unrelated talk (no key).
    Filler,
    /// The field's current value.
    Current,
    /// The plan (a speculation of the next value).
    Plan,
    /// The plan's outcome, or a control's completed change.
    Outcome,
}

fn fill(t: &str, f: &Field, v: &str) -> String {
    let s = t.replace("{n}", f.noun).replace("{v}", v);
    let mut c = s.chars();
    c.next()
        .map(|x| x.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Builds one conversation.
#[allow(clippy::too_many_arguments)]
fn conversation(
    i: usize,
    bucket: Bucket,
    long: bool,
    family: Family,
    strength: usize,
    confirm: usize,
    fillers: usize,
) -> Conversation {
    let field = &FIELDS[i % FIELDS.len()];
    let values = if long { &field.long } else { &field.short };
    let (current, next) = (
        values[i % 4].to_owned(),
        values[(i + 1 + i / 4) % 4].to_owned(),
    );
    let next = if next == current {
        values[(i + 2) % 4].to_owned()
    } else {
        next
    };
    let t = match family {
        Family::A => &FAMILY_A,
        Family::B => &FAMILY_B,
        Family::C => &FAMILY_C,
        Family::D => &FAMILY_D,
        Family::E => &FAMILY_E,
        Family::F => &FAMILY_F,
    };
    let (cur, plans, conf, aband, comp) = (t.current, t.plans, t.confirm, t.abandon, t.completed);
    let filler = |k: usize| (FILLER[(i + k) % FILLER.len()].to_owned(), Role::Filler);
    let mut turns = vec![
        (fill(cur[i % cur.len()], field, &current), Role::Current),
        filler(0),
    ];
    match bucket {
        Bucket::Control => turns.push((fill(comp[i % comp.len()], field, &next), Role::Outcome)),
        _ => {
            let p = plans[strength];
            turns.push((fill(p[i % p.len()], field, &next), Role::Plan))
        }
    }
    turns.extend((1..=fillers).map(filler));
    match bucket {
        Bucket::CameTrue => {
            let c = conf[confirm];
            turns.push((fill(c[i % c.len()], field, &next), Role::Outcome))
        }
        Bucket::Abandoned => {
            turns.push((fill(aband[i % aband.len()], field, &next), Role::Outcome))
        }
        Bucket::Open | Bucket::Control => {}
    }
    turns.push(filler(7));
    Conversation {
        field,
        bucket,
        current,
        next,
        turns,
    }
}

/// A split: its name, its family, its conversations.
fn splits() -> Vec<(&'static str, &'static str, Vec<Conversation>)> {
    let mut out = Vec::new();
    let buckets = [Bucket::CameTrue, Bucket::Abandoned, Bucket::Open];
    let core = (0..60)
        .map(|i| conversation(i, buckets[i % 3], false, Family::A, i % 5, i % 4, 2))
        .collect();
    out.push(("core", "A", core));
    let held = |family: Family| {
        let mut c: Vec<Conversation> = (0..132)
            .map(|i| conversation(i, buckets[i % 3], true, family, i % 5, i % 4, 1))
            .collect();
        c.extend((0..15).map(|i| conversation(i, Bucket::Control, true, family, 0, 0, 1)));
        c
    };
    out.push(("held-out", "B", held(Family::B)));
    out.push(("held-out", "C", held(Family::C)));
    out.push(("held-out", "D", held(Family::D)));
    out.push(("held-out", "E", held(Family::E)));
    out.push(("held-out", "F", held(Family::F)));
    for (s, name) in HEDGE_NAMES.iter().enumerate() {
        let c = (0..20)
            .map(|i| conversation(i, Bucket::Open, false, Family::F, s, 0, 2))
            .collect();
        out.push((*name, "F", c));
    }
    for (w, name) in CONFIRM_NAMES.iter().enumerate() {
        let c = (0..20)
            .map(|i| conversation(i, Bucket::CameTrue, false, Family::F, i % 5, w, 2))
            .collect();
        out.push((*name, "F", c));
    }
    out
}

const HEDGE_NAMES: [&str; 5] = [
    "hedge 1 (firm)",
    "hedge 2",
    "hedge 3",
    "hedge 4",
    "hedge 5 (vague)",
];
const CONFIRM_NAMES: [&str; 4] = [
    "confirmation 1",
    "confirmation 2",
    "confirmation 3",
    "confirmation 4",
];

/// One arm on one split.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Split.
    pub split: &'static str,
    /// Template family.
    pub family: &'static str,
    /// Arm.
    pub arm: &'static str,
    /// At-risk plans current at some point while pending.
    pub pending_contamination: Tally,
    /// At-risk plans current at the end.
    pub end_contamination: Tally,
    /// Completed changes current right after they were said.
    pub immediate_commit: Tally,
    /// Controls not committed.
    pub over_held: Tally,
    /// Final blocks with the true value and not the other.
    pub task_accuracy: Tally,
    /// Misses of the gated arm, with their statement.
    pub misses: Vec<String>,
}

fn day(d: usize) -> WallTime {
    WallTime::parse("2025-03-01")
        .expect("a date")
        .plus_millis(d as i64 * 86_400_000)
}

/// Runs one arm over one conversation, adding to `row`.
fn run_one(arm: &str, c: &Conversation, row: &mut Row) -> Result<()> {
    let mut m = Memory::new(Config::default())?;
    let key = Key::new("user", c.field.slot)?;
    let plan_key = Key::new("user", &format!("{}_plan", c.field.slot))?;
    let head = |m: &Memory| {
        m.ledger()
            .active_for_key(&key)
            .and_then(|f| f.body.value().map(str::to_owned))
    };
    let next = text::normalize(&c.next);
    let at_risk = matches!(c.bucket, Bucket::Abandoned | Bucket::Open);
    let mut pending = false;
    let mut contaminated = false;
    for (d, (turn, role)) in c.turns.iter().enumerate() {
        let mut o = Observation::new(turn.clone(), day(d)).with_participants(["user"]);
        let value = match role {
            Role::Current => Some(c.current.as_str()),
            Role::Plan | Role::Outcome => Some(c.next.as_str()),
            Role::Filler => None,
        };
        if let Some(v) = value {
            // The gate as `Memory` applies it: a revision needs an assertion.
            let verdict = gate::classify(&text::normalize(turn), Some(&text::normalize(v)));
            let revises = head(&m).is_some_and(|h| h != text::normalize(v));
            let verdict = if revises { verdict.revising() } else { verdict };
            let speculative = verdict.kind == Kind::Speculation;
            o = match arm {
                "ungated" => o.with_key(key.clone(), Some(v)).with_kind(Kind::Other),
                "plan-typed" if speculative => {
                    o.with_key(plan_key.clone(), Some(v)).with_kind(Kind::Other)
                }
                "plan-typed" => o.with_key(key.clone(), Some(v)).with_kind(Kind::Other),
                _ => o.with_key(key.clone(), Some(v)),
            };
        }
        m.observe(o)?;
        let now = head(&m);
        match role {
            Role::Plan => pending = true,
            Role::Outcome => {
                pending = false;
                if matches!(c.bucket, Bucket::CameTrue | Bucket::Control) {
                    let committed = now.as_deref() == Some(next.as_str());
                    row.immediate_commit.add(committed);
                    if c.bucket == Bucket::Control {
                        row.over_held.add(!committed);
                    }
                    if !committed && arm == "gated" {
                        row.misses.push(format!("not committed: {turn:?}"));
                    }
                }
            }
            _ => {}
        }
        if pending && at_risk && now.as_deref() == Some(next.as_str()) {
            if !contaminated && arm == "gated" {
                row.misses.push(format!("plan committed: {turn:?}"));
            }
            contaminated = true;
        }
    }
    if at_risk {
        let at_end = head(&m).as_deref() == Some(next.as_str());
        if at_end && !contaminated && arm == "gated" {
            let last = c.turns.iter().rev().find(|t| t.1 != Role::Filler);
            let said = last.map_or("", |t| t.0.as_str());
            row.misses
                .push(format!("current at the end after: {said:?}"));
        }
        row.pending_contamination.add(contaminated);
        row.end_contamination.add(at_end);
    }
    let block = m
        .retrieve(
            &Request::new(format!("what is {}", c.field.noun), day(40)).with_participants(["user"]),
        )?
        .text;
    let truth = match c.bucket {
        Bucket::CameTrue | Bucket::Control => &c.next,
        Bucket::Abandoned | Bucket::Open => &c.current,
    };
    row.task_accuracy.add(
        text::contains(&block, truth)
            && head(&m).as_deref() == Some(text::normalize(truth).as_str()),
    );
    Ok(())
}

/// Runs every arm on every split.
pub fn run() -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for (split, family, conversations) in splits() {
        for arm in ARMS {
            let mut row = Row {
                split,
                family,
                arm,
                pending_contamination: Tally::default(),
                end_contamination: Tally::default(),
                immediate_commit: Tally::default(),
                over_held: Tally::default(),
                task_accuracy: Tally::default(),
                misses: Vec::new(),
            };
            for c in &conversations {
                run_one(arm, c, &mut row)?;
            }
            rows.push(row);
        }
    }
    Ok(rows)
}

/// The paper's values (core benchmark, literal extractor; held-out).
fn paper(split: &str, arm: &str, metric: &str) -> Option<f64> {
    match (split, arm, metric) {
        ("core", "ungated", "pending") => Some(0.875),
        ("core", "ungated", "end") => Some(0.475),
        ("core", "ungated", "task") => Some(0.65),
        ("core", "gated", "pending" | "end") => Some(0.0),
        ("core", "gated", "task") => Some(0.95),
        ("held-out", "gated", "pending" | "end") => Some(0.0),
        ("held-out", "gated", "over") => Some(1.0 / 15.0),
        _ => None,
    }
}

/// The study's tables.
pub fn markdown(w: &mut String, rows: &[Row]) {
    let _ = writeln!(
        w,
        "## Speculation gate (AgentMemGate) — plans staged, not stored (our generator)\n\n\
         Each cell is **ours (Wilson 95%) · paper** with k/n. At-risk plans are the abandoned and open \
         ones. Family A is what the gate's phrase table was first written from; family B's misses \
         shaped its extension; family C shaped the gate's structural version; family D's misses \
         shaped the rows after it and the rule that a revision needs an assertion; family E, \
         written before those, measured them (one bug its first look exposed was fixed) and its \
         misses shaped two more rows (all five seen); family F, also used by the hedge and \
         confirmation splits, was written before those two and is held out (`eval/README.md`). \
         `crates/harness/src/eval/speculation.rs` documents the generator, the arms and the metrics.\n\n\
         | Split | Family | Arm | Pending-window contamination ↓ | At-end contamination ↓ | Immediate commit ↑ | Over-held controls ↓ | Task accuracy ↑ |\n\
         |---|---|---|---|---|---|---|---|"
    );
    for r in rows {
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.split,
            r.family,
            r.arm,
            r.pending_contamination
                .cell(paper(r.split, r.arm, "pending")),
            r.end_contamination.cell(paper(r.split, r.arm, "end")),
            r.immediate_commit.cell(None),
            r.over_held.cell(paper(r.split, r.arm, "over")),
            r.task_accuracy.cell(paper(r.split, r.arm, "task")),
        );
    }
    let _ = writeln!(
        w,
        "\nThe gated arm's misses, by split (each statement once):\n"
    );
    for r in rows.iter().filter(|r| r.arm == "gated") {
        let mut seen: Vec<&String> = Vec::new();
        for m in &r.misses {
            if !seen.contains(&m) {
                seen.push(m);
            }
        }
        if seen.is_empty() {
            let _ = writeln!(w, "- {} ({}): none", r.split, r.family);
        } else {
            let list: Vec<String> = seen.iter().take(6).map(|m| m.to_string()).collect();
            let _ = writeln!(
                w,
                "- {} ({}; {} in all): {}",
                r.split,
                r.family,
                r.misses.len(),
                list.join("; ")
            );
        }
    }
    let _ = writeln!(w);
}

/// What the gate reads on real text: each class's share of `texts` (read
/// without a value, as a statement naming its cell would be) and its first
/// examples. Real turns carry no keys today, so the gate acts on none of
/// them; this is what it would do once they are keyed.
pub fn real_text_markdown(texts: &[&str]) -> String {
    const KINDS: [Kind; 5] = [
        Kind::Speculation,
        Kind::Completed,
        Kind::Correction,
        Kind::Abandonment,
        Kind::Other,
    ];
    let mut counts = [0usize; 5];
    let mut examples: [Vec<&str>; 5] = Default::default();
    for t in texts {
        let kind = gate::classify(&text::normalize(t), None).kind;
        let i = KINDS.iter().position(|k| *k == kind).unwrap_or(4);
        counts[i] += 1;
        if examples[i].len() < 3 && t.len() <= 120 {
            examples[i].push(t);
        }
    }
    let mut w =
        String::from("| Class | Turns | Share | First short examples |\n|---|---|---|---|\n");
    for (i, kind) in KINDS.iter().enumerate() {
        let share = counts[i] as f64 / texts.len().max(1) as f64;
        let said: Vec<String> = examples[i].iter().map(|e| format!("{e:?}")).collect();
        let _ = writeln!(
            w,
            "| {} | {} | {:.3} | {} |",
            kind.name(),
            counts[i],
            share,
            said.join("; ").replace('|', "\\|")
        );
    }
    w
}
