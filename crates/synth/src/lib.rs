//! The synthetic scaling corpus of `shared/specs/synthetic-corpus.md`: a
//! deterministic generator whose JSONL output is byte-identical to the
//! reference `synth_corpus.py`, and a loader for that format, so any engine
//! can be timed on exactly the same facts and queries.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use pfm::error::{Error, Result};
use pfm::memory::Observation;
use pfm::retrieve::Request;
use pfm::time::WallTime;

/// 2026-01-01T00:00:00Z, the corpus's time origin (Unix seconds).
pub const BASE_SECS: i64 = 1_767_225_600;
/// Queries per corpus by default; the first 50 are warm-up.
pub const DEFAULT_QUERIES: usize = 350;
/// Participants `user0 … user39`.
pub const PARTICIPANTS: u64 = 40;

const VERBS: [&str; 6] = [
    "met",
    "emailed",
    "reviewed",
    "scheduled",
    "called",
    "visited",
];
const OBJECTS: [&str; 6] = [
    "budget", "roadmap", "contract", "launch", "invoice", "design",
];

/// Term distribution of the corpus.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Vocabulary {
    /// Six verbs and six objects.
    Wide,
    /// Every fact and query uses verb 0 and object 0.
    Narrow,
}

impl FromStr for Vocabulary {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "wide" => Ok(Vocabulary::Wide),
            "narrow" => Ok(Vocabulary::Narrow),
            _ => Err(Error::InvalidConfig(format!(
                "vocabulary {s:?}: use wide or narrow"
            ))),
        }
    }
}

impl std::fmt::Display for Vocabulary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Vocabulary::Wide => "wide",
            Vocabulary::Narrow => "narrow",
        })
    }
}

/// SplitMix64, as the spec defines it.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A stream whose state starts at `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `next() % k`.
    pub fn uniform(&mut self, k: u64) -> u64 {
        self.next_u64() % k
    }
}

/// One fact line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SynthFact {
    /// Position in the corpus.
    pub id: u64,
    /// `ent{a} {verb} the {object} with ent{b}`.
    pub text: String,
    /// `[ent{a}, ent{b}]`.
    pub entities: Vec<String>,
    /// `[user{p}]`.
    pub participants: Vec<String>,
    /// Unix seconds.
    pub observed_at: i64,
}

/// One query line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SynthQuery {
    /// Position in the query list.
    pub id: u64,
    /// `ent{a} {verb} the {object}`.
    pub text: String,
    /// `[user{p}]`.
    pub participants: Vec<String>,
    /// Unix seconds.
    pub at: i64,
}

impl SynthFact {
    /// The fact as an observation (structured entities, no key).
    pub fn observation(&self) -> Observation {
        Observation::new(self.text.clone(), WallTime::from_secs(self.observed_at))
            .with_entities(self.entities.clone())
            .with_participants(self.participants.clone())
    }

    /// The JSON line, byte-identical to the reference generator's.
    pub fn to_json_line(&self) -> String {
        let mut s = String::with_capacity(160);
        let _ = write!(
            s,
            "{{\"id\": {}, \"text\": {}, \"entities\": ",
            self.id,
            json_str(&self.text)
        );
        json_list(&mut s, &self.entities);
        s.push_str(", \"participants\": ");
        json_list(&mut s, &self.participants);
        let _ = write!(s, ", \"observed_at\": {}}}", self.observed_at);
        s
    }
}

impl SynthQuery {
    /// The query as a retrieval request with the spec's k = 6, B = 800.
    pub fn request(&self) -> Request {
        Request::new(self.text.clone(), WallTime::from_secs(self.at))
            .with_participants(self.participants.clone())
    }

    /// The JSON line, byte-identical to the reference generator's.
    pub fn to_json_line(&self) -> String {
        let mut s = String::with_capacity(120);
        let _ = write!(
            s,
            "{{\"id\": {}, \"text\": {}, \"participants\": ",
            self.id,
            json_str(&self.text)
        );
        json_list(&mut s, &self.participants);
        let _ = write!(s, ", \"at\": {}}}", self.at);
        s
    }
}

fn json_str(s: &str) -> String {
    // Infallible: serializing a string cannot fail.
    serde_json::to_string(s).expect("strings serialize")
}

fn json_list(out: &mut String, items: &[String]) {
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&json_str(item));
    }
    out.push(']');
}

/// Generates `n` facts and `q` queries for `seed` and `vocabulary`.
pub fn generate(
    n: u64,
    seed: u64,
    vocabulary: Vocabulary,
    q: usize,
) -> (Vec<SynthFact>, Vec<SynthQuery>) {
    let m = (n / 10).max(200);
    let narrow = vocabulary == Vocabulary::Narrow;
    let mut rng = SplitMix64::new(seed);
    let facts = (0..n)
        .map(|i| {
            let a = rng.uniform(m);
            let mut b = rng.uniform(m - 1);
            if b >= a {
                b += 1;
            }
            let (mut v, mut o, p) = (rng.uniform(6), rng.uniform(6), rng.uniform(PARTICIPANTS));
            if narrow {
                (v, o) = (0, 0);
            }
            SynthFact {
                id: i,
                text: format!(
                    "ent{a} {} the {} with ent{b}",
                    VERBS[v as usize], OBJECTS[o as usize]
                ),
                entities: vec![format!("ent{a}"), format!("ent{b}")],
                participants: vec![format!("user{p}")],
                observed_at: BASE_SECS + i as i64,
            }
        })
        .collect();
    let mut qrng = SplitMix64::new(seed.wrapping_add(1_000_003));
    let queries = (0..q as u64)
        .map(|j| {
            let a = qrng.uniform(m);
            let (mut v, mut o, p) = (qrng.uniform(6), qrng.uniform(6), qrng.uniform(PARTICIPANTS));
            if narrow {
                (v, o) = (0, 0);
            }
            SynthQuery {
                id: j,
                text: format!("ent{a} {} the {}", VERBS[v as usize], OBJECTS[o as usize]),
                participants: vec![format!("user{p}")],
                at: BASE_SECS + n as i64 + 1,
            }
        })
        .collect();
    (facts, queries)
}

fn read_jsonl<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Vec<T>> {
    let file = std::fs::File::open(path).map_err(Error::io(path))?;
    let mut out = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(Error::io(path))?;
        if line.trim().is_empty() {
            continue;
        }
        out.push(serde_json::from_str(&line).map_err(|e| Error::Jsonl {
            path: path.display().to_string(),
            line: i + 1,
            message: e.to_string(),
        })?);
    }
    Ok(out)
}

/// Reads a facts file in the spec's JSONL format.
pub fn read_facts(path: &Path) -> Result<Vec<SynthFact>> {
    read_jsonl(path)
}

/// Reads a queries file in the spec's JSONL format.
pub fn read_queries(path: &Path) -> Result<Vec<SynthQuery>> {
    read_jsonl(path)
}
