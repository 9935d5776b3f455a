//! The MCP tools end to end, driven by a real client: the official MCP
//! Python SDK (`scripts/fetch-mcp-client` installs it, pinned) runs
//! `mcp_scenario.py` against `pfm mcp` over stdio and against `/mcp` on
//! `pfm serve` over streamable HTTP. Never skipped: without the SDK the
//! tests fail and name the script.

mod support;

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;
use support::{Client, PFM, Server, tempdir, token};

/// The Python with the pinned SDK: `$PFM_MCP_PYTHON`, else the venv
/// `scripts/fetch-mcp-client` makes at the repository root.
fn python() -> PathBuf {
    let python = std::env::var_os("PFM_MCP_PYTHON").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../mcp-client/bin/python"),
        PathBuf::from,
    );
    assert!(
        python.exists(),
        "{} is missing: run scripts/fetch-mcp-client (the README's test command does)",
        python.display()
    );
    python
}

/// Runs the scenario with `args`; returns its transcript, one JSON value
/// a line, after checking it passed.
fn scenario(args: &[&str]) -> Vec<Value> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_scenario.py");
    let out = Command::new(python())
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the MCP client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The transcript's calls of `tool`, in order.
fn calls<'a>(transcript: &'a [Value], tool: &str) -> Vec<&'a Value> {
    transcript.iter().filter(|c| c["tool"] == tool).collect()
}

#[test]
fn the_python_sdk_drives_pfm_mcp_over_stdio() {
    let scratch = tempdir("mcp-stdio");
    let dir = scratch.path();
    let transcript = scenario(&["stdio", PFM, dir.to_str().unwrap()]);
    assert_eq!(transcript.last().unwrap()["passed"], "stdio");
    assert_eq!(calls(&transcript, "remember").len(), 7);

    // The tenant is an ordinary tenant of the data directory: `pfm serve`
    // on it recalls what the MCP session remembered (and not what it
    // forgot).
    let token = token(dir, "me");
    let server = Server::start(dir, &[]);
    let me = Client::new(&server, Some(&token));
    let block = me.retrieve("what does Alex Rivera drink", &["Alex Rivera"]);
    assert!(block.contains("prefers tea"), "{block}");
    let block = me.retrieve("when is the standup with Alex", &["Alex Rivera"]);
    assert!(!block.contains("standup"), "{block}");
    server.stop();
}

#[test]
fn the_python_sdk_drives_mcp_over_streamable_http_with_a_bearer_token() {
    let scratch = tempdir("mcp-http");
    let dir = scratch.path();
    let alpha = token(dir, "alpha");
    let beta = token(dir, "beta");
    let server = Server::start(dir, &[]);
    let url = format!("{}/mcp", server.base);
    let transcript = scenario(&["http", &url, &alpha]);
    assert_eq!(transcript.last().unwrap()["passed"], "http");

    // The token names the tenant: what alpha's agent remembered is in
    // alpha's memory, not beta's.
    let block = Client::new(&server, Some(&alpha)).retrieve("what does Alex Rivera drink", &[]);
    assert!(block.contains("prefers tea"), "{block}");
    let block = Client::new(&server, Some(&beta)).retrieve("what does Alex Rivera drink", &[]);
    assert!(!block.contains("tea"), "{block}");

    // No token, or an unknown one: 401 before any MCP message is read.
    let initialize = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "0"}}});
    for client in [
        Client::new(&server, None),
        Client::new(&server, Some("pfm_nope")),
    ] {
        let (status, body) = client.call("POST", "/mcp", Some(initialize.clone()));
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (401, Some("unauthorized")),
            "{body}"
        );
    }
    server.stop();
}

/// `--max-body` bounds a stdio message as it bounds an HTTP body: a longer
/// line is dropped unread (never answered) and the connection keeps
/// serving. The oversized call is a recall whose context is within
/// `/v1`'s own limit, so only the transport's bound can refuse it.
#[test]
fn pfm_mcp_drops_a_message_over_max_body_and_keeps_serving() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    let scratch = tempdir("mcp-bound");
    let dir = scratch.path();
    let mut child = Command::new(PFM)
        .args(["mcp", "--tenant", "me", "--max-body", "2000", "--data-dir"])
        .arg(dir)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // The ids answered up to and including `id`.
    let mut answered_until = |id: u64| {
        let mut ids = Vec::new();
        while ids.last() != Some(&id) {
            let mut line = String::new();
            stdout.read_line(&mut line).unwrap();
            let answer: Value = serde_json::from_str(&line).unwrap();
            ids.push(answer["id"].as_u64().unwrap());
        }
        ids
    };
    let mut send = |message: Value| writeln!(stdin, "{message}").and_then(|()| stdin.flush());
    let recall = |id: u64, context: &str| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "recall", "arguments": {"context": context}}})
    };
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "0"}}}),
    )
    .unwrap();
    assert_eq!(answered_until(1), [1]);
    send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
    send(recall(2, &"where is the standup ".repeat(150))).unwrap();
    send(recall(3, "where is the standup")).unwrap();
    assert_eq!(answered_until(3), [3], "the oversized call is not answered");
    send(recall(4, "where is the standup")).unwrap();
    assert_eq!(answered_until(4), [4], "the oversized call is not answered");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
