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
//! Typed operations (the P-Mem paper): a wrong update is retracted and the
//! value it displaced comes back, read from the retained history.
//!
//! ```
//! use pfm::fact::Op;
//! use pfm::{Config, Key, Memory, Observation, Outcome, Request, WallTime};
//!
//! let mut memory = Memory::new(Config::default()).unwrap();
//! let day = |d: u32| WallTime::parse(&format!("2025-06-{d:02}")).unwrap();
//! let budget = Key::new("Halcyon", "budget_cap").unwrap();
//! let say = |text: &str, value: Option<&str>, op: Op, d: u32| {
//!     Observation::new(text, day(d)).with_key(budget.clone(), value).with_op(op, None)
//! };
//! let v1 = memory.observe(say("The Halcyon budget cap is $30k.", Some("$30k"), Op::Accept, 2)).unwrap();
//! memory.observe(say("Update: the budget cap is $50k.", Some("$50k"), Op::Accept, 9)).unwrap();
//! let r = memory.observe(say("The $50k update was a mistake.", None, Op::Revoke, 10)).unwrap();
//! assert!(matches!(r.outcome, Outcome::Revoked { reinstated: Some(f), .. } if f == v1.outcome.fact()));
//! let block = memory.retrieve(&Request::new("the Halcyon budget cap", day(11))).unwrap();
//! assert!(block.text.contains("$30k") && !block.text.contains("$50k"));
//! ```
//!
//! # Layout
//! This crate is the core: the write path and the read path as plain
//! functions over owned data, with no async runtime, no HTTP and no CLI. The
//! serving runtime (`pfm-serve`), the server (`pfm-server`), the synthetic
//! corpus (`pfm-synth`), the harnesses (`pfm-harness`) and the `pfm` binary
//! (`pfm-cli`) are crates above it.
//! - [`ids`]: fact ids and commit sequence numbers (the leaf everything names).
//! - [`text`]: normalization, tokens, stop words, token-boundary containment.
//! - [`time`]: wall-clock time and its parsing.
//! - [`fact`]: facts (Definition 1), keys, statuses, intervals, the version graph.
//! - [`extract`]: the rule extractor, its slot table, its cue table (typed
//!   operations from text), the speculation gate's table and the gazetteer.
//! - [`ledger`]: the bi-temporal ledger and its commit rules, typed
//!   operations (contest, reject, revoke, resolve, noop) and rollback,
//!   staged plans (the speculation gate), pruning, erasure, as-of views.
//! - [`graph`]: the memory graph behind the association term.
//! - [`index`]: immutable index versions, built copy-on-write from segments.
//! - [`rank`]: the PFM scorer and the baseline arms.
//! - [`rules`]: serving-time identity and abstention rules (the slot detector).
//! - [`block`]: greedy selection and the block format.
//! - [`disclose`]: disclosure modes (support, alternatives, history) on block lines.
//! - [`retrieve`]: requests and the read path (a pure function of a version).
//! - [`memory`]: the store as a library user sees it.
//! - [`pmap`]: the persistent map versions share with the writer.
//! - [`config`], [`error`], [`limits`]: parameters, errors, and the hard
//!   bounds on one observation or request.

pub mod block;
pub mod config;
pub mod disclose;
pub mod error;
pub mod extract;
pub mod fact;
pub mod graph;
pub mod ids;
pub mod index;
pub mod ledger;
pub mod limits;
pub mod memory;
pub mod names;
pub mod pmap;
pub mod rank;
pub mod retrieve;
pub mod rules;
pub mod text;
pub mod time;
pub mod vector;

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
