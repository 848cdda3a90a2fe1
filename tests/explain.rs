//! Explanations on the seed's example: why R(a,d) survives the deletion of E(a,b), why
//! R(a,c) was withdrawn, and that self-supporting conclusions never prove themselves.

mod common;

use common::{check_proof, SEED_EDGES};
use dred::{Batch, Trace};

dred::datalog! {
    pub struct Graph;
    @input pub struct E(pub &'static str, pub &'static str);
    pub struct R(pub &'static str, pub &'static str);
    R(x, y) <- E(x, y);
    R(x, z) <- R(x, y), R(y, z);
}

fn seed_graph() -> Graph {
    Graph::materialize(Batch::new().insert_all(SEED_EDGES.map(|(a, b)| E(a, b)))).0
}

#[test]
fn r_a_d_survives_through_a_e_d() {
    let mut graph = seed_graph();
    graph.update(Batch::new().delete(E("a", "b")));
    let proof = graph.explain(R("a", "d")).unwrap();
    assert_eq!(
        proof.to_string(),
        "R(a,d) <- R(a,e), R(e,d)    [R(x, z) <- R(x, y), R(y, z);]\n\
         \x20 R(a,e) <- E(a,e)    [R(x, y) <- E(x, y);]\n\
         \x20   E(a,e)  (input)\n\
         \x20 R(e,d) <- E(e,d)    [R(x, y) <- E(x, y);]\n\
         \x20   E(e,d)  (input)\n"
    );
    check_proof(&graph, &proof, &mut Vec::new()).unwrap();
    assert_eq!(proof.height(), 3);
}

#[test]
fn withdrawn_facts_are_not_derived_and_say_so() {
    let mut graph = seed_graph();
    graph.update(Batch::new().delete(E("a", "b")));
    let answer = graph.explain(R("a", "c")).unwrap_err();
    assert_eq!(
        answer.to_string(),
        "R(a,c) does not hold: it is neither an input fact nor derived"
    );
    assert!(graph.explain(E("a", "b")).is_err());
}

#[test]
fn an_explained_update_names_what_pulled_each_fact_in_and_what_restored_it() {
    let mut graph = seed_graph();
    let report = graph.update_with(Batch::new().delete(E("a", "b")), Trace::Explained);
    assert_eq!(
        report.explained(),
        "overdelete 2: R(a,b) <- E(a,b)  (pulled in by E(a,b))\n\
         overdelete 3: R(a,c) <- R(a,b), R(b,c)  (pulled in by R(a,b))\n\
         overdelete 3: R(a,d) <- R(a,b), R(b,d)  (pulled in by R(a,b))\n\
         rederive 1: R(a,d) <- R(a,e), R(e,d)\n"
    );
    // The canonical trace is the same as without explanations.
    let mut plain = seed_graph();
    let plain_report = plain.update(Batch::new().delete(E("a", "b")));
    assert_eq!(report.to_string(), plain_report.to_string());

    let report = graph.update_with(Batch::new().insert(E("d", "fresh")), Trace::Explained);
    assert!(report
        .explained()
        .starts_with("insert 2: R(d,fresh) <- E(d,fresh)\n"));
}

#[test]
fn explanations_are_off_unless_asked_for() {
    let mut graph = seed_graph();
    let report = graph.update(Batch::new().delete(E("a", "b")));
    assert!(report.explained().is_empty());
    assert!(report
        .overdelete
        .rounds
        .iter()
        .all(|round| round.witnesses.is_none()));
}

#[test]
fn every_fact_of_the_seed_graph_has_a_checked_proof() {
    let graph = seed_graph();
    let mut explainer = graph.explainer();
    for fact in graph.relation::<R>().iter() {
        let proof = explainer.explain(&fact.into()).unwrap();
        check_proof(&graph, &proof, &mut Vec::new()).unwrap();
    }
}

mod cycle {
    dred::datalog! {
        pub struct Cycle;
        @input pub struct E(pub &'static str);
        @input pub struct F(pub &'static str);
        pub struct P(pub &'static str);
        pub struct Q(pub &'static str);
        P(x) <- Q(x);
        Q(x) <- P(x);
        P(x) <- E(x);
        Q(x) <- F(x);
        Q("k");
    }
}

#[test]
fn mutually_supporting_facts_are_proven_from_their_grounding_fact() {
    use cycle::*;
    let (program, _) = Cycle::materialize(Batch::new().insert(E("a")));
    // P(a) <- Q(a) is an instance too, but Q(a) rests on P(a): the proof must not use it.
    let proof = program.explain(P("a")).unwrap();
    assert_eq!(
        proof.to_string(),
        "P(a) <- E(a)    [P(x) <- E(x);]\n  E(a)  (input)\n"
    );
    let proof = program.explain(Q("a")).unwrap();
    check_proof(&program, &proof, &mut Vec::new()).unwrap();
    let proof = program.explain(P("k")).unwrap();
    assert_eq!(
        proof.to_string(),
        "P(k) <- Q(k)    [P(x) <- Q(x);]\n  Q(k)  (a fact of the program)\n"
    );
}
