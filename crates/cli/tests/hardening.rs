//! `pfm serve` against hostile and careless clients (issue 17): every
//! request's work is bounded before it starts, one tenant cannot starve
//! another, and a retried write is written once.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Client, Server, keyed, metrics, pfm, tempdir, token};

fn names(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("Person Number{i}")).collect()
}

fn refused_at_limit(c: &Client, path: &str, body: Value, limit: &str) {
    // Timed from the first byte sent: the client's own encoding is not the
    // server's work.
    let body = serde_json::to_vec(&body).unwrap();
    let started = Instant::now();
    let (status, v) = c.send("POST", path, Some(&body)).unwrap();
    assert_eq!(status, 422, "{path}: {v}");
    assert_eq!(v["error"]["code"], "limit_exceeded", "{v}");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(limit),
        "names the limit {limit}: {message}"
    );
    eprintln!(
        "{path} ({} KiB) refused in {:?}: {message}",
        body.len() / 1024,
        started.elapsed()
    );
}

/// The requests that once took a gigabyte or half a minute (8,000 names in
/// an observation, 60,000 in a retrieval, 100,000 in a context) are refused
/// with a 422 that names the limit, and the server stays as it was.
#[test]
fn requests_with_thousands_of_names_are_refused_before_any_work() {
    let scratch = tempdir("names");
    let dir = scratch.path();
    let tok = token(dir, "names");
    let server = Server::start(dir, &[]);
    let c = Client::new(&server, Some(&tok));
    let many = names(8_000);
    refused_at_limit(
        &c,
        "/v1/observe",
        json!({"text": "hello there", "participants": many}),
        "64",
    );
    refused_at_limit(
        &c,
        "/v1/observe",
        json!({"text": "hello there", "entities": many}),
        "64",
    );
    refused_at_limit(
        &c,
        "/v1/observe",
        json!({"observations": [{"text": "fine"}, {"text": "hello there", "participants": names(65)}]}),
        "64",
    );
    refused_at_limit(
        &c,
        "/v1/retrieve",
        json!({"context": "hello", "participants": names(60_000)}),
        "64",
    );
    refused_at_limit(
        &c,
        "/v1/contexts",
        json!({"context": "hello", "participants": names(100_000)}),
        "64",
    );
    let long = "x".repeat(300);
    refused_at_limit(
        &c,
        "/v1/observe",
        json!({"text": "hello there", "participants": [long]}),
        "256",
    );
    // Nothing was written, and the limit itself is accepted.
    let at_limit = json!({"text": "The standup is moved to 9am.", "participants": names(64), "entities": names(64)});
    let receipt = c.observe(at_limit);
    assert_eq!(receipt["seq"], 1, "the refused observations wrote nothing");
    let v = c.ok(
        "POST",
        "/v1/retrieve",
        // The line names all 64 participants: over the default 800 characters.
        Some(json!({"context": "the standup is at", "participants": names(64), "budget": 4000})),
    );
    assert!(v["block"].as_str().unwrap().contains("9am"), "{v}");
    server.stop();
}

/// `--max-contexts`: registration past the limit is refused until one is
/// unregistered.
#[test]
fn registered_contexts_are_bounded_per_tenant() {
    let scratch = tempdir("contexts");
    let dir = scratch.path();
    let tok = token(dir, "contexts");
    let server = Server::start(dir, &["--max-contexts", "2"]);
    let c = Client::new(&server, Some(&tok));
    let register = || c.call("POST", "/v1/contexts", Some(json!({"context": "hi"})));
    let first = register().1["id"].as_u64().unwrap();
    assert_eq!(register().0, 201);
    let (status, v) = register();
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (422, Some("limit_exceeded")),
        "{v}"
    );
    c.ok("DELETE", &format!("/v1/contexts/{first}"), None);
    assert_eq!(register().0, 201);
    server.stop();
}

/// With two request threads a tenant may hold one. Tenant A floods: eight
/// clients of as-of reads (each builds an index of the past on a request
/// thread) while a ninth writes batches of 1,000 observations (held to
/// `--observe-rate`). Tenant B's 1,000 plain retrievals, each with the
/// default 50 ms deadline that the server itself enforces, are all answered
/// with a block; A's excess is told `tenant_busy`. (Before: B's requests
/// queued behind A's, 15 s.) B's latencies are printed, not asserted.
#[test]
fn a_tenant_flooding_the_request_threads_does_not_starve_another() {
    let scratch = tempdir("fair");
    let dir = scratch.path();
    let (ta, tb) = (token(dir, "flooder"), token(dir, "bystander"));
    let server = Server::start(dir, &["--request-threads", "2"]);
    let (a, b) = (
        Client::new(&server, Some(&ta)),
        Client::new(&server, Some(&tb)),
    );
    b.observe(json!({"text": "Alex Rivera's standup is at 9am.", "participants": ["Alex Rivera"]}));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (a, stop) = (a.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut i = 0;
            let mut limited = 0;
            while !stop.load(Ordering::Relaxed) {
                let batch: Vec<Value> = (0..1000)
                    .map(|j| json!({"text": format!("note {i} {j} about the roadmap"), "participants": ["Sam"]}))
                    .collect();
                let (status, v) =
                    a.call("POST", "/v1/observe", Some(json!({"observations": batch})));
                match status {
                    200 => i += 1,
                    429 if v["error"]["code"] == "rate_limited" => limited += 1,
                    _ => panic!("{status} {v}"),
                }
            }
            (i, limited)
        })
    };
    let readers: Vec<_> = (0..8)
        .map(|_| {
            let (a, stop) = (a.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut codes = std::collections::BTreeMap::<String, usize>::new();
                while !stop.load(Ordering::Relaxed) {
                    let (status, v) = a.call(
                        "POST",
                        "/v1/retrieve",
                        Some(json!({"context": "roadmap", "as_of": {"seq": 1}, "deadline_ms": 10000})),
                    );
                    let code = v["error"]["code"].as_str().unwrap_or("ok").to_owned();
                    *codes.entry(format!("{status} {code}")).or_default() += 1;
                }
                codes
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let mut waits = Vec::new();
    for _ in 0..1000 {
        let started = Instant::now();
        let (status, v) = b.call(
            "POST",
            "/v1/retrieve",
            Some(
                json!({"context": "the standup with Alex is at", "participants": ["Alex Rivera"]}),
            ),
        );
        waits.push(started.elapsed());
        assert_eq!(status, 200, "tenant B was not served: {v}");
        assert!(v["block"].as_str().unwrap().contains("9am"), "{v}");
    }
    stop.store(true, Ordering::Relaxed);
    let (written, limited) = writer.join().unwrap();
    let mut flood = std::collections::BTreeMap::<String, usize>::new();
    for r in readers {
        for (k, n) in r.join().unwrap() {
            *flood.entry(k).or_default() += n;
        }
    }
    assert!(
        flood.contains_key("429 tenant_busy"),
        "A was never held to its share: {flood:?}"
    );
    waits.sort();
    eprintln!(
        "A's 1,000-observation batches: {written} written, {limited} refused rate_limited (--observe-rate)"
    );
    eprintln!(
        "tenant B while A floods: p50 {:?}, p99 {:?}, max {:?} (client-side, HTTP included); A's answers {flood:?}",
        waits[waits.len() / 2],
        waits[waits.len() * 99 / 100],
        waits[waits.len() - 1]
    );
    server.stop();
}

/// Writes are charged per observation (`--observe-rate`): a tenant past
/// its rate is told `rate_limited`, and a batch larger than the rate allows
/// in a second is told to split.
#[test]
fn observations_are_charged_to_the_tenant_one_by_one() {
    let scratch = tempdir("ingest");
    let dir = scratch.path();
    let tok = token(dir, "ingest");
    let server = Server::start(dir, &["--observe-rate", "100"]);
    let c = Client::new(&server, Some(&tok));
    let batch = |n: usize| {
        let observations: Vec<Value> = (0..n)
            .map(|i| json!({"text": format!("note {i} about the roadmap")}))
            .collect();
        c.call(
            "POST",
            "/v1/observe",
            Some(json!({"observations": observations})),
        )
    };
    let (status, v) = batch(101);
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (400, Some("batch_too_large")),
        "{v}"
    );
    assert_eq!(batch(100).0, 200, "a full second's worth is one burst");
    let (status, v) = batch(50);
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (429, Some("rate_limited")),
        "{v}"
    );
    // The bucket refills at 100 per second.
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(batch(50).0, 200);
    server.stop();
}

/// A write the server answered 408 may have been committed; its retry with
/// the same `request_id` returns the original receipts (`replayed: true`)
/// and commits nothing. The first attempt is a large batch under a one
/// second request timeout, so it is usually answered 408; the test holds
/// whichever answer it gets.
#[test]
fn a_timed_out_write_retried_with_its_request_id_exists_once() {
    let scratch = tempdir("idempotent");
    let dir = scratch.path();
    let tok = token(dir, "idem");
    let server = Server::start(dir, &["--request-timeout-secs", "1"]);
    let c = Client::new(&server, Some(&tok));
    let batch: Vec<Value> = (0..1000)
        .map(|i| {
            json!({
                "text": format!("Project {i} moves to room {i}."),
                "participants": names(64),
                "entities": names(64),
            })
        })
        .collect();
    let body = json!({"observations": batch, "request_id": "batch-0001"});
    let (first, v) = c.call("POST", "/v1/observe", Some(body.clone()));
    assert!(first == 200 || first == 408, "{first} {v}");
    // Retry until the writer has finished the first attempt.
    let retry = loop {
        let (status, v) = c.call("POST", "/v1/observe", Some(body.clone()));
        if status == 200 {
            break v;
        }
        assert_eq!(status, 408, "{v}");
    };
    assert_eq!(retry["replayed"], true, "{first}: {retry}");
    let receipts = retry["receipts"].as_array().unwrap();
    assert_eq!(receipts.len(), 1000);
    let committed = receipts[0]["seq"].as_u64().unwrap();
    assert!(
        receipts
            .iter()
            .all(|r| r["seq"] == committed && r["outcome"] == "created")
    );
    // Nothing was committed after it: the next write is the next commit.
    let next = c.observe(json!({"text": "One more note."}));
    assert_eq!(next["seq"].as_u64(), Some(committed + 1));
    // A bad id is refused before any work.
    let (status, v) = c.call(
        "POST",
        "/v1/observe",
        Some(json!({"text": "x y", "request_id": "has spaces"})),
    );
    assert_eq!(
        (status, v["error"]["code"].as_str()),
        (400, Some("invalid_input")),
        "{v}"
    );
    eprintln!("first attempt answered {first}");
    server.stop();
}

#[cfg(unix)]
fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The counter `name` of `tenant` in a scrape.
fn counter(text: &str, name: &str, tenant: &str) -> u64 {
    let prefix = format!("{name}{{tenant=\"{tenant}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {prefix} in {text}"))
}

/// Reads never take the writer's path: an as-of retrieval and a fact with
/// its history are answered from the published version, so they publish
/// nothing (each used to publish a version and rebuild every context).
#[test]
fn reads_publish_nothing() {
    let scratch = tempdir("reads");
    let dir = scratch.path();
    let tok = token(dir, "reader");
    let server = Server::start(dir, &[]);
    let c = Client::new(&server, Some(&tok));
    let first = c.observe(keyed("Alex Rivera", "room", "16C", 2));
    c.observe(keyed("Alex Rivera", "room", "17D", 3));
    let scrape = metrics(dir, &server);
    let before = counter(&scrape(), "pfm_versions_total", "reader");
    let fact = first["fact"].as_u64().unwrap();
    for _ in 0..3 {
        let past = c.ok(
            "POST",
            "/v1/retrieve",
            Some(json!({"context": "Alex Rivera room", "as_of": {"seq": 1}})),
        );
        assert!(past["block"].as_str().unwrap().contains("16C"), "{past}");
        let got = c.ok("GET", &format!("/v1/facts/{fact}"), None);
        assert_eq!(got["history"].as_array().unwrap().len(), 2, "{got}");
    }
    assert_eq!(counter(&scrape(), "pfm_versions_total", "reader"), before);
    drop(scrape);
    server.stop();
}

/// `/metrics` gives series of their own to the `--metrics-tenants` most
/// active tenants and sums the rest, so a scrape does not grow with the
/// number of tenants.
#[test]
fn metrics_series_are_bounded_by_the_top_tenants() {
    let scratch = tempdir("metrics-top");
    let dir = scratch.path();
    let tokens: Vec<String> = ["busy", "calm", "idle"]
        .iter()
        .map(|t| token(dir, t))
        .collect();
    let server = Server::start(dir, &["--metrics-tenants", "1"]);
    for (i, (tok, n)) in tokens.iter().zip([3u32, 1, 1]).enumerate() {
        let c = Client::new(&server, Some(tok));
        for d in 0..n {
            c.observe(keyed("Alex Rivera", "room", &format!("{i}{d}"), d + 2));
        }
    }
    let scrape = metrics(dir, &server)();
    assert_eq!(counter(&scrape, "pfm_observations_total", "busy"), 3);
    assert_eq!(counter(&scrape, "pfm_observations_total", "(others)"), 2);
    assert!(
        !scrape.contains("tenant=\"calm\"") && !scrape.contains("tenant=\"idle\""),
        "{scrape}"
    );
    assert!(
        scrape.contains("\npfm_tenants 3\n") && scrape.contains("\npfm_open_tenants 3\n"),
        "{scrape}"
    );
    server.stop();
}

/// `/metrics` names every tenant, so only a metrics token opens it; the
/// data directory is the owner's alone; a revoked token stops working
/// while the server runs.
#[test]
fn metrics_need_their_own_token_files_are_private_and_revocation_is_live() {
    let scratch = tempdir("ops");
    let dir = scratch.path();
    let tok = token(dir, "alice");
    let server = Server::start(dir, &[]);
    let alice = Client::new(&server, Some(&tok));
    alice.observe(json!({"text": "Alice's room is 16C.", "participants": ["Alice"]}));

    let scrape = |token: Option<&str>| {
        Client::new(&server, token)
            .raw("GET", "/metrics", None)
            .unwrap()
    };
    assert_eq!(scrape(None).0, 401);
    assert_eq!(
        scrape(Some(&tok)).0,
        401,
        "a tenant token does not open /metrics"
    );
    let text = metrics(dir, &server)();
    assert!(text.contains("tenant=\"alice\""), "{text}");

    #[cfg(unix)]
    {
        assert_eq!(mode(dir), 0o700);
        assert_eq!(mode(&dir.join("tenants")), 0o700);
        assert_eq!(mode(&dir.join("tenants/alice")), 0o700);
        assert_eq!(mode(&dir.join("tenants/alice/ledger.redb")), 0o600);
        assert_eq!(mode(&dir.join("tokens.json")), 0o600);
        assert_eq!(mode(&dir.join("tokens.lock")), 0o600);
    }

    let listed = pfm(&["token", "list"], dir);
    let id = listed
        .lines()
        .find(|l| l.contains("alice"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_owned();
    pfm(&["token", "revoke", "--id", &id], dir);
    let revoked = Instant::now();
    loop {
        let (status, _) = alice.call("POST", "/v1/retrieve", Some(json!({"context": "room"})));
        if status == 401 {
            break;
        }
        assert_eq!(status, 200);
        assert!(
            revoked.elapsed() < Duration::from_secs(10),
            "the revoked token still works"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("revocation took effect after {:?}", revoked.elapsed());
    assert!(!pfm(&["token", "list"], dir).contains("alice"));
    server.stop();
}

/// A connection that trickles its headers is closed after
/// `--header-timeout-secs`, instead of holding a slot for half a minute.
#[test]
fn a_connection_that_never_finishes_its_headers_is_closed() {
    use std::io::{Read, Write};
    let scratch = tempdir("slowloris");
    let dir = scratch.path();
    token(dir, "x");
    let server = Server::start(dir, &["--header-timeout-secs", "1"]);
    let addr = server.base.trim_start_matches("http://").to_owned();
    let mut socket = std::net::TcpStream::connect(&addr).unwrap();
    socket
        .write_all(b"POST /v1/observe HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let closed = socket.read_to_end(&mut answer);
    assert!(
        closed.is_ok(),
        "the server kept the connection open: {closed:?}"
    );
    eprintln!(
        "closed after {:?}: {:?}",
        started.elapsed(),
        String::from_utf8_lossy(&answer)
    );
    // A normal request is still served.
    let (status, _) = Client::new(&server, None).call("GET", "/healthz", None);
    assert_eq!(status, 200);
    server.stop();
}

/// Times are bounded to years 1970–9999, and a number and a string of
/// digits mean the same thing: milliseconds since the epoch.
#[test]
fn times_are_bounded_and_numbers_are_milliseconds_in_either_form() {
    let scratch = tempdir("times");
    let dir = scratch.path();
    let tok = token(dir, "t");
    let server = Server::start(dir, &[]);
    let c = Client::new(&server, Some(&tok));
    for at in [
        json!(9_223_372_036_854_775_807_i64),
        json!(-1),
        json!("99999999999999999999"),
    ] {
        let (status, v) = c.call(
            "POST",
            "/v1/observe",
            Some(json!({"text": "hello there", "at": at})),
        );
        assert_eq!(
            (status, v["error"]["code"].as_str()),
            (400, Some("invalid_input")),
            "{at}: {v}"
        );
    }
    let number =
        c.observe(json!({"text": "The printer on floor 3 is fixed.", "at": 1_700_000_000_000_i64}));
    let digits =
        c.observe(json!({"text": "The roadmap review moved to Friday.", "at": "1700000000000"}));
    for r in [number, digits] {
        let fact = c.ok("GET", &format!("/v1/facts/{}", r["fact"]), None);
        assert_eq!(
            fact["fact"]["body"]["stated_at"], 1_700_000_000_000_i64,
            "{fact}"
        );
    }
    server.stop();
}
