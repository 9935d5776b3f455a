//! What the `pfm serve` end-to-end tests share: the server as a child
//! process on a free loopback port, a token, a scratch directory, and a
//! JSON client for one tenant.
#![allow(dead_code)] // each test file uses its own part of it

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

pub const PFM: &str = env!("CARGO_BIN_EXE_pfm");

/// A running server.
pub struct Server {
    child: Child,
    pub base: String,
}

impl Server {
    pub fn start(dir: &Path, extra: &[&str]) -> Server {
        let mut child = Command::new(PFM)
            .args(["serve", "--addr", "127.0.0.1:0", "--data-dir"])
            .arg(dir)
            .args(extra)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("pfm serve starts");
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let addr = loop {
            let line = lines
                .next()
                .expect("the server prints its address before anything else fails")
                .unwrap();
            if let Some(a) = line.strip_prefix("listening on ") {
                break a.to_owned();
            }
        };
        Server {
            child,
            base: format!("http://{addr}"),
        }
    }

    /// SIGKILL while clients still hold the server; `kill9` reaps it after.
    pub fn sigkill(&self) {
        let status = Command::new("kill")
            .args(["-KILL", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success(), "kill -KILL failed");
    }

    pub fn kill9(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    pub fn stop(mut self) {
        // SIGTERM: graceful shutdown.
        let pid = self.child.id() as i32;
        // SAFETY: kill(2) with a child's pid has no memory-safety preconditions.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "graceful shutdown exits 0: {status}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `pfm ARGS --data-dir DIR` and returns its standard output.
pub fn pfm(args: &[&str], dir: &Path) -> String {
    let out = Command::new(PFM)
        .args(args)
        .arg("--data-dir")
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub fn token(dir: &Path, tenant: &str) -> String {
    pfm(&["token", "create", "--tenant", tenant], dir)
        .trim()
        .to_owned()
}

/// Whether any file under `dir` contains `needle`.
pub fn grep(dir: &Path, needle: &str) -> bool {
    std::fs::read_dir(dir).unwrap().any(|e| {
        let path = e.unwrap().path();
        if path.is_dir() {
            return grep(&path, needle);
        }
        let bytes = std::fs::read(&path).unwrap();
        bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
    })
}

/// A fresh scratch directory `pfm-server-{name}-…` under the system's temp
/// directory, removed with all it holds when the guard drops: at the end of
/// the test, passed or failed (a test that spawns `pfm serve` declares it
/// before the [`Server`], so the server is gone first).
pub fn tempdir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("pfm-server-{name}-"))
        .tempdir()
        .unwrap()
}

/// A client for one tenant (or none).
#[derive(Clone)]
pub struct Client {
    agent: ureq::Agent,
    base: String,
    token: Option<String>,
}

impl Client {
    pub fn new(server: &Server, token: Option<&str>) -> Client {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(20)))
            .build();
        Client {
            agent: ureq::Agent::new_with_config(config),
            base: server.base.clone(),
            token: token.map(str::to_owned),
        }
    }

    /// The status and the body as text.
    pub fn raw(
        &self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
    ) -> Result<(u16, String), String> {
        let url = format!("{}{path}", self.base);
        let mut req = ureq::http::Request::builder()
            .method(method)
            .uri(&url)
            .header("content-type", "application/json");
        if let Some(t) = &self.token {
            req = req.header("authorization", format!("Bearer {t}"));
        }
        let req = req.body(body.unwrap_or_default().to_vec()).unwrap();
        let mut resp = self.agent.run(req).map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        let text = resp
            .body_mut()
            .read_to_string()
            .map_err(|e| e.to_string())?;
        Ok((status, text))
    }

    /// The status and the body as JSON (`null` when empty).
    pub fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
    ) -> Result<(u16, Value), String> {
        let (status, text) = self.raw(method, path, body)?;
        let value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))?
        };
        Ok((status, value))
    }

    pub fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let bytes = body.map(|b| serde_json::to_vec(&b).unwrap());
        self.send(method, path, bytes.as_deref()).unwrap()
    }

    pub fn ok(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let (status, v) = self.call(method, path, body);
        assert!(
            (200..300).contains(&status),
            "{method} {path}: {status} {v}"
        );
        v
    }

    pub fn observe(&self, o: Value) -> Value {
        self.ok("POST", "/v1/observe", Some(o))["receipts"][0].clone()
    }

    pub fn retrieve(&self, context: &str, participants: &[&str]) -> String {
        let v = self.ok(
            "POST",
            "/v1/retrieve",
            Some(json!({"context": context, "participants": participants, "at": "2026-01-01"})),
        );
        v["block"].as_str().unwrap().to_owned()
    }
}

pub fn keyed(entity: &str, slot: &str, value: &str, day: u32) -> Value {
    json!({
        "text": format!("{entity}'s {slot} is now {value}."),
        "key": {"entity": entity, "slot": slot},
        "value": value,
        "participants": [entity],
        "at": format!("2025-06-{:02}", day % 28 + 1),
    })
}

/// Creates a metrics token, waits until the server has taken it (the
/// token file is reread every 500 ms), and returns a scrape of `/metrics`.
pub fn metrics<'a>(dir: &Path, server: &'a Server) -> impl Fn() -> String + 'a {
    let token = pfm(&["token", "create", "--metrics"], dir)
        .trim()
        .to_owned();
    let started = std::time::Instant::now();
    let client = Client::new(server, Some(&token));
    while client.raw("GET", "/metrics", None).unwrap().0 != 200 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the new metrics token never took effect"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    move || {
        let (status, text) = client.raw("GET", "/metrics", None).unwrap();
        assert_eq!(status, 200, "{text}");
        text
    }
}
