//! Property tests: random inputs and random sequences of mixed update batches (deletes of
//! absent facts, re-inserts, fresh constants) on twelve programs. After every batch the engine's
//! net change and every round of every phase equal the literal instance-based reference of
//! the seed, and its materialization equals the independent oracle's least model.
//!
//! The same histories run with the alternative-proof, automatic and recompute strategies
//! (and with alternative proofs on a program rebuilt by `from_facts_unchecked`, whose facts
//! carry no useful stamps): after every batch each has exactly the oracle's facts, and the
//! alternative-proof report's sets are consistent with the seed's reference. Alternative
//! proofs also run with each join order of a loss of support forced (heads first, body
//! first): their rounds equal those of the order chosen by cost. Closure relations (see
//! `dred::runtime::closure`) are kept by reachability in the default runs and checked by
//! stamps in those named so.
//!
//! Cases per program: 24 by default; set `DRED_PROPTEST_CASES` for a longer soak.

mod common;
mod shapes;

use common::*;
use dred::runtime::maintain::{from_facts_unchecked_with_settings, materialize_with_settings};
use dred::runtime::settings::{DELTA_CHUNK, GHOST_SHARE, LARGE_FROM_BYTES};
use dred::runtime::{Batch, FactSets, GroundFact, HeldJoins, Program, Settings, Strategy, Trace};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use shapes::*;

/// A random fact: which input relation, and raw values for three columns (a wider
/// relation's column `k` takes value `k % 3`).
type RawFact = (u8, [u8; 3]);
/// A random batch: (insert?, fact).
type RawBatch = Vec<(bool, RawFact)>;

fn cases() -> u32 {
    std::env::var("DRED_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

/// String values include one that renders quoted, to exercise the text forms.
const NAMES: &[&str] = &["a", "b", "c", "d", "root", "x y", "fresh", "new"];

/// The field text of a raw value for a column type; `wide` widens the domain so updates
/// bring constants the initial facts never had.
fn field(ty: &str, raw: u8, wide: bool) -> String {
    let domain = if wide { 7 } else { 5 };
    let n = raw % domain;
    match ty {
        "&'static str" | "String" => NAMES[n as usize].to_string(),
        _ => n.to_string(),
    }
}

fn render(ty: &str, field: &str) -> String {
    match ty {
        "&'static str" | "String" => dred::runtime::text::render_value(field),
        _ => field.to_string(),
    }
}

/// The ground fact and its field texts for a raw fact, over `P`'s input relations.
fn materialize_fact<P: Program>(raw: &RawFact, wide: bool) -> (GroundFact, Vec<String>) {
    let inputs: Vec<_> = P::RELATIONS.iter().filter(|r| r.input).collect();
    let info = inputs[raw.0 as usize % inputs.len()];
    let fields: Vec<String> = info
        .columns
        .iter()
        .enumerate()
        .map(|(k, ty)| field(ty, raw.1[k % 3], wide))
        .collect();
    let values = info
        .columns
        .iter()
        .zip(&fields)
        .map(|(ty, f)| render(ty, f))
        .collect();
    (
        GroundFact {
            relation: info.name.to_string(),
            values,
        },
        fields,
    )
}

fn add<P: Program>(
    batch: &mut Batch<P::Facts>,
    insert: bool,
    raw: &RawFact,
    wide: bool,
) -> GroundFact {
    let (ground, fields) = materialize_fact::<P>(raw, wide);
    let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
    batch
        .add_text::<P>(insert, &ground.relation, &fields)
        .unwrap();
    ground
}

/// The batch inserting a history's initial facts.
fn initial_batch<P: Program>(initial: &[RawFact]) -> Batch<P::Facts> {
    let mut inputs = Batch::new();
    for raw in initial {
        add::<P>(&mut inputs, true, raw, false);
    }
    inputs
}

/// The typed batch of a random batch, and the seed reference's trace for it on `old_model`.
fn batch_and_reference<P: Program>(
    raw_batch: &RawBatch,
    old_model: &Facts,
) -> (Batch<P::Facts>, ReferenceTrace) {
    let mut batch = Batch::new();
    let (mut deletions, mut insertions) = (Facts::new(), Facts::new());
    // Deletions first so that a batch can delete and re-insert one fact.
    for (insert, raw) in raw_batch.iter().filter(|(i, _)| !i) {
        deletions.insert(add::<P>(&mut batch, *insert, raw, true));
    }
    for (insert, raw) in raw_batch.iter().filter(|(i, _)| *i) {
        insertions.insert(add::<P>(&mut batch, *insert, raw, true));
    }
    let expected = reference_update(
        P::RULES,
        old_model,
        |r| is_input::<P>(r),
        &deletions,
        &insertions,
    );
    (batch, expected)
}

/// Runs one random history on `P`, checking every batch; three histories in four split
/// each delta join's delta into chunks of one to three facts, so that a key's facts fall
/// in several chunks (the default chunk is larger than any test's delta), and one in two
/// treats every relation as outgrowing the cache (no test's relation is that large): its
/// joins test heads in batches, and its relations of integer columns keep bitsets, built
/// on their first facts and widened as facts outside their box arrive. One in two of
/// those keeps the ghosts of removed facts until a table must grow or shrink (in a small
/// relation, nearly every removal passes the eighth that purges them), so that later
/// updates meet them. Histories of an even number of batches let relations keep their
/// facts dense (their box small beside their table: every small one in those histories),
/// the others keep them in tables beside their bitsets.
fn check_history<P: Program>(
    initial: &[RawFact],
    batches: &[RawBatch],
) -> Result<(), TestCaseError> {
    let settings = Settings::default()
        .with_delta_chunk([DELTA_CHUNK, 1, 2, 3][initial.len() % 4])
        .with_large_from_bytes([LARGE_FROM_BYTES, 0][initial.len() / 4 % 2])
        .with_ghost_share([GHOST_SHARE, 0][initial.len() / 8 % 2])
        .with_dense(batches.len() % 2 == 0);
    let inputs = initial_batch::<P>(initial);
    let (mut program, _) = materialize_with_settings::<P>(inputs, settings, Trace::Rounds);
    let (edb, idb) = split_model(&program);
    prop_assert_eq!(&idb, &oracle_derived::<P>(&edb), "initial materialization");

    for (k, raw_batch) in batches.iter().enumerate() {
        let old_model = ground_set(&program.all_facts());
        let (batch, expected) = batch_and_reference::<P>(raw_batch, &old_model);
        let report = dred::runtime::maintain::update(&mut program, batch, dred::Trace::Explained);
        let actual = engine_trace(&report, ground_set(&program.all_facts()));
        prop_assert_eq!(
            &actual,
            &expected,
            "batch {} differs from the seed's reference",
            k + 1
        );
        let (edb, idb) = split_model(&program);
        prop_assert_eq!(
            &idb,
            &oracle_derived::<P>(&edb),
            "batch {} differs from the oracle",
            k + 1
        );
        check_witnesses::<P>(&report, &old_model, &expected).map_err(TestCaseError::fail)?;
        check_explanations(&program, &report).map_err(TestCaseError::fail)?;
    }
    Ok(())
}

/// Runs one random history on `P` with every non-DRed strategy side by side, checking each
/// against the oracle after every batch, and the alternative-proof report against the
/// seed's reference: what lost support was over-deleted by DRed, what was checked was
/// reached by DRed, and what it withdrew is exactly the true derived change. One history
/// in two treats every relation as too large for the cache, as [`check_history`] does:
/// heads are tested in batches, relations of integer columns keep bitsets, one in two of
/// those keeps ghosts, and (as there) histories of an odd number of batches keep no
/// relation dense.
fn check_strategies<P: Program>(
    initial: &[RawFact],
    batches: &[RawBatch],
) -> Result<(), TestCaseError> {
    let settings = Settings::default()
        .with_large_from_bytes([LARGE_FROM_BYTES, 0][initial.len() / 4 % 2])
        .with_ghost_share([GHOST_SHARE, 0][initial.len() / 8 % 2])
        .with_dense(batches.len() % 2 == 0);
    let inputs = initial_batch::<P>(initial);
    let fresh =
        |settings| materialize_with_settings::<P>(inputs.clone(), settings, Trace::Counts).0;
    let unstamped =
        |settings| from_facts_unchecked_with_settings::<P>(&fresh(settings).all_facts(), settings);
    // Closure relations dense enough are kept by reachability (`dred::runtime::closure`);
    // these runs check their support by stamps, as every relation of other programs.
    let by_stamps = settings.with_reachability(false);
    let mut runs = [
        (Strategy::AltProof, "alternative proofs", fresh(settings)),
        (
            Strategy::AltProof,
            "alternative proofs, unstamped",
            unstamped(settings),
        ),
        (
            Strategy::BackwardForward,
            "backward/forward",
            fresh(settings),
        ),
        (
            Strategy::BackwardForward,
            "backward/forward, unstamped",
            unstamped(settings),
        ),
        // Stamps a backward/forward update leaves must hold up the alternative proofs'.
        (
            Strategy::BackwardForward,
            "backward/forward alternating with alternative proofs by stamps",
            fresh(by_stamps),
        ),
        (Strategy::Auto, "automatic", fresh(settings)),
        (Strategy::Recompute, "recompute", fresh(settings)),
        (
            Strategy::AltProof,
            "alternative proofs by stamps",
            fresh(by_stamps),
        ),
        (
            Strategy::AltProof,
            "alternative proofs by stamps, unstamped",
            unstamped(by_stamps),
        ),
        (
            Strategy::AltProof,
            "alternative proofs by stamps, heads first",
            fresh(by_stamps.with_held_joins(HeldJoins::HeadsFirst)),
        ),
        (
            Strategy::AltProof,
            "alternative proofs by stamps, body first",
            fresh(by_stamps.with_held_joins(HeldJoins::BodyFirst)),
        ),
        (
            Strategy::AltProof,
            "alternative proofs by stamps, chunks of two",
            fresh(by_stamps.with_delta_chunk(2)),
        ),
    ];

    for (k, raw_batch) in batches.iter().enumerate() {
        let old_model = ground_set(&runs[0].2.all_facts());
        let (batch, expected) = batch_and_reference::<P>(raw_batch, &old_model);
        // The alternative-proof rounds by stamps with joins chosen by cost: forcing either
        // join order must check, raise and withdraw exactly the same facts.
        let mut by_cost_rounds = None;
        for (strategy, name, program) in &mut runs {
            let strategy = match name.contains("alternating") {
                true => [*strategy, Strategy::AltProof][k % 2],
                false => *strategy,
            };
            let report = dred::runtime::maintain::update_using(
                program,
                batch.clone(),
                strategy,
                Trace::Explained,
            );
            if strategy == Strategy::AltProof
                && name.starts_with("alternative proofs by stamps")
                && !name.contains("unstamped")
            {
                let rounds = alt_proof_rounds(&report);
                match &by_cost_rounds {
                    None => by_cost_rounds = Some(rounds),
                    Some(by_cost) => prop_assert_eq!(
                        &rounds,
                        by_cost,
                        "{}: batch {}: rounds differ from the joins chosen by cost",
                        name,
                        k + 1
                    ),
                }
            }
            let (edb, idb) = split_model(program);
            prop_assert_eq!(
                &idb,
                &oracle_derived::<P>(&edb),
                "{}: batch {} differs from the oracle",
                name,
                k + 1
            );
            prop_assert_eq!(ground_set(&report.net_delete), expected.net_delete.clone());
            prop_assert_eq!(ground_set(&report.net_insert), expected.net_insert.clone());
            let reached: Facts = expected.overdelete.iter().flatten().cloned().collect();
            let rederived_by_dred: Facts = expected
                .rederive
                .iter()
                .flatten()
                .flatten()
                .cloned()
                .collect();
            let truly_gone: Facts = expected
                .overdeleted_idb
                .difference(&rederived_by_dred)
                .cloned()
                .collect();
            let checked_rounds = report.checked.iter().flat_map(|c| &c.rounds);
            for round in checked_rounds {
                let checked = ground_set(round.facts.as_ref().expect("traced"));
                prop_assert!(checked.is_subset(&reached), "{}: checked beyond DRed", name);
            }
            if report.strategy == Strategy::BackwardForward {
                // Its deletion is exact: it takes away what has no proof left, and only that.
                let deleted = report.overdeleted_derived.facts.as_ref();
                let deleted = deleted.map(ground_set).unwrap_or_default();
                prop_assert_eq!(deleted, truly_gone, "{}: batch {} deleted", name, k + 1);
                prop_assert!(report.rederive.is_none());
                continue;
            }
            if report.strategy != Strategy::AltProof {
                continue;
            }
            // Closures are kept by reachability exactly where the program decided so, and
            // never where these runs said no.
            let by_reachability = program.bookkeeping().reachability;
            prop_assert_eq!(
                report.by_reachability.is_some(),
                by_reachability && !report.net_delete.is_empty(),
                "{}: batch {}",
                name,
                k + 1
            );
            prop_assert!(!(by_reachability && name.contains("by stamps")));
            let unsupported = report
                .overdeleted_derived
                .facts
                .as_ref()
                .map(ground_set)
                .unwrap_or_default();
            prop_assert!(
                unsupported.is_subset(&expected.overdeleted_idb),
                "{}: batch {}: lost support without being over-deleted by DRed",
                name,
                k + 1
            );
            let rederived: Facts = report
                .rederive
                .iter()
                .flat_map(|p| &p.rounds)
                .flat_map(|r| ground_set(r.facts.as_ref().expect("traced")))
                .collect();
            let withdrawn: Facts = unsupported.difference(&rederived).cloned().collect();
            prop_assert_eq!(withdrawn, truly_gone, "{}: batch {} withdrew", name, k + 1);
        }
    }
    Ok(())
}

/// An alternative-proof report's checked, restamped, unsupported and rederived rounds.
fn alt_proof_rounds<F: FactSets>(report: &dred::UpdateReport<F>) -> Vec<Vec<Facts>> {
    let phase = |phase: Option<&dred::runtime::Phase<F>>| -> Vec<Facts> {
        phase
            .map(|p| {
                p.rounds
                    .iter()
                    .map(|r| ground_set(r.facts.as_ref().expect("traced")))
                    .collect()
            })
            .unwrap_or_default()
    };
    vec![
        phase(report.checked.as_ref()),
        phase(report.restamped.as_ref()),
        phase(Some(&report.overdelete)),
        phase(report.rederive.as_ref()),
    ]
}

type FactOf<P> = dred::runtime::Fact<P>;

/// Every witness of an explained update is an instance of its rule over the facts that held
/// when its round was decided, and over-deletion names a fact of the previous round.
fn check_witnesses<P: Program>(
    report: &dred::UpdateReport<P::Facts>,
    old_model: &Facts,
    trace: &ReferenceTrace,
) -> Result<(), String> {
    let ground = |f: &FactOf<P>| parse_fact(&f.to_string());
    let check = |w: &dred::runtime::Witness<FactOf<P>>, held: &dyn Fn(&GroundFact) -> bool| {
        let body: Vec<GroundFact> = w.body.iter().map(ground).collect();
        check_instance(P::RULES, w.rule, &ground(&w.fact), &body)?;
        match body.iter().find(|b| !held(b)) {
            Some(b) => Err(format!("{} cites {b}, which did not hold then", w.fact)),
            None => Ok(()),
        }
    };
    let mut witnessed = 0;
    for (r, round) in report.overdelete.rounds.iter().enumerate() {
        for w in round.witnesses.iter().flatten() {
            check(w, &|f| old_model.contains(f))?;
            let cause = ground(w.pulled_in_by.as_ref().ok_or("no cause named")?);
            let in_body = w.body.iter().any(|b| ground(b) == cause);
            if !trace.overdelete[r - 1].contains(&cause) || !in_body {
                return Err(format!(
                    "{} pulled in by {cause}: not a body fact of round {r}",
                    w.fact
                ));
            }
            witnessed += 1;
        }
    }
    let mut held: Facts = old_model
        .iter()
        .filter(|f| !trace.overdelete.iter().any(|round| round.contains(*f)))
        .cloned()
        .collect();
    for (k, round) in report.rederive.iter().flat_map(|p| &p.rounds).enumerate() {
        for w in round.witnesses.iter().flatten() {
            check(w, &|f| held.contains(f))?;
            witnessed += 1;
        }
        held.extend(trace.rederive.as_ref().unwrap()[k].iter().cloned());
    }
    held.extend(trace.net_insert.iter().cloned());
    for (r, round) in report.insert.rounds.iter().enumerate() {
        for w in round.witnesses.iter().flatten() {
            check(w, &|f| held.contains(f))?;
            if !w
                .body
                .iter()
                .any(|b| trace.insert[r - 1].contains(&ground(b)))
            {
                return Err(format!("{} uses no fact of insert round {r}", w.fact));
            }
            witnessed += 1;
        }
        if r > 0 {
            held.extend(trace.insert[r].iter().cloned());
        }
    }
    let entered = report
        .overdelete
        .total()
        .saturating_sub(report.net_delete.len())
        + report.rederived()
        + report
            .insert
            .total()
            .saturating_sub(report.net_insert.len());
    if witnessed != entered {
        return Err(format!("{witnessed} witnesses for {entered} facts"));
    }
    Ok(())
}

/// Every derived fact has a checked proof; withdrawn facts get "not derived".
fn check_explanations<P: Program>(
    program: &P,
    report: &dred::UpdateReport<P::Facts>,
) -> Result<(), String> {
    let mut explainer = dred::runtime::Explainer::new(program);
    for fact in program.all_facts().derived_part().to_vec() {
        let proof = explainer.explain(&fact).map_err(|e| e.to_string())?;
        check_proof(program, &proof, &mut Vec::new())?;
    }
    let withdrawn = report
        .overdeleted_derived
        .facts
        .iter()
        .flat_map(|f| f.to_vec());
    for fact in withdrawn.filter(|f| !program.holds(f)) {
        if explainer.explain(&fact).is_ok() {
            return Err(format!("{fact} was withdrawn but has a proof"));
        }
    }
    Ok(())
}

/// Runs one random history with every strategy on 1, 2 and 4 threads, every join round
/// split over them (`Settings::with_parallel_from(1)`), with delta chunks of the default
/// size, of one fact or of two (a grouped join's chunk then holds parts of several
/// groups): the facts, the reports' text and their explanations must be those of one
/// thread, after the materialization and after every batch; and the facts those of the
/// oracle. For [`Strategy::Auto`], only the facts: its guard reads counted work, which a
/// search that stops at its first find counts in the order tables iterate in (see
/// `dred::runtime::parallel`), and so may give up at another batch.
fn check_threads<P: Program>(
    initial: &[RawFact],
    batches: &[RawBatch],
) -> Result<(), TestCaseError> {
    let settings = Settings::default()
        .with_parallel_from(1)
        .with_delta_chunk([DELTA_CHUNK, 1, 2][initial.len() % 3]);
    let inputs = initial_batch::<P>(initial);
    let seen = |program: &P, report: &dred::UpdateReport<P::Facts>| {
        let text = match report.account.requested {
            Strategy::Auto => String::new(),
            _ => format!("{report}{}", report.explained()),
        };
        (text, ground_set(&program.all_facts()))
    };
    for strategy in Strategy::ALL {
        let mut runs: Vec<P> = Vec::new();
        let mut one_thread = None;
        for threads in [1, 2, 4] {
            let with = settings.with_threads(threads);
            let (program, report) =
                materialize_with_settings::<P>(inputs.clone(), with, Trace::Explained);
            let now = seen(&program, &report);
            match &one_thread {
                None => one_thread = Some(now),
                Some(first) => prop_assert_eq!(&now, first, "{} threads: materialization", threads),
            }
            runs.push(program);
        }
        for (k, raw_batch) in batches.iter().enumerate() {
            let old_model = ground_set(&runs[0].all_facts());
            let (batch, _) = batch_and_reference::<P>(raw_batch, &old_model);
            let mut one_thread = None;
            for (program, threads) in runs.iter_mut().zip([1, 2, 4]) {
                let report = dred::runtime::maintain::update_using(
                    program,
                    batch.clone(),
                    strategy,
                    Trace::Explained,
                );
                let now = seen(program, &report);
                match &one_thread {
                    None => one_thread = Some(now),
                    Some(first) => prop_assert_eq!(
                        &now,
                        first,
                        "{:?} on {} threads: batch {}",
                        strategy,
                        threads,
                        k + 1
                    ),
                }
            }
            let (edb, idb) = split_model(&runs[1]);
            prop_assert_eq!(
                &idb,
                &oracle_derived::<P>(&edb),
                "{:?}: batch {}",
                strategy,
                k + 1
            );
        }
    }
    Ok(())
}

fn run<P: Program>() {
    run_with(check_history::<P>);
}

fn run_strategies<P: Program>() {
    run_with(check_strategies::<P>);
}

fn run_with(check: fn(&[RawFact], &[RawBatch]) -> Result<(), TestCaseError>) {
    let raw_fact = || (any::<u8>(), any::<[u8; 3]>());
    let strategy = (
        prop::collection::vec(raw_fact(), 0..14),
        prop::collection::vec(
            prop::collection::vec((any::<bool>(), raw_fact()), 0..6),
            1..6,
        ),
    );
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&strategy, |(initial, batches)| check(&initial, &batches))
        .unwrap();
}

mod mixed_columns {
    dred::datalog! {
        pub struct Access;
        @input pub struct Member(pub String, pub u32);
        @input pub struct Grant(pub u32, pub &'static str);
        @input pub struct Includes(pub &'static str, pub &'static str);
        pub struct CanRead(pub String, pub &'static str);
        pub struct Public(pub &'static str);
        pub struct RootOnly(pub &'static str);
        CanRead(u, d) <- Member(u, g), Grant(g, d);
        CanRead(u, e) <- CanRead(u, d), Includes(d, e);
        Public(d) <- Grant(0, d);
        Public(e) <- Public(d), Includes(d, e);
        RootOnly(d) <- CanRead("root", d), Grant(g, d), Member("x y", g);
    }
}

mod many_indexes {
    // Thirteen keys on `Q` (every set of its columns but one and the whole): more indexes
    // than one tuple of the runtime's index sets holds, so they nest.
    dred::datalog! {
        pub struct ManyIndexes;
        @input pub struct E(pub u32, pub u32);
        pub struct Q(pub u32, pub u32, pub u32, pub u32);
        pub struct Hit(pub u32, pub u32);
        Q(a, b, c, d) <- E(a, b), E(c, d);
        Q(b, c, d, a) <- Q(a, b, c, d), E(d, a);
        Hit(x, y) <- E(x, y), Q(x, _, _, _);
        Hit(x, y) <- E(x, y), Q(_, x, _, _);
        Hit(x, y) <- E(x, y), Q(_, _, x, _);
        Hit(x, y) <- E(x, y), Q(_, _, _, x);
        Hit(x, y) <- E(x, y), Q(x, y, _, _);
        Hit(x, y) <- E(x, y), Q(x, _, y, _);
        Hit(x, y) <- E(x, y), Q(x, _, _, y);
        Hit(x, y) <- E(x, y), Q(_, x, y, _);
        Hit(x, y) <- E(x, y), Q(_, x, _, y);
        Hit(x, y) <- E(x, y), Q(_, _, x, y);
        Hit(x, y) <- E(x, y), Q(x, y, x, _);
        Hit(x, y) <- E(x, y), Q(x, y, _, x);
        Hit(x, y) <- E(x, y), Q(x, _, y, x);
    }
}

/// Programs at the front end's edges: relations named like the prelude's items (the
/// generated code must not use those names unqualified), columns spelt through type
/// aliases (one type to rustc, accepted beside its other spellings; the closure-shaped
/// pair takes the general path), documented rules, and relations of 32 columns joined on
/// one column and on 31 (index keys and rows wider than std's tuples).
mod front_end_edges {
    pub type NodeId = u32;
    pub mod ids {
        pub type Id = u32;
    }

    dred::datalog! {
        pub struct Edges;
        @input pub struct Some(pub u32, pub NodeId);
        @input pub struct Wide(pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8);
        pub struct None(pub ids::Id, pub u32);
        pub struct Option(pub u32);
        pub struct Vec(pub NodeId, pub ::std::primitive::u32);
        pub struct Ok(pub u32);
        pub struct Default(pub NodeId, pub NodeId);
        pub struct Wider(pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8);
        pub struct Ends(pub u8, pub u8);
        /// Every edge is a path.
        None(x, y) <- Some(x, y);
        /// A path continues along an edge.
        None(x, z) <- None(x, y), Some(y, z);
        Option(x) <- None(x, x);
        Vec(x, y) <- Option(x), Some(y, x);
        Ok(y) <- Vec(_, y), Default(y, y);
        Default(x, y) <- Some(x, y), Vec(y, x);
        Wider(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31) <- Wide(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31);
        Wider(b, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31) <- Wider(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31), Wide(a0, b, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31);
        Ends(a0, c) <- Wider(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31), Wide(a31, c, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _);
    }
}

#[test]
fn tc_nonlinear_matches_reference_and_oracle() {
    run::<tc_nonlinear::Tc>();
}

#[test]
fn strategies_match_oracle() {
    run_strategies::<tc_nonlinear::Tc>();
    run_strategies::<tc_linear::Tc>();
    run_strategies::<closure_downstream::Downstream>();
    run_strategies::<same_generation::SameGen>();
    run_strategies::<mutual_recursion::Mutual>();
    run_strategies::<three_atoms::ThreeAtoms>();
    run_strategies::<constants::Constants>();
    run_strategies::<repeated_variables::Repeated>();
    run_strategies::<zero_arity::ZeroArity>();
    run_strategies::<mixed_columns::Access>();
    run_strategies::<many_indexes::ManyIndexes>();
    run_strategies::<front_end_edges::Edges>();
}

#[test]
fn threads_agree_with_one_thread() {
    run_with(check_threads::<tc_nonlinear::Tc>);
    run_with(check_threads::<same_generation::SameGen>);
    run_with(check_threads::<closure_downstream::Downstream>);
    run_with(check_threads::<three_atoms::ThreeAtoms>);
    run_with(check_threads::<mixed_columns::Access>);
    run_with(check_threads::<many_indexes::ManyIndexes>);
}

#[test]
fn tc_linear_matches_reference_and_oracle() {
    run::<tc_linear::Tc>();
}

#[test]
fn same_generation_matches_reference_and_oracle() {
    run::<same_generation::SameGen>();
}

#[test]
fn mutual_recursion_matches_reference_and_oracle() {
    run::<mutual_recursion::Mutual>();
}

#[test]
fn three_atom_bodies_match_reference_and_oracle() {
    run::<three_atoms::ThreeAtoms>();
}

#[test]
fn closures_with_rules_beyond_them_match_reference_and_oracle() {
    run::<closure_downstream::Downstream>();
}

#[test]
fn constants_match_reference_and_oracle() {
    run::<constants::Constants>();
}

#[test]
fn repeated_variables_match_reference_and_oracle() {
    run::<repeated_variables::Repeated>();
}

#[test]
fn zero_arity_matches_reference_and_oracle() {
    run::<zero_arity::ZeroArity>();
}

#[test]
fn mixed_string_and_integer_columns_match_reference_and_oracle() {
    run::<mixed_columns::Access>();
}

#[test]
fn front_end_edges_match_reference_and_oracle() {
    run::<front_end_edges::Edges>();
}
