//! Property tests of the ledger's invariants, Proposition 1 first: any
//! sequence of keyed commits, re-observations, out-of-order arrivals, group
//! commits, typed operations (contest, reject, revoke, resolve, noop),
//! prunes, usage updates and erasures leaves at most one active fact per key
//! in every published version, and every key's history stays reachable
//! through `supersedes`, and every version's timeline answers each past view
//! exactly as the ledger does. A second property runs typed operations
//! against a simple model of a cell and compares what each key holds.

use std::collections::{HashMap, HashSet};

use pfm::config::{ChainOrder, Config, MergeMode};
use pfm::fact::Status;
use pfm::{AsOf, FactId, Forget, Key, Memory, Observation, WallTime};
use proptest::prelude::*;

const ENTITIES: [&str; 3] = ["ann lee", "bo chan", "cy diaz"];
const PARTICIPANTS: [&str; 2] = ["Dee Ford", "Eli Gray"];
const SLOTS: [&str; 2] = ["meeting_time", "room"];

#[derive(Clone, Debug)]
enum Op {
    /// A batch of keyed statements (a group commit).
    Keyed(Vec<(usize, usize, u8, i64, usize)>),
    /// A keyless statement about an entity.
    Keyless {
        entity: usize,
        word: u8,
        day: i64,
        participant: usize,
    },
    /// Retention pruning at a day.
    Prune { day: i64 },
    /// Usage of the n-th retained fact.
    Use { nth: usize, day: i64 },
    /// Erase an entity or a participant.
    ForgetName { name: usize },
    /// Erase the n-th retained fact (and its key's history).
    ForgetFact { nth: usize },
    /// A typed operation on a key, maybe with a value, maybe naming the
    /// n-th version of the key as its target.
    Typed(Typed),
    /// Several keyed statements and typed operations in one batch: all
    /// apply, or (one does not fit) none, and the ledger is as before.
    TypedBatch(Vec<(Typed, Option<u8>)>),
}

/// One typed operation (see [`typed`]).
#[derive(Clone, Debug)]
struct Typed {
    entity: usize,
    slot: usize,
    op: pfm::fact::Op,
    value: Option<u8>,
    target: Option<usize>,
    day: i64,
    participant: usize,
}

fn typed() -> impl Strategy<Value = Typed> {
    use pfm::fact::Op as P;
    (
        (0..ENTITIES.len(), 0..SLOTS.len()),
        prop::sample::select(vec![P::Contest, P::Reject, P::Revoke, P::Resolve, P::Noop]),
        prop::option::of(0u8..4),
        prop::option::weighted(0.3, 0usize..8),
        0i64..400,
        0..PARTICIPANTS.len(),
    )
        .prop_map(
            |((entity, slot), op, value, target, day, participant)| Typed {
                entity,
                slot,
                op,
                value,
                target,
                day,
                participant,
            },
        )
}

/// The typed step as an observation, its target the `nth` retained version
/// of its key (any status).
fn typed_observation(m: &Memory, t: &Typed) -> Observation {
    let key = Key::new(ENTITIES[t.entity], SLOTS[t.slot]).unwrap();
    let value = t.value.map(|v| format!("v{v}"));
    let text = match &value {
        Some(v) => format!("{} {} is {v} {}", ENTITIES[t.entity], SLOTS[t.slot], t.op),
        None => format!("{} {} {} that", ENTITIES[t.entity], SLOTS[t.slot], t.op),
    };
    let versions: Vec<FactId> = m
        .ledger()
        .facts()
        .filter(|f| f.body.key.as_deref() == Some(&key))
        .map(|f| f.id())
        .collect();
    let target = t
        .target
        .filter(|_| !versions.is_empty())
        .map(|n| versions[n % versions.len()]);
    Observation::new(text, day(t.day))
        .with_participants([PARTICIPANTS[t.participant]])
        .with_key(key, value.as_deref())
        .with_op(t.op, target)
}

/// Applies a typed step: either it applies, or it is refused as not
/// applicable and changes nothing.
fn apply_typed(m: &mut Memory, t: &Typed) -> Result<Option<pfm::Receipt>, TestCaseError> {
    let o = typed_observation(m, t);
    let before = rows(m);
    match m.observe(o) {
        Ok(r) => Ok(Some(r)),
        Err(pfm::Error::OpNotApplicable { .. }) => {
            prop_assert_eq!(rows(m), before, "a refused operation changed the ledger");
            Ok(None)
        }
        Err(e) => Err(TestCaseError::fail(format!("{t:?}: {e}"))),
    }
}

fn keyed() -> impl Strategy<Value = (usize, usize, u8, i64, usize)> {
    (
        0..ENTITIES.len(),
        0..SLOTS.len(),
        0u8..4,
        0i64..400,
        0..PARTICIPANTS.len(),
    )
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => prop::collection::vec(keyed(), 1..4).prop_map(Op::Keyed),
        2 => (0..ENTITIES.len(), 0u8..3, 0i64..400, 0..PARTICIPANTS.len())
            .prop_map(|(entity, word, day, participant)| Op::Keyless { entity, word, day, participant }),
        1 => (0i64..800).prop_map(|day| Op::Prune { day }),
        1 => (0usize..50, 0i64..400).prop_map(|(nth, day)| Op::Use { nth, day }),
        1 => (0..ENTITIES.len() + PARTICIPANTS.len()).prop_map(|name| Op::ForgetName { name }),
        1 => (0usize..50).prop_map(|nth| Op::ForgetFact { nth }),
        4 => typed().prop_map(Op::Typed),
        2 => prop::collection::vec((typed(), prop::option::of(0u8..4)), 1..4).prop_map(Op::TypedBatch),
    ]
}

fn day(d: i64) -> WallTime {
    WallTime::from_secs(1_767_225_600 + d * 86_400)
}

fn observation((e, s, v, d, p): (usize, usize, u8, i64, usize)) -> Observation {
    let key = Key::new(ENTITIES[e], SLOTS[s]).unwrap();
    let value = format!("v{v}");
    Observation::new(format!("{} {} is {value}", ENTITIES[e], SLOTS[s]), day(d))
        .with_participants([PARTICIPANTS[p]])
        .with_key(key, Some(&value))
}

fn nth_fact(m: &Memory, nth: usize) -> Option<FactId> {
    let ids: Vec<FactId> = m.ledger().facts().map(|f| f.id()).collect();
    (!ids.is_empty()).then(|| ids[nth % ids.len()])
}

/// Every invariant that must hold after each step.
fn check(m: &Memory, ordering: ChainOrder) -> Result<(), TestCaseError> {
    m.ledger().verify().map_err(TestCaseError::fail)?;
    let version = m.version();
    prop_assert_eq!(version.seq, m.ledger().seq());

    // Proposition 1 in the published version: one live document per key.
    let mut keys = HashSet::new();
    let mut live = HashSet::new();
    for (view, doc) in version.active.live() {
        let body = view.segment.body(doc);
        live.insert(body.id);
        if let Some(key) = &body.key {
            prop_assert!(
                keys.insert(key.clone()),
                "key {} has two live documents",
                key
            );
        }
    }
    // The version lists exactly the ledger's current facts.
    let current: HashSet<FactId> = m.ledger().active().map(|f| f.id()).collect();
    prop_assert_eq!(&live, &current);
    prop_assert_eq!(version.active.live_docs() as usize, current.len());

    // The version's timeline answers every past view as the ledger does
    // (as-of reads are served from it, never from the ledger).
    prop_assert_eq!(version.timeline.len(), m.ledger().facts().count());
    for f in m.ledger().facts() {
        let held = version.timeline.get(f.id());
        prop_assert!(held.is_some_and(|h| h.state == f.state), "fact {}", f.id());
        let history = |h: Vec<&pfm::Fact>| h.iter().map(|f| f.id()).collect::<Vec<_>>();
        prop_assert_eq!(
            history(version.timeline.history(f.id()).unwrap()),
            history(m.history(f.id()).unwrap())
        );
    }
    let times: Vec<WallTime> = m
        .ledger()
        .facts()
        .flat_map(|f| f.state.intervals.iter().map(|i| i.from_time))
        .collect();
    let points = (0..=version.seq)
        .map(AsOf::Seq)
        .chain(times.into_iter().map(AsOf::Time));
    for at in points {
        let ledger: Vec<FactId> = m.as_of(at).iter().map(|f| f.id()).collect();
        let timeline: Vec<FactId> = version
            .timeline
            .active_at(at, &version.graph)
            .iter()
            .map(|d| d.body.id)
            .collect();
        prop_assert_eq!(timeline, ledger, "as of {:?}", at);
    }

    // The version lists each key's pending plans as the ledger does.
    for f in m.ledger().facts() {
        if let Some(key) = &f.body.key {
            let pending: Vec<_> = version
                .timeline
                .pending_plans(key, None)
                .map(|p| p.id())
                .collect();
            prop_assert_eq!(pending, m.ledger().pending_plans(key), "key {}", key);
            // And every plan it has had: the retained facts of the key
            // that were staged (pending, or settled since).
            let plans: Vec<_> = m
                .ledger()
                .facts()
                .filter(|p| p.body.key.as_ref() == Some(key))
                .filter(|p| {
                    matches!(
                        p.state.status,
                        Status::Pending | Status::Confirmed | Status::Abandoned
                    )
                })
                .map(|p| p.id())
                .collect();
            prop_assert_eq!(version.timeline.plans(key), plans, "key {}", key);
        }
    }

    // The surviving value is the last to arrive (arrival order) or the latest
    // stated (event time), whenever the key has one.
    let mut versions: HashMap<Key, Vec<&pfm::Fact>> = HashMap::new();
    for f in m.ledger().facts() {
        if let Some(k) = &f.body.key {
            versions.entry(Key::clone(k)).or_default().push(f);
        }
    }
    for (key, vs) in versions {
        let Some(cur) = vs.iter().find(|f| f.state.is_current()) else {
            continue;
        };
        // The versions that can hold the cell: the chain's, not retracted.
        let chain: Vec<&&pfm::Fact> = vs.iter().filter(|f| f.state.on_chain()).collect();
        let live: Vec<&&pfm::Fact> = chain
            .iter()
            .copied()
            .filter(|f| !f.state.status.is_retracted())
            .collect();
        let plain = vs
            .iter()
            .all(|f| f.state.entered_by == pfm::fact::Op::Accept && f.state.on_chain());
        match ordering {
            ChainOrder::Arrival => {
                let newest = live.iter().map(|f| f.id()).max().unwrap();
                prop_assert_eq!(cur.id(), newest, "key {}", key);
            }
            ChainOrder::EventTime if plain && live.len() == chain.len() => {
                let latest = above_cut(m, cur).map(|f| f.body.stated_at).max();
                prop_assert_eq!(Some(cur.body.stated_at), latest, "key {}", key);
            }
            ChainOrder::EventTime => {}
        }
        // History is reachable from the current value.
        let reached: HashSet<FactId> = m
            .history(cur.id())
            .unwrap()
            .iter()
            .map(|f| f.id())
            .collect();
        prop_assert_eq!(reached.len(), chain.len(), "key {}", key);
    }
    Ok(())
}

/// The chain from `top` down to the first version whose `rollback_stop` is
/// set, that version included. Below it every version was displaced by an
/// erased one (or the cell was empty when it became the head), and an
/// erasure never reinstates what an erased version displaced: so event-time
/// order promises the latest stated value only above that cut.
fn above_cut<'a>(m: &'a Memory, top: &'a pfm::Fact) -> impl Iterator<Item = &'a pfm::Fact> {
    std::iter::successors(Some(top), |f| {
        (!f.state.rollback_stop)
            .then(|| f.state.supersedes.get())
            .flatten()
            .and_then(|older| m.fact(older).ok())
    })
}

/// Applies one operation, checking what it promises on the way.
fn apply(m: &mut Memory, op: Op) -> Result<(), TestCaseError> {
    match op {
        Op::Keyed(batch) => {
            m.observe_batch(batch.into_iter().map(observation).collect())
                .unwrap();
        }
        Op::Keyless {
            entity,
            word,
            day: d,
            participant,
        } => {
            let text = format!("{} likes word{word}", ENTITIES[entity]);
            m.observe(
                Observation::new(text, day(d))
                    .with_entities([ENTITIES[entity]])
                    .with_participants([PARTICIPANTS[participant]]),
            )
            .unwrap();
        }
        Op::Prune { day: d } => {
            let before: HashSet<FactId> = m
                .ledger()
                .active()
                .filter(|f| f.body.key.is_some())
                .map(|f| f.id())
                .collect();
            let pruned = m.prune(day(d));
            for id in &pruned {
                prop_assert!(
                    m.fact(*id).unwrap().body.key.is_none(),
                    "pruned keyed fact {}",
                    id
                );
            }
            let after: HashSet<FactId> = m
                .ledger()
                .active()
                .filter(|f| f.body.key.is_some())
                .map(|f| f.id())
                .collect();
            prop_assert_eq!(before, after);
        }
        Op::Use { nth, day: d } => {
            if let Some(id) = nth_fact(m, nth) {
                m.record_usage(&[id], day(d));
            }
        }
        Op::ForgetName { name } => {
            let name = ENTITIES
                .iter()
                .chain(PARTICIPANTS.iter())
                .nth(name)
                .unwrap();
            let erased = m
                .forget(&Forget::Entity((*name).to_owned()), day(0))
                .unwrap();
            for id in erased {
                prop_assert!(m.fact(id).is_err());
            }
            let canonical = pfm::fact::name_key(name);
            prop_assert!(m.ledger().facts_naming(&canonical).next().is_none());
        }
        Op::Typed(t) => {
            apply_typed(m, &t)?;
        }
        Op::TypedBatch(batch) => {
            // An entry with an accept value is a plain keyed statement of
            // the same key, before its operation.
            let mut observations = Vec::new();
            for (t, accept) in &batch {
                if let Some(v) = accept {
                    observations.push(observation((t.entity, t.slot, *v, t.day, t.participant)));
                }
                observations.push(typed_observation(m, t));
            }
            let before = rows(m);
            let seq = m.ledger().seq();
            match m.observe_batch(observations) {
                Ok(receipts) => prop_assert!(receipts.iter().all(|r| r.seq == receipts[0].seq)),
                Err(pfm::Error::OpNotApplicable { .. }) => {
                    prop_assert_eq!(rows(m), before, "a refused batch changed the ledger");
                    prop_assert_eq!(m.ledger().seq(), seq);
                }
                Err(e) => return Err(TestCaseError::fail(format!("{batch:?}: {e}"))),
            }
        }
        Op::ForgetFact { nth } => {
            if let Some(id) = nth_fact(m, nth) {
                let key = m.fact(id).unwrap().body.key.clone();
                m.forget(&Forget::Fact(id), day(0)).unwrap();
                prop_assert!(m.fact(id).is_err());
                if let Some(key) = key {
                    prop_assert!(
                        m.ledger()
                            .facts()
                            .all(|f| f.body.key.as_ref() != Some(&key))
                    );
                }
            }
        }
    }
    Ok(())
}

/// Every fact as JSON, by id.
fn rows(m: &Memory) -> HashMap<FactId, String> {
    m.ledger()
        .facts()
        .map(|f| (f.id(), serde_json::to_string(f).unwrap()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn prop_one_active_per_key(ops in prop::collection::vec(op(), 1..40), event_time in any::<bool>()) {
        let ordering = if event_time { ChainOrder::EventTime } else { ChainOrder::Arrival };
        let mut m = Memory::new(Config { ordering, merge: MergeMode::Inline, ..Config::default() }).unwrap();
        let mut past: Vec<(u64, WallTime, HashMap<FactId, Status>)> = Vec::new();
        for op in ops {
            apply(&mut m, op)?;
            check(&m, ordering)?;
            // Every retained fact's status after each commit so far, as
            // status_at must tell it (None before the fact existed), and at
            // each commit's wall time (the last commit of that time counts).
            let now: HashMap<FactId, Status> = m.ledger().facts().map(|f| (f.id(), f.state.status)).collect();
            past.retain(|(seq, _, _)| *seq != m.ledger().seq());
            past.push((m.ledger().seq(), m.ledger().committed_at(), now));
            for (seq, t, statuses) in &past {
                let last_then = past.iter().rev().find(|(_, t2, _)| t2 == t).map(|p| &p.2).unwrap();
                for f in m.ledger().facts() {
                    prop_assert_eq!(f.state.status_at(*seq), statuses.get(&f.id()).copied(), "fact {} as of {}", f.id(), seq);
                    prop_assert_eq!(f.state.status_at_time(*t), last_then.get(&f.id()).copied(), "fact {} at {:?}", f.id(), t);
                }
            }
        }
    }

    /// The durable ledger's two promises: a commit's journal names every
    /// fact it created, changed or erased (so writing the journal's rows
    /// keeps the disk equal to memory), and a store restored from its facts
    /// is the same ledger and serves the same blocks.
    #[test]
    fn prop_journal_covers_every_write_and_restore_is_exact(ops in prop::collection::vec(op(), 1..40), event_time in any::<bool>()) {
        let ops = without_pruning(ops);
        let ordering = if event_time { ChainOrder::EventTime } else { ChainOrder::Arrival };
        let config = Config { ordering, merge: MergeMode::Inline, ..Config::default() };
        let mut m = Memory::new(config.clone()).unwrap();
        m.keep_journal();
        for op in ops {
            let before = rows(&m);
            apply(&mut m, op)?;
            let journal = m.take_journal();
            let after = rows(&m);
            for (id, row) in &after {
                if before.get(id) != Some(row) {
                    prop_assert!(journal.touched.contains(id), "fact {} changed but is not in the journal", id);
                }
            }
            for id in before.keys().filter(|id| !after.contains_key(id)) {
                prop_assert!(journal.erased.contains(id), "fact {} vanished but is not in the journal", id);
            }
        }
        let l = m.ledger();
        let restored = Memory::restore(config, l.facts().cloned().collect(), l.next_id(), l.seq(), l.committed_at()).unwrap();
        prop_assert_eq!(rows(&restored), rows(&m));
        check(&restored, ordering)?;
        for e in ENTITIES {
            let request = pfm::Request::new(format!("{e} meeting_time room likes"), day(500))
                .with_participants([PARTICIPANTS[0]]);
            prop_assert_eq!(restored.retrieve(&request).unwrap().text, m.retrieve(&request).unwrap().text);
        }
    }

    /// A restored store admits what the store it was restored from admits:
    /// restore leaves the admission maps (signatures, text hashes,
    /// absorption buckets) to the first commit, which builds them; every
    /// later write must commit the same rows in both, duplicates and
    /// absorptions included.
    #[test]
    fn prop_a_restored_store_commits_what_the_original_commits(
        before in prop::collection::vec(op(), 1..30),
        after in prop::collection::vec(op(), 1..20),
        event_time in any::<bool>(),
    ) {
        let ordering = if event_time { ChainOrder::EventTime } else { ChainOrder::Arrival };
        let config = Config { ordering, merge: MergeMode::Inline, ..Config::default() };
        let mut m = Memory::new(config.clone()).unwrap();
        for op in without_pruning(before) {
            apply(&mut m, op)?;
        }
        let l = m.ledger();
        let mut restored = Memory::restore(config, l.facts().cloned().collect(), l.next_id(), l.seq(), l.committed_at()).unwrap();
        for op in without_pruning(after) {
            apply(&mut m, op.clone())?;
            apply(&mut restored, op)?;
            prop_assert_eq!(rows(&restored), rows(&m));
            check(&restored, ordering)?;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A store restored with index inputs (a checkpoint's) is the store
    /// restored from its texts: the same segments, term for term, in the
    /// active index and the history index, so every retrieval is the same.
    #[test]
    fn prop_a_store_restored_from_index_inputs_is_the_store_restored_from_text(
        ops in prop::collection::vec(op(), 1..40),
        history_index in any::<bool>(),
        stem in any::<bool>(),
    ) {
        let mut config = Config { history_index, merge: MergeMode::Inline, ..Config::default() };
        config.score.stem = stem;
        let mut m = Memory::new(config.clone()).unwrap();
        for op in without_pruning(ops) {
            apply(&mut m, op)?;
        }
        let l = m.ledger();
        let facts: Vec<_> = l.facts().cloned().collect();
        let inputs = pfm::index::IndexInputs::of(facts.iter().map(|f| &*f.body), &config.score);
        let (next_id, seq, at) = (l.next_id(), l.seq(), l.committed_at());
        let from_text = Memory::restore(config.clone(), facts.clone(), next_id, seq, at).unwrap();
        let from_inputs = Memory::restore_indexed(config, facts, next_id, seq, at, Some(inputs)).unwrap();
        let (a, b) = (from_text.version(), from_inputs.version());
        prop_assert_eq!(segments(&a.active), segments(&b.active));
        prop_assert_eq!(a.history.as_ref().map(segments), b.history.as_ref().map(segments));
        for e in ENTITIES {
            let request = pfm::Request::new(format!("{e} meeting_time room likes"), day(500))
                .with_participants([PARTICIPANTS[0]]);
            prop_assert_eq!(from_inputs.retrieve(&request).unwrap().text, from_text.retrieve(&request).unwrap().text);
        }
    }
}

/// Every segment of a corpus as shown, less its process-unique id.
fn segments(corpus: &pfm::index::Corpus) -> Vec<String> {
    corpus
        .views()
        .iter()
        .map(|v| {
            let shown = format!("{:?}", v.segment);
            shown[shown.find(", ").unwrap_or(0)..].to_owned()
        })
        .collect()
}

/// `ops` without graph pruning, which is not part of the ledger (the
/// server never prunes): the durable ledger's tests run what it stores.
fn without_pruning(ops: Vec<Op>) -> Vec<Op> {
    ops.into_iter()
        .filter(|o| !matches!(o, Op::Prune { .. }))
        .collect()
}

/// Keyless statements that share most of their words: a subject, a long
/// shared description, one of several relations and one of several objects
/// (places, quoted titles, years), with optional filler that only stop words
/// and punctuation change.
const SUBJECTS: [&str; 2] = ["Ivan Vazov", "Mark Rutte"];
const RELATIONS: [&str; 4] = [
    "was born in",
    "was head of state of",
    "was head of government of",
    "lived in",
];
const OBJECTS: [&str; 5] = [
    "Berkeley",
    "Botevgrad",
    "\"the old town\"",
    "\"the new town\"",
    "1850",
];

fn statement(s: usize, r: usize, o: usize, filler: bool) -> String {
    let opener = if filler { "As it happens, " } else { "" };
    format!(
        "{opener}{}, the well known Bulgarian poet and novelist and playwright, {} {}{}",
        SUBJECTS[s],
        RELATIONS[r],
        OBJECTS[o],
        if filler { "!" } else { "." }
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Absorption never removes the only copy of a distinct value or
    /// relation: whenever a statement is absorbed, the fact that absorbed it
    /// states the same relation and the same object, and after every step
    /// each statement made so far is stated by some active fact.
    #[test]
    fn prop_absorption_keeps_every_distinct_value(
        stmts in prop::collection::vec((0..SUBJECTS.len(), 0..RELATIONS.len(), 0..OBJECTS.len(), any::<bool>()), 1..30)
    ) {
        let mut m = Memory::new(Config { merge: MergeMode::Inline, ..Config::default() }).unwrap();
        let mut said: Vec<(usize, usize, usize)> = Vec::new();
        for (i, (s, r, o, filler)) in stmts.into_iter().enumerate() {
            let text = statement(s, r, o, filler);
            let receipt = m
                .observe(Observation::new(text.clone(), day(i as i64)).with_entities([SUBJECTS[s]]))
                .unwrap();
            if let pfm::Outcome::Absorbed { into } = receipt.outcome {
                let kept = m.fact(into).unwrap().body.text();
                let states = |t: &str| t.contains(RELATIONS[r]) && t.contains(OBJECTS[o]);
                prop_assert!(states(kept), "{:?} was absorbed into {:?}", text, kept);
            }
            said.push((s, r, o));
            for &(s, r, o) in &said {
                let stated = m.ledger().active().any(|f| {
                    let t = f.body.text();
                    t.contains(SUBJECTS[s]) && t.contains(RELATIONS[r]) && t.contains(OBJECTS[o])
                });
                prop_assert!(stated, "nothing active states {} {} {}", SUBJECTS[s], RELATIONS[r], OBJECTS[o]);
            }
        }
    }
}

/// A model of one key's cell under arrival ordering, written from the
/// rules (`ledger::ops` module docs) with no code shared with the ledger:
/// the chain bottom to top, the head's index, the pending alternatives.
#[derive(Clone, Debug, Default)]
struct Cell {
    /// (fact, value, participant, retracted, rollback stop).
    chain: Vec<(FactId, String, usize, bool, bool)>,
    head: Option<usize>,
    /// (fact, value, participant).
    pending: Vec<(FactId, String, usize)>,
    /// Alternatives ever attached to each version (at most
    /// `MAX_ALTERNATIVES` per head), less those erased.
    attached: HashMap<FactId, usize>,
}

impl Cell {
    fn head_value(&self) -> Option<&str> {
        self.head.map(|h| self.chain[h].1.as_str())
    }

    /// A new head on top of the chain; the old one (if any) retracted or not.
    fn push(&mut self, fact: FactId, value: String, who: usize, retract_old: bool) {
        let stop = self.head.is_none() && !self.chain.is_empty();
        if let Some(h) = self.head {
            self.chain[h].3 |= retract_old;
        }
        self.pending.clear();
        self.chain.push((fact, value, who, false, stop));
        self.head = Some(self.chain.len() - 1);
    }

    /// Retracts the head and walks down to the newest unretracted version.
    fn retract(&mut self) {
        let mut at = self.head.take().unwrap();
        self.chain[at].3 = true;
        self.pending.clear();
        while !self.chain[at].4 && at > 0 {
            at -= 1;
            if !self.chain[at].3 {
                self.head = Some(at);
                return;
            }
        }
    }

    /// Whether the ledger would apply `t` (with its resolved target).
    fn applies(&self, op: pfm::fact::Op, value: Option<&str>, target: Option<FactId>) -> bool {
        use pfm::fact::Op as P;
        let Some(h) = self.head else { return false };
        let head = self.chain[h].0;
        let pending: Vec<FactId> = self.pending.iter().map(|p| p.0).collect();
        let one_of = |allowed: &[FactId]| target.is_none_or(|t| allowed.contains(&t));
        let value_of = |f: FactId| {
            if f == head {
                Some(self.chain[h].1.as_str())
            } else {
                self.pending.iter().find(|p| p.0 == f).map(|p| p.1.as_str())
            }
        };
        let mut contenders = vec![head];
        contenders.extend(&pending);
        match op {
            P::Accept => true,
            P::Contest => {
                let restates = value_of(head) == value
                    || self.pending.iter().any(|p| Some(p.1.as_str()) == value);
                one_of(&[head])
                    && (restates
                        || self.attached.get(&head).copied().unwrap_or(0)
                            < pfm::fact::MAX_ALTERNATIVES)
            }
            P::Reject => one_of(&[head]) && (value.is_none() || value != value_of(head)),
            P::Revoke => one_of(&[head]) && (value.is_none() || value == value_of(head)),
            P::Resolve => {
                !pending.is_empty() && one_of(&contenders) && (target.is_some() || value.is_some())
            }
            P::Noop => {
                one_of(&contenders)
                    && (value.is_none() || value == value_of(target.unwrap_or(head)))
            }
        }
    }

    /// Applies `op`, which [`Cell::applies`] accepted; `fact` is the id a
    /// new version or alternative got.
    fn apply(
        &mut self,
        op: pfm::fact::Op,
        value: Option<String>,
        target: Option<FactId>,
        fact: FactId,
        who: usize,
    ) {
        use pfm::fact::Op as P;
        match (op, value) {
            (P::Accept, Some(v)) if self.head_value() != Some(v.as_str()) => {
                self.push(fact, v, who, false);
            }
            (P::Contest, Some(v))
                if self.head_value() != Some(v.as_str())
                    && self.pending.iter().all(|p| p.1 != v) =>
            {
                *self
                    .attached
                    .entry(self.chain[self.head.unwrap()].0)
                    .or_default() += 1;
                self.pending.push((fact, v, who));
            }
            (P::Reject, Some(v)) => self.push(fact, v, who, true),
            (P::Revoke, _) | (P::Reject, None) => self.retract(),
            (P::Resolve, value) => {
                let h = self.head.unwrap();
                let chosen = target.or_else(|| {
                    let v = value.as_deref();
                    if v == self.head_value() {
                        Some(self.chain[h].0)
                    } else {
                        self.pending
                            .iter()
                            .find(|p| Some(p.1.as_str()) == v)
                            .map(|p| p.0)
                    }
                });
                match chosen {
                    Some(c) if c == self.chain[h].0 => self.pending.clear(),
                    Some(c) => {
                        let (f, v, w) = self.pending.iter().find(|p| p.0 == c).cloned().unwrap();
                        *self.attached.get_mut(&self.chain[h].0).unwrap() -= 1;
                        self.push(f, v, w, true);
                    }
                    None => self.push(fact, value.unwrap(), who, true),
                }
            }
            _ => {}
        }
    }

    /// Erases what participant `who` said: chain versions are cut out
    /// (rollback never crosses a cut of an unretracted version), their
    /// alternatives go with the head they contested.
    fn forget(&mut self, who: usize) {
        if let Some(h) = self.head {
            let gone = self.pending.iter().filter(|p| p.2 == who).count();
            if let Some(n) = self.attached.get_mut(&self.chain[h].0) {
                *n -= gone;
            }
        }
        self.pending.retain(|p| p.2 != who);
        let mut i = 0;
        while i < self.chain.len() {
            if self.chain[i].2 != who {
                i += 1;
                continue;
            }
            let (_, _, _, retracted, stop) = self.chain.remove(i);
            match self.head {
                Some(h) if h == i => {
                    self.head = None;
                    self.pending.clear();
                }
                Some(h) if h > i => self.head = Some(h - 1),
                _ => {}
            }
            if let Some(above) = self.chain.get_mut(i) {
                above.4 |= stop || !retracted;
            }
        }
    }
}

/// One step of the model property.
#[derive(Clone, Debug)]
enum Step {
    Accept {
        value: u8,
        day: i64,
        participant: usize,
    },
    Typed(Typed),
    Forget {
        participant: usize,
    },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0u8..4, 0i64..400, 0..PARTICIPANTS.len())
            .prop_map(|(value, day, participant)| Step::Accept { value, day, participant }),
        6 => typed().prop_map(|t| Step::Typed(Typed { entity: 0, slot: 0, ..t })),
        1 => (0..PARTICIPANTS.len()).prop_map(|participant| Step::Forget { participant }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    /// Under any sequence of typed operations and erasures, the ledger
    /// applies exactly the operations the model says apply, and the key's
    /// head and pending alternatives are the model's.
    #[test]
    fn prop_typed_operations_match_a_model(steps in prop::collection::vec(step(), 1..40)) {
        let mut m = Memory::new(Config { merge: MergeMode::Inline, ..Config::default() }).unwrap();
        let key = Key::new(ENTITIES[0], SLOTS[0]).unwrap();
        let mut cell = Cell::default();
        for s in steps {
            match s {
                Step::Accept { value, day: d, participant } => {
                    let r = m.observe(observation((0, 0, value, d, participant))).unwrap();
                    cell.apply(pfm::fact::Op::Accept, Some(format!("v{value}")), None, r.outcome.fact(), participant);
                }
                Step::Typed(t) => {
                    let o = typed_observation(&m, &t);
                    // A contest without a value contests with its text.
                    let value = match (t.op, &o.value) {
                        (pfm::fact::Op::Contest, None) => Some(pfm::text::normalize(&o.text)),
                        _ => o.value.clone().map(|v| pfm::text::normalize(&v)),
                    };
                    let target = o.target;
                    let expected = cell.applies(t.op, value.as_deref(), target);
                    let got = apply_typed(&mut m, &t)?;
                    prop_assert_eq!(got.is_some(), expected, "{:?} applied?", t);
                    if let Some(r) = got {
                        cell.apply(t.op, value, target, r.outcome.fact(), t.participant);
                    }
                }
                Step::Forget { participant } => {
                    m.forget(&Forget::Entity(PARTICIPANTS[participant].to_owned()), day(0)).unwrap();
                    cell.forget(participant);
                }
            }
            m.ledger().verify().map_err(TestCaseError::fail)?;
            let head = m.ledger().active_for_key(&key);
            prop_assert_eq!(head.map(|f| f.id()), cell.head.map(|h| cell.chain[h].0));
            let pending: Vec<FactId> = m
                .ledger()
                .facts()
                .filter(|f| f.state.status == pfm::fact::Status::Alternative)
                .map(|f| f.id())
                .collect();
            let model: Vec<FactId> = cell.pending.iter().map(|p| p.0).collect();
            prop_assert_eq!(pending, model);
        }
    }
}

/// One step of the staging property: a statement of a key with the kind
/// the caller gives it (plan values are `p0`..`p3`, others `v0`..`v3`).
#[derive(Clone, Debug)]
enum Said {
    Statement {
        key: (usize, usize),
        kind: pfm::fact::Kind,
        plan_value: bool,
        value: u8,
        day: i64,
        participant: usize,
    },
    /// A completed statement of the key with no value ("it happened").
    Confirm {
        key: (usize, usize),
        day: i64,
    },
    Forget {
        name: usize,
    },
}

fn said() -> impl Strategy<Value = Said> {
    use pfm::fact::Kind as K;
    prop_oneof![
        8 => (
            (0..ENTITIES.len(), 0..SLOTS.len()),
            prop::sample::select(vec![K::Speculation, K::Speculation, K::Completed, K::Other, K::Correction, K::Abandonment]),
            any::<bool>(),
            0u8..4,
            0i64..400,
            0..PARTICIPANTS.len(),
        )
            .prop_map(|(key, kind, plan_value, value, day, participant)| Said::Statement { key, kind, plan_value, value, day, participant }),
        2 => ((0..ENTITIES.len(), 0..SLOTS.len()), 0i64..400).prop_map(|(key, day)| Said::Confirm { key, day }),
        1 => (0..ENTITIES.len() + PARTICIPANTS.len()).prop_map(|name| Said::Forget { name }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// A random stream of plans, outcomes, corrections and abandonments,
    /// under both orderings, never leaves a plan current: a key's current
    /// value is one some statement other than a speculation made current,
    /// and (verify) a key has at most one current value, plans none.
    #[test]
    fn prop_plans_never_become_current_by_themselves(steps in prop::collection::vec(said(), 1..40), event_time in any::<bool>()) {
        use pfm::fact::Kind as K;
        let ordering = if event_time { ChainOrder::EventTime } else { ChainOrder::Arrival };
        let mut m = Memory::new(Config { ordering, merge: MergeMode::Inline, ..Config::default() }).unwrap();
        let mut stated: HashSet<(Key, String)> = HashSet::new();
        for s in steps {
            match s {
                Said::Statement { key: (e, sl), kind, plan_value, value, day: d, participant } => {
                    let key = Key::new(ENTITIES[e], SLOTS[sl]).unwrap();
                    let value = format!("{}{value}", if plan_value { "p" } else { "v" });
                    let o = Observation::new(format!("{} {} {} {value}", ENTITIES[e], SLOTS[sl], kind.name()), day(d))
                        .with_participants([PARTICIPANTS[participant]])
                        .with_key(key.clone(), Some(&value))
                        .with_kind(kind);
                    m.observe(o).unwrap();
                    if matches!(kind, K::Completed | K::Other | K::Correction) {
                        stated.insert((key, value));
                    }
                }
                Said::Confirm { key: (e, sl), day: d } => {
                    // It confirms the key's plan only when there is exactly
                    // one; otherwise its text is the value, as for any
                    // keyed statement without one.
                    let key = Key::new(ENTITIES[e], SLOTS[sl]).unwrap();
                    let text = format!("{} {} it happened", ENTITIES[e], SLOTS[sl]);
                    let plans = m.ledger().pending_plans(&key).to_vec();
                    let value = match plans.as_slice() {
                        [plan] => m.fact(*plan).unwrap().body.value().unwrap().to_owned(),
                        _ => pfm::text::normalize(&text),
                    };
                    let o = Observation::new(text, day(d)).with_key(key.clone(), None).with_kind(K::Completed);
                    m.observe(o).unwrap();
                    stated.insert((key, value));
                }
                Said::Forget { name } => {
                    let name = ENTITIES.iter().chain(PARTICIPANTS.iter()).nth(name).unwrap();
                    m.forget(&Forget::Entity((*name).to_owned()), day(0)).unwrap();
                }
            }
            m.ledger().verify().map_err(TestCaseError::fail)?;
            for f in m.ledger().active() {
                if let (Some(key), Some(value)) = (&f.body.key, f.body.value()) {
                    prop_assert!(stated.contains(&(Key::clone(key), value.to_string())), "{} = {} is current but was only planned", key, value);
                    prop_assert!(f.state.entered_by == pfm::fact::Op::Accept || f.state.entered_by == pfm::fact::Op::Reject);
                }
            }
            for f in m.ledger().facts() {
                if matches!(f.state.status, Status::Pending | Status::Confirmed | Status::Abandoned) {
                    prop_assert!(!f.state.is_current() && f.state.intervals.is_empty(), "plan {} was active", f.id());
                }
            }
        }
    }
}

/// A store no durable copy follows holds no journal; one that keeps it
/// (or was restored) records every write, erasures included.
#[test]
fn only_a_store_that_keeps_a_journal_records_one() {
    let config = || Config {
        merge: MergeMode::Inline,
        ..Config::default()
    };
    let say = |m: &mut Memory| {
        m.observe(Observation::new("The printer on floor 3 is fixed.", day(1)))
            .unwrap()
            .outcome
            .fact()
    };
    let mut plain = Memory::new(config()).unwrap();
    say(&mut plain);
    assert_eq!(plain.take_journal(), pfm::memory::Journal::default());
    let mut kept = Memory::new(config()).unwrap();
    kept.keep_journal();
    let id = say(&mut kept);
    assert!(kept.take_journal().touched.contains(&id));
    let l = kept.ledger();
    let mut restored = Memory::restore(
        config(),
        l.facts().cloned().collect(),
        l.next_id(),
        l.seq(),
        l.committed_at(),
    )
    .unwrap();
    restored.forget(&Forget::Fact(id), day(2)).unwrap();
    assert!(restored.take_journal().erased.contains(&id));
}
