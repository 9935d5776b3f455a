//! The pruned scorer returns exactly the exhaustive top-n: the same facts,
//! the same order, bit-identical scores, on random stores (segment layouts,
//! supersessions, erasures, usage) and random rankers. And both compute
//! BM25F (times recency) as an independent oracle does: one written from
//! the formula over each active fact's body, sharing no code with the
//! scorer's plan, cursors or segments.

use std::collections::HashMap;

use pfm::config::{Config, MergeMode, ScoreParams};
use pfm::fact::name_key;
use pfm::rank::query_terms;
use pfm::rank::scorer::{Query, Strategy as Scoring, shortlist_with};
use pfm::rank::{ParticipantTerms, Ranker, Recency, Scratch};
use pfm::{FactId, Forget, Key, Memory, Observation, WallTime, text};
use pfm_synth::Vocabulary;
use proptest::prelude::*;

fn ranker(choice: u8, flags: u8) -> Ranker {
    match choice % 4 {
        0 => Ranker::pfm(),
        1 => Ranker::bm25(true, flags & 1 != 0, flags & 2 != 0),
        2 => Ranker {
            field_weights: Some([
                1.0,
                if flags & 1 != 0 { 0.0 } else { 2.5 },
                if flags & 2 != 0 { 0.0 } else { 2.0 },
            ]),
            participant_terms: if flags & 4 != 0 {
                ParticipantTerms::Off
            } else {
                ParticipantTerms::Weighted
            },
            graph: flags & 8 == 0,
            usage: flags & 16 == 0,
            ..Ranker::pfm()
        },
        _ => Ranker {
            recency: false,
            ..Ranker::pfm()
        },
    }
}

/// BM25F (Eq. 3) times recency, straight from the formula: per active fact,
/// its fields' tokens in their index form (text: content tokens of the
/// normalized text; entities and participants: the tokens of their
/// canonical names); N, df
/// and the average length over the active facts; every sum in `f64`.
struct Oracle {
    docs: Vec<OracleDoc>,
    params: ScoreParams,
}

struct OracleDoc {
    fact: FactId,
    /// Its participants, as a set.
    participants: Vec<String>,
    stated_at: WallTime,
    /// Per term, its frequency in each field.
    tf: HashMap<String, [u32; 3]>,
    /// Tokens per field.
    lens: [u32; 3],
    last_observed: WallTime,
}

impl Oracle {
    fn new(m: &Memory) -> Oracle {
        let params = m.version().params.clone();
        let form = |t: &str| params.index_form(t).into_owned();
        let docs = m
            .ledger()
            .active()
            .map(|f| {
                let mut fields: [Vec<String>; 3] = Default::default();
                fields[0] = text::content_tokens(&text::normalize(f.body.text()))
                    .map(form)
                    .collect();
                for e in f.body.entities().iter() {
                    fields[1].extend(text::tokens(e).map(form));
                }
                for p in f.body.participants().iter() {
                    fields[2].extend(text::tokens(&name_key(p)).map(form));
                }
                let mut tf: HashMap<String, [u32; 3]> = HashMap::new();
                for (field, tokens) in fields.iter().enumerate() {
                    for t in tokens {
                        tf.entry(t.clone()).or_default()[field] += 1;
                    }
                }
                let mut participants: Vec<String> = f
                    .body
                    .participants()
                    .iter()
                    .map(|p| p.to_string())
                    .collect();
                participants.sort();
                OracleDoc {
                    fact: f.id(),
                    participants,
                    stated_at: f.body.stated_at,
                    tf,
                    lens: fields.each_ref().map(|f| f.len() as u32),
                    last_observed: f.state.last_observed,
                }
            })
            .collect();
        Oracle { docs, params }
    }

    /// Every active fact's score (those above zero), best first; with
    /// conversation context, the best `shortlist` of them, each with its
    /// bonus.
    fn scores(
        &self,
        context: &str,
        participants: &[String],
        at: WallTime,
        ranker: &Ranker,
        shortlist: usize,
    ) -> Ranking {
        let p = &self.params;
        let alpha = ranker
            .field_weights
            .unwrap_or(p.field_weights)
            .map(f64::from);
        let merged = |v: [u32; 3]| (0..3).map(|f| alpha[f] * f64::from(v[f])).sum::<f64>();
        let in_fields = |v: &[u32; 3]| (0..3).any(|f| alpha[f] > 0.0 && v[f] > 0);
        let n = self.docs.len() as f64;
        let avgdl = self.docs.iter().map(|d| merged(d.lens)).sum::<f64>() / n;
        let (k1, b) = (f64::from(p.k1), f64::from(p.b));
        let weighted: Vec<(String, f64)> = query_terms(context, participants, ranker, p)
            .into_iter()
            .filter_map(|q| {
                let df = self
                    .docs
                    .iter()
                    .filter(|d| d.tf.get(&q.term).is_some_and(in_fields))
                    .count() as f64;
                (df > 0.0).then(|| {
                    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                    (q.term, f64::from(q.weight) * idf * (k1 + 1.0))
                })
            })
            .collect();
        // The half-life of the store's recency mode: `span` stretches it to
        // the time between the oldest and newest active fact.
        let times = self.docs.iter().map(|d| d.last_observed.millis());
        let span_days = match (times.clone().min(), times.max()) {
            (Some(lo), Some(hi)) => (hi - lo) as f64 / 86_400_000.0,
            _ => 0.0,
        };
        let half_life = match p.recency {
            Recency::Fixed => Some(p.recency_half_life_days),
            Recency::Span => Some(p.recency_half_life_days.max(span_days)),
            Recency::Off => None,
        };
        let mut scores: Vec<(FactId, f64)> = self
            .docs
            .iter()
            .map(|d| {
                let dl = merged(d.lens);
                let bm25f: f64 = weighted
                    .iter()
                    .filter_map(|(term, w)| d.tf.get(term).map(|tf| (w, merged(*tf))))
                    .map(|(w, tf)| w * tf / (tf + k1 * (1.0 - b + b * dl / avgdl)))
                    .sum();
                let recency = match half_life.filter(|_| ranker.recency) {
                    Some(t) => {
                        let age_days =
                            (at.millis() - d.last_observed.millis()) as f64 / 86_400_000.0;
                        let decay = (-age_days / t).exp2().min(1.0);
                        f64::from(p.recency_floor) + (1.0 - f64::from(p.recency_floor)) * decay
                    }
                    None => 1.0,
                };
                (d.fact, bm25f * recency)
            })
            .collect();
        let plain: HashMap<FactId, f64> = scores.iter().copied().collect();
        scores.retain(|(_, s)| *s > 0.0);
        // Best first; ties: the newer fact.
        let order = |a: &(FactId, f64), b: &(FactId, f64)| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0));
        scores.sort_by(order);
        let mut cut = None;
        if ranker.context && p.context_weight > 0.0 {
            // The shortlist, each fact lent the best of its neighbours' scores.
            scores.truncate(shortlist);
            cut = scores.last().map(|l| l.1);
            for (fact, score) in &mut scores {
                *score += self.lent(*fact, &plain);
            }
            scores.sort_by(order);
        }
        Ranking {
            best: scores,
            plain,
            cut,
        }
    }

    /// What conversation context adds to `fact`'s score: `ν` times the best
    /// of its neighbours' scores in `plain`.
    fn lent(&self, fact: FactId, plain: &HashMap<FactId, f64>) -> f64 {
        let best = [true, false]
            .into_iter()
            .filter_map(|before| self.neighbour(fact, before))
            .map(|f| plain[&f])
            .fold(0.0, f64::max);
        f64::from(self.params.context_weight) * best
    }

    /// The active fact said just before (or after) `fact` among the same
    /// participants within the context gap: the nearest active fact at most
    /// three ids away, if it qualifies.
    fn neighbour(&self, fact: FactId, before: bool) -> Option<FactId> {
        let doc = |id: u64| self.docs.iter().find(|d| d.fact.0 == id);
        let this = doc(fact.0)?;
        let gap_ms = self.params.context_gap_minutes * 60_000.0;
        (1..=3u64)
            .filter_map(|step| {
                if before {
                    fact.0.checked_sub(step)
                } else {
                    Some(fact.0 + step)
                }
            })
            .find_map(doc)
            .filter(|d| {
                d.participants == this.participants
                    && (d.stated_at.millis() - this.stated_at.millis()).abs() as f64 <= gap_ms
            })
            .map(|d| d.fact)
    }
}

/// The oracle's answer to one query.
struct Ranking {
    /// Best first: every fact scoring above zero or, with conversation
    /// context, the shortlist, each with its bonus.
    best: Vec<(FactId, f64)>,
    /// Every active fact's score before any bonus.
    plain: HashMap<FactId, f64>,
    /// With conversation context, the score before its bonus of the last
    /// fact into the shortlist: facts that score it within rounding (in
    /// `f32` against `f64`) may fall on either side of the cut.
    cut: Option<f64>,
}

/// Rankers whose score is BM25F times recency (no usage, no association):
/// the baselines, and PFM's fields, query and conversation context with
/// those two factors off.
fn bm25f_ranker(choice: u8, flags: u8) -> Ranker {
    if choice.is_multiple_of(2) {
        return Ranker::bm25(true, flags & 1 != 0, flags & 2 != 0);
    }
    Ranker {
        recency: flags & 1 != 0,
        field_weights: (flags & 2 != 0).then_some([1.0, 0.0, 2.0]),
        participant_terms: if flags & 4 != 0 {
            ParticipantTerms::Off
        } else {
            ParticipantTerms::Weighted
        },
        positional_decay: flags & 8 == 0,
        context: flags & 16 == 0,
        usage: false,
        graph: false,
        ..Ranker::pfm()
    }
}

#[derive(Debug, Clone)]
struct Store {
    n: u64,
    seed: u64,
    narrow: bool,
    batch: usize,
    keyed_every: u64,
    forget_every: u64,
    used: Vec<u64>,
    /// Seconds between two facts' observations (recency matters at a day).
    spread: i64,
    /// The store's recency mode.
    recency: Recency,
    /// The store's conversation gap, in minutes.
    context_gap_minutes: f64,
}

impl Store {
    /// When fact `id` was observed.
    fn observed(&self, id: u64) -> WallTime {
        WallTime::from_secs(pfm_synth::BASE_SECS + id as i64 * self.spread)
    }

    /// The queries' time: just after the last fact.
    fn query_time(&self) -> WallTime {
        self.observed(self.n + 1)
    }

    fn vocabulary(&self) -> Vocabulary {
        if self.narrow {
            Vocabulary::Narrow
        } else {
            Vocabulary::Wide
        }
    }

    /// Twelve queries over the store's vocabulary.
    fn queries(&self, seed: u64) -> Vec<pfm_synth::SynthQuery> {
        pfm_synth::generate(self.n, seed, self.vocabulary(), 12).1
    }
}

fn store() -> impl Strategy<Value = Store> {
    (
        50u64..2500,
        any::<u64>(),
        any::<bool>(),
        1usize..400,
        3u64..40,
        20u64..400,
        prop::collection::vec(0u64..2500, 0..20),
        prop::sample::select(vec![1i64, 3_600, 86_400]),
        prop::sample::select(vec![Recency::Fixed, Recency::Span, Recency::Off]),
        // The default, or every fact of a participant within reach.
        prop::sample::select(vec![10.0, 1e6]),
    )
        .prop_map(
            |(
                n,
                seed,
                narrow,
                batch,
                keyed_every,
                forget_every,
                used,
                spread,
                recency,
                context_gap_minutes,
            )| Store {
                n,
                seed,
                narrow,
                batch,
                keyed_every,
                forget_every,
                used,
                spread,
                recency,
                context_gap_minutes,
            },
        )
}

/// A store, one to three rankers (two choice bytes each), a shortlist
/// length and a query seed.
fn case() -> impl Strategy<Value = (Store, Vec<(u8, u8)>, usize, u64)> {
    (
        store(),
        prop::collection::vec((any::<u8>(), any::<u8>()), 1..4),
        1usize..60,
        any::<u64>(),
    )
}

fn build(s: &Store) -> Memory {
    let (facts, _) = pfm_synth::generate(s.n, s.seed, s.vocabulary(), 0);
    let mut config = Config {
        merge: MergeMode::Inline,
        ..Config::default()
    };
    config.score.recency = s.recency;
    config.score.context_gap_minutes = s.context_gap_minutes;
    let mut m = Memory::new(config).unwrap();
    let obs: Vec<Observation> = facts
        .iter()
        .map(|f| {
            let mut o = f.observation();
            o.at = s.observed(f.id);
            if f.id % s.keyed_every == 0 {
                let entity = f.entities[0].clone();
                let value = format!("v{}", f.id);
                Observation::new(format!("{entity} status is {value} budget"), o.at)
                    .with_participants(o.participants.clone())
                    .with_key(Key::new(&entity, "status").unwrap(), Some(&value))
            } else {
                o
            }
        })
        .collect();
    for (i, chunk) in obs.chunks(s.batch).enumerate() {
        m.observe_batch(chunk.to_vec()).unwrap();
        if (i as u64 + 1).is_multiple_of(s.forget_every.max(1)) {
            let _ = m.forget(&Forget::Fact(FactId(i as u64)), s.observed(0));
        }
    }
    let used: Vec<FactId> = s.used.iter().map(|&u| FactId(u % s.n)).collect();
    m.record_usage(&used, s.observed(s.n));
    m
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn prop_pruned_equals_exhaustive(
        (s, rankers, n, query_seed) in case(),
    ) {
        let m = build(&s);
        let version = m.version();
        let queries = s.queries(query_seed);
        let mut scratch = Scratch::default();
        // Small stores fit in cache and are finished in one pass; this one
        // takes the two-pass path of large stores.
        let mut two_pass = Scratch::default();
        two_pass.set_resident_limit(0);
        for (choice, flags) in rankers {
            let ranker = ranker(choice, flags);
            for q in &queries {
                let query = Query { context: &q.text, participants: &q.participants, at: s.query_time(), cancel: None, vector: None, recency: None };
                let fast = shortlist_with(&version, query, &ranker, n, Scoring::Pruned, &mut scratch).unwrap();
                let fast2 = shortlist_with(&version, query, &ranker, n, Scoring::Pruned, &mut two_pass).unwrap();
                let slow = shortlist_with(&version, query, &ranker, n, Scoring::Exhaustive, &mut scratch).unwrap();
                let a: Vec<(u64, u32)> = fast.iter().map(|x| (x.fact.0, x.score.to_bits())).collect();
                let a2: Vec<(u64, u32)> = fast2.iter().map(|x| (x.fact.0, x.score.to_bits())).collect();
                let b: Vec<(u64, u32)> = slow.iter().map(|x| (x.fact.0, x.score.to_bits())).collect();
                prop_assert_eq!(&a, &b, "{} n={} query {:?}", ranker.name, n, q.text);
                prop_assert_eq!(&a2, &b, "two-pass: {} n={} query {:?}", ranker.name, n, q.text);
            }
        }
    }

    #[test]
    fn prop_scores_match_an_independent_bm25f(
        (s, rankers, n, query_seed) in case(),
    ) {
        let m = build(&s);
        let version = m.version();
        let oracle = Oracle::new(&m);
        let queries = s.queries(query_seed);
        let mut scratch = Scratch::default();
        for (choice, flags) in rankers {
            let ranker = bm25f_ranker(choice, flags);
            for q in &queries {
                let at = s.query_time();
                let query = Query { context: &q.text, participants: &q.participants, at, cancel: None, vector: None, recency: None };
                let got = shortlist_with(&version, query, &ranker, n, Scoring::Pruned, &mut scratch).unwrap();
                let want = oracle.scores(&q.text, &q.participants, at, &ranker, n);
                let by_fact: HashMap<FactId, f64> = want.best.iter().copied().collect();
                let close = |a: f64, b: f64| (a - b).abs() <= 1e-4 * a.abs().max(b.abs());
                let on_the_cut = |fact: &FactId| {
                    want.cut.zip(want.plain.get(fact)).is_some_and(|(cut, &s)| close(s, cut))
                };
                prop_assert_eq!(got.len(), want.best.len().min(n), "{} query {:?}", ranker.name, q.text);
                for x in &got {
                    // A fact the oracle left just below the cut is scored
                    // with its bonus as if it had made it.
                    let expected = by_fact.get(&x.fact).copied().or_else(|| {
                        on_the_cut(&x.fact).then(|| want.plain[&x.fact] + oracle.lent(x.fact, &want.plain))
                    });
                    prop_assert!(
                        expected.is_some_and(|e| close(e, f64::from(x.score))),
                        "{} query {:?}: {} scored {} by pfm, {:?} by the oracle", ranker.name, q.text, x.fact, x.score, expected
                    );
                }
                // Whatever the oracle ranks clearly above the shortlist's
                // last score is in the shortlist, unless it only just made
                // the oracle's shortlist.
                if let Some(last) = got.last() {
                    let last = f64::from(last.score);
                    let above = want.best.iter().take_while(|(_, sc)| *sc > last && !close(*sc, last));
                    for (fact, score) in above.filter(|(f, _)| !on_the_cut(f)) {
                        prop_assert!(
                            got.iter().any(|x| x.fact == *fact),
                            "{} query {:?}: {} (oracle {}) missing above {}", ranker.name, q.text, fact, score, last
                        );
                    }
                }
            }
        }
    }
}
