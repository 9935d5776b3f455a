//! The pieces every table of the report is built from: a rate with its
//! interval, and the `ours (lo, hi) · paper` cell. Shared by `report` and
//! `studies::tables`, which otherwise do not depend on each other.

use std::fmt::Write as _;

use serde::Serialize;

use super::stats::Clusters;

/// RNG seed of every resampling procedure (reruns reproduce intervals).
pub(crate) const RNG_SEED: u64 = 20_260_601;

/// A rate and its 95% interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rate {
    /// Share of requests.
    pub value: f64,
    /// 95% interval (two-level bootstrap, or Wilson over chains at 0 or 1).
    pub ci: (f64, f64),
}

/// The share of `(seed, chain, outcome)` requests with the outcome, and its
/// 95% interval (two-level bootstrap; Wilson over chains at 0 or 1).
pub(crate) fn rate_of(outcomes: impl Iterator<Item = (u64, usize, bool)>, reps: usize) -> Rate {
    let c = Clusters::new(outcomes.map(|(s, c, v)| (s, c, f64::from(u8::from(v)))));
    Rate {
        value: c.mean(),
        ci: c.interval95(reps, RNG_SEED),
    }
}

/// `k` of `n` trials, with a Wilson 95% interval: the probes' and the
/// speculation study's cells, which count instances rather than
/// bootstrap over seeds and chains.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Successes.
    pub k: usize,
    /// Trials.
    pub n: usize,
}

impl Tally {
    /// The tally of `hits`.
    pub fn of(hits: impl IntoIterator<Item = bool>) -> Tally {
        let mut t = Tally::default();
        for h in hits {
            t.add(h);
        }
        t
    }

    /// One more trial.
    pub fn add(&mut self, hit: bool) {
        self.k += usize::from(hit);
        self.n += 1;
    }

    /// `rate (lo, hi) · paper (k/n)`, or `—` without trials.
    pub(crate) fn cell(&self, paper: Option<f64>) -> String {
        if self.n == 0 {
            return "—".into();
        }
        let ci = super::stats::wilson(self.k as u64, self.n as u64, super::stats::Z95);
        format!(
            "{} ({}/{})",
            cell(self.k as f64 / self.n as f64, Some(ci), paper),
            self.k,
            self.n
        )
    }
}

pub(crate) fn f3(v: f64) -> String {
    format!("{v:.3}")
}

pub(crate) fn ci(c: (f64, f64)) -> String {
    format!("({:.3}, {:.3})", c.0, c.1)
}

/// `ours (lo, hi) · paper`; ✱ when the paper's value is outside our interval.
pub(crate) fn cell(ours: f64, ours_ci: Option<(f64, f64)>, paper: Option<f64>) -> String {
    let mut s = f3(ours);
    if let Some(c) = ours_ci {
        s.push(' ');
        s.push_str(&ci(c));
    }
    if let Some(p) = paper {
        let _ = write!(s, " · {}", f3(p));
        if let Some((lo, hi)) = ours_ci
            && (p < lo - 5e-4 || p > hi + 5e-4)
        {
            s.push_str(" ✱");
        }
    }
    s
}
