//! Phrase tables matched as token sequences: the shared machinery of the
//! cue table (`cues`) and the speculation gate's table (`gate`). A phrase is
//! normalized and tokenized like the text it is matched against (so "I'm"
//! and "i'm" are one token either way); `…` in a phrase is a gap: its parts
//! must occur in order, each after the previous.

use crate::text;

/// A compiled phrase: its parts (split at gaps), each a token sequence.
#[derive(Clone, Debug)]
pub struct Phrase(Vec<Vec<String>>);

impl Phrase {
    /// Compiles a phrase of a table.
    pub fn compile(phrase: &str) -> Phrase {
        Phrase(
            phrase
                .split('…')
                .map(|part| {
                    let norm = text::normalize(part);
                    text::tokens(&norm).map(str::to_owned).collect()
                })
                .collect(),
        )
    }

    /// Whether the phrase occurs in `toks` (normalized tokens).
    pub fn matches(&self, toks: &[&str]) -> bool {
        let mut from = 0;
        for part in &self.0 {
            let found = toks[from.min(toks.len())..]
                .windows(part.len().max(1))
                .position(|w| w.iter().zip(part).all(|(a, b)| a == b));
            match found {
                Some(i) => from += i + part.len(),
                None => return false,
            }
        }
        true
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
