//! Text normalization, tokenization, stop words and token-boundary containment.
//!
//! One normalization serves three readers: the index (terms), the extractor
//! (values and nouns) and the evaluation judge (does a block expose a value?).
//! Keeping them on one function is what makes "the block contains the value"
//! mean the same thing at write time and at judgement time.
//!
//! Normalization follows Appendix B of the PFM paper:
//! 1. lowercase;
//! 2. month names become their three-letter abbreviations (`December` → `dec`,
//!    `Sept` → `sep`), whole words only;
//! 3. digit-grouping commas are removed (`1,200` → `1200`) — a comma between a
//!    digit and exactly three digits;
//! 4. no space before am/pm (`9:30 am` → `9:30am`); `a.m.`/`p.m.` become `am`/`pm`;
//! 5. typographic apostrophes become `'`.
//!
//! Tokens are maximal runs of alphanumeric characters; a single connector
//! (`:` `.` `-` `/` `'` `_`) between two alphanumerics stays inside the token,
//! so `9:30am`, `2025-06-11`, `16c` and `check-in` are one token each while a
//! sentence-final period is not part of the word before it. A possessive `'s`
//! is dropped (`alex's` → `alex`).

/// Normalizes `text` as described in the module documentation.
///
/// Idempotent: `normalize(&normalize(x)) == normalize(x)` (checked by
/// `normalize_is_idempotent`).
pub fn normalize(text: &str) -> String {
    let lower = if text.is_ascii() {
        text.to_ascii_lowercase()
    } else {
        text.to_lowercase().replace(['\u{2019}', '\u{2018}'], "'")
    };
    // One pass over byte offsets, each on a char boundary: no per-char or
    // per-word allocation (this runs on every observation, query and
    // replayed fact). `tests::normalize_matches_the_char_by_char_reading`
    // checks it against the plain reading.
    let at = |i: usize| char_at(&lower, i);
    let mut out = String::with_capacity(lower.len());
    let mut i = 0;
    while let Some(c) = at(i) {
        if c.is_alphabetic() {
            let start = i;
            while let Some(c) = at(i).filter(|c| c.is_alphabetic()) {
                i += c.len_utf8();
            }
            let word = &lower[start..i];
            // `a.m.` / `p.m.` after a number.
            if (word == "a" || word == "p")
                && lower.as_bytes()[i..].starts_with(b".m")
                && !at(i + 2).is_some_and(|c| c.is_alphanumeric())
                && ends_with_digit_then_space(&out)
            {
                trim_trailing_space(&mut out);
                out.push_str(if word == "a" { "am" } else { "pm" });
                i += 2;
                if at(i) == Some('.') {
                    i += 1;
                }
                continue;
            }
            if (word == "am" || word == "pm") && ends_with_digit_then_space(&out) {
                trim_trailing_space(&mut out);
            }
            out.push_str(month_abbreviation(word).unwrap_or(word));
            continue;
        }
        if c == ','
            && out.ends_with(|p: char| p.is_ascii_digit())
            && is_digit_group(&lower.as_bytes()[i + 1..])
        {
            i += 1;
            continue;
        }
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// True when `out` ends with a digit followed by one or more spaces.
fn ends_with_digit_then_space(out: &str) -> bool {
    let trimmed = out.trim_end_matches(' ');
    trimmed.len() < out.len() && trimmed.ends_with(|c: char| c.is_ascii_digit())
}

fn trim_trailing_space(out: &mut String) {
    let keep = out.trim_end_matches(' ').len();
    out.truncate(keep);
}

/// Exactly three digits, then something that is not a digit (or the end).
/// On bytes: a character that is not ASCII never starts with a digit byte.
fn is_digit_group(rest: &[u8]) -> bool {
    rest.len() >= 3
        && rest[..3].iter().all(u8::is_ascii_digit)
        && !rest.get(3).is_some_and(u8::is_ascii_digit)
}

/// The abbreviation of a lowercase full month name, if `word` is one.
pub fn month_abbreviation(word: &str) -> Option<&'static str> {
    Some(match word {
        "january" => "jan",
        "february" => "feb",
        "march" => "mar",
        "april" => "apr",
        "june" => "jun",
        "july" => "jul",
        "august" => "aug",
        "september" | "sept" => "sep",
        "october" => "oct",
        "november" => "nov",
        "december" => "dec",
        _ => return None,
    })
}

/// Whether `token` is a (normalized) month abbreviation.
pub fn is_month(token: &str) -> bool {
    matches!(
        token,
        "jan"
            | "feb"
            | "mar"
            | "apr"
            | "may"
            | "jun"
            | "jul"
            | "aug"
            | "sep"
            | "oct"
            | "nov"
            | "dec"
    )
}

fn is_connector(c: char) -> bool {
    matches!(c, ':' | '.' | '-' | '/' | '\'' | '_')
}

/// Iterates over the tokens of already-normalized text, as sub-slices.
pub fn tokens(normalized: &str) -> Tokens<'_> {
    Tokens {
        text: normalized,
        pos: 0,
    }
}

/// Iterator returned by [`tokens`].
#[derive(Clone, Debug)]
pub struct Tokens<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        // Bytes first: every text written, replayed or asked is tokenized,
        // several times on the write path (a tenth of a bulk build's
        // instructions, issue 24), and nearly all of it is ASCII; a
        // character is decoded only where a byte is not ASCII.
        // `tests::tokens_match_the_char_by_char_reading` checks the reading.
        let text = self.text;
        let bytes = text.as_bytes();
        let mut i = self.pos;
        loop {
            let b = *bytes.get(i)?;
            if b.is_ascii_alphanumeric() {
                break;
            }
            if b.is_ascii() {
                i += 1;
                continue;
            }
            let c = char_at(text, i)?;
            if c.is_alphanumeric() {
                break;
            }
            i += c.len_utf8();
        }
        let start = i;
        let mut end = i;
        while let Some(&b) = bytes.get(i) {
            if b.is_ascii_alphanumeric() {
                i += 1;
                end = i;
            } else if b.is_ascii() {
                // A connector is one ASCII byte, and the alphanumeric after
                // it comes next.
                if is_connector(char::from(b))
                    && char_at(text, i + 1).is_some_and(char::is_alphanumeric)
                {
                    i += 1;
                } else {
                    break;
                }
            } else {
                match char_at(text, i) {
                    Some(c) if c.is_alphanumeric() => {
                        i += c.len_utf8();
                        end = i;
                    }
                    _ => break,
                }
            }
        }
        self.pos = end;
        // English possessive: `alex's` is the token `alex`.
        let token = &text[start..end];
        Some(match token.strip_suffix("'s") {
            Some(stem) if !stem.is_empty() => stem,
            _ => token,
        })
    }
}

/// The character at byte offset `i` of `s` (a char boundary), decoded only
/// when it is not ASCII: normalization and tokenization read every
/// character of every text written, replayed or asked, and nearly all of
/// them are ASCII.
#[inline]
fn char_at(s: &str, i: usize) -> Option<char> {
    let b = *s.as_bytes().get(i)?;
    if b.is_ascii() {
        Some(char::from(b))
    } else {
        s[i..].chars().next()
    }
}

/// Normalizes `text` and returns its tokens as owned strings.
pub fn normalized_tokens(text: &str) -> Vec<String> {
    tokens(&normalize(text)).map(str::to_owned).collect()
}

/// Whether a (normalized) token is a stop word.
///
/// A hash-set lookup, not a binary search of the sorted word list: every
/// indexed, extracted and restored text asks this of each of its tokens,
/// and the search's string comparisons were a fifth of a store's restore
/// time.
pub fn is_stop_word(token: &str) -> bool {
    static SET: std::sync::LazyLock<rustc_hash::FxHashSet<&'static str>> =
        std::sync::LazyLock::new(|| STOP_WORDS.iter().copied().collect());
    token.len() <= MAX_STOP_WORD_LEN && SET.contains(token)
}

/// The longest stop word's length in bytes (longer tokens are never looked up).
const MAX_STOP_WORD_LEN: usize = 10;

/// Content tokens: tokens of `normalized` that are not stop words.
pub fn content_tokens(normalized: &str) -> impl Iterator<Item = &str> {
    tokens(normalized).filter(|t| !is_stop_word(t))
}

/// A token's form in the index and in queries: its English (Snowball)
/// stem when `stem` is set and the token is a plain lowercase ASCII word,
/// otherwise the token itself. Numbers, dates, times and codes (`16c`,
/// `9:30am`, `check-in`) keep their exact form, so slot values still match
/// only themselves; words match their inflections (`researching` and
/// `researched` both index as `research`).
///
/// Every place a token becomes a term — a document's terms, a query's
/// terms, a lookup of a name's postings, the abstention gate's coverage —
/// goes through this one function, so the two sides always agree.
pub fn index_form(token: &str, stem: bool) -> std::borrow::Cow<'_, str> {
    if is_stemmed(token, stem) {
        english_stem(token)
    } else {
        std::borrow::Cow::Borrowed(token)
    }
}

/// Whether [`index_form`] stems `token`: a plain lowercase ASCII word.
fn is_stemmed(token: &str, stem: bool) -> bool {
    stem && token.bytes().all(|b| b.is_ascii_lowercase())
}

/// The English Snowball stem of a word [`is_stemmed`] accepts.
fn english_stem(word: &str) -> std::borrow::Cow<'_, str> {
    static STEMMER: std::sync::LazyLock<rust_stemmers::Stemmer> = std::sync::LazyLock::new(|| {
        rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English)
    });
    STEMMER.stem(word)
}

/// How many words a thread's stem cache ([`push_index_form`]) holds before
/// it starts over: enough for a store's common words.
const STEM_CACHE: usize = 4096;

/// The longest word the stem cache keeps (bytes), so that it holds at most
/// a few hundred KiB whatever the texts: a longer word is stemmed each
/// time (hostile input can make words of up to a text's length).
const STEM_CACHE_WORD: usize = 32;

/// Appends [`index_form`]`(token, stem)` to `out`, with the stems of a
/// thread's recent words cached: the write path forms every word of every
/// indexed fact, and the Snowball stemmer (which allocates each stem it
/// changes) was 3% of a bulk build (issue 24), while a store's words
/// repeat. The cache starts over when full, so it never holds more than
/// 4,096 words of at most 32 bytes (`STEM_CACHE`, `STEM_CACHE_WORD`);
/// `tests::cached_forms_are_the_index_forms` checks it against
/// [`index_form`].
pub fn push_index_form(token: &str, stem: bool, out: &mut String) {
    thread_local! {
        static STEMS: std::cell::RefCell<rustc_hash::FxHashMap<Box<str>, Box<str>>> =
            std::cell::RefCell::default();
    }
    if !is_stemmed(token, stem) {
        out.push_str(token);
        return;
    }
    if token.len() > STEM_CACHE_WORD {
        out.push_str(&english_stem(token));
        return;
    }
    STEMS.with_borrow_mut(|stems| {
        if let Some(form) = stems.get(token) {
            out.push_str(form);
            return;
        }
        let form = english_stem(token);
        out.push_str(&form);
        if stems.len() >= STEM_CACHE {
            stems.clear();
        }
        stems.insert(token.into(), form.into());
    });
}

/// Token-boundary containment: whether the token sequence of `needle` occurs
/// contiguously in the token sequence of `haystack`, both normalized first.
///
/// `"Dec 2"` is not contained in `"due Dec 24"`, `"9:30am"` is not contained in
/// `"19:30am"`, and `"$1,200"` is contained in `"a day rate of 1200"`.
pub fn contains(haystack: &str, needle: &str) -> bool {
    let hay_norm = normalize(haystack);
    let needle_norm = normalize(needle);
    let hay: Vec<&str> = tokens(&hay_norm).collect();
    let needle: Vec<&str> = tokens(&needle_norm).collect();
    contains_tokens(&hay, &needle)
}

/// [`contains`] over token slices that are already normalized.
pub fn contains_tokens<S: AsRef<str>, T: AsRef<str>>(hay: &[S], needle: &[T]) -> bool {
    if needle.is_empty() {
        return false;
    }
    hay.windows(needle.len()).any(|window| {
        window
            .iter()
            .zip(needle)
            .all(|(a, b)| a.as_ref() == b.as_ref())
    })
}

/// English stop words (NLTK's list plus a few conversational fillers), sorted
/// (a test keeps them so, which keeps duplicates out). Function words only:
/// anything that can carry a slot value (numbers, months, `room`) or a name
/// is deliberately absent.
const STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "don't",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "i'm",
    "if",
    "in",
    "into",
    "is",
    "it",
    "it's",
    "its",
    "itself",
    "just",
    "let's",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "that's",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain reading of the module documentation's rules, a char at a
    /// time: the slow twin of [`normalize`].
    fn char_by_char(text: &str) -> String {
        let lower = if text.is_ascii() {
            text.to_ascii_lowercase()
        } else {
            text.to_lowercase().replace(['\u{2019}', '\u{2018}'], "'")
        };
        let chars: Vec<char> = lower.chars().collect();
        let mut out = String::with_capacity(lower.len());
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c.is_alphabetic() {
                let start = i;
                while i < chars.len() && chars[i].is_alphabetic() {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                // `a.m.` / `p.m.` after a number.
                if (word == "a" || word == "p")
                    && chars.get(i) == Some(&'.')
                    && chars.get(i + 1) == Some(&'m')
                    && !chars.get(i + 2).is_some_and(|c| c.is_alphanumeric())
                    && ends_with_digit_then_space(&out)
                {
                    trim_trailing_space(&mut out);
                    out.push_str(if word == "a" { "am" } else { "pm" });
                    i += 2;
                    if chars.get(i) == Some(&'.') {
                        i += 1;
                    }
                    continue;
                }
                if (word == "am" || word == "pm") && ends_with_digit_then_space(&out) {
                    trim_trailing_space(&mut out);
                }
                out.push_str(month_abbreviation(&word).unwrap_or(&word));
                continue;
            }
            if c == ','
                && out.ends_with(|p: char| p.is_ascii_digit())
                && is_digit_group_chars(&chars[i + 1..])
            {
                i += 1;
                continue;
            }
            out.push(c);
            i += 1;
        }
        out
    }

    fn is_digit_group_chars(rest: &[char]) -> bool {
        rest.len() >= 3
            && rest[..3].iter().all(|c| c.is_ascii_digit())
            && !rest.get(3).is_some_and(|c| c.is_ascii_digit())
    }

    #[test]
    fn cached_forms_are_the_index_forms() {
        // More distinct words than the cache holds, each asked for twice
        // (a miss, then a hit or a miss after a fresh start), with inflected
        // words, numbers and codes among them.
        let letters = ["a", "e", "i", "n", "s", "t", "ing", "ed", "ies", "9"];
        let mut words = Vec::new();
        for a in letters {
            for b in letters {
                for c in letters {
                    for d in ["", "s", "ness", "ly", "ation"] {
                        words.push(format!("re{a}{b}{c}{d}"));
                    }
                }
            }
        }
        // Words too long for the cache, stemmed each time.
        words.extend((0..40).map(|n| format!("{}ations", "re".repeat(n))));
        assert!(words.len() > STEM_CACHE);
        assert!(words.iter().any(|w| w.len() > STEM_CACHE_WORD));
        for stem in [true, false] {
            for round in 0..2 {
                for word in &words {
                    let mut out = String::from("x");
                    push_index_form(word, stem, &mut out);
                    assert_eq!(out[1..], *index_form(word, stem), "{word} (round {round})");
                }
            }
        }
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        #[test]
        fn normalize_matches_the_char_by_char_reading(
            words in proptest::collection::vec(
                proptest::prop_oneof![
                    "[A-Za-z]{1,8}",
                    "[0-9]{1,5}",
                    proptest::sample::select(vec![
                        " ", "  ", ",", ", ", ".", ":", "a.m.", "p.m", "A.M.", "am", "PM",
                        "9 a.m.", "7 p.m", "10  P.M.", "5 am", "3 pm.", "2 a.mx", "1 p.", "8 a.m.x",
                        "Sept", "December", "may", "1,200", "12,5000", "\u{2019}s", "É", "ß",
                        "İ", "naïve", "\u{2018}", "-", "/", "'", "_", "$",
                    ]).prop_map(str::to_owned),
                ],
                0..24,
            )
        ) {
            let text = words.concat();
            proptest::prop_assert_eq!(normalize(&text), char_by_char(&text));
        }

        #[test]
        fn tokens_match_the_char_by_char_reading(
            words in proptest::collection::vec(
                proptest::prop_oneof![
                    "[a-z]{1,6}",
                    "[0-9]{1,4}",
                    proptest::sample::select(vec![
                        " ", "  ", ":", ".", "-", "/", "'", "_", "'s", "s'", "--", ".-", "$",
                        ",", "é", "ß", "日本", "\u{2019}", "a:", ":b", "'s ", "x's",
                    ]).prop_map(str::to_owned),
                ],
                0..24,
            )
        ) {
            let text = words.concat();
            let fast: Vec<&str> = tokens(&text).collect();
            proptest::prop_assert_eq!(fast, tokens_char_by_char(&text));
        }
    }

    /// The tokenizer as its module documentation reads, a char at a time.
    fn tokens_char_by_char(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut pos = 0;
        loop {
            let rest = &text[pos..];
            let Some((skip, _)) = rest.char_indices().find(|(_, c)| c.is_alphanumeric()) else {
                return out;
            };
            let start = pos + skip;
            let mut end = start;
            let mut chars = text[start..].char_indices().peekable();
            while let Some((off, c)) = chars.next() {
                if c.is_alphanumeric() {
                    end = start + off + c.len_utf8();
                } else if is_connector(c)
                    && chars.peek().is_some_and(|(_, n)| n.is_alphanumeric())
                    && end == start + off
                {
                    continue;
                } else {
                    break;
                }
            }
            pos = end;
            let token = &text[start..end];
            out.push(match token.strip_suffix("'s") {
                Some(stem) if !stem.is_empty() => stem,
                _ => token,
            });
        }
    }

    #[test]
    fn stop_words_are_sorted_and_within_the_length_bound() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(STOP_WORDS.iter().all(|w| w.len() <= MAX_STOP_WORD_LEN));
        assert!(STOP_WORDS.iter().all(|w| is_stop_word(w)));
        assert!(!is_stop_word("seattle") && !is_stop_word("yourselvesx"));
    }

    #[test]
    fn appendix_b_normalization() {
        assert_eq!(normalize("Moved to December 24"), "moved to dec 24");
        assert_eq!(normalize("Sept 3 and September 4"), "sep 3 and sep 4");
        assert_eq!(normalize("A day rate of $1,200"), "a day rate of $1200");
        assert_eq!(normalize("cap 1,200,000 EUR"), "cap 1200000 eur");
        assert_eq!(normalize("at 9:30 AM"), "at 9:30am");
        assert_eq!(normalize("at 9 pm."), "at 9pm.");
        assert_eq!(normalize("at 10:45 a.m. sharp"), "at 10:45am sharp");
        assert_eq!(normalize("Alex’s standup"), "alex's standup");
    }

    #[test]
    fn normalization_leaves_lookalikes_alone() {
        // Not digit grouping: a list, and a decimal-looking group of four.
        assert_eq!(normalize("rooms 4, 500 and 6"), "rooms 4, 500 and 6");
        assert_eq!(normalize("1,2345"), "1,2345");
        // "am" as a word, not after a number.
        assert_eq!(normalize("I am here"), "i am here");
        // Month names only as whole words.
        assert_eq!(normalize("Marches and Mayday"), "marches and mayday");
    }

    #[test]
    fn normalize_is_idempotent() {
        for s in [
            "Moved to December 24, 2025 at 9:30 AM",
            "Budget cap: $12,500.00",
            "room 16C, 10 a.m.",
        ] {
            let once = normalize(s);
            assert_eq!(normalize(&once), once);
        }
    }

    #[test]
    fn tokens_keep_values_whole() {
        let toks: Vec<&str> =
            tokens("the standup is moved to room 16c at 9:30am on 2025-06-11.").collect();
        assert_eq!(
            toks,
            [
                "the",
                "standup",
                "is",
                "moved",
                "to",
                "room",
                "16c",
                "at",
                "9:30am",
                "on",
                "2025-06-11"
            ]
        );
        let toks: Vec<&str> = tokens("check-in -- at: $1200... 'quoted' alex's").collect();
        assert_eq!(toks, ["check-in", "at", "1200", "quoted", "alex"]);
    }

    #[test]
    fn containment_respects_token_boundaries() {
        assert!(!contains("The deadline is Dec 24.", "Dec 2"));
        assert!(contains("The deadline is Dec 2.", "Dec 2"));
        assert!(contains("The deadline is December 2.", "dec 2"));
        assert!(!contains("moved to 19:30am", "9:30am"));
        assert!(contains("moved to 9:30 AM", "9:30am"));
        assert!(contains("a day rate of $1,200", "$1200"));
        assert!(!contains("a day rate of $12,000", "$1200"));
        assert!(!contains("room 16C", "room 16"));
        assert!(!contains("anything", ""));
    }

    #[test]
    fn stop_words_and_content_tokens() {
        let norm = normalize("the standup with Alex is at");
        let content: Vec<&str> = content_tokens(&norm).collect();
        assert_eq!(content, ["standup", "alex"]);
        assert!(!is_stop_word("room"));
        assert!(!is_stop_word("may"));
    }

    #[test]
    fn words_index_as_their_stems_and_values_as_themselves() {
        for (word, stem) in [
            ("researching", "research"),
            ("researched", "research"),
            ("paintings", "paint"),
            ("painted", "paint"),
        ] {
            assert_eq!(index_form(word, true), stem);
            assert_eq!(index_form(word, false), word);
        }
        for value in ["16c", "9:30am", "2025-06-11", "check-in", "1200", "café"] {
            assert_eq!(index_form(value, true), value);
        }
    }
}
