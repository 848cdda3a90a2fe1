//! The same programs in dred and in crepe (a peer engine from the registry): after every
//! random update batch, dred's maintained relations equal crepe's from-scratch result on
//! the current inputs.
//!
//! Cases per program: 24 by default; set `DRED_PROPTEST_CASES` for a longer soak.

use std::collections::BTreeSet;

use dred::Batch;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

type Edge = (u32, u32);
type Edges = BTreeSet<Edge>;

fn cases() -> u32 {
    std::env::var("DRED_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

/// Random edge sets and batches of (insert?, edge) over 8 nodes.
fn histories() -> impl Strategy<Value = (Vec<Edge>, Vec<Vec<(bool, Edge)>>)> {
    let edge = || (0u32..8, 0u32..8);
    (
        prop::collection::vec(edge(), 0..20),
        prop::collection::vec(prop::collection::vec((any::<bool>(), edge()), 0..8), 1..6),
    )
}

/// Applies each batch to `edges` (deletions first) and to the dred program through
/// `update`; after each, compares `dred_facts()` with `peer(&edges)`.
fn compare<S>(
    initial: &[Edge],
    batches: &[Vec<(bool, Edge)>],
    state: &mut S,
    update: impl Fn(&mut S, &[Edge], &[Edge]),
    dred_facts: impl Fn(&S) -> Vec<BTreeSet<Vec<u32>>>,
    peer: impl Fn(&Edges) -> Vec<BTreeSet<Vec<u32>>>,
) -> Result<(), TestCaseError> {
    let mut edges: Edges = initial.iter().copied().collect();
    update(state, &[], initial);
    prop_assert_eq!(dred_facts(state), peer(&edges));
    for batch in batches {
        let deletions: Vec<Edge> = batch.iter().filter(|b| !b.0).map(|b| b.1).collect();
        let insertions: Vec<Edge> = batch.iter().filter(|b| b.0).map(|b| b.1).collect();
        deletions.iter().for_each(|e| {
            edges.remove(e);
        });
        edges.extend(insertions.iter().copied());
        update(state, &deletions, &insertions);
        prop_assert_eq!(dred_facts(state), peer(&edges));
    }
    Ok(())
}

fn runner() -> TestRunner {
    TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    })
}

fn pairs(it: impl Iterator<Item = (u32, u32)>) -> BTreeSet<Vec<u32>> {
    it.map(|(a, b)| vec![a, b]).collect()
}

mod dred_tc {
    dred::datalog! {
        pub struct Tc;
        @input pub struct E(pub u32, pub u32);
        pub struct Nonlinear(pub u32, pub u32);
        pub struct Linear(pub u32, pub u32);
        pub struct SameGen(pub u32, pub u32);
        pub struct Conn(pub u32, pub u32);
        Nonlinear(x, y) <- E(x, y);
        Nonlinear(x, z) <- Nonlinear(x, y), Nonlinear(y, z);
        Linear(x, y) <- E(x, y);
        Linear(x, z) <- E(x, y), Linear(y, z);
        // Edges read as child → parent.
        SameGen(x, y) <- E(x, p), E(y, p);
        SameGen(x, y) <- E(x, a), SameGen(a, b), E(y, b);
        Conn(x, y) <- E(x, y);
        Conn(x, w) <- Conn(x, y), E(y, z), Conn(z, w);
    }
}

mod crepe_tc {
    use crepe::crepe;
    crepe! {
        @input
        pub struct E(pub u32, pub u32);
        @output
        pub struct Nonlinear(pub u32, pub u32);
        @output
        pub struct Linear(pub u32, pub u32);
        @output
        pub struct SameGen(pub u32, pub u32);
        @output
        pub struct Conn(pub u32, pub u32);
        Nonlinear(x, y) <- E(x, y);
        Nonlinear(x, z) <- Nonlinear(x, y), Nonlinear(y, z);
        Linear(x, y) <- E(x, y);
        Linear(x, z) <- E(x, y), Linear(y, z);
        SameGen(x, y) <- E(x, p), E(y, p);
        SameGen(x, y) <- E(x, a), SameGen(a, b), E(y, b);
        Conn(x, y) <- E(x, y);
        Conn(x, w) <- Conn(x, y), E(y, z), Conn(z, w);
    }
}

#[test]
fn closures_same_generation_and_three_atom_rules_agree_with_crepe() {
    use dred_tc::*;
    runner()
        .run(&histories(), |(initial, batches)| {
            let mut program = Tc::new();
            compare(
                &initial,
                &batches,
                &mut program,
                |p, deletions, insertions| {
                    let batch = Batch::new()
                        .delete_all(deletions.iter().map(|&(a, b)| E(a, b)))
                        .insert_all(insertions.iter().map(|&(a, b)| E(a, b)));
                    p.update(batch);
                },
                |p| {
                    vec![
                        pairs(p.relation::<Nonlinear>().iter().map(|f| (f.0, f.1))),
                        pairs(p.relation::<Linear>().iter().map(|f| (f.0, f.1))),
                        pairs(p.relation::<SameGen>().iter().map(|f| (f.0, f.1))),
                        pairs(p.relation::<Conn>().iter().map(|f| (f.0, f.1))),
                    ]
                },
                |edges| {
                    let mut peer = crepe_tc::Crepe::new();
                    peer.extend(edges.iter().map(|&(a, b)| crepe_tc::E(a, b)));
                    let (nonlinear, linear, same_gen, conn) = peer.run();
                    vec![
                        pairs(nonlinear.iter().map(|f| (f.0, f.1))),
                        pairs(linear.iter().map(|f| (f.0, f.1))),
                        pairs(same_gen.iter().map(|f| (f.0, f.1))),
                        pairs(conn.iter().map(|f| (f.0, f.1))),
                    ]
                },
            )
        })
        .unwrap();
}

mod dred_parity {
    dred::datalog! {
        pub struct Parity;
        @input pub struct E(pub u32, pub u32);
        pub struct Even(pub u32);
        pub struct Odd(pub u32);
        pub struct Loop(pub u32);
        Even(0);
        Odd(y) <- Even(x), E(x, y);
        Even(y) <- Odd(x), E(x, y);
        Loop(x) <- Even(x), Odd(x), E(x, x);
    }
}

mod crepe_parity {
    use crepe::crepe;
    crepe! {
        @input
        pub struct E(pub u32, pub u32);
        @output
        pub struct Even(pub u32);
        @output
        pub struct Odd(pub u32);
        @output
        pub struct Loop(pub u32);
        Even(0);
        Odd(y) <- Even(x), E(x, y);
        Even(y) <- Odd(x), E(x, y);
        Loop(x) <- Even(x), Odd(x), E(x, x);
    }
}

#[test]
fn mutual_recursion_with_constants_agrees_with_crepe() {
    use dred_parity::*;
    let singles =
        |it: &mut dyn Iterator<Item = u32>| -> BTreeSet<Vec<u32>> { it.map(|x| vec![x]).collect() };
    runner()
        .run(&histories(), |(initial, batches)| {
            let mut program = Parity::new();
            compare(
                &initial,
                &batches,
                &mut program,
                |p, deletions, insertions| {
                    p.update(
                        Batch::new()
                            .delete_all(deletions.iter().map(|&(a, b)| E(a, b)))
                            .insert_all(insertions.iter().map(|&(a, b)| E(a, b))),
                    );
                },
                |p| {
                    vec![
                        singles(&mut p.relation::<Even>().iter().map(|f| f.0)),
                        singles(&mut p.relation::<Odd>().iter().map(|f| f.0)),
                        singles(&mut p.relation::<Loop>().iter().map(|f| f.0)),
                    ]
                },
                |edges| {
                    let mut peer = crepe_parity::Crepe::new();
                    peer.extend(edges.iter().map(|&(a, b)| crepe_parity::E(a, b)));
                    let (even, odd, looped) = peer.run();
                    vec![
                        singles(&mut even.iter().map(|f| f.0)),
                        singles(&mut odd.iter().map(|f| f.0)),
                        singles(&mut looped.iter().map(|f| f.0)),
                    ]
                },
            )
        })
        .unwrap();
}

const NODE_NAMES: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];

mod dred_mixed {
    dred::datalog! {
        pub struct Mixed;
        @input pub struct Link(pub &'static str, pub &'static str);
        pub struct Ready();
        pub struct SelfLoop(pub &'static str);
        pub struct Sym(pub &'static str, pub &'static str);
        pub struct Path(pub &'static str, pub &'static str);
        pub struct FromA(pub &'static str);
        pub struct Cyclic();
        Ready();
        SelfLoop(x) <- Link(x, x);
        Sym(x, y) <- Link(x, y), Link(y, x);
        Path(x, y) <- Ready(), Link(x, y);
        Path(x, z) <- Path(x, y), Link(y, z);
        FromA(y) <- Path("a", y);
        Cyclic() <- Path(x, x);
    }
}

mod crepe_mixed {
    use crepe::crepe;
    crepe! {
        @input
        pub struct Link(pub &'static str, pub &'static str);
        struct Ready();
        @output
        pub struct SelfLoop(pub &'static str);
        @output
        pub struct Sym(pub &'static str, pub &'static str);
        @output
        pub struct Path(pub &'static str, pub &'static str);
        @output
        pub struct FromA(pub &'static str);
        @output
        pub struct Cyclic();
        Ready();
        // crepe does not repeat a variable within an atom: the same rule, with an equality.
        SelfLoop(x) <- Link(x, y), (x == y);
        Sym(x, y) <- Link(x, y), Link(y, x);
        Path(x, y) <- Ready(), Link(x, y);
        Path(x, z) <- Path(x, y), Link(y, z);
        FromA(y) <- Path("a", y);
        Cyclic() <- Path(x, y), (x == y);
    }
}

#[test]
fn repeated_variables_zero_arity_and_string_constants_agree_with_crepe() {
    use dred_mixed::*;
    let name = |n: u32| NODE_NAMES[n as usize];
    // Strings compare as names; encode them back to their node numbers for comparison.
    let code = |s: &str| NODE_NAMES.iter().position(|n| *n == s).unwrap() as u32;
    runner()
        .run(&histories(), |(initial, batches)| {
            let mut program = Mixed::new();
            compare(
                &initial,
                &batches,
                &mut program,
                |p, deletions, insertions| {
                    p.update(
                        Batch::new()
                            .delete_all(deletions.iter().map(|&(a, b)| Link(name(a), name(b))))
                            .insert_all(insertions.iter().map(|&(a, b)| Link(name(a), name(b)))),
                    );
                },
                |p| {
                    vec![
                        p.relation::<SelfLoop>()
                            .iter()
                            .map(|f| vec![code(f.0)])
                            .collect(),
                        p.relation::<Sym>()
                            .iter()
                            .map(|f| vec![code(f.0), code(f.1)])
                            .collect(),
                        p.relation::<Path>()
                            .iter()
                            .map(|f| vec![code(f.0), code(f.1)])
                            .collect(),
                        p.relation::<FromA>()
                            .iter()
                            .map(|f| vec![code(f.0)])
                            .collect(),
                        p.relation::<Cyclic>().iter().map(|_| vec![]).collect(),
                    ]
                },
                |edges| {
                    let mut peer = crepe_mixed::Crepe::new();
                    peer.extend(
                        edges
                            .iter()
                            .map(|&(a, b)| crepe_mixed::Link(name(a), name(b))),
                    );
                    let (self_loop, sym, path, from_a, cyclic) = peer.run();
                    vec![
                        self_loop.iter().map(|f| vec![code(f.0)]).collect(),
                        sym.iter().map(|f| vec![code(f.0), code(f.1)]).collect(),
                        path.iter().map(|f| vec![code(f.0), code(f.1)]).collect(),
                        from_a.iter().map(|f| vec![code(f.0)]).collect(),
                        cyclic.iter().map(|_| vec![]).collect(),
                    ]
                },
            )
        })
        .unwrap();
}
