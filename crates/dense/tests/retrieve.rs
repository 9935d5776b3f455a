//! Dense and hybrid retrieval through a store with MiniLM attached (needs
//! `scripts/fetch-models`; the README's test command runs it first).

use std::sync::Arc;

use pfm::config::Config;
use pfm::error::Error;
use pfm::memory::{Forget, Memory, Observation};
use pfm::rank::Ranker;
use pfm::retrieve::Request;
use pfm::time::WallTime;
use pfm::vector::{Encoder, Vector};
use pfm_dense::MiniLm;

const FACTS: [&str; 5] = [
    "The quarterly budget review is on Friday.",
    "Tom's favourite food is sushi.",
    "Maya relocated to Lisbon last spring.",
    "The printer on the third floor is broken again.",
    "Priya adopted a beagle puppy named Biscuit.",
];
/// Shares no content word with the Lisbon fact.
const PARAPHRASE: &str = "which city does she reside in these days";

fn store(participants: bool) -> (Memory, MiniLm) {
    let mut memory = Memory::new(Config {
        history_index: true,
        ..Config::default()
    })
    .unwrap();
    // Two facts before the encoder is attached (embedded by set_encoder),
    // the rest after (embedded by their commits).
    let at = |i: usize| WallTime::from_secs(1_000 + i as i64);
    for (i, text) in FACTS[..2].iter().enumerate() {
        memory.observe(Observation::new(*text, at(i))).unwrap();
    }
    let encoder = MiniLm::locate(2).unwrap_or_else(|e| panic!("{e}"));
    memory
        .set_encoder(Box::new(MiniLm::locate(1).unwrap()), participants)
        .unwrap();
    for (i, text) in FACTS[2..].iter().enumerate() {
        let o = Observation::new(*text, at(i + 2)).with_participants(["Maya Silva"]);
        memory.observe(o).unwrap();
    }
    (memory, encoder)
}

fn ask(
    memory: &Memory,
    encoder: &mut MiniLm,
    ranker: &str,
    context: &str,
) -> pfm::error::Result<Vec<String>> {
    let ranker = Ranker::named(ranker).unwrap();
    let participants = vec!["Maya Silva".to_owned()];
    let text = ranker.query_text(context, &participants);
    let vector = Vector::quantize(&encoder.encode(&[&text]).unwrap()[0]);
    let request = Request::new(context, WallTime::from_secs(10_000))
        .with_participants(participants)
        .with_ranker(ranker)
        .with_k(1)
        .with_vector(Arc::new(vector));
    let block = memory.retrieve(&request)?;
    Ok(block
        .lines
        .iter()
        .map(|l| memory.fact(l.fact).unwrap().body.text().to_string())
        .collect())
}

#[test]
fn a_paraphrase_only_the_dense_arm_finds() {
    let (memory, mut encoder) = store(false);
    assert_eq!(memory.vector_footprint().0, FACTS.len());
    let lexical = ask(&memory, &mut encoder, "bm25_validity", PARAPHRASE).unwrap();
    assert!(
        lexical.is_empty(),
        "no shared word, yet BM25 found {lexical:?}"
    );
    for arm in ["dense_validity", "dense", "hybrid_validity"] {
        let got = ask(&memory, &mut encoder, arm, PARAPHRASE).unwrap();
        assert_eq!(got, vec![FACTS[2].to_owned()], "{arm}");
    }
    // A fact embedded before the encoder was attached is found too.
    let got = ask(
        &memory,
        &mut encoder,
        "dense_validity",
        "what does Tom like to eat",
    )
    .unwrap();
    assert_eq!(got, vec![FACTS[1].to_owned()]);
}

#[test]
fn participant_vectors_serve_the_p_arms_and_only_when_kept() {
    let (memory, mut encoder) = store(true);
    let got = ask(&memory, &mut encoder, "dense_validity_p", PARAPHRASE).unwrap();
    assert_eq!(got, vec![FACTS[2].to_owned()]);
    let (plain, mut encoder) = store(false);
    match ask(&plain, &mut encoder, "hybrid_validity_p", PARAPHRASE) {
        Err(Error::DenseUnavailable(m)) => assert!(m.contains("participant"), "{m}"),
        other => panic!("expected DenseUnavailable, got {other:?}"),
    }
}

#[test]
fn erasure_takes_the_vectors_and_a_missing_query_vector_is_an_error() {
    let (mut memory, mut encoder) = store(false);
    let lisbon = memory
        .ledger()
        .facts()
        .find(|f| f.body.text().contains("Lisbon"))
        .unwrap()
        .id();
    memory
        .forget(&Forget::Fact(lisbon), WallTime::from_secs(20_000))
        .unwrap();
    assert_eq!(memory.vector_footprint().0, FACTS.len() - 1);
    let got = ask(&memory, &mut encoder, "dense_validity", PARAPHRASE).unwrap();
    assert!(!got.iter().any(|t| t.contains("Lisbon")), "{got:?}");
    let request = Request::new(PARAPHRASE, WallTime::from_secs(30_000))
        .with_ranker(Ranker::named("dense_validity").unwrap());
    match memory.retrieve(&request) {
        Err(Error::DenseUnavailable(m)) => assert!(m.contains("fetch-models"), "{m}"),
        other => panic!("expected DenseUnavailable, got {other:?}"),
    }
}
