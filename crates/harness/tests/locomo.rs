//! The LoCoMo study on a hand-built conversation in LoCoMo's own format:
//! its written dates parse, turns keep their order, evidence recall and
//! answer containment count what the block holds, and the span recency
//! keeps a valid first-session fact that the paper's fixed half-life buries;
//! the abstention study counts each question set and the answers a gate
//! withholds.

use pfm::config::Config;
use pfm::rank::{Ranker, Recency};
use pfm_harness::eval::locomo::{self, Arm, ArmResult, Tally};

/// Two sessions a year apart: the answer to the question is said in the
/// first; the second has small talk that shares the question's words.
const CONVERSATION: &str = r#"[{
  "sample_id": "conv-test",
  "conversation": {
    "speaker_a": "Ana",
    "speaker_b": "Ben",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
      {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a rescue dog named Pepper last week."},
      {"speaker": "Ben", "dia_id": "D1:2", "text": "That is wonderful news, congratulations!"}
    ],
    "session_2_date_time": "10:37 am on 27 June, 2024",
    "session_2": [
      {"speaker": "Ben", "dia_id": "D2:1", "text": "My neighbour adopted a cat, what a week."},
      {"speaker": "Ana", "dia_id": "D2:2", "text": "A dog park opened near us.", "blip_caption": "a photo of a dog running"},
      {"speaker": "Ben", "dia_id": "D2:3", "text": "Last week was rainy, the dog stayed in."}
    ]
  },
  "qa": [
    {"question": "What is the name of the dog Ana adopted?", "answer": "Pepper", "evidence": ["D1:1"], "category": 4},
    {"question": "Which pet did the neighbour adopt?", "answer": "a cat", "evidence": ["D2:1"], "category": 1},
    {"question": "What did Ana say about Ben's cat?", "adversarial_answer": "x", "evidence": ["D2:1"], "category": 5}
  ]
}]"#;

fn conversations() -> Vec<locomo::Conversation> {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("pfm-locomo-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("locomo10.json");
    std::fs::write(&path, CONVERSATION).unwrap();
    let c = locomo::load(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    c
}

#[test]
fn loads_turns_in_order_with_their_written_dates() {
    let c = conversations();
    assert_eq!(c.len(), 1);
    let c = &c[0];
    assert_eq!(c.speakers, ["Ana", "Ben"]);
    let ids: Vec<&str> = c.turns.iter().map(|t| t.dia_id.as_str()).collect();
    assert_eq!(ids, ["D1:1", "D1:2", "D2:1", "D2:2", "D2:3"]);
    assert_eq!(
        c.turns[0].at,
        pfm::WallTime::parse("2023-05-08T13:56:00Z").unwrap()
    );
    assert!(c.turns.windows(2).all(|w| w[0].at < w[1].at));
    assert_eq!(
        c.turns[0].text,
        "Ana: I adopted a rescue dog named Pepper last week."
    );
    assert!(
        c.turns[3]
            .text
            .ends_with("[shares a photo: a photo of a dog running]")
    );
    assert_eq!(c.questions[0].answer.as_deref(), Some("Pepper"));
    assert_eq!(c.questions[2].answer, None);
    assert!(c.asked_at() > c.turns[4].at);
}

fn arm(recency: Recency, k: usize) -> Arm {
    Arm {
        label: format!("{recency:?}"),
        ranker: Ranker::pfm(),
        recency: Some(recency),
        k,
        budget: 2_000,
        stem: true,
    }
}

fn scored(arms: &[Arm]) -> Vec<ArmResult> {
    locomo::run(&conversations(), arms, &Config::default()).unwrap()
}

/// The single-hop tally (category 4: the Pepper question).
fn single_hop(r: &ArmResult) -> Tally {
    r.categories[3]
}

#[test]
fn recall_and_containment_count_what_the_block_holds() {
    let results = scored(&[arm(Recency::Off, 6), arm(Recency::Off, 1)]);
    // Adversarial questions are not scored here: two answerable ones.
    assert_eq!(results[0].overall().questions, 2);
    let wide = single_hop(&results[0]);
    assert_eq!((wide.questions, wide.hits, wide.contains), (1, 1, 1));
    assert_eq!(wide.recall, 1.0);
    assert!(wide.lines >= 2);
    // With k = 1, the block holds one line per question.
    assert_eq!(results[1].overall().lines, 2);
}

#[test]
fn span_recency_keeps_the_first_session_answer_that_fixed_recency_buries() {
    let results = scored(&[arm(Recency::Fixed, 3), arm(Recency::Span, 3)]);
    // A year of 30-day half-lives floors the old answer below all three
    // recent turns of small talk that share "dog", "adopted" or "week"
    // (with no recency it ranks first); over the store's own span it stays
    // in a three-line block.
    assert_eq!(single_hop(&results[0]).hits, 0, "fixed");
    assert_eq!(single_hop(&results[1]).hits, 1, "span");
}

#[test]
fn abstention_counts_each_set_and_the_answers_a_gate_withholds() {
    use pfm::rules::Abstain;
    let gates = [
        ("none".to_owned(), Abstain::None),
        ("auto".to_owned(), Abstain::Auto),
        ("margin 100".to_owned(), Abstain::Margin(100.0)),
    ];
    let rates = locomo::abstention(&conversations(), &gates, &Config::default()).unwrap();
    // One conversation: two answerable questions, both with their evidence
    // in the ungated block; one adversarial; no other conversations.
    for r in &rates {
        assert_eq!(r.answerable.1, 2, "{}", r.label);
        assert_eq!(r.answerable_held.1, 2, "{}", r.label);
        assert_eq!(r.adversarial.1, 1, "{}", r.label);
        assert_eq!(r.cross, (0, 0), "{}", r.label);
        assert!(r.answerable_held.0 <= r.answerable.0, "{}", r.label);
    }
    assert_eq!(rates[0].answerable.0 + rates[0].adversarial.0, 0);
    // The coverage gate answers both; a margin no top fact reaches
    // withholds both answers the block held.
    assert_eq!(rates[1].answerable, (0, 2));
    assert_eq!(rates[2].answerable_held, (2, 2));
}

#[test]
fn the_swap_grid_agrees_with_the_gate_it_reads() {
    use pfm::rules::{Abstain, gate};
    use pfm_harness::eval::swap;
    let conversations = conversations();
    let supports = swap::supports(&conversations, &Config::default()).unwrap();
    // The same questions the abstention table asks of its own store.
    assert_eq!(supports.iter().filter(|q| q.adversarial).count(), 1);
    assert_eq!(supports.iter().filter(|q| !q.adversarial).count(), 2);
    // At the defaults the grid's decision is the gate's.
    let gates = [("auto".to_owned(), Abstain::Auto)];
    let r = &locomo::abstention(&conversations, &gates, &Config::default()).unwrap()[0];
    let share = |(a, n): (usize, usize)| a as f64 / n as f64;
    let grid = swap::rates(
        supports.iter(),
        f64::from(gate::DEFAULT_COVERAGE),
        gate::SWAP_MARGIN,
    );
    assert_eq!(grid, (share(r.answerable), share(r.adversarial)));
    // A threshold above every share abstains on everything.
    assert_eq!(swap::rates(supports.iter(), 1.1, f64::INFINITY), (1.0, 1.0));
}
