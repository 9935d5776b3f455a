//! `pfm`'s harnesses: each measures the library and the serving runtime from
//! outside, the way a user would, and writes a report that names the command,
//! revision and machine that produced it.
//!
//! # Layout
//! - [`demo`]: `pfm demo`, a revision chain and the rules on one store.
//! - [`eval`]: `pfm eval`, the controlled benchmark and its statistics.
//! - [`load`]: `pfm load`, Appendix G on one machine, in process or against a
//!   running server over HTTP (`load::http`).
//! - [`scale`]: `pfm scale`, retrieval cost against store size.
//! - [`run`]: the provenance header every report carries.

pub mod demo;
pub mod eval;
pub mod layout;
pub mod load;
pub mod run;
pub mod scale;
