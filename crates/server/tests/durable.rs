//! The durable ledger: a store written through `DurableLedger` and reopened
//! is the same store (facts, history, active values, retrieval); erasure
//! leaves no byte of the text on disk; a corrupt row refuses to open; a
//! current checkpoint opens the same store, and any other is passed over.

mod support;

use std::path::Path;

use pfm::{Config, Forget, Memory, Observation, Request, WallTime};
use pfm_server::durable::{Batch, Checkpoint, DurableLedger, FILE, Source, repair};
use support::tempdir;

fn day(d: u32) -> WallTime {
    WallTime::parse(&format!("2025-06-{d:02}")).unwrap()
}

/// A standup moved twice, and a fact beside it.
const STANDUP: [(&str, u32); 3] = [
    ("The standup with Alex Rivera is moved to 9:30am.", 2),
    ("Alex Rivera moved to Lisbon last spring.", 3),
    ("The standup with Alex Rivera is moved to 10:45am.", 9),
];

/// Observes each (text, day) in its own commit and writes its journal.
fn observe(store: &DurableLedger, memory: &mut Memory, messages: &[(&str, u32)]) {
    for (text, d) in messages {
        memory
            .observe(Observation::new(*text, day(*d)).with_participants(["Alex Rivera"]))
            .unwrap();
        let journal = memory.take_journal();
        store.write(&Batch::of(memory, &journal)).unwrap();
    }
}

fn state(memory: &Memory) -> Vec<String> {
    let mut rows: Vec<String> = memory
        .ledger()
        .facts()
        .map(|f| serde_json::to_string(f).unwrap())
        .collect();
    rows.sort();
    rows
}

fn file_contains(dir: &Path, needle: &str) -> bool {
    std::fs::read_dir(dir).unwrap().any(|e| {
        let bytes = std::fs::read(e.unwrap().path()).unwrap();
        bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
    })
}

#[test]
fn a_reopened_store_is_the_same_store() {
    let scratch = tempdir("reopen");
    let dir = scratch.path();
    let (store, mut memory) = DurableLedger::open(dir, Config::default()).unwrap();
    observe(&store, &mut memory, &STANDUP);
    observe(
        &store,
        &mut memory,
        &[("The standup with Alex Rivera is moved to 10:45am.", 10)],
    );
    let before = state(&memory);
    let request =
        Request::new("when is the standup with Alex", day(11)).with_participants(["Alex Rivera"]);
    let block = memory.retrieve(&request).unwrap();
    drop((store, memory));

    let (_, reopened) = DurableLedger::open(dir, Config::default()).unwrap();
    assert_eq!(state(&reopened), before);
    let again = reopened.retrieve(&request).unwrap();
    assert_eq!(again.text, block.text);
    assert!(again.text.contains("10:45am") && !again.text.contains("9:30am"));
    reopened.ledger().verify().unwrap();
}

#[test]
fn erasure_leaves_no_byte_of_the_text_on_disk() {
    let scratch = tempdir("erase");
    let dir = scratch.path();
    let (mut store, mut memory) = DurableLedger::open(dir, Config::default()).unwrap();
    observe(
        &store,
        &mut memory,
        &[
            ("Alex Rivera's locker code is 4417zq.", 2),
            ("The standup with Alex Rivera is moved to 9:30am.", 3),
        ],
    );
    assert!(file_contains(dir, "4417zq"));
    let id = memory
        .ledger()
        .facts()
        .find(|f| f.body.text().contains("4417zq"))
        .unwrap()
        .id();
    memory.forget(&Forget::Fact(id), day(4)).unwrap();
    let journal = memory.take_journal();
    assert!(journal.erased.contains(&id));
    store.rewrite(&Batch::full(&memory)).unwrap();
    assert!(
        !file_contains(dir, "4417zq"),
        "erased text is still on disk"
    );
    drop((store, memory));
    let (_, reopened) = DurableLedger::open(dir, Config::default()).unwrap();
    assert!(reopened.ledger().get(id).is_none());
    assert_eq!(reopened.ledger().len(), 1);
    assert_eq!(reopened.ledger().next_id(), 2, "ids are never reused");
}

#[test]
fn a_corrupt_row_refuses_to_open_and_repair_names_it() {
    let scratch = tempdir("corrupt");
    let dir = scratch.path();
    {
        let (store, mut memory) = DurableLedger::open(dir, Config::default()).unwrap();
        observe(
            &store,
            &mut memory,
            &[
                ("Alex Rivera moved to Lisbon last spring.", 3),
                ("Alex Rivera's favourite tea is sencha.", 4),
            ],
        );
    }
    {
        let db = redb::Database::open(dir.join(FILE)).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let table: redb::TableDefinition<u64, &[u8]> = redb::TableDefinition::new("facts");
            let mut t = txn.open_table(table).unwrap();
            t.insert(1, b"{\"body\": {\"id\": 1, \"te".as_slice())
                .unwrap();
        }
        txn.commit().unwrap();
    }
    let err = DurableLedger::open(dir, Config::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains(FILE) && err.contains("row 1"), "{err}");
    let report = repair(dir, Config::default(), false).unwrap();
    assert_eq!(report.rows, 2);
    assert_eq!(report.corrupt.iter().map(|c| c.0).collect::<Vec<_>>(), [1]);
    assert!(!report.dropped);
    let report = repair(dir, Config::default(), true).unwrap();
    assert!(report.dropped);
    let (_, memory) = DurableLedger::open(dir, Config::default()).unwrap();
    assert_eq!(memory.ledger().len(), 1);
}

#[test]
fn a_truncated_file_refuses_to_open_naming_it() {
    let scratch = tempdir("truncated");
    let dir = scratch.path();
    {
        let (store, mut memory) = DurableLedger::open(dir, Config::default()).unwrap();
        for d in 1..20 {
            observe(
                &store,
                &mut memory,
                &[(&format!("Alex Rivera ran {d} km on day {d}."), d)],
            );
        }
    }
    let path = dir.join(FILE);
    let len = std::fs::metadata(&path).unwrap().len();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(len / 3).unwrap();
    drop(file);
    let err = DurableLedger::open(dir, Config::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains(FILE), "{err}");
}

#[test]
fn a_current_checkpoint_opens_the_same_store_and_a_stale_one_is_passed_over() {
    let scratch = tempdir("checkpoint");
    let dir = scratch.path();
    let open = |config: Config| DurableLedger::open(dir, config).unwrap();
    let (mut store, mut memory) = open(Config::default());
    observe(&store, &mut memory, &STANDUP);
    assert_eq!(store.source(), Source::Rows);
    assert!(store.checkpoint(&Checkpoint::of(&memory)).unwrap());
    assert!(
        !store.checkpoint(&Checkpoint::of(&memory)).unwrap(),
        "a checkpoint of the last commit is not written again"
    );
    let before = state(&memory);
    let request =
        Request::new("when is the standup with Alex", day(11)).with_participants(["Alex Rivera"]);
    let block = memory.retrieve(&request).unwrap().text;
    drop((store, memory));

    let (mut store, mut memory) = open(Config::default());
    assert_eq!(store.source(), Source::Checkpoint);
    assert_eq!(state(&memory), before);
    assert_eq!(memory.retrieve(&request).unwrap().text, block);
    memory.ledger().verify().unwrap();
    assert!(
        !store.checkpoint(&Checkpoint::of(&memory)).unwrap(),
        "read, so current"
    );

    // A write makes it stale: the next open reads the rows, write included.
    observe(
        &store,
        &mut memory,
        &[("Alex Rivera now lives in Porto.", 12)],
    );
    let after = state(&memory);
    drop((store, memory));
    let (mut store, memory) = open(Config::default());
    assert_eq!(store.source(), Source::Rows);
    assert_eq!(state(&memory), after);
    assert!(store.checkpoint(&Checkpoint::of(&memory)).unwrap());
    drop((store, memory));
    let (store, memory) = open(Config::default());
    assert_eq!(
        (store.source(), state(&memory)),
        (Source::Checkpoint, after.clone())
    );
    drop((store, memory));

    // Terms made under other scoring parameters are not read.
    let mut unstemmed = Config::default();
    unstemmed.score.stem = !unstemmed.score.stem;
    let (store, memory) = open(unstemmed);
    assert_eq!((store.source(), state(&memory)), (Source::Rows, after));
}

#[test]
fn an_unreadable_checkpoint_is_passed_over_for_the_rows() {
    let scratch = tempdir("bad-checkpoint");
    let dir = scratch.path();
    let (mut store, mut memory) = DurableLedger::open(dir, Config::default()).unwrap();
    observe(&store, &mut memory, &[("Alex Rivera moved to Lisbon.", 3)]);
    store.checkpoint(&Checkpoint::of(&memory)).unwrap();
    let before = state(&memory);
    drop((store, memory));
    {
        let db = redb::Database::open(dir.join(FILE)).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let table: redb::TableDefinition<&str, &[u8]> =
                redb::TableDefinition::new("checkpoint");
            let mut t = txn.open_table(table).unwrap();
            t.insert("store", b"\x82\xa5facts".as_slice()).unwrap();
        }
        txn.commit().unwrap();
    }
    let (store, memory) = DurableLedger::open(dir, Config::default()).unwrap();
    assert_eq!((store.source(), state(&memory)), (Source::Rows, before));
}

#[test]
fn erasure_leaves_no_byte_of_the_text_in_a_checkpoint_either() {
    let scratch = tempdir("erase-checkpoint");
    let dir = scratch.path();
    let open = || DurableLedger::open(dir, Config::default()).unwrap();
    let (mut store, mut memory) = open();
    observe(
        &store,
        &mut memory,
        &[
            ("Alex Rivera's locker code is 5528kw.", 2),
            ("The standup with Alex Rivera is moved to 9:30am.", 3),
        ],
    );
    store.checkpoint(&Checkpoint::of(&memory)).unwrap();
    drop((store, memory));
    let (mut store, mut memory) = open();
    assert_eq!(store.source(), Source::Checkpoint);
    let id = memory
        .ledger()
        .facts()
        .find(|f| f.body.text().contains("5528kw"))
        .unwrap()
        .id();
    memory.forget(&Forget::Fact(id), day(4)).unwrap();
    memory.take_journal();
    store.rewrite(&Batch::full(&memory)).unwrap();
    assert!(!file_contains(dir, "5528kw"), "erased text left on disk");
    // The close writes a fresh checkpoint, of the surviving facts.
    assert!(store.checkpoint(&Checkpoint::of(&memory)).unwrap());
    drop((store, memory));
    assert!(
        !file_contains(dir, "5528kw"),
        "erased text in the checkpoint"
    );
    let (store, memory) = open();
    assert_eq!(store.source(), Source::Checkpoint);
    assert!(memory.ledger().get(id).is_none());
    assert_eq!(memory.ledger().len(), 1);
}

#[test]
fn a_store_keeps_the_ordering_it_was_built_under() {
    use pfm::config::ChainOrder;
    let scratch = tempdir("ordering");
    let dir = scratch.path();
    let event_time = Config {
        ordering: ChainOrder::EventTime,
        ..Config::default()
    };
    let (store, mut memory) = DurableLedger::open(dir, event_time).unwrap();
    // The day-3 message arrives after the day-9 one: under event time it
    // is history and the day-9 time stays current.
    observe(
        &store,
        &mut memory,
        &[
            ("The standup with Alex Rivera is moved to 10:45am.", 9),
            ("The standup with Alex Rivera is moved to 9:30am.", 3),
        ],
    );
    let current = |m: &Memory| {
        let key = pfm::Key::new("alex rivera", "meeting_time").unwrap();
        m.ledger()
            .active_for_key(&key)
            .and_then(|f| f.body.value().map(str::to_owned))
    };
    assert_eq!(current(&memory).as_deref(), Some("10:45am"));
    drop((store, memory));

    // Reopened with the default (arrival) configuration, it is still an
    // event-time store: another late message does not win either.
    let (store, mut reopened) = DurableLedger::open(dir, Config::default()).unwrap();
    assert_eq!(reopened.config().ordering, ChainOrder::EventTime);
    observe(
        &store,
        &mut reopened,
        &[("The standup with Alex Rivera is moved to 8:15am.", 4)],
    );
    assert_eq!(current(&reopened).as_deref(), Some("10:45am"));
    reopened.ledger().verify().unwrap();
}

#[test]
fn a_tenant_keeps_its_retrieval_settings_across_reopen_and_erasure() {
    use pfm::rank::Recency;
    use pfm_server::durable::Settings;
    let scratch = tempdir("settings");
    let data = scratch.path();
    let settings = Settings {
        recency: Some(Recency::Off),
        ranker: Some("bm25_validity".into()),
    };
    let bad = Settings {
        ranker: Some("bm26".into()),
        ..Settings::default()
    };
    let now = jiff::Timestamp::now();
    let err = pfm_server::lifecycle::create(data, "bad", Default::default(), bad, now);
    assert!(err.unwrap_err().to_string().contains("unknown ranker"));
    let created =
        pfm_server::lifecycle::create(data, "me", Default::default(), settings.clone(), now);
    assert!(created.unwrap().is_some());
    let dir = pfm_server::lifecycle::tenant_dir(data, "me");

    // Opened under a server whose default is fixed recency, it keeps its own.
    let fixed = Config::default();
    let mut server_default = fixed.clone();
    server_default.score.recency = Recency::Fixed;
    let (mut store, mut memory) = DurableLedger::open(&dir, server_default.clone()).unwrap();
    assert_eq!(store.settings(), &settings);
    assert_eq!(memory.config().score.recency, Recency::Off);
    assert_eq!(
        store.settings().ranker().unwrap().unwrap().name,
        "bm25_validity"
    );

    // An erasure rewrites the file: the settings are copied into the new one.
    observe(&store, &mut memory, &[("Alex Rivera lives in Lisbon.", 2)]);
    memory
        .forget(&Forget::Entity("Alex Rivera".into()), day(3))
        .unwrap();
    store.rewrite(&Batch::full(&memory)).unwrap();
    drop((store, memory));
    let (store, memory) = DurableLedger::open(&dir, server_default).unwrap();
    assert_eq!(store.settings(), &settings);
    assert_eq!(memory.config().score.recency, Recency::Off);

    // A tenant created without settings follows the server's.
    drop((store, memory));
    pfm_server::lifecycle::create(data, "plain", Default::default(), Settings::default(), now)
        .unwrap();
    let dir = pfm_server::lifecycle::tenant_dir(data, "plain");
    let mut server_default = fixed;
    server_default.score.recency = Recency::Fixed;
    let (store, memory) = DurableLedger::open(&dir, server_default).unwrap();
    assert_eq!(store.settings(), &Settings::default());
    assert_eq!(memory.config().score.recency, Recency::Fixed);
}

/// `pfm tenant delete` waits on this: an open ledger is locked, a closed
/// one is not.
#[test]
fn an_open_ledger_is_seen_as_open() {
    let scratch = tempdir("open-elsewhere");
    let dir = scratch.path();
    let (store, memory) = DurableLedger::open(dir, Config::default()).unwrap();
    assert!(pfm_server::durable::is_open_elsewhere(dir));
    drop((store, memory));
    assert!(!pfm_server::durable::is_open_elsewhere(dir));
}
