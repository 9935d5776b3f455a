//! The benchmark slices of Appendix N are built as specified, and the
//! identity and abstention rules behave on them as Section 7.3 requires.

use std::collections::HashSet;

use indicatif::ProgressBar;
use pfm_harness::eval::generator::{Instance, Subject};
use pfm_harness::eval::slices::{self, Case};
use pfm_harness::eval::studies::{self, tables};

#[test]
fn out_of_order_permutes_a_third_of_revised_chains_and_keeps_stated_times() {
    for seed in pfm_harness::eval::SEEDS {
        let main = Instance::generate(seed);
        let (late, permuted) = slices::out_of_order(&main);
        let revised = main.chains.iter().filter(|c| c.messages.len() > 1).count();
        let expected = (revised as f64 * slices::OUT_OF_ORDER_SHARE).round() as usize;
        assert_eq!(permuted.len(), expected);
        assert!((30..=50).contains(&permuted.len()), "{}", permuted.len());
        // Same messages, same stated times; only arrival positions move.
        let texts = |i: &Instance| {
            let mut v: Vec<(String, i64)> = i
                .messages
                .iter()
                .map(|m| (m.text.clone(), m.at.millis()))
                .collect();
            v.sort();
            v
        };
        assert_eq!(texts(&main), texts(&late));
        let mut moved = 0;
        for chain in &late.chains {
            // `messages` lists the chain's arrivals in stated order.
            let stated: Vec<i64> = chain
                .messages
                .iter()
                .map(|&m| late.messages[m].at.millis())
                .collect();
            assert!(
                stated.windows(2).all(|w| w[0] <= w[1]),
                "chain {}",
                chain.id
            );
            let in_order = chain.messages.windows(2).all(|w| w[0] < w[1]);
            assert!(
                in_order || permuted.contains(&chain.id),
                "chain {}",
                chain.id
            );
            moved += usize::from(!in_order);
            assert!(
                chain
                    .messages
                    .iter()
                    .all(|&m| late.messages[m].chain == Some(chain.id))
            );
        }
        // Random permutations keep some chains in order, most not.
        assert!(
            moved * 2 > permuted.len() && moved < permuted.len(),
            "{moved} of {}",
            permuted.len()
        );
    }
}

#[test]
fn participant_cases_change_who_tells_not_who_asks() {
    let main = Instance::generate(7);
    let (told, cases) = slices::participant_cases(&main);
    let mut seen = HashSet::new();
    for chain in &told.chains {
        let case = cases[chain.id];
        seen.insert(case);
        for &m in &chain.messages {
            let p = &told.messages[m].participants;
            match case {
                Case::Subject => assert_eq!(p, std::slice::from_ref(&chain.participant)),
                Case::ThirdParty => assert!(p.len() == 1 && p[0] != chain.participant),
                Case::Group => assert!(p.len() == 2 && p[0] == chain.participant && p[1] != p[0]),
                Case::Missing => assert!(p.is_empty()),
            }
        }
    }
    assert_eq!(seen.len(), 4);
    assert_eq!(main.queries.len(), told.queries.len());
    for (a, b) in main.queries.iter().zip(&told.queries) {
        assert_eq!((&a.context, &a.participant), (&b.context, &b.participant));
    }
}

#[test]
fn hard_slice_pairs_share_name_noun_template_and_day() {
    for seed in pfm_harness::eval::SEEDS {
        let hard = slices::hard_identity(seed);
        assert_eq!(hard.chains.len(), 2 * slices::HARD_PAIRS);
        let answerable: Vec<_> = hard
            .queries
            .iter()
            .filter(|q| q.labels.current.is_some())
            .collect();
        let unanswerable: Vec<_> = hard
            .queries
            .iter()
            .filter(|q| q.labels.current.is_none())
            .collect();
        assert_eq!((answerable.len(), unanswerable.len()), (24, 12));
        for pair in hard.chains.chunks(2) {
            let (a, b) = (&pair[0], &pair[1]);
            let (Subject::Person(pa), Subject::Person(pb)) = (a.subject, b.subject) else {
                panic!("person chains");
            };
            assert_eq!(hard.people[pa].first, hard.people[pb].first);
            assert_ne!(hard.people[pa].full, hard.people[pb].full);
            assert_eq!(
                (a.noun, a.slot, a.messages.len()),
                (b.noun, b.slot, b.messages.len())
            );
            for (&ma, &mb) in a.messages.iter().zip(&b.messages) {
                let (ta, tb) = (&hard.messages[ma], &hard.messages[mb]);
                assert!((ta.at.millis() - tb.at.millis()).abs() <= 86_400_000);
                // Same template: the texts differ only in the name and value.
                let shape =
                    |t: &str, name: &str, value: &str| t.replace(name, "E").replace(value, "V");
                let ia = a.messages.iter().position(|m| *m == ma).unwrap();
                assert_eq!(
                    shape(&ta.text, &hard.people[pa].full, &a.values[ia]),
                    shape(&tb.text, &hard.people[pb].full, &b.values[ia])
                );
            }
        }
        // Each answerable request has its partner's value as a competitor;
        // an unanswerable one lists every value of the corpus.
        let values: usize = hard.chains.iter().map(|c| c.values.len()).sum();
        assert!(answerable.iter().all(|q| q.labels.other.len() == 1));
        assert!(unanswerable.iter().all(|q| q.labels.other.len() == values));
        assert!(unanswerable.iter().all(|q| q.context.ends_with(" is in")));
    }
}

#[test]
fn multi_valued_slice_gives_each_person_a_standup_and_a_sync() {
    let multi = slices::multi_valued(7);
    assert_eq!(multi.queries.len(), 2 * slices::MULTI_PEOPLE);
    assert_eq!(
        multi.messages.len(),
        2 * slices::MULTI_PEOPLE * 3 + slices::MULTI_FILLERS
    );
    for pair in multi.chains.chunks(2) {
        assert_eq!(pair[0].subject, pair[1].subject);
        assert_eq!((pair[0].noun, pair[1].noun), ("standup", "sync"));
        assert!(
            pair.iter()
                .all(|c| c.values.len() == 3 && c.slot == "meeting_time")
        );
    }
    assert!(multi.queries.iter().all(|q| q.labels.other.is_empty()));
}

/// The claims of Section 7.3 and Appendix N that hold by construction of the
/// rules, checked on one seed.
#[test]
fn identity_and_abstention_rules_on_the_slices() {
    let judgements = studies::run(
        &[7],
        pfm_harness::eval::generator::DEFAULT_PEOPLE,
        &ProgressBar::hidden(),
    )
    .unwrap();
    let s = tables::summarize(&judgements, 200);
    let rule = |name: &str| s.table3.iter().find(|r| r.rules == name).unwrap();
    // Same-name pairs with identical facts: ungated PFM exposes the partner's
    // value on every request; the posterior and the filter never do.
    assert_eq!(rule("none").hard_clean.value, 0.0);
    for name in ["posterior", "participant filter", "posterior + slot gate"] {
        assert_eq!(rule(name).hard_clean.value, 1.0, "{name}");
        assert_eq!(rule(name).main_wrong.value, 0.0, "{name}");
    }
    // Only the slot gate abstains on the unanswerable room requests, and it
    // does so on all of them without abstaining on answerable ones.
    for r in &s.table3 {
        let expected = if r.rules == "posterior + slot gate" {
            1.0
        } else {
            0.0
        };
        assert_eq!(r.hard_abstained.value, expected, "{}", r.rules);
    }
    assert!(rule("posterior + slot gate").main_abstained.value < 0.01);
    // The filter discards what third parties told; the posterior keeps it.
    assert!(rule("participant filter").third_party_recall.value < 0.1);
    assert!(rule("posterior").third_party_recall.value > 0.9);
    // Keys: every keyed variant has zero stale exposure; the keyless store
    // does not.
    for r in &s.table13 {
        if r.variant == "no keys" {
            assert!(r.stale.value > 0.5, "{r:?}");
        } else {
            assert_eq!(r.stale.value, 0.0, "{}", r.variant);
        }
    }
    let row = |slice: &str, condition: &str| {
        s.table22
            .iter()
            .find(|r| r.slice == slice && r.condition == condition)
            .unwrap()
    };
    // A coarse key merges the standup and the sync: exactly one of the two
    // current values survives per person; a fine key keeps both.
    assert_eq!(
        row("two instances", "key (entity, slot)").current.value,
        0.5
    );
    assert_eq!(
        row("two instances", "key (entity, slot, noun)").clean.value,
        1.0
    );
    assert_eq!(row("two instances", "keyless").stale.value, 1.0);
    // Arrival order breaks supersession; event time repairs it.
    let late = row("out of order", "out of order");
    let fixed = row("out of order", "out of order, event time");
    assert!(late.stale.value > 0.1, "{late:?}");
    assert!(fixed.stale.value < late.stale.value / 5.0, "{fixed:?}");
}
