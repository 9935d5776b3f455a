//! `pfm serve` end to end, as a child process on a free loopback port:
//! crash safety (SIGKILL mid-stream), tenant isolation, erasure, bad input.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pfm_server::tokens::Grant;
use serde_json::json;

mod support;

use support::{Client, Server, grep, keyed, metrics, pfm, tempdir, token};

/// Sends observations from several clients until SIGKILL, restarts, and
/// checks every acknowledged observation against a model: each client owns
/// its keys and sends one request at a time, so a key's active value is its
/// last acknowledged value, or the one value that was in flight at the kill
/// (durable but unanswered).
#[test]
fn every_acknowledged_observation_survives_sigkill() {
    let scratch = tempdir("crash");
    let dir = scratch.path();
    let tok = token(dir, "crash");
    // Crash safety, not the per-tenant rate: nothing may be refused.
    let server = Server::start(dir, &["--observe-rate", "1000000"]);
    let stop = Arc::new(AtomicBool::new(false));
    // Per client: acknowledged (key, value, fact id) in order, and the
    // request in flight when the server died.
    type Log = (Vec<(String, String, u64)>, Option<(String, String)>);
    let logs: Arc<Mutex<Vec<Log>>> = Arc::new(Mutex::new(Vec::new()));
    let clients: Vec<_> = (0..4)
        .map(|c| {
            let (client, stop, logs) =
                (Client::new(&server, Some(&tok)), stop.clone(), logs.clone());
            std::thread::spawn(move || {
                let mut log: Log = (Vec::new(), None);
                for i in 0.. {
                    if stop.load(Ordering::Relaxed) && i > 0 && log.1.is_none() {
                        break;
                    }
                    let entity = format!("Person{c}x{}", i % 7);
                    let value = format!("v{c}n{i}");
                    let body = keyed(&entity, "desk", &value, i);
                    log.1 = Some((entity.clone(), value.clone()));
                    match client.send(
                        "POST",
                        "/v1/observe",
                        Some(&serde_json::to_vec(&body).unwrap()),
                    ) {
                        Ok((200, r)) => {
                            let fact = r["receipts"][0]["fact"].as_u64().unwrap();
                            log.0.push((entity, value, fact));
                            log.1 = None;
                        }
                        Ok((status, r)) => panic!("observe answered {status}: {r}"),
                        // The server is gone: this request is in flight.
                        Err(_) => break,
                    }
                }
                logs.lock().unwrap().push(log);
            })
        })
        .collect();
    // Let a few hundred observations through, then kill mid-stream.
    let probe = Client::new(&server, Some(&tok));
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let (_, m) = probe.send("GET", "/healthz", None).unwrap();
        assert_eq!(m["status"], "ok");
        let seq = probe.ok("POST", "/v1/retrieve", Some(json!({"context": "desk"})))["store_seq"]
            .as_u64()
            .unwrap();
        if seq >= 150 {
            break;
        }
    }
    server.kill9();
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    let logs = logs.lock().unwrap().clone();
    let acked: usize = logs.iter().map(|l| l.0.len()).sum();
    // 150 commits were visible; each client may have had one commit's
    // answer still on the wire when the server died.
    assert!(
        acked >= 150 - 4,
        "only {acked} acknowledged before the kill"
    );

    let server = Server::start(dir, &[]);
    let client = Client::new(&server, Some(&tok));
    let mut last: HashMap<String, (String, u64)> = HashMap::new();
    let mut in_flight: HashMap<String, String> = HashMap::new();
    for (acks, flying) in &logs {
        for (entity, value, fact) in acks {
            // Every acknowledged observation is retained, with its text.
            let f = client.ok("GET", &format!("/v1/facts/{fact}"), None);
            assert_eq!(
                f["fact"]["body"]["value"],
                value.to_lowercase(),
                "fact {fact}"
            );
            last.insert(entity.clone(), (value.clone(), *fact));
        }
        if let Some((entity, value)) = flying {
            in_flight.insert(entity.clone(), value.clone());
        }
    }
    for (entity, (value, fact)) in &last {
        let f = client.ok("GET", &format!("/v1/facts/{fact}"), None);
        let state = &f["fact"]["state"];
        if state["status"] == "active" {
            continue;
        }
        // Only the in-flight revision of this key may have displaced it.
        let newer = state["superseded_by"].as_u64().unwrap_or_else(|| {
            panic!("{entity}: last acknowledged value {value} is {state} with no successor")
        });
        let n = client.ok("GET", &format!("/v1/facts/{newer}"), None);
        assert_eq!(n["fact"]["state"]["status"], "active");
        assert_eq!(
            Some(&n["fact"]["body"]["value"].as_str().unwrap().to_owned()),
            in_flight.get(entity).map(|v| v.to_lowercase()).as_ref(),
            "{entity}: the active value is neither the last acknowledged nor the in-flight one"
        );
    }
    // And the server still takes writes after the replay.
    client.observe(keyed("Person0x0", "desk", "after", 1));
    server.stop();
}

/// Tenants the many-tenant crash test registers.
const CRASH_TENANTS: usize = 10_000;

/// SIGKILL with many tenants active: 10,000 tenants registered, clients
/// writing one keyed observation to each in turn (a tenant's first write
/// creates its ledger) under a memory budget that keeps closing idle
/// tenants, so the kill finds tenants open, closing (their checkpoints
/// half written) and closed. After a restart every acknowledged write is
/// in its own tenant, whether read from the rows or a checkpoint, and no
/// tenant reads another's.
#[test]
fn acknowledged_writes_survive_sigkill_across_many_tenants() {
    let scratch = tempdir("crash-many");
    let dir = scratch.path();
    let names: Vec<String> = (0..CRASH_TENANTS).map(|i| format!("t{i:05}")).collect();
    let asked: Vec<Grant> = names.iter().map(|n| Grant::Tenant(n)).collect();
    let tokens = pfm_server::tokens::create_many(dir, &asked, jiff::Timestamp::now()).unwrap();
    // Every tenant that wrote is checkpointed at its close, so the kill
    // also finds checkpoints half written and the restart reads some.
    let server = Server::start(
        dir,
        &[
            "--observe-rate",
            "1000000",
            "--memory-budget",
            "8MB",
            "--checkpoint-min-facts",
            "0",
        ],
    );
    let value = |t: usize| format!("desk{t}x");
    let next = AtomicUsize::new(0);
    // (tenant, fact id) acknowledged.
    let acked: Mutex<Vec<(usize, u64)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let mut mine = Vec::new();
                loop {
                    let t = next.fetch_add(1, Ordering::Relaxed);
                    if t >= CRASH_TENANTS {
                        break;
                    }
                    let body =
                        serde_json::to_vec(&keyed(&format!("Person{t}"), "desk", &value(t), 1));
                    match Client::new(&server, Some(&tokens[t])).send(
                        "POST",
                        "/v1/observe",
                        Some(&body.unwrap()),
                    ) {
                        Ok((200, r)) => mine.push((t, r["receipts"][0]["fact"].as_u64().unwrap())),
                        Ok((status, r)) => panic!("tenant {t}: observe answered {status}: {r}"),
                        // The server is gone: this write was in flight.
                        Err(_) => break,
                    }
                }
                acked.lock().unwrap().extend(mine);
            });
        }
        // Kill mid-stream, once most tenants have been written to.
        while next.load(Ordering::Relaxed) < CRASH_TENANTS * 9 / 10 {
            std::thread::sleep(Duration::from_millis(20));
        }
        server.sigkill();
    });
    server.kill9();
    let acked = acked.into_inner().unwrap();
    assert!(
        acked.len() >= CRASH_TENANTS * 8 / 10,
        "only {} writes acknowledged before the kill",
        acked.len()
    );

    let server = Server::start(
        dir,
        &["--memory-budget", "64MB", "--checkpoint-min-facts", "0"],
    );
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(t, fact)) = acked.get(i) else {
                        break;
                    };
                    let own = Client::new(&server, Some(&tokens[t]));
                    let f = own.ok("GET", &format!("/v1/facts/{fact}"), None);
                    assert_eq!(f["fact"]["body"]["value"], value(t), "tenant {t}");
                    assert_eq!(f["fact"]["state"]["status"], "active", "tenant {t}");
                    // Another tenant's fact of the same id is its own
                    // (checked for every tenth, each check opening one more).
                    if t % 10 != 0 {
                        continue;
                    }
                    let other = (t + 1) % CRASH_TENANTS;
                    let (_, v) = Client::new(&server, Some(&tokens[other])).call(
                        "GET",
                        &format!("/v1/facts/{fact}"),
                        None,
                    );
                    assert!(
                        !v.to_string().contains(&value(t)),
                        "tenant {other} read {t}'s fact"
                    );
                }
            });
        }
    });
    // Tenants closed before the kill (idle for 2 s while the clients
    // wrote to the others) were read back from their checkpoints.
    let from_checkpoints = metrics(dir, &server)()
        .lines()
        .find_map(|l| l.strip_prefix("pfm_tenant_checkpoint_opens_total "))
        .and_then(|v| v.parse::<u64>().ok());
    assert!(from_checkpoints > Some(0), "{from_checkpoints:?}");
    server.stop();
}

#[test]
fn a_tenant_cannot_reach_another_tenants_facts() {
    let scratch = tempdir("isolation");
    let dir = scratch.path();
    let (ta, tb) = (token(dir, "alpha"), token(dir, "beta"));
    let server = Server::start(dir, &[]);
    let (a, b) = (
        Client::new(&server, Some(&ta)),
        Client::new(&server, Some(&tb)),
    );
    let secret = "Kim Tanaka's vault code is 77alpha31.";
    let receipt =
        a.observe(json!({"text": secret, "participants": ["Kim Tanaka"], "at": "2025-06-02"}));
    let id = receipt["fact"].as_u64().unwrap();
    b.observe(json!({"text": "Kim Tanaka likes green tea.", "participants": ["Kim Tanaka"], "at": "2025-06-03"}));
    let ctx = a.ok(
        "POST",
        "/v1/contexts",
        Some(json!({"context": "vault code", "participants": ["Kim Tanaka"]})),
    );
    let ctx = ctx["id"].as_u64().unwrap();

    // Read: retrieval, fact lookup (every id B could name), contexts.
    assert!(
        !b.retrieve("what is Kim's vault code", &["Kim Tanaka"])
            .contains("77alpha31")
    );
    for i in 0..4 {
        let (_, v) = b.call("GET", &format!("/v1/facts/{i}"), None);
        assert!(
            !v.to_string().contains("77alpha31"),
            "B read A's fact {i}: {v}"
        );
    }
    let (status, v) = b.call("POST", "/v1/retrieve", Some(json!({"context_id": ctx})));
    assert!(
        status == 404 || !v.to_string().contains("77alpha31"),
        "{status} {v}"
    );
    // Erase and unregister: nothing of A's goes.
    b.ok("POST", "/v1/forget", Some(json!({"entity": "Kim Tanaka"})));
    let (status, _) = b.call("POST", "/v1/forget", Some(json!({"fact": id})));
    assert_eq!(status, 404);
    b.call("DELETE", &format!("/v1/contexts/{ctx}"), None);
    // Write: B's observation stays B's.
    b.observe(json!({"text": "Kim Tanaka's vault code is 99beta00.", "participants": ["Kim Tanaka"], "at": "2025-06-04"}));

    let block = a.retrieve("what is Kim's vault code", &["Kim Tanaka"]);
    assert!(
        block.contains("77alpha31") && !block.contains("99beta00") && !block.contains("green tea"),
        "{block}"
    );
    assert_eq!(
        a.ok("GET", &format!("/v1/facts/{id}"), None)["fact"]["body"]["text"],
        secret
    );
    let snap = a.ok("POST", "/v1/retrieve", Some(json!({"context_id": ctx})));
    assert!(
        snap["block"].as_str().unwrap().contains("77alpha31"),
        "{snap}"
    );
    // A token opens its own tenant only; none opens nothing.
    let none = Client::new(&server, None);
    for (m, p) in [
        ("POST", "/v1/observe"),
        ("POST", "/v1/retrieve"),
        ("GET", "/v1/facts/0"),
        ("POST", "/v1/forget"),
        ("POST", "/v1/contexts"),
        ("DELETE", "/v1/contexts/1"),
    ] {
        let (status, v) = none.call(m, p, Some(json!({})));
        assert_eq!(
            (status, v["error"]["code"].as_str()),
            (401, Some("unauthorized")),
            "{m} {p}"
        );
    }
    server.stop();
}

/// First requests that arrive together: each tenant is opened once,
/// however many of its requests wait for the open, and every one of them
/// is answered from its own tenant's facts (tenants open in parallel,
/// outside the server's open lock).
#[test]
fn concurrent_first_requests_open_each_tenant_once() {
    let scratch = tempdir("open-once");
    let dir = scratch.path();
    let tokens: Vec<String> = ["alpha", "beta"].iter().map(|t| token(dir, t)).collect();
    let server = Server::start(dir, &[]);
    for (t, rate) in tokens.iter().zip(["$900", "$1200"]) {
        Client::new(&server, Some(t)).observe(keyed("Kim Tanaka", "day_rate", rate, 2));
    }
    server.stop();
    let server = Server::start(dir, &[]);
    let scrape = metrics(dir, &server);
    std::thread::scope(|s| {
        for i in 0..8 {
            let (token, want, not) = match i % 2 {
                0 => (&tokens[0], "900", "1200"),
                _ => (&tokens[1], "1200", "900"),
            };
            let server = &server;
            s.spawn(move || {
                let block = Client::new(server, Some(token))
                    .retrieve("what is Kim's day rate", &["Kim Tanaka"]);
                assert!(block.contains(want) && !block.contains(not), "{block}");
            });
        }
    });
    let text = scrape();
    drop(scrape);
    assert!(text.contains("pfm_tenant_opens_total 2\n"), "{text}");
    server.stop();
}

/// Tenants open on their first request, not at start: a restart reads the
/// token file only, and each tenant's facts come back when it is first
/// used, its own and no other's.
#[test]
fn tenants_open_on_their_first_request_with_their_own_facts() {
    let scratch = tempdir("lazy-open");
    let dir = scratch.path();
    let (ta, tb, tc) = (token(dir, "alpha"), token(dir, "beta"), token(dir, "gamma"));
    let server = Server::start(dir, &[]);
    let probe = Client::new(&server, None);
    let health = |c: &Client| {
        let (_, v) = c.call("GET", "/healthz", None);
        (v["tenants"].as_u64(), v["open_tenants"].as_u64())
    };
    assert_eq!(health(&probe), (Some(3), Some(0)));
    let (a, b) = (
        Client::new(&server, Some(&ta)),
        Client::new(&server, Some(&tb)),
    );
    a.observe(keyed("Kim Tanaka", "day_rate", "$900", 2));
    b.observe(keyed("Kim Tanaka", "day_rate", "$1200", 3));
    assert_eq!(health(&probe), (Some(3), Some(2)));
    server.stop();

    let server = Server::start(dir, &[]);
    let probe = Client::new(&server, None);
    assert_eq!(
        health(&probe),
        (Some(3), Some(0)),
        "a restart opens nothing"
    );
    let b = Client::new(&server, Some(&tb));
    let block = b.retrieve("what is Kim's day rate", &["Kim Tanaka"]);
    assert!(block.contains("1200") && !block.contains("900"), "{block}");
    assert_eq!(health(&probe), (Some(3), Some(1)));
    let c = Client::new(&server, Some(&tc));
    assert_eq!(c.retrieve("what is Kim's day rate", &["Kim Tanaka"]), "");
    let a = Client::new(&server, Some(&ta));
    let block = a.retrieve("what is Kim's day rate", &["Kim Tanaka"]);
    assert!(block.contains("900") && !block.contains("1200"), "{block}");
    assert_eq!(health(&probe), (Some(3), Some(3)));
    server.stop();
}

/// Under a memory budget, idle tenants are closed (their writes durable,
/// their checkpoints written) and reopened with their facts, and only
/// theirs, on their next request; a tenant with a registered context is
/// kept open.
#[test]
fn idle_tenants_over_the_memory_budget_are_closed_and_come_back() {
    let scratch = tempdir("evict");
    let dir = scratch.path();
    let (ta, tb) = (token(dir, "alpha"), token(dir, "beta"));
    // A budget below one open tenant: every idle tenant is over it; every
    // tenant that wrote is checkpointed at its close, however small.
    let server = Server::start(
        dir,
        &["--memory-budget", "1KiB", "--checkpoint-min-facts", "0"],
    );
    let probe = Client::new(&server, None);
    let open = || probe.call("GET", "/healthz", None).1["open_tenants"].as_u64();
    let until = |want: u64| {
        // Eviction runs every half second on tenants idle for 2 s.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while open() != Some(want) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        open()
    };
    let (a, b) = (
        Client::new(&server, Some(&ta)),
        Client::new(&server, Some(&tb)),
    );
    a.observe(keyed("Kim Tanaka", "day_rate", "$900", 2));
    b.observe(keyed("Kim Tanaka", "day_rate", "$1200", 3));
    assert_eq!(until(0), Some(0), "idle tenants are closed");
    let scrape = metrics(dir, &server)();
    assert!(
        scrape.contains("pfm_tenant_opens_total 2\n")
            && scrape.contains("pfm_tenant_evictions_total 2\n"),
        "{scrape}"
    );
    let longest: f64 = scrape
        .lines()
        .find_map(|l| l.strip_prefix("pfm_tenant_open_seconds{quantile=\"1\"} "))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    assert!(longest > 0.0 && longest < 60.0, "{scrape}");
    let ask = json!({"context": "what is Kim's day rate", "participants": ["Kim Tanaka"], "at": "2026-01-01"});
    let reopened = a.ok("POST", "/v1/retrieve", Some(ask.clone()));
    let block = reopened["block"].as_str().unwrap();
    assert!(block.contains("900") && !block.contains("1200"), "{block}");
    assert!(
        reopened["timings"]["open_us"].as_f64() > Some(0.0),
        "{reopened}"
    );
    let warm = a.ok("POST", "/v1/retrieve", Some(ask));
    assert!(warm["timings"]["open_us"].is_null(), "{warm}");
    // Its close wrote a checkpoint (it had written since its open), and
    // the reopen read that instead of the rows.
    let scrape = metrics(dir, &server)();
    assert!(
        scrape.contains("pfm_tenant_checkpoint_opens_total 1\n"),
        "{scrape}"
    );
    a.observe(keyed("Kim Tanaka", "day_rate", "$950", 4));
    let ctx = b.ok(
        "POST",
        "/v1/contexts",
        Some(json!({"context": "day rate", "participants": ["Kim Tanaka"]})),
    );
    // alpha goes again; beta, with a registered context, stays.
    assert_eq!(until(1), Some(1));
    let snap = b.ok(
        "POST",
        "/v1/retrieve",
        Some(json!({"context_id": ctx["id"]})),
    );
    assert!(snap["block"].as_str().unwrap().contains("1200"), "{snap}");
    let block = a.retrieve("what is Kim's day rate", &["Kim Tanaka"]);
    assert!(block.contains("950") && !block.contains("$900"), "{block}");
    // Closed and reopened, each tenant still reads only its own facts.
    assert_eq!(until(1), Some(1));
    let block = b.retrieve("what is Kim's day rate", &["Kim Tanaka"]);
    assert!(block.contains("1200") && !block.contains("950"), "{block}");
    for i in 0..4 {
        let (_, v) = b.call("GET", &format!("/v1/facts/{i}"), None);
        assert!(
            !v.to_string().contains("950"),
            "beta read alpha's fact {i}: {v}"
        );
    }
    server.stop();
}

/// `pfm tenant delete` on a running server: the tenant's tokens stop
/// working, the server closes it, no byte of its text is left under the
/// data directory, and a new tenant of the same name starts empty.
#[test]
fn a_deleted_tenant_leaves_nothing_and_its_name_starts_empty() {
    let scratch = tempdir("delete");
    let dir = scratch.path();
    let (ta, tb) = (token(dir, "alpha"), token(dir, "beta"));
    let server = Server::start(dir, &[]);
    let a = Client::new(&server, Some(&ta));
    let secret = "Kim Tanaka's vault code is 77alpha31.";
    a.observe(json!({"text": secret, "participants": ["Kim Tanaka"], "at": "2025-06-02"}));
    let b = Client::new(&server, Some(&tb));
    b.observe(json!({"text": "Kim Tanaka likes green tea.", "participants": ["Kim Tanaka"], "at": "2025-06-03"}));
    let listed = pfm(&["tenant", "list"], dir);
    assert!(
        listed.contains("alpha") && listed.contains("beta"),
        "{listed}"
    );

    pfm(&["tenant", "delete", "--tenant", "alpha"], dir);
    assert!(
        !grep(dir, "77alpha31"),
        "the deleted tenant's text is on disk"
    );
    let (status, _) = a.call(
        "POST",
        "/v1/retrieve",
        Some(json!({"context": "vault code"})),
    );
    assert_eq!(status, 401);
    let listed = pfm(&["tenant", "list"], dir);
    assert!(
        !listed.contains("alpha") && listed.contains("beta"),
        "{listed}"
    );
    // The name again: a new, empty tenant (nothing comes back from memory).
    let fresh = Client::new(&server, Some(&token(dir, "alpha")));
    let block = fresh.retrieve("what is Kim's vault code", &["Kim Tanaka"]);
    assert!(!block.contains("77alpha31"), "{block}");
    let kept = b.retrieve("what does Kim like", &["Kim Tanaka"]);
    assert!(kept.contains("green tea"), "{kept}");
    server.stop();
}

/// `pfm tenant create --ordering event-time`: the tenant's ledger records
/// its ordering before any write, so a late-arriving old message becomes
/// history on the server, whatever `pfm serve --ordering` says.
#[test]
fn a_tenant_created_under_event_time_keeps_it() {
    let scratch = tempdir("create");
    let dir = scratch.path();
    let tok = pfm(
        &[
            "tenant",
            "create",
            "--tenant",
            "log",
            "--ordering",
            "event-time",
        ],
        dir,
    )
    .trim()
    .to_owned();
    let server = Server::start(dir, &[]);
    let c = Client::new(&server, Some(&tok));
    c.observe(keyed("Kim Tanaka", "day_rate", "$900", 10));
    // Stated earlier, arriving later: history under event time.
    c.observe(keyed("Kim Tanaka", "day_rate", "$700", 3));
    let block = c.retrieve("what is Kim's day rate", &["Kim Tanaka"]);
    assert!(block.contains("900") && !block.contains("700"), "{block}");
    server.stop();
    let (status, _) = std::process::Command::new(support::PFM)
        .args(["tenant", "create", "--tenant", "log", "--data-dir"])
        .arg(dir)
        .output()
        .map(|o| (o.status, ()))
        .unwrap();
    assert!(
        !status.success(),
        "a second create of one tenant is refused"
    );
}

/// Erased text is gone from answers, from the data directory and from
/// the tenant's checkpoints: the stop before the erasure checkpoints the
/// text, and the reopen reads that checkpoint.
#[test]
fn erased_text_never_comes_back() {
    let scratch = tempdir("erasure");
    let dir = scratch.path();
    let tok = token(dir, "erase");
    let every_tenant = ["--checkpoint-min-facts", "0"];
    let server = Server::start(dir, &every_tenant);
    let c = Client::new(&server, Some(&tok));
    let old = c.observe(keyed("Ana Silva", "pin", "pin4431zz", 1));
    let new = c.observe(keyed("Ana Silva", "pin", "pin9907qq", 2));
    assert_eq!(new["outcome"], "superseded");
    c.observe(json!({"text": "Ana Silva plays the cello.", "participants": ["Ana Silva"], "at": "2025-06-03"}));
    server.stop();
    assert!(grep(dir, "pin9907qq"), "the checkpoint and rows hold it");
    let server = Server::start(dir, &every_tenant);
    let c = Client::new(&server, Some(&tok));
    let erased = c.ok(
        "POST",
        "/v1/forget",
        Some(json!({"key": {"entity": "Ana Silva", "slot": "pin"}})),
    );
    let mut ids: Vec<u64> = erased["erased"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    ids.sort();
    assert_eq!(
        ids,
        [old["fact"].as_u64().unwrap(), new["fact"].as_u64().unwrap()]
    );

    let check = |c: &Client| {
        for id in &ids {
            let (status, v) = c.call("GET", &format!("/v1/facts/{id}"), None);
            assert_eq!(
                (status, v["error"]["code"].as_str()),
                (404, Some("unknown_fact"))
            );
        }
        for mode in ["snapshot", "fresh"] {
            let v = c.ok("POST", "/v1/retrieve", Some(json!({"context": "what is Ana's pin", "participants": ["Ana Silva"], "mode": mode, "omega_us": 200000, "deadline_ms": 500})));
            let text = v.to_string();
            assert!(
                !text.contains("pin4431zz") && !text.contains("pin9907qq"),
                "{text}"
            );
            assert!(text.contains("cello"), "the rest stays: {text}");
        }
    };
    check(&c);
    server.stop();
    for needle in ["pin4431zz", "pin9907qq"] {
        assert!(
            !grep(dir, needle),
            "{needle} is still in the data directory"
        );
    }
    let server = Server::start(dir, &every_tenant);
    check(&Client::new(&server, Some(&tok)));
    let scrape = metrics(dir, &server)();
    assert!(
        scrape.contains("pfm_tenant_checkpoint_opens_total 1\n"),
        "the reopen after the erasure read the stop's checkpoint: {scrape}"
    );
    server.stop();
}

#[test]
fn bad_input_gets_a_documented_4xx_and_the_server_keeps_serving() {
    let scratch = tempdir("bad-input");
    let dir = scratch.path();
    let tok = token(dir, "bad");
    let server = Server::start(dir, &["--max-body", "2048", "--max-batch", "3"]);
    let c = Client::new(&server, Some(&tok));
    let cases: Vec<(&str, &str, Vec<u8>, u16, &str)> = vec![
        (
            "POST",
            "/v1/observe",
            b"{\"text\": ".to_vec(),
            400,
            "invalid_json",
        ),
        (
            "POST",
            "/v1/observe",
            b"[1, 2".to_vec(),
            400,
            "invalid_json",
        ),
        (
            "POST",
            "/v1/observe",
            br#"{"text": 42}"#.to_vec(),
            422,
            "invalid_body",
        ),
        (
            "POST",
            "/v1/observe",
            br#"{"text": "hi", "colour": "red"}"#.to_vec(),
            422,
            "invalid_body",
        ),
        (
            "POST",
            "/v1/observe",
            br#"{"participants": ["A"]}"#.to_vec(),
            422,
            "invalid_body",
        ),
        (
            "POST",
            "/v1/observe",
            br#"{"text": "   "}"#.to_vec(),
            400,
            "invalid_input",
        ),
        (
            "POST",
            "/v1/observe",
            br#"{"text": "hi", "at": "yesterday-ish"}"#.to_vec(),
            400,
            "invalid_input",
        ),
        (
            "POST",
            "/v1/observe",
            serde_json::to_vec(&json!({"text": "x".repeat(4000)})).unwrap(),
            413,
            "payload_too_large",
        ),
        (
            "POST",
            "/v1/observe",
            serde_json::to_vec(&json!({"observations": vec![json!({"text": "a b"}); 4]})).unwrap(),
            400,
            "batch_too_large",
        ),
        (
            "POST",
            "/v1/retrieve",
            br#"{"context": "x", "k": 0}"#.to_vec(),
            400,
            "invalid_input",
        ),
        (
            "POST",
            "/v1/retrieve",
            br#"{"context": "x", "k": "six"}"#.to_vec(),
            422,
            "invalid_body",
        ),
        (
            "POST",
            "/v1/retrieve",
            br#"{"context": "x", "rules": {"identity": "psychic"}}"#.to_vec(),
            400,
            "invalid_body",
        ),
        (
            "POST",
            "/v1/retrieve",
            br#"{"context": "x", "mode": "fresh", "omega_us": 0}"#.to_vec(),
            400,
            "invalid_input",
        ),
        (
            "POST",
            "/v1/retrieve",
            br#"{"context_id": 999}"#.to_vec(),
            404,
            "unknown_context",
        ),
        ("GET", "/v1/facts/12345", Vec::new(), 404, "unknown_fact"),
        (
            "GET",
            "/v1/facts/minus-one",
            Vec::new(),
            400,
            "invalid_input",
        ),
        (
            "POST",
            "/v1/forget",
            br#"{"fact": 1, "entity": "A"}"#.to_vec(),
            400,
            "invalid_input",
        ),
        (
            "DELETE",
            "/v1/contexts/77",
            Vec::new(),
            404,
            "unknown_context",
        ),
        ("GET", "/v1/observe", Vec::new(), 405, "method_not_allowed"),
        ("GET", "/v2/anything", Vec::new(), 404, "not_found"),
    ];
    for (method, path, body, status, code) in cases {
        let (got, v) = c.send(method, path, Some(&body)).unwrap();
        assert_eq!(
            (got, v["error"]["code"].as_str()),
            (status, Some(code)),
            "{method} {path} {}: {v}",
            String::from_utf8_lossy(&body)
        );
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
    }
    for (tokened, code) in [
        (Some("pfm_not_a_real_token"), "unauthorized"),
        (None, "unauthorized"),
    ] {
        let (got, v) =
            Client::new(&server, tokened).call("POST", "/v1/observe", Some(json!({"text": "hi"})));
        assert_eq!((got, v["error"]["code"].as_str()), (401, Some(code)));
    }
    // Still serving, and nothing bad was stored.
    let (status, health) = c.call("GET", "/healthz", None);
    assert_eq!((status, health["status"].as_str()), (200, Some("ok")));
    c.observe(json!({"text": "Lee Park moved to Oslo.", "participants": ["Lee Park"], "at": "2025-06-02"}));
    assert!(
        c.retrieve("where did Lee move", &["Lee Park"])
            .contains("Oslo")
    );
    assert_eq!(
        c.ok("POST", "/v1/retrieve", Some(json!({"context": "x"})))["store_seq"],
        1
    );
    server.stop();
}

#[test]
fn a_tenant_over_its_rate_limit_gets_429() {
    let scratch = tempdir("rate");
    let dir = scratch.path();
    let tok = token(dir, "rate");
    let server = Server::start(dir, &["--rate-limit", "3"]);
    let c = Client::new(&server, Some(&tok));
    let statuses: Vec<u16> = (0..10)
        .map(|_| {
            c.call("POST", "/v1/retrieve", Some(json!({"context": "x"})))
                .0
        })
        .collect();
    assert!(
        statuses.contains(&200) && statuses.contains(&429),
        "{statuses:?}"
    );
    let (_, v) = c.call("POST", "/v1/retrieve", Some(json!({"context": "x"})));
    assert_eq!(v["error"]["code"], "rate_limited");
    server.stop();
}
