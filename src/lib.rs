//! `pfm`: a personal fact memory for LLM agents — never stale, never the
//! wrong person, never late.
//!
//! An agent asks memory for a block of facts before it generates. `pfm`
//! keeps one active value per slot key over a bi-temporal ledger (history
//! retained, erasure on request) and serves BM25F over the active facts with
//! participant awareness, into a block of at most `k` facts and `B` characters.
//! It implements the reference layer of *Stale, Misattributed, or Late: Where
//! Personal Memory Fails Before Generation* (the PFM paper).
//!
//! ```
//! use pfm::{Memory, Config, Observation, Request, WallTime};
//!
//! let mut memory = Memory::new(Config::default()).unwrap();
//! let day = |d: u32| WallTime::parse(&format!("2025-06-{d:02}")).unwrap();
//! memory.observe(Observation::new("The standup with Alex Rivera is moved to 9:30am.", day(2))
//!     .with_participants(["Alex Rivera"])).unwrap();
//! memory.observe(Observation::new("The standup with Alex Rivera is moved to 10:45am.", day(9))
//!     .with_participants(["Alex Rivera"])).unwrap();
//! let block = memory.retrieve(&Request::new("the standup with Alex is at", day(10))
//!     .with_participants(["Alex Rivera"])).unwrap();
//! assert!(block.text.contains("10:45am") && !block.text.contains("9:30am"));
//! ```
//!
//! # Layout
//! - [`text`]: normalization, tokens, stop words, token-boundary containment.
//! - [`time`]: wall-clock time and its parsing.
//! - [`fact`]: facts (Definition 1), keys, statuses, intervals, the version graph.
//! - [`extract`]: the rule extractor, its slot table and the gazetteer.
//! - [`ledger`]: the bi-temporal ledger and its commit rules, pruning,
//!   erasure, as-of views, and its durable copy on disk (`ledger::durable`).
//! - [`graph`]: the memory graph behind the association term.
//! - [`index`]: immutable index versions, built copy-on-write from segments.
//! - [`rank`]: the PFM scorer and the baseline arms.
//! - [`rules`]: serving-time identity and abstention rules (the slot detector).
//! - [`block`]: greedy selection and the block format.
//! - [`retrieve`]: requests and the read path (a pure function of a version).
//! - [`memory`]: the store as a library user sees it.
//! - [`eval`]: `pfm eval`, the controlled benchmark and its statistics.
//! - [`load`]: the `pfm load` harness (Appendix G on one machine), in process
//!   or against a running server over HTTP (`load::http`).
//! - [`serve`]: the serving runtime (construction actor, snapshot publisher,
//!   worker pool, request path) and its instrumentation.
//! - `server`: `pfm serve` — the HTTP/JSON API, tenants and tokens, the
//!   durable write path, Prometheus metrics (left out of the loom build).
//! - [`sync`]: the primitives of the serving protocols (std / arc-swap, or
//!   loom's under `--cfg loom`).
//! - [`synth`]: the synthetic scaling corpus.
//! - [`pmap`]: the persistent map versions share with the writer.
//! - [`config`], [`error`]: parameters and errors.

pub mod block;
pub mod config;
pub mod error;
pub mod eval;
pub mod extract;
pub mod fact;
pub mod graph;
pub mod index;
pub mod ledger;
pub mod load;
pub mod memory;
pub mod pmap;
pub mod rank;
pub mod retrieve;
pub mod rules;
pub mod run;
pub mod scale;
pub mod serve;
#[cfg(not(loom))]
pub mod server;
pub mod sync;
pub mod synth;
pub mod text;
pub mod time;

pub use block::Block;
pub use config::Config;
pub use error::{Error, Result};
pub use extract::EntityKind;
pub use fact::{Fact, FactId, Key};
pub use ledger::{AsOf, Forget, Outcome};
pub use memory::{Journal, Memory, Observation, Receipt};
pub use rank::Ranker;
pub use retrieve::Request;
pub use time::WallTime;
