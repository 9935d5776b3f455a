//! The library's error type. Every message says what was wrong with the input
//! and what the caller can do about it; the binary wraps these in `anyhow`.

use crate::ids::FactId;

/// Errors returned by `pfm`'s public API.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An observation's text was empty or only whitespace.
    #[error("observation text is empty: send the message text you want remembered")]
    EmptyText,

    /// An observation's text is longer than the store accepts.
    #[error(
        "observation text is {len} bytes, over the {max}-byte limit: split it into several observations"
    )]
    TextTooLong {
        /// Length of the rejected text in bytes.
        len: usize,
        /// The limit in bytes.
        max: usize,
    },

    /// An observation's value or source is longer than the store accepts.
    #[error("observation {field} is {len} bytes, over the {max}-byte limit: shorten it")]
    FieldTooLong {
        /// Which field (`value`, `source`).
        field: &'static str,
        /// Its length in bytes.
        len: usize,
        /// The limit in bytes.
        max: usize,
    },

    /// A request's context is longer than the store accepts.
    #[error("context is {len} bytes, over the {max}-byte limit: send the last message or two")]
    ContextTooLong {
        /// Length of the rejected context in bytes.
        len: usize,
        /// The limit in bytes.
        max: usize,
    },

    /// A text contained a control character other than tab or newline.
    #[error(
        "{field} contains control character U+{codepoint:04X} at byte {position}: remove it or replace it with a space"
    )]
    ControlCharacter {
        /// Which input held it (`text`, `participant`, `entity`, `context`).
        field: &'static str,
        /// The offending code point.
        codepoint: u32,
        /// Its byte offset.
        position: usize,
    },

    /// A list of names is longer than the limit.
    #[error("{count} {field} names, over the limit of {max}: send the ones this message is about")]
    TooManyNames {
        /// Which list (`participant`, `entity`).
        field: &'static str,
        /// How many were sent.
        count: usize,
        /// The limit.
        max: usize,
    },

    /// A name is longer than the limit.
    #[error("{field} name is {len} bytes, over the {max}-byte limit: shorten it")]
    NameTooLong {
        /// Which input (`participant`, `entity`, `key entity`, `key slot`).
        field: &'static str,
        /// Its length in bytes.
        len: usize,
        /// The limit in bytes.
        max: usize,
    },

    /// Too many contexts are registered.
    #[error(
        "{max} contexts are registered, the limit: unregister one (DELETE /v1/contexts/ID) before registering another"
    )]
    TooManyContexts {
        /// The limit.
        max: usize,
    },

    /// A participant, entity or key part was empty after trimming.
    #[error("{field} is empty: name it, or leave it out")]
    EmptyName {
        /// Which input was empty (`participant`, `entity`, `key entity`, `key slot`).
        field: &'static str,
    },

    /// A request asked for zero facts.
    #[error("k = 0 asks for no facts: use k >= 1 (the default is 6)")]
    ZeroK,

    /// A request's character budget cannot hold the block header and one line.
    #[error(
        "budget of {budget} characters cannot hold the block header and one fact line: use at least {min} (the default is 800)"
    )]
    BudgetTooSmall {
        /// The requested budget.
        budget: usize,
        /// The smallest budget accepted.
        min: usize,
    },

    /// A time lies outside 1970-01-01 … 9999-12-31.
    #[error(
        "{field} = {millis} ms since the epoch is outside 1970-01-01 to 9999-12-31: times are milliseconds since the Unix epoch or written times (dates, RFC 3339, RFC 2822)"
    )]
    TimeOutOfRange {
        /// Which time (`at`, `as_of`).
        field: &'static str,
        /// The rejected time in milliseconds.
        millis: i64,
    },

    /// A time string did not parse.
    #[error("time {input:?} does not parse: {reason}")]
    InvalidTime {
        /// The rejected input.
        input: String,
        /// Why, and which forms are accepted.
        reason: String,
    },

    /// No fact with this id exists (it may have been erased).
    #[error("no fact with id {0} in this store (it may have been erased)")]
    UnknownFact(FactId),

    /// A validity-agnostic ranker was asked for, but the store keeps no
    /// history index.
    #[error(
        "this ranker reads superseded facts, but the store keeps no history index: set Config::history_index = true (pfm::Config)"
    )]
    NoHistoryIndex,

    /// A dense or hybrid ranker was asked for where no encoder or model is
    /// available (the message says which and how to fix it: usually run
    /// `scripts/fetch-models`).
    #[error("dense retrieval unavailable: {0}")]
    DenseUnavailable(String),

    /// A fresh-mode retrieval was cancelled by its request (deadline passed).
    #[error("retrieval cancelled: the request's waiting budget ran out first")]
    Cancelled,

    /// A request named a context that is not registered.
    #[error("no registered context with id {0}: register it first (contexts are per conversation)")]
    UnknownContext(u64),

    /// A fresh-mode waiting budget of zero.
    #[error(
        "omega = 0 leaves no time for a fresh retrieval: use omega > 0 (the default is 5 ms), or snapshot mode"
    )]
    ZeroOmega,

    /// A typed operation does not apply to its key's cell as it stands (a
    /// contest or revoke on an empty cell, a resolve on a cell that is not
    /// contested, a target of another key, …). Nothing was changed.
    #[error("{op} does not apply to key {key}: {reason}; nothing was changed")]
    OpNotApplicable {
        /// The operation.
        op: crate::fact::Op,
        /// The key, `entity/slot[/qualifier]`.
        key: String,
        /// What the cell holds and why the operation cannot apply.
        reason: String,
    },

    /// A typed operation was sent without a key to apply it to.
    #[error(
        "{0} needs a key: send key (entity and slot), or target (the id of a fact of that key), or state the key in the text"
    )]
    OpNeedsKey(crate::fact::Op),

    /// A group commit failed as a whole (each observation was valid alone).
    #[error("commit failed: {0}")]
    CommitFailed(String),

    /// A blocking call was made from inside an async task.
    #[error("{0}")]
    WouldBlock(String),

    /// The serving runtime has shut down.
    #[error("the serving runtime has shut down: {0}")]
    ShutDown(String),

    /// A durable copy of the store is unreadable or inconsistent: it is not
    /// served (the server refuses its tenant) rather than served partially.
    #[error("stored state is not usable: {0}")]
    InvalidState(String),

    /// The durable store failed (disk full, permissions, a broken file).
    #[error("storage: {0}")]
    Storage(String),

    /// A configuration value is out of range.
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),

    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },

    /// A line of a JSONL file is not the expected JSON.
    #[error("{path}:{line}: {message}")]
    Jsonl {
        /// The file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        message: String,
    },
}

impl Error {
    /// Turns an I/O error on `path` into [`Error::Io`]: `.map_err(Error::io(path))`.
    pub fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Error + use<> {
        let path = path.display().to_string();
        move |source| Error::Io { path, source }
    }
}

/// Shorthand for results with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Rejects control characters other than tab and newline.
pub(crate) fn check_no_control(field: &'static str, s: &str) -> Result<()> {
    match s
        .char_indices()
        .find(|&(_, c)| c.is_control() && c != '\t' && c != '\n')
    {
        Some((position, c)) => Err(Error::ControlCharacter {
            field,
            codepoint: c as u32,
            position,
        }),
        None => Ok(()),
    }
}

/// Checks a name (participant, entity, key part): non-empty, at most
/// [`MAX_NAME_BYTES`](crate::limits::MAX_NAME_BYTES), no control characters.
pub(crate) fn check_name(field: &'static str, s: &str) -> Result<()> {
    if s.trim().is_empty() {
        return Err(Error::EmptyName { field });
    }
    if s.len() > crate::limits::MAX_NAME_BYTES {
        return Err(Error::NameTooLong {
            field,
            len: s.len(),
            max: crate::limits::MAX_NAME_BYTES,
        });
    }
    check_no_control(field, s)?;
    if s.contains('\n') || s.contains('\t') {
        return Err(Error::ControlCharacter {
            field,
            codepoint: if s.contains('\n') { 0x0A } else { 0x09 },
            position: s.find(['\n', '\t']).unwrap_or(0),
        });
    }
    Ok(())
}
