//! `pfm load --mcp`: the MCP tools' round trip, measured side by side in
//! one run on one store. It starts `pfm serve` on a fresh data directory
//! (this very binary, on a free loopback port), preloads `facts` synthetic
//! facts over `/v1/observe`, then sends the same `requests` recalls three
//! ways, one after another, one at a time:
//!
//! 1. `POST /v1/retrieve` (the HTTP/JSON API, the reference);
//! 2. `tools/call recall` to `/mcp` (streamable HTTP, stateless JSON);
//! 3. `tools/call recall` to `pfm mcp` over stdio (the server is stopped
//!    first and `pfm mcp` opens the same tenant: one process at a time).
//!
//! Each is reported as client round trip (this process's clock, request
//! written to answer read) and server time (`timings.total_us` of the
//! answer: the retrieval inside the server). The stdio client here writes
//! JSON-RPC lines itself: it is the benchmark's instrument, not the
//! product (the product's MCP server is rmcp, and its end-to-end test
//! drives it with the official Python SDK).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use serde::Serialize;
use serde_json::{Value, json};

use super::http::{Client, preload};
use super::{Quantiles, quantiles_of};
use pfm::error::{Error, Result};
use pfm_synth::{SynthQuery, Vocabulary};

/// The protocol revision both clients announce.
const PROTOCOL: &str = "2025-11-25";

/// What to run.
#[derive(Clone, Debug)]
pub struct McpLoadOptions {
    /// The `pfm` binary to start (`serve`, then `mcp`).
    pub pfm: PathBuf,
    /// A data directory to create (it must not exist).
    pub data_dir: PathBuf,
    /// Facts to preload.
    pub facts: u64,
    /// Recalls per transport.
    pub requests: usize,
    /// Corpus seed.
    pub seed: u64,
    /// Corpus vocabulary.
    pub vocabulary: Vocabulary,
}

/// One transport's latencies, in µs.
#[derive(Clone, Debug, Serialize)]
pub struct PathLatency {
    /// What was called.
    pub name: &'static str,
    /// Client round trip.
    pub client_us: Quantiles,
    /// The server's own time (`timings.total_us`).
    pub server_us: Quantiles,
    /// Answers that were errors.
    pub errors: usize,
}

/// The run's results.
#[derive(Clone, Debug, Serialize)]
pub struct McpLoadReport {
    /// Facts in the store.
    pub facts: u64,
    /// Recalls per transport.
    pub requests: usize,
    /// `/v1/retrieve`, `/mcp` and stdio, in that order.
    pub paths: Vec<PathLatency>,
}

/// Runs the three phases; `progress` gets a line per phase.
pub fn run(options: &McpLoadOptions, progress: &dyn Fn(&str)) -> Result<McpLoadReport> {
    if options.data_dir.exists() {
        return Err(Error::InvalidConfig(format!(
            "{} exists: give a data directory to create",
            options.data_dir.display()
        )));
    }
    let (facts, queries) =
        pfm_synth::generate(options.facts.max(1), options.seed, options.vocabulary, 256);
    let mut server = Server::start(&options.pfm, &options.data_dir)?;
    let client = Client::new(&server.base);
    progress(&format!("preloading {} facts", options.facts));
    preload(&client, &server.token, &facts[..options.facts as usize])?;
    let query = |i: usize| -> Value {
        let q: &SynthQuery = &queries[i % queries.len()];
        json!({"context": q.text, "participants": q.participants, "at": q.at * 1000})
    };

    progress(&format!("{} recalls over /v1/retrieve", options.requests));
    let api = measure("POST /v1/retrieve", options.requests, |i| {
        client.post(&server.token, "/v1/retrieve", &query(i))
    });
    progress(&format!("{} recalls over /mcp", options.requests));
    let headers = [
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", PROTOCOL),
    ];
    client.post_with(&server.token, "/mcp", &initialize(), &headers)?;
    let http = measure("tools/call recall, /mcp", options.requests, |i| {
        let answer = client.post_with(&server.token, "/mcp", &recall(i, query(i)), &headers)?;
        tool_result(answer)
    });
    server.stop()?;

    progress(&format!(
        "{} recalls over pfm mcp (stdio)",
        options.requests
    ));
    let mut stdio = StdioClient::start(&options.pfm, &options.data_dir, &server.tenant)?;
    stdio.call(&initialize())?;
    stdio.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
    let over_stdio = measure("tools/call recall, stdio", options.requests, |i| {
        tool_result(stdio.call(&recall(i, query(i)))?)
    });
    stdio.stop()?;
    Ok(McpLoadReport {
        facts: options.facts,
        requests: options.requests,
        paths: vec![api, http, over_stdio],
    })
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": PROTOCOL, "capabilities": {},
        "clientInfo": {"name": "pfm-load", "version": env!("CARGO_PKG_VERSION")}}})
}

fn recall(i: usize, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
           "params": {"name": "recall", "arguments": arguments}})
}

/// A JSON-RPC answer's tool result, or its error.
fn tool_result(answer: Value) -> Result<Value> {
    let result = &answer["result"];
    if result.is_null() || result["isError"] == true {
        return Err(Error::ShutDown(format!("recall failed: {answer}")));
    }
    Ok(result["structuredContent"].clone())
}

/// Times `n` calls of `call`, each answering a retrieval's JSON.
fn measure(
    name: &'static str,
    n: usize,
    mut call: impl FnMut(usize) -> Result<Value>,
) -> PathLatency {
    let (mut client, mut server, mut errors) = (Vec::new(), Vec::new(), 0);
    for i in 0..n {
        let t = Instant::now();
        match call(i) {
            Ok(out) => {
                client.push(t.elapsed().as_micros() as u64);
                server.push(out["timings"]["total_us"].as_f64().unwrap_or(0.0) as u64);
            }
            Err(_) => errors += 1,
        }
    }
    PathLatency {
        name,
        client_us: quantiles_of(client),
        server_us: quantiles_of(server),
        errors,
    }
}

/// A child process, killed and reaped when dropped: a run that fails
/// midway leaves no server behind.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `pfm serve` on a free loopback port, with one tenant.
struct Server {
    child: Reaped,
    base: String,
    token: String,
    tenant: String,
}

impl Server {
    fn start(pfm: &Path, data_dir: &Path) -> Result<Server> {
        let tenant = "bench".to_owned();
        let mut child = Reaped(
            Command::new(pfm)
                .args(["serve", "--addr", "127.0.0.1:0", "--rate-limit", "1000000"])
                .args(["--observe-rate", "1000000", "--bootstrap-tenant", &tenant])
                .arg("--data-dir")
                .arg(data_dir)
                .env("RUST_LOG", "warn")
                .stdout(Stdio::piped())
                .spawn()
                .map_err(|e| Error::ShutDown(format!("cannot start {}: {e}", pfm.display())))?,
        );
        let stdout = child.0.stdout.take().ok_or_else(|| gone("pfm serve"))?;
        let (mut token, mut base) = (None, None);
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| Error::ShutDown(format!("pfm serve: {e}")))?;
            if let Some(t) = line.strip_prefix(&format!("token for tenant {tenant}: ")) {
                token = Some(t.to_owned());
            }
            if let Some(a) = line.strip_prefix("listening on ") {
                base = Some(format!("http://{a}"));
                break;
            }
        }
        Ok(Server {
            child,
            base: base.ok_or_else(|| gone("pfm serve"))?,
            token: token.ok_or_else(|| gone("pfm serve's bootstrap token"))?,
            tenant,
        })
    }

    /// SIGTERM, and waits for the ledgers to be flushed.
    fn stop(&mut self) -> Result<()> {
        let pid = self.child.0.id() as i32;
        // SAFETY: kill(2) with a child's pid has no memory-safety preconditions.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        self.child
            .0
            .wait()
            .map_err(|e| Error::ShutDown(format!("pfm serve: {e}")))?;
        Ok(())
    }
}

/// `pfm mcp` with its stdin and stdout.
struct StdioClient {
    child: Reaped,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl StdioClient {
    fn start(pfm: &Path, data_dir: &Path, tenant: &str) -> Result<StdioClient> {
        let mut child = Reaped(
            Command::new(pfm)
                .args(["mcp", "--tenant", tenant, "--data-dir"])
                .arg(data_dir)
                .env("RUST_LOG", "warn")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .map_err(|e| Error::ShutDown(format!("cannot start pfm mcp: {e}")))?,
        );
        Ok(StdioClient {
            stdin: child.0.stdin.take().ok_or_else(|| gone("pfm mcp"))?,
            stdout: BufReader::new(child.0.stdout.take().ok_or_else(|| gone("pfm mcp"))?),
            child,
        })
    }

    fn send(&mut self, message: &Value) -> Result<()> {
        writeln!(self.stdin, "{message}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| Error::ShutDown(format!("pfm mcp: {e}")))
    }

    /// Sends a request and reads its answer (the next line).
    fn call(&mut self, message: &Value) -> Result<Value> {
        self.send(message)?;
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .map_err(|e| Error::ShutDown(format!("pfm mcp: {e}")))?;
        serde_json::from_str(&line).map_err(|e| Error::ShutDown(format!("pfm mcp: {e}: {line}")))
    }

    /// Closes stdin (the client leaves) and waits for the exit.
    fn stop(self) -> Result<()> {
        let StdioClient {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        child
            .0
            .wait()
            .map_err(|e| Error::ShutDown(format!("pfm mcp: {e}")))?;
        Ok(())
    }
}

fn gone(what: &str) -> Error {
    Error::ShutDown(format!("{what} exited before it was ready"))
}

impl McpLoadReport {
    /// The three paths as a markdown table.
    pub fn table(&self) -> String {
        let mut out = format!(
            "recall on a {}-fact store, {} calls each, one at a time (µs)\n\n\
             | path | client p50 | client p99 | server p50 | server p99 | errors |\n\
             |---|---|---|---|---|---|\n",
            self.facts, self.requests
        );
        for p in &self.paths {
            out += &format!(
                "| {} | {:.0} | {:.0} | {:.0} | {:.0} | {} |\n",
                p.name,
                p.client_us.p50,
                p.client_us.p99,
                p.server_us.p50,
                p.server_us.p99,
                p.errors
            );
        }
        out
    }
}
