//! P-Mem's typed operations through the public `Memory` API: each rule of
//! Table 2, rollback along the chain, refusals that change nothing, batch
//! atomicity, erasure inside a chain with alternatives and tombstones, and
//! as-of views of each status.

use pfm::config::{ChainOrder, Config, MergeMode};
use pfm::fact::{Op, Status};
use pfm::{AsOf, Error, FactId, Forget, Key, Memory, Observation, Outcome, Request};

mod common;

use common::{day, restored, rows};

/// The tests' configuration: the default, with merges inline.
fn config() -> Config {
    Config {
        merge: MergeMode::Inline,
        ..Config::default()
    }
}

fn store() -> Memory {
    Memory::new(config()).unwrap()
}

fn budget() -> Key {
    Key::new("Halcyon", "budget_cap").unwrap()
}

/// A structured statement of the budget cap (P-Mem's patch shape).
fn patch(op: Op, value: Option<&str>, d: i64) -> Observation {
    let text = match value {
        Some(v) => format!("The Halcyon budget cap is {v}."),
        None => "That last budget update was wrong.".to_owned(),
    };
    let mut o = Observation::new(text, day(d)).with_key(budget(), value);
    o.op = op;
    o
}

/// `by` states the budget cap `v` on day `d`.
fn cap_said(v: &str, by: &str, d: i64) -> Observation {
    Observation::new(format!("The Halcyon budget cap is {v}."), day(d))
        .with_participants([by])
        .with_key(budget(), Some(v))
}

fn head(m: &Memory) -> Option<String> {
    m.ledger()
        .active_for_key(&budget())
        .and_then(|f| f.body.value().map(str::to_owned))
}

fn status(m: &Memory, id: FactId) -> Status {
    m.fact(id).unwrap().state.status
}

#[test]
fn revoke_reinstates_the_displaced_value_behind_a_tombstone() {
    let mut m = store();
    let v1 = m.observe(patch(Op::Accept, Some("$30k"), 1)).unwrap();
    let v2 = m.observe(patch(Op::Accept, Some("$50k"), 2)).unwrap();
    assert_eq!(head(&m).as_deref(), Some("$50k"));
    let r = m.observe(patch(Op::Revoke, None, 3)).unwrap();
    let Outcome::Revoked {
        fact: tombstone,
        previous,
        reinstated,
    } = r.outcome
    else {
        panic!("{r:?}")
    };
    assert_eq!(previous, v2.outcome.fact());
    assert_eq!(reinstated, Some(v1.outcome.fact()));
    assert_eq!(head(&m).as_deref(), Some("$30k"));
    assert_eq!(status(&m, previous), Status::Revoked);
    assert_eq!(status(&m, tombstone), Status::Tombstone);
    let t = m.fact(tombstone).unwrap();
    assert_eq!(t.state.edges().revokes, Some(previous));
    assert_eq!(
        m.fact(previous).unwrap().state.edges().revoked_by,
        Some(tombstone)
    );
    // The reinstated value has a second, open activity interval.
    let old = m.fact(v1.outcome.fact()).unwrap();
    assert_eq!(old.state.intervals.len(), 2);
    assert!(old.state.intervals[1].to().is_none());
    // The block serves the reinstated value only.
    let block = m
        .retrieve(&Request::new("what is the Halcyon budget cap", day(4)))
        .unwrap()
        .text;
    assert!(block.contains("$30k") && !block.contains("$50k"), "{block}");
    m.ledger().verify().unwrap();
}

#[test]
fn k_retractions_reinstate_the_value_from_before_the_k_latest_commits() {
    let mut m = store();
    for (i, v) in ["$10k", "$20k", "$30k", "$40k"].iter().enumerate() {
        m.observe(patch(Op::Accept, Some(v), i as i64)).unwrap();
    }
    m.observe(patch(Op::Revoke, None, 10)).unwrap();
    assert_eq!(head(&m).as_deref(), Some("$30k"));
    m.observe(patch(Op::Reject, None, 11)).unwrap();
    assert_eq!(head(&m).as_deref(), Some("$20k"));
    // A new value, then its retraction: the walk skips both retracted
    // versions above $20k.
    m.observe(patch(Op::Accept, Some("$25k"), 12)).unwrap();
    m.observe(patch(Op::Revoke, None, 13)).unwrap();
    assert_eq!(head(&m).as_deref(), Some("$20k"));
    m.observe(patch(Op::Revoke, None, 14)).unwrap();
    m.observe(patch(Op::Revoke, None, 15)).unwrap();
    assert_eq!(head(&m), None, "every version retracted: the cell is empty");
    m.ledger().verify().unwrap();
}

#[test]
fn reject_with_a_value_contradicts_the_head() {
    let mut m = store();
    let v1 = m.observe(patch(Op::Accept, Some("$30k"), 1)).unwrap();
    let r = m.observe(patch(Op::Reject, Some("$35k"), 2)).unwrap();
    assert_eq!(r.outcome.name(), "rejected");
    assert_eq!(r.outcome.previous(), Some(v1.outcome.fact()));
    assert_eq!(r.outcome.reinstated(), None);
    assert_eq!(head(&m).as_deref(), Some("$35k"));
    assert_eq!(status(&m, v1.outcome.fact()), Status::Contradicted);
    // The contradicted value is never reinstated: retracting $35k empties
    // the cell.
    m.observe(patch(Op::Revoke, None, 3)).unwrap();
    assert_eq!(head(&m), None);
    m.ledger().verify().unwrap();
}

#[test]
fn contest_holds_the_conflict_and_resolve_settles_it_once() {
    let mut m = store();
    let room = Key::new("Alex Rivera", "room").unwrap();
    let say = |v: &str, op: Op, d: i64| {
        let mut o = Observation::new(format!("The sync with Alex Rivera is in {v}."), day(d))
            .with_key(room.clone(), Some(v));
        o.op = op;
        o
    };
    let inc = m
        .observe(say("Room 4B", Op::Accept, 1))
        .unwrap()
        .outcome
        .fact();
    let c = m.observe(say("Room 2A", Op::Contest, 2)).unwrap();
    let Outcome::Contested {
        fact: alt,
        incumbent,
    } = c.outcome
    else {
        panic!("{c:?}")
    };
    assert_eq!(incumbent, inc);
    assert_eq!(status(&m, inc), Status::Contested);
    assert_eq!(status(&m, alt), Status::Alternative);
    assert_eq!(m.fact(alt).unwrap().state.edges().alternative_of, Some(inc));
    // The incumbent stays the one current value; a second contest with the
    // alternative's value is support for it, not a third contender.
    assert_eq!(m.ledger().active_for_key(&room).unwrap().id(), inc);
    let again = m.observe(say("Room 2A", Op::Contest, 3)).unwrap();
    assert_eq!(again.outcome, Outcome::Reobserved { fact: alt });
    assert_eq!(m.fact(alt).unwrap().state.support, 2);
    m.ledger().verify().unwrap();

    let r = m.observe(say("Room 2A", Op::Resolve, 4)).unwrap();
    assert_eq!(
        r.outcome,
        Outcome::Resolved {
            fact: alt,
            contradicted: vec![inc]
        }
    );
    assert_eq!(m.ledger().active_for_key(&room).unwrap().id(), alt);
    assert_eq!(status(&m, inc), Status::Contradicted);
    assert_eq!(status(&m, alt), Status::Active);
    // Settled once: a second resolve does not apply.
    let before = rows(&m);
    let e = m.observe(say("Room 4B", Op::Resolve, 5)).unwrap_err();
    assert!(
        matches!(e, Error::OpNotApplicable { .. }) && e.to_string().contains("not contested"),
        "{e}"
    );
    assert_eq!(rows(&m), before);
    m.ledger().verify().unwrap();
}

#[test]
fn resolve_by_target_and_to_the_incumbent() {
    let mut m = store();
    let inc = m
        .observe(patch(Op::Accept, Some("$30k"), 1))
        .unwrap()
        .outcome
        .fact();
    let a = m
        .observe(patch(Op::Contest, Some("$40k"), 2))
        .unwrap()
        .outcome
        .fact();
    let b = m
        .observe(patch(Op::Contest, Some("$45k"), 3))
        .unwrap()
        .outcome
        .fact();
    let mut o = patch(Op::Resolve, None, 4);
    o.target = Some(inc);
    let r = m.observe(o).unwrap();
    assert_eq!(
        r.outcome,
        Outcome::Resolved {
            fact: inc,
            contradicted: vec![a, b]
        }
    );
    assert_eq!(status(&m, inc), Status::Active);
    assert_eq!(head(&m).as_deref(), Some("$30k"));
    m.ledger().verify().unwrap();
}

#[test]
fn an_accept_on_a_contested_cell_makes_its_alternatives_moot() {
    let mut m = store();
    m.observe(patch(Op::Accept, Some("$30k"), 1)).unwrap();
    let a = m
        .observe(patch(Op::Contest, Some("$40k"), 2))
        .unwrap()
        .outcome
        .fact();
    m.observe(patch(Op::Accept, Some("$60k"), 3)).unwrap();
    assert_eq!(status(&m, a), Status::Superseded);
    assert_eq!(head(&m).as_deref(), Some("$60k"));
    m.ledger().verify().unwrap();
}

#[test]
fn noop_adds_support_and_changes_nothing_else() {
    let mut m = store();
    let v = m
        .observe(patch(Op::Accept, Some("$30k"), 1))
        .unwrap()
        .outcome
        .fact();
    let mut o = patch(Op::Noop, None, 5);
    o.source = Some("msg-17".into());
    let r = m.observe(o).unwrap();
    assert_eq!(r.outcome, Outcome::Supported { fact: v });
    let f = m.fact(v).unwrap();
    assert_eq!(f.state.support, 2);
    assert_eq!(
        &*f.state.edges().supported_by,
        &[Box::<str>::from("msg-17")]
    );
    assert_eq!(f.state.last_observed, day(1), "a noop is not a restatement");
    assert_eq!(m.ledger().len(), 1);
}

#[test]
fn operations_that_cannot_apply_are_refused_and_change_nothing() {
    let mut m = store();
    let room = Key::new("Alex Rivera", "room").unwrap();
    let refused = |m: &mut Memory, o: Observation, says: &str| {
        let before = rows(m);
        let seq = m.ledger().seq();
        let e = m.observe(o).unwrap_err();
        assert!(e.to_string().contains(says), "{e}");
        assert_eq!(rows(m), before);
        assert_eq!(m.ledger().seq(), seq);
    };
    refused(
        &mut m,
        patch(Op::Contest, Some("$1"), 1),
        "the cell is empty",
    );
    refused(&mut m, patch(Op::Revoke, None, 1), "the cell is empty");
    let v = m
        .observe(patch(Op::Accept, Some("$30k"), 1))
        .unwrap()
        .outcome
        .fact();
    refused(&mut m, patch(Op::Resolve, Some("$30k"), 2), "not contested");
    refused(
        &mut m,
        patch(Op::Revoke, Some("$99k"), 2),
        "the value to revoke",
    );
    refused(&mut m, patch(Op::Reject, Some("$30k"), 2), "with itself");
    let other = m
        .observe(
            Observation::new("The sync with Alex Rivera is in room 4B.", day(2))
                .with_key(room.clone(), None),
        )
        .unwrap()
        .outcome
        .fact();
    let mut o = patch(Op::Revoke, None, 3);
    o.target = Some(other);
    refused(&mut m, o, "is a version of key alex rivera/room");
    // A typed operation without a key, or naming an unknown fact.
    let e = m
        .observe(Observation::new("scratch that", day(3)).with_op(Op::Revoke, None))
        .unwrap_err();
    assert!(matches!(e, Error::OpNeedsKey(Op::Revoke)), "{e}");
    let e = m
        .observe(Observation::new("scratch that", day(3)).with_op(Op::Revoke, Some(FactId(99))))
        .unwrap_err();
    assert!(matches!(e, Error::UnknownFact(FactId(99))), "{e}");
    // A target gives the key.
    let r = m
        .observe(Observation::new("scratch that", day(3)).with_op(Op::Revoke, Some(v)))
        .unwrap();
    assert_eq!(r.outcome.previous(), Some(v));
    assert_eq!(r.key, Some(budget()));
}

#[test]
fn a_batch_applies_every_operation_or_none() {
    let mut m = store();
    m.observe(patch(Op::Accept, Some("$30k"), 1)).unwrap();
    // Operations on one key build on each other within a batch.
    let r = m
        .observe_batch(vec![
            patch(Op::Accept, Some("$50k"), 2),
            patch(Op::Revoke, None, 2),
            patch(Op::Contest, Some("$35k"), 2),
        ])
        .unwrap();
    assert_eq!(r[1].outcome.reinstated(), Some(FactId(0)));
    assert_eq!(r[2].outcome.name(), "contested");
    assert!(r.iter().all(|x| x.seq == r[0].seq), "one commit");
    // One refusal refuses the batch: the accept before it is not applied.
    let before = rows(&m);
    let e = m
        .observe_batch(vec![
            patch(Op::Accept, Some("$70k"), 3),
            patch(Op::Noop, Some("$30k"), 3),
        ])
        .unwrap_err();
    assert!(matches!(e, Error::OpNotApplicable { .. }), "{e}");
    assert_eq!(rows(&m), before);
    m.ledger().verify().unwrap();
}

#[test]
fn erasure_inside_a_chain_never_reinstates_an_erased_or_displaced_value() {
    let mut m = store();
    m.observe(cap_said("$10k", "Ann Lee", 1)).unwrap();
    m.observe(cap_said("$20k", "Bo Chan", 2)).unwrap();
    m.observe(cap_said("$30k", "Ann Lee", 3)).unwrap();
    let mut contest = cap_said("$35k", "Bo Chan", 4);
    contest.op = Op::Contest;
    m.observe(contest).unwrap();
    // Bo's versions go: the $20k in the middle of the chain and the
    // alternative; the head is no longer contested.
    m.forget(&Forget::Entity("Bo Chan".into()), day(5)).unwrap();
    m.ledger().verify().unwrap();
    assert_eq!(head(&m).as_deref(), Some("$30k"));
    assert_eq!(
        m.ledger().active_for_key(&budget()).unwrap().state.status,
        Status::Active
    );
    // Retracting $30k would reinstate $20k, which is erased; the walk does
    // not cross the cut to $10k (which $20k had displaced) either.
    m.observe(patch(Op::Revoke, None, 6)).unwrap();
    assert_eq!(head(&m), None);
    m.ledger().verify().unwrap();

    // Erasing a retracted version's tombstone, or a retracted version with
    // its tombstone, keeps the chain whole.
    let mut m = store();
    m.observe(cap_said("$10k", "Ann Lee", 1)).unwrap();
    m.observe(cap_said("$20k", "Bo Chan", 2)).unwrap();
    let mut revoke = patch(Op::Revoke, None, 3);
    revoke.participants = vec!["Bo Chan".into()];
    m.observe(revoke).unwrap();
    assert_eq!(head(&m).as_deref(), Some("$10k"));
    m.forget(&Forget::Entity("Bo Chan".into()), day(4)).unwrap();
    assert_eq!(m.ledger().len(), 1);
    m.ledger().verify().unwrap();
    m.observe(cap_said("$40k", "Ann Lee", 5)).unwrap();
    m.observe(patch(Op::Revoke, None, 6)).unwrap();
    assert_eq!(
        head(&m).as_deref(),
        Some("$10k"),
        "no erased value in between"
    );
}

#[test]
fn erasure_under_event_time_keeps_the_value_stated_after_an_erased_reject() {
    let mut m = Memory::new(Config {
        ordering: ChainOrder::EventTime,
        ..config()
    })
    .unwrap();
    m.observe(cap_said("$10k", "Ann Lee", 69)).unwrap();
    m.observe(cap_said("$20k", "Bo Chan", 69)).unwrap();
    // Bo rejects his value, stating the replacement as of day 0; Ann then
    // states another value as of day 0, above the reject.
    let mut reject = cap_said("$25k", "Bo Chan", 0);
    reject.op = Op::Reject;
    m.observe(reject).unwrap();
    m.observe(cap_said("$30k", "Ann Lee", 0)).unwrap();
    assert_eq!(head(&m).as_deref(), Some("$30k"));
    // Bo's versions go. $10k was stated later than $30k, but Bo's $20k had
    // displaced it: an erasure reinstates nothing an erased version
    // displaced, so $30k stays the head (`tests/prop_ledger.rs` promises
    // event-time order above such a cut only).
    m.forget(&Forget::Entity("Bo Chan".into()), day(70))
        .unwrap();
    m.ledger().verify().unwrap();
    assert_eq!(head(&m).as_deref(), Some("$30k"));
    let head_fact = m.ledger().active_for_key(&budget()).unwrap();
    assert!(head_fact.state.rollback_stop);
    // Retracting it reinstates nothing across the cut.
    m.observe(patch(Op::Revoke, None, 71)).unwrap();
    assert_eq!(head(&m), None);
}

#[test]
fn as_of_views_show_each_status_as_it_was() {
    let mut m = store();
    let v1 = m.observe(patch(Op::Accept, Some("$30k"), 1)).unwrap();
    let v2 = m.observe(patch(Op::Accept, Some("$50k"), 2)).unwrap();
    let r = m.observe(patch(Op::Revoke, None, 3)).unwrap();
    let ids = |at: AsOf| -> Vec<FactId> { m.as_of(at).iter().map(|f| f.id()).collect() };
    assert_eq!(ids(AsOf::Seq(v1.seq)), [v1.outcome.fact()]);
    assert_eq!(ids(AsOf::Seq(v2.seq)), [v2.outcome.fact()]);
    assert_eq!(ids(AsOf::Seq(r.seq)), [v1.outcome.fact()]);
    let version = m.version();
    let as_of = |at: AsOf| -> Vec<FactId> {
        version
            .timeline
            .active_at(at, &version.graph)
            .iter()
            .map(|d| d.body.id)
            .collect()
    };
    assert_eq!(as_of(AsOf::Seq(v2.seq)), [v2.outcome.fact()]);
    assert_eq!(as_of(AsOf::Time(day(3))), [v1.outcome.fact()]);
    let block = m
        .retrieve_as_of(
            &Request::new("Halcyon budget cap", day(4)),
            AsOf::Seq(v2.seq),
        )
        .unwrap()
        .text;
    assert!(block.contains("$50k") && !block.contains("$30k"), "{block}");
}

#[test]
fn a_restored_store_holds_the_same_operations() {
    let mut m = store();
    m.observe(patch(Op::Accept, Some("$30k"), 1)).unwrap();
    m.observe(patch(Op::Accept, Some("$50k"), 2)).unwrap();
    m.observe(patch(Op::Revoke, None, 3)).unwrap();
    m.observe(patch(Op::Contest, Some("$35k"), 4)).unwrap();
    let restored = restored(&m);
    assert_eq!(head(&restored).as_deref(), Some("$30k"));
}

/// A store that knows Halcyon (a project) and Alex Rivera (a person), so
/// the rule extractor keys sentences about them.
fn text_store() -> Memory {
    let mut m = store();
    m.register_entity("Halcyon", pfm::EntityKind::Project)
        .unwrap();
    m.register_entity("Alex Rivera", pfm::EntityKind::Person)
        .unwrap();
    m
}

fn said(text: &str, by: &str, d: i64) -> Observation {
    Observation::new(text, day(d)).with_participants([by])
}

/// Plain sentences in order, each with who said it, the outcome the ledger
/// must report and the key's value after it.
fn conversation(m: &mut Memory, key: &Key, steps: &[(&str, &str, &str, Option<&str>)]) {
    for (d, (text, by, outcome, after)) in steps.iter().enumerate() {
        let r = m.observe(said(text, by, d as i64 + 1)).unwrap();
        assert_eq!(r.outcome.name(), *outcome, "{text}: {r:?}");
        let now = m.ledger().active_for_key(key).and_then(|f| f.body.value());
        assert_eq!(now, *after, "after {text:?}");
    }
    m.ledger().verify().unwrap();
}

#[test]
fn retraction_cues_in_plain_text_reinstate_the_value_before() {
    let (ann, k) = ("Ann Lee", budget());
    conversation(
        &mut text_store(),
        &k,
        &[
            (
                "The Halcyon budget cap is $30k.",
                ann,
                "created",
                Some("$30k"),
            ),
            (
                "Update: the Halcyon budget cap is now $50k.",
                ann,
                "superseded",
                Some("$50k"),
            ),
            (
                "The $50k Halcyon budget cap update was a mistake.",
                ann,
                "revoked",
                Some("$30k"),
            ),
            (
                "The Halcyon budget cap is $45k.",
                ann,
                "superseded",
                Some("$45k"),
            ),
            // Naming no value: the cell the sentence names.
            (
                "Ignore the last update about the Halcyon budget cap.",
                ann,
                "revoked",
                Some("$30k"),
            ),
            // A retraction of a value the cell does not hold is a keyless
            // fact, never the value it retracts.
            (
                "The $99k Halcyon budget cap figure was wrong.",
                ann,
                "created",
                Some("$30k"),
            ),
        ],
    );
}

#[test]
fn hearsay_contests_and_a_settling_report_resolves() {
    let (ann, bo) = ("Ann Lee", "Bo Chan");
    let mut m = text_store();
    conversation(
        &mut m,
        &Key::new("Alex Rivera", "room").unwrap(),
        &[
            (
                "The sync with Alex Rivera is in room 4B.",
                ann,
                "created",
                Some("room 4b"),
            ),
            (
                "I heard the sync with Alex Rivera is in room 2A.",
                bo,
                "contested",
                Some("room 4b"),
            ),
            (
                "Confirmed: the sync with Alex Rivera is in room 2A.",
                ann,
                "resolved",
                Some("room 2a"),
            ),
            // On a cell that is not contested, the same report is a plain
            // update; hearsay from the head's own source is one too.
            (
                "Confirmed: the sync with Alex Rivera is in room 7C.",
                ann,
                "superseded",
                Some("room 7c"),
            ),
            (
                "Apparently the sync with Alex Rivera is in room 9D.",
                ann,
                "superseded",
                Some("room 9d"),
            ),
        ],
    );
    // Hearsay about an empty cell states it.
    let r = m
        .observe(said("I heard the Halcyon budget cap is $40k.", bo, 9))
        .unwrap();
    assert_eq!(r.outcome.name(), "created", "{r:?}");
    assert_eq!(head(&m).as_deref(), Some("$40k"));
}

#[test]
fn a_head_collects_a_bounded_number_of_alternatives() {
    let mut m = store();
    m.observe(patch(Op::Accept, Some("$1"), 1)).unwrap();
    for i in 0..pfm::fact::MAX_ALTERNATIVES {
        let r = m
            .observe(patch(Op::Contest, Some(&format!("${}", 100 + i)), 2))
            .unwrap();
        assert_eq!(r.outcome.name(), "contested");
    }
    let e = m.observe(patch(Op::Contest, Some("$999"), 3)).unwrap_err();
    assert!(e.to_string().contains("alternatives, the most"), "{e}");
    // Restating one is still support, and a new value still settles it.
    let r = m.observe(patch(Op::Contest, Some("$100"), 3)).unwrap();
    assert_eq!(r.outcome.name(), "reobserved");
    m.observe(patch(Op::Accept, Some("$2"), 4)).unwrap();
    m.ledger().verify().unwrap();
}

#[test]
fn disclosure_appends_alternatives_history_and_support_when_they_fit() {
    use pfm::disclose::Disclose;
    let mut m = store();
    m.observe(patch(Op::Accept, Some("$30k"), 1)).unwrap();
    m.observe(patch(Op::Accept, Some("$50k"), 9)).unwrap();
    m.observe(Observation::new("Yes, still $50k.", day(10)).with_key(budget(), Some("$50k")))
        .unwrap();
    for v in ["$40k", "$41k", "$42k", "$43k"] {
        m.observe(patch(Op::Contest, Some(v), 11)).unwrap();
    }
    let ask = |d: Disclose, budget: usize| {
        m.retrieve(
            &Request::new("the Halcyon budget cap", day(12))
                .with_disclose(d)
                .with_budget(budget),
        )
        .unwrap()
        .text
    };
    let all = Disclose {
        support: true,
        alternatives: true,
        history: true,
        pending: true,
    };
    let block = ask(all, 800);
    assert!(
        block.ends_with(
            "(contested: $50k vs $40k vs $41k vs $42k (+1 more); was $30k until 2025-06-09; 2 observations)"
        ),
        "{block}"
    );
    assert!(!ask(Disclose::NONE, 800).contains("(contested"));
    // A note that does not fit is left off; the value is still served.
    let plain = ask(Disclose::NONE, 800);
    assert_eq!(ask(all, plain.chars().count() + 5), plain);
    // JSON: a list of mode names; an unknown one is an error that lists them.
    let d: Disclose = serde_json::from_str(r#"["history", "support"]"#).unwrap();
    assert!(d.history && d.support && !d.alternatives);
    let e = serde_json::from_str::<Disclose>(r#"["everything"]"#).unwrap_err();
    assert!(e.to_string().contains("alternatives"), "{e}");
    let e =
        serde_json::from_str::<Disclose>(r#"["history","history","history","history","history"]"#)
            .unwrap_err();
    assert!(e.to_string().contains("at most once"), "{e}");
}

#[test]
fn an_as_of_read_discloses_the_conflict_as_it_was() {
    use pfm::disclose::Disclose;
    let mut m = store();
    m.observe(patch(Op::Accept, Some("$30k"), 1)).unwrap();
    let contest = m.observe(patch(Op::Contest, Some("$40k"), 2)).unwrap();
    m.observe(patch(Op::Resolve, Some("$30k"), 3)).unwrap();
    let alternatives = Disclose {
        alternatives: true,
        ..Disclose::NONE
    };
    let request = Request::new("the Halcyon budget cap", day(4)).with_disclose(alternatives);
    let now = m.retrieve(&request).unwrap().text;
    assert!(now.contains("$30k") && !now.contains("contested"), "{now}");
    for at in [AsOf::Seq(contest.seq), AsOf::Time(day(2))] {
        let then = m.retrieve_as_of(&request, at).unwrap().text;
        assert!(
            then.ends_with("(contested: $30k vs $40k)"),
            "{at:?}: {then}"
        );
    }
}
