//! The memory graph: entities and participants as nodes, co-occurrence in a
//! retained fact as a decaying edge. The ranker's one-hop association term
//! spreads activation from the request's seeds over it.
//!
//! Edge weights decay with half-life `T_g` from each fact's last observation:
//! `w(u, v, t) = Σ_f 2^-((t - s_f)/T_g)` over facts naming both. Every edge
//! decays at the same rate, so the writer stores `W = Σ_f 2^((s_f - A)/T_g)`
//! for a fixed anchor `A` and the *order* of a node's neighbours never changes
//! with time; only additions and erasures reorder them.
//!
//! # Invariants
//! 1. `adjacency` holds the exact `W` of every edge of every retained fact
//!    (symmetric).
//! 2. The published neighbour list of a node is its top
//!    `neighbours_per_node` edges by `W` (ties: lower node id first).
//!
//! A node with at most `neighbours_per_node` edges publishes them all, so
//! its list is sorted from `adjacency` when it is published; only a hub
//! (more edges than that) keeps a top list of its own. Additions only raise
//! weights, so a hub's top list is maintained incrementally in place; an
//! erasure recomputes the lists of the nodes it touched from `adjacency`.
//! Changed lists are copied into the persistent read side once per commit
//! ([`GraphWriter::publish`]), so a hub node touched by a thousand facts of
//! one batch is copied once.
//!
//! Node ids are dense (`0..next`), so the read side keeps the lists in a
//! persistent vector indexed by node (16 bytes a node, chunks of 64 shared
//! between versions) rather than a hash map (an entry there cost ~150
//! bytes, measured with heaptrack on 1,000-fact stores). The graph writer is checked by the tests below and by
//! `erasure_leaves_no_trace` in `tests/memory.rs`.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::config::GraphParams;
use crate::pmap::PMap;
use crate::time::{DAY_MS, WallTime};

/// A graph node (an entity or participant name), stable for the store's life.
pub type NodeId = u32;

/// The anchor `A` of stored weights: 2020-01-01T00:00:00Z.
const ANCHOR_MS: i64 = 1_577_836_800_000;

/// A node's published neighbours with their anchored weights.
type List = Arc<[(NodeId, f64)]>;

/// The read side: published with every index version, cloned in O(1).
#[derive(Clone, Debug, Default)]
pub struct Graph {
    ids: PMap<Arc<str>, NodeId>,
    /// Each node's published list, by node id (`None`: no edges).
    neighbours: imbl::Vector<Option<List>>,
}

impl Graph {
    /// The node of a canonical name.
    pub fn node(&self, name: &str) -> Option<NodeId> {
        self.ids.get(name).copied()
    }

    /// A node's published neighbours with their anchored weights, strongest
    /// first. Ratios between them are the same at every time.
    pub fn neighbours(&self, node: NodeId) -> &[(NodeId, f64)] {
        self.neighbours
            .get(node as usize)
            .and_then(Option::as_deref)
            .unwrap_or(&[])
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the graph has no nodes.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// The write side.
#[derive(Debug)]
pub struct GraphWriter {
    params: GraphParams,
    next: NodeId,
    adjacency: FxHashMap<NodeId, FxHashMap<NodeId, f64>>,
    /// Each hub's top list (invariant 2), mutated in place: only nodes
    /// with more than `neighbours_per_node` edges have one.
    top: FxHashMap<NodeId, Vec<(NodeId, f64)>>,
    /// Nodes whose top list changed since the last publication.
    dirty: Vec<NodeId>,
    published: Graph,
}

impl GraphWriter {
    /// An empty graph.
    pub fn new(params: GraphParams) -> Self {
        GraphWriter {
            params,
            next: 0,
            adjacency: FxHashMap::default(),
            top: FxHashMap::default(),
            dirty: Vec::new(),
            published: Graph::default(),
        }
    }

    /// The read side as of the last publication.
    pub fn graph(&self) -> &Graph {
        &self.published
    }

    /// Copies the changed top lists into the read side and returns it.
    pub fn publish(&mut self) -> Graph {
        self.dirty.sort_unstable();
        self.dirty.dedup();
        for &node in &self.dirty {
            let list: Option<List> = match self.top.get(&node) {
                Some(top) => Some(top.as_slice().into()),
                None => self
                    .adjacency
                    .get(&node)
                    .filter(|adj| !adj.is_empty())
                    .map(|adj| sorted(adj).into()),
            };
            let at = node as usize;
            let lists = &mut self.published.neighbours;
            if at >= lists.len() {
                if list.is_none() {
                    continue;
                }
                lists.extend(std::iter::repeat_n(None, at + 1 - lists.len()));
            }
            lists.set(at, list);
        }
        self.dirty.clear();
        self.published.clone()
    }

    /// The node of a name, created if new.
    pub fn intern(&mut self, name: &Arc<str>) -> NodeId {
        if let Some(id) = self.published.ids.get(name) {
            return *id;
        }
        let id = self.next;
        self.next += 1;
        self.published.ids.insert(name.clone(), id);
        id
    }

    /// The anchored weight contribution of one fact observed at `s`.
    pub fn contribution(&self, s: WallTime) -> f64 {
        contribution(s, self.params.edge_half_life_days)
    }

    /// Adds `delta` (> 0) to every edge among `nodes`.
    pub fn strengthen(&mut self, nodes: &[NodeId], delta: f64) {
        for (i, &a) in nodes.iter().enumerate() {
            for &b in &nodes[i + 1..] {
                if a == b {
                    continue;
                }
                let w = {
                    let e = self.adjacency.entry(a).or_default().entry(b).or_insert(0.0);
                    *e += delta;
                    *e
                };
                *self.adjacency.entry(b).or_default().entry(a).or_insert(0.0) = w;
                self.raise(a, b, w);
                self.raise(b, a, w);
            }
        }
    }

    /// Sets the weights of every edge among `nodes` to `weight(a, b)` (exact
    /// recomputation after an erasure); zero removes the edge. Nodes for
    /// which `alive` is false are removed with all their edges.
    pub fn recompute(
        &mut self,
        nodes: &[(NodeId, Arc<str>)],
        alive: impl Fn(&str) -> bool,
        weight: impl Fn(&str, &str) -> f64,
    ) {
        let mut touched: Vec<NodeId> = Vec::new();
        for (a, name) in nodes {
            if !alive(name) {
                if let Some(adj) = self.adjacency.remove(a) {
                    for b in adj.keys() {
                        if let Some(m) = self.adjacency.get_mut(b) {
                            m.remove(a);
                        }
                        touched.push(*b);
                    }
                }
                self.published.ids.remove(name);
                self.top.remove(a);
                self.dirty.push(*a);
            }
        }
        for (i, (a, an)) in nodes.iter().enumerate() {
            for (b, bn) in &nodes[i + 1..] {
                if a == b || !alive(an) || !alive(bn) {
                    continue;
                }
                let w = weight(an, bn);
                for (x, y) in [(a, b), (b, a)] {
                    let m = self.adjacency.entry(*x).or_default();
                    if w > 0.0 {
                        m.insert(*y, w);
                    } else {
                        m.remove(y);
                    }
                }
                touched.push(*a);
                touched.push(*b);
            }
        }
        touched.sort_unstable();
        touched.dedup();
        for n in touched {
            if self.adjacency.get(&n).is_some_and(|m| m.is_empty()) {
                self.adjacency.remove(&n);
            }
            self.rebuild(n);
        }
    }

    /// Drops edges whose decayed weight at `at` is below the threshold.
    pub fn prune(&mut self, at: WallTime) {
        let limit = self.params.edge_threshold * self.contribution(at);
        let mut touched = Vec::new();
        for (a, m) in self.adjacency.iter_mut() {
            let before = m.len();
            m.retain(|_, w| *w >= limit);
            if m.len() != before {
                touched.push(*a);
            }
        }
        self.adjacency.retain(|_, m| !m.is_empty());
        for n in touched {
            self.rebuild(n);
        }
    }

    /// Incremental top-k update after edge `a → b` rose to `w`: nothing
    /// to keep while `a` publishes all its edges; its top list built when
    /// it first has more.
    fn raise(&mut self, a: NodeId, b: NodeId, w: f64) {
        let k = self.params.neighbours_per_node;
        if !self.top.contains_key(&a) {
            if self.adjacency.get(&a).is_some_and(|adj| adj.len() > k) {
                self.rebuild(a);
            } else {
                self.dirty.push(a);
            }
            return;
        }
        let entry = (b, w);
        let list = self.top.entry(a).or_default();
        match list.iter().position(|e| e.0 == b) {
            Some(i) => {
                list.remove(i);
            }
            None if list.len() >= k
                && list.last().is_none_or(|last| order(&entry, last).is_ge()) =>
            {
                return;
            }
            None => {}
        }
        // The list stays sorted: insert the raised entry in place.
        let at = list.partition_point(|e| order(e, &entry).is_lt());
        list.insert(at, entry);
        list.truncate(k);
        self.dirty.push(a);
    }

    /// Recomputes a node's top list from `adjacency` (none unless it is a
    /// hub).
    fn rebuild(&mut self, a: NodeId) {
        self.dirty.push(a);
        let k = self.params.neighbours_per_node;
        match self.adjacency.get(&a) {
            Some(adj) if adj.len() > k => {
                let mut list = sorted(adj);
                list.truncate(k);
                self.top.insert(a, list);
            }
            _ => {
                self.top.remove(&a);
            }
        }
    }
}

/// A node's edges, strongest first (see [`order`]).
fn sorted(adj: &FxHashMap<NodeId, f64>) -> Vec<(NodeId, f64)> {
    let mut list: Vec<(NodeId, f64)> = adj.iter().map(|(b, w)| (*b, *w)).collect();
    list.sort_by(order);
    list
}

/// The anchored weight `2^((s - A)/T_g)` one fact observed at `s` adds to
/// each edge among its nodes.
pub fn contribution(s: WallTime, half_life_days: f64) -> f64 {
    ((s.millis() - ANCHOR_MS) as f64 / (half_life_days * DAY_MS as f64)).exp2()
}

/// Neighbour order: heavier first, then lower node id.
fn order(x: &(NodeId, f64), y: &(NodeId, f64)) -> std::cmp::Ordering {
    y.1.total_cmp(&x.1).then(x.0.cmp(&y.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_lists_track_the_strongest_edges() {
        let mut g = GraphWriter::new(GraphParams {
            neighbours_per_node: 2,
            ..GraphParams::default()
        });
        let names: Vec<Arc<str>> = ["a", "b", "c", "d"].iter().map(|n| Arc::from(*n)).collect();
        let ids: Vec<NodeId> = names.iter().map(|n| g.intern(n)).collect();
        g.strengthen(&[ids[0], ids[1]], 1.0);
        g.strengthen(&[ids[0], ids[2]], 3.0);
        g.strengthen(&[ids[0], ids[3]], 2.0);
        let top: Vec<NodeId> = g.publish().neighbours(ids[0]).iter().map(|e| e.0).collect();
        assert_eq!(top, [ids[2], ids[3]]);
        g.strengthen(&[ids[0], ids[1]], 5.0);
        let top: Vec<NodeId> = g.publish().neighbours(ids[0]).iter().map(|e| e.0).collect();
        assert_eq!(
            top,
            [ids[1], ids[2]],
            "a raised edge re-enters the top list"
        );
    }

    proptest::proptest! {
        /// Invariant 2 under any sequence of additions: every published
        /// list is the node's top `k` edges of `adjacency`, whether the
        /// node keeps a top list (a hub) or is sorted at publication, and
        /// as nodes cross from one to the other.
        #[test]
        fn published_lists_are_the_exact_top_k(
            edges in proptest::collection::vec((0u32..12, 0u32..12, 1u32..50), 1..200),
        ) {
            let k = 3;
            let mut g = GraphWriter::new(GraphParams {
                neighbours_per_node: k,
                ..GraphParams::default()
            });
            let names: Vec<Arc<str>> = (0..12).map(|i| Arc::from(format!("n{i}"))).collect();
            let ids: Vec<NodeId> = names.iter().map(|n| g.intern(n)).collect();
            for (step, (a, b, w)) in edges.into_iter().enumerate() {
                g.strengthen(&[ids[a as usize], ids[b as usize]], f64::from(w));
                if step % 7 != 0 {
                    continue;
                }
                let published = g.publish();
                for &n in &ids {
                    let mut want = g.adjacency.get(&n).map(sorted).unwrap_or_default();
                    want.truncate(k);
                    proptest::prop_assert_eq!(published.neighbours(n), &want[..]);
                }
            }
        }
    }

    #[test]
    fn recompute_after_erasure_restores_the_exact_lists() {
        let mut g = GraphWriter::new(GraphParams::default());
        let a: Arc<str> = "a".into();
        let b: Arc<str> = "b".into();
        let (ia, ib) = (g.intern(&a), g.intern(&b));
        g.strengthen(&[ia, ib], 2.0);
        g.recompute(
            &[(ia, a.clone()), (ib, b.clone())],
            |n| n == "a",
            |_, _| 0.0,
        );
        assert!(g.publish().neighbours(ia).is_empty());
        assert_eq!(g.graph().node("b"), None);
        assert_eq!(g.graph().node("a"), Some(ia));
    }
}
