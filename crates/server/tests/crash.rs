//! Crash tests that catch a missing fsync (issue 17.9). The durable ledger
//! runs on [`LossyDisk`], a simulated disk that keeps, for every file, the
//! bytes redb has written and the bytes it has synced, and for the
//! directory, the names as they are and as they were at its last sync. A
//! crash at a sync point fails that sync and every later operation, and the
//! disk after the crash holds only what was synced: unsynced file writes,
//! creations and renames are lost, as after a power cut (a SIGKILL keeps the
//! page cache and would hide a missing fsync).
//!
//! The scenario commits batches, closes the ledger with a checkpoint and
//! reopens it from the checkpoint, erases one fact (a rewrite and a rename),
//! commits more and closes with a checkpoint again; each batch also carries
//! a typed operation on one key (accept, accept, revoke, contest, resolve).
//! It is crashed at every sync
//! point it passes, and after each crash the ledger must open, hold every
//! acknowledged write whole (a batch is all or nothing), hold no byte of an
//! acknowledged erasure, and be exactly the state after the last
//! acknowledged step or after the step the crash cut (every fact's body,
//! status, intervals and edges: the operations are stored, not re-derived),
//! whether it opens from the rows or from a checkpoint.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use pfm::fact::Op;
use pfm::{Config, Forget, Key, Memory, Observation, WallTime};
use pfm_server::disk::Disk;
use pfm_server::durable::{Batch, Checkpoint, DurableLedger, FILE, Source};
use redb::{Builder, Database, DatabaseError, StorageBackend};

/// One file: what redb wrote, and what reached the platter.
#[derive(Clone, Debug, Default)]
struct Inode {
    written: Vec<u8>,
    synced: Vec<u8>,
}

#[derive(Debug, Default)]
struct State {
    inodes: Vec<Inode>,
    /// Names as they are now.
    names: BTreeMap<PathBuf, usize>,
    /// Names as of the last directory sync.
    synced_names: BTreeMap<PathBuf, usize>,
    /// Sync points passed so far (file and directory syncs).
    syncs: usize,
    /// The sync point that loses power.
    crash_at: Option<usize>,
    crashed: bool,
}

/// A disk that loses everything not synced (see the module doc).
#[derive(Clone, Debug, Default)]
struct LossyDisk(Arc<Mutex<State>>);

fn power_cut() -> io::Error {
    io::Error::other("power cut")
}

impl LossyDisk {
    fn crashing_at(sync_point: Option<usize>) -> Self {
        let disk = LossyDisk::default();
        disk.state().crash_at = sync_point;
        disk
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap()
    }

    /// Fails once the power is cut; otherwise runs `f` on the state.
    fn live<T>(&self, f: impl FnOnce(&mut State) -> T) -> io::Result<T> {
        let mut state = self.state();
        if state.crashed {
            return Err(power_cut());
        }
        Ok(f(&mut state))
    }

    /// A sync point: counts it, and cuts the power if it is the chosen one
    /// (the sync then does not happen).
    fn sync(&self, f: impl FnOnce(&mut State)) -> io::Result<()> {
        let mut state = self.state();
        if state.crashed {
            return Err(power_cut());
        }
        state.syncs += 1;
        if state.crash_at == Some(state.syncs) {
            state.crashed = true;
            return Err(power_cut());
        }
        f(&mut state);
        Ok(())
    }

    /// The disk as it is after the power comes back: only what was synced.
    fn after_crash(&self) -> LossyDisk {
        let state = self.state();
        let inodes = state
            .inodes
            .iter()
            .map(|i| Inode {
                written: i.synced.clone(),
                synced: i.synced.clone(),
            })
            .collect();
        LossyDisk(Arc::new(Mutex::new(State {
            inodes,
            names: state.synced_names.clone(),
            synced_names: state.synced_names.clone(),
            ..State::default()
        })))
    }

    /// Whether any named file holds `needle`.
    fn contains(&self, needle: &str) -> bool {
        let state = self.state();
        state.names.values().any(|&i| {
            let bytes = &state.inodes[i].written;
            bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
        })
    }

    fn syncs(&self) -> usize {
        self.state().syncs
    }
}

/// An open file of a [`LossyDisk`], as redb's storage backend.
#[derive(Debug)]
struct File {
    disk: LossyDisk,
    inode: usize,
}

impl StorageBackend for File {
    fn len(&self) -> io::Result<u64> {
        self.disk
            .live(|s| s.inodes[self.inode].written.len() as u64)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        self.disk.live(|s| {
            let data = &s.inodes[self.inode].written;
            let start = offset as usize;
            let bytes = data
                .get(start..start + out.len())
                .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "past the end"))?;
            out.copy_from_slice(bytes);
            Ok(())
        })?
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.disk
            .live(|s| s.inodes[self.inode].written.resize(len as usize, 0))
    }

    fn sync_data(&self) -> io::Result<()> {
        self.disk.sync(|s| {
            let inode = &mut s.inodes[self.inode];
            inode.synced = inode.written.clone();
        })
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.disk.live(|s| {
            let file = &mut s.inodes[self.inode].written;
            let start = offset as usize;
            if file.len() < start + data.len() {
                file.resize(start + data.len(), 0);
            }
            file[start..start + data.len()].copy_from_slice(data);
        })
    }
}

impl Disk for LossyDisk {
    fn database(&self, path: &Path, builder: &Builder) -> Result<Database, DatabaseError> {
        let inode = self
            .live(|s| match s.names.get(path) {
                Some(&i) => i,
                None => {
                    s.inodes.push(Inode::default());
                    let i = s.inodes.len() - 1;
                    s.names.insert(path.to_owned(), i);
                    i
                }
            })
            .map_err(|e| DatabaseError::Storage(e.into()))?;
        builder.create_with_backend(File {
            disk: self.clone(),
            inode,
        })
    }

    fn exists(&self, path: &Path) -> bool {
        self.state().names.contains_key(path)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.live(|s| s.names.remove(path))?
            .map(drop)
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.live(|s| {
            let inode = s
                .names
                .remove(from)
                .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
            s.names.insert(to.to_owned(), inode);
            Ok(())
        })?
    }

    fn sync_dir(&self, _dir: &Path) -> io::Result<()> {
        // One directory holds every file of the scenario.
        self.sync(|s| s.synced_names = s.names.clone())
    }

    fn private_dir(&self, _dir: &Path) -> pfm::Result<()> {
        Ok(())
    }

    fn restrict(&self, _path: &Path, _mode: u32) -> pfm::Result<()> {
        Ok(())
    }
}

const SECRET: &str = "Quokka-Zanzibar-77";

/// What the scenario got acknowledged before the power cut.
#[derive(Debug, Default)]
struct Acknowledged {
    /// Texts of acknowledged batches, batch by batch.
    batches: Vec<Vec<String>>,
    /// Texts of batches whose write failed (may or may not have landed).
    unacknowledged: Vec<Vec<String>>,
    /// Whether the erasure of the secret was attempted (it may or may not
    /// have taken effect if unacknowledged).
    erasing: bool,
    /// Whether the erasure of the secret was acknowledged.
    erased: bool,
    /// The whole store (see [`state`]) after the last acknowledged step.
    state: String,
    /// The whole store after the step whose sync failed (it may have landed).
    cut: Option<String>,
    /// Where the reopen after batch 2 read the store from.
    reopened_from: Option<Source>,
}

/// Every retained fact as stored (body and state), and the commit counter.
fn state(memory: &Memory) -> String {
    let rows: Vec<String> = memory
        .ledger()
        .facts()
        .map(|f| serde_json::to_string(f).unwrap())
        .collect();
    format!("seq {}: {}", memory.ledger().seq(), rows.join("\n"))
}

fn batch(n: usize) -> Vec<Observation> {
    let at = WallTime::parse("2025-06-02").unwrap();
    let text = if n == 1 {
        format!("Alex Rivera's locker code is {SECRET}.")
    } else {
        format!("Alex Rivera's note number {n} is ready.")
    };
    let (op, value) = [
        (Op::Accept, Some("$30k")),
        (Op::Accept, Some("$50k")),
        (Op::Revoke, None),
        (Op::Contest, Some("$40k")),
        (Op::Resolve, Some("$40k")),
    ][n];
    let key = Key::new("Halcyon", "budget_cap").unwrap();
    vec![
        Observation::new(text, at).with_participants(["Alex Rivera"]),
        Observation::new(format!("Batch {n} has a second line for Sam."), at)
            .with_participants(["Sam Ode"]),
        Observation::new(format!("Batch {n}: the Halcyon budget cap, {op}."), at)
            .with_key(key, value)
            .with_op(op, None),
    ]
}

/// The texts a batch stores as facts (a typed operation may store none:
/// a resolve to an alternative only supports it; the state check covers it).
fn texts(observations: &[Observation]) -> Vec<String> {
    observations
        .iter()
        .filter(|o| o.key.is_none())
        .map(|o| o.text.clone())
        .collect()
}

/// Commits batches 0–2, closes with a checkpoint and reopens, erases the
/// secret (batch 1's first fact), commits batches 3–4 and closes with a
/// checkpoint; stops at the first failure (the power cut).
fn scenario(disk: &LossyDisk, dir: &Path) -> Acknowledged {
    let mut acked = Acknowledged {
        state: state(&Memory::new(config()).unwrap()),
        ..Acknowledged::default()
    };
    let open = || DurableLedger::open_on(Arc::new(disk.clone()), dir, config());
    let Ok((mut store, mut memory)) = open() else {
        return acked;
    };
    acked.state = state(&memory);
    let commit =
        |store: &mut DurableLedger, memory: &mut Memory, acked: &mut Acknowledged, n: usize| {
            let observations = batch(n);
            let sent = texts(&observations);
            memory.observe_batch(observations).unwrap();
            let journal = memory.take_journal();
            match store.write(&Batch::of(memory, &journal)) {
                Ok(()) => {
                    acked.batches.push(sent);
                    acked.state = state(memory);
                    true
                }
                Err(_) => {
                    acked.unacknowledged.push(sent);
                    acked.cut = Some(state(memory));
                    false
                }
            }
        };
    for n in 0..3 {
        if !commit(&mut store, &mut memory, &mut acked, n) {
            return acked;
        }
    }
    // Closed as the writer closes it (the checkpoint has no sync of its
    // own; the close's syncs make it durable), and reopened from it.
    if store.checkpoint(&Checkpoint::of(&memory)).is_err() {
        return acked;
    }
    drop((store, memory));
    let Ok((mut store, mut memory)) = open() else {
        return acked;
    };
    acked.reopened_from = Some(store.source());
    let secret = memory
        .ledger()
        .facts()
        .find(|f| f.body.text().contains(SECRET))
        .map(|f| f.id())
        .unwrap();
    memory
        .forget(
            &Forget::Fact(secret),
            WallTime::parse("2025-06-03").unwrap(),
        )
        .unwrap();
    memory.take_journal();
    acked.erasing = true;
    if store.rewrite(&Batch::full(&memory)).is_err() {
        acked.cut = Some(state(&memory));
        return acked;
    }
    acked.erased = true;
    acked.state = state(&memory);
    for n in 3..5 {
        if !commit(&mut store, &mut memory, &mut acked, n) {
            return acked;
        }
    }
    let _ = store.checkpoint(&Checkpoint::of(&memory));
    acked
}

fn config() -> Config {
    Config::default()
}

/// Checks the disk after a crash against what was acknowledged before it.
fn check(disk: &LossyDisk, dir: &Path, acked: &Acknowledged, at: usize) {
    let (_, memory) = DurableLedger::open_on(Arc::new(disk.clone()), dir, config())
        .unwrap_or_else(|e| panic!("crash at sync point {at}: the ledger does not open: {e}"));
    let now = state(&memory);
    assert!(
        now == acked.state || acked.cut.as_ref() == Some(&now),
        "crash at sync point {at}: the reopened store is neither the acknowledged state nor the cut step's:\n{now}\nacknowledged:\n{}",
        acked.state
    );
    let stored: Vec<&str> = memory.ledger().facts().map(|f| f.body.text()).collect();
    for sent in &acked.batches {
        for text in sent {
            let found = stored.contains(&text.as_str());
            let secret = text.contains(SECRET);
            if acked.erased && secret {
                assert!(
                    !found,
                    "crash at sync point {at}: an acknowledged erasure undone"
                );
            } else if !(acked.erasing && secret) {
                assert!(
                    found,
                    "crash at sync point {at}: acknowledged {text:?} lost; stored {stored:?}"
                );
            }
        }
    }
    for sent in &acked.unacknowledged {
        let landed = sent.iter().filter(|t| stored.contains(&t.as_str())).count();
        assert!(
            landed == 0 || landed == sent.len(),
            "crash at sync point {at}: half a batch landed: {sent:?} in {stored:?}"
        );
    }
    if acked.erased {
        assert!(
            !disk.contains(SECRET),
            "crash at sync point {at}: an acknowledged erasure came back from disk"
        );
    }
}

#[test]
fn every_acknowledged_write_survives_a_power_cut_at_every_sync_point() {
    let dir = PathBuf::from("/lossy/tenant");
    let clean = LossyDisk::crashing_at(None);
    let acked = scenario(&clean, &dir);
    assert_eq!(acked.batches.len(), 5, "{acked:?}");
    assert!(acked.erased);
    assert_eq!(acked.reopened_from, Some(Source::Checkpoint));
    assert!(!clean.contains(SECRET));
    let points = clean.syncs();
    // Writes, the rewrite's file sync and its directory sync all count.
    assert!(points >= 8, "only {points} sync points");
    for at in 1..=points + 1 {
        let disk = LossyDisk::crashing_at(Some(at));
        let acked = scenario(&disk, &dir);
        check(&disk.after_crash(), &dir, &acked, at);
    }
    assert!(clean.exists(&dir.join(FILE)));
    let (store, memory) = DurableLedger::open_on(Arc::new(clean.clone()), &dir, config()).unwrap();
    assert_eq!(
        store.source(),
        Source::Checkpoint,
        "the last close's checkpoint"
    );
    assert_eq!(state(&memory), acked.state);
    let key = Key::new("Halcyon", "budget_cap").unwrap();
    let head = memory.ledger().active_for_key(&key).unwrap();
    assert_eq!(head.body.value(), Some("$40k"), "resolved to $40k");
    eprintln!("crashed at each of {points} sync points and after the last");
}
