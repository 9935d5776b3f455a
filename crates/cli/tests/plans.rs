//! The speculation gate over HTTP against the real binary: a plan is
//! staged (not in the block, shown when disclosed, listed with its
//! conditions), survives a kill -9, and is promoted when it comes true; a
//! client's `kind` overrides the gate.

mod support;

use serde_json::{Value, json};
use support::{Client, Server, tempdir, token};

fn say(text: &str, day: u32) -> Value {
    json!({"text": text, "key": {"entity": "Halcyon", "slot": "launch_date"}, "at": format!("2025-06-{day:02}")})
}

fn block(c: &Client, disclose: &[&str]) -> String {
    let v = c.ok(
        "POST",
        "/v1/retrieve",
        Some(json!({"context": "when is the Halcyon launch", "at": "2025-07-01", "disclose": disclose})),
    );
    v["block"].as_str().unwrap().to_owned()
}

#[test]
fn a_plan_is_staged_survives_a_kill_and_is_promoted_when_it_comes_true() {
    let scratch = tempdir("plans");
    let dir = scratch.path();
    let tok = token(dir, "plans");
    let server = Server::start(dir, &[]);
    let c = Client::new(&server, Some(&tok));

    let now = c.observe(say("The Halcyon launch date is Nov 10.", 1));
    let plan = c.observe(say("We might push the Halcyon launch to Dec 3.", 2));
    assert_eq!(plan["outcome"], "staged", "{plan}");
    assert!(!block(&c, &[]).contains("Dec 3"), "a plan is not current");
    assert!(
        block(&c, &["pending"]).ends_with("(planned: dec 3, 2025-06-02)"),
        "{}",
        block(&c, &["pending"])
    );
    let read = c.ok("GET", &format!("/v1/facts/{}", plan["fact"]), None);
    assert_eq!(read["fact"]["state"]["status"], "pending");
    assert!(
        read["conditions"]["confirm"]
            .as_str()
            .unwrap()
            .contains("dec 3"),
        "{read}"
    );
    let head = c.ok("GET", &format!("/v1/facts/{}", now["fact"]), None);
    assert!(
        head["related"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["body"]["id"] == plan["fact"]),
        "{head}"
    );

    // The client knows better than the gate: a plain-looking statement
    // marked as a speculation is staged too.
    let mut other = say("Launch on Jan 14.", 3);
    other["value"] = json!("Jan 14");
    other["kind"] = json!("speculation");
    let jan = c.observe(other);
    assert_eq!(jan["outcome"], "staged");

    server.kill9();
    let server = Server::start(dir, &[]);
    let c = Client::new(&server, Some(&tok));
    let read = c.ok("GET", &format!("/v1/facts/{}", plan["fact"]), None);
    assert_eq!(
        read["fact"]["state"]["status"], "pending",
        "staging survives a kill -9"
    );

    let done = c.observe(say("The Halcyon launch finally moved to Dec 3.", 5));
    assert_eq!(done["outcome"], "promoted", "{done}");
    assert_eq!(done["plans"], json!([plan["fact"]]));
    assert_eq!(done["previous"], now["fact"]);
    let b = block(&c, &[]);
    assert!(b.contains("Dec 3") && !b.contains("Nov 10"), "{b}");
    let read = c.ok("GET", &format!("/v1/facts/{}", plan["fact"]), None);
    assert_eq!(read["fact"]["state"]["status"], "confirmed");
    // The other plan is abandoned by a completed change to Dec 3.
    let read = c.ok("GET", &format!("/v1/facts/{}", jan["fact"]), None);
    assert_eq!(read["fact"]["state"]["status"], "abandoned", "{read}");
    // Settled, both are still the key's plans: its read lists them.
    let head = c.ok("GET", &format!("/v1/facts/{}", done["fact"]), None);
    let related: Vec<(u64, String)> = head["related"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let status = f["state"]["status"].as_str().unwrap().to_owned();
            (f["body"]["id"].as_u64().unwrap(), status)
        })
        .collect();
    for (plan, status) in [(&plan, "confirmed"), (&jan, "abandoned")] {
        let id = plan["fact"].as_u64().unwrap();
        assert!(related.contains(&(id, status.to_owned())), "{head}");
    }
    server.stop();
}
