//! The gazetteer: the entity names a store knows, learned from participants
//! and structured entities, or registered explicitly.
//!
//! The read side ([`Gazetteer`]) is a pair of persistent maps (`imbl`), so
//! cloning it for a published index version is O(1); the write side
//! ([`GazetteerWriter`]) keeps the reference counts in a plain map.
//!
//! # Invariants
//! 1. Every name is in canonical [`name_key`](crate::fact::name_key) form.
//! 2. `by_token[t]` lists exactly the names of two or more tokens that
//!    have token `t`; a one-token name is found by that token in `kinds`
//!    itself (most names are one token: the first half of the index would
//!    otherwise be an entry and a list per name, ~200 bytes each).
//! 3. A name lives while it is registered or mentioned by a retained fact;
//!    erasing the last fact that taught it drops it.
//! 4. The writer's reference counts list exactly the read side's names,
//!    each with the kind the read side gives it (so a known name is taught
//!    with one lookup in the counts; `tests::a_known_name_is_refined_once_and_counted_every_time`).

use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::names::Name;
use crate::pmap::PMap;
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

/// A name found in a token sequence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mention {
    /// The entity's canonical name.
    pub entity: Name,
    /// Its kind.
    pub kind: EntityKind,
    /// First token index of the mention.
    pub start: usize,
    /// One past the last token index.
    pub end: usize,
}

/// The names a store knows: the read side, published with every index
/// version and cloned in O(1).
#[derive(Clone, Debug, Default)]
pub struct Gazetteer {
    kinds: PMap<Name, EntityKind>,
    by_token: PMap<Name, Arc<[Name]>>,
}

/// Why a name is known (writer side only).
#[derive(Clone, Copy, Debug)]
struct Refs {
    /// Retained facts that mention the name.
    facts: u32,
    /// Registered explicitly.
    registered: bool,
    /// The name's kind in the read side (kept equal to it), so teaching a
    /// known name that would not change it reads this map alone.
    kind: EntityKind,
}

impl Refs {
    /// Whether teaching the name as `kind` (not explicitly) changes its
    /// kind: only an unknown kind is refined.
    fn refined_by(&self, kind: EntityKind) -> bool {
        self.kind == EntityKind::Other && kind != EntityKind::Other
    }
}

/// The gazetteer's write side: reference counts stay in a plain map, so
/// teaching a name the store already knows never touches the persistent
/// read side.
#[derive(Debug, Default)]
pub struct GazetteerWriter {
    view: Gazetteer,
    refs: FxHashMap<Name, Refs>,
}

impl GazetteerWriter {
    /// The read side as of now.
    pub fn view(&self) -> &Gazetteer {
        &self.view
    }

    /// Registers a name explicitly; it stays until [`GazetteerWriter::remove`].
    /// Returns the canonical name (empty names are ignored and return `None`).
    pub fn register(&mut self, name: &str, kind: EntityKind) -> Option<Name> {
        let canon = self.teach(name, kind, true)?;
        // Infallible: `teach` has just listed it.
        self.refs.get_mut(&canon).expect("taught").registered = true;
        Some(canon)
    }

    /// Records one more retained fact that mentions `name` (already canonical).
    pub fn learn(&mut self, name: &str, kind: EntityKind) {
        // Every new fact teaches its names: a name the store knows, whose
        // kind this would not refine, is one lookup here and none in the
        // persistent read side.
        if let Some(refs) = self.refs.get_mut(name)
            && !refs.refined_by(kind)
        {
            refs.facts += 1;
            return;
        }
        if let Some(canon) = self.teach(name, kind, false) {
            // Infallible: `teach` has just listed it.
            self.refs.get_mut(&canon).expect("taught").facts += 1;
        }
    }

    /// A copy of the read side that also knows `names` (for extracting a
    /// batch whose observations introduce names). Names the store knows
    /// with a kind they would not refine — nearly all, after the first
    /// batches — are passed over with one lookup here.
    pub fn with_names<'a>(
        &self,
        names: impl IntoIterator<Item = (&'a str, EntityKind)>,
    ) -> Gazetteer {
        let mut g = self.view.clone();
        for (name, kind) in names {
            if self.refs.get(name).is_none_or(|r| r.refined_by(kind)) {
                g.teach(name, kind, false);
            }
        }
        g
    }

    /// Teaches the read side `name`, and lists it here with its kind there.
    fn teach(&mut self, name: &str, kind: EntityKind, explicit: bool) -> Option<Name> {
        let canon = self.view.teach(name, kind, explicit)?;
        let kind = self.view.kind(&canon).unwrap_or(kind);
        self.refs
            .entry(canon.clone())
            .and_modify(|r| r.kind = kind)
            .or_insert(Refs {
                facts: 0,
                registered: false,
                kind,
            });
        Some(canon)
    }

    /// Records that one fact mentioning `name` is gone; drops the name when
    /// nothing retains it.
    pub fn unlearn(&mut self, name: &str) {
        if let Some(r) = self.refs.get_mut(name) {
            r.facts = r.facts.saturating_sub(1);
            if r.facts == 0 && !r.registered {
                self.remove(name);
            }
        }
    }

    /// Removes a name entirely (erasure of an entity).
    pub fn remove(&mut self, name: &str) {
        self.refs.remove(name);
        self.view.forget(name);
    }
}

impl Gazetteer {
    /// Makes `name` known with `kind` (an explicit `kind` replaces the old
    /// one; otherwise only an unknown `Other` is refined). Touches the
    /// persistent maps only when something changes. Returns the canonical name.
    fn teach(&mut self, name: &str, kind: EntityKind, explicit: bool) -> Option<Name> {
        if let Some((canon, old)) = self.kinds.get_key_value(name) {
            let canon = canon.clone();
            if *old != kind && (explicit || *old == EntityKind::Other) {
                self.kinds.insert(canon.clone(), kind);
            }
            return Some(canon);
        }
        let key = crate::fact::name_key(name);
        if key.is_empty() {
            return None;
        }
        if key != name {
            return self.teach(&key, kind, explicit);
        }
        let canon: Name = key.into();
        self.kinds.insert(canon.clone(), kind);
        for tok in multi_token(&canon) {
            let mut v: Vec<Name> = self
                .by_token
                .get(tok)
                .map(|l| l.to_vec())
                .unwrap_or_default();
            if !v.contains(&canon) {
                v.push(canon.clone());
                v.sort();
            }
            self.by_token.insert(tok.into(), v.into());
        }
        Some(canon)
    }

    fn forget(&mut self, name: &str) {
        if self.kinds.remove(name).is_none() {
            return;
        }
        for tok in multi_token(name) {
            if let Some(list) = self.by_token.get(tok).cloned() {
                let v: Vec<Name> = list.iter().filter(|n| &***n != name).cloned().collect();
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
        self.kinds.get(name).copied()
    }

    /// The canonical `Arc` of a known name.
    pub fn canonical(&self, name: &str) -> Option<Name> {
        self.kinds.get_key_value(name).map(|(k, _)| k.clone())
    }

    /// Number of known names.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Whether no names are known.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// Known names that contain token `tok`, in sorted order.
    pub fn with_token<'a>(&'a self, tok: &str) -> WithToken<'a> {
        WithToken {
            longer: self.by_token.get(tok).map(|l| &l[..]).unwrap_or(&[]),
            itself: self.kinds.get_key_value(tok).map(|(name, _)| name),
        }
    }

    /// Finds names in a normalized token sequence.
    ///
    /// Full names match first, longest at each position, left to right, without
    /// overlap. A remaining alphabetic non-stop token that is part of a known
    /// *person's* name (a first name, say) is a partial mention: it resolves
    /// when exactly one person has it, or when exactly one of the candidates
    /// is among `participants` (canonical names); otherwise it is ambiguous and
    /// yields nothing.
    pub fn mentions(&self, tokens: &[&str], participants: &[Name]) -> Vec<Mention> {
        let mut out = self.full_mentions(tokens);
        let mut covered = vec![false; tokens.len()];
        for m in &out {
            covered[m.start..m.end].iter_mut().for_each(|c| *c = true);
        }
        for (i, tok) in tokens.iter().enumerate() {
            if covered[i] || !is_name_token(tok) {
                continue;
            }
            let people: Vec<&Name> = self
                .with_token(tok)
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

    /// The full names in a normalized token sequence: longest at each
    /// position, left to right, without overlap.
    pub fn full_mentions(&self, tokens: &[&str]) -> Vec<Mention> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < tokens.len() {
            let mut best: Option<(usize, &Name)> = None;
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
        out
    }
}

/// The tokens of a canonical name that `by_token` indexes it under: all of
/// them for a name of two or more tokens, none for a one-token name
/// (invariant 2).
fn multi_token(name: &str) -> impl Iterator<Item = &str> {
    let mut tokens = text::tokens(name).peekable();
    let first = tokens.next();
    let several = tokens.peek().is_some();
    first.filter(|_| several).into_iter().chain(tokens)
}

/// [`Gazetteer::with_token`]: the longer names indexed under a token and
/// the one-token name that is the token itself, merged in sorted order.
#[derive(Clone, Debug)]
pub struct WithToken<'a> {
    longer: &'a [Name],
    itself: Option<&'a Name>,
}

impl<'a> Iterator for WithToken<'a> {
    type Item = &'a Name;

    fn next(&mut self) -> Option<&'a Name> {
        match (self.longer.first(), self.itself) {
            (Some(l), Some(i)) if i < l => self.itself.take(),
            (Some(l), _) => {
                self.longer = &self.longer[1..];
                Some(l)
            }
            (None, _) => self.itself.take(),
        }
    }
}

/// Whether a normalized token can be (part of) a name mention: alphabetic
/// and not a stop word.
pub fn is_name_token(tok: &str) -> bool {
    !text::is_stop_word(tok) && tok.chars().all(char::is_alphabetic)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<String> {
        text::normalized_tokens(s)
    }

    fn names(g: &GazetteerWriter, s: &str, participants: &[&str]) -> Vec<String> {
        let g = g.view();
        let t = toks(s);
        let t: Vec<&str> = t.iter().map(String::as_str).collect();
        let p: Vec<Name> = participants.iter().map(|p| Name::from(*p)).collect();
        g.mentions(&t, &p)
            .into_iter()
            .map(|m| m.entity.to_string())
            .collect()
    }

    #[test]
    fn full_names_win_and_first_names_resolve_only_when_unique() {
        let mut g = GazetteerWriter::default();
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
    fn a_token_finds_its_one_token_name_and_the_longer_ones_in_order() {
        let mut g = GazetteerWriter::default();
        for name in ["Sam Alex", "Alex", "Aaa Alex", "Alex Rivera", "Rivera"] {
            g.register(name, EntityKind::Person);
        }
        fn with(g: &GazetteerWriter, t: &str) -> Vec<String> {
            g.view().with_token(t).map(|n| n.to_string()).collect()
        }
        assert_eq!(
            with(&g, "alex"),
            ["aaa alex", "alex", "alex rivera", "sam alex"]
        );
        assert_eq!(with(&g, "rivera"), ["alex rivera", "rivera"]);
        assert_eq!(with(&g, "sam"), ["sam alex"]);
        g.remove("alex");
        assert_eq!(with(&g, "alex"), ["aaa alex", "alex rivera", "sam alex"]);
        assert!(with(&g, "nobody").is_empty());
    }

    #[test]
    fn learned_names_drop_with_their_last_fact_registered_ones_stay() {
        let mut g = GazetteerWriter::default();
        let a: Name = "alex rivera".into();
        g.learn(&a, EntityKind::Person);
        g.learn(&a, EntityKind::Person);
        g.register("Halcyon", EntityKind::Project);
        g.unlearn("alex rivera");
        assert!(g.view().kind("alex rivera").is_some());
        g.unlearn("alex rivera");
        assert!(g.view().kind("alex rivera").is_none());
        assert!(
            g.view().with_token("alex").next().is_none(),
            "token index follows"
        );
        g.unlearn("halcyon");
        assert_eq!(g.view().kind("halcyon"), Some(EntityKind::Project));
        // Teaching a known name does not replace the read side.
        let before = g.view().clone();
        g.learn("halcyon", EntityKind::Other);
        assert_eq!(g.view().kind("halcyon"), Some(EntityKind::Project));
        assert_eq!(before.len(), g.view().len());
    }

    #[test]
    fn a_batch_preview_knows_new_names_and_refinements_and_changes_nothing() {
        let mut g = GazetteerWriter::default();
        g.learn("sam lee", EntityKind::Other);
        g.learn("halcyon", EntityKind::Project);
        let preview = g.with_names([
            ("Sam Lee", EntityKind::Person),
            ("halcyon", EntityKind::Other),
            ("Ana Ruiz", EntityKind::Person),
        ]);
        assert_eq!(preview.kind("sam lee"), Some(EntityKind::Person));
        assert_eq!(preview.kind("halcyon"), Some(EntityKind::Project));
        assert_eq!(preview.kind("ana ruiz"), Some(EntityKind::Person));
        assert_eq!(g.view().kind("sam lee"), Some(EntityKind::Other));
        assert!(g.view().kind("ana ruiz").is_none());
    }

    #[test]
    fn a_known_name_is_refined_once_and_counted_every_time() {
        let mut g = GazetteerWriter::default();
        g.learn("Sam Lee", EntityKind::Other);
        g.learn("sam lee", EntityKind::Other);
        assert_eq!(g.view().kind("sam lee"), Some(EntityKind::Other));
        // A participant's kind refines an unknown one; later facts that
        // only mention the name keep it.
        g.learn("sam lee", EntityKind::Person);
        g.learn("sam lee", EntityKind::Other);
        assert_eq!(g.view().kind("sam lee"), Some(EntityKind::Person));
        // An explicit registration replaces it, and the fast path reads
        // the replaced kind: a later participant does not undo it.
        g.register("Sam Lee", EntityKind::Project);
        g.learn("sam lee", EntityKind::Person);
        assert_eq!(g.view().kind("sam lee"), Some(EntityKind::Project));
        for _ in 0..5 {
            g.unlearn("sam lee");
        }
        assert_eq!(g.view().kind("sam lee"), Some(EntityKind::Project));
        g.remove("sam lee");
        g.learn("sam lee", EntityKind::Other);
        g.learn("sam lee", EntityKind::Person);
        assert_eq!(g.view().kind("sam lee"), Some(EntityKind::Person));
        g.unlearn("sam lee");
        assert_eq!(g.view().kind("sam lee"), Some(EntityKind::Person));
        // Registered as unknown, it is refined again by the next participant.
        g.register("sam lee", EntityKind::Other);
        g.learn("sam lee", EntityKind::Person);
        assert_eq!(g.view().kind("sam lee"), Some(EntityKind::Person));
        g.remove("sam lee");
        assert!(g.view().kind("sam lee").is_none());
    }
}
