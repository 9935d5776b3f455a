//! Conversation context (`pfm::rank::context`): a turn borrows from the
//! turns said just before and after it among the same people, within the
//! gap, and from no other.

use std::collections::HashMap;

use pfm::config::Config;
use pfm::rank::context::{lenders, moves, neighbours};
use pfm::rank::scorer::{DfMemo, score_bound};
use pfm::rank::{ParticipantTerms, Ranker, query_terms};
use pfm::retrieve::{Request, retrieve};
use pfm::{FactId, Forget, Memory, Observation, WallTime};
use proptest::prelude::*;

const START: i64 = 1_735_689_600; // 2025-01-01
const ANA_BEN: [&str; 2] = ["Ana", "Ben"];

/// Two exchanges; each answer mentions the lake once and neither says
/// what was painted. The exchange about painting comes first, two hours
/// before the other, so without context the newer answer wins the tie on
/// "lake". `pause` seconds pass between each question and its answer; the
/// painting question is said among `asked_among`.
fn store(config: Config, pause: i64, asked_among: &[&str]) -> Memory {
    let mut m = Memory::new(config).unwrap();
    let turns: [(&str, &[&str], i64); 4] = [
        ("Ana: what did you paint last week?", asked_among, 0),
        ("Ben: the lake at dawn", &ANA_BEN, pause),
        ("Ana: where did you go camping?", &ANA_BEN, pause + 7_200),
        ("Ben: by the lake at night", &ANA_BEN, 2 * pause + 7_200),
    ];
    for (text, people, at) in turns {
        m.observe(
            Observation::new(text, WallTime::from_secs(START + at))
                .with_participants(people.iter().copied()),
        )
        .unwrap();
    }
    m
}

/// The block's lines for "what did Ben paint at the lake?", best first.
fn lines(m: &Memory, ranker: Ranker) -> Vec<String> {
    let r = Request::new(
        "what did Ben paint at the lake?",
        WallTime::from_secs(START + 86_400),
    )
    .with_participants(ANA_BEN)
    .with_ranker(ranker);
    retrieve(&m.version(), &r)
        .unwrap()
        .lines
        .into_iter()
        .map(|l| l.line)
        .collect()
}

/// Where the first line that contains `needle` sits.
fn rank_of(lines: &[String], needle: &str) -> usize {
    lines
        .iter()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in {lines:?}"))
}

#[test]
fn an_answer_borrows_from_the_question_it_follows() {
    let m = store(Config::default(), 5, &ANA_BEN);
    let with = lines(&m, Ranker::pfm());
    assert!(
        rank_of(&with, "at dawn") < rank_of(&with, "at night"),
        "{with:?}"
    );
    let without = lines(
        &m,
        Ranker {
            context: false,
            ..Ranker::pfm()
        },
    );
    assert!(
        rank_of(&without, "at night") < rank_of(&without, "at dawn"),
        "{without:?}"
    );
}

#[test]
fn no_context_across_a_long_pause_or_other_people_or_a_zero_weight() {
    let paused = store(Config::default(), 3_600, &ANA_BEN);
    let other_people = store(Config::default(), 5, &["Ana", "Cleo"]);
    let mut off = Config::default();
    off.score.context_weight = 0.0;
    let weightless = store(off, 5, &ANA_BEN);
    for m in [paused, other_people, weightless] {
        let got = lines(&m, Ranker::pfm());
        assert!(
            rank_of(&got, "at night") < rank_of(&got, "at dawn"),
            "{got:?}"
        );
    }
}

#[test]
fn a_change_to_a_question_is_bounded_by_the_answer_it_lends_to() {
    let m = store(Config::default(), 5, &ANA_BEN);
    let version = m.version();
    // The question shares "paint" with this query; the answer after it
    // shares two words, so it can score more than the question.
    let (context, participants) = ("paint at the lake at dawn", ["Ana".to_owned()]);
    let question = m
        .ledger()
        .active()
        .find(|f| f.body.text().contains("paint"))
        .unwrap()
        .body
        .clone();
    let bound = |context_on: bool| {
        let ranker = Ranker {
            context: context_on,
            participant_terms: ParticipantTerms::Off,
            ..Ranker::pfm()
        };
        let terms = query_terms(context, &participants, &ranker, &version.params);
        score_bound(&version, &terms, &ranker, &question, &mut DfMemo::default())
    };
    let (alone, lending) = (bound(false), bound(true));
    assert!(alone.own > 0.0);
    assert_eq!(alone.own, lending.own);
    assert_eq!(
        alone.moved, alone.own,
        "without context it moves only itself"
    );
    assert!(
        lending.moved > (1.0 + version.params.context_weight) * alone.own,
        "the answer it lends to can score more: {lending:?} against {alone:?}"
    );
}

/// Each active fact's neighbours in `m`'s current version, by fact.
fn neighbour_ids(m: &Memory) -> HashMap<FactId, Vec<FactId>> {
    let version = m.version();
    let corpus = &version.active;
    let gap = version.params.context_gap_ms();
    m.ledger()
        .active()
        .map(|f| {
            // Infallible: every active fact is listed.
            let at = corpus.find(f.id()).expect("an active fact is listed");
            let found = neighbours(corpus, at, gap)
                .into_iter()
                .flatten()
                .map(|(v, doc)| corpus.views()[v].segment.body(doc).id)
                .collect();
            (f.id(), found)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Invariant 2 of `pfm::rank::context`: a new fact or an erasure
    /// changes the neighbours of no fact that `moves` leaves out, and
    /// every fact's neighbours are among its `lenders` (which the
    /// publisher's bound reads).
    #[test]
    fn prop_a_change_moves_only_the_facts_it_reaches(
        turns in prop::collection::vec((0usize..3, any::<bool>()), 2..40),
        erase in any::<bool>(),
        pick in any::<prop::sample::Index>(),
        people in 0usize..3,
    ) {
        const GROUPS: [&[&str]; 3] = [&["Ana", "Ben"], &["Ana"], &["Ben", "Cleo"]];
        let mut m = Memory::new(Config::default()).unwrap();
        let mut at = START;
        for (i, (group, pause)) in turns.iter().enumerate() {
            at += if *pause { 1_800 } else { 5 };
            let o = Observation::new(format!("note {i} about the lake"), WallTime::from_secs(at))
                .with_participants(GROUPS[*group].iter().copied());
            m.observe(o).unwrap();
        }
        let before = neighbour_ids(&m);
        let changed = if erase {
            let facts: Vec<_> = m.ledger().active().map(|f| f.body.clone()).collect();
            let victim = facts[pick.index(facts.len())].clone();
            m.forget(&Forget::Fact(victim.id), WallTime::from_secs(at + 5)).unwrap();
            victim
        } else {
            let o = Observation::new("a last note about the lake", WallTime::from_secs(at + 5))
                .with_participants(GROUPS[people].iter().copied());
            let fact = m.observe(o).unwrap().outcome.fact();
            m.ledger().active().find(|f| f.id() == fact).unwrap().body.clone()
        };
        let after = neighbour_ids(&m);
        let version = m.version();
        let (corpus, params) = (&version.active, &version.params);
        for (fact, now) in &after {
            if let Some(then) = before.get(fact) && then != now && *fact != changed.id {
                // The notes all share "lake": the changed one lends.
                prop_assert!(
                    moves(corpus, params, &changed, true, *fact),
                    "{fact}: neighbours {then:?} -> {now:?}, changed {}", changed.id
                );
            }
            let body = &m.ledger().active().find(|f| f.id() == *fact).unwrap().body;
            let lent: Vec<FactId> = lenders(corpus, params, body)
                .map(|(v, doc)| corpus.views()[v].segment.body(doc).id)
                .collect();
            prop_assert!(now.iter().all(|n| lent.contains(n)), "{fact}: {now:?} not in {lent:?}");
        }
    }
}
