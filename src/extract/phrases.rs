//! Phrase tables matched as token sequences: the shared machinery of the
//! cue table (`cues`) and the speculation gate's table (`gate`). A phrase is
//! normalized and tokenized like the text it is matched against (so "I'm"
//! and "i'm" are one token either way); `…` in a phrase is a gap: its parts
//! must occur in order, each after the previous.
//!
//! Two more notations keep the tables short and general:
//! - `word+` matches the word and its regular inflections (`plan+`: plan,
//!   plans, planned, planning; `hope+`: hopes, hoped, hoping; `try+`:
//!   tries, tried), never a longer word (`plan+` is not "planet");
//! - `<class>` matches any word of a closed class ([`Class`]): `<time>`
//!   (a day, month or season), `<unit>` (day, week, … and plurals), `<n>`
//!   (a count: digits, "a", "two", "few"), `<say>` (a verb of saying),
//!   `<det>` (a determiner), `<prep>` (a preposition of time), `<ll>` (a
//!   contracted "will": "i'll", "we'll"), `<value>` (the statement's
//!   value, which the gate masks; see [`VALUE`]) and a verb of changing or
//!   choosing in one form: `<change>` ("switch", "move", "join", …),
//!   `<changing>` ("switching") or `<changes>` ("switches"; the verbs of
//!   changing only, not of choosing or going, whose present is habitual:
//!   "she goes to Lincoln").

use crate::text;

/// The token that stands for the statement's value once the gate masks it
/// (no normalized text contains it: normalization keeps no control
/// characters inside a token).
pub const VALUE: &str = "\u{1}";

/// The days of the week.
pub(super) const WEEKDAYS: &[&str] = &[
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// A closed word class a phrase may name as `<class>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A weekday, month or season.
    Time,
    /// A unit of time.
    Unit,
    /// A count.
    Count,
    /// A verb of saying.
    Say,
    /// A determiner or possessive.
    Det,
    /// A preposition that can take a month.
    Prep,
    /// A contracted "will".
    Will,
    /// The masked value.
    Value,
    /// A verb of changing or choosing, base form.
    Change,
    /// A verb of changing or choosing, `-ing` form.
    Changing,
    /// A verb of changing, third person present.
    Changes,
}

/// Verbs of changing a value (their present tense, "my gym changes to X",
/// is a scheduled change).
const CHANGE: &[&str] = &[
    "switch", "change", "move", "transfer", "relocate", "swap", "shift", "become", "turn",
];

/// Verbs of choosing or taking up a value (their present is habitual).
const CHOOSE: &[&str] = &["get", "go", "join", "pick", "choose", "sign", "start"];

impl Class {
    fn named(name: &str) -> Option<Class> {
        Some(match name {
            "time" => Class::Time,
            "unit" => Class::Unit,
            "n" => Class::Count,
            "say" => Class::Say,
            "det" => Class::Det,
            "prep" => Class::Prep,
            "ll" => Class::Will,
            "value" => Class::Value,
            "change" => Class::Change,
            "changing" => Class::Changing,
            "changes" => Class::Changes,
            _ => return None,
        })
    }

    fn holds(self, tok: &str) -> bool {
        const TIME: &[&str] = &["spring", "summer", "fall", "autumn", "winter", "weekend"];
        const UNIT: &[&str] = &["day", "week", "month", "year", "weekend", "quarter"];
        const COUNT: &[&str] = &[
            "a", "an", "one", "two", "three", "four", "five", "six", "few", "couple", "several",
        ];
        const SAY: &[&str] = &[
            "say", "mention", "add", "note", "admit", "tell", "remind", "confess", "repeat",
            "point", "stress", "warn",
        ];
        const DET: &[&str] = &[
            "the", "a", "an", "my", "our", "his", "her", "their", "your", "this", "that",
        ];
        const PREP: &[&str] = &[
            "in", "by", "of", "until", "till", "since", "from", "through", "early", "late", "mid",
            "next", "last", "this", "every",
        ];
        match self {
            Class::Time => WEEKDAYS.contains(&tok) || TIME.contains(&tok) || text::is_month(tok),
            Class::Unit => UNIT
                .iter()
                .any(|u| tok == *u || tok.strip_suffix('s') == Some(u)),
            Class::Count => COUNT.contains(&tok) || tok.bytes().all(|b| b.is_ascii_digit()),
            Class::Say => SAY.contains(&tok),
            Class::Det => DET.contains(&tok),
            Class::Prep => PREP.contains(&tok),
            Class::Will => tok.len() > 3 && tok.ends_with("'ll"),
            Class::Value => tok == VALUE,
            Class::Change => CHANGE.contains(&tok) || CHOOSE.contains(&tok),
            Class::Changing => {
                tok.ends_with("ing") && CHANGE.iter().chain(CHOOSE).any(|v| inflects(tok, v))
            }
            Class::Changes => tok.strip_suffix('s').is_some_and(|base| {
                CHANGE
                    .iter()
                    .any(|v| base == *v || base.strip_suffix('e') == Some(v))
            }),
        }
    }
}

/// Whether `tok` is a determiner or possessive (`<det>`).
pub fn is_determiner(tok: &str) -> bool {
    Class::Det.holds(tok)
}

/// One word of a phrase.
#[derive(Clone, Debug)]
pub(super) enum Pattern {
    /// This word exactly.
    Word(String),
    /// This word or a regular inflection of it.
    Inflected(String),
    /// Any word of the class.
    Class(Class),
}

impl Pattern {
    /// One word of a table (`word`, `word+` or `<class>`) as the patterns
    /// of its tokens.
    pub(super) fn compile(word: &str) -> Vec<Pattern> {
        if let Some(class) = word
            .strip_prefix('<')
            .and_then(|w| w.strip_suffix('>'))
            .and_then(Class::named)
        {
            return vec![Pattern::Class(class)];
        }
        let (stem, inflected) = match word.strip_suffix('+') {
            Some(stem) => (stem, true),
            None => (word, false),
        };
        let norm = text::normalize(stem);
        text::tokens(&norm)
            .map(|t| match inflected {
                true => Pattern::Inflected(t.to_owned()),
                false => Pattern::Word(t.to_owned()),
            })
            .collect()
    }

    /// Whether `tok` (normalized) is this word.
    pub(super) fn matches(&self, tok: &str) -> bool {
        match self {
            Pattern::Word(w) => tok == w,
            Pattern::Inflected(stem) => inflects(tok, stem),
            Pattern::Class(c) => c.holds(tok),
        }
    }
}

/// Whether `tok` is `stem` or one of its regular inflections (-s, -es,
/// -ed, -d, -ing, with a doubled final consonant, a dropped final `e` or a
/// final `y` turned `i`).
fn inflects(tok: &str, stem: &str) -> bool {
    // Every inflection starts with the stem's first letter: most tokens
    // are rejected here, before any prefix comparison.
    if tok.as_bytes().first() != stem.as_bytes().first() {
        return false;
    }
    let Some(rest) = tok.strip_prefix(stem) else {
        let cut = |c: char| stem.strip_suffix(c);
        return match (cut('e'), cut('y')) {
            (Some(base), _) => tok.strip_prefix(base).is_some_and(|r| r == "ing"),
            (_, Some(base)) => tok
                .strip_prefix(base)
                .is_some_and(|r| r == "ied" || r == "ies"),
            _ => false,
        };
    };
    const SUFFIXES: &[&str] = &["", "s", "es", "ed", "d", "ing"];
    if SUFFIXES.contains(&rest) {
        return true;
    }
    // A doubled final consonant: plan → planned, planning.
    let last = stem.chars().last();
    let mut r = rest.chars();
    r.next() == last && matches!(r.as_str(), "ed" | "ing")
}

/// The first two bytes of every token that [`inflects`] to `stem`, if
/// known: an inflection starts with the stem, or with the stem less the
/// final `e` or `y` it drops (`saving`, `tried`).
fn inflection_prefix(stem: &str) -> Option<[u8; 2]> {
    let kept = stem
        .strip_suffix('e')
        .or_else(|| stem.strip_suffix('y'))
        .unwrap_or(stem);
    token_prefix(kept)
}

/// A token's first two bytes, if it has two: the key
/// [`Phrase::required_prefix`] is given in, and a prefilter looks a
/// statement's tokens up by.
pub fn token_prefix(token: &str) -> Option<[u8; 2]> {
    token.as_bytes().get(..2)?.try_into().ok()
}

/// A compiled phrase: its parts (split at gaps), each a token sequence.
#[derive(Clone, Debug)]
pub struct Phrase(Vec<Vec<Pattern>>);

impl Phrase {
    /// Compiles a phrase of a table.
    pub fn compile(phrase: &str) -> Phrase {
        Phrase(
            phrase
                .split('…')
                .map(|part| part.split_whitespace().flat_map(Pattern::compile).collect())
                .collect(),
        )
    }

    /// Where the phrase first occurs in `toks` (normalized tokens): the
    /// token range from its first word to its last.
    pub fn find(&self, toks: &[&str]) -> Option<(usize, usize)> {
        let mut from = 0;
        let mut start = None;
        for part in &self.0 {
            let len = part.len().max(1);
            let found = toks
                .get(from..)?
                .windows(len)
                .position(|w| w.iter().zip(part).all(|(t, p)| p.matches(t)))?;
            start.get_or_insert(from + found);
            from += found + part.len();
        }
        Some((start.unwrap_or(0), from))
    }

    /// A word every occurrence of the phrase contains (its longest plain
    /// word), if it has one: a text without it cannot hold the phrase.
    pub fn required_word(&self) -> Option<&str> {
        self.0
            .iter()
            .flatten()
            .filter_map(|p| match p {
                Pattern::Word(w) => Some(w.as_str()),
                _ => None,
            })
            .max_by_key(|w| w.len())
    }

    /// The first two bytes ([`token_prefix`]) of a token every occurrence
    /// of the phrase contains, if it has an inflected word whose
    /// inflections all start with two known bytes ([`inflection_prefix`]):
    /// a text with no token starting so cannot hold the phrase.
    pub fn required_prefix(&self) -> Option<[u8; 2]> {
        self.0.iter().flatten().find_map(|p| match p {
            Pattern::Inflected(stem) => inflection_prefix(stem),
            _ => None,
        })
    }

    /// Whether the phrase occurs in `toks` (normalized tokens).
    pub fn matches(&self, toks: &[&str]) -> bool {
        self.find(toks).is_some()
    }
}

/// A compiled table: each row's label and phrases, in the table's order.
pub type Table<T> = Vec<(T, Vec<Phrase>)>;

/// Compiles a table's rows.
pub fn compile<T>(rows: impl Iterator<Item = (T, &'static [&'static str])>) -> Table<T> {
    rows.map(|(label, phrases)| (label, phrases.iter().map(|p| Phrase::compile(p)).collect()))
        .collect()
}

/// The label of the first row any of whose phrases occurs in `toks`.
pub fn first_match<T: Copy>(rows: &[(T, Vec<Phrase>)], toks: &[&str]) -> Option<T> {
    rows.iter()
        .find(|(_, phrases)| phrases.iter().any(|p| p.matches(toks)))
        .map(|(label, _)| *label)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(phrase: &str, text: &str) -> Option<(usize, usize)> {
        let norm = text::normalize(text);
        let toks: Vec<&str> = text::tokens(&norm).collect();
        Phrase::compile(phrase).find(&toks)
    }

    #[test]
    fn inflections_match_and_longer_words_do_not() {
        for tok in ["plan", "plans", "planned", "planning"] {
            assert!(inflects(tok, "plan"), "{tok}");
        }
        for tok in ["hopes", "hoped", "hoping"] {
            assert!(inflects(tok, "hope"), "{tok}");
        }
        assert!(inflects("tried", "try") && inflects("tries", "try"));
        for tok in ["planet", "plane", "hop", "trying"] {
            assert!(!inflects(tok, "plan") && !inflects(tok, "hope"), "{tok}");
        }
        assert!(inflects("trying", "try"));
    }

    #[test]
    fn classes_gaps_and_spans() {
        assert_eq!(found("in <n> <unit>", "Moving in two weeks."), Some((1, 4)));
        assert_eq!(found("next <unit>", "next Months"), Some((0, 2)));
        assert_eq!(found("by <time>", "done by spring"), Some((1, 3)));
        assert_eq!(found("<ll>", "we'll see"), Some((0, 1)));
        assert_eq!(found("<ll>", "ill"), None);
        assert_eq!(found("if … then", "if it works then we go"), Some((0, 4)));
        assert_eq!(found("consider+", "I considered it"), Some((1, 2)));
        assert_eq!(found("may <n>", "due May 3"), Some((1, 3)));
        assert_eq!(found("going to <det>", "going to my gym"), Some((0, 3)));
        assert_eq!(found("to <change>", "to switch gyms"), Some((0, 2)));
        assert_eq!(found("to <change>", "to switches"), None);
        for tok in ["switching", "moving", "getting", "going", "becoming"] {
            assert_eq!(found("<changing>", tok), Some((0, 1)), "{tok}");
        }
        assert_eq!(found("<changing>", "living"), None);
        for tok in ["switches", "changes", "moves", "becomes", "turns"] {
            assert_eq!(found("<changes>", tok), Some((0, 1)), "{tok}");
        }
        for tok in ["goes", "joins", "change", "switched", "becomeses"] {
            assert_eq!(found("<changes>", tok), None, "{tok}");
        }
    }
}
