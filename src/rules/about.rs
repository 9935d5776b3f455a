//! Whom each sentence of a turn is about, for the coverage gate.
//!
//! A transcript labels a turn with its speaker ("Ana: …"), but the label is
//! not what the turn is about: "Ana: how was your race, Ben?" is about
//! Ben's race, and in "Ana: Thanks, Ben! I ran a race." Ben is only
//! addressed. A question that attributes Ben's race to Ana must find no
//! support in that turn, so the gate reads each sentence for the people it
//! is about:
//!
//! 1. the people its words name, except a name in direct address (set off
//!    by a comma, a sentence edge or a greeting, and closed by punctuation:
//!    "Thanks, Ben!", "Hey Ben,");
//! 2. the speaker when it speaks in the first person, the others present
//!    when it speaks in the second ("thank you" is a greeting, not a
//!    reference);
//! 3. a sentence with none of those is about whom it addresses ("That race
//!    sounds great, Ben!"); with no address either, about the people of the
//!    sentence before it in the turn (a third-person continuation: "I ran a
//!    race. It was hard."), or of the first one after it that has any; a
//!    turn that refers to no one is about its speaker (a remark is the
//!    speaker's own unless it says otherwise).
//!
//! A question asserts nothing ("How was your race?" tells nothing of
//! anyone's race), so questions are left out: their words support no one.
//!
//! On LoCoMo these rules moved the coverage gate's abstention on adversarial
//! questions (the event is the other speaker's) from 0.135 to 0.417 at
//! threshold 0.15, with 0.042 on answerable ones; reading the statements
//! about anyone else as well (the gate's swap margin) takes the default to
//! 0.507 and 0.046 (`eval/RESULTS.md`).
//!
//! The pronoun and greeting tables are English, as the stop words are.

use crate::fact::{FactBody, name_key};
use crate::text;

/// One sentence of a turn labelled with its speaker.
#[derive(Clone, Debug, PartialEq)]
pub struct Sentence {
    /// Name keys of the people it is about.
    pub people: Vec<String>,
    /// Its normalized text ([`text::normalize`]).
    pub text: String,
}

/// Words in which a speaker speaks of themselves.
const FIRST_PERSON: &[&str] = &[
    "i", "i'm", "i've", "i'd", "i'll", "me", "my", "mine", "myself", "we", "we're", "we've", "us",
    "our", "ours",
];

/// Words in which a speaker speaks of whom they address.
const SECOND_PERSON: &[&str] = &[
    "you", "you're", "you've", "you'd", "your", "yours", "yourself",
];

/// Words after which a name is an address ("Hey Ben!", "Thank you Ben.").
const GREETINGS: &[&str] = &[
    "hey",
    "hi",
    "hello",
    "thanks",
    "thank",
    "you",
    "wow",
    "yes",
    "yeah",
    "yep",
    "yup",
    "oh",
    "congrats",
    "congratulations",
    "aw",
    "aww",
    "ok",
    "okay",
    "sure",
    "bye",
    "dear",
    "well",
    "sorry",
    "welcome",
    "morning",
    "night",
    "go",
    "great",
    "good",
    "nice",
    "cool",
    "awesome",
];

/// One token of a sentence, with what surrounds its word.
struct Word {
    token: String,
    /// First token of a word that starts the sentence, follows a comma or
    /// follows a greeting.
    opens: bool,
    /// Last token of a word closed by punctuation or ending the sentence.
    closes: bool,
}

/// The statements of a turn labelled with its speaker (the label one of
/// the fact's participants), each with whom it is about (module docs);
/// `None` for an unlabelled fact.
pub fn sentences(body: &FactBody) -> Option<Vec<Sentence>> {
    let (label, said) = body.text().split_once(':')?;
    let speaker = name_key(label);
    let present: Vec<String> = body.participants().iter().map(|p| name_key(p)).collect();
    if speaker.is_empty() || !present.contains(&speaker) {
        return None;
    }
    let others: Vec<String> = present.iter().filter(|p| **p != speaker).cloned().collect();
    let names: Vec<(String, Vec<String>)> = present
        .iter()
        .cloned()
        .chain(body.entities().iter().map(|e| e.to_string()))
        .map(|n| {
            let run = text::normalized_tokens(&n);
            (n, run)
        })
        .filter(|(_, run)| !run.is_empty())
        .collect();
    // Per statement: whom it refers to and whom it only addresses. A
    // question asserts nothing, so it is left out.
    let mut read: Vec<(Vec<String>, Vec<String>, &str)> = Vec::new();
    for sentence in split_sentences(said) {
        if sentence.trim_end().ends_with('?') {
            continue;
        }
        let words = words_of(sentence);
        let mut people: Vec<String> = Vec::new();
        let mut called: Vec<String> = Vec::new();
        for (name, run) in &names {
            let (referred, addressed_only) = occurrences(&words, run);
            if referred {
                push_new(&mut people, name);
            } else if addressed_only {
                push_new(&mut called, name);
            }
        }
        if words
            .iter()
            .any(|w| FIRST_PERSON.contains(&w.token.as_str()))
        {
            push_new(&mut people, &speaker);
        }
        let second = words.iter().enumerate().any(|(i, w)| {
            SECOND_PERSON.contains(&w.token.as_str())
                && !(w.token == "you" && i > 0 && words[i - 1].token == "thank")
        });
        if second {
            for o in &others {
                push_new(&mut people, o);
            }
        }
        read.push((people, called, sentence));
    }
    let referring: Vec<usize> = (0..read.len()).filter(|&i| !read[i].0.is_empty()).collect();
    let mut out = Vec::with_capacity(read.len());
    for (i, (people, called, sentence)) in read.iter().enumerate() {
        let people = if !people.is_empty() {
            people.clone()
        } else if !called.is_empty() {
            called.clone()
        } else {
            let before = referring.iter().rev().find(|&&j| j < i);
            match before.or(referring.first()) {
                Some(&j) => read[j].0.clone(),
                None => vec![speaker.clone()],
            }
        };
        out.push(Sentence {
            people,
            text: text::normalize(sentence),
        });
    }
    Some(out)
}

/// Whether `run` occurs in `words` other than in direct address, and
/// whether it occurs only in address.
fn occurrences(words: &[Word], run: &[String]) -> (bool, bool) {
    let mut addressed = false;
    for (i, window) in words.windows(run.len()).enumerate() {
        let matches = window
            .iter()
            .zip(run)
            .all(|(w, r)| w.token == *r || w.token.strip_suffix("'s") == Some(r));
        if !matches {
            continue;
        }
        let last = &words[i + run.len() - 1];
        if words[i].opens && last.closes && !last.token.ends_with("'s") {
            addressed = true;
        } else {
            return (true, false);
        }
    }
    // A short form in address ("Thanks, Mel!" to Melanie).
    let short = |w: &Word| {
        w.opens && w.closes && w.token.len() >= 3 && run[0].starts_with(w.token.as_str())
    };
    (false, addressed || words.iter().any(short))
}

/// The tokens of a sentence, each with its surroundings (see [`Word`]).
fn words_of(sentence: &str) -> Vec<Word> {
    let raw: Vec<&str> = sentence.split_whitespace().collect();
    let mut out: Vec<Word> = Vec::new();
    let mut after_comma = true;
    for (j, w) in raw.iter().enumerate() {
        let tokens = text::normalized_tokens(w);
        let closed = j + 1 == raw.len() || w.ends_with([',', '!', '?', '.', ';', ':', '-', '—']);
        let after_greeting = out
            .last()
            .is_some_and(|p: &Word| GREETINGS.contains(&p.token.as_str()));
        let n = tokens.len();
        for (t, token) in tokens.into_iter().enumerate() {
            out.push(Word {
                token,
                opens: t == 0 && (after_comma || after_greeting),
                closes: t + 1 == n && closed,
            });
        }
        after_comma = w.ends_with(',');
    }
    out
}

/// Splits a turn after each word ending in `.`, `!` or `?` (closing quotes
/// and brackets aside) when the next word does not start in lower case, so
/// "9 a.m. tomorrow" stays one sentence.
fn split_sentences(said: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut words = said
        .split_whitespace()
        .map(|w| (w.as_ptr() as usize - said.as_ptr() as usize, w))
        .peekable();
    while let Some((at, w)) = words.next() {
        let ends = w
            .trim_end_matches(['"', '\'', ')', ']', '\u{201d}', '\u{2019}'])
            .ends_with(['.', '!', '?']);
        let next_lower = words
            .peek()
            .and_then(|(_, n)| n.chars().find(|c| c.is_alphabetic()))
            .is_some_and(char::is_lowercase);
        if ends && !next_lower {
            let end = at + w.len();
            out.push(&said[start..end]);
            start = end;
        }
    }
    if !said[start..].trim().is_empty() {
        out.push(&said[start..]);
    }
    out
}

fn push_new(list: &mut Vec<String>, name: &str) {
    if !list.iter().any(|n| n == name) {
        list.push(name.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::{BodyParts, FactId, FactNames, Name};
    use crate::time::WallTime;

    /// Whom each statement of `text`, said between Ana and Ben, is about.
    fn about(text: &str) -> Vec<Vec<String>> {
        about_among(text, &["Ana", "Ben"])
    }

    /// A fact of `text` said among `present`.
    fn said_among(text: &str, present: &[&str]) -> FactBody {
        FactBody::new(
            FactId(1),
            FactNames::new([], present.iter().map(|p| Name::from(*p))),
            BodyParts::new(text, WallTime::parse("2025-06-11T15:00:00Z").unwrap()),
        )
    }

    fn about_among(text: &str, present: &[&str]) -> Vec<Vec<String>> {
        sentences(&said_among(text, present))
            .unwrap()
            .into_iter()
            .map(|s| s.people)
            .collect()
    }

    fn people(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn an_address_is_not_a_reference() {
        let ana = people(&["ana"]);
        let ben = people(&["ben"]);
        // "Thanks, Ben!" only addresses Ben; the race is Ana's.
        assert_eq!(
            about("Ana: Thanks, Ben! I ran a race."),
            vec![ben.clone(), ana.clone()]
        );
        assert_eq!(about("Ana: Hey Ben, I ran a race."), vec![ana.clone()]);
        // A sentence that only addresses is about whom it addresses, by a
        // short form too; an unknown name is no one's.
        assert_eq!(about("Ana: Love that race, Ben!"), vec![ben.clone()]);
        assert_eq!(
            about_among("Ana: Love that race, Bene!", &["Ana", "Benedict"]),
            vec![people(&["benedict"])]
        );
        assert_eq!(about("Ana: Love that race, Benny!"), vec![ana.clone()]);
        // Named as a subject or a possessive, Ben is referred to.
        assert_eq!(about("Ana: Ben's race was long."), vec![ben.clone()]);
        assert_eq!(
            about("Ana: I saw Ben at the race."),
            vec![people(&["ben", "ana"])]
        );
    }

    #[test]
    fn pronouns_continuations_and_questions() {
        let ana = people(&["ana"]);
        let ben = people(&["ben"]);
        // Second person is the others present; "thank you" is no reference.
        assert_eq!(about("Ana: Your race was long."), vec![ben.clone()]);
        assert_eq!(
            about("Ana: Thank you. The race was long."),
            vec![ana.clone(), ana.clone()]
        );
        // A third-person sentence continues the one before it, or leads
        // into the first after it that refers to someone.
        assert_eq!(
            about("Ben: I ran a race. It was long."),
            vec![ben.clone(), ben.clone()]
        );
        assert_eq!(
            about("Ana: What a day. Your race was long."),
            vec![ben.clone(), ben.clone()]
        );
        // With no reference at all, the speaker's own remark.
        assert_eq!(about("Ben: The race was long."), vec![ben.clone()]);
        // Questions assert nothing and are left out; "9 a.m. tomorrow" is
        // one sentence.
        assert_eq!(
            about("Ana: How was your race? I ran one at 9 a.m. today."),
            vec![ana.clone()]
        );
        assert_eq!(about("Ana: How was your race?"), Vec::<Vec<String>>::new());
    }

    #[test]
    fn unlabelled_facts_have_no_statements() {
        let body = said_among("Carol: the race was long", &["Ana"]);
        assert_eq!(sentences(&body), None);
    }
}
