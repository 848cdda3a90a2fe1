//! The phases of an update, each a round loop of delta joins over the stored relations:
//! over-deletion, rederivation and insertion (DRed's), alternative proofs' loss of support
//! and closure losses, the recompute, and the witnesses of a round.

use super::*;

/// A normalized batch handed back when the guard stopped the update, with what the
/// attempt had done.
pub(super) struct OverBudget<F> {
    pub(super) deletions: F,
    pub(super) insertions: F,
    pub(super) abandoned: Abandoned,
}

impl<F: FactSets> OverBudget<F> {
    /// The batch, and what the attempt `report` records had done (with `checked`, the
    /// checks of a loss of support the report does not hold yet) in `work` rows.
    pub(super) fn new(
        deletions: F,
        insertions: F,
        report: &UpdateReport<F>,
        checked: Option<&Phase<F>>,
        work: &Work,
    ) -> Self {
        let abandoned = Abandoned {
            work: work.units(),
            rounds: report.overdelete.rounds.len(),
            taken_out: report.overdelete.total(),
            checked: checked.or(report.checked.as_ref()).map_or(0, Phase::total),
            rederived: report.rederived(),
        };
        OverBudget {
            deletions,
            insertions,
            abandoned,
        }
    }
}

/// [`Strategy::Auto`] rematerializes when the facts a deletion takes from closure
/// relations kept by reachability ([`Program::closure_losses`]) are more than
/// 1/`UNREACHABLE_SHARE` of all facts. Found from the graph, they cost little to find,
/// but each still leaves its relation and indexes, at about four times what a recompute
/// spends on a fact it keeps: at an eighth, a recompute would still cost about twice as
/// much. Memory sets the other bound: taking a batch of facts out needs about 40 bytes a
/// fact for a while (the set of them, and each index's sorted copy of their keys), so an
/// eighth of the facts can raise the resident set by a fifth (`BENCHMARKS.md`, *Design
/// measurements*, "Closure losses").
pub(super) const UNREACHABLE_SHARE: usize = 8;

/// The facts that deleting `deletions` takes from the closure relations, when `program`
/// keeps them by reachability ([`Bookkeeping::reachability`]); `None` if they are more than
/// `limit`.
pub(super) fn closure_losses<P: Program>(
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
pub(super) fn alt_proof<P: Program>(
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
            return Err(OverBudget::new(
                deletions,
                insertions,
                &report,
                Some(&checked),
                &work,
            ));
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
            return Err(OverBudget::new(deletions, insertions, &report, None, &work));
        }
    }
    Ok(finish_with_insertion(program, insertions, report, &work))
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
pub(super) fn unsupport_phase<P: Program>(
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
        work.touch(rising.len());
        for (fact, stamp) in rising.drain(..) {
            highest = highest.max(stamp);
            program.restamp(&fact, stamp);
        }
        std::mem::swap(&mut rose, &mut rose_now);
        rose.clear();
        candidates.clear();
        candidate_stamps.clear();
        parallel::fire(
            program,
            &losing,
            Admit::Held,
            &mut candidates,
            &mut candidate_stamps,
            work,
        );
        parallel::fire(
            program,
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
        work.touch(losing_count);
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

/// Rematerializes from the input facts after the batch; `account` says how the update
/// came to it. The report's insertion rounds and work are the new materialization's.
pub(super) fn recompute<P: Program>(
    program: &mut P,
    deletions: P::Facts,
    insertions: P::Facts,
    account: Account,
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
    // threshold to a freed block's size; `BENCHMARKS.md`, *Design measurements*,
    // "Recompute's room"). A relation that kept its facts dense hands its box
    // and array of stamps over (see `FactMap::reserve_like`).
    let mut unfinished = (program.bookkeeping_mut().unfinished.take())
        .expect("a recompute runs inside an update, which marks the program");
    let mut measured = program.bookkeeping().clone();
    let settings = measured.settings;
    // Until the new relations are built, the inputs live in the mark of the program left in
    // place of the old one, where a recovery finds them.
    unfinished.rebuilding = Some(inputs);
    let mut placeholder = P::empty(settings);
    placeholder.bookkeeping_mut().unfinished = Some(unfinished);
    let rooms = std::mem::replace(program, placeholder).into_rooms();
    let mut fresh = P::empty(settings);
    fresh.reserve_rooms(rooms);
    let inputs = (program.bookkeeping().unfinished.as_ref())
        .and_then(|unfinished| unfinished.rebuilding.as_ref())
        .expect("just set");
    let mut rebuilt = build(&mut fresh, inputs, trace);
    // The placeholder goes, and with it the inputs its mark held; the mark stays.
    let mut placeholder = std::mem::replace(program, fresh);
    let unfinished =
        (placeholder.bookkeeping_mut().unfinished.take()).map(|unfinished| Unfinished {
            rebuilding: None,
            ..unfinished
        });
    // The clock restarts; the guard's estimate is the recompute's own count.
    let now = program.bookkeeping().clone();
    measured.record_materialization(now.scratch_work, now.scratch_facts);
    measured.clock = now.clock;
    measured.sample = now.sample;
    measured.reachability = now.reachability;
    measured.stale_stamps = now.stale_stamps;
    measured.weak_stamps = now.weak_stamps;
    measured.unfinished = unfinished;
    *program.bookkeeping_mut() = measured;
    let mut report = UpdateReport::new(deletions, insertions, trace);
    report.strategy = Strategy::Recompute;
    report.account = account;
    report.insert = std::mem::take(&mut rebuilt.insert);
    report.insert.elapsed = started.elapsed();
    report.work = rebuilt.work;
    report.counted = rebuilt.counted;
    report
}

/// Advances the clock by one round ([`ROUND_GAP`] stamps) and returns that round's stamp.
pub(super) fn next_stamp<P: Program>(program: &mut P) -> Stamp {
    let bookkeeping = program.bookkeeping_mut();
    bookkeeping.clock = bookkeeping.clock.saturating_add(ROUND_GAP);
    bookkeeping.clock
}

/// Over-deletion: round 1 is D⁻; round r+1 holds the heads, not yet over-deleted, of rule
/// instances that hold in the *old* relations and use a fact of round r. Nothing is removed
/// until the phase ends. Returns the over-deleted derived facts, or `None`, having changed
/// nothing, once `work`'s budget is spent.
pub(super) fn overdelete_phase<P: Program>(
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
        parallel::fire(
            program,
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
        work.touch(frontier.len());
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

/// The round a report keeps of the derived facts a deletion took away (over-deleted, found
/// unsupported or unprovable): their facts only if `trace` keeps facts and there are some.
pub(super) fn derived_gone<F: FactSets>(lost: &F, trace: Trace) -> Round<F> {
    Round {
        len: lost.len(),
        facts: (trace != Trace::Counts && !lost.is_empty()).then(|| lost.clone()),
        witnesses: None,
    }
}

/// Records the derived facts an update `lost` (over-deleted, or found unsupported) in
/// `report`, and rederives them into its `rederive` phase (see [`rederive_phase`], which
/// `derivable_first` is handed to). `None` once `work`'s budget is spent.
pub(super) fn rederive_lost<P: Program>(
    program: &mut P,
    report: &mut UpdateReport<P::Facts>,
    lost: P::Facts,
    derivable_first: Option<P::Facts>,
    work: &mut Work,
) -> Option<()> {
    let trace = report.trace;
    report.overdeleted_derived = derived_gone(&lost, trace);
    if lost.is_empty() {
        return Some(());
    }
    let started = Instant::now();
    let mut rederive = Phase::default();
    // Kept when the budget runs out too: the rounds done are part of an abandoned
    // attempt's account.
    let finished = rederive_phase(program, lost, derivable_first, &mut rederive, trace, work);
    rederive.elapsed = started.elapsed();
    report.rederive = Some(rederive);
    finished.map(|_| ())
}

/// Rederivation: round 1 restores the over-deleted facts derivable from the survivors
/// (head-bound lookups, of the `derivable_first` facts only when given: the caller knows
/// no other is); round k+1 those derivable with a fact restored in round k (a delta join
/// admitting only still-missing over-deleted heads). A round's facts become evidence only
/// after the round. The last, empty round is recorded too. Returns the facts left pending
/// (withdrawn), or `None`, leaving the work unfinished, once `work`'s budget is spent.
pub(super) fn rederive_phase<P: Program>(
    program: &mut P,
    mut pending: P::Facts,
    derivable_first: Option<P::Facts>,
    phase: &mut Phase<P::Facts>,
    trace: Trace,
    work: &mut Work,
) -> Option<P::Facts> {
    let mut restored =
        parallel::derivable(program, derivable_first.as_ref().unwrap_or(&pending), work);
    if work.is_exhausted() {
        return None;
    }
    let mut restored_witnesses = witnesses(program, &restored, None, false, trace);
    while !restored.is_empty() {
        if work.exhausted() {
            return None;
        }
        let stamp = next_stamp(program);
        work.touch(restored.len());
        program.insert_facts(&restored, stamp);
        pending.subtract(&restored);
        let mut next = P::Facts::default();
        parallel::fire(
            program,
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
pub(super) fn insert_phase<P: Program>(
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
    work.touch(delta.len());
    program.insert_facts(&delta, stamp);
    let mut delta_witnesses = None;
    // A round's sets, once counted, hold the round after next if their room suits it
    // (`FactSets::recycle_for`): linear closures on the cycle and the chain derive their
    // facts in many rounds of steady size, whose sets were each allocated and grown anew
    // (`BENCHMARKS.md`, *Design measurements*, "Round sets").
    let mut spare = P::Facts::default();
    loop {
        let mut next = std::mem::take(&mut spare);
        // The new round's sets get room for the heads a sample of the round finds
        // (`parallel::fire_sized`; `BENCHMARKS.md`, *Design measurements*, "Round sets").
        parallel::fire_sized(program, &delta, &mut next, work);
        let next_witnesses = witnesses(program, &next, Some(&delta), false, trace);
        if let Some(mut done) = phase.record_or_return(delta, trace, delta_witnesses) {
            done.recycle_for(&next);
            spare = done;
        }
        if next.is_empty() {
            return;
        }
        let stamp = next_stamp(program);
        work.touch(next.len());
        program.insert_facts(&next, stamp);
        delta = next;
        delta_witnesses = next_witnesses;
    }
}

/// With [`Trace::Explained`], for each fact of a round just decided, an instance over the
/// current relations that derives it (using a fact of `trigger`, when given). Called before
/// the round's facts join the relations, so the instance is one the round could use.
pub(super) fn witnesses<P: Program>(
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
        let uses_trigger = |body: &[Fact<P>]| match trigger {
            None => true,
            Some(trigger) => body.iter().any(|b| trigger.contains_fact(b)),
        };
        let (rule, body) = least_instance(program, fact, uses_trigger)?;
        let cause = trigger.and_then(|trigger| body.iter().find(|b| trigger.contains_fact(b)));
        let cause = cause.cloned();
        Some((rule, body, cause))
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
