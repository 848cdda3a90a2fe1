//! One history under one strategy, checked after every batch: the input facts the program
//! holds are the batch sequence's, its derived facts the independent oracle's least model
//! over them, and `verify()` (a recomputation by the engine itself) agrees.

use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};

use dred::runtime::maintain::{materialize_with_settings, update_using};
use dred::runtime::oracle::least_model;
use dred::runtime::settings::{DELTA_CHUNK, GHOST_SHARE, LARGE_FROM_BYTES, PARALLEL_FROM};
use dred::runtime::{
    Batch, FactSets, GroundFact, HeldJoins, Program, Settings, Stamp, Strategy, Trace, ROUND_GAP,
};

use crate::history::{field, ground, inputs, History, RawFact};

/// The input and the derived facts of a least model.
pub type Models = (BTreeSet<GroundFact>, BTreeSet<GroundFact>);

/// How a history is run: a strategy and the settings it runs with (beside those its
/// history draws: see [`settings`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// Its name in the output.
    pub name: &'static str,
    /// The strategy of every update.
    pub strategy: Strategy,
    /// Whether closure relations may be kept by reachability.
    pub reachability: bool,
}

/// Every way a history is run.
pub const RUNS: [Run; 7] = [
    run("dred", Strategy::DRed, true),
    run("altproof", Strategy::AltProof, true),
    run("altproof-by-stamps", Strategy::AltProof, false),
    run("backward-forward", Strategy::BackwardForward, true),
    run("recompute", Strategy::Recompute, true),
    run("auto", Strategy::Auto, true),
    run("auto-by-stamps", Strategy::Auto, false),
];

const fn run(name: &'static str, strategy: Strategy, reachability: bool) -> Run {
    Run {
        name,
        strategy,
        reachability,
    }
}

/// Where a run left the least model, or panicked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// The batch after which it diverged (0: the materialization).
    pub batch: usize,
    /// What differed.
    pub detail: String,
}

/// The settings of a history: its variant's join chunks, head tests in batches and
/// bitsets, ghosts of removed facts, dense relations, and join orders of held facts, each
/// as the engine chooses on large inputs or forced on small ones; and its thread count,
/// with every round split when there is more than one thread.
pub fn settings(history: &History, run: &Run) -> Settings {
    let held = [
        HeldJoins::ByCost,
        HeldJoins::HeadsFirst,
        HeldJoins::BodyFirst,
    ];
    let variant = history.variant;
    let split_from = if history.threads > 1 {
        1
    } else {
        PARALLEL_FROM
    };
    Settings::default()
        .with_threads(history.threads)
        .with_parallel_from(split_from)
        .with_delta_chunk([DELTA_CHUNK, 1, 2, 3][variant % 4])
        .with_large_from_bytes([LARGE_FROM_BYTES, 0][variant / 4 % 2])
        .with_ghost_share([GHOST_SHARE, 0][variant / 8 % 2])
        .with_dense([false, true, true][variant / 2 % 3])
        .with_held_joins(held[variant % 3])
        .with_reachability(run.reachability)
}

/// What a history's runs are checked against: the oracle, or (to show the soak's
/// reproductions at work) a wrong one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Oracle {
    /// The independent oracle's least models.
    True,
    /// The least models, but without the self-loops (`R(x,x)`) of the closure programs
    /// after the first batch.
    NoSelfLoops,
}

impl Oracle {
    /// The models `shape`'s runs of `history` are checked against.
    pub fn expected(self, shape: &crate::shapes::Shape, history: &History) -> Vec<Models> {
        let mut models = expected_models(shape.relations, shape.rules, history);
        if self == Oracle::NoSelfLoops && shape.name.ends_with("closure") {
            for (_, derived) in models.iter_mut().skip(1) {
                derived.retain(|fact| fact.values.first() != fact.values.get(1));
            }
        }
        models
    }
}

/// The least model's input and derived facts after the materialization and after each
/// batch of `history`.
pub fn expected_models(
    relations: &'static [dred::runtime::RelationInfo],
    rules: &'static [dred::runtime::RuleInfo],
    history: &History,
) -> Vec<Models> {
    let ground_all = |facts: &[RawFact]| -> Vec<GroundFact> {
        facts.iter().map(|raw| ground(relations, raw)).collect()
    };
    let mut held: BTreeSet<GroundFact> = ground_all(&history.initial).into_iter().collect();
    let mut models = Vec::with_capacity(history.batches.len() + 1);
    let mut model = |held: &BTreeSet<GroundFact>| {
        let all = least_model(rules, held).expect("the soak's rules have known constants");
        let derived = all.difference(held).cloned().collect();
        models.push((held.clone(), derived));
    };
    model(&held);
    for batch in &history.batches {
        for fact in ground_all(&batch.deletions) {
            held.remove(&fact);
        }
        held.extend(ground_all(&batch.insertions));
        model(&held);
    }
    models
}

fn add<P: Program>(batch: &mut Batch<P::Facts>, insert: bool, raw: &RawFact) {
    let info = inputs(P::RELATIONS)[raw.0];
    let fields: Vec<String> = (info.columns.iter().zip(&raw.1))
        .map(|(ty, &value)| field(ty, value))
        .collect();
    let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
    batch
        .add_text::<P>(insert, info.name, &fields)
        .expect("the soak draws values every column reads");
}

/// Runs `history` under `run` on `P`, checking every batch against `expected`; returns how
/// many batches it checked.
pub fn check_history<P: Program>(
    history: &History,
    run: &Run,
    expected: &[Models],
) -> Result<u64, Divergence> {
    let diverged = |batch, detail: String| Divergence { batch, detail };
    let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<u64, Divergence> {
        let mut inputs = Batch::new();
        for raw in &history.initial {
            add::<P>(&mut inputs, true, raw);
        }
        let settings = settings(history, run);
        let (mut program, _) = materialize_with_settings::<P>(inputs, settings, Trace::Counts);
        if let Some(rounds) = history.late_clock {
            program.bookkeeping_mut().clock = Stamp::MAX / 2 - rounds * ROUND_GAP;
        }
        compare(&program, &expected[0]).map_err(|detail| diverged(0, detail))?;
        for (k, raw_batch) in history.batches.iter().enumerate() {
            let mut batch = Batch::new();
            for raw in &raw_batch.deletions {
                add::<P>(&mut batch, false, raw);
            }
            for raw in &raw_batch.insertions {
                add::<P>(&mut batch, true, raw);
            }
            update_using(&mut program, batch, run.strategy, Trace::Counts);
            compare(&program, &expected[k + 1]).map_err(|detail| diverged(k + 1, detail))?;
        }
        Ok(history.batches.len() as u64)
    }));
    outcome.unwrap_or_else(|panic| {
        let text = (panic.downcast_ref::<String>().cloned())
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(diverged(usize::MAX, format!("panicked: {text}")))
    })
}

/// Whether `program` holds exactly `expected`'s input and derived facts, and verifies.
fn compare<P: Program>(program: &P, expected: &Models) -> Result<(), String> {
    let all = program.all_facts();
    let derived: BTreeSet<GroundFact> = all.derived_part().ground().into_iter().collect();
    let held: BTreeSet<GroundFact> = all.ground().into_iter().collect();
    let inputs: BTreeSet<GroundFact> = held.difference(&derived).cloned().collect();
    let list = |facts: Vec<&GroundFact>| {
        let text: Vec<String> = facts.iter().map(ToString::to_string).collect();
        text.join(" ")
    };
    if inputs != expected.0 {
        return Err(format!(
            "input facts: missing [{}], extra [{}]",
            list(expected.0.difference(&inputs).collect()),
            list(inputs.difference(&expected.0).collect())
        ));
    }
    if derived != expected.1 {
        return Err(format!(
            "derived facts: missing [{}], unfounded [{}]",
            list(expected.1.difference(&derived).collect()),
            list(derived.difference(&expected.1).collect())
        ));
    }
    dred::runtime::maintain::verify(program).map_err(|mismatch| format!("verify(): {mismatch}"))
}
