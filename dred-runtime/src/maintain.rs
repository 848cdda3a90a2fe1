//! The DRed driver: normalize → over-delete → rederive → insert, as delta joins over the
//! stored relations (no ground rule instance is ever stored).
//!
//! Invariant between calls: the program's relations hold exactly the least model of its
//! rules over its input facts. Every function here preserves it; only
//! [`from_facts_unchecked`] takes it on trust.

use std::time::{Duration, Instant};

use crate::batch::Batch;
use crate::program::{Admit, Bookkeeping, DerivationSample, Fact, FactSets, Program, Work};
use crate::relation::Stamp;
use crate::report::{Phase, Round, Trace, UpdateReport, Witness};
use crate::settings::Settings;
use crate::strategy::Strategy;
use crate::text::GroundFact;

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
    debug_assert_eq!(
        program.fact_count(),
        0,
        "materialized into an empty program"
    );
    let mut seeds = P::constant_facts();
    seeds.union_with(&inputs.insertions);
    let mut report = UpdateReport::new(P::Facts::default(), inputs.insertions, trace);
    let started = Instant::now();
    let mut work = Work::unlimited();
    insert_phase(&mut program, seeds, &mut report.insert, trace, &mut work);
    program.finish_materialization();
    report.insert.elapsed = started.elapsed();
    report.work = work.rows();
    let facts = program.fact_count();
    program.bookkeeping_mut().record_materialization(
        report.work,
        report.insert.elapsed.as_nanos() as u64,
        facts,
    );
    sample_derivations(&mut program);
    decide_reachability(&mut program);
    (program, report)
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
/// derived facts have a second derivation. Far from the suite's workloads on both sides:
/// of 256 sampled facts, same-generation on a tree has none with two (0.3% of its facts
/// have: the sibling pairs), the cycle with chords 29 (the chords' sources), the other
/// closures and Andersen from 96 (linear closure on the chain) to all 256.
const MULTIPLY_DERIVED_SHARE: u32 = 64;

/// The incremental strategy [`Strategy::Auto`] runs, and why.
fn incremental_choice(bookkeeping: &Bookkeeping) -> (Strategy, String) {
    let (sampled, multiply) = (
        bookkeeping.sample.facts,
        bookkeeping.sample.multiply_derived,
    );
    let seen = format!("{multiply} of {sampled} sampled derived facts have a second derivation");
    if sampled > 0 && multiply * MULTIPLY_DERIVED_SHARE <= sampled {
        (
            Strategy::DRed,
            format!("{seen}: at most 1/{MULTIPLY_DERIVED_SHARE}"),
        )
    } else {
        (
            Strategy::AltProof,
            format!("{seen}: more than 1/{MULTIPLY_DERIVED_SHARE}"),
        )
    }
}

/// [`Strategy::Auto`] rematerializes outright when the net deletion is more than
/// 1/`RECOMPUTE_SHARE` of the input facts.
const RECOMPUTE_SHARE: usize = 20;

/// [`Strategy::Auto`] stops and rematerializes once it has taken more than
/// 1/`GUARD_TIME_SHARE` of the time a rematerialization is expected to take (tapered by
/// the deletion's size, see [`Guard::taper`]). Its joins stop within
/// [`Work::CONSULT_EVERY`] rows of the deadline, so an update that gives up costs at most
/// about a ninth more than a recompute of the model it started from. A ninth, not a sixth:
/// the recompute after a give-up is of what the deletion leaves, which can be much less
/// (deleting 10 of the cycle's 1,100 edges takes away a quarter of its facts and a third of
/// a recompute's time), and the estimate is a first materialization's, which pays for fresh
/// memory that a recompute reuses and, on the cycle, took 36–43 ms against a recompute's
/// 29–31. Medians of pairs (`cargo run --release -p dred-benches --bin guard`):
/// - a sixth: Auto at 1.22× a recompute on the cycle's 10-edge deletion, 1.32× on
///   non-linear chain's, 1.24× on Andersen's, 1.22× on linear random's 100 (5 pairs);
/// - an eighth: 1.16×, 1.12×, 1.07×, 1.10× (5 pairs, in the same half hour as the sixth);
///   later, with a faster recompute and the same estimate, the cycle's 1- and 10-edge
///   deletions read 1.21× and 1.21× (9 pairs, with the shares below in the same half hour);
/// - a ninth: the cycle's 1.15–1.16× and 1.16–1.17× (two runs), no other row above 1.11×;
/// - a tenth: the cycle's 1.13× and 1.15×, but same-generation's 10 deletions (DRed,
///   0.09× a recompute) gave up in 2 pairs of 9.
///
/// What it costs: an update whose incremental work takes more than a ninth of a first
/// materialization gives up (non-linear closure on the random graph, 10 deletions:
/// alternative proofs take 48–52 ms, about a seventh). The budget is time, not rows: an
/// update's rows cost from one to two times a materialization's (a support check's row is
/// a lookup that misses the cache), so a share of the rows would bound nothing (Andersen,
/// 10 deletions: a fifth of the rows took a third of a recompute's time).
const GUARD_TIME_SHARE: u32 = 9;

/// Under this expected recompute time, or with none measured (a program loaded from its
/// facts), the guard counts rows instead, 1/`GUARD_SHARE` of a rematerialization's: timing
/// noise would decide otherwise, and a recompute that short costs little anyway.
const GUARD_MIN_TIME: Duration = Duration::from_millis(2);

/// See [`GUARD_MIN_TIME`].
const GUARD_SHARE: u64 = 5;

/// When [`Strategy::Auto`] gives up on an update.
struct Guard {
    started: Instant,
    budget: GuardBudget,
    /// See [`Guard::taper`].
    taper: f64,
}

enum GuardBudget {
    /// A share of a recompute's expected time.
    Time(Duration),
    /// A share of a recompute's expected rows, for recomputes too short to time.
    Rows(u64),
}

impl Guard {
    /// The guard of an update whose net deletion is `deleted` of `inputs` input facts.
    fn new<P: Program>(program: &P, deleted: usize, inputs: usize) -> Self {
        let (rows, time) = recompute_estimate(program);
        let taper = Self::taper(deleted, inputs);
        let budget = if time >= GUARD_MIN_TIME {
            GuardBudget::Time(time.mul_f64(taper) / GUARD_TIME_SHARE)
        } else {
            GuardBudget::Rows((rows as f64 * taper) as u64 / GUARD_SHARE)
        };
        Guard {
            started: Instant::now(),
            budget,
            taper,
        }
    }

    /// The share of the budget an update keeps: 1 for a deletion of nothing, falling
    /// linearly to 0 at 1/[`RECOMPUTE_SHARE`] of the inputs, where [`Strategy::Auto`]
    /// recomputes outright (so its cost does not jump there). The budget is a share of
    /// what a recompute of *today's* model costs, but a give-up is followed by a recompute
    /// of what the deletion leaves, and the larger a deletion, the more it tends to take
    /// away: deleting 100 of same-generation's 2,046 edges takes away 63% of its facts,
    /// and with the whole budget an update that gave up cost 1.39× the recompute after it,
    /// tapered 1.03× (median of 5 pairs, `DRED_GUARD_WORKLOAD=same-generation cargo run
    /// --release -p dred-benches --bin guard`; linear chain 1.37× → 1.07×, Andersen
    /// 1.25× → 1.12×, linear random 1.14× → 1.01×, all at 100 deletions).
    fn taper(deleted: usize, inputs: usize) -> f64 {
        let share = deleted as f64 * RECOMPUTE_SHARE as f64 / inputs.max(1) as f64;
        1.0 - share.min(1.0)
    }

    /// The budget the guarded joins count against.
    fn work(&self) -> Work {
        match self.budget {
            GuardBudget::Time(time) => Work::limited(u64::MAX, Some(self.started + time)),
            GuardBudget::Rows(rows) => Work::limited(rows, None),
        }
    }

    /// Why the update gave up, having run `strategy` and visited `spent` rows.
    fn why(&self, strategy: Strategy, spent: u64) -> String {
        let share = match self.budget {
            GuardBudget::Time(time) => {
                format!("{time:.1?}, 1/{GUARD_TIME_SHARE} of a recompute's time")
            }
            GuardBudget::Rows(rows) => format!("{rows} rows, 1/{GUARD_SHARE} of a recompute's"),
        };
        let budget = if self.taper < 1.0 {
            format!("{share} × {:.2} for the deletion's size", self.taper)
        } else {
            share
        };
        let name = match strategy {
            Strategy::DRed => "DRed",
            _ => "alternative proofs",
        };
        format!(
            "{name} passed the guard after {:.1?} and {spent} rows visited (budget: {budget})",
            self.started.elapsed()
        )
    }
}

/// Past this clock value, [`Strategy::Auto`] rematerializes to restart the clock (stamps
/// saturate rather than wrap, so an exhausted clock only weakens them).
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
pub fn update_using<P: Program>(
    program: &mut P,
    batch: Batch<P::Facts>,
    strategy: Strategy,
    trace: Trace,
) -> UpdateReport<P::Facts> {
    let Batch {
        mut deletions,
        mut insertions,
    } = batch;
    // Delete first, then insert: D⁻ = (I ∩ deletions) \ insertions, A⁺ = insertions \ I.
    program.retain_held(&mut deletions, true);
    deletions.subtract(&insertions);
    program.retain_held(&mut insertions, false);

    match strategy {
        Strategy::DRed => dred(program, deletions, insertions, Work::unlimited(), trace)
            .unwrap_or_else(|_| unreachable!("no guard, no fallback")),
        Strategy::AltProof => {
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
        Strategy::Recompute => recompute(program, deletions, insertions, None, trace),
        Strategy::Auto => {
            let inputs = program.input_count();
            if deletions.len() * RECOMPUTE_SHARE > inputs {
                let why = format!(
                    "the net deletion ({} facts) is more than 1/{RECOMPUTE_SHARE} of the {inputs} input facts",
                    deletions.len()
                );
                return recompute(program, deletions, insertions, Some(why), trace);
            }
            if program.bookkeeping().clock > CLOCK_LIMIT {
                let why = "the stamp clock is exhausted".to_string();
                return recompute(program, deletions, insertions, Some(why), trace);
            }
            let guard = Guard::new(program, deletions.len(), inputs);
            let (chosen, why) = incremental_choice(program.bookkeeping());
            let attempt = match chosen {
                Strategy::DRed => dred(program, deletions, insertions, guard.work(), trace),
                _ => {
                    let facts = program.fact_count();
                    let Some(unreachable) =
                        closure_losses(program, &deletions, facts / UNREACHABLE_SHARE)
                    else {
                        let why = format!(
                            "the deletion takes more than 1/{UNREACHABLE_SHARE} of the {facts} facts from closure relations"
                        );
                        return recompute(program, deletions, insertions, Some(why), trace);
                    };
                    let work = guard.work();
                    alt_proof(program, deletions, insertions, unreachable, work, trace)
                }
            };
            match attempt {
                Ok(mut report) => {
                    report.why = Some(why);
                    report
                }
                Err((deletions, insertions, spent)) => {
                    let why = guard.why(chosen, spent);
                    recompute(program, deletions, insertions, Some(why), trace)
                }
            }
        }
    }
}

/// The work (rows visited) and time a rematerialization would take: the measure of one
/// that [`Bookkeeping::record_materialization`] kept, scaled to today's fact count (twice
/// the facts, and no time, if the program was never materialized from scratch).
fn recompute_estimate<P: Program>(program: &P) -> (u64, Duration) {
    let facts = program.fact_count() as u64;
    let bookkeeping = program.bookkeeping();
    match bookkeeping.scratch_facts as u64 {
        0 => (2 * facts, Duration::ZERO),
        then => {
            let scale =
                |x: u64| (u128::from(x) * u128::from(facts.max(1)) / u128::from(then)) as u64;
            (
                scale(bookkeeping.scratch_work),
                Duration::from_nanos(scale(bookkeeping.scratch_nanos)),
            )
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
            return Err((deletions, insertions, work.rows()));
        };
        report.overdelete.elapsed = started.elapsed();
        if rederive_lost(program, &mut report, overdeleted, None, &mut work).is_none() {
            return Err((deletions, insertions, work.rows()));
        }
    }
    report.work = work.rows();
    Ok(finish_with_insertion(program, insertions, report))
}

fn finish_with_insertion<P: Program>(
    program: &mut P,
    insertions: P::Facts,
    mut report: UpdateReport<P::Facts>,
) -> UpdateReport<P::Facts> {
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
        report.work += work.rows();
        // An insertion that built most of the model is as good a measure of a recompute's
        // cost as a materialization (and leaves the derivation sample stale, below).
        let facts = program.fact_count();
        if facts >= 2 * facts_before {
            program.bookkeeping_mut().record_materialization(
                work.rows(),
                report.insert.elapsed.as_nanos() as u64,
                facts,
            );
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

/// A normalized batch handed back when the guard stopped the update, with the work done.
type OverBudget<F> = (F, F, u64);

/// [`Strategy::Auto`] rematerializes when the facts a deletion takes from closure
/// relations kept by reachability ([`Program::closure_losses`]) are more than
/// 1/`UNREACHABLE_SHARE` of all facts. Found from the graph, they cost little to find,
/// but each still leaves its relation and indexes: deleting 10 of the cycle's 1,100 edges
/// takes 240,802 of its 1,000,000 facts, which took alternative proofs 24.5 ms (most of it
/// taking them out of the indexes), against 20.1 ms for Auto's recompute of the rest
/// (`BENCHMARKS.md`): about 100 ns a fact lost against 26 ns a fact kept. At an eighth, a
/// recompute would still cost about twice as much. Memory sets the other bound: taking a
/// batch of facts out needs about 40 bytes a fact for a while (the set of them, and each
/// index's sorted copy of their keys), so an eighth of the facts can raise the resident
/// set by a fifth (the cycle's memory soak: 1.23× its materialization's peak, one
/// deletion taking 88,287 facts).
const UNREACHABLE_SHARE: usize = 8;

/// The facts that deleting `deletions` takes from the closure relations, when `program`
/// keeps them by reachability ([`Bookkeeping::reachability`]); `None` if they are more than
/// `limit`.
fn closure_losses<P: Program>(
    program: &P,
    deletions: &P::Facts,
    limit: usize,
) -> Option<Option<P::Facts>> {
    if !program.bookkeeping().reachability {
        return Some(None);
    }
    let mut lost = P::Facts::default();
    program
        .closure_losses(deletions, &mut lost, limit)
        .then_some(Some(lost))
}

/// The alternative-proof strategy, given the normalized batch and, for a program that
/// keeps its closure relations by reachability, the facts the deletion takes from them.
/// Gives the batch back as soon as `work`'s budget is spent; the input relations have then
/// lost at most the net deletion, and the derived ones are to be rebuilt.
fn alt_proof<P: Program>(
    program: &mut P,
    deletions: P::Facts,
    insertions: P::Facts,
    unreachable: Option<P::Facts>,
    mut work: Work,
    trace: Trace,
) -> Result<UpdateReport<P::Facts>, OverBudget<P::Facts>> {
    let mut report = UpdateReport::new(deletions.clone(), P::Facts::default(), trace);
    report.strategy = Strategy::AltProof;
    if !deletions.is_empty() {
        let started = Instant::now();
        let mut checked = Phase::default();
        let mut restamped = Phase::default();
        // The larger set takes in the smaller.
        let first_round = match unreachable {
            Some(lost) => {
                report.by_reachability = Some(Round {
                    len: lost.len(),
                    facts: (trace != Trace::Counts).then(|| lost.clone()),
                    witnesses: None,
                });
                let mut first_round = lost;
                first_round.union_with(&deletions);
                first_round
            }
            None => deletions.clone(),
        };
        let unsupported = unsupport_phase(
            program,
            first_round,
            &mut report.overdelete,
            &mut checked,
            &mut restamped,
            trace,
            &mut work,
        );
        let Some((unsupported, rose_twice)) = unsupported else {
            return Err((deletions, insertions, work.rows()));
        };
        checked.elapsed = started.elapsed();
        report.overdelete.elapsed = checked.elapsed;
        report.checked = Some(checked);
        report.restamped = Some(restamped);
        let rederived = rederive_lost(
            program,
            &mut report,
            unsupported,
            Some(rose_twice),
            &mut work,
        );
        if rederived.is_none() {
            return Err((deletions, insertions, work.rows()));
        }
    }
    report.work = work.rows();
    Ok(finish_with_insertion(program, insertions, report))
}

/// Loss of support: round 1 is `first_round`, D⁻ and the facts closure relations lost by
/// reachability (whose rules never join here, see [`Bookkeeping::reachability`]); in round
/// r+1 the heads of rule instances that use a fact of round r, and that may have counted
/// on it (see [`Admit::Held`]), are *checked*.
/// A fact with a supporting instance (body facts held and older than the fact: see
/// [`Program::check_support`]) is kept. One without, but with an instance at a higher
/// level, is kept by raising its stamp to that level, once per update (as a shortest-path
/// tree re-attaches a node one level down); the heads between its old and new stamps,
/// itself included, are checked in the next round. Any other fact loses support, makes up
/// round r+1, and is retired once its instances have been found, so later checks never
/// count on it; the indexes keep it, and rederivation revives it if it still has a proof
/// (see [`crate::Relation`]'s invariant). Returns the derived facts that lost support, and
/// those of them that had an instance when they lost it (the facts that rose twice: no
/// other can be derived from the facts that survive, as those were all held when it was
/// checked), or `None` once `work`'s budget is spent.
///
/// Why this is exact: every fact that loses its last proof is reached (as in DRed's
/// over-deletion), and every fact kept has a supporting instance of kept facts with
/// smaller stamps — whenever a body fact of that instance goes or rises past it, the fact
/// is checked again — so by induction on stamps it still has a proof. The unsupported
/// facts that still have one are restored by rederivation. Facts that only support each
/// other rise once each, then lose support. A closure relation kept by reachability is
/// exact by itself and depends on input facts only, so the induction holds for the others
/// with its facts counted as inputs.
#[allow(clippy::too_many_arguments)]
fn unsupport_phase<P: Program>(
    program: &mut P,
    first_round: P::Facts,
    unsupported: &mut Phase<P::Facts>,
    checked: &mut Phase<P::Facts>,
    restamped: &mut Phase<P::Facts>,
    trace: Trace,
    work: &mut Work,
) -> Option<(P::Facts, P::Facts)> {
    let mut gone = P::Facts::default();
    let mut raised = P::Facts::default();
    let mut rose_twice = P::Facts::default();
    let mut losing = first_round;
    let mut losing_witnesses = None;
    // The facts the last round raises: with their new stamps, and as the set the next
    // round fires from.
    let mut rising: Vec<(Fact<P>, Stamp)> = Vec::new();
    let mut rose = P::Facts::default();
    let mut rose_now = P::Facts::default();
    let mut highest: Stamp = 0;
    // The candidates of a round, and with their stamps as the joins that found them read
    // them. Rounds reuse the sets' room: they grow and shrink together, and a set grown
    // anew each round rehashed its facts once more on average.
    let mut candidates = P::Facts::default();
    let mut candidate_stamps = Vec::new();
    checked.record(P::Facts::default(), trace, None);
    restamped.record(P::Facts::default(), trace, None);
    loop {
        // Raise first, so that heads are compared at their new stamps: a fact that lost
        // support reaches the heads younger than it, and a risen fact those between its old
        // and new stamps (itself included): they may have counted on it, and can no more.
        for (fact, stamp) in rising.drain(..) {
            highest = highest.max(stamp);
            program.restamp(&fact, stamp);
        }
        std::mem::swap(&mut rose, &mut rose_now);
        rose.clear();
        candidates.clear();
        candidate_stamps.clear();
        program.fire(
            &losing,
            Admit::Held,
            &mut candidates,
            &mut candidate_stamps,
            work,
        );
        program.fire(
            &rose_now,
            Admit::Held,
            &mut candidates,
            &mut candidate_stamps,
            work,
        );
        if work.is_exhausted() {
            return None;
        }
        program.forget_risen();
        let found = candidates.len();
        candidates.subtract(&losing);
        if candidates.len() < found {
            candidate_stamps.retain(|(fact, _)| candidates.contains_fact(fact));
        }
        // Witnesses need the frontier's instances: find them for every candidate now.
        let candidate_witnesses = match trace {
            Trace::Explained => {
                let mut frontier = losing.clone();
                frontier.union_with(&rose_now);
                witnesses(program, &candidates, Some(&frontier), true, trace)
            }
            _ => None,
        };
        program.retire_facts(&losing);
        let losing_count = losing.len();
        // Untraced, a round is only counted, so the smaller of the two sets joins the
        // larger: same-generation's rounds grow fourfold, and its last was copied into
        // `gone` fact by fact.
        if trace == Trace::Counts && gone.len() < losing_count {
            std::mem::swap(&mut gone, &mut losing);
        }
        gone.union_with(&losing);
        let (mut next, levels) = program.check_support(&candidate_stamps, work);
        if work.is_exhausted() {
            return None;
        }
        for (fact, level) in levels {
            if raised.insert_fact(fact.clone()) {
                rose.insert_fact(fact.clone());
                rising.push((fact, level));
            } else {
                rose_twice.insert_fact(fact.clone());
                next.insert_fact(fact);
            }
        }
        let next_witnesses = candidate_witnesses.map(|all| {
            let mut kept = all;
            kept.retain(|w| next.contains_fact(&w.fact));
            kept
        });
        match trace {
            Trace::Counts => unsupported.record_count(losing_count),
            _ => unsupported.record(losing, trace, losing_witnesses),
        }
        if candidates.is_empty() {
            break;
        }
        checked.record_copy(&candidates, trace);
        restamped.record_copy(&rose, trace);
        if work.exhausted() {
            return None;
        }
        if next.is_empty() && rising.is_empty() {
            unsupported.record(next, trace, next_witnesses);
            break;
        }
        losing = next;
        losing_witnesses = next_witnesses;
    }
    // Later rounds must be younger than every raised fact.
    let clock = &mut program.bookkeeping_mut().clock;
    *clock = (*clock).max(highest);
    Some((gone.into_derived_part(), rose_twice))
}

/// Rematerializes from the input facts after the batch; `why` says why [`Strategy::Auto`]
/// chose it. The report's insertion rounds and work are the new materialization's.
fn recompute<P: Program>(
    program: &mut P,
    deletions: P::Facts,
    insertions: P::Facts,
    why: Option<String>,
    trace: Trace,
) -> UpdateReport<P::Facts> {
    let started = Instant::now();
    let mut inputs = program.input_facts();
    inputs.subtract(&deletions);
    inputs.union_with(&insertions);
    // The old relations go before the new ones are built, so that a recompute's peak
    // memory is one materialization's, not two. The new ones get the old ones' sizes at
    // once: grown by doubling after the old tables were freed, a whole fact table (see
    // `fact_map`) left the allocator's heap a table larger for good (glibc raises its mmap
    // threshold to a freed block's size; Andersen, 10 pairs of a 1-fact deletion and its
    // re-insertion, a recompute among them: peak 1.29× the materialization's, reserved
    // 1.09×; `peak_memory dred 6 10`). A relation that kept its facts dense hands its box
    // and array of stamps over (see `FactMap::reserve_like`).
    let mut measured = *program.bookkeeping();
    let settings = measured.settings;
    let rooms = std::mem::replace(program, P::empty(settings)).into_rooms();
    let mut empty = P::empty(settings);
    empty.reserve_rooms(rooms);
    let (fresh, mut rebuilt) = materialize_into(empty, Batch::inserting(inputs), trace);
    *program = fresh;
    // The clock restarts; the guard's estimate is the better of the two measures.
    let now = *program.bookkeeping();
    measured.record_materialization(now.scratch_work, now.scratch_nanos, now.scratch_facts);
    measured.clock = now.clock;
    measured.sample = now.sample;
    measured.reachability = now.reachability;
    *program.bookkeeping_mut() = measured;
    let mut report = UpdateReport::new(deletions, insertions, trace);
    report.strategy = Strategy::Recompute;
    report.why = why;
    report.insert = std::mem::take(&mut rebuilt.insert);
    report.insert.elapsed = started.elapsed();
    report.work = rebuilt.work;
    report
}

/// Advances the clock by one round and returns that round's stamp.
fn next_stamp<P: Program>(program: &mut P) -> Stamp {
    let bookkeeping = program.bookkeeping_mut();
    bookkeeping.clock = bookkeeping.clock.saturating_add(1);
    bookkeeping.clock
}

/// Over-deletion: round 1 is D⁻; round r+1 holds the heads, not yet over-deleted, of rule
/// instances that hold in the *old* relations and use a fact of round r. Nothing is removed
/// until the phase ends. Returns the over-deleted derived facts, or `None`, having changed
/// nothing, once `work`'s budget is spent.
fn overdelete_phase<P: Program>(
    program: &mut P,
    net_delete: P::Facts,
    phase: &mut Phase<P::Facts>,
    trace: Trace,
    work: &mut Work,
) -> Option<P::Facts> {
    let mut overdeleted = net_delete.clone();
    let mut frontier = net_delete;
    let mut frontier_witnesses = None;
    loop {
        let mut next = P::Facts::default();
        program.fire(
            &frontier,
            Admit::NotIn(&overdeleted),
            &mut next,
            &mut Vec::new(),
            work,
        );
        if work.is_exhausted() {
            return None;
        }
        let next_witnesses = witnesses(program, &next, Some(&frontier), true, trace);
        phase.record(frontier, trace, frontier_witnesses);
        if next.is_empty() {
            break;
        }
        overdeleted.union_with(&next);
        frontier = next;
        frontier_witnesses = next_witnesses;
    }
    program.remove_facts(&overdeleted);
    Some(overdeleted.into_derived_part())
}

/// Records the derived facts an update `lost` (over-deleted, or found unsupported) in
/// `report`, and rederives them into its `rederive` phase (see [`rederive_phase`], which
/// `derivable_first` is handed to). `None` once `work`'s budget is spent.
fn rederive_lost<P: Program>(
    program: &mut P,
    report: &mut UpdateReport<P::Facts>,
    lost: P::Facts,
    derivable_first: Option<P::Facts>,
    work: &mut Work,
) -> Option<()> {
    let trace = report.trace;
    report.overdeleted_derived = Round {
        len: lost.len(),
        facts: (trace != Trace::Counts && !lost.is_empty()).then(|| lost.clone()),
        witnesses: None,
    };
    if lost.is_empty() {
        return Some(());
    }
    let started = Instant::now();
    let mut rederive = Phase::default();
    rederive_phase(program, lost, derivable_first, &mut rederive, trace, work)?;
    rederive.elapsed = started.elapsed();
    report.rederive = Some(rederive);
    Some(())
}

/// Rederivation: round 1 restores the over-deleted facts derivable from the survivors
/// (head-bound lookups, of the `derivable_first` facts only when given: the caller knows
/// no other is); round k+1 those derivable with a fact restored in round k (a delta join
/// admitting only still-missing over-deleted heads). A round's facts become evidence only
/// after the round. The last, empty round is recorded too. Returns the facts left pending
/// (withdrawn), or `None`, leaving the work unfinished, once `work`'s budget is spent.
fn rederive_phase<P: Program>(
    program: &mut P,
    mut pending: P::Facts,
    derivable_first: Option<P::Facts>,
    phase: &mut Phase<P::Facts>,
    trace: Trace,
    work: &mut Work,
) -> Option<P::Facts> {
    let mut restored = program.derivable(derivable_first.as_ref().unwrap_or(&pending), work);
    if work.is_exhausted() {
        return None;
    }
    let mut restored_witnesses = witnesses(program, &restored, None, false, trace);
    while !restored.is_empty() {
        if work.exhausted() {
            return None;
        }
        let stamp = next_stamp(program);
        program.insert_facts(&restored, stamp);
        pending.subtract(&restored);
        let mut next = P::Facts::default();
        program.fire(
            &restored,
            Admit::In(&pending),
            &mut next,
            &mut Vec::new(),
            work,
        );
        if work.is_exhausted() {
            return None;
        }
        let next_witnesses = witnesses(program, &next, None, false, trace);
        phase.record(restored, trace, restored_witnesses);
        restored = next;
        restored_witnesses = next_witnesses;
    }
    phase.record(restored, trace, restored_witnesses);
    Some(pending)
}

/// Semi-naive insertion: `delta` is round 1; each next round is the heads not yet held of
/// instances using a fact of the previous round.
fn insert_phase<P: Program>(
    program: &mut P,
    mut delta: P::Facts,
    phase: &mut Phase<P::Facts>,
    trace: Trace,
    work: &mut Work,
) {
    if delta.is_empty() {
        return;
    }
    let stamp = next_stamp(program);
    program.insert_facts(&delta, stamp);
    let mut delta_witnesses = None;
    // A round's sets, once counted, hold the round after next if their room suits it
    // (`FactSets::recycle_for`): linear closures on the cycle and the chain derive their
    // facts in many rounds of steady size, whose sets were each allocated and grown anew
    // (cycle, recompute after 1 deletion: 33.3 → 27.9 ms; linear chain 108 → 102 ms,
    // medians, `profile_update 4 recompute 1 20`, `profile_update 3 recompute 1 10`).
    let mut spare = P::Facts::default();
    loop {
        let mut next = std::mem::take(&mut spare);
        // Half the last round's size: consecutive rounds are alike, so the new round's sets
        // skip most of their doublings (linear chain from scratch: -4.6% instructions); the
        // last round's whole size would hold oversized tables when rounds shrink, at the
        // memory peak (non-linear and linear random: +7.5% peak).
        next.reserve_half_of(&delta);
        program.fire(&delta, Admit::Absent, &mut next, &mut Vec::new(), work);
        let next_witnesses = witnesses(program, &next, Some(&delta), false, trace);
        if let Some(mut done) = phase.record_or_return(delta, trace, delta_witnesses) {
            done.recycle_for(&next);
            spare = done;
        }
        if next.is_empty() {
            return;
        }
        let stamp = next_stamp(program);
        program.insert_facts(&next, stamp);
        delta = next;
        delta_witnesses = next_witnesses;
    }
}

/// With [`Trace::Explained`], for each fact of a round just decided, an instance over the
/// current relations that derives it (using a fact of `trigger`, when given). Called before
/// the round's facts join the relations, so the instance is one the round could use.
fn witnesses<P: Program>(
    program: &P,
    round: &P::Facts,
    trigger: Option<&P::Facts>,
    name_trigger: bool,
    trace: Trace,
) -> Option<Vec<Witness<Fact<P>>>> {
    if trace != Trace::Explained {
        return None;
    }
    let find = |fact: &Fact<P>, trigger: Option<&P::Facts>| {
        let mut found = None;
        program.instances(fact, &mut |rule, body| {
            let cause = match trigger {
                None => None,
                Some(trigger) => match body.iter().find(|b| trigger.contains_fact(b)) {
                    Some(cause) => Some(cause.clone()),
                    None => return false,
                },
            };
            found = Some((rule, body.to_vec(), cause));
            true
        });
        found
    };
    let explain = |fact: Fact<P>| {
        let (rule, body, cause) =
            find(&fact, trigger).expect("a round's fact has an instance that put it there");
        Witness {
            fact,
            rule,
            body,
            pulled_in_by: cause.filter(|_| name_trigger),
        }
    };
    Some(round.to_vec().into_iter().map(explain).collect())
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
pub fn verify<P: Program>(program: &P) -> Result<(), Mismatch> {
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
            let bookkeeping = Bookkeeping {
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
        assert_eq!(Guard::taper(0, 1000), 1.0);
        assert_eq!(Guard::taper(25, 1000), 0.5);
        assert_eq!(Guard::taper(1000 / RECOMPUTE_SHARE, 1000), 0.0);
        assert_eq!(Guard::taper(1000, 1000), 0.0);
        assert_eq!(Guard::taper(0, 0), 1.0);
    }
}
