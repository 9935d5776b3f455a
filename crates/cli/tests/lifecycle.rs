//! The tenant lifecycle over HTTP (`/v1/tenants`, `/v1/tokens`) against a
//! real `pfm serve`: an admin token creates, lists and deletes tenants and
//! their tokens; scopes do not cross; a deleted tenant leaves nothing, even
//! while its requests keep arriving.

mod support;

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;
use support::{Client, Server, grep, keyed, pfm, tempdir, token};

fn admin(dir: &std::path::Path) -> String {
    pfm(&["token", "create", "--admin"], dir).trim().to_owned()
}

#[test]
fn an_admin_token_runs_the_whole_tenant_lifecycle() {
    let scratch = tempdir("lifecycle");
    let dir = scratch.path();
    let admin_token = admin(dir);
    let server = Server::start(dir, &[]);
    let ops = Client::new(&server, Some(&admin_token));

    // Create: the token works at once, the ordering is kept, a second
    // create of the name and a bad name are refused.
    let created = ops.call(
        "POST",
        "/v1/tenants",
        Some(json!({"tenant": "alpha", "ordering": "event_time"})),
    );
    assert_eq!(created.0, 201, "{}", created.1);
    let alpha_token = created.1["token"].as_str().unwrap().to_owned();
    let first_id = created.1["id"].as_str().unwrap().to_owned();
    let again = ops.call("POST", "/v1/tenants", Some(json!({"tenant": "alpha"})));
    assert_eq!(
        (again.0, again.1["error"]["code"].as_str()),
        (409, Some("tenant_exists"))
    );
    let bad = ops.call("POST", "/v1/tenants", Some(json!({"tenant": "Not OK"})));
    assert_eq!(bad.0, 400, "{}", bad.1);
    let alpha = Client::new(&server, Some(&alpha_token));
    let secret = "Kim Tanaka's locker code is 55life19.";
    alpha.observe(json!({"text": secret, "participants": ["Kim Tanaka"], "at": "2025-06-02"}));
    alpha.observe(keyed("Kim Tanaka", "day_rate", "$900", 10));
    // Stated earlier, arriving later: history under event time.
    alpha.observe(keyed("Kim Tanaka", "day_rate", "$700", 3));
    let block = alpha.retrieve("what is Kim's day rate", &["Kim Tanaka"]);
    assert!(block.contains("900") && !block.contains("700"), "{block}");

    // Scopes do not cross.
    assert_eq!(alpha.call("GET", "/v1/tenants", None).0, 401);
    let (status, _) = ops.call("POST", "/v1/retrieve", Some(json!({"context": "locker"})));
    assert_eq!(status, 401, "an admin token opens no tenant's memory");
    assert_eq!(ops.raw("GET", "/metrics", None).unwrap().0, 401);

    // List, a page at a time.
    for name in ["beta", "gamma"] {
        ops.ok("POST", "/v1/tenants", Some(json!({"tenant": name})));
    }
    let page = ops.ok("GET", "/v1/tenants?limit=2", None);
    let names = |v: &serde_json::Value| -> Vec<String> {
        v["tenants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["tenant"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(&page), ["alpha", "beta"]);
    assert_eq!(page["tenants"][0]["open"], true);
    assert_eq!(page["tenants"][0]["tokens"], 1);
    assert!(page["tenants"][0]["ledger_bytes"].as_u64().unwrap() > 0);
    assert_eq!(page["tenants"][1]["open"], false);
    let next = page["next"].as_str().unwrap();
    let rest = ops.ok("GET", &format!("/v1/tenants?limit=2&after={next}"), None);
    assert_eq!(names(&rest), ["gamma"]);
    assert!(rest.get("next").is_none(), "{rest}");
    assert_eq!(ops.call("GET", "/v1/tenants?limit=0", None).0, 400);

    // Tokens: another one, listed by id, the first revoked.
    let second = ops.call("POST", "/v1/tenants/alpha/tokens", None);
    assert_eq!(second.0, 201, "{}", second.1);
    let second_token = second.1["token"].as_str().unwrap().to_owned();
    let listed = ops.ok("GET", "/v1/tenants/alpha/tokens", None);
    assert_eq!(listed["tokens"].as_array().unwrap().len(), 2);
    assert!(
        !listed.to_string().contains(&alpha_token),
        "tokens are never listed"
    );
    let revoked = ops.ok("DELETE", &format!("/v1/tokens/{first_id}"), None);
    assert_eq!(revoked["tokens"][0]["tenant"], "alpha");
    let (status, _) = alpha.call("POST", "/v1/retrieve", Some(json!({"context": "locker"})));
    assert_eq!(status, 401, "a revoked token is refused at once");
    let alpha = Client::new(&server, Some(&second_token));
    assert!(
        alpha
            .retrieve("what is Kim's locker code", &["Kim Tanaka"])
            .contains("55life19")
    );
    let unknown = ops.call("DELETE", "/v1/tokens/abcdef123456", None);
    assert_eq!(
        (unknown.0, unknown.1["error"]["code"].as_str()),
        (404, Some("unknown_token"))
    );
    assert_eq!(ops.call("DELETE", "/v1/tokens/xyz", None).0, 400);
    assert_eq!(ops.call("POST", "/v1/tenants/nobody/tokens", None).0, 404);

    // Delete: tokens refused, the tenant closed, no byte of its text left.
    let deleted = ops.ok("DELETE", "/v1/tenants/alpha", None);
    assert_eq!(deleted["tokens_revoked"], 1);
    assert_eq!(deleted["data_removed"], true);
    assert!(
        !grep(dir, "55life19"),
        "the deleted tenant's text is on disk"
    );
    let (status, _) = alpha.call("POST", "/v1/retrieve", Some(json!({"context": "locker"})));
    assert_eq!(status, 401);
    assert_eq!(
        names(&ops.ok("GET", "/v1/tenants", None)),
        ["beta", "gamma"]
    );
    let gone = ops.call("DELETE", "/v1/tenants/alpha", None);
    assert_eq!(
        (gone.0, gone.1["error"]["code"].as_str()),
        (404, Some("unknown_tenant"))
    );
    // The OpenAPI document describes every lifecycle route.
    let doc = Client::new(&server, None).ok("GET", "/v1/openapi.json", None);
    for path in [
        "/v1/tenants",
        "/v1/tenants/{tenant}",
        "/v1/tenants/{tenant}/tokens",
        "/v1/tokens/{id}",
    ] {
        assert!(
            doc["paths"].get(path).is_some(),
            "{path} is not in the OpenAPI document"
        );
    }
    // The CLI sees the same tenants.
    let cli = pfm(&["tenant", "list"], dir);
    assert!(!cli.contains("alpha") && cli.contains("gamma"), "{cli}");
    server.stop();
}

/// Requests of a tenant keep arriving while it is deleted: each is served
/// or refused, and afterwards the tenant's directory is gone and stays
/// gone. (The narrow case of a request that looked the tenant up before the
/// delete and opens it after is the unit test
/// `an_open_after_the_tenant_is_deleted_is_refused_and_makes_nothing`.)
#[test]
fn a_tenant_deleted_under_traffic_stays_deleted() {
    let scratch = tempdir("lifecycle-race");
    let dir = scratch.path();
    let admin_token = admin(dir);
    let tok = token(dir, "busy");
    let server = Server::start(dir, &[]);
    let ops = Client::new(&server, Some(&admin_token));
    let busy = Client::new(&server, Some(&tok));
    busy.observe(json!({"text": "Ravi's pager code is 31race77.", "participants": ["Ravi"], "at": "2025-06-02"}));
    let stop = AtomicBool::new(false);
    let tenant_dir = dir.join("tenants").join("busy");
    std::thread::scope(|s| {
        let hammers: Vec<_> = (0..4)
            .map(|_| {
                let (busy, stop) = (busy.clone(), &stop);
                s.spawn(move || {
                    let body = json!({"context": "pager code", "participants": ["Ravi"]});
                    let body = serde_json::to_vec(&body).unwrap();
                    let mut statuses = std::collections::BTreeSet::new();
                    while !stop.load(Ordering::Relaxed) {
                        // A 401 is sent before the body is read, so the
                        // server closes that connection (hyper cannot reuse
                        // it), and a request the client pooled onto it
                        // meanwhile sees the peer gone: the loop goes on.
                        if let Ok((status, _)) = busy.send("POST", "/v1/retrieve", Some(&body)) {
                            statuses.insert(status);
                        }
                    }
                    statuses
                })
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(300));
        let deleted = ops.ok("DELETE", "/v1/tenants/busy", None);
        assert_eq!(deleted["data_removed"], true, "{deleted}");
        assert!(!tenant_dir.exists(), "the directory is removed");
        std::thread::sleep(std::time::Duration::from_millis(300));
        stop.store(true, Ordering::Relaxed);
        for h in hammers {
            let statuses = h.join().unwrap();
            assert!(
                statuses.iter().all(|s| [200, 401].contains(s)),
                "every request is served or refused: {statuses:?}"
            );
        }
    });
    assert!(
        !tenant_dir.exists(),
        "no request opened the deleted tenant again"
    );
    assert!(!grep(dir, "31race77"));
    server.stop();
}

#[test]
fn a_tenant_created_with_its_own_ranker_serves_requests_that_name_none_with_it() {
    let scratch = tempdir("settings");
    let dir = scratch.path();
    let admin_token = admin(dir);
    let server = Server::start(dir, &[]);
    let ops = Client::new(&server, Some(&admin_token));
    let bad = ops.call(
        "POST",
        "/v1/tenants",
        Some(json!({"tenant": "t1", "ranker": "bm26"})),
    );
    assert_eq!(
        (bad.0, bad.1["error"]["code"].as_str()),
        (400, Some("invalid_input")),
        "{}",
        bad.1
    );
    let bad = ops.call(
        "POST",
        "/v1/tenants",
        Some(json!({"tenant": "t1", "recency": "sometimes"})),
    );
    assert_eq!(bad.0, 422, "{}", bad.1);

    // This server has no --models: a tenant whose own ranker is dense is
    // answered dense_unavailable when a request names no ranker, and
    // served when it names one.
    let created = ops.call(
        "POST",
        "/v1/tenants",
        Some(json!({"tenant": "dense", "ranker": "dense_validity", "recency": "off"})),
    );
    assert_eq!(created.0, 201, "{}", created.1);
    let dense = Client::new(&server, created.1["token"].as_str());
    dense.observe(json!({"text": "Alex Rivera lives in Lisbon.", "at": "2025-06-01"}));
    let plain = dense.call(
        "POST",
        "/v1/retrieve",
        Some(json!({"context": "where does Alex live"})),
    );
    assert_eq!(
        (plain.0, plain.1["error"]["code"].as_str()),
        (503, Some("dense_unavailable")),
        "{}",
        plain.1
    );
    let named = dense.ok(
        "POST",
        "/v1/retrieve",
        Some(json!({"context": "where does Alex live", "ranker": "pfm"})),
    );
    assert!(
        named["block"].as_str().unwrap().contains("Lisbon"),
        "{named}"
    );

    // The CLI takes the same settings; a tenant without any is served by
    // the pfm ranker.
    pfm(
        &[
            "tenant",
            "create",
            "--tenant",
            "cli",
            "--recency",
            "fixed",
            "--ranker",
            "bm25_validity",
        ],
        dir,
    );
    let plain_token = token(dir, "plain");
    let plain = Client::new(&server, Some(&plain_token));
    plain.observe(json!({"text": "Alex Rivera lives in Lisbon.", "at": "2025-06-01"}));
    let block = plain.retrieve("where does Alex live", &[]);
    assert!(block.contains("Lisbon"), "{block}");
    server.stop();
}
