//! The encoder against sentence-transformers' reference, and the cache.
//! These need `scripts/fetch-models` (the README's test command runs it);
//! without the files they fail with the script's name, never skip.

use pfm::vector::Encoder;
use pfm_dense::{DIM, MiniLm, PhraseCache};

fn model() -> MiniLm {
    MiniLm::locate(2).unwrap_or_else(|e| panic!("{e}"))
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn embedding_matches_the_reference_vector() {
    // all-MiniLM-L6-v2 in sentence-transformers (mean pooling, normalized).
    const REFERENCE: [f32; 6] = [
        0.0676569, 0.0634959, 0.0487131, 0.0793049, 0.0374480, 0.0026528,
    ];
    let v = model().encode(&["This is an example sentence"]).unwrap();
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].len(), DIM);
    for (got, want) in v[0].iter().zip(REFERENCE) {
        assert!(
            (got - want).abs() < 1e-5,
            "{got} vs {want}: {:?}",
            &v[0][..6]
        );
    }
    let norm: f32 = v[0].iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-4);
}

#[test]
fn batches_equal_single_calls_and_paraphrases_are_closer() {
    let mut m = model();
    let texts = [
        "Maya relocated to Lisbon last spring",
        "Where does Maya live now?",
        "The quarterly budget review is on Friday",
    ];
    let batch = m.encode(&texts).unwrap();
    for (t, b) in texts.iter().zip(&batch) {
        let one = m.encode(&[t]).unwrap().remove(0);
        assert!(cosine(&one, b) > 0.9999, "{t}: batching changed the vector");
    }
    assert!(cosine(&batch[0], &batch[1]) > cosine(&batch[2], &batch[1]));
}

#[test]
fn phrase_cache_calls_the_model_once_per_phrase() {
    let mut cache = PhraseCache::new(model(), 8);
    let a = cache.embed(&["lives in", "works at", "lives in"]).unwrap();
    assert_eq!(a[0], a[2]);
    assert_eq!(cache.stats(), (1, 2));
    cache.embed(&["works at"]).unwrap();
    assert_eq!(cache.stats(), (2, 2));
    let near = cache.similarity("lives in", "resides in").unwrap();
    let far = cache.similarity("lives in", "is allergic to").unwrap();
    assert!(near > far, "{near} vs {far}");
}

#[test]
fn a_missing_folder_names_the_script() {
    let err = pfm_dense::ModelDir::at("/nonexistent/models")
        .unwrap_err()
        .to_string();
    assert!(err.contains("scripts/fetch-models"), "{err}");
}
