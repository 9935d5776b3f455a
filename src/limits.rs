//! The core's hard bounds on one observation and one request, so that the
//! work any input can cause is bounded whatever a caller sends. Each is
//! checked by `validate` before any work: [`Observation::validate`] and
//! [`Request::validate`]. Servers set lower limits of their own (the
//! `pfm serve` flags); these are the ceilings.
//!
//! Why names are bounded: an observation's participants and entities become
//! graph nodes joined pairwise (quadratic), and a request's participants are
//! query terms and identity checks each; 8,000 names in one observation once
//! took a gigabyte.
//!
//! [`Observation::validate`]: crate::memory::Observation::validate
//! [`Request::validate`]: crate::retrieve::Request::validate

use crate::error::{Error, Result, check_name};

/// Longest observation text accepted, in bytes; an observation's value
/// and source are held to it as well.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;

/// Longest request context (the unfinished message), in bytes: its tokens
/// are the query terms, so this bounds them too.
pub const MAX_CONTEXT_BYTES: usize = 64 * 1024;

/// Most names in one list: an observation's participants, its entities, a
/// request's participants.
pub const MAX_NAMES: usize = 256;

/// Most keys of one subject an open relation statement is compared with
/// (soft key identity, `extract::soft`): its newest ones. Bounds the work
/// of a statement about a subject with thousands of keys.
pub const MAX_SOFT_CANDIDATES: usize = 256;

/// Longest ranker name accepted by [`crate::rank::Ranker::named`], in
/// bytes (the longest real one, `bm25_validity_recency_p`, has 23): a
/// longer name is refused without being parsed or quoted back.
pub const MAX_RANKER_NAME_BYTES: usize = 32;

/// Longest name (participant, entity, key part), in bytes.
pub const MAX_NAME_BYTES: usize = 256;

/// Checks a list of names: at most `max` of them (never more than
/// [`MAX_NAMES`]), each a valid name (non-empty, at most [`MAX_NAME_BYTES`], no control
/// characters).
pub fn check_names(field: &'static str, names: &[String], max: usize) -> Result<()> {
    let max = max.min(MAX_NAMES);
    if names.len() > max {
        return Err(Error::TooManyNames {
            field,
            count: names.len(),
            max,
        });
    }
    names.iter().try_for_each(|n| check_name(field, n))
}
