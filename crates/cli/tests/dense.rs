//! The dense rankers over HTTP against the real binary: with `--models`, a
//! paraphrase only MiniLM can match is found by `dense_validity` and
//! `hybrid_validity` and missed by BM25 — in a snapshot read (the request
//! thread encodes), in fresh mode (the worker does) and from a registered
//! context (encoded once) — and the vectors come back after a restart; without `--models`, a dense request is a 503 that names the
//! fetch script. Needs `scripts/fetch-models` (the README's test command
//! runs it first).

mod support;

use serde_json::json;
use support::{Client, Server, tempdir, token};

fn models() -> String {
    let dir = pfm_dense::ModelDir::locate().unwrap_or_else(|e| panic!("{e}"));
    dir.path().to_str().unwrap().to_owned()
}

fn ask(c: &Client, ranker: &str) -> (u16, serde_json::Value) {
    c.call(
        "POST",
        "/v1/retrieve",
        Some(json!({
            "context": "which city does she reside in these days",
            "ranker": ranker,
            "k": 1,
            "at": "2026-01-01",
            // A request thread loads its MiniLM session on its first dense
            // request (about 0.2 s; longer in a debug build).
            "deadline_ms": 10_000,
        })),
    )
}

#[test]
fn dense_rankers_over_http_find_a_paraphrase_and_survive_a_restart() {
    let scratch = tempdir("dense");
    let dir = scratch.path();
    let tok = token(dir, "dense");
    let models = models();
    let server = Server::start(dir, &["--models", &models]);
    let c = Client::new(&server, Some(&tok));
    for (i, text) in [
        "The quarterly budget review is on Friday.",
        "Maya relocated to Lisbon last spring.",
        "Tom's favourite food is sushi.",
    ]
    .iter()
    .enumerate()
    {
        c.observe(json!({"text": text, "at": format!("2025-06-0{}", i + 1)}));
    }
    let (status, v) = ask(&c, "bm25_validity");
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["block"], "", "no shared word, yet BM25 found {v}");
    for ranker in ["dense_validity", "hybrid_validity"] {
        let (status, v) = ask(&c, ranker);
        assert_eq!(status, 200, "{v}");
        assert!(
            v["block"].as_str().unwrap().contains("Lisbon"),
            "{ranker}: {v}"
        );
    }
    // Fresh mode: the worker encodes the query itself.
    let (status, v) = c.call(
        "POST",
        "/v1/retrieve",
        Some(json!({
            "context": "which city does she reside in these days",
            "ranker": "dense_validity",
            "k": 1,
            "at": "2026-01-01",
            "mode": "fresh",
            "omega_us": 9_000_000,
            "deadline_ms": 10_000,
        })),
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["source"], "fresh", "{v}");
    assert!(v["block"].as_str().unwrap().contains("Lisbon"), "{v}");
    // A context registered with a dense ranker is encoded once; the
    // publisher and the workers re-rank it with that vector.
    let (status, v) = c.call(
        "POST",
        "/v1/contexts",
        Some(json!({
            "context": "which city does she reside in these days",
            "ranker": "hybrid_validity",
            "k": 1,
            "at": "2026-01-01",
        })),
    );
    assert_eq!(status, 201, "{v}");
    let id = v["id"].clone();
    let (status, v) = c.call("POST", "/v1/retrieve", Some(json!({"context_id": id})));
    assert_eq!(status, 200, "{v}");
    assert!(v["block"].as_str().unwrap().contains("Lisbon"), "{v}");
    c.observe(json!({"text": "The printer on floor two is broken.", "at": "2025-06-04"}));
    let (status, v) = c.call(
        "POST",
        "/v1/retrieve",
        Some(json!({"context_id": id, "mode": "fresh", "omega_us": 9_000_000, "deadline_ms": 10_000})),
    );
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        (v["source"].as_str(), v["store_seq"].as_u64()),
        (Some("fresh"), Some(4)),
        "{v}"
    );
    assert!(v["block"].as_str().unwrap().contains("Lisbon"), "{v}");
    let (status, v) = ask(&c, "dense_sideways");
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (400, Some("invalid_input")),
        "{v}"
    );
    server.stop();

    // The ledger is durable, the vectors are not: a restart embeds again.
    let server = Server::start(dir, &["--models", &models]);
    let c = Client::new(&server, Some(&tok));
    let (status, v) = ask(&c, "dense_validity");
    assert_eq!(status, 200, "{v}");
    assert!(v["block"].as_str().unwrap().contains("Lisbon"), "{v}");
    server.stop();

    let server = Server::start(dir, &[]);
    let c = Client::new(&server, Some(&tok));
    let (status, v) = ask(&c, "dense_validity");
    assert_eq!(status, 503, "{v}");
    assert_eq!(v["error"]["code"], "dense_unavailable");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("scripts/fetch-models"),
        "{v}"
    );
    server.stop();
}
