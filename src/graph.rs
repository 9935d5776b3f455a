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
//! 1. The writer holds the exact `W` of every edge of every retained fact
//!    (symmetric), in the list of each end that is not a hub and, between
//!    two hubs, in both hubs' maps (see [`GraphWriter`]).
//! 2. The published neighbour list of a node is its top
//!    `neighbours_per_node` edges by `W` (ties: lower node id first).
//!
//! A node with at most `neighbours_per_node` edges publishes them all, so
//! its published list is its whole adjacency and the writer keeps no other
//! copy of it. A hub (more edges than that) keeps a top list of its own,
//! the weights of its edges to other hubs, and only the ids of its other
//! neighbours, whose lists hold those weights: a hub's edges are mostly to
//! nodes that are not hubs, and a 4-byte id where a 12-byte edge was took
//! the graph from 100 to 73 bytes a fact at 100k wide (issue 24).
//! Additions only raise weights, so lists are maintained incrementally in
//! place; an erasure or a pruning that lowers an edge of a hub's top list
//! has it recomputed from all its edges at publication. Changed lists are
//! copied into the persistent read side once per commit
//! ([`GraphWriter::publish`]), so a node touched by a thousand facts of one
//! batch is copied once.
//!
//! Node ids are dense (`0..next`), so the read side keeps the lists in a
//! persistent vector indexed by node (16 bytes a node, chunks of 64 shared
//! between versions) rather than a hash map (an entry there cost ~150
//! bytes, measured with heaptrack on 1,000-fact stores). The graph writer
//! is checked by the tests below and by `erasure_leaves_no_trace` in
//! `tests/memory.rs`.

use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::{HashTable, hash_table};
use rustc_hash::{FxBuildHasher, FxHashMap};

use crate::config::GraphParams;
use crate::names::Name;
use crate::pmap::PMap;
use crate::time::{DAY_MS, WallTime};

/// A graph node (an entity or participant name), stable for the store's life.
pub type NodeId = u32;

/// The anchor `A` of stored weights: 2020-01-01T00:00:00Z.
const ANCHOR_MS: i64 = 1_577_836_800_000;

/// A neighbour and the edge's anchored weight, in twelve bytes: a
/// `(NodeId, f64)` pair pads to sixteen, and the published lists and the
/// writer's working copies hold one per edge (issue 24's heap table: the
/// graph was an eighth of the store). Packed to 4-byte alignment, so read
/// its fields by value (`edge.1`), never by reference.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, packed(4))]
pub struct Edge(pub NodeId, pub f64);

const _: () = assert!(std::mem::size_of::<Edge>() == 12);

/// A node's published neighbours with their anchored weights.
type List = Arc<[Edge]>;

/// A hub's edges to other hubs by neighbour, 12 bytes an entry: a map of
/// `NodeId` to `f64` pads its entries to 16. Invariant: at most one entry
/// per neighbour.
#[derive(Debug, Default)]
struct EdgeMap(HashTable<Edge>);

fn node_hash(node: NodeId) -> u64 {
    FxBuildHasher.hash_one(node)
}

impl EdgeMap {
    /// The weight of the edge to `b`, if there is one.
    fn get(&self, b: NodeId) -> Option<f64> {
        self.0.find(node_hash(b), |e| e.0 == b).map(|e| e.1)
    }

    /// Sets the edge to `b` to weight `w`; `w <= 0` removes it.
    fn set(&mut self, b: NodeId, w: f64) {
        let held = self.0.entry(node_hash(b), |e| e.0 == b, |e| node_hash(e.0));
        match held {
            hash_table::Entry::Occupied(held) if w <= 0.0 => {
                held.remove();
            }
            hash_table::Entry::Occupied(mut held) => *held.get_mut() = Edge(b, w),
            hash_table::Entry::Vacant(slot) if w > 0.0 => {
                slot.insert(Edge(b, w));
            }
            hash_table::Entry::Vacant(_) => {}
        }
    }

    /// Every edge, in no particular order.
    fn iter(&self) -> impl Iterator<Item = Edge> + '_ {
        self.0.iter().copied()
    }

    /// How many edges.
    fn len(&self) -> usize {
        self.0.len()
    }
}

/// A hub's neighbours that are not hubs, 4 bytes an entry: each one's own
/// list holds the edge's exact weight (invariant 1), so the hub keeps only
/// who they are. Invariant: no duplicates.
#[derive(Debug, Default)]
struct NodeSet(HashTable<NodeId>);

impl NodeSet {
    fn insert(&mut self, b: NodeId) {
        if let hash_table::Entry::Vacant(slot) =
            self.0.entry(node_hash(b), |&n| n == b, |&n| node_hash(n))
        {
            slot.insert(b);
        }
    }

    fn remove(&mut self, b: NodeId) {
        if let Ok(held) = self.0.find_entry(node_hash(b), |&n| n == b) {
            held.remove();
        }
    }

    fn iter(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.0.iter().copied()
    }

    fn len(&self) -> usize {
        self.0.len()
    }
}

/// The read side: published with every index version, cloned in O(1).
#[derive(Clone, Debug, Default)]
pub struct Graph {
    ids: PMap<Name, NodeId>,
    /// Each node's name, by node id (`None` once its name was removed), so
    /// a query can find the documents that may hold a node from its name's
    /// postings (`rank::holders`). 8 bytes a node, shared between versions
    /// like `neighbours`.
    names: imbl::Vector<Option<Name>>,
    /// Each node's published list, by node id (`None`: no edges).
    neighbours: imbl::Vector<Option<List>>,
}

impl Graph {
    /// The node of a canonical name.
    pub fn node(&self, name: &str) -> Option<NodeId> {
        self.ids.get(name).copied()
    }

    /// A node's name, unless the node was removed (its facts erased).
    pub fn name(&self, node: NodeId) -> Option<&Name> {
        self.names.get(node as usize).and_then(Option::as_ref)
    }

    /// A node's published neighbours with their anchored weights, strongest
    /// first. Ratios between them are the same at every time.
    pub fn neighbours(&self, node: NodeId) -> &[Edge] {
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
///
/// Where an edge's weight lives (invariant 1): a node with at most
/// `neighbours_per_node` edges holds all of them in its published list —
/// or, once it changed since the last publication, in its working copy in
/// `changed`. A hub (more edges than that) holds the weights of its edges
/// to other hubs in `Hub::hubs` and only the ids of its other neighbours in
/// `Hub::others`, whose own lists hold those weights. So a quiet node costs
/// only its published list, shared with every index version; a batch that
/// touches a node many times edits one copy and publishes it once; and an
/// edge is held twice (once by each end) only between two hubs or two
/// non-hubs.
#[derive(Debug)]
pub struct GraphWriter {
    params: GraphParams,
    next: NodeId,
    hubs: FxHashMap<NodeId, Hub>,
    /// Working copies of the non-hub nodes changed since the last
    /// publication: all their edges, in neighbour order.
    changed: FxHashMap<NodeId, Vec<Edge>>,
    /// Hubs whose top list changed since the last publication (every stale
    /// hub is here).
    dirty_hubs: Vec<NodeId>,
    published: Graph,
}

/// A node with more edges than it publishes.
#[derive(Debug, Default)]
struct Hub {
    /// The exact `W` of each edge to another hub.
    hubs: EdgeMap,
    /// Its neighbours that are not hubs; their lists hold the weights.
    others: NodeSet,
    /// The top `neighbours_per_node` edges in neighbour order, maintained
    /// in place as weights rise; meaningless while `stale`.
    top: Vec<Edge>,
    /// An edge of `top` fell or went since `top` was computed: publication
    /// recomputes it, once however many fell (a pruning lowers many).
    stale: bool,
}

impl GraphWriter {
    /// An empty graph.
    pub fn new(params: GraphParams) -> Self {
        GraphWriter {
            params,
            next: 0,
            hubs: FxHashMap::default(),
            changed: FxHashMap::default(),
            dirty_hubs: Vec::new(),
            published: Graph::default(),
        }
    }

    /// The read side as of the last publication.
    pub fn graph(&self) -> &Graph {
        &self.published
    }

    /// Copies the changed lists into the read side and returns it.
    pub fn publish(&mut self) -> Graph {
        let mut dirty = std::mem::take(&mut self.dirty_hubs);
        dirty.sort_unstable();
        dirty.dedup();
        // Stale hubs first: their weights are read from the working copies
        // that are drained below. A hub that fell back to a non-hub since
        // is published from its working copy.
        let mut lists: Vec<(NodeId, Option<List>)> = Vec::new();
        for node in dirty {
            let Some(hub) = self.hubs.get(&node) else {
                continue;
            };
            if hub.stale {
                let top = self.top_of(node);
                // Infallible: `node` is a hub (found above).
                let hub = self.hubs.get_mut(&node).expect("a hub");
                hub.top = top;
                hub.stale = false;
            }
            lists.push((node, Some(self.hubs[&node].top.as_slice().into())));
        }
        lists.extend(
            self.changed
                .drain()
                .map(|(node, list)| (node, (!list.is_empty()).then(|| list.into()))),
        );
        let published = &mut self.published.neighbours;
        for (node, list) in lists {
            let at = node as usize;
            if at >= published.len() {
                if list.is_none() {
                    continue;
                }
                published.extend(std::iter::repeat_n(None, at + 1 - published.len()));
            }
            published.set(at, list);
        }
        self.published.clone()
    }

    /// The node of a name, created if new.
    pub fn intern(&mut self, name: &Name) -> NodeId {
        if let Some(id) = self.published.ids.get(name) {
            return *id;
        }
        let id = self.next;
        self.next += 1;
        self.published.ids.insert(name.clone(), id);
        self.published.names.push_back(Some(name.clone()));
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
                if a != b {
                    self.set(a, b, |old| old + delta);
                }
            }
        }
    }

    /// Sets the weights of every edge among `nodes` to `weight(a, b)` (exact
    /// recomputation after an erasure); zero removes the edge. Nodes for
    /// which `alive` is false are removed with all their edges.
    pub fn recompute(
        &mut self,
        nodes: &[(NodeId, Name)],
        alive: impl Fn(&str) -> bool,
        weight: impl Fn(&str, &str) -> f64,
    ) {
        for (a, name) in nodes {
            if !alive(name) {
                for Edge(b, _) in self.edges(*a) {
                    self.set(*a, b, |_| 0.0);
                }
                // With no edges left, `a` is no hub (it was demoted on the
                // way): its empty list is published.
                debug_assert!(!self.hubs.contains_key(a));
                self.changed.insert(*a, Vec::new());
                self.published.ids.remove(name);
                self.published.names.set(*a as usize, None);
            }
        }
        for (i, (a, an)) in nodes.iter().enumerate() {
            for (b, bn) in &nodes[i + 1..] {
                if a == b || !alive(an) || !alive(bn) {
                    continue;
                }
                let w = weight(an, bn);
                self.set(*a, *b, |_| w);
            }
        }
    }

    /// Drops edges whose decayed weight at `at` is below the threshold.
    pub fn prune(&mut self, at: WallTime) {
        let limit = self.params.edge_threshold * self.contribution(at);
        for a in 0..self.next {
            // An edge between a hub and another node is met from the other
            // node's list, which holds its weight: no lookups. A pruning
            // only removes edges, so no node turns into a hub meanwhile.
            let held: Vec<Edge> = match self.hubs.get(&a) {
                Some(hub) => hub.hubs.iter().collect(),
                None => self.list(a).to_vec(),
            };
            for Edge(b, w) in held {
                if w < limit {
                    self.set(a, b, |_| 0.0);
                }
            }
        }
    }

    /// The list that holds a non-hub's edges: its working copy, else its
    /// published list.
    fn list(&self, a: NodeId) -> &[Edge] {
        match self.changed.get(&a) {
            Some(list) => list,
            None => self.published.neighbours(a),
        }
    }

    /// The exact `W` of edge `a`–`b`, if there is one (invariant 1).
    fn weight(&self, a: NodeId, b: NodeId) -> Option<f64> {
        match (self.hubs.get(&a), self.hubs.contains_key(&b)) {
            (Some(hub), true) => hub.hubs.get(b),
            (Some(_), false) => find(self.list(b), a),
            (None, _) => find(self.list(a), b),
        }
    }

    /// A node's edges with their weights (in no particular order for a hub).
    fn edges(&self, a: NodeId) -> Vec<Edge> {
        let Some(hub) = self.hubs.get(&a) else {
            return self.list(a).to_vec();
        };
        let others = hub.others.iter().map(|b| {
            // Infallible: a hub's non-hub neighbour lists the edge
            // (invariant 1).
            Edge(
                b,
                find(self.list(b), a).expect("the neighbour's list holds the edge"),
            )
        });
        hub.hubs.iter().chain(others).collect()
    }

    /// A hub's top list, computed from all its edges.
    fn top_of(&self, a: NodeId) -> Vec<Edge> {
        let mut all = self.edges(a);
        let k = self.params.neighbours_per_node;
        if all.len() > k {
            all.select_nth_unstable_by(k, order);
            all.truncate(k);
        }
        all.sort_by(order);
        all
    }

    /// Sets edge `a`–`b` (`a != b`) from its weight (zero when there is
    /// none) to `weight(old)`, zero removing it, on both sides. Keeps
    /// invariants 1 and 2: a node becomes a hub when it passes
    /// `neighbours_per_node` edges and stops being one when it is back at
    /// that many.
    fn set(&mut self, a: NodeId, b: NodeId, weight: impl FnOnce(f64) -> f64) {
        let old = self.weight(a, b);
        let w = weight(old.unwrap_or(0.0));
        if w <= 0.0 && old.is_none() {
            return;
        }
        let ends = [(a, b), (b, a)];
        for (x, y) in ends {
            let y_is_hub = self.hubs.contains_key(&y);
            match self.hubs.get_mut(&x) {
                None => self.set_in_list(x, y, w),
                Some(hub) if y_is_hub => hub.hubs.set(y, w),
                Some(hub) if w <= 0.0 => hub.others.remove(y),
                Some(hub) => hub.others.insert(y),
            }
        }
        let k = self.params.neighbours_per_node;
        for (x, y) in ends {
            if let Some(hub) = self.hubs.get_mut(&x)
                && hub.retop(y, old, w, k)
            {
                self.dirty_hubs.push(x);
            }
        }
        // After both sides hold the new weight: a demotion reads it from
        // either.
        for (x, _) in ends {
            self.rebalance(x);
        }
    }

    /// Sets edge `a → b` to `w` (`w <= 0` removes it) in non-hub `a`'s
    /// working copy, kept in neighbour order.
    fn set_in_list(&mut self, a: NodeId, b: NodeId, w: f64) {
        let published = &self.published;
        let list = self
            .changed
            .entry(a)
            .or_insert_with(|| published.neighbours(a).to_vec());
        let found = list.iter().position(|e| e.0 == b);
        let entry = Edge(b, w);
        match found {
            Some(i) if w <= 0.0 => {
                list.remove(i);
            }
            Some(i) => move_within(list, i, entry),
            None if w <= 0.0 => {}
            None => {
                let at = list.partition_point(|e| order(e, &entry).is_lt());
                list.insert(at, entry);
            }
        }
    }

    /// Makes `a` a hub if it has passed `neighbours_per_node` edges, or a
    /// non-hub if it is back at that many.
    fn rebalance(&mut self, a: NodeId) {
        let k = self.params.neighbours_per_node;
        match self.hubs.get(&a) {
            Some(hub) if hub.hubs.len() + hub.others.len() <= k => self.demote(a),
            None if self.changed.get(&a).is_some_and(|list| list.len() > k) => self.promote(a),
            _ => {}
        }
    }

    /// Turns non-hub `a`'s working copy into a hub. Its hub neighbours move
    /// `a` among their hub edges, with the weight.
    fn promote(&mut self, a: NodeId) {
        // Infallible: `rebalance` found the working copy.
        let mut top = self.changed.remove(&a).expect("a working copy");
        let mut hub = Hub::default();
        for Edge(b, w) in top.iter().copied() {
            match self.hubs.get_mut(&b) {
                Some(other) => {
                    other.others.remove(a);
                    other.hubs.set(a, w);
                    hub.hubs.set(b, w);
                }
                None => hub.others.insert(b),
            }
        }
        top.truncate(self.params.neighbours_per_node);
        hub.top = top;
        self.hubs.insert(a, hub);
        self.dirty_hubs.push(a);
    }

    /// Turns hub `a` back into a working copy of all its edges. Its hub
    /// neighbours move `a` among their non-hub neighbours: the weight is in
    /// `a`'s list now.
    fn demote(&mut self, a: NodeId) {
        let mut all = self.edges(a);
        all.sort_by(order);
        // Infallible: `rebalance` found the hub.
        let hub = self.hubs.remove(&a).expect("a hub");
        for Edge(b, _) in hub.hubs.iter() {
            // Infallible: `Hub::hubs` holds edges to hubs only.
            let other = self.hubs.get_mut(&b).expect("a hub neighbour");
            other.hubs.set(a, 0.0);
            other.others.insert(a);
        }
        self.changed.insert(a, all);
    }
}

impl Hub {
    /// Keeps the top list after edge `→ b` went from `old` to `w` (`w <=
    /// 0`: removed); returns whether the top list changed. A raise updates
    /// it in place; a fall of an edge in it (only erasure and pruning lower
    /// weights) marks it stale.
    fn retop(&mut self, b: NodeId, old: Option<f64>, w: f64, k: usize) -> bool {
        if self.stale {
            return false;
        }
        let held = self.top.iter().position(|e| e.0 == b);
        if w <= 0.0 || old.is_some_and(|old| w < old) {
            self.stale = held.is_some();
            return self.stale;
        }
        let entry = Edge(b, w);
        match held {
            Some(i) => {
                move_within(&mut self.top, i, entry);
                return true;
            }
            None if self.top.len() >= k
                && self
                    .top
                    .last()
                    .is_none_or(|last| order(&entry, last).is_ge()) =>
            {
                return false;
            }
            None => {}
        }
        // The list stays sorted: insert the raised entry in place.
        let at = self.top.partition_point(|e| order(e, &entry).is_lt());
        self.top.insert(at, entry);
        self.top.truncate(k);
        true
    }
}

/// The weight of the edge to `b` in a non-hub's list.
fn find(list: &[Edge], b: NodeId) -> Option<f64> {
    list.iter().find(|e| e.0 == b).map(|e| e.1)
}

/// Replaces `list[i]` with `entry` and moves it to its place in the order,
/// shifting only the entries it passes: a strengthened edge moves up a few
/// places, where removing and inserting it shifted half the list twice
/// (the copies were 4% of a bulk build, issue 24).
fn move_within(list: &mut [Edge], i: usize, entry: Edge) {
    let before = list[..i].partition_point(|e| order(e, &entry).is_lt());
    if before < i {
        list[before..=i].rotate_right(1);
        list[before] = entry;
    } else {
        let after = i + list[i + 1..].partition_point(|e| order(e, &entry).is_lt());
        list[i..=after].rotate_left(1);
        list[after] = entry;
    }
}

/// The anchored weight `2^((s - A)/T_g)` one fact observed at `s` adds to
/// each edge among its nodes.
pub fn contribution(s: WallTime, half_life_days: f64) -> f64 {
    ((s.millis() - ANCHOR_MS) as f64 / (half_life_days * DAY_MS as f64)).exp2()
}

/// Neighbour order: heavier first, then lower node id.
fn order(x: &Edge, y: &Edge) -> std::cmp::Ordering {
    let (Edge(xn, xw), Edge(yn, yw)) = (*x, *y);
    yw.total_cmp(&xw).then(xn.cmp(&yn))
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
        let names: Vec<Name> = ["a", "b", "c", "d"]
            .iter()
            .map(|n| Name::from(*n))
            .collect();
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
        /// Invariants 1 and 2 under any sequence of additions, exact
        /// recomputations and prunings: the writer holds every edge's
        /// weight of a model kept beside it, and every published list is
        /// the top `k` of the model's, as nodes cross to hubs and back.
        #[test]
        fn published_lists_are_the_exact_top_k(
            steps in proptest::collection::vec((0u32..12, 0u32..12, 0u32..50, 0u8..12), 1..200),
        ) {
            let k = 3;
            // Weights are anchored at the anchor itself, where one fact
            // contributes 1: pruning there drops edges below 10.
            let threshold = 10.0;
            let mut g = GraphWriter::new(GraphParams {
                neighbours_per_node: k,
                edge_threshold: threshold,
                ..GraphParams::default()
            });
            let names: Vec<Name> = (0..12).map(|i| Name::from(format!("n{i}"))).collect();
            let ids: Vec<NodeId> = names.iter().map(|n| g.intern(n)).collect();
            let mut model: std::collections::BTreeMap<(NodeId, NodeId), f64> = Default::default();
            for (step, (a, b, w, op)) in steps.into_iter().enumerate() {
                let (ia, ib) = (ids[a as usize], ids[b as usize]);
                let pair = (ia.min(ib), ia.max(ib));
                let w = f64::from(w);
                match op {
                    0 => {
                        let (na, nb) = (names[a as usize].clone(), names[b as usize].clone());
                        g.recompute(&[(ia, na), (ib, nb)], |_| true, |_, _| w);
                        if ia != ib {
                            model.insert(pair, w);
                        }
                    }
                    1 => {
                        g.prune(WallTime::from_millis(ANCHOR_MS));
                        model.retain(|_, weight| *weight >= threshold);
                    }
                    _ if w > 0.0 => {
                        g.strengthen(&[ia, ib], w);
                        if ia != ib {
                            *model.entry(pair).or_default() += w;
                        }
                    }
                    _ => {}
                }
                model.retain(|_, weight| *weight > 0.0);
                let adjacency = |n: NodeId| {
                    let mut edges: Vec<Edge> = model
                        .iter()
                        .filter_map(|(&(x, y), &w)| match (x == n, y == n) {
                            (true, _) => Some(Edge(y, w)),
                            (_, true) => Some(Edge(x, w)),
                            _ => None,
                        })
                        .collect();
                    edges.sort_by(order);
                    edges
                };
                // Invariant 1 after every step, wherever each weight lives.
                for &n in &ids {
                    let mut held = g.edges(n);
                    held.sort_by(order);
                    proptest::prop_assert_eq!(held, adjacency(n));
                }
                if step % 7 != 0 {
                    continue;
                }
                let published = g.publish();
                for &n in &ids {
                    let mut want = adjacency(n);
                    want.truncate(k);
                    proptest::prop_assert_eq!(published.neighbours(n), &want[..]);
                }
            }
        }
    }

    #[test]
    fn recompute_after_erasure_restores_the_exact_lists() {
        let mut g = GraphWriter::new(GraphParams::default());
        let (a, b) = (Name::from("a"), Name::from("b"));
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
        // A removed node keeps no name either; the others keep theirs.
        assert_eq!(g.graph().name(ib), None);
        assert_eq!(g.graph().name(ia).map(|n| n.as_str()), Some("a"));
        let again = g.intern(&b);
        assert_eq!(g.graph().name(again).map(|n| n.as_str()), Some("b"));
    }
}
