//! Section 6's statistics: two-level (seed, chain) bootstrap intervals, Wilson
//! intervals over chains for rates of 0 or 1, a paired chain-level
//! permutation test, and two one-sided tests (TOST) for equivalence.
//!
//! Queries of one chain share labels and chains of one instance share a seed,
//! so the resampling units are seeds, then chains within each drawn seed; a
//! query is never resampled on its own. Every procedure takes its RNG seed
//! from the caller, so reruns reproduce every interval exactly.

use std::collections::BTreeMap;

use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

/// The normal quantile for a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Per-query values grouped by seed, then by chain, kept as per-chain sums.
#[derive(Clone, Debug, Default)]
pub struct Clusters {
    /// Per seed: per chain (sum of values, number of queries).
    seeds: Vec<Vec<(f64, usize)>>,
}

impl Clusters {
    /// Groups `(seed, chain, value)` triples.
    pub fn new(values: impl IntoIterator<Item = (u64, usize, f64)>) -> Self {
        let mut grouped: BTreeMap<u64, BTreeMap<usize, (f64, usize)>> = BTreeMap::new();
        for (seed, chain, v) in values {
            let e = grouped.entry(seed).or_default().entry(chain).or_default();
            e.0 += v;
            e.1 += 1;
        }
        Clusters {
            seeds: grouped
                .into_values()
                .map(|chains| chains.into_values().collect())
                .collect(),
        }
    }

    /// Number of queries.
    pub fn len(&self) -> usize {
        self.chains().map(|c| c.1).sum()
    }

    /// Whether there are no queries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of chains (over all seeds).
    pub fn chain_count(&self) -> usize {
        self.seeds.iter().map(Vec::len).sum()
    }

    fn chains(&self) -> impl Iterator<Item = &(f64, usize)> {
        self.seeds.iter().flatten()
    }

    /// Mean over queries (0 when empty).
    pub fn mean(&self) -> f64 {
        let (s, n) = self.chains().fold((0.0, 0), |(s, n), c| (s + c.0, n + c.1));
        if n == 0 { 0.0 } else { s / n as f64 }
    }

    /// `reps` two-level bootstrap replicates of the mean: draw as many seeds
    /// as there are, with replacement; within each drawn seed draw as many
    /// chains as it has, with replacement; average their queries.
    pub fn bootstrap(&self, reps: usize, rng_seed: u64) -> Vec<f64> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(rng_seed);
        let mut out = Vec::with_capacity(reps);
        if self.is_empty() {
            return vec![0.0; reps];
        }
        for _ in 0..reps {
            let (mut sum, mut n) = (0.0, 0usize);
            for _ in 0..self.seeds.len() {
                let chains = &self.seeds[rng.random_range(0..self.seeds.len())];
                for _ in 0..chains.len() {
                    let c = chains[rng.random_range(0..chains.len())];
                    sum += c.0;
                    n += c.1;
                }
            }
            out.push(if n == 0 { 0.0 } else { sum / n as f64 });
        }
        out
    }

    /// The 95% interval of a rate in the paper's way: Wilson over chains
    /// when every query has the same 0/1 value, else the two-level bootstrap
    /// percentile interval.
    pub fn interval95(&self, reps: usize, rng_seed: u64) -> (f64, f64) {
        let all = |v: f64| self.chains().all(|c| c.0 == v * c.1 as f64);
        let n = self.chain_count() as u64;
        if all(0.0) {
            wilson(0, n, Z95)
        } else if all(1.0) {
            wilson(n, n, Z95)
        } else {
            percentile_interval(&mut self.bootstrap(reps, rng_seed), 0.95)
        }
    }

    /// Paired chain-level permutation test of "mean = 0" for per-query
    /// differences: each chain's sum keeps or flips its sign at random.
    /// Two-sided; `p = (1 + #{|T*| >= |T|}) / (1 + reps)`.
    pub fn permutation_p(&self, reps: usize, rng_seed: u64) -> f64 {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(rng_seed);
        let sums: Vec<f64> = self.chains().map(|c| c.0).collect();
        let observed: f64 = sums.iter().sum::<f64>().abs();
        let tolerance = 1e-9 * (1.0 + observed);
        let mut extreme = 0usize;
        for _ in 0..reps {
            let t: f64 = sums
                .iter()
                .map(|s| if rng.random_bool(0.5) { *s } else { -*s })
                .sum();
            if t.abs() >= observed - tolerance {
                extreme += 1;
            }
        }
        (1 + extreme) as f64 / (1 + reps) as f64
    }

    /// Two one-sided tests of `|mean| < margin` on per-query differences,
    /// from the two-level bootstrap: the 90% percentile interval, and
    /// `p = max(P*(d >= margin), P*(d <= -margin))` over the replicates, so
    /// `p < 0.05` exactly when the 90% interval lies inside the margin.
    pub fn tost(&self, margin: f64, reps: usize, rng_seed: u64) -> Tost {
        let mut reps = self.bootstrap(reps, rng_seed);
        let n = reps.len().max(1) as f64;
        let above = reps.iter().filter(|d| **d >= margin).count() as f64 / n;
        let below = reps.iter().filter(|d| **d <= -margin).count() as f64 / n;
        let ci90 = percentile_interval(&mut reps, 0.90);
        Tost {
            diff: self.mean(),
            ci90,
            p: above.max(below),
            margin,
            equivalent: ci90.0 > -margin && ci90.1 < margin,
        }
    }
}

/// The outcome of two one-sided tests.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Tost {
    /// Observed mean difference.
    pub diff: f64,
    /// 90% bootstrap interval of the difference.
    pub ci90: (f64, f64),
    /// TOST p-value.
    pub p: f64,
    /// The equivalence margin.
    pub margin: f64,
    /// Whether the 90% interval lies inside (−margin, margin).
    pub equivalent: bool,
}

/// The central `level` percentile interval of `values` (sorted in place).
pub fn percentile_interval(values: &mut [f64], level: f64) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    values.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    (quantile(values, tail), quantile(values, 1.0 - tail))
}

/// Linear-interpolation quantile of sorted values (type 7).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let h = (sorted.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Wilson score interval for `successes` of `n` at normal quantile `z`.
pub fn wilson(successes: u64, n: u64, z: f64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n_f = n as f64;
    let p = successes as f64 / n_f;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n_f)) / (1.0 + z2 / n_f);
    let half = z / (1.0 + z2 / n_f) * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt();
    // At 0 or n the exact bound is 0 or 1; rounding would leave ~1e-19.
    let lo = if successes == 0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let hi = if successes >= n {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    (lo, hi)
}

/// The 95% Wilson interval.
pub fn wilson95(successes: u64, n: u64) -> (f64, f64) {
    wilson(successes, n, Z95)
}

/// Mean and sample standard deviation.
pub fn mean_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let mean = values.iter().sum::<f64>() / n;
    let var = if values.len() > 1 {
        values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn wilson_matches_known_values() {
        // Paper, Table 1: zero of 800 chains -> upper bound 0.005.
        let (lo, hi) = wilson95(0, 800);
        assert_eq!(lo, 0.0);
        assert!(close(hi, 0.004_779, 1e-6), "{hi}");
        // 5 of 10: (0.2366, 0.7634), the textbook example.
        let (lo, hi) = wilson95(5, 10);
        assert!(
            close(lo, 0.236_6, 1e-4) && close(hi, 0.763_4, 1e-4),
            "{lo} {hi}"
        );
        // 81 of 263 (Wilson 1927-style example): (0.2553, 0.3662).
        let (lo, hi) = wilson95(81, 263);
        assert!(
            close(lo, 0.255_3, 1e-4) && close(hi, 0.366_2, 1e-4),
            "{lo} {hi}"
        );
        assert_eq!(wilson95(10, 10).1, 1.0);
    }

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert!(close(quantile(&v, 0.5), 2.5, 1e-12));
        assert_eq!(mean_sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).0, 5.0);
        assert!(close(
            mean_sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).1,
            2.138,
            1e-3
        ));
    }

    /// One seed, one query per chain: the bootstrap of a Bernoulli mean is the
    /// binomial, whose 95% interval is p ± 1.96·sqrt(p(1−p)/n).
    #[test]
    fn bootstrap_of_independent_queries_matches_the_normal_interval() {
        let n = 2_000;
        let data = (0..n).map(|i| (7, i, if i % 10 < 3 { 1.0 } else { 0.0 }));
        let c = Clusters::new(data);
        assert!(close(c.mean(), 0.3, 1e-12));
        let (lo, hi) = c.interval95(4_000, 1);
        let half = Z95 * (0.3f64 * 0.7 / n as f64).sqrt();
        assert!(
            close(lo, 0.3 - half, 0.004) && close(hi, 0.3 + half, 0.004),
            "{lo} {hi}"
        );
        assert_eq!(c.interval95(4_000, 1), (lo, hi), "fixed seeds reproduce");
    }

    /// Two queries of a chain always agree: the chain is the unit, so the
    /// interval is that of n/2 independent chains, √2 wider than if queries
    /// were resampled alone.
    #[test]
    fn bootstrap_resamples_chains_not_queries() {
        let n = 1_000;
        let data = (0..n).flat_map(|i| {
            let v = if i % 2 == 0 { 1.0 } else { 0.0 };
            [(7, i, v), (7, i, v)]
        });
        let c = Clusters::new(data);
        assert_eq!((c.len(), c.chain_count()), (2 * n, n));
        let (lo, hi) = c.interval95(4_000, 2);
        let half = Z95 * (0.25 / n as f64).sqrt();
        assert!(close(hi - lo, 2.0 * half, 0.006), "{lo} {hi} vs ±{half}");
    }

    /// Identical seeds add no seed-level variance; seeds that differ do.
    #[test]
    fn bootstrap_resamples_seeds() {
        let same = Clusters::new(
            (0..5).flat_map(|s| (0..100).map(move |c| (s, c, f64::from(c % 2 == 0)))),
        );
        let differ = Clusters::new(
            (0..5).flat_map(|s| (0..100).map(move |c| (s, c, f64::from((c as u64) < 20 * s)))),
        );
        let width = |c: &Clusters| {
            let (lo, hi) = c.interval95(2_000, 3);
            hi - lo
        };
        assert!(
            width(&differ) > 2.0 * width(&same),
            "{} {}",
            width(&differ),
            width(&same)
        );
    }

    #[test]
    fn all_zero_rates_use_wilson_over_chains() {
        let c = Clusters::new(
            (0..5).flat_map(|s| (0..160).flat_map(move |ch| [(s, ch, 0.0), (s, ch, 0.0)])),
        );
        assert_eq!(c.interval95(100, 1), wilson95(0, 800));
        let ones = Clusters::new((0..10).map(|ch| (7, ch, 1.0)));
        assert_eq!(ones.interval95(100, 1), wilson95(10, 10));
    }

    #[test]
    fn permutation_test_separates_equal_from_different_arms() {
        let equal = Clusters::new((0..200).map(|ch| (7, ch, 0.0)));
        assert_eq!(equal.permutation_p(999, 1), 1.0);
        let mixed = Clusters::new((0..200).map(|ch| (7, ch, if ch % 2 == 0 { 1.0 } else { -1.0 })));
        assert!(mixed.permutation_p(999, 1) > 0.5);
        let better = Clusters::new((0..200).map(|ch| (7, ch, if ch % 4 == 0 { 0.0 } else { 1.0 })));
        assert_eq!(better.permutation_p(999, 1), 1.0 / 1000.0);
    }

    #[test]
    fn tost_finds_equivalence_only_inside_the_margin() {
        // Differences of ±1 on 2% of chains each way: mean 0, tight interval.
        let tight = Clusters::new((0..2_000).map(|ch| {
            (
                7,
                ch,
                match ch % 100 {
                    0 | 1 => 1.0,
                    2 | 3 => -1.0,
                    _ => 0.0,
                },
            )
        }));
        let t = tight.tost(0.02, 2_000, 5);
        assert!(
            t.equivalent && t.p < 0.05 && close(t.diff, 0.0, 1e-12),
            "{t:?}"
        );
        // A real 10-point difference is not equivalent.
        let shifted = Clusters::new((0..2_000).map(|ch| (7, ch, f64::from(ch % 10 == 0))));
        let t = shifted.tost(0.02, 2_000, 5);
        assert!(
            !t.equivalent && t.p > 0.5 && close(t.diff, 0.1, 1e-12),
            "{t:?}"
        );
    }
}
