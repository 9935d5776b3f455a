//! The gazetteer: the entity names a store knows, learned from participants
//! and structured entities, or registered explicitly.
//!
//! It is a persistent map (`imbl`), so cloning it for a published index
//! version is O(1) and the writer keeps mutating its own copy.
//!
//! # Invariants
//! 1. Every name is in canonical [`name_key`](crate::fact::name_key) form.
//! 2. `by_token[t]` lists exactly the entries that have token `t`.
//! 3. An entry lives while it is registered or referenced by a retained fact
//!    (`refs > 0`); erasing the last fact that taught it drops it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::text;

/// What kind of thing a name refers to; slots say which kind owns them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntityKind {
    /// A person: participants are people. First names match partially.
    Person,
    /// A project or other named thing that owns project slots.
    Project,
    /// Unknown kind (structured entities): owns any slot.
    Other,
}

impl EntityKind {
    /// Whether an entity of this kind can own a slot whose subject is `subject`.
    pub fn can_own(self, subject: EntityKind) -> bool {
        self == subject || self == EntityKind::Other
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    kind: EntityKind,
    registered: bool,
    refs: u32,
}

/// A name found in a token sequence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mention {
    /// The entity's canonical name.
    pub entity: Arc<str>,
    /// Its kind.
    pub kind: EntityKind,
    /// First token index of the mention.
    pub start: usize,
    /// One past the last token index.
    pub end: usize,
}

/// The names a store knows.
#[derive(Clone, Debug, Default)]
pub struct Gazetteer {
    entries: imbl::HashMap<Arc<str>, Entry>,
    by_token: imbl::HashMap<Arc<str>, Arc<[Arc<str>]>>,
}

impl Gazetteer {
    /// Registers a name explicitly; it stays until [`Gazetteer::remove`].
    /// Returns the canonical name (empty names are ignored and return `None`).
    pub fn register(&mut self, name: &str, kind: EntityKind) -> Option<Arc<str>> {
        self.upsert(name, kind, true, 0)
    }

    /// Records one more retained fact that mentions `name` (already canonical).
    pub fn learn(&mut self, name: &Arc<str>, kind: EntityKind) {
        self.upsert(name, kind, false, 1);
    }

    fn upsert(
        &mut self,
        name: &str,
        kind: EntityKind,
        registered: bool,
        refs: u32,
    ) -> Option<Arc<str>> {
        let key = crate::fact::name_key(name);
        if key.is_empty() {
            return None;
        }
        if let Some((canon, entry)) = self.entries.get_key_value(key.as_str()) {
            let canon = canon.clone();
            let mut e = *entry;
            e.registered |= registered;
            e.refs += refs;
            if registered || e.kind == EntityKind::Other {
                e.kind = kind;
            }
            self.entries.insert(canon.clone(), e);
            return Some(canon);
        }
        let canon: Arc<str> = key.into();
        self.entries.insert(
            canon.clone(),
            Entry {
                kind,
                registered,
                refs,
            },
        );
        for tok in text::tokens(&canon) {
            let list = self.by_token.get(tok).cloned();
            let mut v: Vec<Arc<str>> = list.map(|l| l.to_vec()).unwrap_or_default();
            if !v.contains(&canon) {
                v.push(canon.clone());
                v.sort();
            }
            self.by_token.insert(tok.into(), v.into());
        }
        Some(canon)
    }

    /// Records that one fact mentioning `name` is gone; drops the entry when
    /// nothing retains it.
    pub fn unlearn(&mut self, name: &str) {
        if let Some(e) = self.entries.get(name).copied() {
            let refs = e.refs.saturating_sub(1);
            if refs == 0 && !e.registered {
                self.remove(name);
            } else {
                self.entries.insert(name.into(), Entry { refs, ..e });
            }
        }
    }

    /// Removes a name entirely (erasure of an entity).
    pub fn remove(&mut self, name: &str) {
        if self.entries.remove(name).is_none() {
            return;
        }
        for tok in text::tokens(name) {
            if let Some(list) = self.by_token.get(tok).cloned() {
                let v: Vec<Arc<str>> = list.iter().filter(|n| &***n != name).cloned().collect();
                if v.is_empty() {
                    self.by_token.remove(tok);
                } else {
                    self.by_token.insert(tok.into(), v.into());
                }
            }
        }
    }

    /// The kind of a known name.
    pub fn kind(&self, name: &str) -> Option<EntityKind> {
        self.entries.get(name).map(|e| e.kind)
    }

    /// The canonical `Arc` of a known name.
    pub fn canonical(&self, name: &str) -> Option<Arc<str>> {
        self.entries.get_key_value(name).map(|(k, _)| k.clone())
    }

    /// Number of known names.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no names are known.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Known names that contain token `tok` (sorted).
    pub fn with_token(&self, tok: &str) -> &[Arc<str>] {
        self.by_token.get(tok).map(|l| &l[..]).unwrap_or(&[])
    }

    /// Finds names in a normalized token sequence.
    ///
    /// Full names match first, longest at each position, left to right, without
    /// overlap. A remaining alphabetic non-stop token that is part of a known
    /// *person's* name (a first name, say) is a partial mention: it resolves
    /// when exactly one person has it, or when exactly one of the candidates
    /// is among `participants` (canonical names); otherwise it is ambiguous and
    /// yields nothing.
    pub fn mentions(&self, tokens: &[&str], participants: &[Arc<str>]) -> Vec<Mention> {
        let mut out = Vec::new();
        let mut covered = vec![false; tokens.len()];
        let mut i = 0;
        while i < tokens.len() {
            let mut best: Option<(usize, &Arc<str>)> = None;
            for name in self.with_token(tokens[i]) {
                let mut parts = text::tokens(name);
                if parts.next() != Some(tokens[i]) {
                    continue;
                }
                let len = 1 + parts.clone().count();
                let matches = tokens.len() >= i + len
                    && parts.zip(&tokens[i + 1..i + len]).all(|(a, b)| a == *b);
                if matches && best.is_none_or(|(l, _)| len > l) {
                    best = Some((len, name));
                }
            }
            if let Some((len, name)) = best {
                covered[i..i + len].iter_mut().for_each(|c| *c = true);
                out.push(Mention {
                    entity: name.clone(),
                    kind: self.kind(name).unwrap_or(EntityKind::Other),
                    start: i,
                    end: i + len,
                });
                i += len;
            } else {
                i += 1;
            }
        }
        for (i, tok) in tokens.iter().enumerate() {
            if covered[i] || text::is_stop_word(tok) || !tok.chars().all(char::is_alphabetic) {
                continue;
            }
            let people: Vec<&Arc<str>> = self
                .with_token(tok)
                .iter()
                .filter(|n| self.kind(n) == Some(EntityKind::Person))
                .collect();
            let chosen = match people.as_slice() {
                [] => None,
                [one] => Some(*one),
                many => {
                    let present: Vec<_> =
                        many.iter().filter(|n| participants.contains(n)).collect();
                    (present.len() == 1).then(|| *present[0])
                }
            };
            if let Some(name) = chosen {
                out.push(Mention {
                    entity: name.clone(),
                    kind: EntityKind::Person,
                    start: i,
                    end: i + 1,
                });
            }
        }
        out.sort_by_key(|m| m.start);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<String> {
        text::normalized_tokens(s)
    }

    fn names(g: &Gazetteer, s: &str, participants: &[&str]) -> Vec<String> {
        let t = toks(s);
        let t: Vec<&str> = t.iter().map(String::as_str).collect();
        let p: Vec<Arc<str>> = participants.iter().map(|p| Arc::from(*p)).collect();
        g.mentions(&t, &p)
            .into_iter()
            .map(|m| m.entity.to_string())
            .collect()
    }

    #[test]
    fn full_names_win_and_first_names_resolve_only_when_unique() {
        let mut g = Gazetteer::default();
        g.register("Alex Rivera", EntityKind::Person);
        g.register("Alex Chen", EntityKind::Person);
        g.register("Sam Okafor", EntityKind::Person);
        g.register("Halcyon", EntityKind::Project);
        assert_eq!(
            names(&g, "The standup with Alex Rivera moved; Halcyon too", &[]),
            ["alex rivera", "halcyon"]
        );
        assert_eq!(names(&g, "Sam's review", &[]), ["sam okafor"]);
        assert!(
            names(&g, "Alex standup", &[]).is_empty(),
            "ambiguous first name"
        );
        assert_eq!(names(&g, "Alex standup", &["alex chen"]), ["alex chen"]);
    }

    #[test]
    fn learned_names_drop_with_their_last_fact_registered_ones_stay() {
        let mut g = Gazetteer::default();
        let a: Arc<str> = "alex rivera".into();
        g.learn(&a, EntityKind::Person);
        g.learn(&a, EntityKind::Person);
        g.register("Halcyon", EntityKind::Project);
        g.unlearn("alex rivera");
        assert!(g.kind("alex rivera").is_some());
        g.unlearn("alex rivera");
        assert!(g.kind("alex rivera").is_none());
        assert!(g.with_token("alex").is_empty(), "token index follows");
        g.unlearn("halcyon");
        assert_eq!(g.kind("halcyon"), Some(EntityKind::Project));
    }
}
