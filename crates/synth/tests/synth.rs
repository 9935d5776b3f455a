//! The synthetic corpus generator reproduces the reference generator
//! (`shared/tools/synth_corpus.py`) byte for byte, and the loader reads it back.

use std::path::PathBuf;

use pfm_synth::Vocabulary;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn golden(vocabulary: Vocabulary) {
    let (facts, queries) = pfm_synth::generate(60, 7, vocabulary, 20);
    let want_facts =
        std::fs::read_to_string(data(&format!("synth_n60_s7_{vocabulary}_facts.jsonl"))).unwrap();
    let want_queries =
        std::fs::read_to_string(data(&format!("synth_n60_s7_{vocabulary}_queries.jsonl"))).unwrap();
    let got_facts: String = facts.iter().map(|f| f.to_json_line() + "\n").collect();
    let got_queries: String = queries.iter().map(|q| q.to_json_line() + "\n").collect();
    assert_eq!(
        got_facts, want_facts,
        "{vocabulary} facts differ from the reference generator"
    );
    assert_eq!(
        got_queries, want_queries,
        "{vocabulary} queries differ from the reference generator"
    );

    let loaded =
        pfm_synth::read_facts(&data(&format!("synth_n60_s7_{vocabulary}_facts.jsonl"))).unwrap();
    assert_eq!(loaded, facts);
    let loaded =
        pfm_synth::read_queries(&data(&format!("synth_n60_s7_{vocabulary}_queries.jsonl")))
            .unwrap();
    assert_eq!(loaded, queries);
}

#[test]
fn wide_matches_the_reference_generator() {
    golden(Vocabulary::Wide);
}

#[test]
fn narrow_matches_the_reference_generator() {
    golden(Vocabulary::Narrow);
}

#[test]
fn loader_reports_file_and_line() {
    let dir = std::env::temp_dir().join(format!("pfm-synth-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.jsonl");
    std::fs::write(
        &path,
        "{\"id\": 0, \"text\": \"a\", \"participants\": [], \"at\": 1}\n{\"id\": 1}\n",
    )
    .unwrap();
    let err = pfm_synth::read_queries(&path).unwrap_err().to_string();
    assert!(err.contains("bad.jsonl:2"), "{err}");
    let err = pfm_synth::read_facts(&dir.join("missing.jsonl"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing.jsonl"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
