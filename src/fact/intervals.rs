//! A fact's activity intervals in commit sequence ([`Interval`]) and the
//! list of them a fact's state holds ([`Intervals`]).
//!
//! Both are laid out for the ledger's per-fact record (issue 24): an
//! interval is 32 bytes, and a list of at most one interval (almost every
//! fact's) is the interval itself, with no length or tag beside it. The
//! opening commit is stored complemented in a `NonZeroU64`, whose zero the
//! compiler uses to tell the one-interval list from a `Vec`: commit numbers
//! stay below `u64::MAX`, so no opening commit complements to zero.

use std::fmt;
use std::num::NonZeroU64;
use std::ops::{Deref, DerefMut};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Seq;
use crate::time::WallTime;

/// A half-open activity interval `[from, to)` in commit sequence, with the
/// wall-clock commit times of both ends.
///
/// Thirty-two bytes: the closing end is a commit number and its time, with
/// `u64::MAX` for "still open", where `Option<(Seq, WallTime)>` took
/// twenty-four (issue 24's heap table). It serializes exactly as
/// `{from, from_time, to: Option<(Seq, WallTime)>}` did, and a stored
/// commit of `u64::MAX` at either end is refused, never read as open.
#[derive(Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "IntervalRow", try_from = "IntervalRow")]
pub struct Interval {
    /// `!from`: the commit that opened the interval, complemented (never
    /// zero, since commit numbers stay below `u64::MAX`).
    from: NonZeroU64,
    /// Wall time of that commit.
    pub from_time: WallTime,
    /// Commit that closed it (`OPEN` while open: `b_f = ∞`).
    to: Seq,
    /// Wall time of that commit (the epoch while open).
    to_time: WallTime,
}

/// The closing commit of an interval that is still open.
const OPEN: Seq = Seq::MAX;

/// An [`Interval`] as rows and checkpoints store it.
#[derive(Clone, Copy, Serialize, Deserialize)]
struct IntervalRow {
    from: Seq,
    from_time: WallTime,
    to: Option<(Seq, WallTime)>,
}

impl From<Interval> for IntervalRow {
    fn from(i: Interval) -> IntervalRow {
        IntervalRow {
            from: i.from(),
            from_time: i.from_time,
            to: i.to(),
        }
    }
}

impl TryFrom<IntervalRow> for Interval {
    type Error = String;

    fn try_from(row: IntervalRow) -> Result<Interval, String> {
        let out_of_range = |seq| format!("an interval bounded by commit {seq} is out of range");
        if row.from == OPEN {
            return Err(out_of_range(row.from));
        }
        let mut i = Interval::open(row.from, row.from_time);
        if let Some((to, to_time)) = row.to {
            if to == OPEN {
                return Err(out_of_range(to));
            }
            i.close(to, to_time);
        }
        Ok(i)
    }
}

impl Interval {
    /// An interval opened by commit `from` (never `u64::MAX`) at wall time
    /// `from_time`.
    pub fn open(from: Seq, from_time: WallTime) -> Interval {
        Interval {
            from: NonZeroU64::new(!from).expect("commit numbers stay below u64::MAX"),
            from_time,
            to: OPEN,
            to_time: WallTime::EPOCH,
        }
    }

    /// The commit that opened the interval.
    pub fn from(&self) -> Seq {
        !self.from.get()
    }

    /// The commit that closed the interval and its wall time; `None` while
    /// open.
    pub fn to(&self) -> Option<(Seq, WallTime)> {
        (self.to != OPEN).then_some((self.to, self.to_time))
    }

    /// Closes the interval at commit `to` (never `u64::MAX`), wall time `at`.
    pub fn close(&mut self, to: Seq, at: WallTime) {
        assert_ne!(to, OPEN, "commit numbers stay below u64::MAX");
        self.to = to;
        self.to_time = at;
    }

    /// Whether commit `seq` lies inside the interval.
    pub fn contains_seq(&self, seq: Seq) -> bool {
        self.from() <= seq && seq < self.to
    }

    /// Whether wall time `t` lies inside the interval.
    pub fn contains_time(&self, t: WallTime) -> bool {
        self.from_time <= t && (self.to == OPEN || t < self.to_time)
    }
}

impl fmt::Debug for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Interval")
            .field("from", &self.from())
            .field("from_time", &self.from_time)
            .field("to", &self.to())
            .finish()
    }
}

/// A fact's activity intervals, oldest first: a slice to read, [`push`]
/// to add one. Almost every fact has at most one (only a rollback reopens
/// a displaced value), so one interval is held inline and more go to a
/// `Vec`: 32 bytes a fact, where an inline-one `SmallVec` took 40 (issue
/// 24's heap table) and a plain `Vec` an allocation of its own.
///
/// Invariant: `Many` holds no intervals or at least two, so a list of one
/// is always `One` and two equal lists have equal representations.
/// Serialized as a sequence, as the `SmallVec` before it was.
///
/// [`push`]: Intervals::push
#[derive(Clone, PartialEq, Eq)]
pub struct Intervals(Repr);

#[derive(Clone, PartialEq, Eq)]
enum Repr {
    One(Interval),
    Many(Vec<Interval>),
}

const _: () = assert!(std::mem::size_of::<Intervals>() == 32);

impl Intervals {
    /// No intervals (a fact that was never active).
    pub const fn new() -> Intervals {
        Intervals(Repr::Many(Vec::new()))
    }

    /// Appends an interval.
    pub fn push(&mut self, interval: Interval) {
        match &mut self.0 {
            Repr::One(first) => self.0 = Repr::Many(vec![*first, interval]),
            Repr::Many(all) if all.is_empty() => self.0 = Repr::One(interval),
            Repr::Many(all) => all.push(interval),
        }
    }
}

impl Default for Intervals {
    fn default() -> Intervals {
        Intervals::new()
    }
}

impl From<Interval> for Intervals {
    fn from(interval: Interval) -> Intervals {
        Intervals(Repr::One(interval))
    }
}

impl From<Vec<Interval>> for Intervals {
    fn from(all: Vec<Interval>) -> Intervals {
        match <[Interval; 1]>::try_from(all) {
            Ok([one]) => Intervals(Repr::One(one)),
            Err(all) => Intervals(Repr::Many(all)),
        }
    }
}

impl Deref for Intervals {
    type Target = [Interval];

    fn deref(&self) -> &[Interval] {
        match &self.0 {
            Repr::One(one) => std::slice::from_ref(one),
            Repr::Many(all) => all,
        }
    }
}

impl DerefMut for Intervals {
    fn deref_mut(&mut self) -> &mut [Interval] {
        match &mut self.0 {
            Repr::One(one) => std::slice::from_mut(one),
            Repr::Many(all) => all,
        }
    }
}

impl fmt::Debug for Intervals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Intervals {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Intervals {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Intervals, D::Error> {
        Vec::deserialize(deserializer).map(Intervals::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_of_one_is_held_inline_and_reads_as_a_vec() {
        let at = |s| WallTime::from_secs(s);
        let all: Vec<Interval> = (0..4).map(|i| Interval::open(i, at(i as i64))).collect();
        let mut list = Intervals::new();
        for (n, &interval) in all.iter().enumerate() {
            assert_eq!(&*list, &all[..n]);
            assert_eq!(matches!(list.0, Repr::One(_)), n == 1);
            let json = serde_json::to_string(&list).unwrap();
            assert_eq!(json, serde_json::to_string(&all[..n]).unwrap());
            assert_eq!(serde_json::from_str::<Intervals>(&json).unwrap(), list);
            list.push(interval);
        }
        list.last_mut().unwrap().close(9, at(9));
        assert_eq!(list[3].to(), Some((9, at(9))));
        assert_eq!(list[3].from(), 3);
        let max = r#"{"from":18446744073709551615,"from_time":0,"to":null}"#;
        let refused = serde_json::from_str::<Interval>(max).unwrap_err();
        assert!(refused.to_string().contains("out of range"), "{refused}");
    }
}
