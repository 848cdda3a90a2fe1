//! The seed's cases (`tests/data/seed_cases`, a copy of `shared/cases`): identical net
//! changes, rounds and final facts, batch after batch.

mod common;

use common::*;
use dred::runtime::settings::LARGE_FROM_BYTES;
use dred::runtime::{Batch, FactSets, Program, Settings, Symbol};

dred::datalog! {
    /// The seed's reachability program, its names read from the case files as symbols.
    pub struct SeedTc;
    @input pub struct E(pub Symbol, pub Symbol);
    pub struct R(pub Symbol, pub Symbol);
    R(x, y) <- E(x, y);
    R(x, z) <- R(x, y), R(y, z);
}

mod magic {
    dred::datalog! {
        /// The seed's magic-set rewrite of the query R(a, Y), written by hand.
        pub struct SeedMagic;
        @input pub struct E(pub &'static str, pub &'static str);
        pub struct M(pub &'static str);
        pub struct Q(pub &'static str, pub &'static str);
        M("a");
        Q(x, y) <- M(x), E(x, y);
        M(y) <- M(x), Q(x, y);
        Q(x, z) <- M(x), Q(x, y), Q(y, z);
    }
}

mod empty {
    dred::datalog! {
        pub struct SeedEmpty;
    }
}

mod zero_arity {
    dred::datalog! {
        pub struct SeedZeroArity;
        pub struct Ready();
        pub struct Go();
        @input pub struct Sig();
        Ready();
        Go() <- Ready(), Sig();
    }
}

/// Runs a case and returns the trace it produces, in the case's format (without `counts:`).
fn run_case<P: Program>(case: &Case, settings: Settings) -> String {
    let mut out = String::new();
    let mut inputs = Batch::new();
    for fact in &case.edb {
        add_ground::<P>(&mut inputs, true, fact);
    }
    let (mut program, _) = dred::runtime::maintain::materialize_with_settings::<P>(
        inputs,
        settings,
        dred::Trace::Rounds,
    );
    let (edb, idb) = split_model(&program);
    out += &format!(
        "{}\n{}\n",
        line("initial_edb", &edb),
        line("initial_idb", &idb)
    );
    for (k, batch) in case.batches.iter().enumerate() {
        let mut update = Batch::new();
        for fact in &batch.deletions {
            add_ground::<P>(&mut update, false, fact);
        }
        for fact in &batch.insertions {
            add_ground::<P>(&mut update, true, fact);
        }
        let report = dred::runtime::maintain::update(&mut program, update, dred::Trace::Rounds);
        let (edb, idb) = split_model(&program);
        out += &format!("batch {}\n{report}", k + 1);
        out += &format!("{}\n{}\n", line("edb", &edb), line("idb", &idb));
        assert_eq!(
            idb,
            oracle_derived::<P>(&edb),
            "{}: batch {} disagrees with the oracle",
            case.name,
            k + 1
        );
    }
    out
}

fn expected_without_counts(case: &Case) -> String {
    case.trace
        .lines()
        .filter(|l| !l.starts_with("counts:"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Runs the case twice: with heads tested one by one, as joins test them on relations as
/// small as these, and in batches, as on relations too large for the cache; the rounds
/// must be the seed's either way.
fn check_case<P: Program>(name: &str) {
    let case = load_case(name);
    let expected = expected_without_counts(&case);
    for batches_from in [LARGE_FROM_BYTES, 0] {
        let settings = Settings::default().with_large_from_bytes(batches_from);
        let actual = run_case::<P>(&case, settings);
        if actual != expected {
            panic!(
                "case {name} (heads in batches from {batches_from} bytes): trace differs\n\
                 --- expected\n{expected}--- actual\n{actual}"
            );
        }
    }
}

#[test]
fn case_000_seed_tc() {
    check_case::<SeedTc>("000_seed_tc");
}

#[test]
fn case_001_seed_magic() {
    check_case::<magic::SeedMagic>("001_seed_magic");
}

#[test]
fn case_002_seed_edge_cases() {
    check_case::<SeedTc>("002_seed_edge_cases");
}

#[test]
fn case_003_seed_empty() {
    check_case::<empty::SeedEmpty>("003_seed_empty");
}

#[test]
fn case_004_seed_zero_arity() {
    check_case::<zero_arity::SeedZeroArity>("004_seed_zero_arity");
}

#[test]
fn seed_numbers_from_the_typed_api() {
    let (mut tc, _) = SeedTc::materialize(
        Batch::new().insert_all(SEED_EDGES.iter().map(|&(a, b)| E(a.into(), b.into()))),
    );
    let row_a = |tc: &SeedTc| -> Vec<String> {
        tc.relation::<R>()
            .sorted()
            .into_iter()
            .filter(|r| r.0 == "a")
            .map(|r| r.1.to_string())
            .collect()
    };
    assert_eq!(tc.relation::<R>().len(), 20);
    assert_eq!(row_a(&tc), ["b", "c", "d", "e"]);

    let report = tc.update(Batch::new().delete(E("a".into(), "b".into())));
    assert_eq!(report.overdelete.rounds.len(), 3);
    assert_eq!(report.overdeleted_derived.len, 3);
    assert_eq!(report.rederived(), 1);
    assert_eq!(report.withdrawn(), 2);
    assert_eq!(tc.relation::<R>().len(), 18);
    assert_eq!(row_a(&tc), ["d", "e"]);
    // The independent u, v, w cycle never enters an over-deletion frontier.
    for round in &report.overdelete.rounds {
        let facts = round.facts.as_ref().unwrap();
        assert!(facts
            .R
            .iter()
            .all(|r| !["u", "v", "w"].contains(&r.0.as_str())));
    }
    tc.verify().unwrap();
}

#[test]
fn magic_program_numbers() {
    use magic::*;
    let case = load_case("001_seed_magic");
    let mut inputs = Batch::new();
    for fact in &case.edb {
        add_ground::<SeedMagic>(&mut inputs, true, fact);
    }
    let (mut program, _) = SeedMagic::materialize(inputs);
    assert_eq!(program.relation::<Q>().len(), 11);
    assert_eq!(program.relation::<M>().len(), 5);
    let report = program.update(Batch::new().delete(E("a", "b")));
    let over = report.overdeleted_derived.facts.as_ref().unwrap();
    assert_eq!((over.Q.len(), over.M.len()), (9, 3));
    let survivors: Vec<String> = program_survivors(&program, over);
    assert_eq!(survivors, ["M(a)", "M(e)", "Q(a,e)", "Q(e,d)"]);
    assert_eq!(program.facts().derived_part().len(), 6);
    let answers: Vec<_> = program
        .relation::<Q>()
        .sorted()
        .into_iter()
        .filter(|q| q.0 == "a")
        .map(|q| q.1)
        .collect();
    assert_eq!(answers, ["d", "e"]);
}

/// The derived facts that were never over-deleted (the seed's temporary survivors).
fn program_survivors(program: &magic::SeedMagic, over: &magic::SeedMagicFacts) -> Vec<String> {
    let mut held = program.facts().derived_part();
    held.subtract(over);
    held.ground().iter().map(ToString::to_string).collect()
}

#[test]
fn copies_match_the_shared_cases() {
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/cases");
    if !shared.exists() {
        eprintln!("../shared/cases is not beside this checkout; nothing to compare");
        return;
    }
    for entry in std::fs::read_dir(&shared).unwrap() {
        let entry = entry.unwrap();
        if !entry.file_type().unwrap().is_dir() {
            continue;
        }
        for file in std::fs::read_dir(entry.path()).unwrap() {
            let file = file.unwrap().path();
            let copy = cases_dir()
                .join(entry.file_name())
                .join(file.file_name().unwrap());
            assert_eq!(
                std::fs::read_to_string(&file).unwrap(),
                std::fs::read_to_string(&copy).unwrap_or_default(),
                "{} differs from its copy; refresh tests/data/seed_cases",
                file.display()
            );
        }
    }
}
