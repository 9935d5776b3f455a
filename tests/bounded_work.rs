//! Bounded work per request, counted rather than timed (issue 17): a
//! counting global allocator measures the bytes one call allocates on the
//! calling thread, and for any input within `pfm::limits` that stays under a
//! bound fixed by the limits alone, whatever the input and the store. Bytes
//! allocated are a time-independent measure of work that shows the
//! quadratic cases (names joined pairwise in the graph) plainly; retrieval
//! time over a large store is bounded by its deadline instead (the scorer's
//! cancel flag, `crates/cli/tests/hardening.rs`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use pfm::limits::{MAX_CONTEXT_BYTES, MAX_NAME_BYTES, MAX_NAMES, MAX_TEXT_BYTES};
use pfm::{Config, EntityKind, Memory, Observation, Request, WallTime};
use proptest::prelude::*;

/// The most one observation within the limits may allocate. Measured worst
/// case (release, 2-core VM): 48.7 MB for 256 participants and 256 entities
/// of 256 bytes each in a 64 KiB text naming 2,000 known names (768 graph
/// nodes, joined pairwise).
const OBSERVE_BOUND: u64 = 64 << 20;

/// The most one retrieval within the limits may allocate, once the thread's
/// scratch buffers exist. Measured: 3.2 MB for a 64 KiB context and 256
/// participants, the same over 50 and 500 facts.
const RETRIEVE_BOUND: u64 = 8 << 20;

struct Counting;

thread_local! {
    static ALLOCATED: Cell<u64> = const { Cell::new(0) };
}

fn count(bytes: usize) {
    // `try_with`: allocations during thread teardown are not counted.
    let _ = ALLOCATED.try_with(|a| a.set(a.get() + bytes as u64));
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// wrapper only adds to a thread-local counter, which allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `f` and returns what it allocated on this thread, in bytes.
fn allocated_by<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let before = ALLOCATED.with(Cell::get);
    let out = f();
    (out, ALLOCATED.with(Cell::get) - before)
}

fn day() -> WallTime {
    WallTime::parse("2025-06-02").unwrap()
}

/// A distinct name of `len` bytes (at least the digits it needs).
fn name(prefix: &str, i: usize, len: usize) -> String {
    let mut s = format!("{prefix}{i}");
    while s.len() < len {
        s.push('x');
    }
    s
}

/// A store whose gazetteer knows `n` names, and a text naming the first
/// `mentioned` of them, padded with `filler` bytes of words, within
/// [`MAX_TEXT_BYTES`].
fn store_and_text(known: usize, mentioned: usize, filler: usize) -> (Memory, String) {
    let mut memory = Memory::new(Config::default()).unwrap();
    memory
        .observe(Observation::new("The standup is at 9:30am.", day()))
        .unwrap();
    for i in 0..known {
        memory
            .register_entity(&format!("Zed{i}"), EntityKind::Other)
            .unwrap();
    }
    let mut text = String::from("Notes:");
    for i in 0..mentioned.min(known) {
        text.push_str(&format!(" Zed{i}"));
    }
    let target = (text.len() + filler).min(MAX_TEXT_BYTES);
    let mut w = 0;
    while text.len() + 8 <= target {
        text.push_str(&format!(" word{}", w % 1000));
        w += 1;
    }
    (memory, text)
}

/// The regression: registering thousands of names (each observation within
/// the limits) and then naming them all in one text made one observation
/// join thousands of entities pairwise (1.4 GB for 5,000). Extraction now
/// keeps the first `MAX_NAMES` entities mentioned.
#[test]
fn a_text_naming_thousands_of_known_names_costs_no_more_than_the_limit() {
    let (mut memory, text) = store_and_text(5_000, 5_000, 0);
    assert!(text.len() <= MAX_TEXT_BYTES);
    let (receipt, bytes) = allocated_by(|| memory.observe(Observation::new(text, day())).unwrap());
    let fact = memory.fact(receipt.outcome.fact()).unwrap();
    assert_eq!(fact.body.entities().len(), MAX_NAMES);
    assert!(bytes <= OBSERVE_BOUND, "{bytes} bytes for one observation");
}

/// Relation frames repeated to the text limit without a sentence break
/// (every frame read once, against one layout of the text: the matcher's
/// work is linear, see `extract::relations::Reading`).
#[test]
fn a_text_of_repeated_relation_frames_costs_no_more_than_the_limit() {
    for unit in [
        "Ann Lee lives in Denver and ",
        "my home is Denver ",
        "Zed lives ",
        // Open phrases: a copula after each possessive, a name in each.
        "Ann Lee's lucky number is 7 ",
        "Bo's pup Toby is Max ",
    ] {
        let mut memory = Memory::new(Config::default()).unwrap();
        let text = unit.repeat(MAX_TEXT_BYTES / unit.len());
        let (receipt, bytes) = allocated_by(|| memory.observe(Observation::new(text, day())));
        assert!(receipt.is_ok(), "{receipt:?}");
        assert!(
            bytes <= OBSERVE_BOUND,
            "{bytes} bytes for one observation of {unit:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn prop_an_observation_within_the_limits_allocates_a_bounded_amount(
        participants in 0..=MAX_NAMES,
        entities in 0..=MAX_NAMES,
        name_len in 8..=MAX_NAME_BYTES,
        known in 0usize..1_500,
        mentioned in 0usize..1_500,
        filler in 0usize..MAX_TEXT_BYTES,
    ) {
        let (mut memory, text) = store_and_text(known, mentioned, filler);
        let observation = Observation::new(text, day())
            .with_participants((0..participants).map(|i| name("P", i, name_len)))
            .with_entities((0..entities).map(|i| name("E", i, name_len)));
        let (receipt, bytes) = allocated_by(|| memory.observe(observation));
        prop_assert!(receipt.is_ok(), "{:?}", receipt);
        prop_assert!(bytes <= OBSERVE_BOUND, "{} bytes for one observation", bytes);
    }

    #[test]
    fn prop_a_request_within_the_limits_allocates_a_bounded_amount_whatever_the_store(
        facts in 1usize..300,
        participants in 0..=MAX_NAMES,
        name_len in 8..=MAX_NAME_BYTES,
        context_bytes in 1usize..MAX_CONTEXT_BYTES,
    ) {
        let mut memory = Memory::new(Config::default()).unwrap();
        for i in 0..facts {
            let text = format!("word{} alpha beta gamma{} is at {}pm.", i % 97, i, i % 12 + 1);
            memory
                .observe(Observation::new(text, day()).with_participants([name("P", i % 7, 10)]))
                .unwrap();
        }
        let mut context = String::new();
        let mut i = 0;
        while context.len() + 24 <= context_bytes {
            context.push_str(&format!("word{} gamma{} ", i % 97, i));
            i += 1;
        }
        let request = Request::new(context, day())
            .with_participants((0..participants).map(|i| name("P", i, name_len)));
        // The thread's scratch buffers are sized to the store once and
        // reused by every later request.
        memory.retrieve(&Request::new("alpha", day())).unwrap();
        let (block, bytes) = allocated_by(|| memory.retrieve(&request));
        prop_assert!(block.is_ok(), "{:?}", block);
        prop_assert!(bytes <= RETRIEVE_BOUND, "{} bytes for one retrieval", bytes);
    }
}
