//! The alternative-proof, backward/forward, automatic and recompute strategies on small
//! programs whose traces can be read by hand: what is kept, what loses support, what the
//! report says.

#[path = "../common/mod.rs"]
mod common;

mod auto;
mod backward;
mod soak;
mod spared_indexes;

use std::collections::BTreeSet;

use common::SEED_EDGES;

use dred::runtime::{FactSets, GroundFact, Program, Stamp};
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
    // R(a,c), R(c,d) (rounds 3 and 2) still derive it, so it rises from round 3 to one
    // stamp past R(a,c)'s, still below round 4.
    let mut graph = seed_graph(stamps_only());
    let stamp = |graph: &Graph, a, b| graph.relation::<R>().stamp(&R(a, b)).unwrap();
    // The inputs are the first round.
    let round = graph.relation::<E>().stamp(&E("a", "b")).unwrap();
    assert_eq!(stamp(&graph, "a", "d"), 3 * round);
    let report = graph.update_using(
        Batch::new().delete(E("e", "d")),
        Strategy::AltProof,
        Trace::Rounds,
    );
    assert!(graph.contains(&R("a", "d")), "a→b→c→d still proves it");
    assert_eq!(stamp(&graph, "a", "c"), 3 * round);
    assert_eq!(stamp(&graph, "a", "d"), 3 * round + 1);
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
fn a_fact_raised_within_its_round_leaves_the_next_rounds_heads_unchecked() {
    use chain::*;
    // r → s, then two ways on to t: s → a → t and s → b → c → t; and t → u. R(s,t) is of
    // round 3 on E(s,a), R(a,t). Deleting E(a,t) leaves it R(b,t), also of round 3, so it
    // rises to one stamp past that, still below round 4, where R(r,t) counted on it:
    // R(r,t) keeps its older support and is not checked again.
    let edges = [(0, 1), (1, 2), (2, 4), (1, 3), (3, 5), (5, 4), (4, 6)];
    let (r, s, a, t) = (0, 1, 2, 4);
    let materialize = || {
        let inputs = Batch::new().insert_all(edges.map(|(x, y)| E(x, y)));
        Chain::materialize_with_settings(inputs, stamps_only(), Trace::Rounds).0
    };
    let mut chain = materialize();
    let stamp = |chain: &Chain, x, y| chain.relation::<R>().stamp(&R(x, y)).unwrap();
    let round = chain.relation::<E>().stamp(&E(r, s)).unwrap();
    assert_eq!(
        (stamp(&chain, s, t), stamp(&chain, r, t)),
        (3 * round, 4 * round)
    );
    let report = chain.update_using(
        Batch::new().delete(E(a, t)),
        Strategy::AltProof,
        Trace::Rounds,
    );
    assert_eq!(stamp(&chain, s, t), 3 * round + 1, "{report}");
    assert_eq!(stamp(&chain, r, t), 4 * round, "{report}");
    let checked = report.checked.as_ref().expect("alternative proofs check");
    let was_checked = |fact: R| {
        let fact = ChainFact::R(fact);
        (checked.rounds.iter()).any(|round| round.facts.as_ref().unwrap().contains_fact(&fact))
    };
    assert!(was_checked(R(s, t)), "{report}");
    assert!(!was_checked(R(r, t)), "{report}");
    let mut by_dred = materialize();
    by_dred.update(Batch::new().delete(E(a, t)));
    assert_eq!(ground(&chain.facts()), ground(&by_dred.facts()));
    assert!(chain.verify().is_ok());
}

#[test]
fn a_clock_near_its_end_restarts_by_renumbering_the_rounds() {
    use chain::*;
    // Two copies of one history, one with its clock moved near the end of its range before
    // an insertion: that insertion's rounds are stamped there. The next update renumbers
    // the rounds, and from then on every update reports the same as in the other copy.
    let edges = [(0, 1), (1, 2), (2, 4), (1, 3), (3, 5), (5, 4), (4, 6)];
    let materialize = || {
        let inputs = Batch::new().insert_all(edges.map(|(x, y)| E(x, y)));
        Chain::materialize_with_settings(inputs, stamps_only(), Trace::Rounds).0
    };
    let (mut plain, mut renumbered) = (materialize(), materialize());
    renumbered.bookkeeping_mut().clock = Stamp::MAX / 2 - 1;
    let stamp = |chain: &Chain, x, y| chain.relation::<R>().stamp(&R(x, y)).unwrap();
    let updates = [
        Batch::new().insert(E(6, 7)).insert(E(0, 7)),
        Batch::new().delete(E(2, 4)),
        Batch::new().delete(E(0, 7)),
        Batch::new().insert(E(2, 4)).delete(E(3, 5)),
    ];
    for (at, update) in updates.into_iter().enumerate() {
        let for_plain = update.clone();
        let report = renumbered.update_using(update, Strategy::AltProof, Trace::Rounds);
        let expected = plain.update_using(for_plain, Strategy::AltProof, Trace::Rounds);
        assert_eq!(report.to_string(), expected.to_string(), "update {at}");
        assert_eq!(ground(&renumbered.facts()), ground(&plain.facts()));
        assert!(renumbered.verify().is_ok());
        if at == 0 {
            assert!(
                stamp(&renumbered, 6, 7) > Stamp::MAX / 2,
                "stamped near the end"
            );
        } else {
            assert!(
                renumbered.bookkeeping().clock < Stamp::MAX / 4,
                "renumbered"
            );
        }
    }
    // The facts' stamps keep their order: each fact's rank among the stamps is the same.
    let ranks = |chain: &Chain| {
        let facts: BTreeSet<(R, Stamp)> = (chain.relation::<R>().iter())
            .map(|fact| (R(fact.0, fact.1), stamp(chain, fact.0, fact.1)))
            .collect();
        let stamps: BTreeSet<Stamp> = facts.iter().map(|&(_, stamp)| stamp).collect();
        let rank = |stamp| stamps.range(..stamp).count();
        facts
            .into_iter()
            .map(|(fact, stamp)| (fact, rank(stamp)))
            .collect::<Vec<_>>()
    };
    assert_eq!(ranks(&renumbered), ranks(&plain));
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
    // Cutting a ternary tree's edge to the root's first child: the paths from the root
    // into that subtree lose support level by level, each round outgrowing all the
    // earlier ones together.
    let edges = || {
        Batch::new()
            .insert_all((0..40).flat_map(|i| [E(i, 3 * i + 1), E(i, 3 * i + 2), E(i, 3 * i + 3)]))
    };
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
fn a_recompute_records_its_counted_work_as_the_next_estimate() {
    use chain::*;
    let edges = || (0..99).map(|i| E(i, i + 1));
    let (mut program, materialized) = Chain::materialize(Batch::new().insert_all(edges()));
    let first = program.bookkeeping().clone();
    assert_eq!(
        (first.scratch_work, first.scratch_facts),
        (materialized.work, 99 + 4950)
    );
    // Counted, not timed: a second materialization of the same facts counts the same.
    let (again, _) = Chain::materialize(Batch::new().insert_all(edges()));
    assert_eq!(again.bookkeeping().scratch_work, first.scratch_work);
    let report = program.update_using(
        Batch::new().delete(E(98, 99)),
        Strategy::Recompute,
        Trace::Counts,
    );
    let kept = program.bookkeeping();
    assert_eq!(
        (kept.scratch_work, kept.scratch_facts),
        (report.work, 98 + 98 * 99 / 2)
    );
    assert!(report.work < first.scratch_work && report.counted.units() == report.work);
    assert!(kept.clock < first.clock + 2, "the clock restarts");
}

/// A loss of support's joins hand on each head they emit once, with the stamp it holds.
fn assert_each_head_handed_on_with_its_stamp<'a, T: dred::runtime::Stored, I>(
    stamped: impl Iterator<Item = (&'a T, dred::runtime::Stamp)>,
    emitted: &dred::runtime::FactSet<T::Row>,
    relation: dred::runtime::TypedRelation<'_, T, I>,
) {
    let mut handed_on = dred::runtime::FactSet::default();
    for (head, stamp) in stamped {
        assert!(handed_on.insert(head.to_row()), "{head:?} handed on twice");
        assert_eq!(relation.stamp(head), Some(stamp), "{head:?}");
    }
    assert_eq!(&handed_on, emitted);
}

#[test]
fn a_spent_budget_stops_a_join_between_delta_facts() {
    use chain::*;
    use dred::runtime::{Admit, Work};
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
            .map(dred::runtime::Stored::into_row)
            .collect(),
        ..ChainFacts::default()
    };
    let (mut all, mut unlimited) = (ChainFacts::default(), Work::unlimited());
    let mut stamped = Vec::new();
    dred::runtime::parallel::fire(
        &program,
        &firsts,
        Admit::Held,
        &mut all,
        &mut stamped,
        &mut unlimited,
    );
    assert!(!unlimited.is_exhausted());
    assert_eq!(all.R.len(), 4000);
    let heads = stamped.iter().map(|(fact, stamp)| match fact {
        ChainFact::R(head) => (head, *stamp),
        ChainFact::E(edge) => panic!("{edge:?} is not a head"),
    });
    assert_each_head_handed_on_with_its_stamp(heads, &all.R, program.relation::<R>());

    // A join counts its delta's rows as it starts walking it: the first rule's join (2,000
    // rows, no probe) fits in the budget, the second's passes it at its first delta fact.
    let (mut some, mut limited) = (ChainFacts::default(), Work::limited(3000));
    dred::runtime::parallel::fire(
        &program,
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
    use dred::runtime::{Admit, Work};
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
            .map(dred::runtime::Stored::into_row)
            .collect(),
        ..ClosureFacts::default()
    };
    let (mut all, mut unlimited) = (ClosureFacts::default(), Work::unlimited());
    let mut stamped = Vec::new();
    dred::runtime::parallel::fire(
        &program,
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

    let (mut some, mut limited) = (ClosureFacts::default(), Work::limited(20_000));
    dred::runtime::parallel::fire(
        &program,
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
