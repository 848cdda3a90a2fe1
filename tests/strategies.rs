//! The alternative-proof, automatic and recompute strategies on small programs whose
//! traces can be read by hand: what is kept, what loses support, what the report says.

mod common;

use std::collections::BTreeSet;

use common::SEED_EDGES;

use dred::runtime::{FactSets, GroundFact, Program};
use dred::{Batch, Settings, Strategy, Trace};

dred::datalog! {
    pub struct Graph;
    @input pub struct E(pub &'static str, pub &'static str);
    pub struct R(pub &'static str, pub &'static str);
    R(x, y) <- E(x, y);
    R(x, z) <- R(x, y), R(y, z);
}

mod mutual {
    dred::datalog! {
        pub struct Mutual;
        @input pub struct Seed(pub &'static str);
        pub struct P(pub &'static str);
        pub struct Q(pub &'static str);
        P(x) <- Seed(x);
        Q(x) <- P(x);
        P(x) <- Q(x);
    }
}

mod chain {
    dred::datalog! {
        pub struct Chain;
        @input pub struct E(pub u32, pub u32);
        pub struct R(pub u32, pub u32);
        R(x, y) <- E(x, y);
        R(x, z) <- E(x, y), R(y, z);
    }
}

mod closure {
    dred::datalog! {
        pub struct Closure;
        @input pub struct E(pub u32, pub u32);
        pub struct R(pub u32, pub u32);
        R(x, y) <- E(x, y);
        R(x, z) <- R(x, y), R(y, z);
    }
}

/// Settings under which materializations check the closures' support by stamps instead
/// of keeping them by reachability (`dred::runtime::closure`): most programs here are
/// closures, and the tests that use it read the stamps' rounds.
fn stamps_only() -> Settings {
    Settings::default().with_reachability(false)
}

fn seed_graph(settings: Settings) -> Graph {
    let edges = Batch::new().insert_all(SEED_EDGES.map(|(a, b)| E(a, b)));
    Graph::materialize_with_settings(edges, settings, Trace::Rounds).0
}

fn snapshot(graph: &Graph) -> BTreeSet<GroundFact> {
    ground(&graph.facts())
}

fn ground(facts: &impl FactSets) -> BTreeSet<GroundFact> {
    facts.ground().into_iter().collect()
}

/// The independent oracle's least model of `rules` over the facts of relation `input`
/// among `held`.
fn oracle_model(
    rules: &[dred::runtime::RuleInfo],
    held: &BTreeSet<GroundFact>,
    input: &str,
) -> BTreeSet<GroundFact> {
    let inputs = held
        .iter()
        .filter(|f| f.relation == input)
        .cloned()
        .collect();
    dred::runtime::oracle::least_model(rules, &inputs).expect("the oracle runs the rules")
}

#[test]
fn alternative_proofs_keep_r_a_d_and_withdraw_the_self_supporting_cycle() {
    let mut graph = seed_graph(stamps_only());
    let mut by_dred = seed_graph(stamps_only());
    let report = graph.update_using(
        Batch::new().delete(E("a", "b")),
        Strategy::AltProof,
        Trace::Rounds,
    );
    // R(a,d) keeps its support R(a,e), R(e,d) (both older). R(a,b) (stamp 2) has instances
    // left only through R(a,c) (stamp 3), so its stamp rises to 4; R(a,c), which counted on
    // it, rises once too, to 4 (through itself and R(c,c)). Each rise reaches the heads that
    // may have counted on the old stamp and cannot on the new (the risen fact itself
    // included); a fact rises only once per update: checked again, neither has an older
    // support, and both go. R(a,d) (stamp 3) is never checked: its instance through R(a,b)
    // also uses R(b,d), stamped 3 too, so that instance never supported it; and R(a,b),
    // R(a,c) are no older than R(a,d) when they go.
    assert_eq!(
        report.to_string(),
        "strategy: alternative proofs
net_delete: E(a,b)
net_insert:
unsupported 1: E(a,b)
check 2: R(a,b)
unsupported 2:
restamp 2: R(a,b)
check 3: R(a,b) R(a,c)
unsupported 3:
restamp 3: R(a,c)
check 4: R(a,b) R(a,c)
unsupported 4: R(a,b) R(a,c)
restamp 4:
unsupported_idb: R(a,b) R(a,c)
rederive 1:
"
    );
    assert_eq!(
        (report.checked(), report.restamped(), report.withdrawn()),
        (5, 2, 2)
    );
    by_dred.update(Batch::new().delete(E("a", "b")));
    assert_eq!(snapshot(&graph), snapshot(&by_dred));
    assert!(graph.verify().is_ok());
}

#[test]
fn alternative_proofs_find_what_a_closure_loses_by_reachability() {
    // `R` is the closure of the input `E`, and the seed's graph is dense enough: the
    // facts deleting E(a,b) takes from `R` are found at once from the graph, before any
    // rule is joined, and no fact of `R` is checked.
    let mut graph = seed_graph(Settings::default());
    assert!(graph.bookkeeping().reachability);
    let mut by_dred = seed_graph(Settings::default());
    let report = graph.update_using(
        Batch::new().delete(E("a", "b")),
        Strategy::AltProof,
        Trace::Rounds,
    );
    assert_eq!(
        report.to_string(),
        "strategy: alternative proofs
net_delete: E(a,b)
net_insert:
unreachable: R(a,b) R(a,c)
unsupported 1: E(a,b) R(a,b) R(a,c)
unsupported_idb: R(a,b) R(a,c)
rederive 1:
"
    );
    assert_eq!((report.checked(), report.withdrawn()), (0, 2));
    by_dred.update(Batch::new().delete(E("a", "b")));
    assert_eq!(snapshot(&graph), snapshot(&by_dred));
    // Deletions come first, so E(c,b) goes before E(a,b) is back: `b` and `c` leave their
    // cycle. Insertions are semi-naive as ever.
    let report = graph.update_using(
        Batch::new().insert(E("a", "b")).delete(E("c", "b")),
        Strategy::AltProof,
        Trace::Rounds,
    );
    let text = report.to_string();
    assert!(
        text.contains("unreachable: R(b,b) R(c,b) R(c,c)\n"),
        "{text}"
    );
    assert!(graph.contains(&R("a", "b")) && graph.contains(&R("a", "c")));
    assert!(graph.verify().is_ok());
}

#[test]
fn a_closure_whose_graph_is_sparse_keeps_checking_stamps() {
    use chain::*;
    // 200 nodes in 100 separate edges: 100 pairs, far fewer than the 200² / 8 that would
    // pay for reachability bitsets.
    let edges = (0..100).map(|i| E(2 * i, 2 * i + 1));
    let (mut program, _) = Chain::materialize(Batch::new().insert_all(edges));
    assert!(!program.bookkeeping().reachability);
    let report = program.update_using(
        Batch::new().delete(E(0, 1)),
        Strategy::AltProof,
        Trace::Rounds,
    );
    assert!(report.by_reachability.is_none());
    assert_eq!((report.checked(), report.withdrawn()), (1, 1));
}

#[test]
fn auto_recomputes_when_reachability_finds_an_eighth_of_the_facts_gone() {
    use closure::*;
    // A 40-node cycle holds all 1,600 pairs; cutting it leaves the path's 780.
    let n = 40;
    let edges = (0..n).map(|i| E(i, (i + 1) % n));
    let (mut program, _) = Closure::materialize(Batch::new().insert_all(edges));
    let report = program.update_using(
        Batch::new().delete(E(n - 1, 0)),
        Strategy::Auto,
        Trace::Counts,
    );
    assert_eq!(report.strategy, Strategy::Recompute);
    let why = report.why.as_deref().expect("auto says why");
    assert!(
        why.contains("more than 1/8 of the 1640 facts from closure relations"),
        "{why}"
    );
    assert_eq!(program.relation::<R>().len(), 780);
    // Two cycles through every node (steps of one and of two) and a leaf hanging off 0:
    // cutting an edge of one cycle takes nothing, cutting the leaf off its 40 pairs.
    let twice = (0..n).flat_map(|i| [E(i, (i + 1) % n), E(i, (i + 2) % n)]);
    let (mut program, _) = Closure::materialize(Batch::new().insert_all(twice.chain([E(0, 100)])));
    for (edge, lost) in [(E(5, 6), 0), (E(0, 100), 40)] {
        let report = program.update_using(Batch::new().delete(edge), Strategy::Auto, Trace::Counts);
        assert_eq!(report.strategy, Strategy::AltProof, "{:?}", report.why);
        assert_eq!(report.by_reachability.map(|round| round.len), Some(lost));
    }
    assert!(program.verify().is_ok());
}

#[test]
fn mutual_support_without_a_seed_is_withdrawn_and_with_one_is_kept() {
    use mutual::*;
    let (mut program, _) = Mutual::materialize(Batch::new().insert_all([Seed("a"), Seed("b")]));
    let report = program.update_using(
        Batch::new().delete(Seed("a")),
        Strategy::AltProof,
        Trace::Rounds,
    );
    assert_eq!(
        report.to_string(),
        "strategy: alternative proofs
net_delete: Seed(a)
net_insert:
unsupported 1: Seed(a)
check 2: P(a)
unsupported 2:
restamp 2: P(a)
check 3: Q(a)
unsupported 3:
restamp 3: Q(a)
check 4: P(a)
unsupported 4: P(a)
restamp 4:
check 5: Q(a)
unsupported 5: Q(a)
restamp 5:
unsupported_idb: P(a) Q(a)
rederive 1:
"
    );
    assert!(!program.contains(&P("a")) && !program.contains(&Q("a")));
    assert!(program.contains(&P("b")) && program.contains(&Q("b")));

    // Re-inserted, P(a) and Q(a) get new stamps; deleting the seed again still removes them.
    program.update(Batch::new().insert(Seed("a")));
    program.update_using(
        Batch::new().delete(Seed("a")),
        Strategy::AltProof,
        Trace::Counts,
    );
    assert!(!program.contains(&P("a")) && !program.contains(&Q("a")));
    assert!(program.verify().is_ok());
}

#[test]
fn a_fact_that_loses_its_older_support_but_keeps_a_proof_rises() {
    // R(a,d)'s only older support is R(a,e), R(e,d): deleting E(e,d) takes it away, but
    // R(a,c), R(c,d) (stamps 3 and 2) still derive it, so its stamp rises from 3 to 4.
    let mut graph = seed_graph(stamps_only());
    assert_eq!(graph.relation::<R>().stamp(&R("a", "d")), Some(3));
    let report = graph.update_using(
        Batch::new().delete(E("e", "d")),
        Strategy::AltProof,
        Trace::Rounds,
    );
    assert!(graph.contains(&R("a", "d")), "a→b→c→d still proves it");
    assert_eq!(graph.relation::<R>().stamp(&R("a", "d")), Some(4));
    assert!(
        report.to_string().contains("restamp 3: R(a,d)\n"),
        "{report}"
    );
    assert!(!graph.contains(&R("e", "d")));
    assert!(graph.verify().is_ok());
    // Whatever lost support and was not rederived is exactly what DRed withdraws.
    let mut by_dred = seed_graph(stamps_only());
    let dred = by_dred.update(Batch::new().delete(E("e", "d")));
    assert_eq!(report.withdrawn(), dred.withdrawn());
    assert!(report.overdeleted_derived.len <= dred.overdeleted_derived.len);
}

#[test]
fn a_counts_only_materialization_keeps_the_model_and_drops_the_rounds_facts() {
    let edges = || Batch::new().insert_all(SEED_EDGES.map(|(a, b)| E(a, b)));
    let (full, rounds) = Graph::materialize(edges());
    let (lean, counts) = Graph::materialize_with(edges(), Trace::Counts);
    assert_eq!(snapshot(&lean), snapshot(&full));
    let lens = |phase: &dred::runtime::Phase<GraphFacts>| -> Vec<usize> {
        phase.rounds.iter().map(|round| round.len).collect()
    };
    assert_eq!(lens(&counts.insert), lens(&rounds.insert));
    assert!(rounds
        .insert
        .rounds
        .iter()
        .all(|round| round.facts.is_some()));
    assert!(counts
        .insert
        .rounds
        .iter()
        .all(|round| round.facts.is_none()));
}

#[test]
fn a_counts_only_alternative_proof_update_counts_the_rounds_a_traced_one_lists() {
    use closure::*;
    // Cutting a binary tree's edge to the root's first child: the paths from the root
    // into that subtree lose support level by level, each round outgrowing all the
    // earlier ones together.
    let edges =
        || Batch::new().insert_all((0..63).flat_map(|i| [E(i, 2 * i + 1), E(i, 2 * i + 2)]));
    let (mut traced, _) = Closure::materialize(edges());
    let (mut counted, _) = Closure::materialize_with(edges(), Trace::Counts);
    let cut = || Batch::new().delete(E(0, 1));
    let rounds = traced.update_using(cut(), Strategy::AltProof, Trace::Rounds);
    let counts = counted.update_using(cut(), Strategy::AltProof, Trace::Counts);
    let lens = |phase: &dred::runtime::Phase<ClosureFacts>| -> Vec<usize> {
        phase.rounds.iter().map(|round| round.len).collect()
    };
    let unsupported = lens(&rounds.overdelete);
    assert!(
        unsupported
            .iter()
            .enumerate()
            .any(|(at, &len)| at > 1 && len > unsupported[..at].iter().sum()),
        "{unsupported:?}"
    );
    assert_eq!(lens(&counts.overdelete), unsupported);
    let phases = |report: &dred::UpdateReport<ClosureFacts>| {
        [&report.checked, &report.restamped, &report.rederive].map(|phase| phase.as_ref().map(lens))
    };
    assert_eq!(phases(&counts), phases(&rounds));
    assert_eq!(
        counts.overdeleted_derived.len,
        rounds.overdeleted_derived.len
    );
    assert!(counts
        .overdelete
        .rounds
        .iter()
        .all(|round| round.facts.is_none()));
    assert_eq!(
        ground(&counted.facts()),
        ground(&traced.facts()),
        "the same model either way"
    );
    assert!(counted.verify().is_ok());
}

#[test]
fn recompute_rebuilds_and_says_so() {
    let mut graph = seed_graph(Settings::default());
    let report = graph.update_using(
        Batch::new().delete(E("a", "b")).insert(E("d", "a")),
        Strategy::Recompute,
        Trace::Counts,
    );
    assert_eq!(report.strategy, Strategy::Recompute);
    let text = report.to_string();
    assert!(text.starts_with("strategy: recompute\nnet_delete: E(a,b)\nnet_insert: E(d,a)\n"));
    assert!(text.contains("recompute 1: (9 facts)"), "{text}");
    let mut by_dred = seed_graph(Settings::default());
    by_dred.update(Batch::new().delete(E("a", "b")).insert(E("d", "a")));
    assert_eq!(snapshot(&graph), snapshot(&by_dred));
}

#[test]
fn a_recompute_keeps_the_fastest_measure_of_a_materialization() {
    use chain::*;
    let edges = (0..99).map(|i| E(i, i + 1));
    let (mut program, _) = Chain::materialize(Batch::new().insert_all(edges));
    // As if an earlier materialization of this size had run on a quiet machine: no real
    // one is that fast, so the recompute's own measure loses to it.
    program.bookkeeping_mut().scratch_nanos = 1;
    let clock = program.bookkeeping().clock;
    program.update_using(
        Batch::new().delete(E(98, 99)),
        Strategy::Recompute,
        Trace::Counts,
    );
    let kept = program.bookkeeping();
    assert_eq!((kept.scratch_nanos, kept.scratch_facts), (1, 99 + 4950));
    assert!(kept.clock < clock, "the clock restarts");
    // A model under half the size is measured anew.
    program.update_using(
        Batch::new().delete_all((40..98).map(|i| E(i, i + 1))),
        Strategy::Recompute,
        Trace::Counts,
    );
    let kept = program.bookkeeping();
    assert!(kept.scratch_nanos > 1 && kept.scratch_facts == 40 + 40 * 41 / 2);
}

#[test]
fn auto_checks_small_deletions_and_recomputes_large_ones() {
    use chain::*;
    let edges = (0..99)
        .map(|i| E(i, i + 1))
        .chain((1000..2000).map(|i| E(i, i)));
    let (mut program, _) = Chain::materialize(Batch::new().insert_all(edges));
    let small = program.update_using(
        Batch::new().delete(E(1000, 1000)),
        Strategy::Auto,
        Trace::Counts,
    );
    assert_eq!(small.strategy, Strategy::AltProof);
    assert_eq!((small.checked(), small.withdrawn()), (1, 1));
    // 60 of the 1,098 input facts: more than the twentieth Auto maintains incrementally.
    let large = program.update_using(
        Batch::new().delete_all((1001..1061).map(|i| E(i, i))),
        Strategy::Auto,
        Trace::Counts,
    );
    assert_eq!(large.strategy, Strategy::Recompute);
    let why = large.why.as_deref().expect("auto says why");
    assert!(why.contains("net deletion (60 facts)"), "{why}");
    assert!(program.verify().is_ok());
    assert_eq!(program.relation::<R>().len(), 4950 + 939);
}

/// Linear closure over `edges`, materialized, after deleting `deleted` with Auto.
fn chain_after_auto_deletion(
    edges: impl IntoIterator<Item = chain::E>,
    deleted: chain::E,
    settings: Settings,
    trace: Trace,
) -> (chain::Chain, dred::UpdateReport<chain::ChainFacts>) {
    let inputs = Batch::new().insert_all(edges);
    let (mut program, _) = chain::Chain::materialize_with_settings(inputs, settings, Trace::Rounds);
    let report = program.update_using(Batch::new().delete(deleted), Strategy::Auto, trace);
    (program, report)
}

#[test]
fn auto_stops_past_its_work_budget_and_recomputes() {
    use chain::*;
    // A chain 0→1→…→99 and 100 self-loops elsewhere. Deleting the middle edge is 1 input
    // fact of 199 (no recompute by share), but takes away R(x, z) for 50 × 50 pairs: a
    // quarter of the closure, each checked, past a fifth of what materializing it cost.
    // The self-loops' R(i, i) have two derivations each, too many for DRed.
    let edges = (0..99)
        .map(|i| E(i, i + 1))
        .chain((1000..1100).map(|i| E(i, i)));
    let (program, report) =
        chain_after_auto_deletion(edges, E(49, 50), stamps_only(), Trace::Counts);
    assert_eq!(report.strategy, Strategy::Recompute);
    let why = report.why.as_deref().expect("auto says why");
    assert!(
        why.starts_with("alternative proofs passed the guard"),
        "{why}"
    );
    // 1 of 199 inputs is a tenth of the way to the twentieth that recomputes outright.
    assert!(why.ends_with("× 0.90 for the deletion's size)"), "{why}");
    assert!(program.verify().is_ok());
    assert!(!program.contains(&R(0, 99)) && program.contains(&R(0, 49)));

    // Without the self-loops every fact has one derivation, Auto runs DRed, and the same
    // guard stops it: over-deleting a quarter of the closure and looking for a proof of
    // each costs more than a fifth of a materialization too.
    let edges = (0..99).map(|i| E(i, i + 1));
    let (program, report) =
        chain_after_auto_deletion(edges, E(49, 50), stamps_only(), Trace::Counts);
    assert_eq!(report.strategy, Strategy::Recompute);
    let why = report.why.as_deref().expect("auto says why");
    assert!(why.starts_with("DRed passed the guard"), "{why}");
    assert!(program.verify().is_ok());
    assert!(!program.contains(&R(0, 99)) && program.contains(&R(0, 49)));
}

#[test]
fn auto_runs_dred_where_sampled_facts_have_one_derivation_each() {
    use chain::*;
    use dred::runtime::Program;
    // Linear closure over a chain: R(x, z) has one instance, E(x, x + 1), R(x + 1, z).
    let edges = (0..99).map(|i| E(i, i + 1));
    let (program, report) =
        chain_after_auto_deletion(edges, E(97, 98), Settings::default(), Trace::Explained);
    let sample = program.bookkeeping().sample;
    assert_eq!((sample.facts, sample.multiply_derived), (256, 0));
    assert_eq!(report.strategy, Strategy::DRed);
    let why = report.why.as_deref().expect("auto says why");
    assert_eq!(
        why,
        "0 of 256 sampled derived facts have a second derivation: at most 1/64"
    );
    // R(x, 98) and R(x, 99) for x ≤ 97: over-deleted, and none rederived.
    assert_eq!(
        (report.overdeleted_derived.len, report.rederived()),
        (196, 0)
    );
    let text = report.to_string();
    assert!(
        text.starts_with(&format!("strategy: DRed ({why})\nnet_delete: E(97,98)\n")),
        "{text}"
    );
    assert!(text.contains("overdelete 2: "), "{text}");
    assert!(program.verify().is_ok());
    assert_eq!(program.relation::<R>().len(), 99 * 100 / 2 - 196);

    // Shortcuts give facts a second derivation: R(x, x + 2) through either path, and
    // everything reached past a shortcut's head. Then Auto checks for other proofs.
    let shortcuts = (0..97).step_by(2).map(|i| E(i, i + 2));
    let edges = (0..99).map(|i| E(i, i + 1)).chain(shortcuts);
    let (program, report) =
        chain_after_auto_deletion(edges, E(50, 51), Settings::default(), Trace::Counts);
    assert_eq!(report.strategy, Strategy::AltProof);
    let why = report.why.as_deref().expect("auto says why");
    assert!(
        why.ends_with("have a second derivation: more than 1/64"),
        "{why}"
    );
    assert!(report
        .to_string()
        .starts_with(&format!("strategy: alternative proofs ({why})\n")));
    assert!(program.verify().is_ok());
    // 50 → 52 bypasses the deleted edge, and no shortcut ends at 51: only R(x, 51) goes,
    // for each x ≤ 50.
    assert_eq!(report.withdrawn(), 51);
    assert!(!program.contains(&R(0, 51)) && program.contains(&R(0, 99)));
}

#[test]
fn auto_samples_derivations_again_once_updates_change_an_eighth_of_the_inputs() {
    use chain::*;
    use dred::runtime::Program;
    let sampled = |program: &Chain| {
        let sample = program.bookkeeping().sample;
        (sample.facts, sample.multiply_derived, sample.inputs_changed)
    };
    // A chain: every fact has one derivation.
    let edges = (0..99).map(|i| E(i, i + 1));
    let (mut program, _) = Chain::materialize(Batch::new().insert_all(edges));
    assert_eq!(sampled(&program), (256, 0, 0));
    // A shortcut adds no derived fact, but gives R(0, z) a second derivation for every
    // z ≥ 2. One input changed of 100 is not enough for a new sample.
    let report = program.update_using(Batch::new().insert(E(0, 2)), Strategy::Auto, Trace::Counts);
    assert_eq!(report.insert.total(), 1);
    assert_eq!(sampled(&program), (256, 0, 1));
    // 48 more: 49 of 148 inputs changed, more than an eighth. The new sample finds facts
    // with two derivations (R(x, z) for every even x and z ≥ x + 3: about half of them),
    // and Auto checks for other proofs where it would have over-deleted.
    let shortcuts = (2..97).step_by(2).map(|i| E(i, i + 2));
    program.update_using(
        Batch::new().insert_all(shortcuts),
        Strategy::Auto,
        Trace::Counts,
    );
    let (facts, multiply_derived, inputs_changed) = sampled(&program);
    assert_eq!((facts, inputs_changed), (256, 0));
    assert!(
        multiply_derived * 64 > facts,
        "{multiply_derived} of {facts}"
    );
    let report = program.update_using(
        Batch::new().delete(E(50, 51)),
        Strategy::Auto,
        Trace::Counts,
    );
    assert_eq!(report.strategy, Strategy::AltProof);
    let why = report.why.as_deref().expect("auto says why");
    assert!(why.ends_with("more than 1/64"), "{why}");
    assert_eq!(report.withdrawn(), 51);
    assert!(program.verify().is_ok());
}

#[test]
fn a_deletion_that_takes_away_an_eighth_of_the_derived_facts_samples_them_again() {
    use chain::*;
    use dred::runtime::Program;
    let changed = |program: &Chain| {
        let sample = program.bookkeeping().sample;
        (sample.inputs_changed, sample.derived_changed)
    };
    let edges = (0..99).map(|i| E(i, i + 1));
    let (mut program, _) = Chain::materialize(Batch::new().insert_all(edges));
    // DRed over-deletes R(x, 98) and R(x, 99) for x ≤ 97: 196 of 4,950 derived facts.
    let report = program.update(Batch::new().delete(E(97, 98)));
    assert_eq!(report.overdeleted_derived.len, 196);
    assert_eq!(changed(&program), (1, 196));
    // Then R(x, z) for x ≤ 49 < z ≤ 97: 2,400 more, and 2,354 derived facts are left. The
    // counts start again from a new sample.
    let report = program.update(Batch::new().delete(E(49, 50)));
    assert_eq!(report.overdeleted_derived.len, 2400);
    assert_eq!(changed(&program), (0, 0));
    assert_eq!(program.bookkeeping().sample.facts, 256);
    assert!(program.verify().is_ok());
}

/// A loss of support's joins hand on each head they emit once, with the stamp it holds.
fn assert_each_head_handed_on_with_its_stamp<'a, T: dred::runtime::Tuple, I>(
    stamped: impl Iterator<Item = (&'a T, dred::runtime::Stamp)>,
    emitted: &dred::runtime::FactSet<T>,
    relation: &dred::runtime::Relation<T, I>,
) {
    let mut handed_on = dred::runtime::FactSet::default();
    for (head, stamp) in stamped {
        assert!(handed_on.insert(head.clone()), "{head:?} handed on twice");
        assert_eq!(relation.stamp(head), Some(stamp), "{head:?}");
    }
    assert_eq!(&handed_on, emitted);
}

#[test]
fn a_spent_budget_stops_a_join_between_delta_facts() {
    use chain::*;
    use dred::runtime::{Admit, Program, Work};
    // 2,000 separate two-edge paths; the delta is every first edge, each the support of
    // two heads (its own path's R facts).
    let edges = (0..2000).flat_map(|i| [E(3 * i, 3 * i + 1), E(3 * i + 1, 3 * i + 2)]);
    let (program, _) = Chain::materialize_with_settings(
        Batch::new().insert_all(edges),
        stamps_only(),
        Trace::Rounds,
    );
    let firsts = ChainFacts {
        E: program
            .relation::<E>()
            .iter()
            .filter(|e| e.0 % 3 == 0)
            .map(std::borrow::Cow::into_owned)
            .collect(),
        ..ChainFacts::default()
    };
    let (mut all, mut unlimited) = (ChainFacts::default(), Work::unlimited());
    let mut stamped = Vec::new();
    program.fire(&firsts, Admit::Held, &mut all, &mut stamped, &mut unlimited);
    assert!(!unlimited.is_exhausted());
    assert_eq!(all.R.len(), 4000);
    let heads = stamped.iter().map(|(fact, stamp)| match fact {
        ChainFact::R(head) => (head, *stamp),
        ChainFact::E(edge) => panic!("{edge:?} is not a head"),
    });
    assert_each_head_handed_on_with_its_stamp(heads, &all.R, program.relation::<R>());

    // A join counts its delta's rows as it starts walking it: the first rule's join (2,000
    // rows, no probe) fits in the budget, the second's passes it at its first delta fact.
    let (mut some, mut limited) = (ChainFacts::default(), Work::limited(3000, None));
    program.fire(
        &firsts,
        Admit::Held,
        &mut some,
        &mut Vec::new(),
        &mut limited,
    );
    assert!(limited.is_exhausted());
    assert!(some.R.is_subset(&all.R));
    assert!(
        some.R.len() < all.R.len() * 3 / 4,
        "{} of {}",
        some.R.len(),
        all.R.len()
    );
}

#[test]
fn a_spent_budget_stops_a_grouped_join_inside_its_group() {
    use closure::*;
    use dred::runtime::{Admit, Program, Work};
    // A star: 300 edges into node 0 and 300 out of it. Fired with the edges into 0, the
    // second rule's join groups them by 0 (one group of 300 facts) and walks R(0, _) for
    // each: 90,000 heads from a single group.
    let spokes = 300;
    let edges = (1..=spokes).flat_map(|i| [E(i, 0), E(0, spokes + i)]);
    let (program, _) = Closure::materialize_with_settings(
        Batch::new().insert_all(edges),
        stamps_only(),
        Trace::Rounds,
    );
    let into_zero = ClosureFacts {
        R: program
            .relation::<R>()
            .iter()
            .filter(|r| r.1 == 0)
            .map(std::borrow::Cow::into_owned)
            .collect(),
        ..ClosureFacts::default()
    };
    let (mut all, mut unlimited) = (ClosureFacts::default(), Work::unlimited());
    let mut stamped = Vec::new();
    program.fire(
        &into_zero,
        Admit::Held,
        &mut all,
        &mut stamped,
        &mut unlimited,
    );
    assert_eq!(all.R.len(), (spokes * spokes) as usize);
    let heads = stamped.iter().map(|(fact, stamp)| match fact {
        ClosureFact::R(head) => (head, *stamp),
        ClosureFact::E(edge) => panic!("{edge:?} is not a head"),
    });
    assert_each_head_handed_on_with_its_stamp(heads, &all.R, program.relation::<R>());

    let (mut some, mut limited) = (ClosureFacts::default(), Work::limited(20_000, None));
    program.fire(
        &into_zero,
        Admit::Held,
        &mut some,
        &mut Vec::new(),
        &mut limited,
    );
    assert!(limited.is_exhausted());
    assert!(some.R.is_subset(&all.R));
    assert!(
        some.R.len() < all.R.len() / 2,
        "the group's join stopped early: {} of {}",
        some.R.len(),
        all.R.len()
    );
}

/// Long runs of updates keep a model's memory bounded: each soak deletes a few random edges
/// and restores them, batch after batch (10⁴ batches per strategy by default;
/// `DRED_SOAK_BATCHES` sets another number). After every restoring batch the program holds
/// the facts it held after materializing, and its heap memory (`heap_bytes`: fact tables,
/// index rows, retired facts, spare capacity) stays within 1.25× of what it held then: no
/// growth from retired facts left in indexes, rows of withdrawn facts, or tables that only
/// ever grow. At the end its facts are the independent oracle's least model.
mod soak {
    use std::collections::BTreeSet;

    use super::closure::*;
    use super::{ground, oracle_model};
    use dred::runtime::Program;
    use dred::{Batch, Strategy, Trace};

    fn batches() -> usize {
        std::env::var("DRED_SOAK_BATCHES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(10_000)
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
}

/// Same-generation's two indexes on `Sg` serve only the joins from a delta `Par` fact,
/// which can scan `Par` and test `Sg` instead: a materialization leaves them unbuilt, an
/// update scans while `|delta| × |Par|` is at most `|Sg|`, and a larger one builds them.
/// Every strategy keeps the oracle's model either way.
mod spared_indexes {
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
        let sg = program.relation::<Sg>();
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
}

/// Settings are values each program owns: two programs with different settings on one
/// thread each run with their own, keep them through a recompute, and the same program's
/// update gives the same report and facts on another thread.
#[test]
fn each_program_runs_with_its_own_settings_on_any_thread() {
    use closure::*;
    let snapshot_of = |program: &Closure| ground(&program.facts());
    let edges: Vec<E> = (0..60)
        .map(|i| E(i, (i + 1) % 60))
        .chain([E(3, 40)])
        .collect();
    let inputs = || Batch::new().insert_all(edges.iter().cloned());
    // Every path a small program does not take by default: relations count as large (heads
    // tested in batches, bitsets), ghosts kept, no dense relation, heads-first joins, chunks
    // of one, closures checked by stamps.
    let small_as_large = Settings::default()
        .with_large_from_bytes(0)
        .with_ghost_share(0)
        .with_dense(false)
        .with_held_joins(dred::runtime::HeldJoins::HeadsFirst)
        .with_delta_chunk(1)
        .with_reachability(false);
    let dense = Settings::default().with_large_from_bytes(0);
    let (mut by_default, _) =
        Closure::materialize_with_settings(inputs(), Settings::default(), Trace::Rounds);
    let (mut by_stamps, _) =
        Closure::materialize_with_settings(inputs(), small_as_large, Trace::Rounds);
    let (mut densely, _) = Closure::materialize_with_settings(inputs(), dense, Trace::Rounds);
    assert_eq!(by_default.settings(), Settings::default());
    assert_eq!(by_stamps.settings(), small_as_large);
    assert!(densely.relation::<R>().is_dense());
    assert!(!by_stamps.relation::<R>().is_dense() && !by_default.relation::<R>().is_dense());

    let on_other_thread = by_stamps.clone();
    let deletion = || Batch::new().delete(E(10, 11));
    let reports = [
        by_default.update_using(deletion(), Strategy::AltProof, Trace::Rounds),
        by_stamps.update_using(deletion(), Strategy::AltProof, Trace::Rounds),
        densely.update_using(deletion(), Strategy::AltProof, Trace::Rounds),
    ];
    // The dense graph (a cycle and a chord) keeps its closure by reachability unless its
    // program's settings say otherwise.
    assert!(reports[0].by_reachability.is_some() && reports[2].by_reachability.is_some());
    assert!(reports[1].by_reachability.is_none());
    assert_eq!(snapshot_of(&by_default), snapshot_of(&by_stamps));
    assert_eq!(snapshot_of(&by_default), snapshot_of(&densely));
    assert!(by_stamps.verify().is_ok() && densely.relation::<R>().is_dense());

    let (elsewhere, report) = std::thread::spawn(move || {
        let mut program = on_other_thread;
        let report = program.update_using(deletion(), Strategy::AltProof, Trace::Rounds);
        (program, report.to_string())
    })
    .join()
    .expect("the other thread's update");
    assert_eq!(report, reports[1].to_string());
    assert_eq!(snapshot_of(&elsewhere), snapshot_of(&by_stamps));
    assert_eq!(elsewhere.settings(), small_as_large);

    // A recompute builds the program anew with the settings it had.
    by_stamps.update_using(
        Batch::new().insert(E(10, 11)),
        Strategy::Recompute,
        Trace::Counts,
    );
    assert_eq!(by_stamps.settings(), small_as_large);
    assert!(!by_stamps.relation::<R>().is_dense());
}
