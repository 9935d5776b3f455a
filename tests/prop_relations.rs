//! Relation keys from plain text: receipts say how a key was found, and
//! keys keep Proposition 1: a stream of
//! statements about one subject's relations, in any phrasing the table
//! knows or wordings of an open phrase soft identity joins, mixed with
//! hedges, questions and negations, never leaves two current values of a
//! key, and the current value is the last plain one.

use std::collections::HashMap;

use pfm::config::Config;
use pfm::{Key, Memory, Observation, WallTime};
use proptest::prelude::*;

const CITIES: [&str; 4] = ["Lisbon", "Denver", "Osaka", "Quito"];
const ORGS: [&str; 3] = ["Acme Robotics", "Blue Harbor Bank", "Northwind Labs"];

const COFFEE: [&str; 3] = ["a flat white", "a cortado", "an oat latte"];
const LUCKY: [&str; 3] = ["7", "13", "22"];

/// (relation slot, phrasings with {o}, objects): two of the table, two
/// open phrases (soft key identity: wordings with light modifiers, the
/// "of" frame, a plural) whose keys the first statement opens.
const RELATIONS: [(&str, &[&str], &[&str]); 4] = [
    (
        "residence",
        &[
            "Ann Lee lives in {o}.",
            "Ann Lee moved to {o}.",
            "Ann Lee: I just moved to {o}!",
            "Ann Lee's home is {o}.",
        ],
        &CITIES,
    ),
    (
        "employer",
        &[
            "Ann Lee works at {o}.",
            "Ann Lee is employed by {o}.",
            "Ann Lee: I'm working at {o}.",
        ],
        &ORGS,
    ),
    (
        "coffee order",
        &[
            "Ann Lee's usual coffee order is {o}.",
            "Ann Lee: my go-to coffee order is {o} now.",
            "The coffee order of Ann Lee is {o}.",
        ],
        &COFFEE,
    ),
    (
        "lucky number",
        &[
            "Ann Lee's lucky number is {o}.",
            "Ann Lee's lucky numbers is now {o}.",
            "Ann Lee: my current lucky number is {o}.",
        ],
        &LUCKY,
    ),
];

/// Sentences that must not change a key.
const NOT_PLAIN: &[&str] = &[
    "Ann Lee might move to {o}.",
    "Does Ann Lee live in {o}?",
    "Ann Lee doesn't work at {o}.",
    "Bo Chan said that Ann Lee works at {o}.",
    "Is Ann Lee's lucky number {o}?",
    "Ann Lee's lucky number is not {o}.",
    "Maybe Ann Lee's usual coffee order is {o}.",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn prop_relation_stream_keeps_one_current_value(
        steps in prop::collection::vec((0..4usize, 0..4usize, 0..4usize, any::<bool>()), 1..30)
    ) {
        let mut m = Memory::new(Config::default()).unwrap();
        let mut expected: HashMap<&str, String> = HashMap::new();
        let mut keys: HashMap<&str, String> = HashMap::new();
        for (i, (r, phrasing, object, plain)) in steps.into_iter().enumerate() {
            let (slot, phrasings, objects) = RELATIONS[r];
            let object = objects[object % objects.len()];
            let template = if plain {
                phrasings[phrasing % phrasings.len()]
            } else {
                NOT_PLAIN[phrasing % NOT_PLAIN.len()]
            };
            let text = template.replace("{o}", object);
            let at = WallTime::from_secs(1_767_225_600 + i as i64 * 3600);
            let o = Observation::new(text.clone(), at).with_participants(["Ann Lee", "Bo Chan"]);
            let receipt = m.observe(o).unwrap();
            if plain {
                let key = receipt.key.as_ref().map(ToString::to_string);
                // An open phrase's key is named by the wording that opened it.
                let name = keys.entry(slot).or_insert_with(|| match &key {
                    Some(k) if slot.contains(' ') => k.clone(),
                    _ => format!("ann lee/{slot}"),
                });
                prop_assert_eq!(key.as_ref(), Some(&*name), "{}", text);
                let value = pfm::text::normalize(object);
                let value = value.strip_prefix("a ").or(value.strip_prefix("an ")).unwrap_or(&value);
                expected.insert(slot, value.to_owned());
            } else {
                prop_assert!(receipt.key.is_none(), "{} got a key", text);
            }
            m.ledger().verify().map_err(TestCaseError::fail)?;
            for (slot, value) in &expected {
                let slot = keys[slot].trim_start_matches("ann lee/");
                let key = Key::new("ann lee", slot).unwrap();
                let head = m.ledger().active_for_key(&key).and_then(|f| f.body.value().map(str::to_owned));
                prop_assert_eq!(head.as_deref(), Some(value.as_str()));
            }
        }
    }
}

#[test]
fn receipts_say_how_the_key_was_found() {
    use pfm::memory::MatchedBy;
    let mut m = Memory::new(Config::default()).unwrap();
    let at = WallTime::from_secs(1_767_225_600);
    let mut found = |o: Observation| {
        let r = m.observe(o).unwrap();
        (r.key.map(|k| k.to_string()), r.matched_by)
    };
    let slot = Observation::new("The standup with Alex Rivera is moved to 9am.", at)
        .with_participants(["Alex Rivera"]);
    assert_eq!(
        found(slot),
        (
            Some("alex rivera/meeting_time".into()),
            Some(MatchedBy::Slot)
        )
    );
    let exact = Observation::new("Ann Lee's home is Denver.", at);
    assert_eq!(
        found(exact),
        (Some("ann lee/residence".into()), Some(MatchedBy::Exact))
    );
    let paraphrase = Observation::new("Ann Lee moved to Osaka.", at);
    assert_eq!(
        found(paraphrase),
        (
            Some("ann lee/residence".into()),
            Some(MatchedBy::Paraphrase)
        )
    );
    let given = Observation::new("Ann Lee moved to Quito.", at)
        .with_key(Key::new("ann lee", "residence").unwrap(), Some("quito"));
    assert_eq!(found(given), (Some("ann lee/residence".into()), None));
    let keyless = Observation::new("Ann Lee might move to Lisbon.", at);
    assert_eq!(found(keyless), (None, None));
}
