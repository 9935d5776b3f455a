//! `pfm load --target URL`: the load test against a running `pfm serve`,
//! over HTTP. Three phases on the synthetic corpus:
//!
//! 1. **Preload**: `facts` observations in batches of [`PRELOAD_BATCH`],
//!    each fact under its own key (durable batch ingestion rate).
//! 2. **Ingest**: `concurrency` clients post single revisions as fast as
//!    the server acknowledges them for `ingest_secs` (the sustained durable
//!    rate of single observations, which is what group commit batches).
//! 3. **Serve**: `concurrency` clients make `requests` retrievals in the
//!    chosen modes while one more client ingests revisions at
//!    `ingest_rate`; end-to-end latency (client clock) is reported beside
//!    the server's own timings from each response.
//!
//! Each client thread keeps one keep-alive connection (ureq's agent).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use super::{Mode, Quantiles, quantiles_of};
use pfm::error::{Error, Result};
use pfm_synth::{SynthFact, Vocabulary};

/// Observations per preload request.
pub const PRELOAD_BATCH: usize = 500;

/// What to run.
#[derive(Clone, Debug)]
pub struct HttpLoadOptions {
    /// Base URL of the server, e.g. `http://127.0.0.1:7878`.
    pub target: String,
    /// A tenant's bearer token.
    pub token: String,
    /// Facts to preload (0 skips the preload: the tenant already holds them).
    pub facts: u64,
    /// Seconds of the single-observation ingest phase (0 skips it).
    pub ingest_secs: f64,
    /// Revisions per second during the serve phase.
    pub ingest_rate: f64,
    /// Retrievals in the serve phase (per mode).
    pub requests: usize,
    /// Client threads.
    pub concurrency: usize,
    /// Modes to exercise (`both`: a snapshot then a fresh request each time).
    pub mode: Mode,
    /// Fresh-mode waiting budget.
    pub omega_us: u64,
    /// Corpus seed.
    pub seed: u64,
    /// Corpus vocabulary.
    pub vocabulary: Vocabulary,
}

/// Latency of one request kind: the client's clock and the server's.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Latency {
    /// Requests made.
    pub n: usize,
    /// End to end, as the client saw it (µs).
    pub client_us: Quantiles,
    /// The server's own time for the call (`timings.total_us`).
    pub server_us: Quantiles,
    /// Snapshot read `r` as the server measured it.
    pub read_us: Quantiles,
    /// Fresh-mode wait as the server measured it.
    pub wait_us: Quantiles,
    /// Responses that fell back to a snapshot (fresh mode).
    pub fallbacks: usize,
    /// Error responses.
    pub errors: usize,
}

/// What a run measured.
#[derive(Clone, Debug, Serialize)]
pub struct HttpLoadReport {
    /// The server.
    pub target: String,
    /// Client threads.
    pub concurrency: usize,
    /// Facts preloaded.
    pub preloaded: u64,
    /// Durable batch ingestion during the preload (observations / s).
    pub preload_rate: f64,
    /// Single observations acknowledged in the ingest phase.
    pub ingested: usize,
    /// Their durable rate (observations / s).
    pub ingest_rate: f64,
    /// Observe latency of the ingest phase (client clock, µs).
    pub observe_us: Quantiles,
    /// Snapshot-mode retrievals.
    pub snapshot: Latency,
    /// Fresh-mode retrievals.
    pub fresh: Latency,
    /// Revisions acknowledged during the serve phase, per second.
    pub serve_ingest_rate: f64,
    /// Seconds the serve phase took.
    pub seconds: f64,
}

/// One keep-alive connection to the server (ureq's agent), for one thread.
pub(super) struct Client {
    agent: ureq::Agent,
    base: String,
}

impl Client {
    pub(super) fn new(target: &str) -> Client {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .build();
        Client {
            agent: ureq::Agent::new_with_config(config),
            base: target.trim_end_matches('/').to_owned(),
        }
    }

    /// POSTs JSON with `token`; the response body on 2xx, else the error
    /// body as text.
    pub(super) fn post(&self, token: &str, path: &str, body: &Value) -> Result<Value> {
        self.post_with(token, path, body, &[])
    }

    /// [`Client::post`] with `headers` added.
    pub(super) fn post_with(
        &self,
        token: &str,
        path: &str,
        body: &Value,
        headers: &[(&str, &str)],
    ) -> Result<Value> {
        let url = format!("{}{path}", self.base);
        let mut request = self
            .agent
            .post(&url)
            .header("Authorization", &format!("Bearer {token}"));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = request.send_json(body);
        let text = Client::text(&url, response)?;
        serde_json::from_str(&text).map_err(|e| Error::ShutDown(format!("{url}: {e}")))
    }

    /// GETs `path` (with `token`, if any) as text.
    pub(super) fn get(&self, token: Option<&str>, path: &str) -> Result<String> {
        let url = format!("{}{path}", self.base);
        let mut request = self.agent.get(&url);
        if let Some(token) = token {
            request = request.header("Authorization", &format!("Bearer {token}"));
        }
        Client::text(&url, request.call())
    }

    fn text(
        url: &str,
        response: std::result::Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<String> {
        let mut response = response.map_err(|e| Error::ShutDown(format!("{url}: {e}")))?;
        let status = response.status();
        let text = response
            .body_mut()
            .read_to_string()
            .map_err(|e| Error::ShutDown(format!("{url}: {e}")))?;
        if !status.is_success() {
            return Err(Error::ShutDown(format!("{url}: {status}: {text}")));
        }
        Ok(text)
    }
}

/// Observes `facts` in batches of [`PRELOAD_BATCH`], each under its own key.
pub(super) fn preload(client: &Client, token: &str, facts: &[SynthFact]) -> Result<()> {
    for (c, chunk) in facts.chunks(PRELOAD_BATCH).enumerate() {
        let base = (c * PRELOAD_BATCH) as u64;
        let batch: Vec<Value> = chunk
            .iter()
            .enumerate()
            .map(|(i, f)| observation(f, base + i as u64, f))
            .collect();
        client.post(token, "/v1/observe", &json!({"observations": batch}))?;
    }
    Ok(())
}

/// The observation JSON of fact `i`, filed under slot `slot`'s key (so a
/// fact with a taken slot revises it).
pub(super) fn observation(f: &SynthFact, slot: u64, owner: &SynthFact) -> Value {
    json!({
        "text": f.text,
        "entities": f.entities,
        "participants": f.participants,
        "at": f.observed_at * 1000,
        "key": {"entity": owner.entities[0], "slot": format!("fact{slot}")},
    })
}

/// Runs the three phases; `progress` gets a line per phase.
pub fn run(options: &HttpLoadOptions, progress: &dyn Fn(&str)) -> Result<HttpLoadReport> {
    if options.concurrency == 0 {
        return Err(Error::InvalidConfig(
            "concurrency must be at least 1".into(),
        ));
    }
    let n = options.facts.max(1);
    let streamed = 200_000;
    let (facts, queries) = pfm_synth::generate(n + streamed, options.seed, options.vocabulary, 256);
    let client = Client::new(&options.target);

    progress(&format!("preloading {} facts", options.facts));
    let started = Instant::now();
    preload(&client, &options.token, &facts[..options.facts as usize])?;
    let preload_rate = options.facts as f64 / started.elapsed().as_secs_f64().max(1e-9);

    // Revisions: streamed fact j revises slot j mod n.
    let next = AtomicUsize::new(0);
    let revision = |j: usize| {
        let slot = j as u64 % n;
        observation(
            &facts[n as usize + j % streamed as usize],
            slot,
            &facts[slot as usize],
        )
    };

    progress(&format!(
        "ingest phase: {} s at concurrency {}",
        options.ingest_secs, options.concurrency
    ));
    let observe_lat = Mutex::new(Vec::new());
    let phase = Duration::from_secs_f64(options.ingest_secs);
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..options.concurrency {
            s.spawn(|| {
                let client = Client::new(&options.target);
                let mut mine = Vec::new();
                while started.elapsed() < phase {
                    let j = next.fetch_add(1, Ordering::Relaxed);
                    let t = Instant::now();
                    if client
                        .post(&options.token, "/v1/observe", &revision(j))
                        .is_ok()
                    {
                        mine.push(t.elapsed().as_micros() as u64);
                    }
                }
                observe_lat
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend(mine);
            });
        }
    });
    let ingest_secs = started.elapsed().as_secs_f64();
    let observe_lat = observe_lat.into_inner().unwrap_or_else(|e| e.into_inner());
    let ingested = observe_lat.len();

    progress(&format!(
        "serve phase: {} requests at concurrency {}",
        options.requests, options.concurrency
    ));
    let done = AtomicBool::new(false);
    let served_ingest = AtomicUsize::new(0);
    let issued = AtomicUsize::new(0);
    let samples = Mutex::new((Vec::new(), Vec::new()));
    let started = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            if options.ingest_rate <= 0.0 {
                return;
            }
            let client = Client::new(&options.target);
            let t0 = Instant::now();
            while !done.load(Ordering::Relaxed) {
                let due = (t0.elapsed().as_secs_f64() * options.ingest_rate) as usize;
                while served_ingest.load(Ordering::Relaxed) < due && !done.load(Ordering::Relaxed) {
                    let j = next.fetch_add(1, Ordering::Relaxed);
                    if client
                        .post(&options.token, "/v1/observe", &revision(j))
                        .is_ok()
                    {
                        served_ingest.fetch_add(1, Ordering::Relaxed);
                    }
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        let workers: Vec<_> = (0..options.concurrency)
            .map(|_| {
                s.spawn(|| {
                    let client = Client::new(&options.target);
                    let (mut snap, mut fresh) = (Vec::new(), Vec::new());
                    loop {
                        let i = issued.fetch_add(1, Ordering::Relaxed);
                        if i >= options.requests {
                            break;
                        }
                        let q = &queries[i % queries.len()];
                        let body = |mode: &str| {
                            json!({"context": q.text, "participants": q.participants,
                                   "at": q.at * 1000, "mode": mode, "omega_us": options.omega_us})
                        };
                        if options.mode != Mode::Fresh {
                            snap.push(sample(&client, &options.token, &body("snapshot")));
                        }
                        if options.mode != Mode::Snapshot {
                            fresh.push(sample(&client, &options.token, &body("fresh")));
                        }
                    }
                    let mut all = samples.lock().unwrap_or_else(|e| e.into_inner());
                    all.0.extend(snap);
                    all.1.extend(fresh);
                })
            })
            .collect();
        for w in workers {
            let _ = w.join();
        }
        done.store(true, Ordering::Relaxed);
    });
    let seconds = started.elapsed().as_secs_f64();
    let (snap, fresh) = samples.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(HttpLoadReport {
        target: options.target.clone(),
        concurrency: options.concurrency,
        preloaded: options.facts,
        preload_rate,
        ingested,
        ingest_rate: ingested as f64 / ingest_secs.max(1e-9),
        observe_us: quantiles_of(observe_lat),
        snapshot: latency(snap),
        fresh: latency(fresh),
        serve_ingest_rate: served_ingest.load(Ordering::Relaxed) as f64 / seconds.max(1e-9),
        seconds,
    })
}

/// One retrieval: client µs and the response (or `None` on error).
pub(super) type Sample = (u64, Option<Value>);

pub(super) fn sample(client: &Client, token: &str, body: &Value) -> Sample {
    let t = Instant::now();
    let r = client.post(token, "/v1/retrieve", body).ok();
    (t.elapsed().as_micros() as u64, r)
}

fn latency(samples: Vec<Sample>) -> Latency {
    let field = |name: &str| -> Vec<u64> {
        samples
            .iter()
            .filter_map(|(_, r)| r.as_ref()?.pointer(name)?.as_f64())
            .map(|v| v as u64)
            .collect()
    };
    Latency {
        n: samples.len(),
        server_us: quantiles_of(field("/timings/total_us")),
        read_us: quantiles_of(field("/timings/read_us")),
        wait_us: quantiles_of(field("/timings/wait_us")),
        fallbacks: samples
            .iter()
            .filter(|(_, r)| r.as_ref().and_then(|r| r["fallback"].as_bool()) == Some(true))
            .count(),
        errors: samples.iter().filter(|(_, r)| r.is_none()).count(),
        client_us: quantiles_of(samples.iter().map(|(us, _)| *us).collect()),
    }
}

impl HttpLoadReport {
    /// The report as a markdown table.
    pub fn table(&self) -> String {
        // An empty sample (a timing the mode does not have) shows as a dash.
        let q = |q: &Quantiles| match q.max {
            0.0 => "–".to_owned(),
            _ => format!("{:.0} / {:.0}", q.p50, q.p99),
        };
        let mut out = format!(
            "pfm load --target {} (concurrency {}, {:.1} s serve phase)\n\n\
             Durable ingestion: preload {} facts at {:.0} obs/s (batches of {PRELOAD_BATCH}); \
             single observations {:.0} obs/s sustained, observe p50 / p99 {} µs; \
             {:.0} revisions/s during serving.\n\n\
             | mode | requests | client p50 / p99 µs | server p50 / p99 µs | server read p50 / p99 µs | server wait p50 / p99 µs | fallbacks | errors |\n\
             |---|---|---|---|---|---|---|---|\n",
            self.target,
            self.concurrency,
            self.seconds,
            self.preloaded,
            self.preload_rate,
            self.ingest_rate,
            q(&self.observe_us),
            self.serve_ingest_rate,
        );
        for (name, l) in [("snapshot", &self.snapshot), ("fresh", &self.fresh)] {
            if l.n == 0 {
                continue;
            }
            out.push_str(&format!(
                "| {name} | {} | {} | {} | {} | {} | {} | {} |\n",
                l.n,
                q(&l.client_us),
                q(&l.server_us),
                q(&l.read_us),
                q(&l.wait_us),
                l.fallbacks,
                l.errors
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_file_under_the_slot_they_revise() {
        let (facts, _) = pfm_synth::generate(4, 7, Vocabulary::Wide, 1);
        let v = observation(&facts[3], 1, &facts[1]);
        assert_eq!(v["key"]["slot"], "fact1");
        assert_eq!(v["key"]["entity"], facts[1].entities[0].as_str());
        assert_eq!(v["text"], facts[3].text.as_str());
        assert_eq!(v["at"], facts[3].observed_at * 1000);
    }
}
