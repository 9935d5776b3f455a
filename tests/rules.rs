//! Identity resolution and abstention (paper Section 5, Appendix D) through
//! the public API, on a hand-built store of three people, two of whom share
//! a first name.

use std::sync::Arc;

use pfm::config::{Config, MergeMode};
use pfm::extract::EntityKind;
use pfm::rank::Scored;
use pfm::rules::identity::{TEMPERATURE, W_GRAPH, W_MEMBER, W_RECENCY};
use pfm::rules::{Abstain, Identity, Resolution, Rules, gate};
use pfm::{Memory, Observation, Request};

mod common;

use common::day;

/// Alex Rivera (standup, told on day 1), Alex Chen (standup, told on day 5)
/// and Sam Okafor, who discussed the budget with Alex Chen on day 3 — the
/// only graph edge between a participant and either Alex.
fn store() -> Memory {
    let mut m = Memory::new(Config {
        merge: MergeMode::Inline,
        ..Config::default()
    })
    .unwrap();
    for p in ["Alex Rivera", "Alex Chen", "Sam Okafor"] {
        m.register_entity(p, EntityKind::Person).unwrap();
    }
    for (text, who, d) in [
        (
            "The standup with Alex Rivera is moved to 9:30am.",
            "Alex Rivera",
            1,
        ),
        (
            "Alex Chen and Sam Okafor went over the budget.",
            "Sam Okafor",
            3,
        ),
        (
            "The standup with Alex Chen is moved to 11am.",
            "Alex Chen",
            5,
        ),
    ] {
        m.observe(Observation::new(text, day(d)).with_participants([who]))
            .unwrap();
    }
    m
}

fn ask(m: &Memory, context: &str, who: &str, rules: Rules) -> pfm::Block {
    m.retrieve(
        &Request::new(context, day(6))
            .with_participants([who])
            .with_rules(rules),
    )
    .unwrap()
}

fn rules(identity: Identity, abstain: Abstain) -> Rules {
    Rules { identity, abstain }
}

#[test]
fn posterior_follows_eq_2_on_three_people() {
    let m = store();
    let v = m.version();
    let r = Resolution::of(
        &v,
        "the standup with Alex is at",
        &["Sam Okafor".into()],
        day(6),
    );
    assert_eq!(r.ambiguous.len(), 1, "{r:?}");
    let a = &r.ambiguous[0];
    assert_eq!(a.token, "alex");
    // Sam is neither Alex; Sam's only neighbour is Alex Chen (association 1);
    // recency: Chen's latest fact is 1 day old, Rivera's 5 days (T_rec 30).
    let rec = |days: f64| W_RECENCY * (-days / 30.0).exp2();
    let psi_chen = W_GRAPH + rec(1.0);
    let psi_rivera = rec(5.0);
    let pi_chen = 1.0 / (1.0 + ((psi_rivera - psi_chen) / TEMPERATURE).exp());
    let names: Vec<&str> = a.outcomes.iter().map(|o| &*o.names[0]).collect();
    assert_eq!(names, ["alex chen", "alex rivera"]);
    assert!((a.outcomes[0].psi - psi_chen).abs() < 1e-9, "{a:?}");
    assert!((a.outcomes[1].psi - psi_rivera).abs() < 1e-9, "{a:?}");
    assert!((a.outcomes[0].posterior - pi_chen).abs() < 1e-9);
    assert!((r.posterior("alex chen") - pi_chen).abs() < 1e-9);
    assert_eq!(r.posterior("sam okafor"), 0.0, "not mentioned");

    // Talking to Alex Rivera, membership outweighs Chen's recency.
    let r = Resolution::of(
        &v,
        "the standup with Alex is at",
        &["Alex Rivera".into()],
        day(6),
    );
    let a = &r.ambiguous[0];
    assert_eq!(&*a.outcomes[0].names[0], "alex rivera");
    let expected = W_MEMBER + rec(5.0);
    assert!((a.outcomes[0].psi - expected).abs() < 1e-9, "{a:?}");

    // A full name is not ambiguous; a request naming no one resolves nobody.
    let r = Resolution::of(&v, "the standup with Alex Chen is at", &[], day(6));
    assert!(r.ambiguous.is_empty());
    assert_eq!(r.posterior("alex chen"), 1.0);
    assert_eq!(r.posterior("alex rivera"), 0.0);
    let r = Resolution::of(&v, "what about the budget", &[], day(6));
    assert!(!r.mentions_anyone());
    assert_eq!(r.posterior("alex rivera"), 1.0);
}

#[test]
fn identity_rules_choose_whose_facts_are_seen() {
    let m = store();
    let q = "the standup with Alex is at";
    let none = ask(&m, q, "Alex Rivera", Rules::NONE).text;
    assert!(none.contains("9:30am") && none.contains("11am"), "{none}");

    let posterior = rules(Identity::Posterior, Abstain::None);
    let b = ask(&m, q, "Alex Rivera", posterior).text;
    assert!(b.contains("9:30am") && !b.contains("11am"), "{b}");
    // From Sam, the graph and recency favour Alex Chen; the budget fact names
    // Chen too, so it stays, and it names no rival.
    let b = ask(&m, q, "Sam Okafor", posterior).text;
    assert!(b.contains("11am") && !b.contains("9:30am"), "{b}");

    // The hard filter keeps only what the interlocutor said: asking Sam
    // about Alex's standup finds nothing, which is its recall cost.
    let filter = rules(Identity::ParticipantFilter, Abstain::None);
    let b = ask(&m, q, "Alex Chen", filter).text;
    assert!(b.contains("11am") && !b.contains("9:30am"), "{b}");
    assert!(!ask(&m, q, "Sam Okafor", filter).text.contains("standup"));

    let all = m
        .retrieve(&Request::new(q, day(6)).with_participants(["Alex Rivera"]))
        .unwrap();
    let top = all.lines[0].score;
    let cut = ask(
        &m,
        q,
        "Alex Rivera",
        rules(Identity::Cutoff(0.999), Abstain::None),
    );
    assert!(cut.lines.iter().all(|l| l.score >= 0.999 * top));
    assert!(cut.lines.len() < all.lines.len());
}

#[test]
fn slot_gate_abstains_exactly_when_no_fact_states_the_slot_for_the_entity() {
    let m = store();
    let gate = |tau| rules(Identity::Posterior, Abstain::Slot(tau));
    // Answerable: the time of Alex Rivera's standup.
    let b = ask(&m, "the standup with Alex is at", "Alex Rivera", gate(0.5));
    assert!(!b.abstained && b.text.contains("9:30am"), "{b:?}");
    // Unanswerable: nobody has stated a room for a standup.
    let b = ask(&m, "the standup with Alex is in", "Alex Rivera", gate(0.5));
    assert!(
        b.abstained && b.text.is_empty() && b.lines.is_empty(),
        "{b:?}"
    );
    // Sam asks: π(Chen) ≈ 0.89, so a stricter τ rejects the correct fact.
    let b = ask(&m, "the standup with Alex is at", "Sam Okafor", gate(0.5));
    assert!(!b.abstained && b.text.contains("11am"));
    let b = ask(&m, "the standup with Alex is at", "Sam Okafor", gate(0.95));
    assert!(b.abstained);
    // Ungated, the unanswerable request is filled with someone's time.
    let b = ask(
        &m,
        "the standup with Alex is in",
        "Alex Rivera",
        Rules::NONE,
    );
    assert!(!b.abstained && b.text.contains("9:30am"));
}

#[test]
fn margin_gate_needs_a_clear_winner_sharing_the_request_terms() {
    let m = store();
    let margin = |tau| rules(Identity::None, Abstain::Margin(tau));
    // Answerable, and the top fact (Rivera's standup: standup, alex, rivera)
    // is far ahead of the budget fact that shares only "alex".
    let q = "the standup with Alex Rivera is at";
    let plain = ask(&m, q, "Alex Rivera", Rules::NONE);
    let mean = plain.lines.iter().map(|l| l.score).sum::<f32>() / plain.lines.len() as f32;
    let ratio = plain.lines[0].score / mean;
    assert!(ratio > 1.0, "{plain:?}");
    let b = ask(&m, q, "Alex Rivera", margin(ratio * 0.99));
    assert!(!b.abstained && b.text.contains("9:30am"), "{b:?}");
    let b = ask(&m, q, "Alex Rivera", margin(ratio * 1.01));
    assert!(b.abstained, "a margin above the top's lead abstains");
    // Unanswerable, the top fact shares one of four content terms (alex).
    let b = ask(
        &m,
        "the dentist appointment with Alex is on monday",
        "Alex Rivera",
        margin(0.0),
    );
    assert!(b.abstained, "{b:?}");
    // Nothing retrieved at all abstains as well.
    let b = ask(&m, "the printer toner", "Alex Rivera", margin(0.0));
    assert!(b.abstained);
}

#[test]
fn rules_round_trip_through_json_and_bad_thresholds_are_errors() {
    let r: Rules =
        serde_json::from_str(r#"{"identity":"posterior","abstain":{"slot":0.5}}"#).unwrap();
    assert_eq!(r, rules(Identity::Posterior, Abstain::Slot(0.5)));
    let r: Rules = serde_json::from_str(r#"{"identity":{"cutoff":0.7}}"#).unwrap();
    assert_eq!(r, rules(Identity::Cutoff(0.7), Abstain::None));
    assert_eq!(serde_json::from_str::<Rules>("{}").unwrap(), Rules::NONE);
    assert!(serde_json::from_str::<Rules>(r#"{"identity":"oracle"}"#).is_err());
    assert!(serde_json::from_str::<Rules>(r#"{"abstain":"slot","x":1}"#).is_err());
    let m = store();
    for bad in [
        rules(Identity::Cutoff(0.0), Abstain::None),
        rules(Identity::Cutoff(1.5), Abstain::None),
        rules(Identity::None, Abstain::Slot(1.1)),
        rules(Identity::None, Abstain::Margin(f32::NAN)),
    ] {
        let req = Request::new("the standup with Alex is at", day(6)).with_rules(bad);
        assert!(m.retrieve(&req).is_err(), "{bad:?}");
    }
}

/// A two-person conversation as a transcript: each turn says who spoke,
/// both speakers are participants.
fn conversation() -> Memory {
    transcript(&[
        "Ana: I adopted a rescue dog named Pepper last week.",
        "Ben: I ran a charity race for the animal shelter on Sunday.",
        "Ben: After the race I realized how much I love running.",
        "Ana: My sister is visiting from Lisbon in June.",
        "Ben: The new bakery downtown sells great sourdough.",
    ])
}

/// Ana and Ben's `turns`, one a day.
fn transcript(turns: &[&str]) -> Memory {
    let mut m = Memory::new(Config {
        merge: MergeMode::Inline,
        ..Config::default()
    })
    .unwrap();
    for (i, text) in turns.iter().enumerate() {
        m.observe(Observation::new(*text, day(i as i64 + 1)).with_participants(["Ana", "Ben"]))
            .unwrap();
    }
    m
}

fn asks(m: &Memory, question: &str, abstain: Abstain) -> bool {
    let request = Request::new(question, day(9))
        .with_participants(["Ana", "Ben"])
        .with_rules(Rules {
            identity: Identity::None,
            abstain,
        });
    pfm::retrieve::retrieve(&m.version(), &request)
        .unwrap()
        .abstained
}

#[test]
fn the_coverage_gate_abstains_when_the_event_is_the_other_speakers() {
    let m = conversation();
    // Ben ran the race; the question gives it to Ana.
    assert!(asks(
        &m,
        "What did Ana realize after her charity race?",
        Abstain::Auto
    ));
    // The same question about Ben is supported.
    assert!(!asks(
        &m,
        "What did Ben realize after his charity race?",
        Abstain::Auto
    ));
    // Without the gate the swapped question gets Ben's race as its answer.
    let block = pfm::retrieve::retrieve(
        &m.version(),
        &Request::new("What did Ana realize after her charity race?", day(9))
            .with_participants(["Ana", "Ben"]),
    )
    .unwrap();
    assert!(
        block.lines[..2].iter().all(|l| l.line.contains("race")),
        "{}",
        block.text
    );
}

#[test]
fn the_coverage_gate_answers_a_paraphrase_and_abstains_on_another_story() {
    let m = conversation();
    // A paraphrase that shares only the rare words still has support.
    assert!(!asks(
        &m,
        "Which dog did Ana take home from the rescue?",
        Abstain::Auto
    ));
    // A question from another conversation: nobody here named Zoe, nothing
    // about a piano.
    assert!(asks(
        &m,
        "When did Zoe start her piano lessons?",
        Abstain::Auto
    ));
    // At coverage 0 only the person rule is left; at 1 every term must be in
    // one fact.
    assert!(!asks(
        &m,
        "Which dog did Ana take home from the rescue?",
        Abstain::Coverage(0.0)
    ));
    assert!(asks(
        &m,
        "Which dog did Ana take home from the rescue?",
        Abstain::Coverage(1.0)
    ));
    assert!(
        Rules {
            identity: Identity::None,
            abstain: Abstain::Coverage(1.5)
        }
        .validate()
        .is_err()
    );
    let auto: Rules = serde_json::from_str(r#"{"abstain": "auto"}"#).unwrap();
    assert_eq!(auto.abstain, Abstain::Auto);
}

#[test]
fn a_reply_about_the_other_speakers_event_is_not_support_for_its_speaker() {
    let m = transcript(&[
        "Ben: I ran a charity race for the animal shelter on Sunday.",
        "Ana: Wow, how was your charity race, Ben? Did you finish it?",
        "Ana: I adopted a rescue dog named Pepper last week.",
    ]);
    // Ana's reply names her (its label) and the race, but it is about Ben's
    // race: the swapped question has no support.
    assert!(asks(
        &m,
        "How did Ana do in her charity race?",
        Abstain::Auto
    ));
    assert!(!asks(
        &m,
        "How did Ben do in his charity race?",
        Abstain::Auto
    ));
    // Ana speaking of herself is about Ana.
    assert!(!asks(&m, "Which dog did Ana adopt?", Abstain::Auto));
}

#[test]
fn an_address_or_a_question_is_not_support_for_whom_it_names() {
    let m = transcript(&[
        "Ana: Thanks, Ben! The shelter was thrilled. I ran a charity race for them on Sunday.",
        "Ben: Did you enjoy the pottery class, Ana? I hear the teacher is great.",
        "Ana: The bakery downtown sells great sourdough.",
    ]);
    // Ben is only addressed in Ana's turn: the race is hers.
    assert!(asks(
        &m,
        "When did Ben run his charity race?",
        Abstain::Auto
    ));
    assert!(!asks(
        &m,
        "When did Ana run her charity race?",
        Abstain::Auto
    ));
    // Ben's question about a pottery class tells nothing of anyone's class.
    assert!(asks(
        &m,
        "What did Ana make in her pottery class?",
        Abstain::Auto
    ));
}

#[test]
fn a_block_that_says_far_more_of_another_person_is_not_support() {
    let m = transcript(&[
        "Ana: I painted a sunset over the lake for the art show, and it sold on opening night.",
        "Ben: I went to a show downtown.",
        "Ben: My brother plays bass in a jazz band.",
    ]);
    let support = |question: &str| {
        let v = m.version();
        let request = Request::new(question, day(9))
            .with_participants(["Ana", "Ben"])
            .with_rules(Rules {
                identity: Identity::None,
                abstain: Abstain::None,
            });
        let block = pfm::retrieve::retrieve(&v, &request).unwrap();
        let lines: Vec<Scored> = block
            .lines
            .iter()
            .map(|l| Scored {
                fact: l.fact,
                score: l.score,
                body: Arc::clone(&v.timeline.get(l.fact).unwrap().body),
            })
            .collect();
        let resolution =
            Resolution::of(&v, question, &["Ana".to_owned(), "Ben".to_owned()], day(9));
        gate::support(&v, question, &lines, &resolution).unwrap()
    };
    // Ben's show covers a little of the question; Ana's painting all of it:
    // the threshold alone would pass, the swap margin does not.
    let swapped = support("What did Ben paint for the art show?");
    let named = swapped.named.unwrap();
    assert!(named >= f64::from(gate::DEFAULT_COVERAGE), "{swapped:?}");
    assert!(swapped.passes(f64::from(gate::DEFAULT_COVERAGE), f64::INFINITY));
    assert!(named + gate::SWAP_MARGIN < swapped.other, "{swapped:?}");
    assert!(asks(
        &m,
        "What did Ben paint for the art show?",
        Abstain::Auto
    ));
    // Asked of the painter, it passes; so does a question Ben's own words
    // answer as well as anyone's.
    assert!(!asks(
        &m,
        "What did Ana paint for the art show?",
        Abstain::Auto
    ));
    assert!(!asks(
        &m,
        "What instrument does Ben's brother play?",
        Abstain::Auto
    ));
}

#[test]
fn the_coverage_gate_abstains_on_a_person_the_store_never_heard_of() {
    let m = conversation();
    // Another conversation's question, in this one's words: everything but
    // the person matches Ben's race, even at coverage 0.
    for abstain in [Abstain::Auto, Abstain::Coverage(0.0)] {
        assert!(
            asks(
                &m,
                "What did Carla realize after the charity race?",
                abstain
            ),
            "{abstain:?}"
        );
    }
    assert!(!asks(
        &m,
        "What did Ben realize after the charity race?",
        Abstain::Auto
    ));
    // A capitalized word the store has seen is no stranger ("Lisbon"), nor
    // is a sentence's first word.
    assert!(!asks(&m, "Who is visiting Ana from Lisbon?", Abstain::Auto));
    assert!(!asks(&m, "Sourdough: where is it sold?", Abstain::Auto));
    let v = m.version();
    assert_eq!(
        pfm::rules::gate::unseen_names(&v, "Did Ana see Carla and Dmitri in Lisbon? Sunday."),
        ["carla", "dmitri"]
    );
}

#[test]
fn the_company_rule_tells_two_johns_apart_by_who_they_talked_to() {
    let mut m = Memory::new(Config {
        merge: MergeMode::Inline,
        ..Config::default()
    })
    .unwrap();
    for (text, company, d) in [
        ("John: My dog is called Rex.", ["John", "Maria"], 1),
        ("John: My dog is called Biscuit.", ["John", "Tim"], 2),
        (
            "Maria: Tim's sister adopted a dog too.",
            ["John", "Maria"],
            3,
        ),
    ] {
        m.observe(Observation::new(text, day(d)).with_participants(company))
            .unwrap();
    }
    let ask = |identity| {
        pfm::retrieve::retrieve(
            &m.version(),
            &Request::new("what is John's dog called", day(9))
                .with_participants(["John", "Maria"])
                .with_rules(rules(identity, Abstain::None)),
        )
        .unwrap()
        .text
    };
    // Any shared participant is not enough: both Johns share "John".
    let filter = ask(Identity::ParticipantFilter);
    assert!(
        filter.contains("Rex") && filter.contains("Biscuit"),
        "{filter}"
    );
    // The whole company is: Maria's John, and a third-party fact said to them.
    let company = ask(Identity::Company);
    assert!(
        company.contains("Rex") && !company.contains("Biscuit"),
        "{company}"
    );
    assert!(company.contains("Tim's sister"), "{company}");
    let json: Rules = serde_json::from_str(r#"{"identity": "company"}"#).unwrap();
    assert_eq!(json.identity, Identity::Company);
}
