//! The index and the scorer: BM25F against a hand-computed example, and
//! retrieval that does not depend on how the index is cut into segments or
//! when merges run.

use pfm::config::{Config, MergeMode};
use pfm::rank::scorer::Query;
use pfm::rank::{Ranker, Scratch, shortlist};
use pfm::{Key, Memory, Observation, WallTime};
use pfm_synth::Vocabulary;

fn fact(text: &str, entities: &[&str], participant: &str) -> Observation {
    Observation::new(text, WallTime::from_secs(1_767_225_600))
        .with_entities(entities.iter().copied())
        .with_participants([participant])
}

/// PFM's BM25F with the multiplicative factors switched off.
fn bm25f_only() -> Ranker {
    Ranker {
        recency: false,
        usage: false,
        graph: false,
        ..Ranker::pfm()
    }
}

#[test]
fn bm25f_matches_a_hand_computed_example() {
    let mut m = Memory::new(Config::default()).unwrap();
    m.observe(fact(
        "ent1 met the budget with ent2",
        &["ent1", "ent2"],
        "user1",
    ))
    .unwrap();
    m.observe(fact(
        "ent3 reviewed the roadmap with ent1",
        &["ent3", "ent1"],
        "user2",
    ))
    .unwrap();
    m.observe(fact("ent2 called the budget", &["ent2"], "user1"))
        .unwrap();
    let v = m.version();
    let query = Query {
        context: "ent1 budget",
        participants: &["user1".to_owned()],
        at: WallTime::from_secs(1_767_225_700),
        cancel: None,
        vector: None,
        recency: None,
    };
    let got = shortlist(&v, query, &bm25f_only(), 50, &mut Scratch::default()).unwrap();

    // By hand. Field weights (text, entities, participants) = (1, 2.5, 2).
    // Content tokens ("the", "with" are stop words):
    //   f0 text [ent1 met budget ent2] (4), entities [ent1 ent2] (2), participants [user1] (1): dl = 4 + 5 + 2 = 11
    //   f1 text [ent3 reviewed roadmap ent1] (4), entities (2), participants (1): dl = 11
    //   f2 text [ent2 called budget] (3), entities [ent2] (1), participants [user1] (1): dl = 3 + 2.5 + 2 = 7.5
    // N = 3, avgdl = 29.5 / 3. Each query term has df = 2: idf = ln(1 + 1.5 / 2.5).
    // Query weights: budget 1.0 (last), ent1 0.95 (one before), user1 β = 1.5.
    // Merged tf: f0 budget 1, ent1 1 + 2.5 = 3.5, user1 2; f1 ent1 3.5; f2 budget 1, user1 2.
    let (k1, b) = (1.2f64, 0.75f64);
    let avgdl = 29.5 / 3.0;
    let idf = (1.0f64 + 1.5 / 2.5).ln();
    let term = |q: f64, tf: f64, dl: f64| {
        q * idf * (k1 + 1.0) * tf / (tf + k1 * (1.0 - b + b * dl / avgdl))
    };
    let f0 = term(1.0, 1.0, 11.0) + term(0.95, 3.5, 11.0) + term(1.5, 2.0, 11.0);
    let f1 = term(0.95, 3.5, 11.0);
    let f2 = term(1.0, 1.0, 7.5) + term(1.5, 2.0, 7.5);
    let mut want = [(0u64, f0), (1, f1), (2, f2)];
    want.sort_by(|a, b| b.1.total_cmp(&a.1));
    assert_eq!(got.len(), 3);
    for (g, (id, score)) in got.iter().zip(want) {
        assert_eq!(g.fact.0, id);
        assert!(
            (f64::from(g.score) - score).abs() < 1e-5 * score,
            "{}: {} vs {score}",
            g.fact,
            g.score
        );
    }

    // Text-only BM25 over the same store: different statistics, same formula.
    let bm25 = Ranker::bm25(true, false, false);
    let got = shortlist(&v, query, &bm25, 50, &mut Scratch::default()).unwrap();
    let avgdl = 11.0 / 3.0;
    let term = |tf: f64, dl: f64| idf * (k1 + 1.0) * tf / (tf + k1 * (1.0 - b + b * dl / avgdl));
    let scores: Vec<(u64, f64)> = got.iter().map(|s| (s.fact.0, f64::from(s.score))).collect();
    let want = [
        (2, term(1.0, 3.0)),
        (0, term(1.0, 4.0) + term(1.0, 4.0)),
        (1, term(1.0, 4.0)),
    ];
    let mut want = want.to_vec();
    want.sort_by(|a, b| b.1.total_cmp(&a.1));
    assert_eq!(scores.len(), want.len(), "{scores:?}");
    for ((gid, g), (wid, w)) in scores.iter().zip(&want) {
        assert_eq!(gid, wid);
        assert!((g - w).abs() < 1e-5 * w, "{g} vs {w}");
    }
}

/// The synthetic corpus with a keyed status fact every seventh observation,
/// so supersessions delete documents all through the build.
fn stream(n: u64) -> Vec<Observation> {
    let (facts, _) = pfm_synth::generate(n, 7, Vocabulary::Wide, 0);
    facts
        .iter()
        .map(|f| {
            let o = f.observation();
            if f.id % 7 == 0 {
                let entity = format!("ent{}", f.id % 50);
                let key = Key::new(&entity, "status").unwrap();
                let value = format!("state{}", f.id);
                Observation::new(format!("{entity} status is {value}"), o.at)
                    .with_participants(o.participants.clone())
                    .with_key(key, Some(&value))
            } else {
                o
            }
        })
        .collect()
}

fn build(observations: &[Observation], merge: MergeMode, one_batch: bool) -> Memory {
    let mut m = Memory::new(Config {
        merge,
        ..Config::default()
    })
    .unwrap();
    if one_batch {
        m.observe_batch(observations.to_vec()).unwrap();
    } else {
        for o in observations {
            m.observe(o.clone()).unwrap();
        }
    }
    m.wait_for_merges();
    m
}

#[test]
fn retrieval_is_independent_of_segment_layout_and_merge_timing() {
    let obs = stream(5000);
    let one = build(&obs, MergeMode::Inline, true);
    let inline = build(&obs, MergeMode::Inline, false);
    let background = build(&obs, MergeMode::Background, false);
    assert_eq!(one.version().active.views().len(), 1);
    assert!(
        inline.version().active.views().len() > 1,
        "one commit per observation makes several segments"
    );

    let (_, queries) = pfm_synth::generate(5000, 7, Vocabulary::Wide, 60);
    let mut scratch = Scratch::default();
    for ranker in [Ranker::pfm(), Ranker::bm25(true, true, true)] {
        for q in &queries {
            let query = Query {
                context: &q.text,
                participants: &q.participants,
                at: WallTime::from_secs(q.at),
                cancel: None,
                vector: None,
                recency: None,
            };
            let want = shortlist(&one.version(), query, &ranker, 50, &mut scratch).unwrap();
            assert!(!want.is_empty());
            for other in [&inline, &background] {
                let got = shortlist(&other.version(), query, &ranker, 50, &mut scratch).unwrap();
                let a: Vec<(u64, u32)> =
                    want.iter().map(|s| (s.fact.0, s.score.to_bits())).collect();
                let b: Vec<(u64, u32)> =
                    got.iter().map(|s| (s.fact.0, s.score.to_bits())).collect();
                assert_eq!(a, b, "{} on {:?}", ranker.name, q.text);
            }
        }
    }
    for m in [&inline, &background] {
        let (x, y) = (one.version(), m.version());
        assert_eq!(x.active.live_docs(), y.active.live_docs());
        assert_eq!(x.active.field_len_sums(), y.active.field_len_sums());
        for term in ["met", "budget", "ent3", "user7", "status"] {
            assert_eq!(x.active.df(term, 0b111), y.active.df(term, 0b111), "{term}");
        }
    }
}

#[test]
fn a_commit_publishes_a_new_segment_without_touching_the_old_ones() {
    let obs = stream(700);
    let mut m = build(&obs, MergeMode::Inline, true);
    let before = m.version();
    m.observe(Observation::new(
        "ent1 met the budget with ent2",
        WallTime::from_secs(1_767_300_000),
    ))
    .unwrap();
    let after = m.version();
    assert!(std::sync::Arc::ptr_eq(
        &before.active.views()[0].segment,
        &after.active.views()[0].segment
    ));
    assert_eq!(after.active.views().len(), 2);
    assert_eq!(after.active.live_docs(), before.active.live_docs() + 1);
}
