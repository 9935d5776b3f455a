//! The speculation gate's classifier (AgentMemGate, as rules): what a keyed
//! statement says about *when* its value holds — a plan or possibility not
//! yet true (`speculation`, with a graded hedge strength), a change that
//! happened (`completed`), a fix to a wrong record (`correction`), a plan
//! given up (`abandonment`), or none of these (`other`).
//!
//! # How it reads a statement
//! The gate reads the statement's *modality about its value*, not a list of
//! whole sentences: one declarative table of cues ([`GATE`]), each with a
//! [`Role`], matched as token sequences (`phrases`: `…` is a gap, `word+`
//! any regular inflection, `<class>` a closed word class), and a few
//! structural rules over where each cue stands relative to the value:
//! - **scope**: only the sentence that holds the value is read, with the
//!   value itself masked (so "Planet Fitness" is no plan, and a cancelled
//!   meeting's value "cancelled" is no abandonment); its *clause* is the
//!   comma-, colon- or semicolon-bounded stretch around it;
//! - **asides** are masked first: a modal that introduces speech ("I'd
//!   say", "I should mention"), an answer ("that would be"), "going to" a
//!   place, "May" the month (before a number, a preposition or a
//!   determiner, or at the end of its clause);
//! - a **negation** before the value in its clause denies the value
//!   ("I'm not switching to X after all", "X didn't work out"): the
//!   statement never commits it (an abandonment); a negated hedge ("not
//!   sure") is a hedge, not a denial;
//! - a **condition** ("if", "in case", "whether") makes a plan only when the
//!   value lies in its clause after it ("… if my gym became X"), never in a
//!   relevance aside ("If it matters, my gym is X"); so does a change not
//!   yet made, an infinitive or progressive of a verb of changing or
//!   choosing ("determined to get it changed to X", "my next step is
//!   switching to X"), but not one of "used to", "had to", "managed to";
//! - a verb of changing in the **present tense** before the value ("come
//!   April, my gym changes to X") is a scheduled change, a future: like
//!   "will", it overrides a happened change in the value's clause;
//! - a **question** (the value's sentence ends in `?`) is a bare possibility;
//! - **without the value** (a statement that names its cell but no value)
//!   the whole statement is read, and the rules that need to know what a
//!   cue is about — negation, condition, question — do not apply: only
//!   the table's phrases do ("the Seattle move fell through");
//! - a change that **happened** beyond doubt ("finally", "went through",
//!   "since", "ago") wins over the hedges that led to it ("I was planning to
//!   move and finally did"), unless the value's clause has a future
//!   auxiliary ("I'm finally going to move");
//! - the **vaguest** hedge names the strength: 5 (a bare possibility:
//!   "might", "could", a question, a condition) to 1 (a firm plan: "will",
//!   "scheduled to", a future time: "next week", "in two weeks", "by
//!   spring").
//!
//! Checked in this order: corrections by contrast ("not X but Y"),
//! abandonments, negated hedges, negations, happened changes, hedges,
//! corrections, reported changes ("switched", "now"), else `other`.
//!
//! The table was written from the study's template families A to D and
//! from synonym sets of their cues; family E was written before the rows
//! that D's misses shaped and is the held-out measure (`eval/README.md`). What the ledger does with each
//! kind is in `ledger/plans.rs`: a speculation is staged as a pending
//! version and never becomes current by itself; an abandonment never
//! commits the value it names.

use std::sync::LazyLock;

use rustc_hash::FxHashMap;

use super::phrases::{self, Phrase, VALUE};
use crate::fact::Kind;
use crate::text;

/// What a cue of the table does (see the module docs for the order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Masked before anything else: speech frames, answers, the listener's
    /// wondering ("if you were wondering"), "going to" a place, "May" the
    /// month.
    Aside,
    /// "Not X but Y": a correction.
    Contrast,
    /// A plan given up.
    Abandon,
    /// A hedge that holds a negation ("not sure"): masked from the negation
    /// rule, a hedge of its strength in the value's clause.
    NegatedHedge,
    /// A negation: before the value, in its clause, it denies the value.
    Negation,
    /// A future auxiliary: a hedge of its strength that also overrides
    /// [`Role::Done`] in the value's clause.
    Future,
    /// A change that happened beyond doubt.
    Done,
    /// A hedge of its strength, anywhere in the value's sentence.
    Hedge,
    /// A hedge of its strength only when it leads the value in the value's
    /// clause: a condition ("if my gym became X"), or a change not yet
    /// made, as an infinitive or a progressive ("to switch to X", "is
    /// switching to X"; after the value, "I moved to X to start over", it
    /// is a purpose, not a plan).
    Leading,
    /// A fix to a wrong record.
    Correction,
    /// A change reported as done or now true (weaker than a hedge).
    Changed,
}

/// One row of the gate's table.
#[derive(Debug)]
pub struct GateRule {
    /// What the row's cues do.
    pub role: Role,
    /// For a hedge, its strength: 1 (a firm plan) to 5 (a bare
    /// possibility); 0 otherwise.
    pub strength: u8,
    /// Phrases (see the module docs for the notation).
    pub phrases: &'static [&'static str],
}

const fn row(role: Role, strength: u8, phrases: &'static [&'static str]) -> GateRule {
    GateRule {
        role,
        strength,
        phrases,
    }
}

/// The gate's table.
pub static GATE: &[GateRule] = &[
    row(
        Role::Aside,
        0,
        &[
            "i'd <say>",
            "i would <say>",
            "i'll <say>",
            "i will <say>",
            "i should <say>",
            "i must <say>",
            "i can <say>",
            "let me <say>",
            "that would be",
            "that'd be",
            "you were wondering",
            "you're wondering",
            "you wonder+",
            "used to",
            "had to",
            "managed to",
            "able to",
            "going to <det>",
            "going to <value>",
            "may <n>",
            "may <prep>",
            "may <det>",
            "may and",
            "may or",
        ],
    ),
    row(
        Role::Contrast,
        0,
        &[
            "not … but <value>",
            "not … it's <value>",
            "not … it is <value>",
        ],
    ),
    row(
        Role::Abandon,
        0,
        &[
            "decided not to",
            "decide+ against",
            "rule+ out",
            "ruled out",
            "call+ off",
            "called off",
            "scrap+",
            "cancel+",
            "nix+",
            "ditch+",
            "shelve+",
            "drop+",
            "pass+ on",
            "give+ up",
            "gave up",
            "given up",
            "giving up",
            "back+ out",
            "pull+ out",
            "walk+ away",
            "fell through",
            "fall+ through",
            "collaps+",
            "no-go",
            "mov+ on from <value>",
            "moved on from <value>",
            "let <det> … go",
            "let it go",
            "chang+ my mind",
            "changed my mind",
            "never mind",
            "forget about",
            "forget it",
            "abandon+",
            "not worth it",
            "stay+ … after all",
            "keep+ … after all",
            "kept … after all",
            "stick+ with",
            "is off",
            "off the table",
            "no longer planning",
            "not happening",
            "isn't happening",
        ],
    ),
    row(
        Role::NegatedHedge,
        5,
        &[
            "not sure",
            "not certain",
            "don't know",
            "do not know",
            "can't rule",
            "cannot rule",
        ],
    ),
    row(Role::NegatedHedge, 4, &["can't decide", "cannot decide"]),
    row(
        Role::NegatedHedge,
        3,
        &[
            "can't wait",
            "cannot wait",
            "wouldn't mind",
            "would not mind",
        ],
    ),
    row(
        Role::Negation,
        0,
        &[
            "not",
            "no",
            "never",
            "nor",
            "no longer",
            "isn't",
            "aren't",
            "wasn't",
            "weren't",
            "won't",
            "wouldn't",
            "don't",
            "doesn't",
            "didn't",
            "can't",
            "cannot",
            "couldn't",
            "shouldn't",
            "haven't",
            "hasn't",
            "ain't",
        ],
    ),
    row(Role::Future, 1, &["will", "<ll>", "shall"]),
    row(Role::Future, 2, &["going to", "gonna"]),
    row(
        Role::Future,
        1,
        &[
            "<changes> <value>",
            "<changes> to <value>",
            "<changes> over to <value>",
            "<changes> into <value>",
        ],
    ),
    row(
        Role::Done,
        0,
        &[
            "finally",
            "already",
            "officially",
            "made it official",
            "it's official",
            "went through",
            "came through",
            "worked out",
            "it happened",
            "has happened",
            "we did it",
            "done deal",
            "all done",
            "is done",
            "complete",
            "completed",
            "sorted",
            "as of",
            "since",
            "ago",
            "yesterday",
            "last <unit>",
            "last <time>",
            "moved in",
            "settled in",
            "has been <value>",
            "have been <value>",
            "been living",
            "went from … to <value>",
            "gone from … to <value>",
        ],
    ),
    row(
        Role::Hedge,
        5,
        &[
            "might",
            "may",
            "could",
            "maybe",
            "perhaps",
            "possibly",
            "possible",
            "potentially",
            "chance",
            "chances",
            "who knows",
            "unsure",
            "uncertain",
            "we'll see",
            "wonder+",
            "should i",
            "should we",
            "or not",
            "odds are",
        ],
    ),
    row(
        Role::Hedge,
        4,
        &[
            "consider+",
            "think+ about",
            "think+ of",
            "thought about",
            "thought of",
            "mull+",
            "ponder+",
            "weigh+",
            "toy+ with",
            "deliberat+",
            "contemplat+",
            "entertain+",
            "explor+",
            "look+ into",
            "shortlist",
            "open to",
            "lean+ toward",
            "lean+ towards",
            "torn between",
            "eye+",
            "debat+",
            "looking at",
            "on the fence",
            "option",
            "options",
            "contender",
            "candidate",
            "alternative",
            "possibility",
        ],
    ),
    row(
        Role::Hedge,
        3,
        &[
            "want+",
            "wanna",
            "wish+",
            "hope+",
            "like to",
            "love to",
            "like for",
            "love for",
            "i'd love",
            "i'd like",
            "would",
            "i'd",
            "keen",
            "dream+",
            "ideally",
            "ideal",
            "prefer+",
            "eager",
            "yearn+",
            "aspir+",
            "crave+",
            "part of me",
            "someday",
            "one day",
            "eventually",
            "fingers crossed",
            "excited to",
            "tempt+",
            "set on",
            "sold on",
            "drawn to",
            "attracted to",
            "interested in",
        ],
    ),
    row(
        Role::Hedge,
        2,
        &[
            "plan+",
            "intend+",
            "intention",
            "aim+",
            "goal",
            "target+",
            "mean to",
            "the idea is",
            "that's the idea",
            "about to",
            "on track to",
            "determined",
            "made up my mind",
            "resolved to",
            "try+ to",
            "trying to",
        ],
    ),
    row(
        Role::Hedge,
        1,
        &[
            "scheduled to",
            "expect+ to",
            "likely to",
            "on the calendar",
            "booked",
            "lined up",
            "soon",
            "tomorrow",
            "upcoming",
            "next <unit>",
            "next <time>",
            "in <n> <unit>",
            "starting <time>",
            "starting next",
            "come <time>",
            "come next",
            "from <time>",
            "from the first",
            "from next",
            "beginning <time>",
            "by <time>",
            "by next",
            "down the line",
            "in the future",
        ],
    ),
    row(
        Role::Leading,
        5,
        &["if", "in case", "whether", "unless", "assuming", "provided"],
    ),
    // A change not yet made: the firmest strength, so that a hedge that
    // heads it ("determined to", "might be switching") names the strength.
    row(
        Role::Leading,
        1,
        &[
            "to <change>",
            "i'm <changing>",
            "we're <changing>",
            "am <changing>",
            "is <changing>",
            "are <changing>",
            "be <changing>",
        ],
    ),
    row(
        Role::Correction,
        0,
        &[
            "actually",
            "i meant",
            "i mean",
            "sorry, it's",
            "sorry, it is",
            "correction",
            "i misspoke",
            "to correct",
            "my mistake",
        ],
    ),
    row(
        Role::Changed,
        0,
        &[
            "now",
            "switched",
            "moved",
            "changed",
            "relocated",
            "transferred",
            "started",
            "joined",
            "became",
            "turned",
            "signed",
            "made the move",
            "made the switch",
        ],
    ),
];

/// The gate's verdict on one statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The statement's kind.
    pub kind: Kind,
    /// The hedge strength of a speculation (1–5), else 0.
    pub strength: u8,
    /// Whether the statement asserts that its value holds (see
    /// [`Verdict::revising`]); true unless an `Other` statement states its
    /// value with no assertion around it.
    pub asserted: bool,
}

/// The hedge strength of a revision held for want of an assertion: a
/// plan of unknown firmness, the middle of the scale.
pub const UNASSERTED: u8 = 3;

impl Verdict {
    /// A verdict of `kind` that no cue graded (the caller's `kind`).
    pub const fn of(kind: Kind) -> Verdict {
        Verdict {
            kind,
            strength: 0,
            asserted: true,
        }
    }

    /// The verdict on a statement that would *replace* its key's current
    /// value with another (the paper's gate question: does the statement
    /// license revising the current state now?). A revision needs an
    /// assertion: a cue of its own, or its value asserted as holding (a
    /// copula or state verb at it, a past verb, a bare answer; see
    /// `Scope::asserts`). Without one ("I keep picturing X as my gym", "X
    /// is in the running") it is held as a plan of strength
    /// [`UNASSERTED`], so a wording no cue covers stages a value instead
    /// of replacing a true one; a first value, or a restated one, is never
    /// held this way.
    pub fn revising(self) -> Verdict {
        match self {
            Verdict {
                kind: Kind::Other,
                asserted: false,
                ..
            } => Verdict {
                kind: Kind::Speculation,
                strength: UNASSERTED,
                asserted: false,
            },
            v => v,
        }
    }
}

static COMPILED: LazyLock<Vec<(Role, u8, Vec<Phrase>)>> = LazyLock::new(|| {
    GATE.iter()
        .map(|r| {
            let phrases = r.phrases.iter().map(|p| Phrase::compile(p)).collect();
            (r.role, r.strength, phrases)
        })
        .collect()
});

/// The table's phrases by a word each requires, so a statement is matched
/// only against the phrases whose word it contains (most of the table
/// cannot occur in a given sentence). Phrases are numbered in table order.
struct Prefilter {
    /// Required word → the phrases that require it.
    by_word: FxHashMap<&'static str, Vec<u32>>,
    /// Phrases with no plain word, by the first two bytes a token of theirs
    /// must start with (`Phrase::required_prefix`): nearly all of them are
    /// one inflected verb (`cancel+`), and trying each on every statement
    /// was most of the gate's cost on the write path (issue 24).
    by_prefix: FxHashMap<[u8; 2], Vec<u32>>,
    /// Phrases with neither (only classes): always tried.
    always: Vec<u32>,
    /// Number of the first phrase of each row.
    first: Vec<u32>,
    /// Phrases in all.
    len: usize,
}

static PREFILTER: LazyLock<Prefilter> = LazyLock::new(|| {
    let rows = &*COMPILED;
    let mut by_word: FxHashMap<&'static str, Vec<u32>> = FxHashMap::default();
    let mut by_prefix: FxHashMap<[u8; 2], Vec<u32>> = FxHashMap::default();
    let mut always = Vec::new();
    let mut first = Vec::with_capacity(rows.len());
    let mut n = 0u32;
    for (_, _, phrases) in rows {
        first.push(n);
        for p in phrases {
            match (p.required_word(), p.required_prefix()) {
                (Some(w), _) => by_word.entry(w).or_default().push(n),
                (None, Some(prefix)) => by_prefix.entry(prefix).or_default().push(n),
                (None, None) => always.push(n),
            }
            n += 1;
        }
    }
    Prefilter {
        by_word,
        by_prefix,
        always,
        first,
        len: n as usize,
    }
});

impl Prefilter {
    /// Which phrases may occur in `toks`.
    fn candidates(&self, toks: &[&str]) -> Vec<bool> {
        let mut may = vec![false; self.len];
        for &i in &self.always {
            may[i as usize] = true;
        }
        for t in toks {
            for &i in self.by_word.get(t).into_iter().flatten() {
                may[i as usize] = true;
            }
            for &i in phrases::token_prefix(t)
                .and_then(|p| self.by_prefix.get(&p))
                .into_iter()
                .flatten()
            {
                may[i as usize] = true;
            }
        }
        may
    }
}

/// A token that no phrase matches (masked asides and negated hedges).
const MASKED: &str = "\u{2}";

/// The value's sentence, read: its tokens (the value as one [`VALUE`]
/// token), each token's clause, and where the value is.
struct Scope<'a> {
    toks: Vec<&'a str>,
    clause: Vec<usize>,
    /// The value's token, if the value was found.
    value: Option<usize>,
    /// The sentence ends in a question mark.
    question: bool,
}

impl<'a> Scope<'a> {
    fn read(normalized: &'a str, value: Option<&str>) -> Scope<'a> {
        // Each token with its sentence and clause, from the punctuation
        // between tokens.
        let mut all: Vec<(&str, usize, usize)> = Vec::new();
        let mut questions = Vec::new();
        let (mut sentence, mut clause, mut at) = (0, 0, 0);
        for tok in text::tokens(normalized) {
            let start = tok.as_ptr() as usize - normalized.as_ptr() as usize;
            let gap = &normalized[at..start];
            if !all.is_empty() && gap.contains(['.', '!', '?']) {
                questions.push(gap.contains('?'));
                sentence += 1;
                clause += 1;
            } else if !all.is_empty() && gap.contains([',', ';', ':', '—']) {
                clause += 1;
            }
            all.push((tok, sentence, clause));
            at = start + tok.len();
        }
        questions.push(normalized[at..].contains('?'));
        let vtoks: Vec<&str> = value.map(|v| text::tokens(v).collect()).unwrap_or_default();
        let found = (!vtoks.is_empty())
            .then(|| {
                all.windows(vtoks.len())
                    .position(|w| w.iter().zip(&vtoks).all(|(t, v)| t.0 == *v))
            })
            .flatten();
        let sentence = found.map(|i| all[i].1);
        let mut scope = Scope {
            toks: Vec::with_capacity(all.len()),
            clause: Vec::with_capacity(all.len()),
            value: None,
            // Without the value, a question is about something unknown
            // ("How have you been?").
            question: sentence.is_some_and(|s| questions[s]),
        };
        let mut i = 0;
        while i < all.len() {
            let (tok, s, c) = all[i];
            if sentence.is_some_and(|v| v != s) {
                i += 1;
                continue;
            }
            if Some(i) == found {
                scope.value = Some(scope.toks.len());
                scope.toks.push(VALUE);
                scope.clause.push(c);
                i += vtoks.len();
                continue;
            }
            scope.toks.push(tok);
            scope.clause.push(c);
            i += 1;
        }
        scope
    }

    /// The value's clause (every clause when the value was not found).
    fn in_value_clause(&self, at: usize) -> bool {
        self.value.is_none_or(|v| self.clause[at] == self.clause[v])
    }

    /// Whether `at` lies before the value in its clause (anywhere when the
    /// value was not found).
    fn before_value(&self, at: usize) -> bool {
        self.in_value_clause(at) && self.value.is_none_or(|v| at < v)
    }

    /// Whether a negation at `at` denies the value: it stands before the
    /// value in its clause, anywhere in a clause the value opens ("X
    /// didn't work out": the value is what the clause is about), or right
    /// after the value, as its verb's ("turns out X won't happen", "X is
    /// not it"), not a later subject's ("X, and I don't mind"). Without
    /// the value no negation does: what it denies is unknown ("no
    /// worries", "long time no talk").
    fn denies(&self, at: usize) -> bool {
        let Some(v) = self.value else {
            return false;
        };
        let first = self.clause.iter().position(|c| *c == self.clause[v]);
        let opens = first.is_some_and(|f| v == f || (v == f + 1 && self.toks[f] == "the"));
        let right_after = at > v && at <= v + 2 && self.in_value_clause(at);
        self.before_value(at) || right_after || (opens && self.in_value_clause(at))
    }

    /// Every occurrence of a row's phrases, (start, end), found as the
    /// caller asks for them (most callers stop at the first). `may` says
    /// which of the row's phrases can occur at all ([`Prefilter`]).
    fn hits<'s>(
        &'s self,
        phrases: &'s [Phrase],
        may: &'s [bool],
    ) -> impl Iterator<Item = (usize, usize)> + 's {
        phrases
            .iter()
            .zip(may)
            .filter(|(_, m)| **m)
            .flat_map(move |(p, _)| {
                let mut from = 0;
                std::iter::from_fn(move || {
                    let (s, e) = p.find(self.toks.get(from..)?)?;
                    let hit = (from + s, from + e);
                    from += s + 1;
                    Some(hit)
                })
            })
    }

    /// Whether the statement asserts that its value holds (true when the
    /// value was not found: nothing to read): the value's clause is the
    /// value alone (an answer: "New room: 4B", "My gym? Crunch."); a
    /// copula or state verb stands at the value, or one adverb before it
    /// ("is X", "it's now X",
    /// "I'm with X", "been at X") or follows it into a definite name of
    /// the cell ("X is my gym", "X, that's where I work"); a past verb or
    /// participle or a third-person present leads it ("picked X", "moved
    /// to X", "set for X", "lives in X"); or a plain first-person present
    /// leads it ("I live in X", "we use X"). An article or possessive at
    /// the value is read as part of it.
    /// "Be" is no assertion ("for my gym to be X"), nor are the
    /// progressives and infinitives the table reads as plans.
    fn asserts(&self) -> bool {
        const COPULA: &[&str] = &[
            "is", "are", "am", "was", "were", "been", "remains", "remained", "stays", "stayed",
            "it's", "that's", "here's",
        ];
        const AT: &[&str] = &["with", "at", "in", "on", "for", "to", "as", "from", "by"];
        const NAMING: &[&str] = &["my", "our", "the", "where", "what", "now", "still"];
        const ADVERB: &[&str] = &[
            "now",
            "still",
            "just",
            "currently",
            "officially",
            "really",
            "actually",
            "already",
            "finally",
            "always",
            "definitely",
        ];
        const IRREGULAR: &[&str] = &[
            "went", "gone", "got", "took", "chose", "made", "found", "bought", "won", "began",
            "set", "left", "put", "become",
        ];
        let Some(v) = self.value else {
            return true;
        };
        let here = |i: usize| self.clause[i] == self.clause[v];
        let tok = |i: Option<usize>| i.and_then(|i| self.toks.get(i).copied());
        // An article or possessive at the value is part of it ("is an oat
        // latte", "moved to my aunt's").
        let det = v
            .checked_sub(1)
            .is_some_and(|i| here(i) && phrases::is_determiner(self.toks[i]));
        let at = v - usize::from(det);
        let before = |k: usize| at.checked_sub(k).filter(|i| here(*i));
        let (b1, b2, b3) = (tok(before(1)), tok(before(2)), tok(before(3)));
        let alone =
            before(1).is_none() && self.clause.get(v + 1).is_none_or(|c| *c != self.clause[v]);
        let copula = |t: Option<&str>| t.is_some_and(|t| COPULA.contains(&t));
        let adverb = |t: Option<&str>| t.is_some_and(|t| ADVERB.contains(&t));
        // The value is the object of a preposition ("in X", "at X").
        let placed = b1.is_some_and(|t| AT.contains(&t));
        let copula_at = copula(b1)
            || (adverb(b1) && copula(b2))
            || (placed && (copula(b2) || b2.is_some_and(|t| ["i'm", "we're"].contains(&t))));
        let (a1, a2) = (self.toks.get(v + 1).copied(), self.toks.get(v + 2).copied());
        let names_cell =
            a1 == Some("that's") || (copula(a1) && a2.is_some_and(|t| NAMING.contains(&t)));
        // A past verb or participle, or a present in the third person
        // ("lives in X", "uses X").
        let asserting_verb = |t: Option<&str>| {
            t.is_some_and(|t| {
                (t.len() > 3 && (t.ends_with("ed") || t.ends_with('s') && !t.ends_with("ss")))
                    || IRREGULAR.contains(&t)
            })
        };
        // A progressive places the subject at the value ("I'm working at
        // X"), unless the value is its object ("researching X").
        let ongoing = |t: Option<&str>| t.is_some_and(|t| t.len() > 4 && t.ends_with("ing"));
        let led_by_verb = asserting_verb(b1) || (placed && (asserting_verb(b2) || ongoing(b2)));
        let first_person = |t: Option<&str>| t.is_some_and(|t| t == "i" || t == "we");
        let present = first_person(b2) || (placed && first_person(b3));
        alone || copula_at || names_cell || led_by_verb || present
    }

    /// Masks "may" where it ends its clause: the month ("… is in May,
    /// on the 3rd"); the modal always has a verb after it.
    fn mask_months(&mut self) {
        for i in 0..self.toks.len() {
            let ends = self.clause.get(i + 1).is_none_or(|c| *c != self.clause[i]);
            if self.toks[i] == "may" && ends {
                self.toks[i] = MASKED;
            }
        }
    }

    fn mask(&mut self, (s, e): (usize, usize)) {
        for t in &mut self.toks[s..e] {
            if *t != VALUE {
                *t = MASKED;
            }
        }
    }
}

/// Classifies a normalized statement. `value` is the value the statement
/// is keyed with, when known, normalized like the statement: the gate
/// reads the cues around it (see the module docs); without it the whole
/// statement is the value's clause.
pub fn classify(normalized: &str, value: Option<&str>) -> Verdict {
    let mut scope = Scope::read(normalized, value);
    let rows = &*COMPILED;
    let prefilter = &*PREFILTER;
    // Masking only ever removes matches, so the phrases that may occur in
    // the sentence as read may occur in it as masked.
    let may = prefilter.candidates(&scope.toks);
    let first = &prefilter.first;
    // Lazily, in table order: a check that needs one hit stops there.
    fn role_hits<'s>(
        scope: &'s Scope,
        rows: &'s [(Role, u8, Vec<Phrase>)],
        (may, first): (&'s [bool], &'s [u32]),
        role: Role,
    ) -> impl Iterator<Item = (u8, (usize, usize))> + 's {
        rows.iter()
            .zip(first)
            .filter(move |(r, _)| r.0 == role)
            .flat_map(move |(r, &f)| {
                let may = &may[f as usize..f as usize + r.2.len()];
                scope.hits(&r.2, may).map(move |h| (r.1, h))
            })
    }
    let table = (&may[..], &first[..]);
    let any = |scope: &Scope, role: Role| role_hits(scope, rows, table, role).next().is_some();
    let asides: Vec<_> = role_hits(&scope, rows, table, Role::Aside).collect();
    for (_, h) in asides {
        scope.mask(h);
    }
    scope.mask_months();
    if any(&scope, Role::Contrast) {
        return Verdict::of(Kind::Correction);
    }
    if any(&scope, Role::Abandon) {
        return Verdict::of(Kind::Abandonment);
    }
    let mut strength = 0;
    let negated: Vec<_> = role_hits(&scope, rows, table, Role::NegatedHedge).collect();
    for (s, h) in negated {
        if scope.in_value_clause(h.0) {
            strength = strength.max(s);
        }
        scope.mask(h);
    }
    if role_hits(&scope, rows, table, Role::Negation).any(|(_, h)| scope.denies(h.0)) {
        return Verdict::of(Kind::Abandonment);
    }
    let mut future_here = false;
    for (s, h) in role_hits(&scope, rows, table, Role::Future) {
        strength = strength.max(s);
        future_here |= scope.in_value_clause(h.0);
    }
    if !future_here && any(&scope, Role::Done) {
        return Verdict::of(Kind::Completed);
    }
    // The hedge rows run from the vaguest down: the first hit is the
    // strongest.
    if let Some((s, _)) = role_hits(&scope, rows, table, Role::Hedge).next() {
        strength = strength.max(s);
    }
    for (s, h) in role_hits(&scope, rows, table, Role::Leading) {
        if scope.value.is_some_and(|v| h.0 < v) && scope.before_value(h.0) {
            strength = strength.max(s);
        }
    }
    if scope.question {
        strength = 5;
    }
    if strength > 0 {
        return Verdict {
            kind: Kind::Speculation,
            strength,
            asserted: true,
        };
    }
    if any(&scope, Role::Correction) {
        return Verdict::of(Kind::Correction);
    }
    if any(&scope, Role::Changed) {
        return Verdict::of(Kind::Completed);
    }
    Verdict {
        asserted: scope.asserts(),
        ..Verdict::of(Kind::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(s: &str, value: Option<&str>) -> (Kind, u8) {
        let v = classify(&text::normalize(s), value.map(text::normalize).as_deref());
        (v.kind, v.strength)
    }

    fn kind(s: &str, value: &str) -> Kind {
        verdict(s, Some(value)).0
    }

    #[test]
    fn each_class_on_hand_written_sentences() {
        use Kind::*;
        let cases = [
            (
                "I might move to Seattle next year.",
                "Seattle",
                (Speculation, 5),
            ),
            (
                "We're thinking about switching to Trader Joe's.",
                "Trader Joe's",
                (Speculation, 4),
            ),
            (
                "I'm hoping to start at Acme in the fall.",
                "Acme",
                (Speculation, 3),
            ),
            (
                "I'm planning to move the standup to 10am.",
                "10am",
                (Speculation, 2),
            ),
            (
                "The launch is scheduled to move to Dec 3.",
                "Dec 3",
                (Speculation, 1),
            ),
            (
                "If the offer comes through then I'll move to Austin.",
                "Austin",
                (Speculation, 5),
            ),
            (
                "Should I move the budget cap to $60k?",
                "$60k",
                (Speculation, 5),
            ),
            ("I just moved to Seattle.", "Seattle", (Completed, 0)),
            (
                "I've been living in Tacoma since March.",
                "Tacoma",
                (Completed, 0),
            ),
            (
                "The move to Austin went through last week.",
                "Austin",
                (Completed, 0),
            ),
            ("Actually, the room is 4B.", "4B", (Correction, 0)),
            ("Sorry, it's $45k, not $50k.", "$45k", (Correction, 0)),
            ("Not Room 2A but Room 4B.", "Room 4B", (Correction, 0)),
            ("The budget cap is $50k.", "$50k", (Other, 0)),
            (
                "The standup with Alex Rivera is moved to 10:45am.",
                "10:45am",
                (Completed, 0),
            ),
            (
                "The standup with Alex Rivera is cancelled.",
                "cancelled",
                (Other, 0),
            ),
        ];
        for (text, value, expected) in cases {
            assert_eq!(verdict(text, Some(value)), expected, "{text}");
        }
    }

    #[test]
    fn negation_denies_the_value_it_precedes() {
        use Kind::*;
        assert_eq!(
            kind("I'm not going to move to Seattle.", "Seattle"),
            Abandonment
        );
        assert_eq!(kind("I might not move to Seattle.", "Seattle"), Abandonment);
        assert_eq!(
            kind("We decided not to switch to Aldi.", "Aldi"),
            Abandonment
        );
        assert_eq!(
            kind("I'm staying in Portland after all.", "Portland"),
            Abandonment
        );
        assert_eq!(
            kind("The Seattle move fell through.", "Seattle"),
            Abandonment
        );
        assert_eq!(
            kind("Moving to Boise isn't happening.", "Boise"),
            Abandonment
        );
        assert_eq!(kind("Aldi didn't work out for us.", "Aldi"), Abandonment);
        assert_eq!(kind("Turns out Aldi won't happen.", "Aldi"), Abandonment);
        assert_eq!(kind("I let the Aldi thing go.", "Aldi"), Abandonment);
        assert_eq!(kind("We've moved on from Aldi.", "Aldi"), Abandonment);
        assert_eq!(kind("We moved on from Safeway to Aldi.", "Aldi"), Completed);
        assert_eq!(
            kind("My store went from Safeway to Aldi.", "Aldi"),
            Completed
        );
        assert_eq!(kind("Let's go to Aldi, it's my store.", "Aldi"), Other);
        // A negation well after the value, or in another clause, is not
        // about it.
        assert_eq!(kind("The room is 4B, not 2A.", "4B"), Other);
        assert_eq!(
            kind("My gym is Crunch and I don't mind it.", "Crunch"),
            Other
        );
        assert_eq!(
            kind("I can't say why, but my gym is Crunch.", "Crunch"),
            Other
        );
        // A negated hedge is a hedge.
        assert_eq!(
            verdict("I'm not sure my gym will be Crunch.", Some("Crunch")),
            (Speculation, 5)
        );
        assert_eq!(
            verdict("I can't wait to move to Austin.", Some("Austin")),
            (Speculation, 3)
        );
    }

    #[test]
    fn nested_hedges_and_happened_changes() {
        use Kind::*;
        // The vaguest hedge names the strength.
        assert_eq!(
            verdict(
                "I think I might be planning to move to Austin.",
                Some("Austin")
            ),
            (Speculation, 5)
        );
        assert_eq!(
            verdict(
                "We're considering planning to switch to Aldi.",
                Some("Aldi")
            ),
            (Speculation, 4)
        );
        // A change that happened wins over the plan that led to it, unless
        // the value's clause is still in the future.
        assert_eq!(
            kind(
                "I was planning to move and finally did, to Austin.",
                "Austin"
            ),
            Completed
        );
        assert_eq!(
            kind("I'm finally going to move to Austin.", "Austin"),
            Speculation
        );
        // A future time makes a firm plan; a past one does not.
        assert_eq!(
            verdict(
                "Starting Monday, my gym switches to Crunch.",
                Some("Crunch")
            ),
            (Speculation, 1)
        );
        assert_eq!(
            verdict("My gym becomes Crunch in two weeks.", Some("Crunch")),
            (Speculation, 1)
        );
        assert_eq!(
            kind("My gym became Crunch this spring.", "Crunch"),
            Completed
        );
    }

    #[test]
    fn changes_not_yet_made_lead_the_value() {
        use Kind::*;
        // An infinitive or progressive of a verb of changing or choosing,
        // before the value in its clause, is a plan.
        assert_eq!(
            verdict("Next I'm switching my bank to Ally.", Some("Ally")),
            (Speculation, 1)
        );
        assert_eq!(
            verdict("The idea now: to join Crunch.", Some("Crunch")).0,
            Speculation
        );
        assert_eq!(
            verdict("We are moving the office to Leeds.", Some("Leeds")),
            (Speculation, 1)
        );
        // After the value it is a purpose; "used to" and "had to" are not
        // plans; a completed change stays one.
        assert_eq!(kind("I moved to Leeds to start over.", "Leeds"), Completed);
        assert_eq!(kind("I had to switch my bank to Ally.", "Ally"), Other);
        assert_eq!(
            kind("I used to go to Crunch, my gym is Equinox.", "Equinox"),
            Other
        );
        assert_eq!(kind("I'm living in Leeds.", "Leeds"), Other);
        // Looking at a value is weighing it, not being there.
        assert_eq!(
            kind("I'm looking at Leeds for the office.", "Leeds"),
            Speculation
        );
        // The present tense of a verb of changing is a scheduled change,
        // and overrides a happened change; the present of going is not.
        assert_eq!(
            verdict(
                "Once the lease is done, my bank moves to Ally.",
                Some("Ally")
            ),
            (Speculation, 1)
        );
        assert_eq!(kind("Our son goes to Lincoln.", "Lincoln"), Other);
        assert_eq!(
            verdict("Come June, the office is in Leeds.", Some("Leeds")),
            (Speculation, 1)
        );
        // One candidate among several, an inclination, a resolve.
        for s in [
            "Ally is one option for my bank.",
            "I'm sold on Ally for my bank.",
            "I'm determined that my bank will be Ally.",
            "I'm on the fence about Ally for my bank.",
        ] {
            assert_eq!(kind(s, "Ally"), Speculation, "{s}");
        }
        assert_eq!(kind("The Ally option collapsed.", "Ally"), Abandonment);
    }

    #[test]
    fn a_revision_needs_an_assertion() {
        use Kind::*;
        let revising = |s: &str, v: &str| {
            let v = classify(&text::normalize(s), Some(&text::normalize(v))).revising();
            (v.kind, v.strength)
        };
        // No cue and nothing asserting the value: held when it would
        // replace another value, a plain statement otherwise.
        for s in [
            "I keep imagining Ally as my bank.",
            "Ally is in my thoughts for my bank.",
            "I've been reading about Ally for my bank.",
            "Everything is lined out for my bank to be Ally.",
        ] {
            assert_eq!(revising(s, "Ally"), (Speculation, UNASSERTED), "{s}");
            assert_eq!(kind(s, "Ally"), Other, "{s}");
        }
        // Asserted (plain or completed): a copula at the value, a name of
        // the cell after it, a past verb or a first-person present before
        // it, a bare answer.
        for s in [
            "My bank is Ally.",
            "My bank is now Ally.",
            "Ally is my bank.",
            "Ally, that's my bank.",
            "I picked Ally for my bank.",
            "I bank with Ally.",
            "We use Ally.",
            "My bank has become Ally.",
            "New bank: Ally.",
            "My bank? Ally.",
        ] {
            assert_ne!(revising(s, "Ally").0, Speculation, "{s}");
        }
        // A cue's verdict stands; a value the text does not hold is not read.
        assert_eq!(
            revising("I might switch to Ally.", "Ally"),
            (Speculation, 5)
        );
        let v = classify(&text::normalize("Sounds good to me."), Some("ally"));
        assert_eq!(v.revising().kind, Other);
    }

    #[test]
    fn asides_conditions_and_the_value_itself_are_not_cues() {
        use Kind::*;
        // A relevance condition, a speech modal, an answer: plain statements.
        assert_eq!(kind("If it matters, my gym is Crunch.", "Crunch"), Other);
        assert_eq!(kind("I should mention my gym is Crunch.", "Crunch"), Other);
        assert_eq!(kind("My gym? That would be Crunch.", "Crunch"), Other);
        assert_eq!(kind("I'd say my gym is Crunch.", "Crunch"), Other);
        // A condition over the value is a plan.
        assert_eq!(
            verdict("It would be great if my gym became Crunch.", Some("Crunch")),
            (Speculation, 5)
        );
        // "Going to" a place is no future; "May" the month is no hedge.
        assert_eq!(kind("I keep going to Crunch, my gym.", "Crunch"), Other);
        assert_eq!(
            kind("The Halcyon deadline moved to May 3.", "May 3"),
            Completed
        );
        assert_eq!(
            kind("The Halcyon deadline is in May, on the 3rd.", "the 3rd"),
            Other
        );
        assert_eq!(kind("We may end up in Room 4B.", "Room 4B"), Speculation);
        assert_eq!(
            kind("The city I live in may well become Tacoma.", "Tacoma"),
            Speculation
        );
        assert_eq!(kind("By May the launch is Dec 3.", "Dec 3"), Other);
        // The listener's wondering is no hedge; "nothing fancy" no wish.
        assert_eq!(
            kind("My gym is Crunch, if you were wondering.", "Crunch"),
            Other
        );
        assert_eq!(kind("Nothing fancy, my gym is Crunch.", "Crunch"), Other);
        assert_eq!(
            kind("I wonder if my gym will be Crunch.", "Crunch"),
            Speculation
        );
        // Words of the value, or inside others, are not cues.
        assert_eq!(kind("My gym is Planet Fitness.", "Planet Fitness"), Other);
        assert_eq!(kind("Maybelline is my brand.", "Maybelline"), Other);
        assert_eq!(kind("The mayor's budget cap is $5k.", "$5k"), Other);
        // Another sentence's hedge is not about the value.
        assert_eq!(
            kind("I might go hiking. My gym is Crunch.", "Crunch"),
            Other
        );
    }

    #[test]
    fn without_a_value_the_whole_statement_is_read() {
        use Kind::*;
        assert_eq!(
            verdict("The Seattle move fell through.", None).0,
            Abandonment
        );
        assert_eq!(verdict("The move went through.", None).0, Completed);
        assert_eq!(verdict("I might move next year.", None), (Speculation, 5));
        assert_eq!(verdict("The budget cap is $50k.", None).0, Other);
        // What a bare negation or question is about is unknown.
        assert_eq!(verdict("No worries, the sync is fine.", None).0, Other);
        assert_eq!(verdict("How have you been?", None).0, Other);
    }

    /// Every word of the table, each with its regular inflections
    /// (`inflects`' forms: -s, -es, -ed, -d, -ing, a doubled consonant, a
    /// dropped `e`, a `y` turned `i`).
    fn table_words() -> Vec<String> {
        let mut words = Vec::new();
        for rule in GATE {
            for phrase in rule.phrases {
                for word in phrase.split(['…', ' ']).filter(|w| !w.is_empty()) {
                    let stem = word.trim_end_matches('+').trim_matches(['<', '>']);
                    let stem = text::normalize(stem);
                    words.push(stem.clone());
                    for suffix in ["s", "es", "ed", "d", "ing"] {
                        words.push(format!("{stem}{suffix}"));
                    }
                    if let Some(last) = stem.chars().last() {
                        words.push(format!("{stem}{last}ed"));
                        words.push(format!("{stem}{last}ing"));
                    }
                    if let Some(base) = stem.strip_suffix('e') {
                        words.push(format!("{base}ing"));
                    }
                    if let Some(base) = stem.strip_suffix('y') {
                        words.push(format!("{base}ied"));
                        words.push(format!("{base}ies"));
                    }
                }
            }
        }
        words.sort();
        words.dedup();
        words
    }

    proptest::proptest! {
        /// The prefilter is sound: a phrase that occurs in a statement's
        /// tokens is always among its candidates, whichever of the table's
        /// words, inflected or not, the statement holds.
        #[test]
        fn the_prefilter_keeps_every_phrase_that_occurs(
            picks in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(table_words()),
                    "[a-z]{1,7}",
                ],
                0..8,
            )
        ) {
            let toks: Vec<&str> = picks.iter().map(String::as_str).collect();
            let may = PREFILTER.candidates(&toks);
            let phrases = COMPILED.iter().flat_map(|(_, _, phrases)| phrases);
            for (i, phrase) in phrases.enumerate() {
                proptest::prop_assert!(
                    may[i] || !phrase.matches(&toks),
                    "phrase {} occurs in {:?} but was filtered out", i, toks
                );
            }
        }
    }
}
