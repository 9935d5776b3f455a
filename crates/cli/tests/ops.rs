//! P-Mem's typed operations over HTTP against the real binary: an update,
//! its retraction (the old value reinstated), a contest, its resolution,
//! the 409 of an operation that cannot apply, the provenance a fact read
//! and a disclosing block show (each status as it was, commit by commit),
//! and the same state after a restart and after a kill -9.

mod support;

use serde_json::{Value, json};
use support::{Client, Server, tempdir, token};

fn budget(text: &str, op: &str, value: Option<&str>, day: u32) -> Value {
    let mut o = json!({
        "text": text,
        "key": {"entity": "Halcyon", "slot": "budget_cap"},
        "op": op,
        "at": format!("2025-06-{day:02}"),
    });
    if let Some(v) = value {
        o["value"] = json!(v);
    }
    o
}

/// An observation refused with a 409 whose message names `says`.
fn refused(c: &Client, body: Value, says: &[&str]) {
    let (status, v) = c.call("POST", "/v1/observe", Some(body));
    assert_eq!(status, 409, "{v}");
    assert_eq!(v["error"]["code"], "op_not_applicable");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(says.iter().all(|s| message.contains(s)), "{message}");
}

fn ask(c: &Client, disclose: &[&str]) -> String {
    let v = c.ok(
        "POST",
        "/v1/retrieve",
        Some(json!({"context": "what is the Halcyon budget cap", "at": "2025-07-01", "disclose": disclose})),
    );
    v["block"].as_str().unwrap().to_owned()
}

#[test]
fn update_retract_contest_and_resolve_over_http_survive_a_restart_and_a_kill() {
    let scratch = tempdir("ops");
    let dir = scratch.path();
    let tok = token(dir, "ops");
    let server = Server::start(dir, &[]);
    let c = Client::new(&server, Some(&tok));

    let v1 = c.observe(budget(
        "The Halcyon budget cap is $30k.",
        "accept",
        Some("$30k"),
        1,
    ));
    let v2 = c.observe(budget(
        "Update: the Halcyon budget cap is $50k.",
        "accept",
        Some("$50k"),
        2,
    ));
    assert_eq!(v2["outcome"], "superseded");
    let r = c.observe(budget("The $50k update was a mistake.", "revoke", None, 3));
    assert_eq!(r["outcome"], "revoked", "{r}");
    assert_eq!(r["previous"], v2["fact"]);
    assert_eq!(r["reinstated"], v1["fact"], "{r}");
    let block = ask(&c, &["history"]);
    assert!(block.contains("$30k") && !block.contains("$50k"), "{block}");

    // A report without precedence is held open, then settled once.
    let alt = c.observe(budget(
        "I heard the Halcyon budget cap is $40k.",
        "contest",
        Some("$40k"),
        4,
    ));
    assert_eq!(alt["outcome"], "contested", "{alt}");
    assert_eq!(alt["previous"], v1["fact"]);
    let block = ask(&c, &["alternatives"]);
    assert!(block.contains("(contested: $30k vs $40k)"), "{block}");
    assert!(
        !ask(&c, &[]).contains("contested"),
        "no disclosure by default"
    );

    // An operation that cannot apply: 409, named state, nothing changed.
    refused(
        &c,
        budget("Confirmed.", "resolve", None, 5),
        &["$30k", "contested"],
    );
    refused(
        &c,
        json!({"text": "forget that", "op": "revoke", "key": {"entity": "Alex", "slot": "room"}}),
        &["empty"],
    );

    let res = c.observe(budget(
        "Confirmed: the budget cap is $40k.",
        "resolve",
        Some("$40k"),
        5,
    ));
    assert_eq!(res["outcome"], "resolved", "{res}");
    assert_eq!(res["fact"], alt["fact"]);
    assert_eq!(res["contradicted"], json!([v1["fact"]]));
    let block = ask(&c, &[]);
    assert!(block.contains("$40k") && !block.contains("$30k"), "{block}");

    // A fact read shows every status and what hangs off the chain.
    let path = format!("/v1/facts/{}", v1["fact"]);
    let fact = c.ok("GET", &path, None);
    let statuses: Vec<&str> = fact["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["state"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["active", "revoked", "contradicted"], "{fact}");
    let related: Vec<&str> = fact["related"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["state"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(related, ["tombstone"], "{fact}");
    let snapshot = fact.to_string();
    // Each status as it was after each commit (1: created … 5: resolved).
    let status_of = |seq: u64, id: &Value| {
        let v = c.ok("GET", &format!("{path}?as_of={seq}"), None);
        v["as_of"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["fact"] == *id)
            .map(|s| s["status"].clone())
            .unwrap()
    };
    let v1_then: Vec<Value> = (1..=5).map(|seq| status_of(seq, &v1["fact"])).collect();
    assert_eq!(
        v1_then,
        [
            json!("active"),
            json!("superseded"),
            json!("active"),
            json!("contested"),
            json!("contradicted")
        ]
    );
    let alt_then: Vec<Value> = (3..=5).map(|seq| status_of(seq, &alt["fact"])).collect();
    assert_eq!(
        alt_then,
        [Value::Null, json!("alternative"), json!("active")]
    );

    // Restart: the identical state, and it keeps applying operations.
    server.stop();
    let server = Server::start(dir, &[]);
    let c = Client::new(&server, Some(&tok));
    assert_eq!(c.ok("GET", &path, None).to_string(), snapshot);
    let r = c.observe(budget("Scratch the $40k.", "reject", None, 6));
    assert_eq!(r["outcome"], "rejected", "{r}");
    assert!(
        r.get("reinstated").is_none(),
        "only retracted versions below: {r}"
    );
    assert!(!ask(&c, &[]).contains("$40k"));
    let snapshot = c.ok("GET", &path, None).to_string();

    // kill -9 after an acknowledged operation: the same state again.
    server.kill9();
    let server = Server::start(dir, &[]);
    let c = Client::new(&server, Some(&tok));
    assert_eq!(c.ok("GET", &path, None).to_string(), snapshot);
    server.stop();
}
