//! The DRed driver: normalize → over-delete → rederive → insert, as delta joins over the
//! stored relations (no ground rule instance is ever stored). This module holds the entry
//! points, the strategies' choice and its guard; `phases` holds the round loops.
//!
//! Invariant between calls: the program's relations hold exactly the least model of its
//! rules over its input facts. Every function here preserves it; only
//! [`from_facts_unchecked`] takes it on trust.

use std::time::Instant;

use crate::account::{few_multiply_derived, Abandoned, Account, Reason};
use crate::admit::Admit;
use crate::batch::Batch;
use crate::parallel;
use crate::poison::{Operation, Poisoned, Unfinished, Unrecoverable};
use crate::program::{
    least_instance, Bookkeeping, Counted, DerivationSample, Fact, FactSets, Program, Work,
};
use crate::relation::{Stamp, ROUND_GAP};
use crate::report::{Phase, Round, Trace, UpdateReport, Witness};
use crate::settings::Settings;
use crate::strategy::Strategy;
use crate::text::GroundFact;

mod backward;
mod clock;
mod phases;
use backward::backward_forward;
use clock::renumber_rounds;
use phases::*;

/// Builds a program's least model over `inputs` by semi-naive insertion from the empty
/// model: round 1 is the inputs together with the program's constant facts.
pub fn materialize<P: Program>(
    inputs: Batch<P::Facts>,
    trace: Trace,
) -> (P, UpdateReport<P::Facts>) {
    materialize_with_settings(inputs, Settings::default(), trace)
}

/// [`materialize`] into a program that runs with `settings`, now and through its
/// recomputes.
pub fn materialize_with_settings<P: Program>(
    inputs: Batch<P::Facts>,
    settings: Settings,
    trace: Trace,
) -> (P, UpdateReport<P::Facts>) {
    materialize_into(P::empty(settings), inputs, trace)
}

/// [`materialize`] into `program`, an empty program (with room reserved, see
/// [`Program::reserve_rooms`]).
fn materialize_into<P: Program>(
    mut program: P,
    inputs: Batch<P::Facts>,
    trace: Trace,
) -> (P, UpdateReport<P::Facts>) {
    // The strings read for the inputs are the program's from now on.
    program.bookkeeping_mut().symbols = inputs.symbols;
    let mut report = build(&mut program, &inputs.insertions, trace);
    report.net_insert = inputs.insertions;
    (program, report)
}

/// Builds the least model over `inputs` in `program`, an empty program; the report's
/// `net_insert` is left empty.
fn build<P: Program>(program: &mut P, inputs: &P::Facts, trace: Trace) -> UpdateReport<P::Facts> {
    debug_assert_eq!(program.fact_count(), 0, "built in an empty program");
    let mut seeds = P::constant_facts();
    seeds.union_with(inputs);
    let mut report = UpdateReport::new(P::Facts::default(), P::Facts::default(), trace);
    let started = Instant::now();
    let mut work = Work::unlimited();
    insert_phase(program, seeds, &mut report.insert, trace, &mut work);
    program.finish_materialization();
    report.insert.elapsed = started.elapsed();
    report.work = work.units();
    report.counted = work.counted();
    let facts = program.fact_count();
    program
        .bookkeeping_mut()
        .record_materialization(report.work, facts);
    sample_derivations(program);
    decide_reachability(program);
    report
}

/// Sets [`Bookkeeping::reachability`] for a program just materialized.
fn decide_reachability<P: Program>(program: &mut P) {
    let reachability = program.bookkeeping().settings.reachability() && program.closures_dense();
    program.bookkeeping_mut().reachability = reachability;
}

/// How many facts of each derived relation [`sample_derivations`] reads.
const SAMPLE_PER_RELATION: usize = 256;

/// Counts, in a sample of the derived facts ([`SAMPLE_PER_RELATION`] of each relation,
/// spread over it: [`crate::Relation::sample`]), those with more than one rule instance, for
/// [`Strategy::Auto`]'s choice. A few hundred head-bound lookups: nothing beside a
/// materialization.
fn sample_derivations<P: Program>(program: &mut P) {
    let mut sample = Vec::new();
    program.sample_derived(SAMPLE_PER_RELATION, &mut sample);
    let multiply_derived = sample
        .iter()
        .filter(|fact| {
            let mut instances = 0;
            program.instances(fact, &mut |_, _| {
                instances += 1;
                instances > 1
            })
        })
        .count();
    program.bookkeeping_mut().sample = DerivationSample {
        facts: sample.len() as u32,
        multiply_derived: multiply_derived as u32,
        ..DerivationSample::default()
    };
}

/// [`Strategy::Auto`] chooses DRed when at most 1/`MULTIPLY_DERIVED_SHARE` of the sampled
/// derived facts have a second derivation: far from the suite's workloads on both sides
/// (`BENCHMARKS.md`, *Design measurements*, "Auto's sample").
const MULTIPLY_DERIVED_SHARE: u32 = 64;

/// The incremental strategy [`Strategy::Auto`] runs, and why.
fn incremental_choice<F>(bookkeeping: &Bookkeeping<F>) -> (Strategy, Reason) {
    let (sampled, multiply_derived) = (
        bookkeeping.sample.facts,
        bookkeeping.sample.multiply_derived,
    );
    let reason = Reason::SampledDerivations {
        sampled,
        multiply_derived,
        share: MULTIPLY_DERIVED_SHARE,
    };
    if few_multiply_derived(sampled, multiply_derived, MULTIPLY_DERIVED_SHARE) {
        (Strategy::DRed, reason)
    } else {
        (Strategy::AltProof, reason)
    }
}

/// [`Strategy::Auto`] rematerializes outright when the net deletion is more than
/// 1/`RECOMPUTE_SHARE` of the input facts.
const RECOMPUTE_SHARE: usize = 20;

/// [`Strategy::Auto`] stops and rematerializes once its counted work ([`Work`]) passes
/// 1/`GUARD_SHARE` of what a recompute is expected to count (tapered by the deletion's
/// size, see [`Guard::taper`]), so that an update that gives up costs about a ninth more
/// than a recompute of the model it started from. The guard counts work instead of
/// reading the clock so that the same program, facts and batch give the same choice and
/// the same report on any machine and in any run.
///
/// A ninth, as when the guard read the clock: with [`Counted`]'s weights, an update's
/// share of a recompute's counted work follows its share of the time on the benchmarks'
/// workloads that check support or over-delete (`DRED_GUARD_CALIBRATE=1 cargo run
/// --release -p dred-benches --bin guard`); closures kept by reachability count less than
/// their time, as the graph's search is not counted, but their updates stay far under the
/// budget. A tenth left the update closest to the bound too little headroom
/// (`BENCHMARKS.md`, *Design measurements*, "The guard's share").
const GUARD_SHARE: u64 = 9;

/// When [`Strategy::Auto`] gives up on an update.
struct Guard {
    /// The units a recompute is expected to count.
    recompute: u64,
    /// The units the update may count.
    budget: u64,
    /// See [`Guard::taper`].
    taper: (u64, u64),
}

impl Guard {
    /// The guard of an update whose net deletion is `deleted` of `inputs` input facts.
    fn new<P: Program>(program: &P, deleted: usize, inputs: usize) -> Self {
        let recompute = recompute_estimate(program);
        let taper = Self::taper(deleted, inputs);
        let budget = u128::from(recompute) * u128::from(taper.0)
            / (u128::from(taper.1) * u128::from(GUARD_SHARE));
        Guard {
            recompute,
            budget: u64::try_from(budget).unwrap_or(u64::MAX),
            taper,
        }
    }

    /// The share of the budget an update keeps, as a fraction: 1 for a deletion of
    /// nothing, falling linearly to 0 at 1/[`RECOMPUTE_SHARE`] of the inputs, where
    /// [`Strategy::Auto`] recomputes outright (so its cost does not jump there). The budget
    /// is a share of what a recompute of *today's* model costs, but a give-up is followed
    /// by a recompute of what the deletion leaves, and the larger a deletion, the more it
    /// tends to take away, so that with the whole budget a large update that gave up cost
    /// far more than the recompute after it (`BENCHMARKS.md`, *Design measurements*, "The
    /// guard's taper").
    fn taper(deleted: usize, inputs: usize) -> (u64, u64) {
        let inputs = inputs.max(1) as u64;
        let share = (deleted as u64).saturating_mul(RECOMPUTE_SHARE as u64);
        (inputs.saturating_sub(share), inputs)
    }

    /// The budget the guarded joins count against.
    fn work(&self) -> Work {
        Work::limited(self.budget)
    }

    /// Why the update gave up.
    fn reason(&self) -> Reason {
        Reason::GuardReached {
            budget: self.budget,
            recompute: self.recompute,
            share: GUARD_SHARE as u32,
            taper: self.taper.0 as f64 / self.taper.1 as f64,
        }
    }
}

/// Past this clock value, an update first renumbers the rounds that stamp facts
/// ([`renumber_rounds`]), and if that leaves the clock past it, [`Strategy::Auto`]
/// rematerializes to restart the clock (stamps saturate rather than wrap, so an exhausted
/// clock only weakens them).
const CLOCK_LIMIT: Stamp = Stamp::MAX / 2;

/// Applies one update batch with DRed and reports every round.
pub fn update<P: Program>(
    program: &mut P,
    batch: Batch<P::Facts>,
    trace: Trace,
) -> UpdateReport<P::Facts> {
    update_using(program, batch, Strategy::DRed, trace)
}

/// Applies one update batch with `strategy` and reports what it did.
///
/// Panics if `program` is poisoned ([`crate::poison`]). If a column type's method panics
/// during the update, the panic goes on to the caller and leaves `program` either as it
/// was or poisoned.
pub fn update_using<P: Program>(
    program: &mut P,
    batch: Batch<P::Facts>,
    strategy: Strategy,
    trace: Trace,
) -> UpdateReport<P::Facts> {
    program.bookkeeping().assert_usable();
    let report = apply(program, batch, strategy, trace);
    program.bookkeeping_mut().unfinished = None;
    // Strings the update took the last facts of are dropped once there are many.
    program.bookkeeping().symbols.purge_if_grown();
    report
}

/// [`update_using`]'s update itself: normalize the batch, then run `strategy`.
fn apply<P: Program>(
    program: &mut P,
    batch: Batch<P::Facts>,
    strategy: Strategy,
    trace: Trace,
) -> UpdateReport<P::Facts> {
    let Batch {
        mut deletions,
        mut insertions,
        symbols: _,
    } = batch;
    // Delete first, then insert: D⁻ = (I ∩ deletions) \ insertions, A⁺ = insertions \ I.
    program.retain_held(&mut deletions, true);
    deletions.subtract(&insertions);
    program.retain_held(&mut insertions, false);
    // Nothing has changed yet; from here on, an unwinding update leaves this mark.
    program.bookkeeping_mut().unfinished = Some(Unfinished {
        operation: Operation::Update(strategy),
        deletions: deletions.clone(),
        insertions: insertions.clone(),
        inputs_before: program.input_count(),
        rebuilding: None,
    });

    if program.bookkeeping().clock > CLOCK_LIMIT {
        renumber_rounds(program, CLOCK_LIMIT);
    }
    let requested = Account::requested(strategy);
    let mut report = match strategy {
        Strategy::DRed => dred(program, deletions, insertions, Work::unlimited(), trace)
            .unwrap_or_else(|_| unreachable!("no guard, no fallback")),
        Strategy::AltProof => {
            refresh_stamps(program);
            let unreachable = closure_losses(program, &deletions, usize::MAX).expect("no limit");
            alt_proof(
                program,
                deletions,
                insertions,
                unreachable,
                Work::unlimited(),
                trace,
            )
            .unwrap_or_else(|_| unreachable!("no guard, no fallback"))
        }
        Strategy::BackwardForward => {
            backward_forward(program, deletions, insertions, Work::unlimited(), trace)
                .unwrap_or_else(|_| unreachable!("no guard, no fallback"))
        }
        Strategy::Recompute => recompute(program, deletions, insertions, requested.clone(), trace),
        Strategy::Auto => return auto(program, deletions, insertions, trace),
    };
    report.account = requested;
    if report.net_delete.is_empty() && strategy != Strategy::Recompute {
        report.account.first_tried = None;
        report.account.reason = Reason::NothingDeleted;
    }
    report
}

/// [`Strategy::Auto`] on a normalized batch: see its doc.
fn auto<P: Program>(
    program: &mut P,
    deletions: P::Facts,
    insertions: P::Facts,
    trace: Trace,
) -> UpdateReport<P::Facts> {
    let account = |first_tried, reason| Account {
        requested: Strategy::Auto,
        first_tried,
        reason,
        abandoned: None,
    };
    if deletions.is_empty() {
        let empty = Work::unlimited();
        let mut report = dred(program, deletions, insertions, empty, trace)
            .unwrap_or_else(|_| unreachable!("nothing to delete, nothing to guard"));
        report.account = account(None, Reason::NothingDeleted);
        return report;
    }
    let inputs = program.input_count();
    if deletions.len() * RECOMPUTE_SHARE > inputs {
        let reason = Reason::LargeDeletion {
            deleted: deletions.len(),
            inputs,
            share: RECOMPUTE_SHARE,
        };
        return recompute(program, deletions, insertions, account(None, reason), trace);
    }
    if program.bookkeeping().clock > CLOCK_LIMIT {
        let reason = Reason::ClockExhausted;
        return recompute(program, deletions, insertions, account(None, reason), trace);
    }
    let guard = Guard::new(program, deletions.len(), inputs);
    let (chosen, reason) = incremental_choice(program.bookkeeping());
    let attempt = match chosen {
        Strategy::DRed => dred(program, deletions, insertions, guard.work(), trace),
        _ => {
            let facts = program.fact_count();
            let Some(unreachable) = closure_losses(program, &deletions, facts / UNREACHABLE_SHARE)
            else {
                let reason = Reason::LargeClosureLoss {
                    facts,
                    share: UNREACHABLE_SHARE as u32,
                };
                return recompute(program, deletions, insertions, account(None, reason), trace);
            };
            refresh_stamps(program);
            let work = guard.work();
            alt_proof(program, deletions, insertions, unreachable, work, trace)
        }
    };
    match attempt {
        Ok(mut report) => {
            report.account = account(Some(chosen), reason);
            report
        }
        Err(over) => {
            let mut gave_up = account(Some(chosen), guard.reason());
            gave_up.abandoned = Some(over.abandoned);
            recompute(program, over.deletions, over.insertions, gave_up, trace)
        }
    }
}

/// Unstamps every derived fact if some stamp may claim a support it no longer has
/// ([`Bookkeeping::stale_stamps`]), before the alternative proofs read them: one write per
/// fact, far less than a recompute.
fn refresh_stamps<P: Program>(program: &mut P) {
    if program.bookkeeping().stale_stamps {
        program.unstamp_derived();
        let bookkeeping = program.bookkeeping_mut();
        bookkeeping.stale_stamps = false;
        bookkeeping.weak_stamps = true;
    }
}

/// The work a rematerialization would count: the measure of one that
/// [`Bookkeeping::record_materialization`] kept, scaled to today's fact count (a row and a
/// fact's insertion per fact, if the program was never materialized from scratch).
fn recompute_estimate<P: Program>(program: &P) -> u64 {
    let facts = program.fact_count() as u64;
    let bookkeeping = program.bookkeeping();
    match bookkeeping.scratch_facts as u64 {
        0 => facts.saturating_mul(1 + Counted::FACT_UNITS),
        then => {
            let scaled =
                u128::from(bookkeeping.scratch_work) * u128::from(facts.max(1)) / u128::from(then);
            u64::try_from(scaled).unwrap_or(u64::MAX)
        }
    }
}

/// The seed's DRed, given the normalized batch. Gives the batch back as soon as `work`'s
/// budget is spent, as [`alt_proof`] does.
fn dred<P: Program>(
    program: &mut P,
    deletions: P::Facts,
    insertions: P::Facts,
    mut work: Work,
    trace: Trace,
) -> Result<UpdateReport<P::Facts>, OverBudget<P::Facts>> {
    let mut report = UpdateReport::new(deletions.clone(), P::Facts::default(), trace);
    if !deletions.is_empty() {
        let started = Instant::now();
        let overdeleted = overdelete_phase(
            program,
            deletions.clone(),
            &mut report.overdelete,
            trace,
            &mut work,
        );
        let Some(overdeleted) = overdeleted else {
            return Err(OverBudget::new(deletions, insertions, &report, None, &work));
        };
        report.overdelete.elapsed = started.elapsed();
        if rederive_lost(program, &mut report, overdeleted, None, &mut work).is_none() {
            return Err(OverBudget::new(deletions, insertions, &report, None, &work));
        }
    }
    Ok(finish_with_insertion(program, insertions, report, &work))
}

/// Ends an update whose deletion did `deletion`'s work: inserts `insertions`, settles the
/// relations and resamples the derivations if stale.
fn finish_with_insertion<P: Program>(
    program: &mut P,
    insertions: P::Facts,
    mut report: UpdateReport<P::Facts>,
    deletion: &Work,
) -> UpdateReport<P::Facts> {
    report.work = deletion.units();
    report.counted = deletion.counted();
    if !insertions.is_empty() {
        report.net_insert = insertions.clone();
        let started = Instant::now();
        let facts_before = program.fact_count();
        let mut work = Work::unlimited();
        insert_phase(
            program,
            insertions,
            &mut report.insert,
            report.trace,
            &mut work,
        );
        report.insert.elapsed = started.elapsed();
        report.work += work.units();
        report.counted += work.counted();
        // An insertion that built most of the model is as good a measure of a recompute's
        // cost as a materialization (and leaves the derivation sample stale, below).
        let facts = program.fact_count();
        if facts >= 2 * facts_before {
            program
                .bookkeeping_mut()
                .record_materialization(work.units(), facts);
        }
    }
    // Every strategy but a recompute ends here: retired facts past an eighth leave the
    // indexes (after the insertion, which revives in place those it brings back).
    program.settle();
    resample_if_stale(program, &report);
    report
}

/// Counts what an update (any strategy but a recompute, which samples anew) changed
/// against the derivation sample, and takes a new one once that is stale (see
/// [`DerivationSample`]): a few hundred lookups, once per eighth of the model changed. An
/// insertion that doubles the model always leaves it stale: of the half of the facts it
/// adds, either more than an eighth of the inputs are inputs, or the rest (at least 3/8 of
/// all) are derived.
fn resample_if_stale<P: Program>(program: &mut P, report: &UpdateReport<P::Facts>) {
    let inputs_changed = report.net_delete.len() + report.net_insert.len();
    // The insertion's first round is the inserted input facts.
    let derived_inserted = report
        .insert
        .total()
        .saturating_sub(report.net_insert.len());
    let inputs = program.input_count();
    let derived = program.fact_count() - inputs;
    let sample = &mut program.bookkeeping_mut().sample;
    sample.inputs_changed += inputs_changed as u64;
    sample.derived_changed += (report.overdeleted_derived.len + derived_inserted) as u64;
    if sample.stale(inputs, derived) {
        sample_derivations(program);
    }
}

/// Rebuilds a poisoned program ([`crate::poison`]) as it was before the update that
/// poisoned it, and returns what had poisoned it; does nothing to a program that is not
/// poisoned, and returns `None`.
///
/// The inputs from before the failed update are those held now with its changes undone;
/// the program is rematerialized from them, keeping its settings and its symbols. If the
/// input relations were damaged (their count does not come out as before), the program
/// stays poisoned and this returns [`Unrecoverable`]. A panic during the recovery itself
/// leaves the program poisoned as it was, and a later recovery may try again.
pub fn recover<P: Program>(program: &mut P) -> Result<Option<Poisoned>, Unrecoverable> {
    let Some(unfinished) = &program.bookkeeping().unfinished else {
        return Ok(None);
    };
    let poisoned = unfinished.poisoned();
    let mut inputs = match &unfinished.rebuilding {
        Some(inputs) => inputs.clone(),
        None => program.input_facts(),
    };
    inputs.subtract(&unfinished.insertions);
    inputs.union_with(&unfinished.deletions);
    if inputs.len() != unfinished.inputs_before {
        return Err(Unrecoverable {
            poisoned,
            expected: unfinished.inputs_before,
            found: inputs.len(),
        });
    }
    let bookkeeping = program.bookkeeping();
    let inputs = Batch {
        deletions: P::Facts::default(),
        insertions: inputs,
        symbols: bookkeeping.symbols.clone(),
    };
    // Built beside the poisoned program, which stays as it is until this succeeds.
    let empty = P::empty(bookkeeping.settings);
    *program = materialize_into(empty, inputs, Trace::Counts).0;
    Ok(Some(poisoned))
}

/// Builds a program from all its facts (inputs and derived) without checking them.
///
/// This is the seed's precondition: the derived facts must be *exactly* the least model of
/// the rules over the input facts. It is not verified here; call [`verify`] to check it
/// (at the cost of a full recomputation). Derived facts must not be taken from a different
/// program or an older input set: DRed's correctness rests on this precondition.
///
/// Every fact is [`UNSTAMPED`](crate::UNSTAMPED), which vouches for nothing: until they
/// are rederived, the alternative-proof strategy checks derived facts whenever one of
/// their instances loses a fact, and finds their support in input facts only.
pub fn from_facts_unchecked<P: Program>(facts: &P::Facts) -> P {
    from_facts_unchecked_with_settings(facts, Settings::default())
}

/// [`from_facts_unchecked`] into a program that runs with `settings`.
pub fn from_facts_unchecked_with_settings<P: Program>(facts: &P::Facts, settings: Settings) -> P {
    let mut program = P::empty(settings);
    program.bookkeeping_mut().weak_stamps = true;
    program.insert_facts(facts, crate::UNSTAMPED);
    program.finish_materialization();
    sample_derivations(&mut program);
    decide_reachability(&mut program);
    program
}

/// A disagreement between a program's derived facts and its least model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Derived facts the least model has and the program lacks.
    pub missing: Vec<GroundFact>,
    /// Derived facts the program holds that the least model does not.
    pub unfounded: Vec<GroundFact>,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |facts: &[GroundFact]| {
            facts
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        };
        write!(
            f,
            "the derived facts are not the least model: missing [{}], unfounded [{}]",
            list(&self.missing),
            list(&self.unfounded)
        )
    }
}

impl std::error::Error for Mismatch {}

/// Checks that `program`'s derived facts are exactly the least model over its input facts,
/// by recomputing it from scratch.
///
/// Panics if `program` is poisoned ([`crate::poison`]).
pub fn verify<P: Program>(program: &P) -> Result<(), Mismatch> {
    program.bookkeeping().assert_usable();
    let held = program.all_facts();
    let mut inputs = held.clone();
    inputs.subtract(&held.derived_part());
    let (fresh, _) = materialize::<P>(Batch::inserting(inputs), Trace::Counts);
    let mut missing = fresh.all_facts();
    missing.subtract(&held);
    let mut unfounded = held;
    unfounded.subtract(&fresh.all_facts());
    if missing.is_empty() && unfounded.is_empty() {
        Ok(())
    } else {
        Err(Mismatch {
            missing: missing.ground(),
            unfounded: unfounded.ground(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_chooses_dred_while_at_most_one_sampled_fact_in_64_has_a_second_derivation() {
        let choice = |facts, multiply_derived| {
            let bookkeeping = Bookkeeping::<()> {
                sample: DerivationSample {
                    facts,
                    multiply_derived,
                    ..DerivationSample::default()
                },
                ..Bookkeeping::default()
            };
            incremental_choice(&bookkeeping).0
        };
        assert_eq!(choice(256, 0), Strategy::DRed);
        assert_eq!(choice(256, 4), Strategy::DRed);
        assert_eq!(choice(256, 5), Strategy::AltProof);
        assert_eq!(choice(3, 0), Strategy::DRed);
        assert_eq!(choice(3, 1), Strategy::AltProof);
        // Nothing sampled (no derived facts): nothing says DRed would be cheap.
        assert_eq!(choice(0, 0), Strategy::AltProof);
    }

    #[test]
    fn the_guard_tapers_to_nothing_at_the_outright_recompute_share() {
        assert_eq!(Guard::taper(0, 1000), (1000, 1000));
        assert_eq!(Guard::taper(25, 1000), (500, 1000));
        assert_eq!(Guard::taper(1000 / RECOMPUTE_SHARE, 1000), (0, 1000));
        assert_eq!(Guard::taper(1000, 1000), (0, 1000));
        assert_eq!(Guard::taper(0, 0), (1, 1));
    }
}
