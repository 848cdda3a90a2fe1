//! Long runs of updates keep a model's memory bounded: each soak deletes a few random edges
//! and restores them, batch after batch (4,000 batches per strategy by default;
//! `DRED_SOAK_BATCHES` sets another number). After every restoring batch the program holds
//! the facts it held after materializing, and its heap memory (`heap_bytes`: fact tables,
//! index rows, retired facts, spare capacity) stays within 1.25× of what it held then: no
//! growth from retired facts left in indexes, rows of withdrawn facts, or tables that only
//! ever grow. At the end its facts are the independent oracle's least model.

use std::collections::BTreeSet;

use super::closure::*;
use super::{ground, oracle_model};
use dred::runtime::Program;
use dred::{Batch, Strategy, Trace};

fn batches() -> usize {
    std::env::var("DRED_SOAK_BATCHES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4_000)
}

/// A small deterministic generator (xorshift64*): a soak needs no shrinking.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }
}

/// A ring of `nodes` with random chords: one strongly connected graph, so that deleting
/// an edge withdraws and rederives much of the closure.
fn ring_with_chords(nodes: u32, chords: usize, rng: &mut Rng) -> Vec<E> {
    let mut edges: BTreeSet<(u32, u32)> = (0..nodes).map(|a| (a, (a + 1) % nodes)).collect();
    while edges.len() < nodes as usize + chords {
        let a = rng.below(nodes as usize) as u32;
        let b = rng.below(nodes as usize) as u32;
        edges.insert((a, b));
    }
    edges.into_iter().map(|(a, b)| E(a, b)).collect()
}

fn soak(strategy: Strategy) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let edges = ring_with_chords(24, 12, &mut rng);
    let batch = Batch::new().insert_all(edges.clone());
    let (mut program, _) = Closure::materialize_with(batch, Trace::Counts);
    let facts = ground(&program.facts());
    let materialized = program.heap_bytes();
    let mut highest = materialized;
    for pair in 0..batches() / 2 {
        let gone: Vec<E> = (0..1 + pair % 3)
            .map(|_| edges[rng.below(edges.len())].clone())
            .collect();
        let deletion = Batch::new().delete_all(gone.clone());
        program.update_using(deletion, strategy, Trace::Counts);
        program.update_using(Batch::new().insert_all(gone), strategy, Trace::Counts);
        assert_eq!(
            program.fact_count(),
            facts.len(),
            "{strategy:?}, batch pair {pair}: the restored model's size"
        );
        highest = highest.max(program.heap_bytes());
    }
    assert_eq!(ground(&program.facts()), facts, "{strategy:?}");
    let oracle = oracle_model(Closure::RULES, &facts, "E");
    assert_eq!(facts, oracle, "{strategy:?}: the oracle's model");
    assert!(
        highest * 4 <= materialized * 5,
        "{strategy:?}: {highest} bytes at most after updates, {materialized} after materializing"
    );
}

#[test]
fn dred_keeps_memory_bounded() {
    soak(Strategy::DRed);
}

#[test]
fn alternative_proofs_keep_memory_bounded() {
    soak(Strategy::AltProof);
}

#[test]
fn auto_keeps_memory_bounded() {
    soak(Strategy::Auto);
}

/// A recompute builds its tables at the old model's sizes (one allocation each); when
/// the deletion leaves a small model, it keeps no more than a materialization of what
/// is left would.
#[test]
fn a_recompute_that_leaves_little_holds_no_more_than_a_materialization() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let edges = ring_with_chords(48, 24, &mut rng);
    let (mut program, _) =
        Closure::materialize_with(Batch::new().insert_all(edges.clone()), Trace::Counts);
    let (gone, kept) = edges.split_at(edges.len() - 6);
    program.update_using(
        Batch::new().delete_all(gone.to_vec()),
        Strategy::Recompute,
        Trace::Counts,
    );
    let (fresh, _) =
        Closure::materialize_with(Batch::new().insert_all(kept.to_vec()), Trace::Counts);
    assert_eq!(ground(&program.facts()), ground(&fresh.facts()));
    assert!(
        program.heap_bytes() <= 2 * fresh.heap_bytes(),
        "{} bytes after the recompute, {} for a materialization of what it left",
        program.heap_bytes(),
        fresh.heap_bytes()
    );
}
