//! Magic sets: `@query` declarations generate the demand-driven program the seed
//! describes, and DRed maintains its demand and answer relations together.
//!
//! Cases per property: 24 by default; set `DRED_PROPTEST_CASES` for a longer soak.

mod common;

use std::collections::BTreeSet;

use common::*;
use dred::runtime::{FactSets, GroundFact, Program};
use dred::Batch;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

mod seed {
    dred::datalog! {
        pub struct Reachability;
        @input pub struct E(pub &'static str, pub &'static str);
        pub struct R(pub &'static str, pub &'static str);
        R(x, y) <- E(x, y);
        R(x, z) <- R(x, y), R(y, z);
        /// The seed's query R(a, Y).
        @query pub FromA = R("a", _);
    }
}

#[test]
fn the_seed_query_generates_exactly_the_seeds_program() {
    assert_eq!(
        seed::FromA::RULES_TEXT,
        "demand_R_bf(\"a\");\n\
         R_bf(x, y) <- demand_R_bf(x), E(x, y);\n\
         demand_R_bf(y) <- demand_R_bf(x), R_bf(x, y);\n\
         R_bf(x, z) <- demand_R_bf(x), R_bf(x, y), R_bf(y, z);\n"
    );
    // The original program is unchanged.
    assert_eq!(seed::Reachability::RULES.len(), 2);
}

/// The seed case's trace, with the seed's names Q and M for the generated relations.
fn renamed(facts: &str) -> BTreeSet<String> {
    facts
        .split_whitespace()
        .map(|f| f.replace("demand_R_bf(", "M(").replace("R_bf(", "Q("))
        .collect()
}

#[test]
fn the_generated_program_reproduces_the_seeds_magic_trace() {
    use seed::*;
    let case = load_case("001_seed_magic");
    let mut inputs = Batch::new();
    for fact in &case.edb {
        add_ground::<FromA>(&mut inputs, true, fact);
    }
    let (mut program, _) = FromA::materialize(inputs);
    assert_eq!(program.relation::<from_a::R_bf>().len(), 11);
    assert_eq!(program.relation::<from_a::demand_R_bf>().len(), 5);

    let report = program.update(Batch::new().delete(E("a", "b")));
    let over = report.overdeleted_derived.facts.as_ref().unwrap();
    assert_eq!((over.R_bf.len(), over.demand_R_bf.len()), (9, 3));
    let mut survivors = program.facts().derived_part();
    survivors.subtract(over);
    let survivors: Vec<String> = survivors.ground().iter().map(ToString::to_string).collect();
    assert_eq!(
        survivors,
        ["R_bf(a,e)", "R_bf(e,d)", "demand_R_bf(a)", "demand_R_bf(e)"]
    );
    assert_eq!(program.facts().derived_part().len(), 6);
    assert_eq!(program.answers(), [R("a", "d"), R("a", "e")]);

    // Line by line, the same sets as the seed's trace once the names are mapped.
    let expected: Vec<&str> = case
        .trace
        .lines()
        .skip_while(|l| !l.starts_with("net_delete"))
        .take_while(|l| !l.starts_with("counts"))
        .collect();
    let actual = report.to_string();
    let actual: Vec<&str> = actual.lines().collect();
    assert_eq!(actual.len(), expected.len());
    for (a, e) in actual.iter().zip(&expected) {
        let (a_label, a_facts) = a.split_once(':').unwrap();
        let (e_label, e_facts) = e.split_once(':').unwrap();
        assert_eq!(a_label, e_label);
        assert_eq!(
            renamed(a_facts),
            e_facts.split_whitespace().map(String::from).collect()
        );
    }
}

mod paths {
    dred::datalog! {
        pub struct Paths;
        @input pub struct E(pub u32, pub u32);
        pub struct R(pub u32, pub u32);
        pub struct L(pub u32, pub u32);
        pub struct Two(pub u32, pub u32);
        pub struct Even(pub u32, pub u32);
        pub struct Odd(pub u32, pub u32);
        R(x, y) <- E(x, y);
        R(x, z) <- R(x, y), R(y, z);
        L(x, y) <- E(x, y);
        L(x, z) <- E(x, y), L(y, z);
        Two(x, z) <- E(x, y), E(y, z);
        Odd(x, y) <- E(x, y);
        Even(x, z) <- Odd(x, y), E(y, z);
        Odd(x, z) <- Even(x, y), E(y, z);

        @query pub FromZero = R(0, _);
        @query pub IntoThree = L(_, 3);
        @query pub OneToTwo = R(1, 2);
        @query pub TwoFromTwo = Two(2, _);
        @query pub EvenFromOne = Even(1, _);
        @query pub ReachFrom = R(source, _);
        @query pub Between = L(from, to);
    }
}

type Edge = (u32, u32);

fn cases() -> u32 {
    std::env::var("DRED_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

/// One step of a random history: edges to delete and insert, and for run-time queries,
/// bindings to ask and to withdraw.
type Step = (Vec<(bool, Edge)>, Vec<(bool, Edge)>);

fn histories() -> impl Strategy<Value = (Vec<Edge>, Vec<Step>)> {
    let edge = || (0u32..6, 0u32..6);
    (
        prop::collection::vec(edge(), 0..14),
        prop::collection::vec(
            (
                prop::collection::vec((any::<bool>(), edge()), 0..6),
                prop::collection::vec((any::<bool>(), edge()), 0..3),
            ),
            1..6,
        ),
    )
}

/// For a query with run-time bindings: which binding a random pair stands for, and how to
/// ask or withdraw it in a batch.
type Asker<'a, Q> = (
    &'a dyn Fn(Edge) -> Edge,
    &'a dyn Fn(Edge, bool, Batch<<Q as Program>::Facts>) -> Batch<<Q as Program>::Facts>,
);

/// Runs a history on the full program and on one query's program: after every step the
/// answers equal the full program's facts filtered by the binding, and the query program's
/// whole materialization equals the oracle's least model of the rewritten rules.
fn check_query<Q: Program>(
    (initial, steps): &(Vec<Edge>, Vec<Step>),
    edge: impl Fn(Edge) -> Box<dyn FnOnce(Batch<Q::Facts>, bool) -> Batch<Q::Facts>>,
    ask: Option<Asker<'_, Q>>,
    answers: impl Fn(&Q) -> Vec<Edge>,
    expected: impl Fn(&paths::Paths, &BTreeSet<Edge>) -> Vec<Edge>,
) -> Result<(), TestCaseError> {
    use paths::*;
    let mut full = Paths::new();
    full.update(Batch::new().insert_all(initial.iter().map(|&(a, b)| E(a, b))));
    let mut batch = Batch::new();
    for &e in initial {
        batch = edge(e)(batch, true);
    }
    let (mut query, _) = dred::runtime::maintain::materialize::<Q>(batch, dred::Trace::Counts);
    let mut asked: BTreeSet<Edge> = BTreeSet::new();
    for (edges, asks) in steps {
        let mut full_batch = Batch::new();
        let mut query_batch = Batch::new();
        for &(insert, e) in edges {
            full_batch = if insert {
                full_batch.insert(E(e.0, e.1))
            } else {
                full_batch.delete(E(e.0, e.1))
            };
            query_batch = edge(e)(query_batch, insert);
        }
        if let Some((binding_of, ask)) = ask {
            for &(insert, raw) in asks {
                query_batch = ask(binding_of(raw), insert, query_batch);
            }
            // A batch deletes first, then inserts.
            for &(_, raw) in asks.iter().filter(|(insert, _)| !insert) {
                asked.remove(&binding_of(raw));
            }
            for &(_, raw) in asks.iter().filter(|(insert, _)| *insert) {
                asked.insert(binding_of(raw));
            }
        }
        full.update(full_batch);
        dred::runtime::maintain::update(&mut query, query_batch, dred::Trace::Counts);
        prop_assert_eq!(answers(&query), expected(&full, &asked));
        let held: BTreeSet<GroundFact> = query.all_facts().ground().into_iter().collect();
        let inputs = held
            .iter()
            .filter(|f| is_input::<Q>(&f.relation))
            .cloned()
            .collect();
        let oracle = dred::runtime::oracle::least_model(Q::RULES, &inputs).unwrap();
        prop_assert_eq!(held, oracle);
    }
    Ok(())
}

fn run(check: impl Fn(&(Vec<Edge>, Vec<Step>)) -> Result<(), TestCaseError>) {
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    runner.run(&histories(), |history| check(&history)).unwrap();
}

fn pairs(facts: impl Iterator<Item = Edge>) -> Vec<Edge> {
    let mut pairs: Vec<Edge> = facts.collect();
    pairs.sort();
    pairs
}

/// The edge-insertion helper for a query program whose input is `paths::E`.
macro_rules! edges_for {
    ($facts:ty) => {
        |(a, b): Edge| -> Box<dyn FnOnce(Batch<$facts>, bool) -> Batch<$facts>> {
            Box::new(move |batch, insert| {
                if insert {
                    batch.insert(paths::E(a, b))
                } else {
                    batch.delete(paths::E(a, b))
                }
            })
        }
    };
}

#[test]
fn a_bound_first_argument_on_non_linear_recursion() {
    use paths::*;
    run(|h| {
        check_query::<FromZero>(
            h,
            edges_for!(FromZeroFacts),
            None,
            |q| pairs(q.answers().iter().map(|r| (r.0, r.1))),
            |full, _| {
                pairs(
                    full.relation::<R>()
                        .iter()
                        .filter(|r| r.0 == 0)
                        .map(|r| (r.0, r.1)),
                )
            },
        )
    });
}

#[test]
fn a_bound_second_argument_on_linear_recursion() {
    use paths::*;
    run(|h| {
        check_query::<IntoThree>(
            h,
            edges_for!(IntoThreeFacts),
            None,
            |q| pairs(q.answers().iter().map(|r| (r.0, r.1))),
            |full, _| {
                pairs(
                    full.relation::<L>()
                        .iter()
                        .filter(|r| r.1 == 3)
                        .map(|r| (r.0, r.1)),
                )
            },
        )
    });
}

#[test]
fn both_arguments_bound() {
    use paths::*;
    run(|h| {
        check_query::<OneToTwo>(
            h,
            edges_for!(OneToTwoFacts),
            None,
            |q| pairs(q.answers().iter().map(|r| (r.0, r.1))),
            |full, _| {
                pairs(
                    full.relation::<R>()
                        .iter()
                        .filter(|r| (r.0, r.1) == (1, 2))
                        .map(|r| (r.0, r.1)),
                )
            },
        )
    });
}

#[test]
fn a_non_recursive_relation() {
    use paths::*;
    run(|h| {
        check_query::<TwoFromTwo>(
            h,
            edges_for!(TwoFromTwoFacts),
            None,
            |q| pairs(q.answers().iter().map(|r| (r.0, r.1))),
            |full, _| {
                pairs(
                    full.relation::<Two>()
                        .iter()
                        .filter(|r| r.0 == 2)
                        .map(|r| (r.0, r.1)),
                )
            },
        )
    });
}

#[test]
fn mutually_recursive_relations() {
    use paths::*;
    assert!(EvenFromOne::RULES_TEXT.contains("demand_Odd_bf(x) <- demand_Even_bf(x);"));
    run(|h| {
        check_query::<EvenFromOne>(
            h,
            edges_for!(EvenFromOneFacts),
            None,
            |q| pairs(q.answers().iter().map(|r| (r.0, r.1))),
            |full, _| {
                pairs(
                    full.relation::<Even>()
                        .iter()
                        .filter(|r| r.0 == 1)
                        .map(|r| (r.0, r.1)),
                )
            },
        )
    });
}

#[test]
fn a_run_time_binding_asked_and_withdrawn_mid_sequence() {
    use paths::*;
    let ask = |(source, _): Edge, insert: bool, batch: Batch<ReachFromFacts>| {
        if insert {
            batch.insert(ReachFromAsk(source))
        } else {
            batch.delete(ReachFromAsk(source))
        }
    };
    run(|h| {
        check_query::<ReachFrom>(
            h,
            edges_for!(ReachFromFacts),
            Some((&|(source, _)| (source, 0), &ask)),
            |q| pairs(q.answers().iter().map(|r| (r.0, r.1))),
            |full, asked| {
                let sources: BTreeSet<u32> = asked.iter().map(|a| a.0).collect();
                pairs(
                    full.relation::<R>()
                        .iter()
                        .filter(|r| sources.contains(&r.0))
                        .map(|r| (r.0, r.1)),
                )
            },
        )
    });
}

#[test]
fn two_run_time_bindings() {
    use paths::*;
    let ask = |(from, to): Edge, insert: bool, batch: Batch<BetweenFacts>| {
        if insert {
            batch.insert(BetweenAsk(from, to))
        } else {
            batch.delete(BetweenAsk(from, to))
        }
    };
    run(|h| {
        check_query::<Between>(
            h,
            edges_for!(BetweenFacts),
            Some((&|binding| binding, &ask)),
            |q| pairs(q.answers().iter().map(|r| (r.0, r.1))),
            |full, asked| {
                pairs(
                    full.relation::<L>()
                        .iter()
                        .filter(|r| asked.contains(&(r.0, r.1)))
                        .map(|r| (r.0, r.1)),
                )
            },
        )
    });
}

#[test]
fn withdrawing_a_question_withdraws_its_demand_and_answers() {
    use paths::*;
    let (mut query, _) = ReachFrom::materialize(
        Batch::new()
            .insert_all([E(0, 1), E(1, 2), E(3, 4)])
            .insert(ReachFromAsk(0)),
    );
    assert_eq!(query.answers(), [R(0, 1), R(0, 2)]);
    // Nothing about 3 → 4 is materialized: no demand reaches it.
    assert!(query
        .relation::<reach_from::R_bf>()
        .iter()
        .all(|r| r.0 != 3));
    let report = query.update(Batch::new().delete(ReachFromAsk(0)).insert(ReachFromAsk(3)));
    assert_eq!(query.answers(), [R(3, 4)]);
    assert!(report.to_string().contains("demand_R_bf(0)"));
    assert!(query
        .relation::<reach_from::demand_R_bf>()
        .iter()
        .all(|d| d.0 == 3 || d.0 == 4));
}
