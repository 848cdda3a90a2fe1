//! Transitive closures kept by reachability: which pairs deleting edges takes from a graph's
//! closure, read off the graph's strongly connected components instead of the closure's
//! rule instances.
//!
//! A relation defined as the transitive closure of an input relation (`datalog!` recognizes
//! the linear and non-linear forms, see [`crate::Program::closure_losses`]) is a graph's
//! reachability. Inside a strongly connected component, one edge's deletion moves many
//! more pairs to longer shortest paths than it takes away, and the alternative-proof
//! strategy re-checks every pair that moves: deleting one edge of a 1,000-node cycle with
//! 100 chords takes 22,747 of its 1,000,000 pairs away, but raises the stamps of 84,684
//! more, over 123 rounds. Here the work is the graph's, not the closure's: two passes of
//! Tarjan's algorithm over the edges (before and after the deletion), one reachability
//! bitset per component, and one bitset difference per node.
//!
//! The facts of such a relation then no longer carry stamps that vouch for a proof (a
//! pair kept by reachability keeps its stamp even when a shorter path went), so a program
//! decides once, at materialization ([`dense_enough`]), and keeps to it until it is
//! rematerialized: see [`crate::Bookkeeping::reachability`].

use std::collections::HashMap;
use std::hash::Hash;

use crate::fact::FactHashState;

type Map<K, V> = HashMap<K, V, FactHashState>;

/// No node, no component.
const NONE: u32 = u32::MAX;

/// A program keeps its closures by reachability when each graph's `n` nodes make `n²` at
/// most `DENSE_SHARE` times its closure's pairs: the components' bitsets (before and after
/// a deletion, at most `2n²` bits) then take at most two bytes a pair, beside the eight
/// and more a stored pair takes.
const DENSE_SHARE: usize = 8;

/// [`lost_pairs`] keeps bitsets while `n²` is at most `SPARSE_SHARE` times the closure's
/// pairs. Past that (a graph that grew sparse since its program decided) it searches from
/// each node that reaches a deleted edge instead, which costs the pairs those nodes had.
const SPARSE_SHARE: usize = 64;

/// Whether a closure of `pairs` pairs over `edges` is dense enough to keep by reachability:
/// `n² ≤ 8 · pairs` for the `n` nodes the edges touch.
///
/// ```
/// use dred_runtime::closure::dense_enough;
/// let cycle = |n: u32| (0..n).map(move |i| (i, (i + 1) % n));
/// assert!(dense_enough(cycle(100), 100 * 100));
/// // A path's closure has n(n-1)/2 pairs: dense enough. A matching's has n/2.
/// assert!(dense_enough((0..99u32).map(|i| (i, i + 1)), 99 * 100 / 2));
/// assert!(!dense_enough((0..100u32).map(|i| (2 * i, 2 * i + 1)), 100));
/// ```
pub fn dense_enough<N: Clone + Eq + Hash>(
    edges: impl IntoIterator<Item = (N, N)>,
    pairs: usize,
) -> bool {
    let nodes = Graph::new(edges).names.len();
    nodes.saturating_mul(nodes) <= pairs.saturating_mul(DENSE_SHARE)
}

/// The pairs of the transitive closure of `edges` (the graph before the deletion, `deleted`
/// among its edges) that the transitive closure of `edges` without `deleted` lacks, or
/// `None` if there are more than `limit`. Deleted pairs that are not edges are ignored.
///
/// `closure_pairs`, the closure's size before the deletion, chooses how: by reachability
/// bitsets per strongly connected component while the square of the node count is at most
/// 64 times as large, else by a search from each node that reaches a deleted edge.
///
/// ```
/// use dred_runtime::closure::lost_pairs;
/// // A 3-cycle with a chord 0 → 2: deleting 1 → 2 leaves node 1 reaching nothing, while
/// // the chord keeps 0 and 2 on a cycle (and 0 → 1 still reaches 1).
/// let edges = [(0, 1), (1, 2), (2, 0), (0, 2)];
/// let mut lost = lost_pairs(edges, [(1, 2)], 9, usize::MAX).unwrap();
/// lost.sort();
/// assert_eq!(lost, [(1, 0), (1, 1), (1, 2)]);
/// assert_eq!(lost_pairs(edges, [(1, 2)], 9, 2), None);
/// ```
pub fn lost_pairs<N: Clone + Eq + Hash>(
    edges: impl IntoIterator<Item = (N, N)>,
    deleted: impl IntoIterator<Item = (N, N)>,
    closure_pairs: usize,
    limit: usize,
) -> Option<Vec<(N, N)>> {
    let graph = Graph::new(edges);
    let mut kept = vec![true; graph.targets.len()];
    let mut any = false;
    for (a, b) in deleted {
        let (Some(&a), Some(&b)) = (graph.ids.get(&a), graph.ids.get(&b)) else {
            continue;
        };
        if let Some(edge) = graph.edges_of(a).find(|&e| graph.targets[e] == b) {
            any |= std::mem::replace(&mut kept[edge], false);
        }
    }
    let mut lost = Vec::new();
    if !any || graph.bypassed(&kept) {
        return Some(lost);
    }
    let mut emit = |x: usize, z: usize| {
        lost.push((graph.names[x].clone(), graph.names[z].clone()));
        lost.len() <= limit
    };
    let n = graph.names.len();
    let complete = if n.saturating_mul(n) > closure_pairs.saturating_mul(SPARSE_SHARE) {
        graph.lost_by_search(&kept, &mut emit)
    } else {
        graph.lost_by_bitsets(&kept, limit, &mut emit)
    };
    complete.then_some(lost)
}

impl<N> Graph<N> {
    /// Whether the source of every edge `kept` leaves out still reaches its target over the
    /// edges it keeps: then every path of the graph has a detour, and the closure loses
    /// nothing. Deleting an edge a shortcut spans, or one of a strongly connected component
    /// that stays so, is found so in a few steps; the search gives up (`false`) once it has
    /// visited as many edges as the graph has, so it costs at most that.
    fn bypassed(&self, kept: &[bool]) -> bool {
        let mut budget = self.targets.len();
        let mut seen = vec![u32::MAX; self.names.len()];
        let mut stack = Vec::new();
        let deleted = self.edges().filter(|&(_, edge)| !kept[edge]);
        for (mark, (source, edge)) in deleted.enumerate() {
            let target = self.targets[edge];
            let mark = mark as u32;
            stack.clear();
            stack.push(source);
            seen[source as usize] = mark;
            let mut found = false;
            'search: while let Some(a) = stack.pop() {
                for edge in self.edges_of(a) {
                    if budget == 0 {
                        return false;
                    }
                    budget -= 1;
                    let b = self.targets[edge];
                    if !kept[edge] {
                        continue;
                    }
                    // Before `seen`: a deleted loop's target is its source.
                    if b == target {
                        found = true;
                        break 'search;
                    }
                    if seen[b as usize] == mark {
                        continue;
                    }
                    seen[b as usize] = mark;
                    stack.push(b);
                }
            }
            if !found {
                return false;
            }
        }
        true
    }
}

impl<N: Clone + Eq + Hash> Graph<N> {
    /// [`lost_pairs`] by reachability bitsets per component, before and after: counted
    /// first, so that past `limit` nothing is emitted. Returns whether it emitted them all.
    fn lost_by_bitsets(
        &self,
        kept: &[bool],
        limit: usize,
        emit: &mut impl FnMut(usize, usize) -> bool,
    ) -> bool {
        let before = Reach::new(self, |_| true);
        let after = Reach::new(self, |edge| kept[edge]);
        // A node always belongs to its own full set; it reaches itself only on a cycle.
        let lost_self = |x: usize| before.cyclic(x) && !after.cyclic(x);
        let lost_bits = |x: usize| {
            let (old, new) = (before.full(x), after.full(x));
            old.iter().zip(new).map(|(&old, &new)| old & !new)
        };
        let count: usize = (0..self.names.len())
            .map(|x| {
                let bits: u32 = lost_bits(x).map(u64::count_ones).sum();
                bits as usize + usize::from(lost_self(x))
            })
            .sum();
        if count > limit {
            return false;
        }
        for x in 0..self.names.len() {
            for (word, mut bits) in lost_bits(x).enumerate() {
                while bits != 0 {
                    emit(x, word * 64 + bits.trailing_zeros() as usize);
                    bits &= bits - 1;
                }
            }
            if lost_self(x) {
                emit(x, x);
            }
        }
        true
    }
}

/// Groups the values of `(key, value)` pairs by key, each key below `keys` (a counting
/// sort): key `k`'s values are `grouped[starts[k]..starts[k + 1]]`, in the pairs' order.
/// Returns `(starts, grouped)`.
fn group_by_key(
    keys: usize,
    pairs: impl Iterator<Item = (u32, u32)> + Clone,
) -> (Vec<u32>, Vec<u32>) {
    let mut starts = vec![0u32; keys + 1];
    for (key, _) in pairs.clone() {
        starts[key as usize + 1] += 1;
    }
    for key in 0..keys {
        starts[key + 1] += starts[key];
    }
    let mut next = starts.clone();
    let mut grouped = vec![0; starts[keys] as usize];
    for (key, value) in pairs {
        grouped[next[key as usize] as usize] = value;
        next[key as usize] += 1;
    }
    (starts, grouped)
}

/// A graph's edges by source, over dense node numbers.
struct Graph<N> {
    ids: Map<N, u32>,
    names: Vec<N>,
    /// Node `a`'s edges are `targets[starts[a]..starts[a + 1]]`.
    starts: Vec<u32>,
    targets: Vec<u32>,
}

impl<N: Clone + Eq + Hash> Graph<N> {
    fn new(edges: impl IntoIterator<Item = (N, N)>) -> Self {
        let mut ids: Map<N, u32> = Map::default();
        let mut names = Vec::new();
        let mut id = |node: N| {
            *ids.entry(node).or_insert_with_key(|node| {
                names.push(node.clone());
                (names.len() - 1) as u32
            })
        };
        let pairs: Vec<(u32, u32)> = edges.into_iter().map(|(a, b)| (id(a), id(b))).collect();
        let (starts, targets) = group_by_key(names.len(), pairs.into_iter());
        Graph {
            ids,
            names,
            starts,
            targets,
        }
    }

    /// [`lost_pairs`] without bitsets: from every node that reaches a deleted edge (found
    /// by a search backwards from their sources), a search before and after. Returns
    /// whether it emitted them all (`emit` returns whether to go on).
    fn lost_by_search(&self, kept: &[bool], emit: &mut impl FnMut(usize, usize) -> bool) -> bool {
        let n = self.names.len();
        // The edges backwards: node `b`'s sources are `sources[back[b]..back[b + 1]]`.
        let edges = self.edges();
        let (back, sources) = group_by_key(n, edges.clone().map(|(a, e)| (self.targets[e], a)));
        let mut affected = vec![false; n];
        let mut stack = Vec::new();
        for (a, _) in edges.filter(|&(_, edge)| !kept[edge]) {
            if !std::mem::replace(&mut affected[a as usize], true) {
                stack.push(a);
            }
        }
        while let Some(b) = stack.pop() {
            for &a in &sources[back[b as usize] as usize..back[b as usize + 1] as usize] {
                if !affected[a as usize] {
                    affected[a as usize] = true;
                    stack.push(a);
                }
            }
        }
        // Marks: the search from the `i`th affected node marks `i`, before and after.
        let (mut before, mut after) = (vec![u32::MAX; n], vec![u32::MAX; n]);
        let mut reached = Vec::new();
        let mut search = |x: u32,
                          mark: u32,
                          seen: &mut [u32],
                          reached: &mut Vec<u32>,
                          keep: &dyn Fn(usize) -> bool| {
            stack.push(x);
            while let Some(a) = stack.pop() {
                for edge in self.edges_of(a) {
                    let b = self.targets[edge];
                    if keep(edge) && seen[b as usize] != mark {
                        seen[b as usize] = mark;
                        reached.push(b);
                        stack.push(b);
                    }
                }
            }
        };
        for (i, x) in (0..n as u32).filter(|&x| affected[x as usize]).enumerate() {
            let mark = i as u32;
            search(x, mark, &mut after, &mut reached, &|edge| kept[edge]);
            reached.clear();
            search(x, mark, &mut before, &mut reached, &|_| true);
            for &z in &reached {
                if after[z as usize] != mark && !emit(x as usize, z as usize) {
                    return false;
                }
            }
            reached.clear();
        }
        true
    }
}

impl<N> Graph<N> {
    /// The positions in `targets` of node `a`'s edges.
    fn edges_of(&self, a: u32) -> std::ops::Range<usize> {
        self.starts[a as usize] as usize..self.starts[a as usize + 1] as usize
    }

    /// Every edge, as its source and its position in `targets`, by source.
    fn edges(&self) -> impl Iterator<Item = (u32, usize)> + Clone + '_ {
        (0..self.names.len() as u32).flat_map(|a| self.edges_of(a).map(move |edge| (a, edge)))
    }
}

/// Reachability over the edges a filter keeps: per strongly connected component, the
/// bitset of the nodes it or its nodes reach (its *full* set: its own nodes included).
struct Reach {
    component: Vec<u32>,
    /// Per component: whether its nodes reach themselves (two or more nodes, or a loop).
    cyclic: Vec<bool>,
    /// `words` words per component.
    full: Vec<u64>,
    words: usize,
}

impl Reach {
    fn new<N>(graph: &Graph<N>, keep: impl Fn(usize) -> bool) -> Self {
        let n = graph.names.len();
        let (component, count) = components(graph, &keep);
        let words = n.div_ceil(64);
        let by_component = component
            .iter()
            .enumerate()
            .map(|(node, &c)| (c, node as u32));
        let (starts, members) = group_by_key(count, by_component);
        let mut cyclic = vec![false; count];
        let mut full = vec![0u64; count * words];
        // Tarjan numbers a component after every component it reaches, so those are done.
        for c in 0..count {
            let (done, rest) = full.split_at_mut(c * words);
            let own = &mut rest[..words];
            let nodes = &members[starts[c] as usize..starts[c + 1] as usize];
            cyclic[c] = nodes.len() > 1;
            for &a in nodes {
                own[a as usize / 64] |= 1 << (a % 64);
                for edge in graph.edges_of(a) {
                    if !keep(edge) {
                        continue;
                    }
                    let d = component[graph.targets[edge] as usize] as usize;
                    if d == c {
                        cyclic[c] = true;
                    } else {
                        let theirs = &done[d * words..(d + 1) * words];
                        own.iter_mut().zip(theirs).for_each(|(w, t)| *w |= t);
                    }
                }
            }
        }
        Reach {
            component,
            cyclic,
            full,
            words,
        }
    }

    fn full(&self, node: usize) -> &[u64] {
        let c = self.component[node] as usize;
        &self.full[c * self.words..(c + 1) * self.words]
    }

    fn cyclic(&self, node: usize) -> bool {
        self.cyclic[self.component[node] as usize]
    }
}

/// Tarjan's strongly connected components over the edges `keep` allows: each node's
/// component, numbered so that a component comes after every component it reaches, and
/// the count.
fn components<N>(graph: &Graph<N>, keep: &impl Fn(usize) -> bool) -> (Vec<u32>, usize) {
    let n = graph.names.len();
    let mut order = vec![NONE; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut component = vec![NONE; n];
    let mut stack: Vec<u32> = Vec::new();
    // The depth-first path: a node and the next of its edges to follow.
    let mut path: Vec<(u32, usize)> = Vec::new();
    let (mut visited, mut count) = (0u32, 0u32);
    for root in 0..n as u32 {
        if order[root as usize] != NONE {
            continue;
        }
        let mut enter = Some(root);
        loop {
            if let Some(v) = enter.take() {
                order[v as usize] = visited;
                low[v as usize] = visited;
                visited += 1;
                on_stack[v as usize] = true;
                stack.push(v);
                path.push((v, graph.starts[v as usize] as usize));
            }
            let Some(&mut (v, ref mut next)) = path.last_mut() else {
                break;
            };
            if *next < graph.starts[v as usize + 1] as usize {
                let edge = *next;
                *next += 1;
                let w = graph.targets[edge];
                if !keep(edge) {
                    continue;
                }
                if order[w as usize] == NONE {
                    enter = Some(w);
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(order[w as usize]);
                }
                continue;
            }
            path.pop();
            if let Some(&(parent, _)) = path.last() {
                low[parent as usize] = low[parent as usize].min(low[v as usize]);
            }
            if low[v as usize] == order[v as usize] {
                loop {
                    let w = stack.pop().expect("v is on the stack");
                    on_stack[w as usize] = false;
                    component[w as usize] = count;
                    if w == v {
                        break;
                    }
                }
                count += 1;
            }
        }
    }
    (component, count as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The closure by repeated joining: shares nothing with the code above.
    fn closure(edges: &[(u32, u32)]) -> BTreeSet<(u32, u32)> {
        let mut pairs: BTreeSet<(u32, u32)> = edges.iter().copied().collect();
        loop {
            let more: Vec<(u32, u32)> = pairs
                .iter()
                .flat_map(|&(x, y)| {
                    edges
                        .iter()
                        .filter(move |&&(a, _)| a == y)
                        .map(move |&(_, z)| (x, z))
                })
                .filter(|pair| !pairs.contains(pair))
                .collect();
            if more.is_empty() {
                return pairs;
            }
            pairs.extend(more);
        }
    }

    fn expected(edges: &[(u32, u32)], deleted: &[(u32, u32)]) -> BTreeSet<(u32, u32)> {
        let kept: Vec<(u32, u32)> = edges
            .iter()
            .copied()
            .filter(|e| !deleted.contains(e))
            .collect();
        let after = closure(&kept);
        closure(edges).difference(&after).copied().collect()
    }

    type Edges = Vec<(u32, u32)>;

    /// Graphs of up to 12 nodes, and some of their edges to delete (with now and then one
    /// that is no edge), from a small xorshift: the tests need varied graphs, not a
    /// random-number crate.
    fn graphs(seed: u64) -> impl Iterator<Item = (Edges, Edges)> {
        let mut state = seed;
        let mut next = move |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound
        };
        (0..300).map(move |_| {
            let nodes = 1 + next(12);
            let count = next(3 * nodes);
            let edges: BTreeSet<(u32, u32)> = (0..count)
                .map(|_| (next(nodes) as u32, next(nodes) as u32))
                .collect();
            let edges: Vec<(u32, u32)> = edges.into_iter().collect();
            let stray = (next(5) == 0).then_some((99, 0));
            let deleted = edges
                .iter()
                .copied()
                .filter(|_| next(4) == 0)
                .chain(stray)
                .collect();
            (edges, deleted)
        })
    }

    #[test]
    fn lost_pairs_are_the_closure_before_less_the_closure_after() {
        for (edges, deleted) in graphs(0x9e37_79b9_7f4a_7c15) {
            let pairs = closure(&edges).len();
            let lost: BTreeSet<(u32, u32)> = lost_pairs(
                edges.iter().copied(),
                deleted.iter().copied(),
                pairs,
                usize::MAX,
            )
            .expect("no limit")
            .into_iter()
            .collect();
            assert_eq!(
                lost,
                expected(&edges, &deleted),
                "{edges:?} less {deleted:?}"
            );
        }
    }

    #[test]
    fn a_sparse_graph_is_searched_node_by_node_with_the_same_result() {
        for (edges, deleted) in graphs(0x2545_f491_4f6c_dd1d) {
            // A closure size of 0 makes every graph too sparse for bitsets.
            let mut by_search = lost_pairs(
                edges.iter().copied(),
                deleted.iter().copied(),
                0,
                usize::MAX,
            )
            .expect("no limit");
            by_search.sort_unstable();
            let expected: Vec<(u32, u32)> = expected(&edges, &deleted).into_iter().collect();
            assert_eq!(by_search, expected, "{edges:?} less {deleted:?}");
        }
    }

    #[test]
    fn an_edge_with_a_detour_is_bypassed_and_one_without_is_not() {
        let graph = Graph::new([(0, 1), (1, 2), (0, 2), (2, 2), (2, 0)]);
        let without = |edge: (u32, u32)| -> Vec<bool> {
            let a = graph.ids[&edge.0];
            let b = graph.ids[&edge.1];
            (0..graph.targets.len())
                .map(|e| !(graph.edges_of(a).contains(&e) && graph.targets[e] == b))
                .collect()
        };
        // 0 → 1 → 2 spans the shortcut; the loop at 2 has 2 → 0 → 2.
        assert!(graph.bypassed(&without((0, 2))));
        assert!(graph.bypassed(&without((2, 2))));
        assert!(!graph.bypassed(&without((0, 1))));
    }

    #[test]
    fn a_cycle_cut_once_loses_the_pairs_that_crossed_the_cut() {
        let n = 50u32;
        let edges: Vec<(u32, u32)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
        let pairs = (n * n) as usize;
        let lost = lost_pairs(edges.iter().copied(), [(n - 1, 0)], pairs, usize::MAX);
        // What remains is the path 0 → … → n-1: n(n-1)/2 pairs of n².
        let count = (n * n - n * (n - 1) / 2) as usize;
        assert_eq!(lost.map(|lost| lost.len()), Some(count));
        // Past a limit, neither way gives any.
        for pairs in [pairs, 0] {
            let limited = lost_pairs(edges.iter().copied(), [(n - 1, 0)], pairs, count - 1);
            assert_eq!(limited, None);
            let exact = lost_pairs(edges.iter().copied(), [(n - 1, 0)], pairs, count);
            assert_eq!(exact.map(|lost| lost.len()), Some(count));
        }
    }
}
