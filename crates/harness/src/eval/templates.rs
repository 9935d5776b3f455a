//! The words of the controlled benchmark (Appendix B): names, message and
//! query templates per slot, filler and chit-chat templates, and the
//! type-specific value generators.
//!
//! Every template is written so that the rule extractor's slot table
//! (`extract::slots`) recognizes its noun and value type: a template that the
//! extractor could not key would make the benchmark measure the templates,
//! not the memory. `tests/eval.rs::every_chain_message_keys_to_its_chain`
//! checks that every chain message of an instance keys to its chain.

use rand::RngExt;
use rand::rngs::Xoshiro256PlusPlus;

/// The six first names shared by a pair of people (chains 0–11).
pub const PAIRED_FIRST: [&str; 6] = ["Alex", "Sam", "Jordan", "Taylor", "Morgan", "Casey"];

/// First names held by one person each; an instance uses the first
/// `people - 12` (see `generator::DEFAULT_PEOPLE`).
pub const UNIQUE_FIRST: [&str; 37] = [
    "Priya", "Mateo", "Hana", "Omar", "Lena", "Dmitri", "Aisha", "Jonas", "Mei", "Rafael",
    "Ingrid", "Kofi", "Noor", "Elias", "Sofia", "Tomas", "Yuki", "Bruno", "Clara", "Dario",
    "Edith", "Farid", "Greta", "Hugo", "Irene", "Jasper", "Kira", "Leon", "Maya", "Nils", "Olga",
    "Pavel", "Rosa", "Soren", "Tara", "Uma", "Viktor",
];

/// Surnames; each person gets a distinct one.
pub const SURNAMES: [&str; 49] = [
    "Rivera",
    "Chen",
    "Patel",
    "Okafor",
    "Nguyen",
    "Schmidt",
    "Kowalski",
    "Haddad",
    "Lindqvist",
    "Moreau",
    "Tanaka",
    "Silva",
    "Novak",
    "Adeyemi",
    "Rossi",
    "Kaur",
    "Fischer",
    "Dubois",
    "Larsen",
    "Petrov",
    "Yilmaz",
    "Costa",
    "Murphy",
    "Sato",
    "Mendes",
    "Varga",
    "Ibrahim",
    "Keller",
    "Bianchi",
    "Abbott",
    "Barker",
    "Carver",
    "Dalton",
    "Ellis",
    "Foster",
    "Garner",
    "Hale",
    "Irwin",
    "Jarvis",
    "Kemp",
    "Lowe",
    "Mercer",
    "Nash",
    "Owens",
    "Pryce",
    "Quinn",
    "Reid",
    "Stone",
    "Tate",
];

/// Project code names (one-word entities registered as projects).
pub const PROJECTS: [&str; 28] = [
    "Halcyon", "Orion", "Bluebird", "Kestrel", "Meridian", "Atlas", "Juniper", "Nimbus", "Quartz",
    "Sequoia", "Tundra", "Vesper", "Zephyr", "Cobalt", "Falcon", "Granite", "Harbor", "Ironwood",
    "Lumen", "Mosaic", "Nova", "Obsidian", "Pioneer", "Redwood", "Sapphire", "Trident", "Umbra",
    "Willow",
];

/// Names that occur only in filler messages, never in a chain.
pub const FILLER_NAMES: [&str; 8] = [
    "Beatrix Holm",
    "Cyrus Wendt",
    "Dagny Roth",
    "Emeric Pahl",
    "Fenna Vos",
    "Gideon Marsh",
    "Hollis Quade",
    "Ilse Brandt",
];

/// Bot senders of filler messages (their participants).
pub const BOTS: [&str; 4] = ["ticket-bot", "deploy-bot", "facilities-bot", "license-bot"];

/// Meeting nouns a chain of a meeting slot picks from (all in the slot
/// table). The paper names only "standup" and "sync"; a small inventory
/// makes same-named competitors share their noun often, as they must for
/// the paper's wrong-person rates (`eval/RESULTS.md` discusses the choice).
pub const MEETING_NOUNS: [&str; 3] = ["standup", "sync", "review"];

/// The fields a template is filled with.
#[derive(Clone, Copy, Debug)]
pub struct Fill<'a> {
    /// The entity as a message names it (a person's full name, a project).
    pub entity: &'a str,
    /// The entity as a query names it (a person's first name, a project).
    pub short: &'a str,
    /// The slot noun (meetings); the slot's own noun otherwise.
    pub noun: &'a str,
    /// The value (messages only).
    pub value: &'a str,
}

/// Message and query templates of one slot. `{e}` entity, `{s}` short name,
/// `{n}` noun, `{v}` value.
pub struct SlotTemplates {
    /// The slot's name in `extract::SLOTS`.
    pub slot: &'static str,
    /// Three message templates; the first is the verbatim one.
    pub messages: [&'static str; 3],
    /// The standard query (ends right before the value).
    pub query: &'static str,
    /// The paraphrased query.
    pub paraphrase: &'static str,
    /// The cancellation message, for slots whose chains can be cancelled.
    pub cancel: Option<&'static str>,
}

/// Templates for every slot of the benchmark.
pub static TEMPLATES: [SlotTemplates; 6] = [
    SlotTemplates {
        slot: "meeting_time",
        messages: [
            "The {n} with {e} is moved to {v}.",
            "{e} {n} is rescheduled to {v}.",
            "New time for the {n} with {e}: moved to {v}.",
        ],
        query: "the {n} with {s} is at",
        paraphrase: "{s} {n} is now at",
        cancel: Some("The {n} with {e} is cancelled."),
    },
    SlotTemplates {
        slot: "room",
        messages: [
            "The {n} with {e} is moved to {v}.",
            "{e} {n} is relocated to {v}.",
            "New location for the {n} with {e}: {v}.",
        ],
        query: "the {n} with {s} is in",
        paraphrase: "{s} {n} is now in",
        cancel: Some("The {n} with {e} is cancelled."),
    },
    SlotTemplates {
        slot: "deadline",
        messages: [
            "The deadline for {e} is {v}.",
            "{e} deadline moved to {v}.",
            "New due date for {e}: {v}.",
        ],
        query: "the deadline for {s} is",
        paraphrase: "{s} deadline is now",
        cancel: None,
    },
    SlotTemplates {
        slot: "launch_date",
        messages: [
            "The {e} launch is set for {v}.",
            "{e} launch date moved to {v}.",
            "New launch date for {e}: {v}.",
        ],
        query: "the {s} launch is on",
        paraphrase: "{s} launch date is now",
        cancel: None,
    },
    SlotTemplates {
        slot: "day_rate",
        messages: [
            "The day rate for {e} is {v}.",
            "{e} day rate is now {v}.",
            "New day rate agreed with {e}: {v}.",
        ],
        query: "the day rate for {s} is",
        paraphrase: "{s} day rate is now",
        cancel: None,
    },
    SlotTemplates {
        slot: "budget_cap",
        messages: [
            "The budget cap for {e} is {v}.",
            "{e} budget cap raised to {v}.",
            "New budget cap for {e}: {v}.",
        ],
        query: "the budget cap for {s} is",
        paraphrase: "{s} budget cap is now",
        cancel: None,
    },
];

/// The templates of a slot.
pub fn templates(slot: &str) -> &'static SlotTemplates {
    TEMPLATES
        .iter()
        .find(|t| t.slot == slot)
        // Infallible: TEMPLATES covers the slot table (checked by a test).
        .expect("every benchmark slot has templates")
}

/// The noun a template's `{n}` takes for a non-meeting slot.
pub fn slot_noun(slot: &str) -> &'static str {
    match slot {
        "deadline" => "deadline",
        "launch_date" => "launch",
        "day_rate" => "day rate",
        "budget_cap" => "budget cap",
        _ => "meeting",
    }
}

/// Fills a template.
pub fn fill(template: &str, f: Fill<'_>) -> String {
    template
        .replace("{e}", f.entity)
        .replace("{s}", f.short)
        .replace("{n}", f.noun)
        .replace("{v}", f.value)
}

/// Draws a value of the slot's type, in the form a message writes it.
pub fn value(slot: &str, rng: &mut Xoshiro256PlusPlus) -> String {
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    match slot {
        "meeting_time" => {
            let hour = rng.random_range(7..20u32);
            let minute = 5 * rng.random_range(0..12u32);
            let (h12, half) = match hour {
                12 => (12, "pm"),
                13.. => (hour - 12, "pm"),
                _ => (hour, "am"),
            };
            format!("{h12}:{minute:02}{half}")
        }
        "room" => {
            let letter = char::from(b'A' + rng.random_range(0..6u8));
            format!("room {}{letter}", rng.random_range(1..41u32))
        }
        "deadline" | "launch_date" => format!(
            "{} {}",
            MONTHS[rng.random_range(0..12usize)],
            rng.random_range(1..29u32)
        ),
        "day_rate" => thousands(25 * rng.random_range(16..241u64)),
        _ => thousands(500 * rng.random_range(20..401u64)),
    }
}

/// `$1,250`: dollars with digit-grouping commas (normalization removes them).
fn thousands(dollars: u64) -> String {
    if dollars >= 1000 {
        format!("${},{:03}", dollars / 1000, dollars % 1000)
    } else {
        format!("${dollars}")
    }
}

/// A filler message from one of the four bot templates; returns the text and
/// its bot sender. Its numbers never tokenize like a value (`$875` is the
/// token `875`, so a build number is written `v8.75`, and unit and seat
/// numbers stay below the smallest day rate).
pub fn filler(rng: &mut Xoshiro256PlusPlus) -> (String, &'static str) {
    const SERVICES: [&str; 6] = ["billing", "search", "gateway", "auth", "reports", "inbox"];
    const HARDWARE: [&str; 5] = [
        "rack server",
        "storage array",
        "core switch",
        "backup unit",
        "print station",
    ];
    const LICENSES: [&str; 5] = [
        "CAD suite",
        "IDE seat",
        "design tool",
        "BI viewer",
        "PDF kit",
    ];
    let name = FILLER_NAMES[rng.random_range(0..FILLER_NAMES.len())];
    let template = rng.random_range(0..4usize);
    let text = match template {
        0 => format!(
            "Ticket TCK-{} assigned to {name}.",
            rng.random_range(1000..10000u32)
        ),
        1 => format!(
            "Deployment of the {} service finished, build v{}.{}, approved by {name}.",
            SERVICES[rng.random_range(0..SERVICES.len())],
            rng.random_range(1..10u32),
            rng.random_range(0..100u32)
        ),
        2 => format!(
            "Hardware maintenance on the {} unit {} completed by {name}.",
            HARDWARE[rng.random_range(0..HARDWARE.len())],
            rng.random_range(1..100u32)
        ),
        _ => format!(
            "License reservation for the {} confirmed for {name}, seat {}.",
            LICENSES[rng.random_range(0..LICENSES.len())],
            rng.random_range(1..50u32)
        ),
    };
    (text, BOTS[template])
}

/// A short chit-chat message to a person (by first name).
pub fn chit_chat(first: &str, rng: &mut Xoshiro256PlusPlus) -> String {
    const LINES: [&str; 6] = [
        "Thanks {s}, talk soon!",
        "Hi {s}, hope the week is going well.",
        "Great chatting with you, {s}.",
        "{s}, enjoy the weekend!",
        "Cheers {s}, see you around.",
        "Good luck with everything, {s}.",
    ];
    LINES[rng.random_range(0..LINES.len())].replace("{s}", first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pfm::extract::{SLOTS, slots};
    use pfm::text::normalize;

    #[test]
    fn every_slot_has_templates_and_values_of_its_type() {
        let mut rng = <Xoshiro256PlusPlus as rand::SeedableRng>::seed_from_u64(1);
        for spec in SLOTS {
            let t = templates(spec.name);
            assert_eq!(t.slot, spec.name);
            for _ in 0..50 {
                let v = normalize(&value(spec.name, &mut rng));
                let found = slots::find_values(&v);
                assert_eq!(found.len(), 1, "{v}");
                assert_eq!(
                    (found[0].ty, found[0].start, found[0].end),
                    (spec.value, 0, v.len()),
                    "{v}"
                );
            }
        }
    }
}
