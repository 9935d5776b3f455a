//! The speculation gate (AgentMemGate) through the public `Memory` API:
//! plans are staged, never current, and confirmed or abandoned by later
//! statements; corrections replace the value as wrong; the caller's `kind`
//! overrides the gate; staging survives a restore and a refused batch.

use pfm::config::{Config, MergeMode};
use pfm::fact::{Kind, Op, Status};
use pfm::{EntityKind, Forget, Key, Memory, Observation, Outcome, Request};

mod common;

use common::{day, restored, rows};

fn store() -> Memory {
    let mut m = Memory::new(Config {
        merge: MergeMode::Inline,
        ..Config::default()
    })
    .unwrap();
    m.register_entity("Halcyon", EntityKind::Project).unwrap();
    m
}

fn launch() -> Key {
    Key::new("Halcyon", "launch_date").unwrap()
}

fn say(m: &mut Memory, text: &str, d: i64) -> Outcome {
    m.observe(Observation::new(text, day(d)).with_participants(["Ann Lee"]))
        .unwrap()
        .outcome
}

fn head(m: &Memory) -> Option<String> {
    m.ledger()
        .active_for_key(&launch())
        .and_then(|f| f.body.value().map(str::to_owned))
}

fn block(m: &Memory) -> String {
    m.retrieve(&Request::new("when is the Halcyon launch", day(30)))
        .unwrap()
        .text
}

#[test]
fn a_plan_is_staged_and_promoted_when_it_comes_true() {
    let mut m = store();
    say(&mut m, "The Halcyon launch date is Nov 10.", 1);
    let Outcome::Staged { fact: plan } = say(&mut m, "The Halcyon launch might move to Dec 3.", 2)
    else {
        panic!("not staged")
    };
    assert_eq!(m.fact(plan).unwrap().state.status, Status::Pending);
    assert_eq!(m.ledger().pending_plans(&launch()), [plan]);
    assert_eq!(
        head(&m).as_deref(),
        Some("nov 10"),
        "a plan is never current"
    );
    let b = block(&m);
    assert!(b.contains("Nov 10") && !b.contains("Dec 3"), "{b}");
    let out = say(&mut m, "The Halcyon launch finally moved to Dec 3.", 5);
    let Outcome::Promoted {
        fact,
        plan: confirmed,
        previous: Some(_),
    } = out
    else {
        panic!("{out:?}")
    };
    assert_eq!(confirmed, plan);
    assert_eq!(m.fact(plan).unwrap().state.status, Status::Confirmed);
    assert_eq!(
        m.fact(fact).unwrap().body.stated_at,
        day(5),
        "stated when confirmed"
    );
    assert_eq!(head(&m).as_deref(), Some("dec 3"));
    assert!(m.ledger().pending_plans(&launch()).is_empty());
    m.ledger().verify().unwrap();
}

#[test]
fn abandonment_and_a_change_to_another_value_retire_plans() {
    let mut m = store();
    say(&mut m, "The Halcyon launch date is Nov 10.", 1);
    let a = say(
        &mut m,
        "We're thinking about moving the Halcyon launch to Dec 3.",
        2,
    )
    .fact();
    let b = say(&mut m, "The Halcyon launch may be pushed to Jan 14.", 3).fact();
    let out = say(&mut m, "The Halcyon launch move to Dec 3 fell through.", 4);
    assert_eq!(
        out,
        Outcome::Abandoned {
            fact: out.fact(),
            plans: vec![a]
        }
    );
    assert_eq!(m.fact(a).unwrap().state.status, Status::Abandoned);
    assert_eq!(
        m.fact(out.fact()).unwrap().body.key,
        None,
        "the statement is kept, keyless"
    );
    assert_eq!(head(&m).as_deref(), Some("nov 10"));
    // A completed change to another value abandons the rest.
    say(
        &mut m,
        "As of today the Halcyon launch date is officially Feb 2.",
        5,
    );
    assert_eq!(m.fact(b).unwrap().state.status, Status::Abandoned);
    assert_eq!(head(&m).as_deref(), Some("feb 2"));
    // A negated plan never stages (or commits) its value.
    let out = say(
        &mut m,
        "The Halcyon launch is not going to move to Mar 9.",
        6,
    );
    assert_eq!(out.name(), "created");
    assert_eq!(head(&m).as_deref(), Some("feb 2"));
    m.ledger().verify().unwrap();
}

#[test]
fn a_correction_contradicts_the_value_it_replaces() {
    let mut m = store();
    let first = say(&mut m, "The Halcyon launch date is Nov 10.", 1).fact();
    let out = say(
        &mut m,
        "Sorry, it's Nov 12: the Halcyon launch date is Nov 12.",
        2,
    );
    assert_eq!(out.name(), "rejected", "{out:?}");
    assert_eq!(m.fact(first).unwrap().state.status, Status::Contradicted);
    assert_eq!(head(&m).as_deref(), Some("nov 12"));
    // On an empty cell a correction simply states the value.
    let mut m = store();
    assert_eq!(
        say(&mut m, "Actually, the Halcyon launch date is Nov 12.", 1).name(),
        "created"
    );
    m.ledger().verify().unwrap();
}

#[test]
fn a_confirmation_without_a_value_confirms_the_keys_one_plan() {
    let mut m = store();
    say(&mut m, "The Halcyon launch date is Nov 10.", 1);
    let plan = say(&mut m, "The Halcyon launch might move to Dec 3.", 2).fact();
    // The text names the cell but no value.
    let out = say(&mut m, "The Halcyon launch move went through.", 4);
    let Outcome::Promoted { fact, plan: p, .. } = out else {
        panic!("{out:?}")
    };
    assert_eq!(p, plan);
    assert_eq!(head(&m).as_deref(), Some("dec 3"));
    assert_eq!(m.fact(fact).unwrap().body.stated_at, day(4));
    // Its block line says what became true, not only that something did.
    assert_eq!(
        m.fact(fact).unwrap().body.text(),
        "The Halcyon launch move went through. (confirms: dec 3)"
    );
    let shown = block(&m);
    assert!(
        shown.contains("went through. (confirms: dec 3)") && !shown.contains("Nov 10"),
        "{shown}"
    );
    // A caller's key without a value, read as completed, does the same.
    let mut m = store();
    say(&mut m, "The Halcyon launch date is Nov 10.", 1);
    say(&mut m, "The Halcyon launch might move to Dec 3.", 2);
    let r = m
        .observe(Observation::new("It happened!", day(3)).with_key(launch(), None))
        .unwrap();
    assert_eq!(r.outcome.name(), "promoted", "{r:?}");
    assert_eq!(head(&m).as_deref(), Some("dec 3"));
    assert!(block(&m).contains("It happened! (confirms: dec 3)"));
    // With two plans pending, a value-less confirmation names neither:
    // nothing is promoted.
    let mut m = store();
    say(&mut m, "The Halcyon launch date is Nov 10.", 1);
    say(&mut m, "The Halcyon launch might move to Dec 3.", 2);
    say(&mut m, "The Halcyon launch may be pushed to Jan 14.", 3);
    let out = say(&mut m, "The Halcyon launch move went through.", 4);
    assert_ne!(out.name(), "promoted", "{out:?}");
    assert_eq!(
        m.fact(out.fact()).unwrap().body.text(),
        "The Halcyon launch move went through.",
        "a statement that confirms nothing is kept as said"
    );
    assert_eq!(m.ledger().pending_plans(&launch()).len(), 2);
    assert_eq!(head(&m).as_deref(), Some("nov 10"));
    m.ledger().verify().unwrap();
}

#[test]
fn the_callers_kind_overrides_the_gate() {
    let mut m = store();
    let plain = |text: &str, kind: Kind, d: i64| {
        Observation::new(text, day(d))
            .with_key(launch(), Some("dec 3"))
            .with_kind(kind)
    };
    let r = m
        .observe(plain("Launch: Dec 3.", Kind::Speculation, 1))
        .unwrap();
    assert_eq!(r.outcome.name(), "staged");
    assert_eq!(head(&m), None);
    let r = m
        .observe(plain("I might say Dec 3 but it is Dec 3.", Kind::Other, 2))
        .unwrap();
    assert_eq!(r.outcome.name(), "promoted", "{r:?}");
    assert_eq!(head(&m).as_deref(), Some("dec 3"));
}

#[test]
fn plans_are_bounded_survive_a_restore_and_roll_back_with_a_refused_batch() {
    let mut m = store();
    for i in 0..pfm::fact::MAX_ALTERNATIVES {
        let out = say(
            &mut m,
            &format!("The Halcyon launch might move to Dec {}.", i + 1),
            1,
        );
        assert_eq!(out.name(), "staged");
    }
    let out = say(&mut m, "The Halcyon launch might move to Jan 30.", 2);
    assert_eq!(
        (out.name(), m.fact(out.fact()).unwrap().body.key.is_none()),
        ("created", true)
    );
    let restored = restored(&m);
    assert_eq!(
        restored.ledger().pending_plans(&launch()).len(),
        pfm::fact::MAX_ALTERNATIVES
    );
    // A batch with a plan and an operation that cannot apply: nothing stays.
    let before = rows(&m);
    let e = m
        .observe_batch(vec![
            Observation::new("The Halcyon launch might move to Apr 1.", day(3)),
            Observation::new("scratch that", day(3))
                .with_key(launch(), None)
                .with_op(Op::Revoke, None),
        ])
        .unwrap_err();
    assert!(matches!(e, pfm::Error::OpNotApplicable { .. }), "{e}");
    assert_eq!(rows(&m), before);
    m.ledger().verify().unwrap();
    // Erasing the key takes its plans.
    m.forget(&Forget::Key(launch()), day(4)).unwrap();
    assert!(m.ledger().pending_plans(&launch()).is_empty());
    m.ledger().verify().unwrap();
}

#[test]
fn a_plan_shows_in_a_block_only_when_disclosed() {
    use pfm::disclose::Disclose;
    let mut m = store();
    say(&mut m, "The Halcyon launch date is Nov 10.", 1);
    say(&mut m, "I think the Halcyon launch might move to Dec 3.", 2);
    let ask = |d: Disclose| {
        m.retrieve(&Request::new("when is the Halcyon launch", day(30)).with_disclose(d))
            .unwrap()
            .text
    };
    let plain = ask(Disclose::NONE);
    assert!(
        !plain.contains("dec 3") && !plain.contains("Dec 3"),
        "{plain}"
    );
    let disclosed = ask(Disclose {
        pending: true,
        ..Disclose::NONE
    });
    assert!(
        disclosed.ends_with("Nov 10. (planned: dec 3, 2025-06-02)"),
        "{disclosed}"
    );
    // The version lists the plan for reads; confirmed, it is pending no
    // more, but still the key's plan.
    let pending = |m: &Memory| m.version().timeline.pending_plans(&launch(), None).count();
    assert_eq!(pending(&m), 1);
    say(&mut m, "The Halcyon launch finally moved to Dec 3.", 3);
    assert_eq!(pending(&m), 0);
    assert_eq!(m.version().timeline.plans(&launch()).len(), 1);
    // Read as of the commit that staged it (seq 2), the block still
    // discloses it; as of the commit before, not; now, not.
    let as_of = |seq: u64| {
        let request = Request::new("when is the Halcyon launch", day(30)).with_disclose(Disclose {
            pending: true,
            ..Disclose::NONE
        });
        pfm::retrieve::retrieve_as_of(&m.version(), &request, pfm::AsOf::Seq(seq))
            .unwrap()
            .text
    };
    assert!(
        as_of(2).ends_with("Nov 10. (planned: dec 3, 2025-06-02)"),
        "{}",
        as_of(2)
    );
    assert!(!as_of(1).contains("planned"), "{}", as_of(1));
    let now = m.retrieve(
        &Request::new("when is the Halcyon launch", day(30)).with_disclose(Disclose {
            pending: true,
            ..Disclose::NONE
        }),
    );
    assert!(!now.unwrap().text.contains("planned"));
}

/// A statement with no cue that would replace the current value without
/// asserting it is held as a plan; the same wording on an empty key, or
/// restating the current value, is not; an asserted revision commits.
#[test]
fn a_revision_without_an_assertion_is_staged() {
    let mut m = store();
    let keyed = |text: &str, v: &str, d: i64| {
        Observation::new(text, day(d))
            .with_participants(["Ann Lee"])
            .with_key(launch(), Some(v))
    };
    let r = m
        .observe(keyed("Halcyon launch, Nov 10 in my notes.", "Nov 10", 1))
        .unwrap();
    assert_eq!(r.outcome.name(), "created", "a first value: {r:?}");
    let r = m
        .observe(keyed(
            "Dec 3 keeps coming up for the Halcyon launch.",
            "Dec 3",
            2,
        ))
        .unwrap();
    assert_eq!(r.outcome.name(), "staged", "{r:?}");
    assert_eq!(head(&m).as_deref(), Some("nov 10"));
    let r = m
        .observe(keyed(
            "Nov 10 keeps coming up for the Halcyon launch.",
            "Nov 10",
            3,
        ))
        .unwrap();
    assert_ne!(r.outcome.name(), "staged", "a restatement: {r:?}");
    let r = m
        .observe(keyed("The Halcyon launch is Dec 3.", "Dec 3", 4))
        .unwrap();
    assert_eq!(r.outcome.name(), "promoted", "{r:?}");
    assert_eq!(head(&m).as_deref(), Some("dec 3"));
}
