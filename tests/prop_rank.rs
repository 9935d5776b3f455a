//! The pruned scorer returns exactly the exhaustive top-n: the same facts,
//! the same order, bit-identical scores, on random stores (segment layouts,
//! supersessions, erasures, usage) and random rankers.

use pfm::config::{Config, MergeMode};
use pfm::rank::scorer::{Query, Strategy as Scoring, shortlist_with};
use pfm::rank::{ParticipantTerms, Ranker, Scratch};
use pfm::{FactId, Forget, Key, Memory, Observation, WallTime};
use pfm_synth::Vocabulary;
use proptest::prelude::*;

fn ranker(choice: u8, flags: u8) -> Ranker {
    match choice % 4 {
        0 => Ranker::pfm(),
        1 => Ranker::bm25(true, flags & 1 != 0, flags & 2 != 0),
        2 => Ranker {
            field_weights: Some([
                1.0,
                if flags & 1 != 0 { 0.0 } else { 2.5 },
                if flags & 2 != 0 { 0.0 } else { 2.0 },
            ]),
            participant_terms: if flags & 4 != 0 {
                ParticipantTerms::Off
            } else {
                ParticipantTerms::Weighted
            },
            graph: flags & 8 == 0,
            usage: flags & 16 == 0,
            ..Ranker::pfm()
        },
        _ => Ranker {
            recency: false,
            ..Ranker::pfm()
        },
    }
}

#[derive(Debug, Clone)]
struct Store {
    n: u64,
    seed: u64,
    narrow: bool,
    batch: usize,
    keyed_every: u64,
    forget_every: u64,
    used: Vec<u64>,
}

fn store() -> impl Strategy<Value = Store> {
    (
        50u64..2500,
        any::<u64>(),
        any::<bool>(),
        1usize..400,
        3u64..40,
        20u64..400,
        prop::collection::vec(0u64..2500, 0..20),
    )
        .prop_map(
            |(n, seed, narrow, batch, keyed_every, forget_every, used)| Store {
                n,
                seed,
                narrow,
                batch,
                keyed_every,
                forget_every,
                used,
            },
        )
}

fn build(s: &Store) -> Memory {
    let vocabulary = if s.narrow {
        Vocabulary::Narrow
    } else {
        Vocabulary::Wide
    };
    let (facts, _) = pfm_synth::generate(s.n, s.seed, vocabulary, 0);
    let mut m = Memory::new(Config {
        merge: MergeMode::Inline,
        ..Config::default()
    })
    .unwrap();
    let obs: Vec<Observation> = facts
        .iter()
        .map(|f| {
            let o = f.observation();
            if f.id % s.keyed_every == 0 {
                let entity = f.entities[0].clone();
                let value = format!("v{}", f.id);
                Observation::new(format!("{entity} status is {value} budget"), o.at)
                    .with_participants(o.participants.clone())
                    .with_key(Key::new(&entity, "status").unwrap(), Some(&value))
            } else {
                o
            }
        })
        .collect();
    for (i, chunk) in obs.chunks(s.batch).enumerate() {
        m.observe_batch(chunk.to_vec()).unwrap();
        if (i as u64 + 1).is_multiple_of(s.forget_every.max(1)) {
            let _ = m.forget(
                &Forget::Fact(FactId(i as u64)),
                WallTime::from_secs(pfm_synth::BASE_SECS),
            );
        }
    }
    let used: Vec<FactId> = s.used.iter().map(|&u| FactId(u % s.n)).collect();
    m.record_usage(
        &used,
        WallTime::from_secs(pfm_synth::BASE_SECS + s.n as i64),
    );
    m
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn prop_pruned_equals_exhaustive(
        s in store(),
        rankers in prop::collection::vec((any::<u8>(), any::<u8>()), 1..4),
        n in 1usize..60,
        query_seed in any::<u64>(),
    ) {
        let m = build(&s);
        let version = m.version();
        let vocabulary = if s.narrow { Vocabulary::Narrow } else { Vocabulary::Wide };
        let (_, queries) = pfm_synth::generate(s.n, query_seed, vocabulary, 12);
        let mut scratch = Scratch::default();
        // Small stores fit in cache and are finished in one pass; this one
        // takes the two-pass path of large stores.
        let mut two_pass = Scratch::default();
        two_pass.set_resident_limit(0);
        for (choice, flags) in rankers {
            let ranker = ranker(choice, flags);
            for q in &queries {
                let query = Query { context: &q.text, participants: &q.participants, at: WallTime::from_secs(q.at), cancel: None };
                let fast = shortlist_with(&version, query, &ranker, n, Scoring::Pruned, &mut scratch).unwrap();
                let fast2 = shortlist_with(&version, query, &ranker, n, Scoring::Pruned, &mut two_pass).unwrap();
                let slow = shortlist_with(&version, query, &ranker, n, Scoring::Exhaustive, &mut scratch).unwrap();
                let a: Vec<(u64, u32)> = fast.iter().map(|x| (x.fact.0, x.score.to_bits())).collect();
                let a2: Vec<(u64, u32)> = fast2.iter().map(|x| (x.fact.0, x.score.to_bits())).collect();
                let b: Vec<(u64, u32)> = slow.iter().map(|x| (x.fact.0, x.score.to_bits())).collect();
                prop_assert_eq!(&a, &b, "{} n={} query {:?}", ranker.name, n, q.text);
                prop_assert_eq!(&a2, &b, "two-pass: {} n={} query {:?}", ranker.name, n, q.text);
            }
        }
    }
}
