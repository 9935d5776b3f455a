//! The PFM paper's published values for the tables `pfm eval` reproduces,
//! transcribed from `../shared/papers/000_…` (Tables 1, 2, 3, 6, 12, 13, 14, 15,
//! 16, 22 and Appendix D's threshold sweeps)
//! so `eval/RESULTS.md` can put them beside ours.

/// A value with its 95% interval.
pub type Cell = (f64, Option<(f64, f64)>);

/// Table 1: (store, B) → current, stale, wrong-person, co-injection, clean.
pub const TABLE1: [(&str, usize, [Cell; 5]); 4] = [
    (
        "pfm",
        800,
        [
            (0.998, Some((0.993, 1.000))),
            (0.000, Some((0.000, 0.005))),
            (0.121, Some((0.094, 0.149))),
            (0.000, Some((0.000, 0.005))),
            (0.877, Some((0.850, 0.904))),
        ],
    ),
    (
        "pfm_keyless",
        800,
        [
            (0.950, Some((0.923, 0.971))),
            (0.703, Some((0.654, 0.749))),
            (0.004, Some((0.000, 0.012))),
            (0.701, Some((0.652, 0.746))),
            (0.247, Some((0.210, 0.284))),
        ],
    ),
    (
        "pfm",
        240,
        [
            (0.869, Some((0.836, 0.903))),
            (0.000, Some((0.000, 0.005))),
            (0.000, Some((0.000, 0.005))),
            (0.000, Some((0.000, 0.005))),
            (0.869, Some((0.836, 0.903))),
        ],
    ),
    (
        "pfm_keyless",
        240,
        [
            (0.823, Some((0.791, 0.852))),
            (0.446, Some((0.396, 0.501))),
            (0.000, Some((0.000, 0.005))),
            (0.438, Some((0.388, 0.493))),
            (0.385, Some((0.331, 0.435))),
        ],
    ),
];

/// One row of Table 12 (B = 800): clean (interval), current, stale, wrong,
/// p50 ms, p99 ms.
pub struct ArmRow {
    /// Our arm name.
    pub arm: &'static str,
    /// The paper's label.
    pub label: &'static str,
    /// Clean retrieval and its interval.
    pub clean: Cell,
    /// Current-value recall.
    pub current: f64,
    /// Stale exposure.
    pub stale: f64,
    /// Wrong-person exposure.
    pub wrong: f64,
    /// Median latency, ms.
    pub p50_ms: f64,
    /// 99th percentile latency, ms.
    pub p99_ms: f64,
}

/// A row from `[clean, clean lo, clean hi, current, stale, wrong, p50, p99]`.
const fn row(arm: &'static str, label: &'static str, v: [f64; 8]) -> ArmRow {
    ArmRow {
        arm,
        label,
        clean: (v[0], Some((v[1], v[2]))),
        current: v[3],
        stale: v[4],
        wrong: v[5],
        p50_ms: v[6],
        p99_ms: v[7],
    }
}

/// Table 12, all arms; Table 2 is the subset named in [`TABLE2`].
pub const TABLE12: [ArmRow; 15] = [
    row(
        "pfm",
        "PFM",
        [0.877, 0.850, 0.904, 0.998, 0.000, 0.121, 0.25, 0.69],
    ),
    row(
        "bm25_validity",
        "BM25 + validity",
        [0.774, 0.737, 0.809, 0.891, 0.000, 0.120, 0.09, 0.26],
    ),
    row(
        "bm25_validity_p",
        "BM25 + validity (+P_t)",
        [0.873, 0.847, 0.896, 1.000, 0.000, 0.128, 0.10, 0.29],
    ),
    row(
        "dense_validity",
        "Dense + validity",
        [0.834, 0.802, 0.866, 0.998, 0.000, 0.165, 17.9, 88.5],
    ),
    row(
        "dense_validity_p",
        "Dense + validity (+P_t)",
        [0.836, 0.803, 0.868, 1.000, 0.000, 0.164, 18.3, 93.0],
    ),
    row(
        "hybrid_validity",
        "Hybrid + validity",
        [0.807, 0.773, 0.842, 0.949, 0.000, 0.151, 17.5, 79.7],
    ),
    row(
        "hybrid_validity_p",
        "Hybrid + validity (+P_t)",
        [0.843, 0.813, 0.872, 1.000, 0.000, 0.157, 18.2, 82.4],
    ),
    row(
        "bm25",
        "BM25",
        [0.155, 0.126, 0.186, 0.852, 0.715, 0.074, 0.15, 0.38],
    ),
    row(
        "bm25_p",
        "BM25 (+P_t)",
        [0.195, 0.164, 0.227, 0.997, 0.802, 0.007, 0.18, 0.46],
    ),
    row(
        "bm25_recency",
        "BM25 + recency",
        [0.185, 0.154, 0.215, 0.877, 0.667, 0.102, 0.18, 0.55],
    ),
    row(
        "bm25_recency_p",
        "BM25 + recency (+P_t)",
        [0.193, 0.162, 0.226, 0.989, 0.784, 0.038, 0.21, 0.60],
    ),
    row(
        "dense",
        "Dense (MiniLM)",
        [0.167, 0.137, 0.198, 0.968, 0.800, 0.131, 18.5, 86.6],
    ),
    row(
        "dense_p",
        "Dense (MiniLM) (+P_t)",
        [0.181, 0.151, 0.212, 0.989, 0.802, 0.060, 19.0, 97.4],
    ),
    row(
        "hybrid",
        "Hybrid (RRF)",
        [0.165, 0.136, 0.195, 0.889, 0.787, 0.098, 18.8, 88.5],
    ),
    row(
        "hybrid_p",
        "Hybrid (RRF) (+P_t)",
        [0.188, 0.157, 0.219, 0.998, 0.802, 0.027, 19.0, 96.4],
    ),
];

/// The rows of Table 2, in its order.
pub const TABLE2: [&str; 6] = [
    "pfm",
    "bm25_validity",
    "bm25_validity_p",
    "dense_validity_p",
    "hybrid_validity_p",
    "bm25_p",
];

/// The paper's TOST between PFM and BM25 + validity + P_t: difference,
/// 90% interval, p_TOST, and the permutation test's p.
pub const TOST: (f64, (f64, f64), f64, f64) = (0.005, (-0.008, 0.019), 0.038, 0.55);

/// Table 14: clean by revision depth d = 0..4, benchmark mix, reweighted.
pub const TABLE14: [(&str, [f64; 7]); 5] = [
    ("pfm", [0.878, 0.867, 0.874, 0.887, 0.902, 0.877, 0.877]),
    (
        "pfm_keyless",
        [0.794, 0.233, 0.047, 0.033, 0.023, 0.247, 0.603],
    ),
    (
        "bm25_validity_p",
        [0.857, 0.878, 0.868, 0.861, 0.910, 0.873, 0.863],
    ),
    (
        "dense_validity_p",
        [0.819, 0.850, 0.818, 0.848, 0.857, 0.836, 0.826],
    ),
    ("bm25_p", [0.983, 0.000, 0.000, 0.000, 0.000, 0.195, 0.688]),
];

/// Depth weights of the reweighted store (70% of facts never revised).
pub const REWEIGHT: [f64; 5] = [0.70, 0.18, 0.07, 0.03, 0.02];

/// Table 15: clean per seed (7, 11, 13, 17, 19), then mean and sd.
pub const TABLE15: [(&str, [f64; 7]); 7] = [
    ("pfm", [0.875, 0.912, 0.875, 0.854, 0.871, 0.877, 0.021]),
    (
        "bm25_validity",
        [0.754, 0.812, 0.754, 0.783, 0.767, 0.774, 0.025],
    ),
    (
        "bm25_validity_p",
        [0.871, 0.892, 0.867, 0.867, 0.867, 0.873, 0.011],
    ),
    (
        "dense_validity_p",
        [0.833, 0.867, 0.812, 0.850, 0.817, 0.836, 0.023],
    ),
    (
        "hybrid_validity_p",
        [0.842, 0.863, 0.829, 0.858, 0.825, 0.843, 0.017],
    ),
    ("bm25_p", [0.212, 0.179, 0.208, 0.183, 0.192, 0.195, 0.015]),
    ("dense_p", [0.200, 0.167, 0.179, 0.171, 0.188, 0.181, 0.013]),
];

/// Table 16: rows p ∈ {0, .05, .1, .2, .4}, columns q ∈ {0, .05, .1, .2};
/// each cell clean / stale / current lost.
pub const TABLE16: [[(f64, f64, f64); 4]; 5] = [
    [
        (0.877, 0.000, 0.000),
        (0.795, 0.048, 0.061),
        (0.713, 0.102, 0.125),
        (0.553, 0.193, 0.225),
    ],
    [
        (0.797, 0.100, 0.000),
        (0.709, 0.152, 0.068),
        (0.614, 0.210, 0.129),
        (0.496, 0.271, 0.214),
    ],
    [
        (0.730, 0.193, 0.000),
        (0.637, 0.242, 0.062),
        (0.562, 0.281, 0.118),
        (0.460, 0.332, 0.205),
    ],
    [
        (0.579, 0.370, 0.000),
        (0.522, 0.398, 0.048),
        (0.462, 0.425, 0.102),
        (0.368, 0.463, 0.186),
    ],
    [
        (0.376, 0.592, 0.000),
        (0.341, 0.592, 0.044),
        (0.331, 0.587, 0.083),
        (0.288, 0.598, 0.121),
    ],
];

/// Table 6: seed, messages, queries, ambiguous chains, ambiguous, revised,
/// cancelled, verbatim, paraphrased, d = 0..4.
pub const TABLE6: [[usize; 14]; 5] = [
    [7, 1441, 240, 33, 43, 188, 14, 14, 80, 52, 81, 48, 34, 25],
    [11, 1437, 240, 32, 40, 196, 16, 13, 80, 44, 81, 54, 30, 31],
    [13, 1426, 240, 34, 48, 189, 6, 14, 80, 51, 70, 73, 23, 23],
    [17, 1465, 240, 31, 42, 196, 16, 13, 80, 44, 59, 66, 39, 32],
    [19, 1428, 240, 38, 50, 193, 21, 12, 80, 47, 69, 77, 25, 22],
];
/// The seeds of Table 15's columns.
pub const SEED_COLUMNS: [u64; 5] = [7, 11, 13, 17, 19];

/// Table 3, by the rule names of `studies::rule_rows`: main-benchmark
/// wrong-person, clean and abstained; third-party recall; hard-slice clean
/// (120 answerable) and abstained (60 unanswerable).
pub const TABLE3: [(&str, [f64; 6]); 6] = [
    ("none", [0.121, 0.877, 0.000, 0.985, 0.000, 0.000]),
    ("cutoff@0.7", [0.008, 0.983, 0.000, 0.975, 0.908, 0.000]),
    (
        "participant filter",
        [0.000, 0.998, 0.000, 0.020, 1.000, 0.000],
    ),
    ("posterior", [0.032, 0.967, 0.000, 0.985, 1.000, 0.000]),
    (
        "posterior + slot gate",
        [0.032, 0.967, 0.002, 0.985, 1.000, 1.000],
    ),
    ("margin gate", [0.097, 0.743, 0.158, 0.815, 0.000, 0.000]),
];

/// Section 7.3: the paired clean-retrieval difference, posterior − none,
/// with its interval.
pub const POSTERIOR_GAIN: (f64, (f64, f64)) = (0.089, (0.071, 0.110));

/// Table 13, by the row names of `studies::tables`: clean, Δ, current,
/// stale, wrong, ambiguous clean, ambiguous wrong.
pub const TABLE13: [(&str, [f64; 7]); 19] = [
    ("full", [0.877, 0.000, 0.998, 0.000, 0.121, 0.341, 0.650]),
    (
        "no participant field",
        [0.842, -0.036, 0.996, 0.000, 0.154, 0.170, 0.830],
    ),
    (
        "no participant terms",
        [0.811, -0.067, 0.943, 0.000, 0.133, 0.211, 0.717],
    ),
    (
        "no participant seeds",
        [0.877, 0.000, 0.998, 0.000, 0.121, 0.341, 0.650],
    ),
    (
        "no participants at all",
        [0.756, -0.122, 0.890, 0.000, 0.138, 0.130, 0.744],
    ),
    (
        "no entity field",
        [0.884, 0.007, 0.998, 0.000, 0.114, 0.377, 0.614],
    ),
    (
        "no graph",
        [0.877, 0.000, 0.998, 0.000, 0.121, 0.341, 0.650],
    ),
    (
        "no usage",
        [0.877, 0.000, 0.998, 0.000, 0.121, 0.341, 0.650],
    ),
    (
        "no recency",
        [0.879, 0.002, 1.000, 0.000, 0.121, 0.350, 0.650],
    ),
    (
        "no positional decay",
        [0.871, -0.007, 0.998, 0.000, 0.128, 0.305, 0.686],
    ),
    (
        "no term cap",
        [0.877, 0.000, 0.998, 0.000, 0.121, 0.341, 0.650],
    ),
    (
        "no usage inheritance",
        [0.877, 0.000, 0.998, 0.000, 0.121, 0.341, 0.650],
    ),
    (
        "text only dedup",
        [0.877, 0.000, 0.998, 0.000, 0.121, 0.341, 0.650],
    ),
    (
        "no keys",
        [0.247, -0.631, 0.950, 0.703, 0.004, 0.247, 0.022],
    ),
    (
        "pfm — participant filter",
        [0.998, 0.121, 0.998, 0.000, 0.000, 0.991, 0.000],
    ),
    (
        "bm25_validity_p — participant filter",
        [1.000, 0.123, 1.000, 0.000, 0.000, 1.000, 0.000],
    ),
    (
        "pfm — cutoff@0.5",
        [0.898, 0.021, 0.998, 0.000, 0.100, 0.453, 0.538],
    ),
    (
        "pfm — cutoff@0.7",
        [0.983, 0.106, 0.992, 0.000, 0.008, 0.933, 0.045],
    ),
    (
        "pfm — cutoff@0.9",
        [0.866, -0.012, 0.866, 0.000, 0.000, 0.839, 0.000],
    ),
];

/// Table 22, by (block, condition): n, current, stale, wrong, clean.
pub const TABLE22: [(&str, &str, [f64; 5]); 20] = [
    (
        "two instances",
        "key (entity, slot)",
        [240.0, 0.500, 0.000, 0.000, 0.500],
    ),
    (
        "two instances",
        "key (entity, slot, noun)",
        [240.0, 1.000, 0.000, 0.000, 1.000],
    ),
    (
        "two instances",
        "keyless",
        [240.0, 1.000, 1.000, 0.000, 0.000],
    ),
    (
        "out of order",
        "in order",
        [1200.0, 0.998, 0.000, 0.121, 0.877],
    ),
    (
        "out of order",
        "out of order",
        [1200.0, 0.846, 0.156, 0.103, 0.747],
    ),
    (
        "out of order",
        "out of order, event time",
        [1200.0, 0.998, 0.000, 0.121, 0.877],
    ),
    (
        "participants",
        "pfm, subject",
        [400.0, 0.995, 0.000, 0.068, 0.927],
    ),
    (
        "participants",
        "pfm, third party",
        [200.0, 0.985, 0.000, 0.120, 0.865],
    ),
    (
        "participants",
        "pfm, group",
        [400.0, 0.995, 0.000, 0.030, 0.965],
    ),
    (
        "participants",
        "pfm, missing",
        [200.0, 1.000, 0.000, 0.070, 0.930],
    ),
    (
        "participants",
        "pfm, participant filter, subject",
        [400.0, 1.000, 0.000, 0.005, 0.995],
    ),
    (
        "participants",
        "pfm, participant filter, third party",
        [200.0, 0.020, 0.000, 0.005, 0.020],
    ),
    (
        "participants",
        "pfm, participant filter, group",
        [400.0, 0.998, 0.000, 0.000, 0.998],
    ),
    (
        "participants",
        "pfm, participant filter, missing",
        [200.0, 0.010, 0.000, 0.000, 0.010],
    ),
    ("hard", "pfm", [120.0, 1.000, 0.000, 1.000, 0.000]),
    (
        "hard",
        "pfm, unanswerable",
        [60.0, 0.000, 0.000, 1.000, 0.000],
    ),
    (
        "hard",
        "pfm, cutoff@0.7",
        [120.0, 1.000, 0.000, 0.092, 0.908],
    ),
    (
        "hard",
        "pfm, cutoff@0.7, unanswerable",
        [60.0, 0.000, 0.000, 1.000, 0.000],
    ),
    (
        "hard",
        "pfm, participant filter",
        [120.0, 1.000, 0.000, 0.000, 1.000],
    ),
    (
        "hard",
        "pfm, participant filter, unanswerable",
        [60.0, 0.000, 0.000, 1.000, 0.000],
    ),
];

/// Appendix D's threshold sweeps on the main benchmark: gate → (clean,
/// abstained on answerable, abstained on the hard slice's unanswerable);
/// the margin gate's abstention is reported as a range, 0.158–0.178.
pub const SWEEP: [(&str, [Option<f64>; 3]); 7] = [
    ("slot@0.3", [Some(0.967), Some(0.002), None]),
    ("slot@0.5", [Some(0.967), Some(0.002), Some(1.000)]),
    ("slot@0.7", [Some(0.712), Some(0.257), None]),
    ("margin@1.5", [None, None, Some(0.000)]),
    ("margin@2", [Some(0.743), Some(0.158), Some(0.000)]),
    ("margin@3", [None, None, Some(0.000)]),
    ("margin@5", [None, None, Some(0.000)]),
];
