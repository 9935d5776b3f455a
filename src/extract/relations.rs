//! Relations stated in plain English: the open-domain half of the rule
//! extractor. Where [`slots`] knows the six slots of the
//! controlled benchmark, this module knows relations of people, places and
//! organisations (where someone lives, who runs a company, a capital, a
//! favourite food) as one declarative table, [`RELATIONS`], and reads them
//! from a handful of frames:
//!
//! - nominal frames, generated for every relational noun `N` of a row:
//!   "the N of S is O", "S's N is O", "my N is O" (the speaker's), "S's new
//!   N is O", "O is the N of S", with any copula of [`COPULAS`] ("is now",
//!   "has become", "changed to");
//! - verb frames, written in the row: "S lives in O", "O founded S",
//!   "i'm living in O" (a frame without `S` is about the speaker).
//!
//! The subject resolves to a known name (the gazetteer's, first names of
//! participants included), a capitalised name of the raw text, or, for
//! "i"/"my", the speaker; anything else (a pronoun, "my sister") gives no key.
//! The object is read to the end of its clause and typed by its row: a name
//! for places, people and organisations; a recognised date, number or amount
//! for those types; a short phrase otherwise.
//!
//! # Precision first
//! A false key hides a current value, so a sentence that is not a plain
//! statement of the relation gets none: a question, a negation, a hedge or
//! plan, reported speech ("she said that …"), a subject joined to another
//! ("Ann and Bo live in …"), an object that is not of the row's type.

mod open;

use std::cell::OnceCell;
use std::sync::LazyLock;

use rustc_hash::{FxHashMap, FxHashSet};

use super::gazetteer::Mention;
use super::phrases::{Pattern, WEEKDAYS};
use super::slots::{self, ValueType};
use crate::limits::MAX_NAMES;
use crate::text;

pub use open::{MAX_PHRASE_WORDS, NAMED_ONLY, NOT_ALONE, NOT_ATTRIBUTES, OpenStatement};

/// What a relation's object is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectType {
    /// A place name.
    Place,
    /// A person's name.
    Person,
    /// An organisation's name.
    Organisation,
    /// A calendar date or a year.
    Date,
    /// A count.
    Number,
    /// An amount of money.
    Money,
    /// A short free-text phrase ("nurse", "sushi").
    Text,
}

impl ObjectType {
    /// Whether the object is a name (of a place, person or organisation).
    pub fn is_name(self) -> bool {
        matches!(
            self,
            ObjectType::Place | ObjectType::Person | ObjectType::Organisation
        )
    }

    /// The type's name in receipts and reports.
    pub fn name(self) -> &'static str {
        match self {
            ObjectType::Place => "place",
            ObjectType::Person => "person",
            ObjectType::Organisation => "organisation",
            ObjectType::Date => "date",
            ObjectType::Number => "number",
            ObjectType::Money => "money",
            ObjectType::Text => "text",
        }
    }
}

/// One row of the relation table.
#[derive(Debug, PartialEq, Eq)]
pub struct RelationSpec {
    /// The canonical slot name, used in keys.
    pub slot: &'static str,
    /// What the object is.
    pub object: ObjectType,
    /// Relational nouns (normalized), each read in every nominal frame.
    pub nouns: &'static [&'static str],
    /// Verb frames: words with `S` (the subject), `O` (the object); a frame
    /// without `S` starts with the speaker ("i", "i'm", "i've").
    pub frames: &'static [&'static str],
}

/// The copulas of the nominal frames, longest first.
pub const COPULAS: &[&str] = &[
    "has been changed to",
    "has changed to",
    "was changed to",
    "has become",
    "changed to",
    "is now",
    "became",
    "is",
];

/// The nominal frames every relational noun `N` is read in.
const NOMINAL: &[&str] = &[
    "the N of S <is> O",
    "S's N <is> O",
    "S's new N <is> O",
    "S's current N <is> O",
    "O is the N of S",
    "O is now the N of S",
];

/// The nominal frames of a row. An object before its frame is read as a
/// name, so the inverse frames ("O is the N of S") are for names only.
fn nominal(spec: &RelationSpec) -> impl Iterator<Item = &'static str> + '_ {
    NOMINAL
        .iter()
        .copied()
        .filter(|f| spec.object.is_name() || !f.starts_with('O'))
}

use ObjectType::{Date, Money, Number, Organisation, Person, Place, Text};

/// Builds a table row.
const fn rel(
    slot: &'static str,
    object: ObjectType,
    nouns: &'static [&'static str],
    frames: &'static [&'static str],
) -> RelationSpec {
    RelationSpec {
        slot,
        object,
        nouns,
        frames,
    }
}

/// The relation table. A relation's paraphrases are its nouns and frames;
/// rows that share a frame ("born in") are told apart by the object's type.
pub static RELATIONS: &[RelationSpec] = &[
    rel(
        "residence",
        Place,
        &["home", "residence", "place of residence", "home city"],
        &[
            "S lives in O",
            "S live in O",
            "S now lives in O",
            "S resides in O",
            "S reside in O",
            "S is based in O",
            "S is living in O",
            "i'm living in O",
            "i'm based in O",
            "i am living in O",
            "S moved to O",
            "S has moved to O",
            "i've moved to O",
            "S relocated to O",
            "S has relocated to O",
            "i've relocated to O",
            "S settled in O",
        ],
    ),
    rel(
        "birthplace",
        Place,
        &["birthplace", "place of birth"],
        &[
            "S was born in O",
            "S is from O",
            "i'm from O",
            "S comes from O",
        ],
    ),
    rel(
        "birth_date",
        Date,
        &["birthday", "date of birth", "birth date"],
        &["S was born on O", "S was born in O"],
    ),
    rel(
        "death_place",
        Place,
        &["place of death"],
        &["S died in O", "S passed away in O"],
    ),
    rel(
        "death_date",
        Date,
        &["date of death"],
        &["S died on O", "S died in O", "S passed away on O"],
    ),
    rel(
        "employer",
        Organisation,
        &["employer", "workplace"],
        &[
            "S works at O",
            "S works for O",
            "S work at O",
            "S work for O",
            "S now works at O",
            "S now works for O",
            "S is employed by O",
            "S is employed at O",
            "i'm employed by O",
            "S is working at O",
            "S is working for O",
            "i'm working at O",
            "i'm working for O",
            "S started working at O",
            "S started working for O",
            "S got a job at O",
        ],
    ),
    rel(
        "occupation",
        Text,
        &["job", "occupation", "profession", "job title"],
        &[
            "S works as O",
            "S work as O",
            "S is employed as O",
            "i'm working as O",
            "S is working as O",
            "S became a O",
            "S became an O",
            "i'm now a O",
            "i'm now an O",
            "S got a job as O",
        ],
    ),
    rel(
        "spouse",
        Person,
        &["wife", "husband", "spouse"],
        &[
            "S is married to O",
            "i'm married to O",
            "S married O",
            "S got married to O",
        ],
    ),
    rel(
        "partner",
        Person,
        &["partner", "girlfriend", "boyfriend", "fiance", "fiancee"],
        &[
            "S is dating O",
            "i'm dating O",
            "S is engaged to O",
            "i'm engaged to O",
        ],
    ),
    rel(
        "citizenship",
        Place,
        &["citizenship", "nationality"],
        &[
            "S is a citizen of O",
            "i'm a citizen of O",
            "S became a citizen of O",
            "S holds citizenship of O",
        ],
    ),
    rel(
        "founder",
        Person,
        &["founder"],
        &["S was founded by O", "O founded S", "O co-founded S"],
    ),
    rel(
        "headquarters",
        Place,
        &["headquarters", "head office"],
        &[
            "S is headquartered in O",
            "S has its headquarters in O",
            "S moved its headquarters to O",
        ],
    ),
    rel(
        "native_language",
        Text,
        &["native language", "first language", "mother tongue"],
        &["S natively speaks O"],
    ),
    rel("official_language", Text, &["official language"], &[]),
    rel(
        "affiliation",
        Organisation,
        &["affiliation"],
        &["S is affiliated with O", "i'm affiliated with O"],
    ),
    rel(
        "creator",
        Person,
        &["creator", "author"],
        &["S was created by O", "S was written by O", "O created S"],
    ),
    rel(
        "association",
        Organisation,
        &[],
        &["S is associated with O"],
    ),
    rel(
        "team",
        Organisation,
        &["team", "club"],
        &[
            "S plays for O",
            "S play for O",
            "S now plays for O",
            "S signed with O",
            "S signed for O",
        ],
    ),
    rel(
        "position",
        Text,
        &["position"],
        &["S plays the position of O", "S plays as O"],
    ),
    rel("capital", Place, &["capital", "capital city"], &[]),
    rel("president", Person, &["president"], &[]),
    rel(
        "prime_minister",
        Person,
        &["prime minister", "premier"],
        &[],
    ),
    rel("mayor", Person, &["mayor"], &[]),
    rel("governor", Person, &["governor"], &[]),
    rel(
        "ceo",
        Person,
        &["ceo", "chief executive", "chief executive officer"],
        &["S is led by O", "S is run by O"],
    ),
    rel(
        "chair",
        Person,
        &["chair", "chairman", "chairwoman", "chairperson"],
        &[],
    ),
    rel("director", Person, &["director"], &["S was directed by O"]),
    rel(
        "manager",
        Person,
        &["manager", "boss", "supervisor"],
        &["S reports to O", "i report to O"],
    ),
    rel(
        "coach",
        Person,
        &["coach", "head coach", "trainer"],
        &["S is coached by O"],
    ),
    rel("captain", Person, &["captain"], &["S is captained by O"]),
    rel(
        "population",
        Number,
        &["population"],
        &["S has a population of O"],
    ),
    rel("currency", Text, &["currency"], &[]),
    rel(
        "school",
        Organisation,
        &["school", "university", "college"],
        &[
            "S studies at O",
            "S study at O",
            "i'm studying at O",
            "S is studying at O",
            "S is enrolled at O",
            "S attends O",
        ],
    ),
    rel(
        "alma_mater",
        Organisation,
        &["alma mater"],
        &["S graduated from O"],
    ),
    rel(
        "major",
        Text,
        &["major", "field of study"],
        &["S is majoring in O", "i'm majoring in O", "S majors in O"],
    ),
    rel(
        "age",
        Number,
        &["age"],
        &["S is O years old", "i'm O years old", "S turned O"],
    ),
    rel(
        "address",
        Text,
        &["address", "home address", "street address"],
        &[],
    ),
    rel(
        "phone_number",
        Number,
        &["phone number", "number", "cell number"],
        &[],
    ),
    rel("email", Text, &["email", "email address"], &[]),
    rel(
        "favorite_food",
        Text,
        &[
            "favorite food",
            "favourite food",
            "favorite dish",
            "favourite dish",
        ],
        &[],
    ),
    rel(
        "favorite_color",
        Text,
        &[
            "favorite color",
            "favourite colour",
            "favourite color",
            "favorite colour",
        ],
        &[],
    ),
    rel(
        "favorite_book",
        Text,
        &[
            "favorite book",
            "favourite book",
            "favorite novel",
            "favourite novel",
        ],
        &[],
    ),
    rel(
        "favorite_movie",
        Text,
        &[
            "favorite movie",
            "favourite movie",
            "favorite film",
            "favourite film",
        ],
        &[],
    ),
    rel(
        "favorite_band",
        Text,
        &[
            "favorite band",
            "favourite band",
            "favorite artist",
            "favourite artist",
        ],
        &[],
    ),
    rel(
        "favorite_sport",
        Text,
        &["favorite sport", "favourite sport"],
        &[],
    ),
    rel(
        "hobby",
        Text,
        &["hobby", "favorite hobby", "favourite hobby"],
        &[],
    ),
    rel(
        "car",
        Text,
        &["car"],
        &["S drives a O", "i drive a O", "S drives an O"],
    ),
    rel("religion", Text, &["religion", "faith"], &[]),
    rel(
        "owner",
        Organisation,
        &["owner", "parent company"],
        &["S is owned by O", "S was acquired by O", "O acquired S"],
    ),
    rel(
        "location",
        Place,
        &["location"],
        &["S is located in O", "S lies in O"],
    ),
    rel(
        "salary",
        Money,
        &["salary", "income", "pay"],
        &["S earns O", "S makes O a year"],
    ),
    rel(
        "rent",
        Money,
        &["rent"],
        &["S pays O in rent", "S pays O rent"],
    ),
    rel("doctor", Person, &["doctor", "physician", "gp"], &[]),
    rel(
        "therapist",
        Person,
        &["therapist", "counselor", "counsellor"],
        &[],
    ),
    rel("nickname", Text, &["nickname"], &["S goes by O"]),
];

/// One part of a compiled frame.
#[derive(Clone, Debug)]
enum Part {
    /// Literal words.
    Words(Vec<Pattern>),
    /// The subject: a name, or "i"/"my" for the speaker.
    Subject,
    /// The subject followed by a possessive `'s` (or "my").
    Possessive,
    /// The object.
    Object,
    /// Any copula of [`COPULAS`].
    Copula,
}

/// A compiled frame of a relation.
#[derive(Debug)]
struct Frame {
    /// Row of [`RELATIONS`].
    relation: usize,
    /// The frame's parts, in order.
    parts: Vec<Part>,
    /// Whether the frame is the row's canonical noun or slot phrase
    /// (receipts say `exact`) rather than a paraphrase.
    canonical: bool,
}

impl Frame {
    fn compile(relation: usize, frame: &str, canonical: bool) -> Frame {
        let mut parts: Vec<Part> = Vec::new();
        for word in frame.split_whitespace() {
            let part = match word {
                "S" => Part::Subject,
                "S's" => Part::Possessive,
                "O" => Part::Object,
                "<is>" => Part::Copula,
                w => {
                    let pats = Pattern::compile(w);
                    if let Some(Part::Words(prev)) = parts.last_mut() {
                        prev.extend(pats);
                        continue;
                    }
                    Part::Words(pats)
                }
            };
            parts.push(part);
        }
        Frame {
            relation,
            parts,
            canonical,
        }
    }

    /// The literal word the frame is indexed under: the longest plain word
    /// of its first literal part (most selective), with its offset there.
    fn anchor(&self) -> Option<(usize, usize, String)> {
        let (i, words) = self.parts.iter().enumerate().find_map(|(i, p)| match p {
            Part::Words(w) => Some((i, w)),
            _ => None,
        })?;
        words
            .iter()
            .enumerate()
            .filter_map(|(k, p)| match p {
                Pattern::Word(w) => Some((k, w)),
                _ => None,
            })
            .max_by_key(|(k, w)| (w.len(), usize::MAX - k))
            .map(|(k, w)| (i, k, w.clone()))
    }
}

/// The compiled table: every frame, indexed by its anchor word.
struct Compiled {
    frames: Vec<Frame>,
    /// Anchor word → (frame, literal part index, offset of the anchor in it).
    by_anchor: FxHashMap<String, Vec<(usize, usize, usize)>>,
    copulas: Vec<Vec<String>>,
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let mut frames = Vec::new();
    for (r, spec) in RELATIONS.iter().enumerate() {
        for (n, noun) in spec.nouns.iter().enumerate() {
            for nominal in nominal(spec) {
                frames.push(Frame::compile(r, &nominal.replace('N', noun), n == 0));
            }
        }
        for frame in spec.frames {
            frames.push(Frame::compile(r, frame, false));
        }
    }
    let mut by_anchor: FxHashMap<String, Vec<(usize, usize, usize)>> = FxHashMap::default();
    for (i, f) in frames.iter().enumerate() {
        // Infallible: `table_is_well_formed` checks every frame has a
        // literal word.
        let (part, offset, word) = f.anchor().expect("every frame has a literal word");
        by_anchor.entry(word).or_default().push((i, part, offset));
    }
    let copulas = COPULAS
        .iter()
        .map(|c| text::tokens(c).map(str::to_owned).collect())
        .collect();
    Compiled {
        frames,
        by_anchor,
        copulas,
    }
});

/// How a relation statement's key was found, for the receipt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Match {
    /// The row's canonical noun.
    Exact,
    /// Another noun or a verb frame of the row.
    Paraphrase,
}

/// A relation statement found in a sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    /// The row of [`RELATIONS`].
    pub relation: &'static RelationSpec,
    /// The subject's canonical name.
    pub subject: String,
    /// The object, normalized.
    pub object: String,
    /// How the frame matched.
    pub matched: Match,
    /// Whether the sentence states it plainly: not a question, negation,
    /// hedge, reported speech, nor a subject joined to another.
    pub plain: bool,
}

/// One text as the frame matcher reads it: its tokens, their gaps, the
/// names in it and who speaks.
///
/// Work is linear in the text, a hostile one included (`tests/
/// bounded_work.rs`): the text's layout (its clause and sentence ends,
/// cue counts and names) is computed once, and only for a text that holds
/// an anchor word of some frame; each frame read then costs a bounded
/// number of lookups.
pub struct Reading<'a> {
    raw: &'a str,
    normalized: &'a str,
    toks: &'a [&'a str],
    /// Byte offset of each token in `normalized`.
    starts: &'a [usize],
    /// Gazetteer mentions, by start.
    mentions: &'a [Mention],
    /// The speaker's canonical name, if known.
    speaker: Option<&'a str>,
    layout: OnceCell<Layout>,
}

/// What every frame read asks of a text, computed once per text. Indexed
/// by token position; `[i]` of a `n + 1` vector is about the gap before
/// token `i` (`[0]` and `[n]` are the text's ends).
struct Layout {
    /// A clause boundary (punctuation) stands before token `i`.
    boundary: Vec<bool>,
    /// The first `k >= i` where a clause ends: a boundary, a clause word,
    /// or the end.
    next_clause: Vec<usize>,
    /// The first `k >= i` where a sentence ends.
    next_sentence: Vec<usize>,
    /// The first token of token `i`'s sentence.
    sentence_start: Vec<usize>,
    /// The text from token `i` to the next `.`, `!` or newline holds a `?`.
    question_from: Vec<bool>,
    /// Counts of negations, hedges and words of report before token `i`.
    negations: Vec<u32>,
    hedges: Vec<u32>,
    reports: Vec<u32>,
    /// Capitalised names of the raw text, as token ranges `(begin, end)`,
    /// sorted.
    names: Vec<(usize, usize)>,
    /// Token `i` is inside a capitalised name.
    in_name: Vec<bool>,
    /// Names and gazetteer mentions as `(end, begin)`, sorted.
    by_end: Vec<(usize, usize)>,
    /// Names and gazetteer mentions as `(begin, end)`, sorted.
    by_start: Vec<(usize, usize)>,
}

/// Most tokens an object is read in after its frame: a longer clause is
/// not read further (bounds a frame read on a text without punctuation).
const MAX_OBJECT_TOKENS: usize = 16;

/// Conjunctions and relative words that end an object or a subject.
const CLAUSE_WORDS: &[&str] = &[
    "and", "but", "or", "because", "so", "although", "though", "while", "whereas", "which", "who",
    "whom", "where", "when", "since", "until", "unless", "if", "than", "whose",
];

/// Words that make a sentence not a plain statement of its relation.
const NEGATIONS: &[&str] = &[
    "not", "never", "no", "neither", "nor", "cannot", "nobody", "nothing", "longer",
];
const HEDGES: &[&str] = &[
    "might",
    "may",
    "maybe",
    "perhaps",
    "probably",
    "possibly",
    "likely",
    "unlikely",
    "would",
    "could",
    "should",
    "hope",
    "hoping",
    "hopefully",
    "plan",
    "plans",
    "planning",
    "want",
    "wants",
    "wanna",
    "thinking",
    "considering",
    "going",
    "gonna",
    "if",
    "whether",
    "soon",
    "someday",
    "supposedly",
    "allegedly",
    "reportedly",
    "apparently",
    "rumored",
    "rumoured",
    "seems",
    "seem",
    "guess",
    "wish",
    "will",
    "i'll",
    "we'll",
    "she'll",
    "he'll",
    "they'll",
    "i'd",
    "we'd",
    "she'd",
    "he'd",
    "they'd",
    "ought",
    "must",
    "think",
    "thinks",
    "believe",
    "believes",
    "suspect",
    "doubt",
    "wonder",
    "unsure",
];
const REPORTS: &[&str] = &[
    "said",
    "says",
    "say",
    "told",
    "tells",
    "tell",
    "according",
    "heard",
    "hear",
    "claims",
    "claimed",
    "claim",
    "reported",
    "reports",
    "rumor",
    "rumour",
    "mentioned",
    "mentions",
    "thought",
    "announced",
    "wrote",
    "suggests",
    "suggested",
];
const QUESTION_WORDS: &[&str] = &[
    "what", "where", "when", "who", "whom", "which", "why", "how", "do", "does", "did", "is",
    "are", "was", "were", "can", "could", "will", "would", "should", "have", "has", "am", "isn't",
    "aren't", "don't", "doesn't", "didn't",
];
/// Adverbs that may stand between a subject and its verb ("I just moved").
const ADVERBS: &[&str] = &[
    "just",
    "recently",
    "finally",
    "now",
    "also",
    "officially",
    "actually",
    "still",
    "currently",
];
/// Words trimmed from the end of an object ("… Boston now").
const TRAILING: &[&str] = &[
    "now",
    "today",
    "again",
    "too",
    "already",
    "anymore",
    "lately",
    "currently",
    "instead",
    "officially",
    "permanently",
    "full-time",
    "yesterday",
    "recently",
];

impl<'a> Reading<'a> {
    /// The matcher's view of one text. `raw` is the text as written (its
    /// capitals mark names); `normalized`, `toks` and `starts` its
    /// normalized form, tokens and token offsets.
    pub fn new(
        raw: &'a str,
        normalized: &'a str,
        toks: &'a [&'a str],
        starts: &'a [usize],
        mentions: &'a [Mention],
        speaker: Option<&'a str>,
    ) -> Reading<'a> {
        Reading {
            raw,
            normalized,
            toks,
            starts,
            mentions,
            speaker,
            layout: OnceCell::new(),
        }
    }

    fn layout(&self) -> &Layout {
        self.layout.get_or_init(|| Layout::of(self))
    }

    /// Whether a clause boundary (punctuation) stands before token `i`.
    fn boundary_before(&self, i: usize) -> bool {
        self.layout().boundary[i.min(self.toks.len())]
    }

    /// Whether the token `i` is followed by a possessive `'s`.
    fn possessive(&self, i: usize) -> bool {
        let end = self.starts[i] + self.toks[i].len();
        self.normalized[end..].starts_with("'s") || self.normalized[end..].starts_with("' ")
    }

    /// The subject span `[from, to)`: a name covering it exactly, or a
    /// first-person word for the speaker.
    fn subject(&self, from: usize, to: usize) -> Option<String> {
        if to == from + 1 && matches!(self.toks[from], "i" | "my" | "me") {
            return self.speaker.map(str::to_owned);
        }
        let first = self.mentions.partition_point(|m| m.start < from);
        if let Some(m) = self.mentions[first..]
            .iter()
            .take_while(|m| m.start == from)
            .find(|m| m.end == to)
        {
            return Some(m.entity.to_string());
        }
        self.layout()
            .names
            .binary_search(&(from, to))
            .is_ok()
            .then(|| self.toks[from..to].join(" "))
    }

    /// Where the subjects that end at `to` may begin: a first-person word,
    /// a gazetteer mention, a capitalised name.
    fn names_ending(&self, to: usize) -> impl Iterator<Item = usize> + '_ {
        let first_person = (to > 0 && matches!(self.toks[to - 1], "i" | "my")).then(|| to - 1);
        let by_end = &self.layout().by_end;
        let first = by_end.partition_point(|&(e, _)| e < to);
        let named = by_end[first..]
            .iter()
            .take_while(move |&&(e, _)| e == to)
            .map(|&(_, b)| b);
        first_person.into_iter().chain(named)
    }

    /// Where the copula at `at` ends, if one starts there.
    fn copula(&self, at: usize) -> Option<usize> {
        COMPILED.copulas.iter().find_map(|c| {
            let end = at + c.len();
            (self.toks.get(at..end)? == c.as_slice()).then_some(end)
        })
    }

    /// Whether `words` matches at `at`.
    fn words_at(&self, words: &[Pattern], at: usize) -> bool {
        self.toks
            .get(at..at + words.len())
            .is_some_and(|w| w.iter().zip(words).all(|(t, p)| p.matches(t)))
    }

    /// Every relation statement of the text, first by position.
    pub fn statements(&self) -> Vec<Statement> {
        let c = &*COMPILED;
        let mut found: Vec<(usize, usize, Statement)> = Vec::new();
        // Most texts hold no anchor word: they cost a lookup per token.
        if !self.toks.iter().any(|t| c.by_anchor.contains_key(*t)) {
            return Vec::new();
        }
        for (p, tok) in self.toks.iter().enumerate() {
            let Some(hits) = c.by_anchor.get(*tok) else {
                continue;
            };
            for &(f, part, offset) in hits {
                let frame = &c.frames[f];
                let Some(start) = p.checked_sub(offset) else {
                    continue;
                };
                if let Some(hit) = self.read(frame, part, start) {
                    found.push(hit);
                }
            }
        }
        // One statement per sentence start: the frame that read the most
        // literal words wins (a longer frame is the more specific reading).
        found.sort_by_key(|(from, coverage, _)| (*from, usize::MAX - coverage));
        found.dedup_by_key(|(from, ..)| *from);
        found.into_iter().map(|(.., st)| st).collect()
    }

    /// Reads `frame` with its literal part `part` starting at token `start`:
    /// (where the statement starts, how many literal words it read, the
    /// statement).
    fn read(&self, frame: &Frame, part: usize, start: usize) -> Option<(usize, usize, Statement)> {
        let Part::Words(words) = &frame.parts[part] else {
            return None;
        };
        if !self.words_at(words, start) {
            return None;
        }
        let mut coverage = words.len();
        // The part before the first literal one: a name that ends at it.
        let (mut subject, mut object) = (None, None);
        let mut from = start;
        if part > 0 {
            let lead = &frame.parts[part - 1];
            let mut end = start;
            if matches!(lead, Part::Subject) && end > 0 && ADVERBS.contains(&self.toks[end - 1]) {
                end -= 1;
            }
            // The longest name wins: "Priya Silva" over a partial mention
            // of another person's "Silva".
            let begin = self
                .names_ending(end)
                .filter(|&b| {
                    (b..end).all(|i| i == b || !self.boundary_before(i))
                        && (!matches!(lead, Part::Possessive)
                            || self.possessive(end - 1)
                            || self.toks[end - 1] == "my")
                        && (matches!(lead, Part::Possessive) || !self.possessive(end - 1))
                })
                .min()?;
            let span = self.subject(begin, end)?;
            match lead {
                Part::Object => object = Some((begin, end)),
                _ => subject = Some(span),
            }
            from = begin;
        } else if let Some(speaker) = self.speaker {
            // A frame without a subject speaks for the speaker.
            if !frame.parts.iter().any(|p| matches!(p, Part::Subject)) {
                subject = Some(speaker.to_owned());
            }
        }
        // The parts after it, left to right.
        let mut at = start + words.len();
        let rest = &frame.parts[part + 1..];
        let mut i = 0;
        while i < rest.len() {
            match &rest[i] {
                Part::Words(w) => {
                    if !self.words_at(w, at) || self.boundary_before(at) {
                        return None;
                    }
                    coverage += w.len();
                    at += w.len();
                }
                Part::Copula => {
                    if self.boundary_before(at) {
                        return None;
                    }
                    at = self.copula(at)?;
                    coverage += 1;
                }
                span @ (Part::Subject | Part::Object | Part::Possessive) => {
                    // A span ends where the next part matches, or at its
                    // clause's end when it is the frame's last.
                    let end = match rest.get(i + 1) {
                        Some(next) => (at + 1..(at + 7).min(self.toks.len()))
                            .find(|&e| match next {
                                Part::Words(w) => self.words_at(w, e),
                                Part::Copula => self.copula(e).is_some(),
                                _ => false,
                            })
                            .filter(|&e| {
                                (at + 1..=e).all(|j| j == e || !self.boundary_before(j))
                            })?,
                        None => self.clause_end(at).min(at + MAX_OBJECT_TOKENS),
                    };
                    if end <= at || self.boundary_before(at) {
                        return None;
                    }
                    match span {
                        Part::Object => object = Some((at, end)),
                        _ => subject = Some(self.subject(at, end)?),
                    }
                    at = end;
                }
            }
            i += 1;
        }
        let relation = &RELATIONS[frame.relation];
        let (o_from, o_to) = object?;
        let object = self.object(relation.object, o_from, o_to)?;
        let subject = subject?;
        if object == subject {
            return None;
        }
        let plain = !self.guarded(from, at);
        let matched = if frame.canonical {
            Match::Exact
        } else {
            Match::Paraphrase
        };
        Some((
            from,
            coverage,
            Statement {
                relation,
                subject,
                object,
                matched,
                plain,
            },
        ))
    }

    /// Where the clause that continues at `at` ends.
    fn clause_end(&self, at: usize) -> usize {
        let n = self.toks.len();
        if at + 1 >= n {
            return n;
        }
        self.layout().next_clause[at + 1]
    }

    /// The object of type `ty` in `[from, to)`, normalized, if it is one.
    fn object(&self, ty: ObjectType, from: usize, mut to: usize) -> Option<String> {
        while to > from + 1 && TRAILING.contains(&self.toks[to - 1]) {
            to -= 1;
        }
        // From the end of the word before, so a currency sign is in.
        let begin = match from {
            0 => 0,
            f => self.starts[f - 1] + self.toks[f - 1].len(),
        };
        let span = &self.normalized[begin..self.starts[to - 1] + self.toks[to - 1].len()];
        let mut from = from;
        match ty {
            _ if ty.is_name() => {
                if self.toks[from] == "the" {
                    from += 1;
                }
                // The object is the longest name it opens with.
                let by_start = &self.layout().by_start;
                let first = by_start.partition_point(|&(b, _)| b < from);
                let end = by_start[first..]
                    .iter()
                    .take_while(|&&(b, _)| b == from)
                    .map(|&(_, e)| e)
                    .filter(|&e| e <= to)
                    .max()?;
                Some(self.toks[from..end].join(" "))
            }
            Date => {
                let typed = slots::find_values(span)
                    .into_iter()
                    .find(|v| v.ty == ValueType::Date)
                    .map(|v| span[v.start..v.end].to_owned());
                typed.or_else(|| {
                    self.toks[from..to]
                        .iter()
                        .find(|t| t.len() == 4 && t.bytes().all(|b| b.is_ascii_digit()))
                        .map(|t| (*t).to_owned())
                })
            }
            Money => slots::find_values(span)
                .into_iter()
                .find(|v| v.ty == ValueType::Money)
                .map(|v| span[v.start..v.end].to_owned()),
            Number => {
                // A token opens with a letter or digit, so this is the
                // old all-digits-dashes-dots test.
                let t = self.toks[from];
                super::soft::is_number(t).then(|| t.to_owned())
            }
            _ => {
                if matches!(self.toks[from], "a" | "an" | "the") {
                    from += 1;
                }
                // A short phrase, cut at the first function word after
                // its head ("a nurse at the hospital" → "nurse").
                let end = (from + 1..to)
                    .find(|&j| text::is_stop_word(self.toks[j]) || WHEN.contains(&self.toks[j]))
                    .unwrap_or(to)
                    .min(from + 4);
                let head = self.toks.get(from)?;
                if from >= end
                    || text::is_stop_word(head)
                    || PRONOUNS.contains(head)
                    || EVALUATIVE.contains(head)
                {
                    return None;
                }
                Some(self.toks[from..end].join(" "))
            }
        }
    }

    /// Whether the sentence around `[from, to)` is not a plain statement:
    /// a question, a negation, a hedge, reported speech, or a subject
    /// joined to another.
    fn guarded(&self, from: usize, to: usize) -> bool {
        let l = self.layout();
        let start = l.sentence_start[from];
        let end = l.next_sentence[to.max(from + 1)];
        let question = l.question_from[end - 1] || QUESTION_WORDS.contains(&self.toks[start]);
        let any = |counts: &[u32], from: usize, to: usize| counts[to] > counts[from];
        let denied = any(&l.negations, start, end);
        let hedged = any(&l.hedges, start, end);
        let reported = any(&l.reports, start, from);
        let joined =
            from > start && matches!(self.toks[from - 1], "and" | "or" | "&" | "with" | "nor");
        question || denied || hedged || reported || joined
    }
}

impl Layout {
    fn of(r: &Reading) -> Layout {
        let (toks, n) = (r.toks, r.toks.len());
        let gap = |i: usize| &r.normalized[r.starts[i - 1] + toks[i - 1].len()..r.starts[i]];
        let breaks = |chars: &[char]| -> Vec<bool> {
            (0..=n)
                .map(|i| i == 0 || i == n || gap(i).contains(chars))
                .collect()
        };
        let boundary = breaks(&['.', ',', ';', ':', '!', '?', '(', ')', '"', '\n']);
        let sentence = breaks(&['.', '!', '?', ':', '\n']);
        let mut next_clause = vec![n; n + 1];
        let mut next_sentence = vec![n; n + 1];
        for i in (0..n).rev() {
            let ends_clause = boundary[i] || CLAUSE_WORDS.contains(&toks[i]);
            next_clause[i] = if ends_clause { i } else { next_clause[i + 1] };
            next_sentence[i] = if sentence[i] { i } else { next_sentence[i + 1] };
        }
        let mut sentence_start = Vec::with_capacity(n);
        let mut current = 0;
        for (i, starts) in sentence.iter().take(n).enumerate() {
            if *starts {
                current = i;
            }
            sentence_start.push(current);
        }
        // Backwards over the text: whether a `?` comes before the next
        // `.`, `!` or newline, read at each token's start.
        let bytes = r.normalized.as_bytes();
        let mut question_from = vec![false; n];
        let (mut q, mut at) = (false, bytes.len());
        for i in (0..n).rev() {
            while at > r.starts[i] {
                at -= 1;
                match bytes[at] {
                    b'.' | b'!' | b'\n' => q = false,
                    b'?' => q = true,
                    _ => {}
                }
            }
            question_from[i] = q;
        }
        let counts = |is: &dyn Fn(&str) -> bool| -> Vec<u32> {
            let mut c = Vec::with_capacity(n + 1);
            c.push(0);
            for t in toks {
                c.push(c[c.len() - 1] + u32::from(is(t)));
            }
            c
        };
        let negations = counts(&|t| NEGATIONS.contains(&t) || t.ends_with("n't"));
        let hedges = counts(&|t| HEDGES.contains(&t));
        let reports = counts(&|t| REPORTS.contains(&t));
        let mut names = name_spans(r.raw, toks);
        names.sort_unstable();
        names.dedup();
        let mut depth = vec![0i64; n + 1];
        for &(b, e) in &names {
            depth[b] += 1;
            depth[e] -= 1;
        }
        let in_name = depth
            .iter()
            .take(n)
            .scan(0, |d, x| {
                *d += x;
                Some(*d > 0)
            })
            .collect();
        let mut by_start: Vec<(usize, usize)> = r
            .mentions
            .iter()
            .map(|m| (m.start, m.end))
            .chain(names.iter().copied())
            .collect();
        by_start.sort_unstable();
        by_start.dedup();
        let mut by_end: Vec<(usize, usize)> = by_start.iter().map(|&(b, e)| (e, b)).collect();
        by_end.sort_unstable();
        Layout {
            boundary,
            next_clause,
            next_sentence,
            sentence_start,
            question_from,
            negations,
            hedges,
            reports,
            names,
            in_name,
            by_end,
            by_start,
        }
    }
}

/// Words of time that end a free-text object ("a chef *last* year").
const WHEN: &[&str] = &[
    "last",
    "this",
    "next",
    "ago",
    "yesterday",
    "today",
    "tonight",
    "tomorrow",
    "now",
    "again",
    "recently",
    "lately",
    "already",
    "anymore",
    "currently",
    "instead",
    "these",
    "since",
];

/// Judgements, not values: "my car is *the best*" states no car.
const EVALUATIVE: &[&str] = &[
    "best",
    "worst",
    "great",
    "good",
    "bad",
    "amazing",
    "awesome",
    "fine",
    "ok",
    "okay",
    "nice",
    "cool",
    "important",
    "different",
    "same",
    "fun",
    "hard",
    "easy",
    "better",
    "worse",
    "perfect",
    "favorite",
    "favourite",
    "one",
    "thing",
    "mix",
    "fan",
    "big",
    "huge",
    "little",
    "lot",
];

/// Pronouns: never a subject or a free-text object.
const PRONOUNS: &[&str] = &[
    "i",
    "me",
    "you",
    "he",
    "him",
    "she",
    "her",
    "it",
    "we",
    "us",
    "they",
    "them",
    "this",
    "that",
    "these",
    "those",
    "there",
    "here",
    "something",
    "someone",
    "somewhere",
];

/// Lowercase words that may stand inside a capitalised name ("Bank of
/// America", "Leonardo da Vinci").
const NAME_JOINERS: &[&str] = &[
    "of", "de", "da", "van", "von", "del", "la", "le", "du", "bin",
];

/// The capitalised names of `raw`, each normalized to a token sequence: runs
/// of capitalised words (joined by [`NAME_JOINERS`]). A word that opens a
/// sentence is a name only when a capitalised word follows it or it is not
/// a function word (so "The", "My", "I" open no name).
fn capitalised_names(raw: &str) -> Vec<Vec<String>> {
    let mut words: Vec<(&str, bool)> = Vec::new();
    let mut last_end = 0;
    for tok in text::tokens(raw) {
        let start = tok.as_ptr() as usize - raw.as_ptr() as usize;
        let gap = &raw[last_end..start];
        let opens = words.is_empty() || gap.contains(['.', '!', '?', ':', '\n', '"']);
        last_end = start + tok.len();
        words.push((tok, opens));
    }
    let is_cap = |w: &str| w.chars().next().is_some_and(char::is_uppercase);
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let (w, opens) = words[i];
        let lower = text::normalize(w);
        // Months and weekdays are capitalised but name nothing.
        let function = text::is_stop_word(&lower)
            || PRONOUNS.contains(&lower.as_str())
            || text::is_month(&lower)
            || WEEKDAYS.contains(&lower.as_str());
        let next_cap = words.get(i + 1).is_some_and(|(n, o)| !o && is_cap(n));
        if !is_cap(w) || function || (opens && !next_cap && lower.len() < 2) {
            i += 1;
            continue;
        }
        let mut run = vec![lower];
        let mut j = i + 1;
        while j < words.len() && !words[j].1 {
            let (n, _) = words[j];
            let ln = text::normalize(n);
            let capital = is_cap(n) && !text::is_stop_word(&ln) && !text::is_month(&ln);
            let joiner = NAME_JOINERS.contains(&ln.as_str())
                && words.get(j + 1).is_some_and(|(m, o)| !o && is_cap(m));
            if !(capital || joiner) {
                break;
            }
            run.push(ln);
            j += 1;
        }
        out.push(
            run.iter()
                .flat_map(|w| text::tokens(w).map(str::to_owned).collect::<Vec<_>>())
                .collect(),
        );
        i = j;
    }
    out
}

/// Where the capitalised names of `raw` occur in `toks`, as token ranges:
/// each distinct name is looked for (the first [`MAX_NAMES`] of them), in
/// one pass over the tokens by the name's first word.
fn name_spans(raw: &str, toks: &[&str]) -> Vec<(usize, usize)> {
    let mut distinct: FxHashSet<Vec<String>> = FxHashSet::default();
    let mut by_first: FxHashMap<String, Vec<Vec<String>>> = FxHashMap::default();
    for name in capitalised_names(raw) {
        if distinct.len() == MAX_NAMES {
            break;
        }
        if let Some(first) = name.first().cloned()
            && distinct.insert(name.clone())
        {
            by_first.entry(first).or_default().push(name);
        }
    }
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        for name in by_first.get(*t).into_iter().flatten() {
            let here = toks
                .get(i..i + name.len())
                .is_some_and(|w| w.iter().zip(name).all(|(a, b)| *a == b));
            if here {
                out.push((i, i + name.len()));
            }
        }
    }
    out
}

/// The row with this slot name.
pub fn relation(slot: &str) -> Option<&'static RelationSpec> {
    RELATIONS.iter().find(|r| r.slot == slot)
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::extract::{Extractor, GazetteerWriter, KeyedBy};
    use crate::text::normalize;

    /// The key and value the extractor reads in `raw`, with `participants`.
    fn read(raw: &str, participants: &[&str]) -> Option<(String, String)> {
        let mut g = GazetteerWriter::default();
        for p in participants {
            g.register(p, crate::extract::EntityKind::Person);
        }
        let people: Vec<crate::names::Name> = participants
            .iter()
            .map(|p| crate::names::Name::from(crate::fact::name_key(p)))
            .collect();
        let e = Extractor::default().extract(raw, &normalize(raw), g.view(), &people, |_| false);
        e.keyed.map(|k| {
            assert!(matches!(k.by, KeyedBy::Relation(..)), "{raw}");
            (k.key.to_string(), k.value)
        })
    }

    /// A sample object of each type, as written and as keyed.
    fn sample(ty: ObjectType) -> (&'static str, &'static str) {
        match ty {
            Place => ("Lisbon", "lisbon"),
            Person => ("Bo Chan", "bo chan"),
            Organisation => ("Acme Robotics", "acme robotics"),
            Date => ("March 3, 1990", "mar 3"),
            Number => ("42", "42"),
            Money => ("$1,200", "$1200"),
            Text => ("a nurse", "nurse"),
        }
    }

    /// Writes a frame out with a subject and an object.
    fn sentence(frame: &str, subject: &str, object: &str) -> String {
        let object = match frame.split_whitespace().rev().nth(1) {
            Some("a" | "an") => object.trim_start_matches("a "),
            _ => object,
        };
        let s = frame
            .replace("S's", &format!("{subject}'s"))
            .replace("<is>", "is")
            .split_whitespace()
            .map(|w| match w {
                "S" => subject,
                "O" => object,
                w => w,
            })
            .collect::<Vec<_>>()
            .join(" ");
        format!("{}{}.", s[..1].to_uppercase(), &s[1..])
    }

    #[test]
    fn every_relation_and_paraphrase_round_trips() {
        let mut frames = 0;
        for spec in RELATIONS {
            let (object, value) = sample(spec.object);
            let expected = Some((format!("ann lee/{}", spec.slot), value.to_owned()));
            for noun in spec.nouns {
                for nominal in nominal(spec) {
                    let text = sentence(&nominal.replace('N', noun), "Ann Lee", object);
                    assert_eq!(read(&text, &[]), expected, "{text}");
                    frames += 1;
                }
                // The speaker's own: "my N is O".
                let text = format!("Ann Lee: my {noun} is {object}.");
                assert_eq!(read(&text, &["Ann Lee", "Bo Chan"]), expected, "{text}");
            }
            for frame in spec.frames {
                let (text, people): (String, &[&str]) = if frame.contains('S') {
                    (sentence(frame, "Ann Lee", object), &[])
                } else {
                    (
                        format!("Ann Lee: {}", sentence(frame, "", object)),
                        &["Ann Lee", "Bo Chan"],
                    )
                };
                assert_eq!(read(&text, people), expected, "{text}");
                frames += 1;
            }
        }
        // Every compiled frame was read once.
        assert_eq!(frames, COMPILED.frames.len());
        assert!(RELATIONS.len() >= 40, "{} relations", RELATIONS.len());
    }

    #[test]
    fn first_person_is_the_speaker() {
        let people = ["Caroline", "Melanie"];
        assert_eq!(
            read("Caroline: I just moved to Denver!", &people),
            Some(("caroline/residence".into(), "denver".into()))
        );
        assert_eq!(
            read("Melanie: I'm working at Blue Bottle these days.", &people),
            Some(("melanie/employer".into(), "blue bottle".into()))
        );
        // Without a speaker label, two participants leave "I" unresolved.
        assert_eq!(read("I just moved to Denver!", &people), None);
        assert_eq!(
            read("I just moved to Denver!", &["Caroline"]),
            Some(("caroline/residence".into(), "denver".into()))
        );
    }

    #[test]
    fn what_is_not_a_plain_statement_gets_no_key() {
        let people = ["Caroline", "Melanie"];
        for text in [
            "Caroline: I don't live in Denver.",
            "Caroline: I no longer work at Acme.",
            "Caroline: Do you live in Denver?",
            "Caroline: Melanie lives in Denver, right?",
            "Caroline: I might move to Denver.",
            "Caroline: I'm thinking I'll work at Acme.",
            "Caroline: If I moved to Denver, I'd be happy.",
            "Caroline: Melanie said that Bo Chan lives in Denver.",
            "Caroline: According to Bo Chan, Ann Lee works at Acme.",
            "Caroline: Ann Lee and Bo Chan live in Denver.",
            "Caroline: my sister lives in Denver.",
            "Caroline: she lives in Denver.",
            "Caroline: I moved to a new apartment.",
            "Caroline: Ann Lee moved to Denver and Bo Chan works at Acme.",
        ] {
            assert_eq!(read(text, &people), None, "{text}");
        }
    }

    #[test]
    fn objects_stop_at_their_clause_and_are_typed() {
        assert_eq!(
            read(
                "Ann Lee moved to New York City with her dog last week.",
                &[]
            ),
            Some(("ann lee/residence".into(), "new york city".into()))
        );
        assert_eq!(
            read("Ann Lee works at the Bank of America, downtown.", &[]),
            Some(("ann lee/employer".into(), "bank of america".into()))
        );
        assert_eq!(
            read("Ann Lee was born in 1990.", &[]),
            Some(("ann lee/birth_date".into(), "1990".into()))
        );
        assert_eq!(
            read("Ann Lee was born in Lisbon.", &[]),
            Some(("ann lee/birthplace".into(), "lisbon".into()))
        );
        assert_eq!(
            read("Ann Lee works as a nurse at the general hospital.", &[]),
            Some(("ann lee/occupation".into(), "nurse".into()))
        );
        assert_eq!(read("The capital of France is beautiful.", &[]), None);
    }

    #[test]
    fn table_is_well_formed() {
        let slots: std::collections::HashSet<_> = RELATIONS.iter().map(|r| r.slot).collect();
        assert_eq!(slots.len(), RELATIONS.len(), "slot names are unique");
        for r in RELATIONS {
            assert!(!r.nouns.is_empty() || !r.frames.is_empty(), "{}", r.slot);
            assert!(
                crate::extract::slots::slot(r.slot).is_none(),
                "{} is a slot",
                r.slot
            );
            for n in r.nouns {
                assert_eq!(normalize(n), *n, "nouns are stored normalized");
            }
            for f in r.frames {
                assert!(f.contains('O'), "{f} has an object");
                assert!(
                    f.contains('S') || f.starts_with("i ") || f.starts_with("i'"),
                    "{f}: a frame without a subject is the speaker's"
                );
            }
        }
        assert!(COMPILED.frames.iter().all(|f| f.anchor().is_some()));
    }
}
