//! The commit rules, pruning, erasure, as-of views and bad input, through the
//! public `Memory` API.

use pfm::config::{ChainOrder, Config, MergeMode};
use pfm::fact::Status;
use pfm::{AsOf, Error, FactId, Forget, Key, Memory, Observation, Outcome, Request, WallTime};

mod common;

use common::{alex, day};

fn ask(memory: &Memory, context: &str, d: i64) -> String {
    memory
        .retrieve(&Request::new(context, day(d)).with_participants(["Alex Rivera"]))
        .unwrap()
        .text
}

fn store(config: Config) -> Memory {
    Memory::new(Config {
        merge: MergeMode::Inline,
        ..config
    })
    .unwrap()
}

#[test]
fn keyed_revision_supersedes_and_keeps_history() {
    let mut m = store(Config::default());
    let r1 = m
        .observe(alex("The standup with Alex Rivera is moved to 9:30am.", 1))
        .unwrap();
    let Outcome::Created { fact: first } = r1.outcome else {
        panic!("{r1:?}")
    };
    assert_eq!(
        r1.key.as_ref().map(ToString::to_string).as_deref(),
        Some("alex rivera/meeting_time")
    );
    let before = ask(&m, "the standup with Alex is at", 2);
    assert!(before.contains("9:30am"), "{before}");

    let r2 = m
        .observe(alex("Alex Rivera standup is rescheduled to 10:45am.", 5))
        .unwrap();
    assert_eq!(
        r2.outcome,
        Outcome::Superseded {
            fact: FactId(1),
            previous: first
        }
    );
    assert_eq!(r2.seq, r1.seq + 1);
    let after = ask(&m, "the standup with Alex is at", 6);
    assert!(
        after.contains("10:45am") && !after.contains("9:30am"),
        "{after}"
    );

    let old = m.fact(first).unwrap();
    assert_eq!(old.state.status, Status::Superseded);
    assert_eq!(old.state.superseded_by, Some(FactId(1)));
    assert_eq!(
        old.state.intervals[0].to().map(|(seq, _)| seq),
        Some(r2.seq)
    );
    let history: Vec<FactId> = m
        .history(FactId(1))
        .unwrap()
        .iter()
        .map(|f| f.id())
        .collect();
    assert_eq!(history, [FactId(1), first]);
    m.ledger().verify().unwrap();
}

#[test]
fn same_value_is_a_reobservation_and_exact_text_a_duplicate() {
    let mut m = store(Config::default());
    m.observe(alex("The standup with Alex Rivera is moved to 9:30am.", 1))
        .unwrap();
    let r = m
        .observe(alex(
            "New time for the standup with Alex Rivera: moved to 9:30 AM.",
            3,
        ))
        .unwrap();
    assert_eq!(r.outcome, Outcome::Reobserved { fact: FactId(0) });
    let f = m.fact(FactId(0)).unwrap();
    assert_eq!((f.state.support, f.state.last_observed), (2, day(3)));
    assert_eq!(m.ledger().len(), 1, "no new version");

    let seq = m.ledger().seq();
    let r = m
        .observe(alex("The standup with Alex Rivera is moved to 9:30am.", 4))
        .unwrap();
    assert_eq!(r.outcome, Outcome::Duplicate { of: FactId(0) });
    assert_eq!(
        (r.seq, m.ledger().seq(), m.version().seq),
        (seq, seq, seq),
        "nothing committed"
    );
}

#[test]
fn restating_an_old_value_after_a_revision_supersedes_again() {
    let mut m = store(Config::default());
    m.observe(alex("The standup with Alex Rivera is moved to 9:30am.", 1))
        .unwrap();
    m.observe(alex("The standup with Alex Rivera is moved to 10:45am.", 2))
        .unwrap();
    let r = m
        .observe(alex("The standup with Alex Rivera is moved to 9:30am.", 3))
        .unwrap();
    assert_eq!(
        r.outcome,
        Outcome::Superseded {
            fact: FactId(2),
            previous: FactId(1)
        }
    );
}

#[test]
fn keyless_near_duplicates_are_absorbed_value_changes_are_not() {
    let mut m = store(Config::default());
    m.register_entity("Alex Rivera", pfm::EntityKind::Person)
        .unwrap();
    m.observe(alex(
        "Alex Rivera prefers oat milk in coffee at the office",
        1,
    ))
    .unwrap();
    let r = m
        .observe(alex(
            "Alex Rivera prefers oat milk in coffee at the office!!",
            2,
        ))
        .unwrap();
    assert_eq!(r.outcome, Outcome::Absorbed { into: FactId(0) });
    assert_eq!(m.fact(FactId(0)).unwrap().state.support, 2);
    // Same words, different value-bearing token: a new fact.
    m.observe(alex(
        "Alex Rivera prefers oat milk in coffee at the office on floor 3",
        2,
    ))
    .unwrap();
    let r = m
        .observe(alex(
            "Alex Rivera prefers oat milk in coffee at the office on floor 4",
            3,
        ))
        .unwrap();
    assert!(matches!(r.outcome, Outcome::Created { .. }), "{r:?}");
    // Low overlap: a new fact.
    let r = m.observe(alex("Alex Rivera dislikes tea", 3)).unwrap();
    assert!(matches!(r.outcome, Outcome::Created { .. }), "{r:?}");
}

#[test]
fn arrival_order_lets_a_late_old_message_win_event_time_does_not() {
    for (ordering, expect) in [
        (ChainOrder::Arrival, "9:30am"),
        (ChainOrder::EventTime, "10:45am"),
    ] {
        let mut m = store(Config {
            ordering,
            ..Config::default()
        });
        m.observe(alex("The standup with Alex Rivera is moved to 10:45am.", 5))
            .unwrap();
        // Written on day 2, delivered late.
        let r = m
            .observe(alex("The standup with Alex Rivera is moved to 9:30am.", 2))
            .unwrap();
        let block = ask(&m, "the standup with Alex is at", 6);
        assert!(block.contains(expect), "{ordering:?}: {block}");
        let active = m
            .ledger()
            .active_for_key(&Key::new("alex rivera", "meeting_time").unwrap())
            .unwrap();
        assert!(pfm::text::contains(active.body.text(), expect));
        if ordering == ChainOrder::EventTime {
            assert_eq!(
                r.outcome,
                Outcome::History {
                    fact: FactId(1),
                    newer: FactId(0)
                }
            );
            let late = m.fact(FactId(1)).unwrap();
            assert_eq!(late.state.status, Status::Superseded);
            assert!(late.state.intervals.is_empty(), "never active");
            assert_eq!(late.state.superseded_by, Some(FactId(0)));
            // A third, newest value supersedes the active one; the chain stays in stated order.
            m.observe(alex("The standup with Alex Rivera is moved to 11am.", 7))
                .unwrap();
            let chain: Vec<u64> = m
                .history(FactId(2))
                .unwrap()
                .iter()
                .map(|f| f.id().0)
                .collect();
            assert_eq!(chain, [2, 0, 1]);
        }
        m.ledger().verify().unwrap();
    }
}

#[test]
fn pruning_retires_stale_keyless_facts_but_never_the_active_fact_of_a_key() {
    let mut m = store(Config::default());
    m.observe(alex("The standup with Alex Rivera is moved to 9:30am.", 1))
        .unwrap();
    m.observe(alex("Alex Rivera mentioned the quarterly offsite", 1))
        .unwrap();
    m.observe(alex("Alex Rivera mentioned the new espresso machine", 399))
        .unwrap();
    // Day 400: the day-1 facts are 13 half-lives old (retention ~1e-4 < 0.02).
    let pruned = m.prune(day(400));
    assert_eq!(pruned, [FactId(1)]);
    let keyed = m.fact(FactId(0)).unwrap();
    assert_eq!(keyed.state.status, Status::Active);
    let gone = m.fact(FactId(1)).unwrap();
    assert_eq!(
        gone.state.status,
        Status::Pruned,
        "retired, kept as history"
    );
    let block = ask(&m, "Alex offsite standup", 400);
    assert!(
        block.contains("9:30am") && !block.contains("offsite"),
        "{block}"
    );
    m.ledger().verify().unwrap();
}

#[test]
fn usage_keeps_a_used_fact_from_being_pruned() {
    let mut m = store(Config::default());
    m.observe(alex("Alex Rivera mentioned the quarterly offsite", 1))
        .unwrap();
    m.record_usage(&[FactId(0)], day(395));
    assert!(m.prune(day(400)).is_empty());
}

#[test]
fn as_of_views_by_sequence_and_time() {
    let mut m = store(Config::default());
    let r1 = m
        .observe(alex("The standup with Alex Rivera is moved to 9:30am.", 1))
        .unwrap();
    let r2 = m
        .observe(alex("The standup with Alex Rivera is moved to 10:45am.", 5))
        .unwrap();
    let ids = |facts: Vec<&pfm::Fact>| facts.iter().map(|f| f.id().0).collect::<Vec<_>>();
    assert_eq!(ids(m.as_of(AsOf::Seq(0))), Vec::<u64>::new());
    assert_eq!(ids(m.as_of(AsOf::Seq(r1.seq))), [0]);
    assert_eq!(ids(m.as_of(AsOf::Seq(r2.seq))), [1]);
    assert_eq!(ids(m.as_of(AsOf::Time(day(3)))), [0]);
    assert_eq!(ids(m.as_of(AsOf::Time(day(5)))), [1]);
    let req =
        Request::new("the standup with Alex is at", day(6)).with_participants(["Alex Rivera"]);
    let then = m.retrieve_as_of(&req, AsOf::Seq(r1.seq)).unwrap();
    assert!(
        then.text.contains("9:30am") && !then.text.contains("10:45am"),
        "{}",
        then.text
    );
}

#[test]
fn forgetting_a_fact_erases_its_whole_history() {
    let mut m = store(Config {
        history_index: true,
        ..Config::default()
    });
    m.observe(alex("The standup with Alex Rivera is moved to 9:30am.", 1))
        .unwrap();
    m.observe(alex("The standup with Alex Rivera is moved to 10:45am.", 2))
        .unwrap();
    m.observe(alex("Alex Rivera likes the window seat", 2))
        .unwrap();
    let erased = m.forget(&Forget::Fact(FactId(1)), day(3)).unwrap();
    assert_eq!(erased, [FactId(0), FactId(1)]);
    assert!(m.fact(FactId(0)).is_err() && m.fact(FactId(1)).is_err());
    assert!(matches!(m.history(FactId(0)), Err(Error::UnknownFact(_))));
    let v = m.version();
    assert_eq!(v.active.live_docs(), 1);
    assert_eq!(v.history.as_ref().unwrap().live_docs(), 1);
    assert_eq!(v.active.df("standup", 0b111), 0);
    let block = ask(&m, "the standup with Alex is at", 3);
    assert!(
        !block.contains("9:30") && !block.contains("10:45"),
        "{block}"
    );
    // Nothing left to forget under that key; an unknown id is an error.
    assert_eq!(
        m.forget(
            &Forget::Key(Key::new("Alex Rivera", "meeting_time").unwrap()),
            day(3)
        )
        .unwrap(),
        []
    );
    assert!(matches!(
        m.forget(&Forget::Fact(FactId(0)), day(3)),
        Err(Error::UnknownFact(_))
    ));
    m.ledger().verify().unwrap();
}

/// Erasing an entity leaves the store indistinguishable, to retrieval and to
/// its statistics, from one that never saw the facts about it.
#[test]
fn erasure_leaves_no_trace() {
    let sam = |text: &str, d| Observation::new(text, day(d)).with_participants(["Sam Okafor"]);
    let common = vec![
        alex("The standup with Alex Rivera is moved to 9:30am.", 1),
        sam("The sync with Sam Okafor is moved to 2pm.", 2),
        alex("Alex Rivera and Sam Okafor reviewed the budget", 3),
        sam("Sam Okafor prefers the window seat", 4),
    ];
    let about_pat = vec![
        Observation::new("Pat Lee met Sam Okafor about the budget", day(5))
            .with_participants(["Pat Lee"]),
        Observation::new("The review with Pat Lee is moved to room 4B.", day(6))
            .with_participants(["Pat Lee"]),
    ];
    let config = Config {
        history_index: true,
        ..Config::default()
    };
    let mut erased = store(config.clone());
    for o in common.iter().cloned().chain(about_pat) {
        erased.observe(o).unwrap();
    }
    let gone = erased
        .forget(&Forget::Entity("Pat Lee".into()), day(7))
        .unwrap();
    assert_eq!(gone.len(), 2);
    let mut clean = store(config);
    for o in common {
        clean.observe(o).unwrap();
    }
    let (a, b) = (erased.version(), clean.version());
    for (x, y) in [
        (&a.active, &b.active),
        (a.history.as_ref().unwrap(), b.history.as_ref().unwrap()),
    ] {
        assert_eq!(x.live_docs(), y.live_docs());
        assert_eq!(x.field_len_sums(), y.field_len_sums());
        for term in ["pat", "lee", "budget", "review", "sam", "4b", "room"] {
            for mask in 1..8 {
                assert_eq!(x.df(term, mask), y.df(term, mask), "df({term}, {mask:03b})");
            }
        }
    }
    assert_eq!(a.gazetteer.kind("pat lee"), None);
    assert!(a.gazetteer.with_token("pat").next().is_none());
    assert_eq!(a.graph.node("pat lee"), None);
    for name in ["sam okafor", "alex rivera"] {
        let (na, nb) = (a.graph.node(name).unwrap(), b.graph.node(name).unwrap());
        let la: Vec<f64> = a.graph.neighbours(na).iter().map(|e| e.1).collect();
        let lb: Vec<f64> = b.graph.neighbours(nb).iter().map(|e| e.1).collect();
        assert_eq!(la.len(), lb.len(), "{name}");
        for (x, y) in la.iter().zip(&lb) {
            assert!((x - y).abs() <= 1e-9 * y.abs(), "{name}: {x} vs {y}");
        }
    }
    for context in [
        "Pat budget review",
        "the sync with Sam is at",
        "Alex budget",
    ] {
        let req = Request::new(context, day(8)).with_participants(["Sam Okafor"]);
        assert_eq!(
            erased.retrieve(&req).unwrap().text,
            clean.retrieve(&req).unwrap().text,
            "{context}"
        );
    }
    assert!(
        erased
            .ledger()
            .facts()
            .all(|f| !f.body.text().contains("Pat"))
    );
    erased.ledger().verify().unwrap();
}

#[test]
fn bad_input_is_a_typed_error_and_changes_nothing() {
    let mut m = store(Config::default());
    m.observe(alex("The standup with Alex Rivera is moved to 9:30am.", 1))
        .unwrap();
    let (seq, len, version) = (m.ledger().seq(), m.ledger().len(), m.version().seq);
    let cases: Vec<(Observation, &str)> = vec![
        (alex("   ", 2), "empty"),
        (alex(&"x".repeat(64 * 1024 + 1), 2), "limit"),
        (alex("bell \u{7} here", 2), "U+0007"),
        (
            Observation::new("fine", day(2)).with_participants([""]),
            "participant is empty",
        ),
        (
            Observation::new("fine", day(2)).with_entities(["  "]),
            "entity is empty",
        ),
        (
            Observation::new("fine", day(2)).with_key(
                Key {
                    entity: "".into(),
                    slot: "room".into(),
                    qualifier: None,
                },
                None,
            ),
            "key entity is empty",
        ),
        (
            Observation::new("fine", day(2)).with_key(
                Key::new("alex rivera", "room").unwrap(),
                Some(&"v".repeat(64 * 1024 + 1)),
            ),
            "observation value is 65537 bytes",
        ),
        (
            Observation {
                source: Some("m".repeat(64 * 1024 + 1)),
                ..Observation::new("fine", day(2))
            },
            "observation source is 65537 bytes",
        ),
    ];
    for (obs, needle) in cases {
        let err = m.observe(obs).unwrap_err().to_string();
        assert!(err.contains(needle), "{err:?} should mention {needle:?}");
    }
    // A batch with one bad observation applies none of it.
    let batch = vec![alex("Alex Rivera likes tea", 2), alex("", 2)];
    assert!(matches!(m.observe_batch(batch), Err(Error::EmptyText)));
    assert_eq!(
        (m.ledger().seq(), m.ledger().len(), m.version().seq),
        (seq, len, version)
    );

    let req = Request::new("standup", day(2));
    assert!(matches!(
        m.retrieve(&req.clone().with_k(0)),
        Err(Error::ZeroK)
    ));
    assert!(matches!(
        m.retrieve(&req.clone().with_budget(10)),
        Err(Error::BudgetTooSmall { budget: 10, .. })
    ));
    assert!(matches!(Key::new("", "room"), Err(Error::EmptyName { .. })));
    assert!(matches!(
        WallTime::parse("yesterday-ish"),
        Err(Error::InvalidTime { .. })
    ));
    let err = m
        .retrieve(&req.clone().with_ranker(pfm::Ranker::named("bm25").unwrap()))
        .unwrap_err();
    assert!(matches!(err, Error::NoHistoryIndex), "{err}");
}

#[test]
fn structured_keys_skip_extraction() {
    let mut m = store(Config::default());
    let key = Key::new("Alex Rivera", "favourite_colour").unwrap();
    m.observe(
        alex("Alex Rivera's favourite colour is teal", 1).with_key(key.clone(), Some("teal")),
    )
    .unwrap();
    let r = m
        .observe(alex("Alex Rivera now likes orange best", 2).with_key(key.clone(), Some("orange")))
        .unwrap();
    assert_eq!(
        r.outcome,
        Outcome::Superseded {
            fact: FactId(1),
            previous: FactId(0)
        }
    );
    assert_eq!(
        m.ledger().active_for_key(&key).unwrap().body.value(),
        Some("orange")
    );
}

#[test]
fn keyless_store_keeps_every_revision_active() {
    let mut m = store(Config {
        use_keys: false,
        ..Config::default()
    });
    m.observe(alex("The standup with Alex Rivera is moved to 9:30am.", 1))
        .unwrap();
    m.observe(alex("The standup with Alex Rivera is moved to 10:45am.", 2))
        .unwrap();
    let block = ask(&m, "the standup with Alex is at", 3);
    assert!(
        block.contains("9:30am") && block.contains("10:45am"),
        "{block}"
    );
}
