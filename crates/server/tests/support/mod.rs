//! What the server's integration tests share: a tenant's store, runtime
//! and writer opened as `pfm serve` opens them, and writes through it.
#![allow(dead_code)] // each test file uses its own subset

use std::path::Path;
use std::sync::Arc;

use pfm::{Config, Observation, WallTime};
use pfm_serve::{Runtime, ServeOptions};
use pfm_server::durable::DurableLedger;
use pfm_server::writer::{Fsync, Observed, WriteOp, Writer};
use tokio::sync::oneshot;

/// A fresh scratch directory `pfm-server-{name}-…` under the system's temp
/// directory, removed with all it holds when the guard drops: at the end of
/// the test, passed or failed.
pub fn tempdir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("pfm-server-{name}-"))
        .tempdir()
        .unwrap()
}

/// A tenant's store, runtime and writer, as `pfm serve` opens them.
pub fn open(dir: &Path) -> (Arc<Runtime>, Writer) {
    open_with(dir, ServeOptions::default())
}

/// The same, with other runtime options (the pool is always small and
/// unpinned, and the server never prunes).
pub fn open_with(dir: &Path, options: ServeOptions) -> (Arc<Runtime>, Writer) {
    let (store, memory) = DurableLedger::open(dir, Config::default()).unwrap();
    let options = ServeOptions {
        workers: 2,
        queue: 2,
        pin_workers: false,
        prune_every: None,
        ..options
    };
    let runtime = Arc::new(Runtime::start(memory, options).unwrap());
    let writer = Writer::start(store, runtime.clone(), Fsync::Always, 0).unwrap();
    (runtime, writer)
}

pub fn observation(text: &str) -> Observation {
    Observation::new(text, WallTime::parse("2025-06-02").unwrap())
        .with_participants(["Alex Rivera"])
}

pub fn observe(writer: &Writer, text: &str, id: Option<&str>) -> Observed {
    let (tx, rx) = oneshot::channel();
    writer
        .send(WriteOp::Observe(
            vec![observation(text)],
            id.map(str::to_owned),
            tx,
        ))
        .unwrap();
    rx.blocking_recv().unwrap().unwrap()
}

pub fn facts(runtime: &Runtime) -> usize {
    runtime.version().timeline.len()
}
