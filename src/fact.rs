//! Facts (Definition 1 of the PFM paper) and the version graph they form.
//!
//! A fact is split in two:
//! - [`FactBody`]: what was said — text, entities, participants, key, value,
//!   when it was said. Immutable once created and shared (`Arc`) between the
//!   ledger and every index version that lists the fact, so publishing a
//!   version never copies text.
//! - [`FactState`]: what the store did with it — status, activity intervals,
//!   last observation, support, usage, and the `supersedes` edges of the
//!   version graph. Owned by the ledger, mutated only by the single writer.
//!
//! The version graph carries the typed operations of the P-Mem paper
//! ([`Op`]: accept, contest, reject, revoke with rollback, resolve, noop): a
//! fact's activity is a *list* of intervals so that a rollback can reopen a
//! displaced value; `supersedes` / `superseded_by` point strictly backward /
//! forward in a key's chain so a retraction is a walk, not a re-derivation;
//! the rarer provenance edges (an alternative and the head it contests, a
//! tombstone and the version it retracts, the sources that supported a
//! value) live in [`Edges`], boxed, so a fact without them pays one pointer.

use std::borrow::Cow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::{Result, check_name};
pub use crate::names::Name;
use crate::text;
use crate::time::WallTime;

mod intervals;
mod packed;
pub use intervals::{Interval, Intervals};
use packed::Packed;

pub use crate::ids::{FactId, Seq};

/// Whether `name` has a canonical form ([`name_key`] is not empty), without
/// making it when the name holds an ASCII letter or digit: normalization
/// keeps those, and the tokenizer makes a token of any run of them
/// (`tests::a_name_has_a_key_exactly_when_its_key_is_not_empty`).
pub fn has_name_key(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_alphanumeric()) || !name_key(name).is_empty()
}

/// The canonical form of a name (entity or participant) used for matching:
/// normalized tokens joined by single spaces (`"Alex  Rivera"` → `"alex rivera"`).
///
/// Every observation, restore and segment build asks this of each
/// participant (it was 5% of a bulk build, issue 24), and almost every name
/// is ASCII letters, digits and spaces (`Alex Rivera`, `user7`, `Apollo
/// 11`). For those, normalization only lowercases, abbreviates month names
/// (each run of letters, as in `march3`) and joins `am` or `pm` to a
/// number before it (such a name falls back to the general path); its
/// `a.m.`, digit-group and apostrophe rules need characters such a name
/// lacks, and its tokens are its words. So the key is made in one pass
/// with one allocation; `tests::the_fast_path_is_the_general_one` checks
/// the two readings agree.
pub fn name_key(name: &str) -> String {
    let bytes = name.as_bytes();
    if !bytes
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || *b == b' ')
    {
        return name_key_general(name);
    }
    let mut out = String::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b' ' {
            i += 1;
            continue;
        }
        // A word starts at `i`.
        let lead = bytes[i..]
            .iter()
            .take_while(|b| b.is_ascii_alphabetic())
            .count();
        if matches!(
            &bytes[i..i + lead],
            [b'a' | b'A' | b'p' | b'P', b'm' | b'M']
        ) && out.ends_with(|c: char| c.is_ascii_digit())
        {
            return name_key_general(name);
        }
        if !out.is_empty() {
            out.push(' ');
        }
        while i < bytes.len() && bytes[i] != b' ' {
            if bytes[i].is_ascii_digit() {
                out.push(char::from(bytes[i]));
                i += 1;
                continue;
            }
            let start = out.len();
            while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                out.push(char::from(bytes[i].to_ascii_lowercase()));
                i += 1;
            }
            if let Some(month) = text::month_abbreviation(&out[start..]) {
                out.truncate(start);
                out.push_str(month);
            }
        }
    }
    out
}

/// [`name_key`] of any text: normalize, then join the tokens.
fn name_key_general(name: &str) -> String {
    let norm = text::normalize(name);
    let mut out = String::with_capacity(norm.len());
    for tok in text::tokens(&norm) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(tok);
    }
    out
}

/// A key naming a mutable slot: `(entity, slot)` or, at finer granularity,
/// `(entity, slot, qualifier)` where the qualifier is the slot noun
/// (`standup` vs `sync`). Parts are stored in canonical form ([`name_key`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Key {
    /// The entity the slot belongs to (a person or a project).
    pub entity: Arc<str>,
    /// The slot's name (`meeting_time`, `room`, `deadline`, …).
    pub slot: Arc<str>,
    /// Optional finer qualifier, usually the slot noun.
    pub qualifier: Option<Arc<str>>,
}

impl Key {
    /// A key at `(entity, slot)` granularity. Rejects empty parts.
    pub fn new(entity: &str, slot: &str) -> Result<Key> {
        check_name("key entity", entity)?;
        check_name("key slot", slot)?;
        let entity = name_key(entity);
        let slot = name_key(slot);
        if entity.is_empty() {
            return Err(crate::Error::EmptyName {
                field: "key entity",
            });
        }
        if slot.is_empty() {
            return Err(crate::Error::EmptyName { field: "key slot" });
        }
        Ok(Key {
            entity: entity.into(),
            slot: slot.into(),
            qualifier: None,
        })
    }

    /// The same key refined by a qualifier (`(entity, slot, noun)`).
    pub fn with_qualifier(mut self, qualifier: &str) -> Result<Key> {
        check_name("key qualifier", qualifier)?;
        self.qualifier = Some(name_key(qualifier).into());
        Ok(self)
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.entity, self.slot)?;
        if let Some(q) = &self.qualifier {
            write!(f, "/{q}")?;
        }
        Ok(())
    }
}

/// What was said: the immutable content of a fact.
///
/// Its names and its text, value and source lie in one allocation
/// (`fact::packed`), the optional two strings measured by a length each
/// (`ABSENT` for none): boxes of their own took two to four allocations
/// and up to 68 bytes of pointers and counts in every body (issue 24's
/// heap table). Invariant: the packed string is the text followed by the
/// value's and the source's bytes, whose lengths are `value` and `source`
/// (0 where `ABSENT`).
///
/// It serializes as the struct `{id, text, entities, participants, key,
/// value, stated_at, source}`, whatever the layout in memory.
#[derive(Debug)]
pub struct FactBody {
    /// Stable identity.
    pub id: FactId,
    /// Its entities and participants ([`FactBody::entities`],
    /// [`FactBody::participants`]), then the text, the value and the
    /// source.
    packed: Packed,
    /// The slot key `κ_f`, if the fact states a mutable slot.
    pub key: Option<std::sync::Arc<Key>>,
    /// When the source observation was made (event time); the block's date.
    pub stated_at: WallTime,
    /// The value's length in the packed string, or `ABSENT`.
    value: u32,
    /// The source's length in the packed string, or `ABSENT`.
    source: u32,
}

/// The length of a value or source a body does not have.
const ABSENT: u32 = u32::MAX;

/// What a fact body holds besides its id and names, as given: the form
/// [`FactBody::new`] lays out.
#[derive(Clone, Copy, Debug)]
pub struct BodyParts<'a> {
    /// Prompt-ready text `z_f`, as observed.
    pub text: &'a str,
    /// The slot key `κ_f`, if the fact states a mutable slot.
    pub key: Option<&'a Arc<Key>>,
    /// The slot value in normalized form (keyed facts only).
    pub value: Option<&'a str>,
    /// When the source observation was made (event time).
    pub stated_at: WallTime,
    /// Caller-supplied provenance (a message id), if any.
    pub source: Option<&'a str>,
}

impl<'a> BodyParts<'a> {
    /// The parts of a fact with no key, value or source.
    pub fn new(text: &'a str, stated_at: WallTime) -> BodyParts<'a> {
        BodyParts {
            text,
            key: None,
            value: None,
            stated_at,
            source: None,
        }
    }
}

/// A fact's entities `E_f` and participants `P_f`, entities first, as a
/// body is built from them (the body packs them with its strings).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FactNames {
    all: Box<[Name]>,
    /// How many of `all` are entities.
    entities: usize,
}

impl FactNames {
    /// Entities (normalized, sorted, unique) and participants (display
    /// form), as a fact holds them.
    pub fn new(
        entities: impl IntoIterator<Item = Name, IntoIter: ExactSizeIterator>,
        participants: impl IntoIterator<Item = Name, IntoIter: ExactSizeIterator>,
    ) -> FactNames {
        let (entities, participants) = (entities.into_iter(), participants.into_iter());
        let count = entities.len();
        let mut all = Vec::with_capacity(entities.len() + participants.len());
        all.extend(entities);
        all.extend(participants);
        FactNames {
            all: all.into(),
            entities: count,
        }
    }
}

/// A [`FactBody`] as rows and checkpoints hold it: the layout before the
/// names shared a box, field for field.
#[derive(Serialize)]
#[serde(rename = "FactBody")]
struct BodyRow<'a> {
    id: FactId,
    text: &'a str,
    entities: &'a [Name],
    participants: &'a [Name],
    key: &'a Option<Arc<Key>>,
    value: Option<&'a str>,
    stated_at: WallTime,
    source: Option<&'a str>,
}

/// [`BodyRow`], decoded.
#[derive(Deserialize)]
#[serde(rename = "FactBody")]
struct OwnedBodyRow {
    id: FactId,
    text: Box<str>,
    entities: Vec<Name>,
    participants: Vec<Name>,
    key: Option<Arc<Key>>,
    value: Option<Box<str>>,
    stated_at: WallTime,
    source: Option<Box<str>>,
}

impl Serialize for FactBody {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        BodyRow {
            id: self.id,
            text: self.text(),
            entities: self.entities(),
            participants: self.participants(),
            key: &self.key,
            value: self.value(),
            stated_at: self.stated_at,
            source: self.source(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for FactBody {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        let row = OwnedBodyRow::deserialize(deserializer)?;
        let names = FactNames::new(row.entities, row.participants);
        let parts = BodyParts {
            text: &row.text,
            key: row.key.as_ref(),
            value: row.value.as_deref(),
            stated_at: row.stated_at,
            source: row.source.as_deref(),
        };
        FactBody::try_new(row.id, names, parts).map_err(serde::de::Error::custom)
    }
}

impl FactBody {
    /// A body of `parts`, or an error if its value or source is 4 GiB or
    /// more, its strings together too, or its names more than 65,535 (an
    /// observation is validated far below all three; a stored row might
    /// not be).
    pub fn try_new(
        id: FactId,
        names: FactNames,
        parts: BodyParts<'_>,
    ) -> std::result::Result<FactBody, String> {
        let length = |field: &str, s: Option<&str>| match s {
            None => Ok(ABSENT),
            Some(s) => u32::try_from(s.len())
                .ok()
                .filter(|&n| n != ABSENT)
                .ok_or_else(|| format!("a fact's {field} of {} bytes is too long", s.len())),
        };
        let (value, source) = (
            length("value", parts.value)?,
            length("source", parts.source)?,
        );
        // An absent value or source adds no bytes; `value` and `source`
        // tell it from an empty one.
        let pieces = [
            parts.text,
            parts.value.unwrap_or_default(),
            parts.source.unwrap_or_default(),
        ];
        Ok(FactBody {
            id,
            packed: Packed::new(names.all, names.entities, &pieces)?,
            key: parts.key.cloned(),
            stated_at: parts.stated_at,
            value,
            source,
        })
    }

    /// [`FactBody::try_new`] for parts known to fit: a validated
    /// observation's (its text, value and source at most
    /// [`crate::limits::MAX_TEXT_BYTES`] each, or a value found in a text
    /// of that size; its names at most [`crate::limits::MAX_NAMES`] given
    /// and what a text of that size names) or another body's.
    pub fn new(id: FactId, names: FactNames, parts: BodyParts<'_>) -> FactBody {
        FactBody::try_new(id, names, parts).expect("a fact's names and strings fit its body")
    }

    /// The lengths of the value and the source in the packed string.
    fn tail(&self) -> (usize, usize) {
        let len = |n: u32| if n == ABSENT { 0 } else { n as usize };
        (len(self.value), len(self.source))
    }

    /// Prompt-ready text `z_f`, as observed.
    pub fn text(&self) -> &str {
        let (value, source) = self.tail();
        let strings = self.packed.str();
        &strings[..strings.len() - value - source]
    }

    /// The slot value in normalized form (keyed facts only).
    pub fn value(&self) -> Option<&str> {
        let (value, source) = self.tail();
        let strings = self.packed.str();
        let end = strings.len() - source;
        (self.value != ABSENT).then(|| &strings[end - value..end])
    }

    /// Caller-supplied provenance (a message id), if any.
    pub fn source(&self) -> Option<&str> {
        let (_, source) = self.tail();
        let strings = self.packed.str();
        (self.source != ABSENT).then(|| &strings[strings.len() - source..])
    }

    /// Normalized entities `E_f` ([`name_key`] form), sorted, unique.
    pub fn entities(&self) -> &[Name] {
        &self.packed.names()[..self.packed.entities()]
    }

    /// Participants `P_f` of the source observation, in display form.
    pub fn participants(&self) -> &[Name] {
        &self.packed.names()[self.packed.entities()..]
    }

    /// Every name, entities first, to replace in place (by equal names:
    /// [`crate::names::Names::share`]).
    pub(crate) fn names_mut(&mut self) -> &mut [Name] {
        self.packed.names_mut()
    }

    /// The canonical ([`name_key`]) forms of the participants.
    pub fn participant_keys(&self) -> impl Iterator<Item = String> + '_ {
        self.participants().iter().map(|p| name_key(p))
    }

    /// When and among whom it was said, in the compact form
    /// [`Said::may_be_beside`] compares.
    pub fn said(&self) -> Said {
        let among = self
            .participants()
            .iter()
            .enumerate()
            .filter(|&(i, p)| !self.participants()[..i].contains(p))
            .map(|(_, p)| {
                let mut h = rustc_hash::FxHasher::default();
                p.hash(&mut h);
                h.finish()
            })
            .fold(0u64, u64::wrapping_add);
        Said {
            at: self.stated_at,
            // The sum's high half: Fx hashes mix the most into their high bits.
            among: (among >> 32) as u32,
        }
    }

    /// Whether two facts were said among the same set of participants
    /// within `gap_ms` of each other: conversation neighbours, if nothing
    /// active was said between them ([`crate::rank::context`]).
    pub fn said_beside(&self, other: &FactBody, gap_ms: i64) -> bool {
        let within = |a: &[Name], b: &[Name]| a.iter().all(|p| b.contains(p));
        self.stated_at.millis().abs_diff(other.stated_at.millis()) <= gap_ms as u64
            && within(self.participants(), other.participants())
            && within(other.participants(), self.participants())
    }
}

/// When a fact was said and a hash of the set of its participants (order
/// and repeats aside): twelve bytes an index keeps per document, so that
/// conversation context can rule out most neighbours without their bodies.
/// The hash is a filter ([`Said::may_be_beside`]), so 32 bits of it are
/// enough: a collision costs one body comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Said {
    /// When it was stated.
    pub at: WallTime,
    /// The high half of the wrapping sum of a hash of each distinct
    /// participant: equal for facts said among the same set.
    pub among: u32,
}

impl Said {
    /// Whether facts said so could be said beside each other: the same hash
    /// of participants, within `gap_ms`. [`FactBody::said_beside`] implies
    /// it (equal sets hash alike), so `false` rules that out; `true` leaves
    /// it to that.
    #[inline]
    pub fn may_be_beside(self, other: Said, gap_ms: i64) -> bool {
        self.among == other.among && self.at.millis().abs_diff(other.at.millis()) <= gap_ms as u64
    }
}

/// A typed operation (P-Mem, Eq. 4): how an observation relates to its
/// key's current value (the *head*). Lowered onto statuses as the paper's
/// Table 2 says; the ledger's module docs give each rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// The value becomes the head; the old head is superseded (the default).
    #[default]
    Accept,
    /// The head stays, flagged contested; the value is kept as an alternative.
    Contest,
    /// With a value: it becomes the head and the old head is contradicted.
    /// Without one: the head is contradicted and its predecessor reinstated.
    Reject,
    /// The head is revoked (a tombstone records it) and its predecessor reinstated.
    Revoke,
    /// A contested cell is settled: the chosen value becomes the head, the
    /// others are contradicted.
    Resolve,
    /// Support for the head (or a named alternative); nothing else changes.
    Noop,
}

impl Op {
    /// The operation's name, as serialized.
    pub fn name(self) -> &'static str {
        match self {
            Op::Accept => "accept",
            Op::Contest => "contest",
            Op::Reject => "reject",
            Op::Revoke => "revoke",
            Op::Resolve => "resolve",
            Op::Noop => "noop",
        }
    }

    /// Whether this is the default operation (serde's `skip_serializing_if`).
    pub fn is_accept(&self) -> bool {
        *self == Op::Accept
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a statement says about when its value holds (AgentMemGate's
/// classes), given by the caller or read by the gate
/// ([`crate::extract::gate`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A plan, intention, hedge or conditional: not true yet. Staged as a
    /// pending version of its key; it never becomes current by itself.
    Speculation,
    /// A change that happened: it commits, and confirms the key's pending
    /// plan of the same value (abandoning those of other values).
    Completed,
    /// A fix to a wrong record: the value replaces the current one, which
    /// is marked contradicted (P-Mem's `reject`).
    Correction,
    /// A plan given up: the key's pending plans are abandoned; it never
    /// commits the value it names.
    Abandonment,
    /// None of these: a plain statement, committed as stated.
    #[default]
    Other,
}

impl Kind {
    /// The kind's name, as serialized.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Speculation => "speculation",
            Kind::Completed => "completed",
            Kind::Correction => "correction",
            Kind::Abandonment => "abandonment",
            Kind::Other => "other",
        }
    }
}

/// Where a fact stands in its key's version graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// The current value (or a keyless fact in force).
    Active,
    /// Current but disputed by an alternative (P-Mem `contest`).
    Contested,
    /// Displaced by a newer value of its key; kept as history.
    Superseded,
    /// Judged wrong (P-Mem `reject` / `resolve`); kept as history.
    Contradicted,
    /// Retracted (P-Mem `revoke`); kept as history behind a tombstone.
    Revoked,
    /// Retired by retention pruning; kept as history.
    Pruned,
    /// A contest's value, pending: competes with the head it names
    /// ([`Edges::alternative_of`]) until the cell is resolved.
    Alternative,
    /// The record of a retraction (its observation's text), pointing at the
    /// version it retracted ([`Edges::revokes`]). Never current.
    Tombstone,
    /// A staged plan (a speculation): a value its key may take, held off
    /// the chain and out of every block until a completed statement of the
    /// same value confirms it or an abandonment retires it.
    Pending,
    /// A plan that came true: a completed statement of its value became
    /// the key's head. Kept as history.
    Confirmed,
    /// A plan given up (or overtaken by a completed change to another
    /// value). Kept as history, never erased by it.
    Abandoned,
}

impl Status {
    /// Whether facts with this status are in the active view (and the index).
    pub fn is_current(self) -> bool {
        matches!(self, Status::Active | Status::Contested)
    }

    /// Whether the version was judged wrong or withdrawn: a rollback walks
    /// past it and nothing reinstates it.
    pub fn is_retracted(self) -> bool {
        matches!(self, Status::Contradicted | Status::Revoked)
    }

    /// The status's name, as serialized.
    pub fn name(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Contested => "contested",
            Status::Superseded => "superseded",
            Status::Contradicted => "contradicted",
            Status::Revoked => "revoked",
            Status::Pruned => "pruned",
            Status::Alternative => "alternative",
            Status::Tombstone => "tombstone",
            Status::Pending => "pending",
            Status::Confirmed => "confirmed",
            Status::Abandoned => "abandoned",
        }
    }
}

/// Most sources a fact lists in [`Edges::supported_by`] (the newest are
/// kept; [`FactState::support`] counts them all), so a value restated a
/// million times stays a bounded row.
pub const MAX_SUPPORTED_BY: usize = 16;

/// Most alternatives one head collects, pending and settled: a contest
/// beyond is refused (settle the key first, or state a new value), so every
/// operation on a cell reads a bounded list.
pub const MAX_ALTERNATIVES: usize = 16;

/// A fact's provenance edges beyond its chain (P-Mem Section 3.2), each
/// with its reverse so either end is found without a scan.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edges {
    /// For an alternative (pending or settled): the head it contested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alternative_of: Option<FactId>,
    /// For a head that was contested: every alternative attached to it, in
    /// arrival order (their statuses say which are pending).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<FactId>,
    /// For a tombstone: the version it retracted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revokes: Option<FactId>,
    /// For a retracted version: the tombstone that records the retraction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_by: Option<FactId>,
    /// Sources (message ids) of observations that supported the value by a
    /// `noop`, a restatement or a settling `resolve`; the newest
    /// [`MAX_SUPPORTED_BY`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supported_by: Vec<Box<str>>,
    /// Each status the fact took that its activity intervals cannot tell
    /// (contested, settled, reinstated, retracted, created as history, an
    /// alternative or a tombstone), oldest first; empty for a fact whose
    /// only change was plain supersession or pruning. Read by
    /// [`FactState::status_at`] and [`FactState::status_at_time`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<StatusChange>,
}

/// One entry of a fact's status log: the status it took at a commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusChange {
    /// The commit.
    pub seq: Seq,
    /// The commit's wall time.
    pub at: WallTime,
    /// The status the fact took.
    pub status: Status,
}

/// A decayed usage count: `value · 2^-(t - at)/half_life` at time `t`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// The count at `at`.
    pub value: f64,
    /// When `value` was last brought up to date.
    pub at: WallTime,
}

impl Usage {
    /// The decayed count at `t` for the given half-life in days.
    pub fn at(&self, t: WallTime, half_life_days: f64) -> f64 {
        if self.value == 0.0 {
            return 0.0;
        }
        let age = t.days_since(self.at).max(0.0);
        self.value * (-age / half_life_days).exp2()
    }

    /// One more use at `t`.
    pub fn record(&mut self, t: WallTime, half_life_days: f64) {
        let t = t.max(self.at);
        self.value = self.at(t, half_life_days) + 1.0;
        self.at = t;
    }
}

/// What few facts have, in one box: a served fact's [`Usage`] and a
/// fact's provenance [`Edges`]. Most facts are never served and have no
/// edges, and two boxes cost eight bytes of every fact's state where one
/// does (issue 24: with [`Intervals`] inline in 32 bytes, a [`FactState`] is
/// 72 bytes and an `Arc<Fact>` 96, mimalloc's 96-byte class, where an
/// 88-byte state made it 112). The edges keep a box of their own inside,
/// so a served fact's box is 24 bytes, not the size of the edges.
///
/// Invariant: the box is there exactly when the usage is not the default
/// or the edges were written ([`Extras::edges_mut`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extras(Option<Box<ExtraParts>>);

#[derive(Clone, Debug, Default, PartialEq)]
struct ExtraParts {
    usage: Usage,
    edges: Option<Box<Edges>>,
}

impl Extras {
    /// The decayed count of times the fact was served (the default when
    /// never served).
    pub fn usage(&self) -> Usage {
        self.0.as_ref().map(|x| x.usage).unwrap_or_default()
    }

    /// Sets the usage.
    pub fn set_usage(&mut self, usage: Usage) {
        if let Some(x) = &mut self.0 {
            x.usage = usage;
            if x.edges.is_none() && usage == Usage::default() {
                self.0 = None;
            }
        } else if usage != Usage::default() {
            self.0 = Some(Box::new(ExtraParts { usage, edges: None }));
        }
    }

    /// One more use at `t` ([`Usage::record`]).
    pub fn record_use(&mut self, t: WallTime, half_life_days: f64) {
        let mut usage = self.usage();
        usage.record(t, half_life_days);
        self.set_usage(usage);
    }

    /// The fact's provenance edges (empty when it has none).
    pub fn edges(&self) -> &Edges {
        self.0
            .as_ref()
            .and_then(|x| x.edges.as_deref())
            .unwrap_or(&NO_EDGES)
    }

    /// The fact's provenance edges, to write.
    pub fn edges_mut(&mut self) -> &mut Edges {
        let parts = self.0.get_or_insert_with(Box::default);
        parts.edges.get_or_insert_with(Box::default)
    }
}

/// An optional fact id in eight bytes: a chain edge of [`FactState`].
///
/// `Option<FactId>` takes sixteen (a `u64` has no spare value for `None`),
/// and two of them made a fact's state 120 bytes, which put a ledger
/// record (`Arc<Fact>`, 144 bytes) in the allocator's 160-byte class;
/// with these it is 128 (issue 24's heap table). Fact ids count up from 0
/// and never reach `u64::MAX`, which stands for "none". It reads and
/// writes exactly as `Option<FactId>` does (`null` or the id), and a
/// stored `u64::MAX` is refused rather than read as "none".
#[derive(Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(into = "Option<FactId>")]
pub struct Link(u64);

impl Link {
    /// No fact.
    pub const NONE: Link = Link(u64::MAX);

    /// The fact linked to, if any.
    #[inline]
    pub fn get(self) -> Option<FactId> {
        (self.0 != u64::MAX).then_some(FactId(self.0))
    }

    /// Whether no fact is linked.
    #[inline]
    pub fn is_none(self) -> bool {
        self.0 == u64::MAX
    }

    /// Whether a fact is linked.
    #[inline]
    pub fn is_some(self) -> bool {
        !self.is_none()
    }
}

impl From<FactId> for Link {
    /// A link to `id`. Panics on `FactId(u64::MAX)`, which no store can
    /// create (ids count up from 0 and index a vector).
    fn from(id: FactId) -> Link {
        assert_ne!(id.0, u64::MAX, "fact id u64::MAX is not a linkable id");
        Link(id.0)
    }
}

impl From<Option<FactId>> for Link {
    /// See [`From<FactId>`](#impl-From<FactId>-for-Link).
    fn from(id: Option<FactId>) -> Link {
        id.map_or(Link::NONE, Link::from)
    }
}

impl<'de> Deserialize<'de> for Link {
    /// A stored link: `u64::MAX` is refused, since it would read as "none".
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Link, D::Error> {
        match Option::<FactId>::deserialize(d)? {
            Some(FactId(u64::MAX)) => Err(serde::de::Error::custom(format!(
                "fact id {} is out of range",
                u64::MAX
            ))),
            id => Ok(Link(id.map_or(u64::MAX, |id| id.0))),
        }
    }
}

impl From<Link> for Option<FactId> {
    fn from(link: Link) -> Option<FactId> {
        link.get()
    }
}

impl PartialEq<Option<FactId>> for Link {
    fn eq(&self, other: &Option<FactId>) -> bool {
        self.get() == *other
    }
}

impl fmt::Debug for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

/// What the store did with a fact: the mutable part of Definition 1.
///
/// Seventy-two bytes (issue 24's heap table; a test checks it). Rows and
/// checkpoints hold it as `StateRow` lays it out.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(from = "StateRow<'static>")]
pub struct FactState {
    /// Position in the version graph.
    pub status: Status,
    /// Activity intervals, oldest first; the last is open iff the fact is
    /// current. Empty for a fact that entered as history (a late arrival
    /// under event-time ordering was never active).
    pub intervals: Intervals,
    /// `s_f`: when the fact was last observed (event time of the latest
    /// observation that stated or restated it).
    pub last_observed: WallTime,
    /// How many observations stated this fact (1 + re-observations + absorptions).
    pub support: u32,
    /// The older version of the same key this fact displaced (points strictly
    /// backward in the chain's order, so the chain is acyclic).
    pub supersedes: Link,
    /// The newer version that displaced this one.
    pub superseded_by: Link,
    /// The operation that created the fact (`accept` for plain statements).
    pub entered_by: Op,
    /// A retraction of this version reinstates nothing older: when it became
    /// the head the cell was empty, or the version between it and its
    /// `supersedes` was erased. Rollback never crosses an erasure, so it
    /// never brings back a value that an erased one had displaced.
    pub rollback_stop: bool,
    /// Usage (decayed count of times the fact was served) and provenance
    /// edges (alternatives, tombstones and supporting sources).
    pub extras: Extras,
}

/// A [`FactState`] as rows and checkpoints store it: each field by name,
/// the usage as a plain [`Usage`], and the edges, the operation and the
/// rollback stop only when they say something. Borrowed to write, owned
/// when read.
#[derive(Serialize, Deserialize)]
struct StateRow<'a> {
    status: Status,
    intervals: Cow<'a, Intervals>,
    last_observed: WallTime,
    support: u32,
    usage: Usage,
    supersedes: Link,
    superseded_by: Link,
    #[serde(default, skip_serializing_if = "Op::is_accept")]
    entered_by: Op,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    rollback_stop: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    edges: Option<Cow<'a, Edges>>,
}

impl Serialize for FactState {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        let edges = self.edges();
        StateRow {
            status: self.status,
            intervals: Cow::Borrowed(&self.intervals),
            last_observed: self.last_observed,
            support: self.support,
            usage: self.extras.usage(),
            supersedes: self.supersedes,
            superseded_by: self.superseded_by,
            entered_by: self.entered_by,
            rollback_stop: self.rollback_stop,
            edges: (*edges != NO_EDGES).then_some(Cow::Borrowed(edges)),
        }
        .serialize(serializer)
    }
}

impl From<StateRow<'_>> for FactState {
    fn from(row: StateRow<'_>) -> FactState {
        let mut extras = Extras::default();
        extras.set_usage(row.usage);
        if let Some(edges) = row.edges {
            *extras.edges_mut() = edges.into_owned();
        }
        FactState {
            status: row.status,
            intervals: row.intervals.into_owned(),
            last_observed: row.last_observed,
            support: row.support,
            supersedes: row.supersedes,
            superseded_by: row.superseded_by,
            entered_by: row.entered_by,
            rollback_stop: row.rollback_stop,
            extras,
        }
    }
}

static NO_EDGES: Edges = Edges {
    alternative_of: None,
    alternatives: Vec::new(),
    revokes: None,
    revoked_by: None,
    supported_by: Vec::new(),
    log: Vec::new(),
};

impl FactState {
    /// The fact's provenance edges (empty when it has none).
    pub fn edges(&self) -> &Edges {
        self.extras.edges()
    }

    /// The fact's provenance edges, to write.
    pub fn edges_mut(&mut self) -> &mut Edges {
        self.extras.edges_mut()
    }

    /// Whether the fact is a version of its key's chain, as opposed to an
    /// alternative, a tombstone or a plan that hangs off it.
    pub fn on_chain(&self) -> bool {
        !matches!(
            self.status,
            Status::Tombstone | Status::Pending | Status::Confirmed | Status::Abandoned
        ) && self.edges().alternative_of.is_none()
    }

    /// Whether the fact is in the active view now.
    pub fn is_current(&self) -> bool {
        self.status.is_current()
    }

    /// The status the fact had just after commit `seq`, or `None` if it did
    /// not exist yet: the newest [`Edges::log`] entry at or before `seq`;
    /// before the log (or without one), the activity intervals (active in
    /// one, else the status it closed with).
    pub fn status_at(&self, seq: Seq) -> Option<Status> {
        self.status_when(
            |c| c.seq <= seq,
            |i| i.from() <= seq,
            self.active_at_seq(seq),
        )
    }

    /// [`FactState::status_at`] at wall time `t` of the commit clock.
    pub fn status_at_time(&self, t: WallTime) -> Option<Status> {
        self.status_when(|c| c.at <= t, |i| i.from_time <= t, self.active_at_time(t))
    }

    /// The status at the point where `logged` holds of the log entries up
    /// to it, `began` of an interval opened by then, and `active` says
    /// whether an interval contains it.
    fn status_when(
        &self,
        logged: impl Fn(&StatusChange) -> bool,
        began: impl Fn(&Interval) -> bool,
        active: bool,
    ) -> Option<Status> {
        let log = &self.edges().log;
        if let Some(c) = log.iter().rev().find(|c| logged(c)) {
            return Some(c.status);
        }
        let inactive = log.first().map_or(self.status, |c| c.status);
        match self.intervals.first() {
            None if log.is_empty() => Some(self.status),
            Some(first) if began(first) => Some(if active { Status::Active } else { inactive }),
            _ => None,
        }
    }

    /// Whether the fact was active just after commit `seq`.
    pub fn active_at_seq(&self, seq: Seq) -> bool {
        self.intervals.iter().any(|i| i.contains_seq(seq))
    }

    /// Whether the fact was active at wall time `t` (transaction time).
    pub fn active_at_time(&self, t: WallTime) -> bool {
        self.intervals.iter().any(|i| i.contains_time(t))
    }
}

/// A fact as the ledger holds it: body and state.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Fact {
    /// Immutable content, shared with index versions.
    pub body: Arc<FactBody>,
    /// Mutable metadata.
    pub state: FactState,
}

impl Fact {
    /// The fact's id.
    pub fn id(&self) -> FactId {
        self.body.id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_canonical_and_reject_empty_parts() {
        let k = Key::new("  Alex   Rivera ", "Meeting_Time").unwrap();
        assert_eq!(&*k.entity, "alex rivera");
        assert_eq!(&*k.slot, "meeting_time");
        assert_eq!(k.to_string(), "alex rivera/meeting_time");
        assert!(Key::new("", "room").is_err());
        assert!(Key::new("alex", "  ").is_err());
        assert!(Key::new("...", "room").is_err());
    }

    /// `value` writes the bytes `as_` writes, in JSON rows and MessagePack
    /// checkpoints, and reads back from them as itself.
    fn reads_and_writes_as<T, U>(value: &T, as_: &U)
    where
        T: Serialize + serde::de::DeserializeOwned + PartialEq + fmt::Debug,
        U: Serialize,
    {
        let json = serde_json::to_string(value).unwrap();
        assert_eq!(json, serde_json::to_string(as_).unwrap());
        assert_eq!(&serde_json::from_str::<T>(&json).unwrap(), value);
        let packed = rmp_serde::to_vec_named(value).unwrap();
        assert_eq!(packed, rmp_serde::to_vec_named(as_).unwrap());
        assert_eq!(&rmp_serde::from_slice::<T>(&packed).unwrap(), value);
    }

    #[test]
    fn links_read_and_write_as_optional_ids() {
        for id in [
            None,
            Some(FactId(0)),
            Some(FactId(7)),
            Some(FactId(u64::MAX - 1)),
        ] {
            let link = Link::from(id);
            assert_eq!(link.get(), id);
            assert_eq!(link.is_none(), id.is_none());
            reads_and_writes_as(&link, &id);
        }
        let max = serde_json::to_string(&Some(FactId(u64::MAX))).unwrap();
        let refused = serde_json::from_str::<Link>(&max).unwrap_err();
        assert!(refused.to_string().contains("out of range"), "{refused}");
    }

    #[test]
    fn bodies_read_and_write_as_before() {
        /// The layout before the names shared a box, as rows and
        /// checkpoints hold it.
        #[derive(Serialize)]
        struct Before {
            id: FactId,
            text: Box<str>,
            entities: Box<[Arc<str>]>,
            participants: Box<[Arc<str>]>,
            key: Option<Arc<Key>>,
            value: Option<Box<str>>,
            stated_at: WallTime,
            source: Option<Box<str>>,
        }
        let names = |n: &[&str]| n.iter().map(|&n| Name::from(n)).collect::<Vec<Name>>();
        let arcs = |n: &[&str]| n.iter().map(|&n| Arc::from(n)).collect::<Box<[Arc<str>]>>();
        for (entities, participants, key) in [
            (&[][..], &[][..], None),
            (
                &["ana", "lisbon"][..],
                &["Ana", "Ben"][..],
                Key::new("Ana", "city").ok(),
            ),
            (&["ana"][..], &[][..], None),
            (&[][..], &["Ben"][..], None),
        ] {
            let value = key.as_ref().map(|_| Box::from("lisbon"));
            let shared = key.clone().map(Arc::new);
            let parts = BodyParts {
                key: shared.as_ref(),
                value: value.as_deref(),
                source: Some("msg-1"),
                ..BodyParts::new("Ana moved to Lisbon", WallTime::from_secs(9))
            };
            let names_of = FactNames::new(names(entities), names(participants));
            let body = FactBody::new(FactId(3), names_of, parts);
            assert_eq!(
                (body.text(), body.value(), body.source()),
                ("Ana moved to Lisbon", value.as_deref(), Some("msg-1"))
            );
            assert_eq!(body.entities(), &*names(entities));
            assert_eq!(body.participants(), &*names(participants));
            let before = Before {
                id: body.id,
                text: body.text().into(),
                entities: arcs(entities),
                participants: arcs(participants),
                key: key.map(Arc::new),
                value,
                stated_at: body.stated_at,
                source: body.source().map(Box::from),
            };
            let json = serde_json::to_string(&body).unwrap();
            assert_eq!(json, serde_json::to_string(&before).unwrap());
            let read: FactBody = serde_json::from_str(&json).unwrap();
            assert_eq!(
                (read.entities(), read.participants()),
                (body.entities(), body.participants())
            );
            assert_eq!(serde_json::to_string(&read).unwrap(), json);
            let packed = rmp_serde::to_vec_named(&body).unwrap();
            assert_eq!(packed, rmp_serde::to_vec_named(&before).unwrap());
            let read: FactBody = rmp_serde::from_slice(&packed).unwrap();
            assert_eq!(rmp_serde::to_vec_named(&read).unwrap(), packed);
        }
    }

    #[test]
    fn a_body_keeps_an_empty_value_or_source_apart_from_none() {
        for value in [None, Some(""), Some("v"), Some("väl")] {
            for source in [None, Some(""), Some("m-1"), Some("é")] {
                for text in ["", "Ana moved", "Zoë"] {
                    let parts = BodyParts {
                        value,
                        source,
                        ..BodyParts::new(text, WallTime::EPOCH)
                    };
                    let body = FactBody::new(FactId(1), FactNames::default(), parts);
                    assert_eq!(
                        (body.text(), body.value(), body.source()),
                        (text, value, source)
                    );
                }
            }
        }
        assert_eq!(
            std::mem::size_of::<FactBody>(),
            48,
            "an Arc<FactBody> takes 64 bytes"
        );
    }

    #[test]
    fn usage_and_edges_share_one_box_only_when_there() {
        let used = Usage {
            value: 1.5,
            at: WallTime::from_secs(7),
        };
        let mut extras = Extras::default();
        extras.set_usage(Usage::default());
        assert!(extras.0.is_none(), "no box for the default usage");
        extras.set_usage(used);
        assert_eq!(extras.usage(), used);
        assert_eq!(*extras.edges(), NO_EDGES);
        extras.set_usage(Usage::default());
        assert!(extras.0.is_none(), "the box goes with the last thing in it");
        extras.edges_mut().revokes = Some(FactId(3));
        extras.set_usage(Usage::default());
        assert_eq!(
            extras.edges().revokes,
            Some(FactId(3)),
            "edges outlive usage"
        );
        assert_eq!(extras.usage(), Usage::default());
        let mut served = Extras::default();
        served.record_use(WallTime::from_secs(9), 14.0);
        assert_eq!(served.usage().value, 1.0);
        assert_eq!(std::mem::size_of::<FactState>(), 72);
        assert_eq!(
            std::mem::size_of::<Fact>(),
            80,
            "an Arc<Fact> fits 96 bytes"
        );
    }

    #[test]
    fn states_read_and_write_as_before() {
        /// The layout before issue 24's cut, as rows and checkpoints hold it.
        #[derive(Serialize)]
        struct Before {
            status: Status,
            intervals: Vec<Interval>,
            last_observed: WallTime,
            support: u32,
            usage: Usage,
            supersedes: Option<FactId>,
            superseded_by: Option<FactId>,
            #[serde(skip_serializing_if = "Op::is_accept")]
            entered_by: Op,
            #[serde(skip_serializing_if = "std::ops::Not::not")]
            rollback_stop: bool,
            #[serde(skip_serializing_if = "Option::is_none")]
            edges: Option<Edges>,
        }
        let at = |s| WallTime::from_secs(s);
        let mut closed = Interval::open(2, at(20));
        closed.close(5, at(50));
        let used = Usage {
            value: 2.0,
            at: at(60),
        };
        let edges = Edges {
            revokes: Some(FactId(1)),
            supported_by: vec!["mail".into()],
            ..Edges::default()
        };
        let intervals = [
            vec![],
            vec![closed],
            vec![closed, Interval::open(7, at(70))],
        ];
        for (n, intervals) in intervals.into_iter().enumerate() {
            for (usage, edges) in [
                (Usage::default(), None),
                (used, None),
                (Usage::default(), Some(edges.clone())),
                (used, Some(edges.clone())),
            ] {
                let before = Before {
                    status: Status::Superseded,
                    intervals: intervals.clone(),
                    last_observed: at(40),
                    support: 3,
                    usage,
                    supersedes: (n > 0).then_some(FactId(9)),
                    superseded_by: None,
                    entered_by: if n == 1 { Op::Revoke } else { Op::Accept },
                    rollback_stop: n == 2,
                    edges: edges.clone(),
                };
                let mut state = FactState {
                    status: before.status,
                    intervals: Intervals::from(intervals.clone()),
                    last_observed: before.last_observed,
                    support: before.support,
                    supersedes: Link::from(before.supersedes),
                    superseded_by: Link::NONE,
                    entered_by: before.entered_by,
                    rollback_stop: before.rollback_stop,
                    extras: Extras::default(),
                };
                state.extras.set_usage(usage);
                if let Some(edges) = edges {
                    *state.edges_mut() = edges;
                }
                assert_eq!(&*state.intervals, &intervals[..]);
                reads_and_writes_as(&state, &before);
            }
        }
    }

    #[test]
    fn intervals_read_and_write_as_before() {
        /// The layout before issue 24's cut, as rows and checkpoints hold it.
        #[derive(Debug, PartialEq, Serialize, Deserialize)]
        struct Before {
            from: Seq,
            from_time: WallTime,
            to: Option<(Seq, WallTime)>,
        }
        for to in [
            None,
            Some((9, WallTime::from_secs(90))),
            Some((u64::MAX - 1, WallTime::from_millis(-1))),
        ] {
            let before = Before {
                from: 4,
                from_time: WallTime::from_secs(40),
                to,
            };
            let mut interval = Interval::open(4, WallTime::from_secs(40));
            if let Some((seq, at)) = to {
                interval.close(seq, at);
            }
            assert_eq!(interval.to(), to);
            reads_and_writes_as(&interval, &before);
        }
        let max = r#"{"from":1,"from_time":0,"to":[18446744073709551615,5]}"#;
        let refused = serde_json::from_str::<Interval>(max).unwrap_err();
        assert!(refused.to_string().contains("out of range"), "{refused}");
        assert_eq!(std::mem::size_of::<Interval>(), 32);
    }

    #[test]
    fn intervals_are_half_open() {
        let mut i = Interval::open(3, WallTime::from_secs(30));
        i.close(5, WallTime::from_secs(50));
        assert!(!i.contains_seq(2) && i.contains_seq(3) && i.contains_seq(4) && !i.contains_seq(5));
        assert!(
            i.contains_time(WallTime::from_secs(49)) && !i.contains_time(WallTime::from_secs(50))
        );
    }

    #[test]
    fn usage_decays_by_half_life() {
        let mut u = Usage::default();
        let t0 = WallTime::from_secs(0);
        u.record(t0, 14.0);
        u.record(t0, 14.0);
        let later = t0.plus_millis(14 * crate::time::DAY_MS);
        assert!((u.at(later, 14.0) - 1.0).abs() < 1e-12);
    }

    fn said_by(at: i64, participants: &[&str]) -> FactBody {
        let names = FactNames::new([], participants.iter().map(|p| Name::from(*p)));
        FactBody::new(
            FactId(0),
            names,
            BodyParts::new("", WallTime::from_secs(at)),
        )
    }

    proptest::proptest! {
        /// `name_key`'s fast path for ASCII letters, digits and spaces
        /// gives the key the general path (normalize, then tokens) gives:
        /// month names (whole words and runs of letters beside digits),
        /// and `am` and `pm` after a number, included.
        #[test]
        fn the_fast_path_is_the_general_one(
            words in proptest::collection::vec(
                "[A-Za-z]{0,6}|June|SEPTEMBER|sept|am|PM|a|p|m|[0-9]{1,3}|[A-Za-z]{1,4}[0-9]{1,3}|[0-9]{1,2}(am|Pm|june|x)[0-9]?|(March|am|pm|sept)[0-9]{1,2}[a-z]{0,3}",
                0..6,
            ),
            gaps in proptest::collection::vec(" {0,3}", 0..7),
        ) {
            let mut name = String::new();
            for (i, w) in words.iter().enumerate() {
                name.push_str(gaps.get(i).map_or(" ", String::as_str));
                name.push_str(w);
            }
            name.push_str(gaps.last().map_or("", String::as_str));
            proptest::prop_assert_eq!(name_key(&name), name_key_general(&name));
        }

        #[test]
        fn a_name_has_a_key_exactly_when_its_key_is_not_empty(
            name in "[ a-zA-Z0-9.,:'_/\\-]{0,8}|\\PC{0,6}|[ '.,\u{2019}]{0,4}[a-z0-9]?[ '.,]{0,4}",
        ) {
            proptest::prop_assert_eq!(has_name_key(&name), !name_key(&name).is_empty());
        }

        /// What conversation context rests on: facts said beside each
        /// other always pass the compact check, whatever the order and
        /// repeats of their participants; the check tells sets apart.
        #[test]
        fn said_beside_implies_the_compact_check(
            a in proptest::collection::vec(0usize..4, 0..5),
            b in proptest::collection::vec(0usize..4, 0..5),
            at in 0i64..1_000,
        ) {
            const NAMES: [&str; 4] = ["Ana", "Ben", "Cleo", "ana"];
            let names = |v: &[usize]| v.iter().map(|&i| NAMES[i]).collect::<Vec<_>>();
            let (x, y) = (said_by(0, &names(&a)), said_by(at, &names(&b)));
            let gap = 600_000;
            let same_set = |p: &[usize], q: &[usize]| p.iter().all(|i| q.contains(i));
            let beside = x.said_beside(&y, gap);
            proptest::prop_assert_eq!(beside, same_set(&a, &b) && same_set(&b, &a) && at <= 600);
            if beside {
                proptest::prop_assert!(x.said().may_be_beside(y.said(), gap));
            }
            proptest::prop_assert_eq!(x.said() == y.said(), same_set(&a, &b) && same_set(&b, &a) && at == 0);
        }
    }
}
