//! Soft key identity through a store (`extract::soft`, `extract::
//! relations::open`): open relation phrases open keys, later wordings of
//! the same attribute join them, and nothing merges across object classes
//! or numbers. The embedding step is covered with MiniLM in
//! `crates/dense/tests/soft_identity.rs`.

use pfm::config::Config;
use pfm::extract::soft::SoftIdentity;
use pfm::memory::{MatchedBy, Memory, Observation, Receipt};
use pfm::time::WallTime;

fn store(mode: SoftIdentity) -> Memory {
    Memory::new(Config {
        soft_identity: mode,
        ..Config::default()
    })
    .unwrap()
}

fn say(memory: &mut Memory, i: i64, text: &str) -> Receipt {
    memory
        .observe(Observation::new(text, WallTime::from_secs(1_000 + i * 60)))
        .unwrap()
}

fn key_of(r: &Receipt) -> Option<String> {
    r.key.as_ref().map(ToString::to_string)
}

#[test]
fn an_open_phrase_opens_a_key_and_its_wordings_join_it() {
    let mut m = store(SoftIdentity::Lexical);
    let first = say(&mut m, 0, "Ann Lee's lucky number is 7.");
    assert_eq!(key_of(&first).as_deref(), Some("ann lee/lucky number"));
    assert_eq!(first.matched_by, Some(MatchedBy::Opened));
    let again = say(&mut m, 1, "Ann Lee's lucky number is now 9.");
    assert_eq!(key_of(&again), key_of(&first));
    assert_eq!(again.matched_by, Some(MatchedBy::Exact));
    let plural = say(&mut m, 2, "Ann Lee's lucky numbers is 11.");
    assert_eq!(key_of(&plural), key_of(&first));
    assert_eq!(plural.matched_by, Some(MatchedBy::Lexical));
    let coffee = say(&mut m, 3, "Ann Lee's usual coffee order is a flat white.");
    assert_eq!(key_of(&coffee).as_deref(), Some("ann lee/coffee order"));
    let goto = say(&mut m, 4, "Ann Lee's go-to coffee order is a cortado.");
    assert_eq!(key_of(&goto), key_of(&coffee));
    let active: Vec<String> = m
        .ledger()
        .active()
        .filter_map(|f| f.body.value().map(str::to_owned))
        .collect();
    assert_eq!(active, ["11", "cortado"]);
}

#[test]
fn the_speaker_and_the_of_frame_are_subjects_too() {
    let mut m = store(SoftIdentity::Lexical);
    let o = Observation::new(
        "Caroline: my usual bedtime is 10:30pm",
        WallTime::from_secs(1),
    )
    .with_participants(["Caroline Ruiz", "Mel Ortiz"]);
    let mine = m.observe(o).unwrap();
    assert_eq!(key_of(&mine).as_deref(), Some("caroline ruiz/bedtime"));
    let of = say(&mut m, 1, "The bedtime of Caroline Ruiz is 11pm.");
    assert_eq!(key_of(&of), key_of(&mine));
}

#[test]
fn soft_identity_never_merges_two_object_classes() {
    let mut m = store(SoftIdentity::Lexical);
    let time = say(&mut m, 0, "Ann Lee's bedtime is 10:30pm.");
    assert!(time.key.is_some());
    // The same phrase with a phrase object, then a number: no key.
    for (i, text) in ["Ann Lee's bedtime is early.", "Ann Lee's bedtimes is 3."]
        .iter()
        .enumerate()
    {
        let r = say(&mut m, i as i64 + 1, text);
        assert_eq!(r.key, None, "{text}");
    }
    let value = m
        .ledger()
        .active_for_key(time.key.as_ref().unwrap())
        .and_then(|f| f.body.value().map(str::to_owned));
    assert_eq!(value.as_deref(), Some("10:30pm"));
}

#[test]
fn phrases_that_name_other_numbers_are_other_keys() {
    let mut m = store(SoftIdentity::Lexical);
    let five = say(&mut m, 0, "Ann Lee's 5K personal best is 21:30.");
    let ten = say(&mut m, 1, "Ann Lee's 10K personal best is 45:10.");
    assert!(five.key.is_some() && ten.key.is_some());
    assert_ne!(five.key, ten.key);
}

#[test]
fn unplain_or_unowned_statements_get_no_key() {
    let mut m = store(SoftIdentity::Lexical);
    for (i, text) in [
        "Ann Lee's lucky number is not 7.",
        "Ann Lee's lucky number is 7?",
        "Maybe Ann Lee's lucky number is 7.",
        "Bo said that Ann Lee's lucky number is 7.",
        "Ann Lee's sister's lucky number is 7.",
        "Ann Lee's goal is to run a marathon.",
        "Ann Lee's favorite is the blue one.",
        "Ann Lee's mom is a nurse.",
        "Ann Lee's lucky number is 7 and Bo Chen's lucky number is 8.",
    ]
    .iter()
    .enumerate()
    {
        let r = say(&mut m, i as i64, text);
        assert_eq!(key_of(&r), None, "{text}");
    }
    let named = say(&mut m, 20, "Ann Lee's mom is Rita Lee.");
    assert_eq!(key_of(&named).as_deref(), Some("ann lee/mom"));
}

#[test]
fn off_and_table_phrases_are_as_before() {
    let mut m = store(SoftIdentity::Off);
    assert_eq!(say(&mut m, 0, "Ann Lee's lucky number is 7.").key, None);
    let mut m = store(SoftIdentity::Lexical);
    let table = say(&mut m, 0, "Ann Lee's favorite food is sushi.");
    assert_eq!(key_of(&table).as_deref(), Some("ann lee/favorite_food"));
    assert_eq!(table.matched_by, Some(MatchedBy::Exact));
}
