//! Same-generation's two indexes on `Sg` serve only the joins from a delta `Par` fact,
//! which can scan `Par` and test `Sg` instead: a materialization leaves them unbuilt, an
//! update scans while `|delta| × |Par|` is at most `|Sg|`, and a larger one builds them.
//! Every strategy keeps the oracle's model either way.

use super::{ground, oracle_model};
use dred::runtime::Program;
use dred::{Batch, Strategy, Trace};

dred::datalog! {
    pub struct SameGeneration;
    @input pub struct Par(pub u32, pub u32);
    pub struct Sg(pub u32, pub u32);
    Sg(x, y) <- Par(x, p), Par(y, p);
    Sg(x, y) <- Par(x, a), Sg(a, b), Par(y, b);
}

/// A complete binary tree of `depth` levels below the root 1: node n's children are 2n
/// and 2n + 1.
fn tree(depth: u32) -> Vec<Par> {
    (2..1u32 << (depth + 1))
        .map(|child| Par(child, child / 2))
        .collect()
}

fn built(program: &SameGeneration) -> [bool; 2] {
    let sg = program.relation::<Sg>().rows();
    [sg.index_is_built(|ix| &ix.0), sg.index_is_built(|ix| &ix.1)]
}

fn assert_oracle(program: &SameGeneration, context: &str) {
    let held = ground(&program.facts());
    let oracle = oracle_model(SameGeneration::RULES, &held, "Par");
    assert_eq!(held, oracle, "{context}");
}

#[test]
fn small_updates_scan_and_a_large_one_builds_the_indexes() {
    let edges = tree(5);
    let (base, _) = SameGeneration::materialize(Batch::new().insert_all(edges.clone()));
    assert_eq!(built(&base), [false, false], "after materializing");
    assert_oracle(&base, "materialized");
    for strategy in [Strategy::DRed, Strategy::AltProof, Strategy::Auto] {
        let mut program = base.clone();
        // One leaf and one inner edge: 62 × 1 ≤ |Sg|, so both scan.
        let gone = vec![Par(50, 25), Par(6, 3)];
        for edge in &gone {
            let deletion = Batch::new().delete(edge.clone());
            program.update_using(deletion, strategy, Trace::Counts);
            assert_oracle(&program, &format!("{strategy:?}, {edge:?} deleted"));
            let insertion = Batch::new().insert(edge.clone());
            program.update_using(insertion, strategy, Trace::Counts);
            assert_oracle(&program, &format!("{strategy:?}, {edge:?} back"));
        }
        assert_eq!(
            built(&program),
            [false, false],
            "{strategy:?}, small updates"
        );
        // Half the tree's edges, then back: restoring them, |delta| × |Par| is past
        // |Sg|, so the joins probe, building the indexes.
        let half: Vec<Par> = edges.iter().step_by(2).cloned().collect();
        let deletion = Batch::new().delete_all(half.clone());
        program.update_using(deletion, strategy, Trace::Counts);
        assert_oracle(&program, &format!("{strategy:?}, half deleted"));
        program.update_using(Batch::new().insert_all(half), strategy, Trace::Counts);
        assert_oracle(&program, &format!("{strategy:?}, half back"));
        assert_eq!(
            built(&program),
            [true, true],
            "{strategy:?}, a large update"
        );
        // Built, the indexes are kept up to date.
        for edge in &gone {
            program.update_using(Batch::new().delete(edge.clone()), strategy, Trace::Counts);
            assert_oracle(&program, &format!("{strategy:?}, built, {edge:?} deleted"));
        }
    }
}
