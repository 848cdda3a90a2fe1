//! Boundary cases of the update interface, untyped input that must be rejected whole, fact
//! files, the unchecked constructor and its verification, and counts-only reports.

mod common;
#[path = "../examples/support/strip.rs"]
mod strip;

use std::collections::BTreeSet;

use common::SEED_EDGES;

use dred::runtime::io::{
    parse_tsv, read_input_dir, read_input_dir_lenient, write_derived_dir, write_tsv,
};
use dred::runtime::{FactSets, GroundFact, Program, Stored};
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

fn snapshot(graph: &Graph) -> BTreeSet<GroundFact> {
    graph.facts().ground().into_iter().collect()
}

#[test]
fn an_empty_batch_changes_nothing_and_reports_no_round() {
    let mut graph = seed_graph();
    let before = snapshot(&graph);
    let report = graph.update(Batch::new());
    assert!(report.net_delete.is_empty() && report.net_insert.is_empty());
    assert!(report.overdelete.rounds.is_empty() && report.insert.rounds.is_empty());
    assert!(report.rederive.is_none());
    assert_eq!(
        report.to_string(),
        "net_delete:\nnet_insert:\noverdeleted_idb:\n"
    );
    assert_eq!(snapshot(&graph), before);
}

#[test]
fn deleting_an_absent_fact_and_inserting_a_present_one_change_nothing() {
    let mut graph = seed_graph();
    let before = snapshot(&graph);
    let report = graph.update(Batch::new().delete(E("d", "a")).insert(E("a", "b")));
    assert!(report.net_delete.is_empty() && report.net_insert.is_empty());
    assert_eq!(snapshot(&graph), before);
}

#[test]
fn deleting_and_reinserting_one_fact_is_no_change() {
    let mut graph = seed_graph();
    let before = snapshot(&graph);
    let report = graph.update(Batch::new().delete(E("a", "b")).insert(E("a", "b")));
    assert!(report.net_delete.is_empty() && report.net_insert.is_empty());
    assert!(report.overdelete.rounds.is_empty());
    assert_eq!(snapshot(&graph), before);
    // Inserting an absent fact and deleting it in the same batch inserts it.
    let report = graph.update(Batch::new().insert(E("z", "a")).delete(E("z", "a")));
    assert_eq!(report.net_insert.E.len(), 1);
    assert!(graph.contains(&R("z", "d")));
}

#[test]
fn fresh_constants_take_part_in_new_proofs() {
    let mut graph = seed_graph();
    graph.update(Batch::new().insert(E("d", "fresh")).insert(E("fresh", "a")));
    assert!(graph.contains(&R("fresh", "fresh")));
    assert!(graph.contains(&R("e", "b")));
    graph.verify().unwrap();
}

mod empty_program {
    dred::datalog! {
        pub struct Nothing;
    }
}

#[test]
fn an_empty_program_over_empty_inputs_is_empty() {
    let mut nothing = empty_program::Nothing::new();
    assert!(nothing.facts().is_empty());
    let report = nothing.update(Batch::new());
    assert!(report.overdelete.rounds.is_empty());
    nothing.verify().unwrap();
}

#[allow(non_camel_case_types)] // The relations are named by keywords, as raw identifiers.
mod raw_names {
    dred::datalog! {
        pub struct Keywords;
        @input pub struct r#struct(pub u32, pub u32);
        pub struct r#type(pub u32);
        r#type(r#fn) <- r#struct(r#fn, _);
    }
}

/// Raw identifiers are the names the user meant: traces, rule texts, explanations and fact
/// files print `struct`, not `r#struct`.
#[test]
fn raw_identifiers_print_without_their_prefix() {
    use raw_names::*;
    let (mut program, _) = Keywords::materialize(Batch::new().insert(r#struct(1, 2)));
    assert!(program.contains(&r#type(1)));
    assert_eq!(Keywords::RULES_TEXT, "type(fn) <- struct(fn, _);\n");
    let report = program.update(Batch::new().delete(r#struct(1, 2)));
    let trace = report.to_string();
    assert!(trace.contains("net_delete: struct(1,2)"), "{trace}");
    assert!(trace.contains("overdelete 2: type(1)"), "{trace}");
    assert!(!trace.contains("r#"), "{trace}");
    program.update(Batch::new().insert(r#struct(3, 4)));
    let proof = program
        .explain(r#type(3))
        .expect("type(3) holds")
        .to_string();
    assert!(proof.starts_with("type(3) <- struct(3,4)"), "{proof}");
    let mut tsv = String::new();
    dred::runtime::Program::write_tsv(&program, "struct", &mut tsv).expect("a relation");
    assert_eq!(tsv, "3\t4\n");
}

mod zero_arity {
    dred::datalog! {
        pub struct Flags;
        @input pub struct Sig();
        pub struct Ready();
        pub struct Go();
        Ready();
        Go() <- Ready(), Sig();
    }
}

#[test]
fn a_zero_arity_fact_holds_with_an_empty_domain() {
    use zero_arity::*;
    let mut flags = Flags::new();
    assert!(flags.contains(&Ready()));
    assert!(!flags.contains(&Go()));
    flags.update(Batch::new().insert(Sig()));
    assert!(flags.contains(&Go()));
    let report = flags.update(Batch::new().delete(Sig()));
    assert_eq!(report.to_string().lines().last(), Some("rederive 1:"));
    assert!(!flags.contains(&Go()) && flags.contains(&Ready()));
}

mod mutual_support {
    dred::datalog! {
        pub struct Mutual;
        @input pub struct E(pub &'static str);
        @input pub struct F(pub &'static str);
        pub struct P(pub &'static str);
        pub struct Q(pub &'static str);
        P(x) <- E(x);
        P(x) <- F(x);
        P(x) <- Q(x);
        Q(x) <- P(x);
    }
}

#[test]
fn mutual_support_without_a_grounding_fact_is_withdrawn() {
    use mutual_support::*;
    let (mut program, _) = Mutual::materialize(Batch::new().insert(E("a")));
    let report = program.update(Batch::new().delete(E("a")));
    assert_eq!(
        report.to_string(),
        "net_delete: E(a)\nnet_insert:\noverdelete 1: E(a)\noverdelete 2: P(a)\noverdelete 3: Q(a)\n\
         overdeleted_idb: P(a) Q(a)\nrederive 1:\n"
    );
    assert!(!program.contains(&P("a")) && !program.contains(&Q("a")));
}

#[test]
fn mutual_support_with_a_surviving_fact_comes_back_in_order() {
    use mutual_support::*;
    let (mut program, _) = Mutual::materialize(Batch::new().insert(E("a")).insert(F("a")));
    let report = program.update(Batch::new().delete(E("a")));
    let lines: Vec<String> = report.to_string().lines().map(String::from).collect();
    assert_eq!(
        lines[lines.len() - 3..],
        ["rederive 1: P(a)", "rederive 2: Q(a)", "rederive 3:"]
    );
    assert!(program.contains(&P("a")) && program.contains(&Q("a")));
}

#[test]
fn the_wrong_method_keeps_the_self_supporting_pair() {
    let graph = seed_graph();
    let before = snapshot(&graph);
    let deleted: BTreeSet<GroundFact> = [GroundFact {
        relation: "E".into(),
        values: vec!["a".into(), "b".into()],
    }]
    .into();
    let stripped = strip::strip_unsupported(Graph::RULES, &before, &deleted, |r| r == "E");
    let mut graph = graph;
    graph.update(Batch::new().delete(E("a", "b")));
    let kept: Vec<String> = stripped
        .difference(&snapshot(&graph))
        .map(ToString::to_string)
        .collect();
    assert_eq!(kept, ["R(a,b)", "R(a,c)"]);
}

#[test]
fn a_bad_untyped_batch_is_rejected_whole_and_changes_nothing() {
    let mut graph = seed_graph();
    let before = snapshot(&graph);
    let mut batch = Batch::new();
    parse_tsv::<Graph>("E", "x\ty\n", "good.facts", false, &mut batch).unwrap();
    let staged = batch.deletions().len();

    let bad = "a\te\nb\tc\nc\n";
    let error = parse_tsv::<Graph>("E", bad, "edges.facts", false, &mut batch).unwrap_err();
    assert_eq!(
        error.to_string(),
        "edges.facts:3:1: `E` has 2 column(s), this line has 1"
    );
    assert_eq!(batch.deletions().len(), staged, "the batch is as it was");

    let error = parse_tsv::<Graph>("R", "a\tb\n", "r.facts", true, &mut batch).unwrap_err();
    assert!(error.message.contains("derived relation"), "{error}");
    let error = parse_tsv::<Graph>("Edge", "a\tb\n", "x.facts", true, &mut batch).unwrap_err();
    assert!(
        error.message.contains("no relation named `Edge`"),
        "{error}"
    );

    graph.update(batch);
    assert_eq!(
        snapshot(&graph),
        before,
        "only the good, absent fact was applied"
    );
}

mod typed_columns {
    dred::datalog! {
        pub struct Weights;
        @input pub struct W(pub u8, pub String, pub bool);
        pub struct Heavy(pub String);
        Heavy(name) <- W(200, name, true);
    }
}

#[test]
fn values_are_checked_against_column_types_with_their_position() {
    use typed_columns::*;
    let mut batch = Batch::new();
    let text = "1\tlight\tfalse\n300\theavy\ttrue\n";
    let error = parse_tsv::<Weights>("W", text, "w.facts", true, &mut batch).unwrap_err();
    assert_eq!((error.line, error.column), (Some(2), Some(1)));
    assert!(error.message.contains("u8"), "{error}");
    let error =
        parse_tsv::<Weights>("W", "7\tname\tyes\n", "w.facts", true, &mut batch).unwrap_err();
    assert_eq!((error.line, error.column), (Some(1), Some(8)));
    assert!(batch.insertions().is_empty());

    parse_tsv::<Weights>("W", "200\tNew York\ttrue\n", "w.facts", true, &mut batch).unwrap();
    let (weights, _) = Weights::materialize(batch);
    assert!(weights.contains(&Heavy("New York".to_string())));
    assert_eq!(write_tsv(&weights, "Heavy").unwrap(), "New York\n");
    assert_eq!(
        weights.facts().ground()[0].to_string(),
        "Heavy(\"New York\")",
        "non-identifier strings are quoted in reports"
    );
}

#[test]
fn fact_files_round_trip_through_a_directory() {
    let dir = std::env::temp_dir().join(format!("dred-io-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("E.facts"), "a\tb\nb\tc\n").unwrap();
    let (graph, _) = Graph::materialize(read_input_dir::<Graph>(&dir).unwrap());
    assert_eq!(graph.relation::<R>().len(), 3);
    write_derived_dir(&graph, &dir.join("out")).unwrap();
    let written = std::fs::read_to_string(dir.join("out/R.facts")).unwrap();
    assert_eq!(written, "a\tb\na\tc\nb\tc\n");

    std::fs::write(dir.join("E.facts"), "a\tb\nb\n").unwrap();
    let error = read_input_dir::<Graph>(&dir).unwrap_err();
    assert_eq!(
        error.file.as_deref(),
        Some(dir.join("E.facts").to_str().unwrap())
    );
    assert_eq!(error.line, Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A `.facts` file that names no input relation (a derived one, a misspelt one) rejects the
/// directory, naming the file; the lenient reader lists such files and reads the rest.
#[test]
fn a_stray_fact_file_rejects_the_directory() {
    let dir = std::env::temp_dir().join(format!("dred-stray-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("E.facts"), "a\tb\nb\tc\n").unwrap();
    std::fs::write(dir.join("notes.txt"), "not a fact file").unwrap();
    let (mut graph, _) = Graph::materialize(read_input_dir::<Graph>(&dir).unwrap());
    let before = snapshot(&graph);

    std::fs::write(dir.join("R.facts"), "a\tc\n").unwrap();
    std::fs::write(dir.join("Edge.facts"), "c\td\n").unwrap();
    let error = read_input_dir::<Graph>(&dir).unwrap_err();
    let edge = dir.join("Edge.facts").display().to_string();
    let derived = dir.join("R.facts").display().to_string();
    assert_eq!(error.file.as_deref(), Some(edge.as_str()));
    assert_eq!(
        error.message,
        format!("no relation is named `Edge`; the input relations are `E` (also stray: {derived})")
    );

    std::fs::remove_file(dir.join("Edge.facts")).unwrap();
    let error = read_input_dir::<Graph>(&dir).unwrap_err();
    assert_eq!(error.file.as_deref(), Some(derived.as_str()));
    assert!(
        error.message.starts_with("`R` is a derived relation"),
        "{error}"
    );

    let (batch, stray) = read_input_dir_lenient::<Graph>(&dir).unwrap();
    assert_eq!(stray, [dir.join("R.facts")]);
    graph.update(batch);
    assert_eq!(
        snapshot(&graph),
        before,
        "the same input facts, read leniently"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unchecked_materialization_is_taken_on_trust_and_verified_on_request() {
    let exact = seed_graph().facts();
    let mut graph = Graph::from_facts_unchecked(&exact);
    graph.verify().unwrap();
    graph.update(Batch::new().delete(E("a", "b")));
    assert_eq!(graph.relation::<R>().len(), 18);

    let mut wrong = exact.clone();
    wrong.R.insert(R("z", "z").into_row());
    wrong.R.remove(&R("a", "d").into_row());
    let mismatch = Graph::from_facts_unchecked(&wrong).verify().unwrap_err();
    assert_eq!(mismatch.missing[0].to_string(), "R(a,d)");
    assert_eq!(mismatch.unfounded[0].to_string(), "R(z,z)");
}

#[test]
fn counts_only_reports_keep_the_same_numbers_without_the_facts() {
    let mut traced = seed_graph();
    let mut counted = seed_graph();
    let batch = || Batch::new().delete(E("a", "b")).insert(E("d", "fresh"));
    let full = traced.update(batch());
    let counts = counted.update_with(batch(), Trace::Counts);
    let lens = |phase: &dred::runtime::Phase<GraphFacts>| -> Vec<usize> {
        phase.rounds.iter().map(|r| r.len).collect()
    };
    assert_eq!(lens(&full.overdelete), lens(&counts.overdelete));
    assert_eq!(lens(&full.insert), lens(&counts.insert));
    assert_eq!(full.rederived(), counts.rederived());
    assert!(counts.overdelete.rounds.iter().all(|r| r.facts.is_none()));
    assert!(counts.to_string().contains("overdelete 3: (2 facts)"));
    assert_eq!(snapshot(&traced), snapshot(&counted));
}

mod literal_constants {
    dred::datalog! {
        pub struct Literals;
        @input pub struct Cell(pub i32, pub char, pub bool);
        pub struct Negative(pub char);
        pub struct Marked(pub i32);
        Negative(c) <- Cell(-1, c, true);
        Marked(n) <- Cell(n, 'x', _);
        Marked(-5);
    }
}

#[test]
fn negative_integer_char_and_bool_constants_match_and_render() {
    use literal_constants::*;
    let (mut cells, _) = Literals::materialize(
        Batch::new()
            .insert(Cell(-1, 'q', true))
            .insert(Cell(-1, 'r', false))
            .insert(Cell(3, 'x', false)),
    );
    assert!(cells.contains(&Negative('q')) && !cells.contains(&Negative('r')));
    assert!(cells.contains(&Marked(3)) && cells.contains(&Marked(-5)));
    let report = cells.update(Batch::new().delete(Cell(-1, 'q', true)));
    assert!(report.to_string().contains("overdelete 2: Negative('q')"));
    cells.verify().unwrap();
}

mod every_column_type {
    dred::datalog! {
        pub struct Columns;
        @input pub struct A(pub i8, pub i16, pub i32, pub i64, pub isize);
        @input pub struct B(pub i8, pub u8, pub u16, pub u32, pub u64, pub usize, pub char, pub bool);
        pub struct J(pub i16, pub char);
        J(y, c) <- A(x, y, _, _, _), B(x, _, _, _, _, _, c, _);
    }
}

/// The columns of `fact` as a relation's bitset reads them: the integer each `Hash` write
/// gives (signed integers write their bits as the unsigned integer of their width).
fn columns_of(fact: &impl std::hash::Hash) -> Vec<u64> {
    struct Columns(Vec<u64>);
    impl std::hash::Hasher for Columns {
        fn finish(&self) -> u64 {
            0
        }
        fn write(&mut self, _: &[u8]) {
            panic!("a column that is not one integer");
        }
        fn write_u8(&mut self, value: u8) {
            self.0.push(value.into());
        }
        fn write_u16(&mut self, value: u16) {
            self.0.push(value.into());
        }
        fn write_u32(&mut self, value: u32) {
            self.0.push(value.into());
        }
        fn write_u64(&mut self, value: u64) {
            self.0.push(value);
        }
        fn write_usize(&mut self, value: usize) {
            self.0.push(value as u64);
        }
    }
    let mut columns = Columns(Vec::new());
    fact.hash(&mut columns);
    columns.0
}

#[test]
fn facts_of_integer_char_and_bool_columns_are_rebuilt_from_their_bitset_columns() {
    use dred::runtime::IndexLayout;
    use every_column_type::*;
    // The index's copy, inlined where an index is built from the bitset, and the
    // relation's, which iterates dense facts, rebuild the same facts.
    let (program, _) = Columns::materialize(Batch::new());
    let (a, b) = (program.relation::<A>(), program.relation::<B>());
    let a_facts = [
        A(0, 0, 0, 0, 0),
        A(-1, i16::MIN, i32::MAX, i64::MIN, -7),
        A(i8::MIN, -300, -1, i64::MAX, isize::MAX),
    ];
    for fact in a_facts {
        let columns = columns_of(&fact);
        assert_eq!(columns.len(), 5);
        assert_eq!(
            __Dred7ColumnsAIndex0::fact_from_columns(&columns),
            Some(fact.to_row())
        );
        assert_eq!(a.rows().fact_from_columns(&columns), Some(fact.into_row()));
    }
    let b_facts = [
        B(0, 0, 0, 0, 0, 0, 'a', false),
        B(
            -128,
            255,
            u16::MAX,
            u32::MAX,
            u64::MAX,
            usize::MAX,
            '\u{10FFFF}',
            true,
        ),
        B(5, 1, 2, 3, 4, 5, 'é', true),
    ];
    for fact in b_facts {
        let columns = columns_of(&fact);
        assert_eq!(
            __Dred7ColumnsBIndex0::fact_from_columns(&columns),
            Some(fact.to_row())
        );
        assert_eq!(b.rows().fact_from_columns(&columns), Some(fact.into_row()));
    }
    // Another arity, or a value no char has, rebuilds nothing.
    let mut wrong = columns_of(&B(1, 1, 1, 1, 1, 1, 'b', true));
    wrong[6] = 0xD800;
    assert_eq!(__Dred7ColumnsBIndex0::fact_from_columns(&wrong), None);
    assert_eq!(__Dred7ColumnsBIndex0::fact_from_columns(&wrong[..7]), None);
    assert_eq!(b.rows().fact_from_columns(&wrong), None);
    assert_eq!(b.rows().fact_from_columns(&wrong[..7]), None);
    // The indexes these joins probe are keyed by the first column.
    let leads = (
        __Dred7ColumnsAIndex0::KEY_LEADS,
        __Dred7ColumnsBIndex0::KEY_LEADS,
    );
    assert_eq!(leads, (true, true));
}

mod small_pairs {
    dred::datalog! {
        pub struct Reach;
        @input pub struct E(pub u16, pub u16);
        pub struct R(pub u16, pub u16);
        R(x, y) <- E(x, y);
        R(x, z) <- R(x, y), E(y, z);
    }
}

/// The pairs `(a, b)` with a path from `a` to `b` over `edges`.
fn reachable(edges: &[(u16, u16)]) -> std::collections::BTreeSet<(u16, u16)> {
    let mut pairs: std::collections::BTreeSet<(u16, u16)> = edges.iter().copied().collect();
    loop {
        let longer: Vec<(u16, u16)> = pairs
            .iter()
            .flat_map(|&(a, b)| {
                edges
                    .iter()
                    .filter(move |e| e.0 == b)
                    .map(move |e| (a, e.1))
            })
            .filter(|pair| !pairs.contains(pair))
            .collect();
        if longer.is_empty() {
            return pairs;
        }
        pairs.extend(longer);
    }
}

#[test]
fn a_relation_of_small_integers_keeps_its_facts_dense_and_rebuilds_them_when_iterated() {
    use small_pairs::*;
    // Every relation counts as too large for the cache, so small ones turn dense too.
    let settings = dred::Settings::default().with_large_from_bytes(0);
    let mut edges: Vec<(u16, u16)> = (0..40).map(|a| (a, (a + 1) % 40)).collect();
    edges.extend([(3, 17), (30, 5)]);
    let inputs = Batch::new().insert_all(edges.iter().map(|&(a, b)| E(a, b)));
    let (mut program, _) = Reach::materialize_with_settings(inputs, settings, Trace::Rounds);
    let held = |program: &Reach| {
        let relation = program.relation::<R>();
        let facts: std::collections::BTreeSet<(u16, u16)> =
            relation.iter().map(|fact| (fact.0, fact.1)).collect();
        assert_eq!(facts.len(), relation.len());
        assert!(facts.iter().all(|&(a, b)| relation.contains(&R(a, b))));
        (relation.is_dense(), facts)
    };
    assert_eq!(held(&program), (true, reachable(&edges)));
    // A recompute hands the box and its stamps to the new relation.
    edges.retain(|&edge| edge != (0, 1));
    program.update_using(
        Batch::new().delete(E(0, 1)),
        dred::Strategy::Recompute,
        Trace::Counts,
    );
    assert_eq!(held(&program), (true, reachable(&edges)));
    // Alternative proofs restamp facts of the box; DRed removes and rederives them.
    for strategy in [dred::Strategy::AltProof, dred::Strategy::DRed] {
        edges.retain(|&edge| edge != (3, 17));
        program.update_using(Batch::new().delete(E(3, 17)), strategy, Trace::Counts);
        assert_eq!(held(&program), (true, reachable(&edges)));
        edges.push((3, 17));
        program.update_using(Batch::new().insert(E(3, 17)), strategy, Trace::Counts);
        assert_eq!(held(&program), (true, reachable(&edges)));
    }
}

#[test]
fn programs_batches_and_reports_move_between_threads_and_are_shared_by_reference() {
    fn send_and_sync<T: Send + Sync>() {}
    send_and_sync::<Graph>();
    send_and_sync::<GraphFacts>();
    send_and_sync::<Batch<GraphFacts>>();
    send_and_sync::<dred::UpdateReport<GraphFacts>>();
    send_and_sync::<dred::runtime::Poisoned>();
    send_and_sync::<dred::runtime::Symbols>();
    // An update on another thread gives the model an update here gives.
    let mut here = seed_graph();
    here.update(Batch::new().delete(E("a", "b")));
    let there = std::thread::spawn(|| {
        let mut graph = seed_graph();
        graph.update(Batch::new().delete(E("a", "b")));
        graph
    })
    .join()
    .unwrap();
    assert_eq!(snapshot(&there), snapshot(&here));
}
