//! `GET /metrics`: each tenant's runtime histograms (hdrhistogram) and
//! counters in the Prometheus text format, labelled by tenant. Durations
//! are in seconds, as Prometheus expects; no fact text is ever exported.
//! The labels name tenants, so the endpoint opens only to a metrics token
//! (`pfm token create --metrics`), never to a tenant's token.
//!
//! # Bounded series
//! Only the `--metrics-tenants` most active open tenants (observations and
//! requests served) get series of their own; every other open tenant is
//! summed into counters labelled `tenant="(others)"` (a label no tenant
//! name can take), so a scrape's size does not grow with the number of
//! tenants. Their latency quantiles are not merged (a quantile of many
//! tenants is not a sum): a busy tenant is in the top and has its own.

use std::fmt::Write;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;

use std::sync::Arc;

use super::AppState;
use super::api::auth::bearer;
use super::error::ApiError;
use super::tenant::{OpenStats, Tenant};
use pfm_serve::{Quantity, Summary};

/// How long a whole scrape waits for idle recorders, all histograms
/// together. Each histogram's merge waits for every recorder of it that has
/// not handed over its values; an idle recorder never does until it next
/// records (hdrhistogram's `SyncHistogram::refresh_timeout`), so a wait per
/// histogram would cost the number of open tenants × the quantities × the
/// wait (1,000 open tenants made a scrape take minutes). Past the deadline,
/// a merge takes what has been handed over, and what an idle recorder still
/// holds comes with a later scrape.
const REFRESH: Duration = Duration::from_millis(20);

/// The quantities exported, with their help text.
const EXPORTED: [(Quantity, &str); 9] = [
    (Quantity::Read, "r: snapshot read"),
    (Quantity::Handoff, "h: handoff of a fresh job to a worker"),
    (Quantity::Sigma, "sigma: wake-up delay of a request thread"),
    (Quantity::FreshWait, "fresh-mode wait for a worker"),
    (
        Quantity::SnapshotAge,
        "age of the snapshot a response came from",
    ),
    (Quantity::Commit, "one commit of the construction actor"),
    (Quantity::Publish, "one snapshot publication pass"),
    (Quantity::Retrieve, "a whole retrieve call at the server"),
    (
        Quantity::Observe,
        "an observation from arrival to durable acknowledgement",
    ),
];

/// The Prometheus text for every tenant, to a metrics token.
pub async fn metrics(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<impl IntoResponse, ApiError> {
    let token = bearer(&headers)?;
    if !state.tenants.is_metrics_token(token) {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "/metrics needs a metrics token (`pfm token create --metrics`); tenant tokens do not open it",
        ));
    }
    let tenants = state.tenants.clone();
    let text = state
        .pool
        .run(move |_| {
            let mut out = render(
                &tenants.all(),
                tenants.registered(),
                tenants.metrics_tenants(),
            );
            render_host(&mut out, &tenants.open_stats(), process());
            out
        })
        .await?;
    Ok(([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text))
}

/// A tenant's activity, for the top: observations and requests served.
fn activity(t: &Tenant) -> u64 {
    let c = &t.runtime.metrics().counters;
    load(&c.observations) + load(&c.fresh_requests) + load(&c.snapshot_reads) + load(&c.versions)
}

/// The label of the open tenants outside the top.
const OTHERS: &str = "(others)";

fn render(open: &[Arc<Tenant>], registered: usize, top: usize) -> String {
    let mut out = String::new();
    scalars(
        &mut out,
        &[
            (
                "pfm_tenants",
                "gauge",
                "registered tenants",
                registered as u64,
            ),
            (
                "pfm_open_tenants",
                "gauge",
                "tenants open in memory",
                open.len() as u64,
            ),
        ],
    );
    let mut ranked: Vec<(u64, &Arc<Tenant>)> = open.iter().map(|t| (activity(t), t)).collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    let split = top.min(ranked.len());
    let tenants: Vec<&Arc<Tenant>> = ranked[..split].iter().map(|(_, t)| *t).collect();
    let others: Vec<&Arc<Tenant>> = ranked[split..].iter().map(|(_, t)| *t).collect();
    let deadline = Instant::now() + REFRESH;
    let wait = || deadline.saturating_duration_since(Instant::now());
    for (q, help) in EXPORTED {
        let name = format!("pfm_{}_seconds", q.name());
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} summary");
        for t in &tenants {
            let s: Summary = t.runtime.metrics().summary(q, wait());
            for (quantile, v) in [("0.5", s.p50), ("0.99", s.p99), ("1", s.max)] {
                let _ = writeln!(
                    out,
                    "{name}{{tenant=\"{}\",quantile=\"{quantile}\"}} {}",
                    t.name,
                    v * 1e-6
                );
            }
            let _ = writeln!(out, "{name}_count{{tenant=\"{}\"}} {}", t.name, s.n);
        }
        if !others.is_empty() {
            let n: u64 = others
                .iter()
                .map(|t| t.runtime.metrics().summary(q, wait()).n)
                .sum();
            let _ = writeln!(out, "{name}_count{{tenant=\"{OTHERS}\"}} {n}");
        }
    }
    let counters: [Counter; 5] = [
        (
            "pfm_observations_total",
            "observations committed (ingest rate: its rate())",
            |m| load(&m.counters.observations),
        ),
        (
            "pfm_fallbacks_total",
            "fresh requests answered from the snapshot",
            |m| load(&m.counters.fallbacks),
        ),
        ("pfm_fresh_requests_total", "fresh-mode requests", |m| {
            load(&m.counters.fresh_requests)
        }),
        (
            "pfm_snapshot_reads_total",
            "snapshot-mode reads of registered contexts",
            |m| load(&m.counters.snapshot_reads),
        ),
        ("pfm_versions_total", "index versions published", |m| {
            load(&m.counters.versions)
        }),
    ];
    for (name, help, get) in counters {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
        for t in &tenants {
            let _ = writeln!(
                out,
                "{name}{{tenant=\"{}\"}} {}",
                t.name,
                get(t.runtime.metrics())
            );
        }
        if !others.is_empty() {
            let sum: u64 = others.iter().map(|t| get(t.runtime.metrics())).sum();
            let _ = writeln!(out, "{name}{{tenant=\"{OTHERS}\"}} {sum}");
        }
    }
    let _ = writeln!(
        out,
        "# HELP pfm_store_seq last commit\n# TYPE pfm_store_seq gauge"
    );
    for t in &tenants {
        let _ = writeln!(
            out,
            "pfm_store_seq{{tenant=\"{}\"}} {}",
            t.name,
            t.runtime.version().seq
        );
    }
    out
}

/// The server process's resident memory (bytes) and thread count, from
/// `/proc/self/status` (none where there is no such file).
fn process() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line[name.len()..].split_whitespace().next()?.parse().ok()
    };
    Some((field("VmRSS:")? * 1024, field("Threads:")?))
}

/// The host's series: tenant opens and evictions, open times, and the
/// process's memory and threads.
fn render_host(out: &mut String, stats: &OpenStats, process: Option<(u64, u64)>) {
    let mut series: Vec<Scalar> = vec![
        (
            "pfm_tenant_opens_total",
            "counter",
            "tenants opened (first request since start or eviction)",
            stats.opens,
        ),
        (
            "pfm_tenant_checkpoint_opens_total",
            "counter",
            "tenant opens that read a current checkpoint, not the ledger's rows",
            stats.from_checkpoint,
        ),
        (
            "pfm_tenant_evictions_total",
            "counter",
            "tenants closed for the memory budget",
            stats.evictions,
        ),
    ];
    if let Some((rss, threads)) = process {
        series.push((
            "pfm_process_resident_bytes",
            "gauge",
            "resident memory of the server process",
            rss,
        ));
        series.push((
            "pfm_process_threads",
            "gauge",
            "threads of the server process",
            threads,
        ));
    }
    scalars(out, &series);
    let name = "pfm_tenant_open_seconds";
    let _ = writeln!(
        out,
        "# HELP {name} time to open a tenant (read its ledger)\n# TYPE {name} summary"
    );
    for (quantile, us) in ["0.5", "0.99", "1"].iter().zip(stats.open_us) {
        let _ = writeln!(
            out,
            "{name}{{quantile=\"{quantile}\"}} {}",
            us as f64 * 1e-6
        );
    }
    let _ = writeln!(out, "{name}_count {}", stats.opens);
}

/// An unlabelled series: name, type, help, value.
type Scalar = (&'static str, &'static str, &'static str, u64);

fn scalars(out: &mut String, series: &[Scalar]) {
    for (name, kind, help, value) in series {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
        );
    }
}

/// An exported counter: name, help, and how to read it.
type Counter = (&'static str, &'static str, fn(&pfm_serve::Metrics) -> u64);

fn load(c: &std::sync::atomic::AtomicU64) -> u64 {
    c.load(std::sync::atomic::Ordering::Relaxed)
}
