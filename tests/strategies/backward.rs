//! The backward/forward strategy on programs small enough to read its reports by hand.

use super::*;

mod three_way {
    dred::datalog! {
        pub struct ThreeWay;
        @input pub struct Ground(pub &'static str);
        @input pub struct Link(pub &'static str, pub &'static str);
        pub struct A(pub &'static str);
        pub struct B(pub &'static str);
        pub struct C(pub &'static str);
        A(x) <- Ground(x);
        B(y) <- A(x), Link(x, y);
        C(y) <- B(x), Link(x, y);
        A(y) <- C(x), Link(x, y);
    }
}

#[test]
fn backward_forward_deletes_the_self_supporting_cycle_and_nothing_else() {
    let mut graph = seed_graph(stamps_only());
    let mut by_dred = seed_graph(stamps_only());
    let report = graph.update_using(
        Batch::new().delete(E("a", "b")),
        Strategy::BackwardForward,
        Trace::Rounds,
    );
    // R(a,b) lost its support; its search opens R(a,c) (through R(a,c), R(c,b)), whose
    // only instances go back through R(a,b) or R(a,c) itself: neither has a proof. R(a,d)
    // keeps its support R(a,e), R(e,d) and is not a candidate; nothing is rederived.
    assert_eq!(
        report.to_string(),
        "strategy: backward/forward proofs
net_delete: E(a,b)
net_insert:
unprovable 1: E(a,b)
check 2: R(a,b)
unprovable 2: R(a,b)
check 3: R(a,c)
unprovable 3: R(a,c)
unprovable_idb: R(a,b) R(a,c)
"
    );
    assert_eq!((report.checked(), report.withdrawn()), (2, 2));
    by_dred.update(Batch::new().delete(E("a", "b")));
    assert_eq!(snapshot(&graph), snapshot(&by_dred));
    assert!(graph.verify().is_ok());
}

#[test]
fn backward_forward_keeps_a_fact_on_a_younger_proof_and_raises_it() {
    // As with alternative proofs: R(a,d) loses its support R(a,e), R(e,d), and the search
    // finds it a proof through R(a,c), R(c,d) (rounds 3 and 2), so it rises to one stamp
    // past R(a,c)'s.
    let mut graph = seed_graph(stamps_only());
    let report = graph.update_using(
        Batch::new().delete(E("e", "d")),
        Strategy::BackwardForward,
        Trace::Rounds,
    );
    assert!(graph.contains(&R("a", "d")), "a→b→c→d still proves it");
    let stamp = |a, b| graph.relation::<R>().stamp(&R(a, b)).unwrap();
    let round = graph.relation::<E>().stamp(&E("a", "b")).unwrap();
    assert_eq!(stamp("a", "d"), 3 * round + 1);
    assert!(report.to_string().contains("check 2: R(e,d)\n"), "{report}");
    assert!(report.rederive.is_none());
    let mut by_dred = seed_graph(stamps_only());
    let dred = by_dred.update(Batch::new().delete(E("e", "d")));
    assert_eq!(snapshot(&graph), snapshot(&by_dred));
    assert_eq!(report.withdrawn(), dred.withdrawn());
    // The stamps it left hold up alternative proofs' next update.
    graph.update_using(
        Batch::new().delete(E("c", "d")),
        Strategy::AltProof,
        Trace::Counts,
    );
    by_dred.update(Batch::new().delete(E("c", "d")));
    assert_eq!(snapshot(&graph), snapshot(&by_dred));
}

#[test]
fn backward_forward_deletes_cycles_through_three_relations() {
    use three_way::*;
    // A, B and C go round a → b → c → a; x leads into the cycle at a.
    let links = [("a", "b"), ("b", "c"), ("c", "a"), ("x", "a")];
    let (mut program, _) = ThreeWay::materialize(
        Batch::new()
            .insert_all([Ground("a"), Ground("x")])
            .insert_all(links.map(|(x, y)| Link(x, y))),
    );
    // Without Ground(a), A(a), B(b) and C(c) only support one another round the cycle.
    let report = program.update_using(
        Batch::new().delete(Ground("a")),
        Strategy::BackwardForward,
        Trace::Rounds,
    );
    assert_eq!(
        report.to_string(),
        "strategy: backward/forward proofs
net_delete: Ground(a)
net_insert:
unprovable 1: Ground(a)
check 2: A(a)
unprovable 2: A(a)
check 3: B(b)
unprovable 3: B(b)
check 4: C(c)
unprovable 4: C(c)
unprovable_idb: A(a) B(b) C(c)
"
    );
    // The way in from x goes too: B(a), C(b) and A(c) then support one another only.
    let report = program.update_using(
        Batch::new().delete(Link("x", "a")),
        Strategy::BackwardForward,
        Trace::Counts,
    );
    assert_eq!(report.withdrawn(), 3);
    assert_eq!(
        ground(&program.facts()),
        ["A(x)", "Ground(x)", "Link(a,b)", "Link(b,c)", "Link(c,a)"]
            .map(common::parse_fact)
            .into()
    );
    assert!(program.verify().is_ok());
}

mod reach {
    dred::datalog! {
        pub struct Reach;
        @input pub struct Start(pub u32);
        @input pub struct E(pub u32, pub u32);
        pub struct At(pub u32);
        At(x) <- Start(x);
        At(y) <- At(x), E(x, y);
    }
}

#[test]
fn backward_forward_raises_facts_that_derive_each_other_in_few_rounds() {
    use reach::*;
    // At(1) and At(2) derive each other (1 ⇄ 2). Deleting the edge 0 → 1 leaves them the
    // long way round, 0 → 3 → … → 9 → 1, six rounds later. Each proved, each rises past
    // the other; the rounds of the phase must not follow them one stamp at a time.
    let long_way = [
        (0, 3),
        (3, 4),
        (4, 5),
        (5, 6),
        (6, 7),
        (7, 8),
        (8, 9),
        (9, 1),
    ];
    let edges = [(0, 1), (1, 2), (2, 1)].into_iter().chain(long_way);
    let inputs = || {
        Batch::new()
            .insert(Start(0))
            .insert_all(edges.clone().map(|(x, y)| E(x, y)))
    };
    let materialize = || Reach::materialize_with_settings(inputs(), stamps_only(), Trace::Counts).0;
    let mut reach = materialize();
    let report = reach.update_using(
        Batch::new().delete(E(0, 1)),
        Strategy::BackwardForward,
        Trace::Counts,
    );
    assert!(reach.contains(&At(1)) && reach.contains(&At(2)));
    let rounds = report.overdelete.rounds.len();
    assert!(rounds <= 2 * long_way.len(), "{rounds} rounds:\n{report}");
    let mut by_dred = materialize();
    by_dred.update(Batch::new().delete(E(0, 1)));
    assert_eq!(ground(&reach.facts()), ground(&by_dred.facts()));
    assert!(reach.verify().is_ok());
    // The stamps it left hold up alternative proofs' next update.
    reach.update_using(
        Batch::new().delete(E(9, 1)),
        Strategy::AltProof,
        Trace::Counts,
    );
    assert!(!reach.contains(&At(1)) && !reach.contains(&At(2)));
    assert!(reach.verify().is_ok());
}
