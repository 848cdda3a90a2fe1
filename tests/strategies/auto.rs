//! What `Strategy::Auto` chooses, when it gives up, and the account its report gives.

use super::{chain, closure, stamps_only};
use dred::{Batch, Reason, Settings, Strategy, Trace};

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
    let why = report.why().expect("auto says why");
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
        assert_eq!(report.strategy, Strategy::AltProof, "{:?}", report.why());
        assert_eq!(report.by_reachability.map(|round| round.len), Some(lost));
    }
    assert!(program.verify().is_ok());
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
    let why = large.why().expect("auto says why");
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
    let why = report.why().expect("auto says why");
    assert!(
        why.starts_with("alternative proofs passed the guard"),
        "{why}"
    );
    // 1 of 199 inputs is a tenth of the way to the twentieth that recomputes outright.
    assert!(why.contains("× 0.90 for the deletion's size)"), "{why}");
    let account = &report.account;
    assert_eq!(
        (account.requested, account.first_tried),
        (Strategy::Auto, Some(Strategy::AltProof))
    );
    let Reason::GuardReached { taper, .. } = account.reason else {
        panic!("{:?}", account.reason)
    };
    assert!((taper - 0.9).abs() < 0.01, "{taper}");
    // The abandoned attempt's counts: it had started taking facts out and checking them.
    let abandoned = account.abandoned.expect("the attempt's counts");
    assert!(abandoned.work > 0 && abandoned.rounds > 0, "{abandoned:?}");
    assert!(
        abandoned.taken_out > 0 && abandoned.checked > 0,
        "{abandoned:?}"
    );
    assert!(
        why.contains(&format!("after {} units", abandoned.work)),
        "{why}"
    );
    assert!(program.verify().is_ok());
    assert!(!program.contains(&R(0, 99)) && program.contains(&R(0, 49)));

    // Without the self-loops every fact has one derivation, Auto runs DRed, and the same
    // guard stops it: over-deleting a quarter of the closure and looking for a proof of
    // each costs more than a fifth of a materialization too.
    let edges = (0..99).map(|i| E(i, i + 1));
    let (program, report) =
        chain_after_auto_deletion(edges, E(49, 50), stamps_only(), Trace::Counts);
    assert_eq!(report.strategy, Strategy::Recompute);
    let why = report.why().expect("auto says why");
    assert!(why.starts_with("DRed passed the guard"), "{why}");
    assert_eq!(report.account.first_tried, Some(Strategy::DRed));
    let abandoned = report.account.abandoned.expect("the attempt's counts");
    assert!(
        abandoned.taken_out > 0 && abandoned.checked == 0,
        "{abandoned:?}"
    );
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
    let why = report.why().expect("auto says why");
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
    let why = report.why().expect("auto says why");
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
    let why = report.why().expect("auto says why");
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

/// Every way to an update's result has its typed account: the strategy asked for, the one
/// tried first (none when nothing is deleted or Auto recomputes outright), and the reason.
#[test]
fn every_strategy_path_gives_a_typed_account() {
    use chain::*;
    use dred::Account;
    let fresh = || {
        let edges = Batch::new().insert_all((0..99).map(|i| E(i, i + 1)));
        Chain::materialize(edges).0
    };
    let account = |requested, first_tried, reason| Account {
        requested,
        first_tried,
        reason,
        abandoned: None,
    };
    for strategy in [Strategy::DRed, Strategy::AltProof, Strategy::Recompute] {
        let mut program = fresh();
        let report = program.update_using(Batch::new().delete(E(97, 98)), strategy, Trace::Counts);
        assert_eq!(report.strategy, strategy);
        let expected = account(strategy, Some(strategy), Reason::Requested);
        assert_eq!(report.account, expected);
        assert_eq!(report.why(), None, "the caller knows why");
        // Nothing to delete: no deletion strategy ran (a recompute still does).
        let report =
            program.update_using(Batch::new().insert(E(200, 201)), strategy, Trace::Counts);
        let expected = match strategy {
            Strategy::Recompute => account(strategy, Some(strategy), Reason::Requested),
            _ => account(strategy, None, Reason::NothingDeleted),
        };
        assert_eq!(report.account, expected);
    }

    let mut program = fresh();
    let report = program.update_using(
        Batch::new().insert(E(200, 201)),
        Strategy::Auto,
        Trace::Rounds,
    );
    assert_eq!(
        report.account,
        account(Strategy::Auto, None, Reason::NothingDeleted)
    );
    assert_eq!(report.insert.total(), 2, "E(200,201) and R(200,201)");
    assert!(
        report
            .to_string()
            .starts_with("strategy: none (nothing to delete: no deletion strategy ran)\n"),
        "{report}"
    );
    let report = program.update_using(Batch::new(), Strategy::Auto, Trace::Counts);
    assert_eq!(report.account.reason, Reason::NothingDeleted);

    let report = program.update_using(
        Batch::new().delete(E(97, 98)),
        Strategy::Auto,
        Trace::Counts,
    );
    let sampled = Reason::SampledDerivations {
        sampled: 256,
        multiply_derived: 0,
        share: 64,
    };
    assert_eq!(
        report.account,
        account(Strategy::Auto, Some(Strategy::DRed), sampled)
    );

    // 10 of the 99 remaining edges: more than the twentieth Auto maintains incrementally.
    let report = program.update_using(
        Batch::new().delete_all((0..10).map(|i| E(i, i + 1))),
        Strategy::Auto,
        Trace::Counts,
    );
    let large = Reason::LargeDeletion {
        deleted: 10,
        inputs: 99,
        share: 20,
    };
    assert_eq!(report.account, account(Strategy::Auto, None, large));
    assert_eq!(report.strategy, Strategy::Recompute);
    assert!(program.verify().is_ok());
}

#[test]
fn auto_accounts_for_a_closure_loss_too_large_to_take_out() {
    use closure::*;
    let n = 40;
    let edges = (0..n).map(|i| E(i, (i + 1) % n));
    let (mut program, _) = Closure::materialize(Batch::new().insert_all(edges));
    let report = program.update_using(
        Batch::new().delete(E(n - 1, 0)),
        Strategy::Auto,
        Trace::Counts,
    );
    let account = &report.account;
    assert_eq!(
        (account.requested, account.first_tried),
        (Strategy::Auto, None)
    );
    assert_eq!(
        account.reason,
        Reason::LargeClosureLoss {
            facts: 1640,
            share: 8
        }
    );
    assert_eq!(account.abandoned, None);
}

/// A column type whose hashing can be slowed at will: the same update run fast and slowed
/// down must take the same decisions, as the guard counts work instead of timing it.
mod slowed {
    use std::hash::{Hash, Hasher};
    use std::sync::atomic::{AtomicU32, Ordering};

    /// Spins this many rounds in every hash of a [`Node`] (0: not slowed).
    pub static SPIN: AtomicU32 = AtomicU32::new(0);

    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
    pub struct Node(pub u32);

    impl Hash for Node {
        fn hash<H: Hasher>(&self, state: &mut H) {
            for i in 0..SPIN.load(Ordering::Relaxed) {
                std::hint::black_box(i);
            }
            self.0.hash(state);
        }
    }

    dred::datalog! {
        pub struct Slowed;
        @input pub struct E(pub Node, pub Node);
        pub struct R(pub Node, pub Node);
        R(x, y) <- E(x, y);
        R(x, z) <- E(x, y), R(y, z);
    }
}

#[test]
fn auto_decides_the_same_however_slow_the_update_runs() {
    use slowed::*;
    use std::sync::atomic::Ordering;
    let node = Node;
    // A chain with self-loops beside it (Auto checks other proofs and gives up: see
    // `auto_stops_past_its_work_budget_and_recomputes`), and a chain's last edge (it does
    // not give up).
    let chain = (0..99).map(|i| E(node(i), node(i + 1)));
    let loops = (1000..1100).map(|i| E(node(i), node(i)));
    let cases = [
        (
            chain.clone().chain(loops).collect::<Vec<_>>(),
            E(node(49), node(50)),
        ),
        (chain.collect(), E(node(97), node(98))),
    ];
    for (edges, deleted) in cases {
        let run = |spin: u32| {
            SPIN.store(spin, Ordering::Relaxed);
            let inputs = Batch::new().insert_all(edges.iter().cloned());
            let (mut program, _) =
                Slowed::materialize_with_settings(inputs, stamps_only(), Trace::Counts);
            let batch = Batch::new().delete(deleted.clone());
            let report = program.update_using(batch, Strategy::Auto, Trace::Rounds);
            SPIN.store(0, Ordering::Relaxed);
            let facts = super::ground(&program.facts());
            (report.to_string(), report.account, report.counted, facts)
        };
        let fast = run(0);
        let slow = run(2_000);
        assert_eq!(fast, slow, "the same account, work, trace and facts");
        assert_eq!(fast, run(0), "and again");
    }
}
