//! Loom models of the serving protocols behind Propositions 1 and 2 of the PFM
//! paper live here, one test file per protocol under `tests/`.
//!
//! The crate is empty until the serving runtime exists: the models must check
//! the real serving code through `pfm`'s sync shim, not a re-implementation,
//! so they are written together with that code.
