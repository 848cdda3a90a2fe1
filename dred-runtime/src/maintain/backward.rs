//! Backward/forward proofs ([`Strategy::BackwardForward`]): a fact a deletion reaches is
//! kept only if a backward search finds it a proof from the input facts that stay.
//!
//! The searches of one update share what they learn ([`Proofs`]): a fact once *proved*
//! stays (its proof uses input facts that stay and proved facts only), and a fact once
//! *disproved* has no proof left (the facts that may prove anything only shrink as the
//! update deletes). So the deletion is exact without rederivation, and its cost follows
//! the facts it takes away and the proofs found for those it reaches, not the rounds in
//! which they were derived.
//!
//! Candidates and stamps: a round's candidates are the heads that may have counted on a
//! fact of the round before ([`Admit::Held`]), as for the alternative proofs. A candidate
//! that still has a support (see [`Stamp`]'s invariant) is kept as it is, without a search
//! (see [`supported_apart`]); the others are searched. One kept on a proof without a
//! support at its stamp rises to the lowest level where it has one, as the alternative
//! proofs raise a fact, and the heads that counted on it at its old stamp are candidates
//! in the next round: so the invariant holds at the end, for this strategy's next update
//! and for the others'. A fact with no level left in the clock's reach (an instance's body
//! fact stamped `Stamp::MAX`) is stamped `Stamp::MAX`: it claims no support, so it is a
//! candidate whenever any of its body facts goes, and the alternative proofs, which count
//! on a fact's stamp wherever it is older, unstamp every derived fact before they next run
//! ([`Bookkeeping::stale_stamps`]). After [`crate::maintain::from_facts_unchecked`],
//! unstamped facts vouch for nothing ([`Bookkeeping::weak_stamps`]), and every candidate
//! is searched.

use super::*;
use crate::relation::claims_support;

/// The room (in facts) up to which a search's tables are cleared for the next search
/// rather than dropped.
const SMALL_TABLE: usize = 32;

/// What the searches of one update know, each set growing only; see the module's doc.
pub(super) struct Proofs<P: Program> {
    /// Facts with a proof from the input facts that stay, through proved facts.
    proved: P::Facts,
    /// Facts without one.
    disproved: P::Facts,
    /// The facts the search under way has opened: proved since, or not (yet).
    opened: P::Facts,
    /// The opened facts whose instances the search is still going through, innermost last.
    stack: Vec<Frame<Fact<P>>>,
    /// The search's instances that wait for body facts to be proved: their heads, and how
    /// many distinct body facts each still waits for.
    waiting: Vec<(Fact<P>, usize)>,
    /// For each opened fact not proved, the waiting instances it is a body fact of.
    waiters: ahash::AHashMap<Fact<P>, Vec<usize>>,
}

/// A fact the search has opened, with the instances it is going through.
struct Frame<F> {
    fact: F,
    /// The derived body facts of the fact's instances, one instance after another (input
    /// facts are left out: those that hold stay during a deletion).
    bodies: Vec<F>,
    /// Each instance's body facts in `bodies`, lowest level first (one more than the largest
    /// stamp of its body facts, as [`Program::check_support`] reads it): the instance that
    /// supported the fact before the deletion, if it still holds, comes first, and its
    /// body facts are older, so the search goes down towards the input facts.
    instances: Vec<(u64, std::ops::Range<usize>)>,
    /// The instance looked at.
    instance: usize,
    /// The body fact looked at next, counted from the instance's first.
    at: usize,
}

impl<P: Program> Proofs<P> {
    pub(super) fn new() -> Self {
        Proofs {
            proved: P::Facts::default(),
            disproved: P::Facts::default(),
            opened: P::Facts::default(),
            stack: Vec::new(),
            waiting: Vec::new(),
            waiters: ahash::AHashMap::default(),
        }
    }

    /// Whether `fact`, a derived fact that holds, has a proof over the facts that hold
    /// (searching for one if no search has decided it yet), or `None` once `work`'s budget
    /// is spent.
    ///
    /// The search opens `fact`, then each body fact of each of its instances in turn,
    /// depth first, and proves a fact when one of its instances has only proved body facts.
    /// An instance that waits for body facts opened but not yet proved is remembered with
    /// them, and each proof is carried forward to the instances that wait for it
    /// ([`Proofs::establish`]): that is how a fact held up by a cycle through itself gets
    /// proved. A body fact already opened is not searched again, and an instance with a
    /// disproved fact is dropped. The search stops as soon as `fact` is proved; the facts
    /// it opened and left unproved are then left undecided. If it runs to the end, every
    /// fact it opened and did not prove has, in each of its instances, a body fact that is
    /// disproved or opened and not proved, while no instance of proved body facts waits:
    /// those facts have no proof, and are disproved.
    pub(super) fn prove(&mut self, program: &P, fact: &Fact<P>, work: &mut Work) -> Option<bool> {
        if self.proved.contains_fact(fact) {
            return Some(true);
        }
        if self.disproved.contains_fact(fact) {
            return Some(false);
        }
        self.open(program, fact.clone(), work);
        while let Some(frame) = self.stack.last_mut() {
            if work.exhausted() {
                return None;
            }
            if frame.instance == frame.instances.len() || self.proved.contains_fact(&frame.fact) {
                self.stack.pop();
                continue;
            }
            let (_, range) = frame.instances[frame.instance].clone();
            let at = range.start + frame.at;
            if at == range.end {
                frame.instance += 1;
                frame.at = 0;
                work.visit(range.len() as u64);
                let mut unproved: Vec<Fact<P>> = frame.bodies[range]
                    .iter()
                    .filter(|body| !self.proved.contains_fact(body))
                    .cloned()
                    .collect();
                if unproved.is_empty() {
                    let proved = self.stack.pop().expect("looked at").fact;
                    self.establish(proved);
                    if self.proved.contains_fact(fact) {
                        break;
                    }
                } else {
                    unproved.sort_unstable();
                    unproved.dedup();
                    let id = self.waiting.len();
                    self.waiting.push((frame.fact.clone(), unproved.len()));
                    for body in unproved {
                        self.waiters.entry(body).or_default().push(id);
                    }
                }
                continue;
            }
            let body = &frame.bodies[at];
            frame.at += 1;
            work.lookup();
            if self.disproved.contains_fact(body) {
                frame.instance += 1;
                frame.at = 0;
            } else if !self.opened.contains_fact(body) && !self.proved.contains_fact(body) {
                let body = body.clone();
                self.open(program, body, work);
                if self.proved.contains_fact(fact) {
                    break;
                }
            }
        }
        if work.is_exhausted() {
            return None;
        }
        let proved = self.proved.contains_fact(fact);
        let mut unproved = std::mem::take(&mut self.opened);
        if !proved {
            unproved.subtract(&self.proved);
            self.disproved.union_with(&unproved);
        }
        // Most searches open a few facts, after some opened many: clearing a large table
        // writes all of its buckets, so one is dropped rather than cleared.
        unproved.recycle_for(&P::Facts::default());
        self.opened = unproved;
        self.stack.clear();
        self.waiting.clear();
        if self.waiters.capacity() > SMALL_TABLE {
            self.waiters = ahash::AHashMap::default();
        } else {
            self.waiters.clear();
        }
        Some(proved)
    }

    /// Opens `fact`: proves it at once if an instance has only proved body facts, or else
    /// pushes its frame with the instances that have no disproved body fact (none if it
    /// has none: it stays unproved).
    fn open(&mut self, program: &P, fact: Fact<P>, work: &mut Work) {
        self.opened.insert_fact(fact.clone());
        let (proved, disproved) = (&self.proved, &self.disproved);
        let mut bodies = Vec::new();
        let mut instances = Vec::new();
        let proved_now = program.instances(&fact, &mut |_, body| {
            work.visit(1 + body.len() as u64);
            let start = bodies.len();
            let mut all_proved = true;
            let mut level = 0u64;
            for body_fact in body.iter().filter(|fact| !P::is_input(fact)) {
                if disproved.contains_fact(body_fact) {
                    bodies.truncate(start);
                    return false;
                }
                if !proved.contains_fact(body_fact) {
                    all_proved = false;
                    let stamp = program.stamp(body_fact).unwrap_or(Stamp::MAX);
                    level = level.max(u64::from(stamp) + 1);
                }
                bodies.push(body_fact.clone());
            }
            if !all_proved {
                instances.push((level, start..bodies.len()));
            }
            all_proved
        });
        if proved_now {
            self.establish(fact);
        } else if !instances.is_empty() {
            instances.sort_by_key(|(level, _)| *level);
            self.stack.push(Frame {
                fact,
                bodies,
                instances,
                instance: 0,
                at: 0,
            });
        }
    }

    /// Proves `fact`, then, forward, every head of a waiting instance that no longer waits
    /// for anything, until no more is.
    fn establish(&mut self, fact: Fact<P>) {
        let mut proved_now = vec![fact];
        while let Some(fact) = proved_now.pop() {
            if !self.proved.insert_fact(fact.clone()) {
                continue;
            }
            for id in self.waiters.remove(&fact).unwrap_or_default() {
                let (head, waits) = &mut self.waiting[id];
                *waits -= 1;
                if *waits == 0 {
                    proved_now.push(head.clone());
                }
            }
        }
    }
}

/// The deletion of [`Strategy::BackwardForward`]: round 1 is D⁻; round r+1 is the facts,
/// among the heads of rule instances that use a fact of round r, that have no proof left
/// ([`Proofs::prove`]); the candidates are recorded in `checked`. A round's facts are
/// retired once their instances have been found. Returns the derived facts deleted (and
/// marks the stamps stale if a kept candidate lost its support: see the module's doc), or
/// `None` once `work`'s budget is spent.
pub(super) fn unprovable_phase<P: Program>(
    program: &mut P,
    deletions: P::Facts,
    deleted: &mut Phase<P::Facts>,
    checked: &mut Phase<P::Facts>,
    trace: Trace,
    work: &mut Work,
) -> Option<P::Facts> {
    let mut proofs = Proofs::<P>::new();
    let mut gone = P::Facts::default();
    let mut raised = P::Facts::default();
    let mut losing = deletions;
    let mut losing_witnesses = None;
    let mut disclaimed = P::Facts::default();
    checked.record(P::Facts::default(), trace, None);
    // Closure relations kept by reachability do not join under `Admit::Held`.
    let by_stamps = !program.bookkeeping().reachability;
    let trust_supports = by_stamps && !program.bookkeeping().weak_stamps;
    let mut stamped = Vec::new();
    loop {
        let mut candidates = P::Facts::default();
        let admit = match by_stamps {
            true => Admit::Held,
            false => Admit::NotIn(&gone),
        };
        stamped.clear();
        parallel::fire(program, &losing, admit, &mut candidates, &mut stamped, work);
        parallel::fire(
            program,
            &disclaimed,
            admit,
            &mut candidates,
            &mut stamped,
            work,
        );
        program.forget_risen();
        if work.is_exhausted() {
            return None;
        }
        candidates.subtract(&losing);
        let candidate_witnesses = (trace == Trace::Explained).then(|| {
            let mut frontier = losing.clone();
            frontier.union_with(&disclaimed);
            witnesses(program, &candidates, Some(&frontier), true, trace)
        });
        let candidate_witnesses = candidate_witnesses.flatten();
        program.retire_facts(&losing);
        work.touch(losing.len());
        gone.union_with(&losing);
        deleted.record(losing, trace, losing_witnesses);
        if candidates.is_empty() {
            break;
        }
        let mut next = P::Facts::default();
        let mut proved = P::Facts::default();
        let to_search = match trust_supports {
            true => {
                stamped.retain(|(fact, _)| candidates.contains_fact(fact));
                supported_apart(program, &mut stamped, work)
            }
            false => candidates.to_vec(),
        };
        for fact in to_search {
            if proofs.prove(program, &fact, work)? {
                proved.insert_fact(fact);
            } else {
                next.insert_fact(fact);
            }
        }
        // Those kept on a proof without a support at their stamps rise to the lowest level
        // where they have one (or stop claiming any); the heads that counted on them at
        // their old stamps are candidates in the next round.
        disclaimed = raise_unsupported(program, &proved, &mut raised, work);
        if work.is_exhausted() {
            return None;
        }
        checked.record_copy(&candidates, trace);
        let next_witnesses = candidate_witnesses.map(|mut all| {
            all.retain(|w| next.contains_fact(&w.fact));
            all
        });
        if next.is_empty() && disclaimed.is_empty() {
            deleted.record(next, trace, next_witnesses);
            break;
        }
        losing = next;
        losing_witnesses = next_witnesses;
    }
    Some(gone.into_derived_part())
}

/// The candidates of `stamped` (held, with their stamps) that have no support left at
/// their stamps, or claim none: those to search a proof for. The others are kept as they
/// are, without a proof: their supports' body facts may be candidates still, and later
/// searches do not count on them. But whenever one of those goes, or stops claiming a
/// support, the fact is a candidate again, as it counted on it; so a fact kept at the end
/// has a support of kept facts with smaller stamps that claim one: by induction on stamps,
/// a proof.
fn supported_apart<P: Program>(
    program: &P,
    stamped: &mut Vec<(Fact<P>, Stamp)>,
    work: &mut Work,
) -> Vec<Fact<P>> {
    let mut to_search = Vec::new();
    stamped.retain(|(fact, stamp)| {
        claims_support(*stamp) || {
            to_search.push(fact.clone());
            false
        }
    });
    let (unsupported, levels) = program.check_support(stamped, work);
    to_search.extend(unsupported.to_vec());
    to_search.extend(levels.into_iter().map(|(fact, _)| fact));
    to_search
}

/// Raises each fact of `proved` (held) that claims a support and has none at its stamp to
/// the lowest level of its instances, where it has one, or to `Stamp::MAX` if that is out
/// of the clock's reach (it then claims none, and the stamps are stale for the alternative
/// proofs: [`Bookkeeping::stale_stamps`]); returns the facts raised, and adds them to
/// `raised`, those this update has raised.
///
/// A fact that rises a second time in one update rises at least to the next round's
/// stamp (see [`ROUND_GAP`]). Two proved facts that derive each other, kept by proofs at
/// higher levels, would otherwise leapfrog one stamp at a time, one round of the phase
/// per step, across the gap between rounds before either reached its proof's level.
fn raise_unsupported<P: Program>(
    program: &mut P,
    proved: &P::Facts,
    raised: &mut P::Facts,
    work: &mut Work,
) -> P::Facts {
    let stamped: Vec<(Fact<P>, Stamp)> = proved
        .to_vec()
        .into_iter()
        .filter_map(|fact| program.stamp(&fact).map(|stamp| (fact, stamp)))
        .filter(|(_, stamp)| claims_support(*stamp))
        .collect();
    let (mut now, levels) = program.check_support(&stamped, work);
    if !now.is_empty() {
        program.bookkeeping_mut().stale_stamps = true;
    }
    for fact in now.to_vec() {
        program.restamp(&fact, Stamp::MAX);
    }
    let mut highest = 0;
    for (fact, level) in levels {
        let level = match raised.contains_fact(&fact) {
            true => (level.div_ceil(ROUND_GAP).checked_mul(ROUND_GAP)).unwrap_or(level),
            false => level,
        };
        highest = highest.max(level);
        program.restamp(&fact, level);
        now.insert_fact(fact);
    }
    work.touch(now.len());
    raised.union_with(&now);
    // Later rounds must be younger than every raised fact.
    let clock = &mut program.bookkeeping_mut().clock;
    *clock = (*clock).max(highest);
    now
}

/// The backward/forward strategy, given the normalized batch. Gives the batch back as soon
/// as `work`'s budget is spent, as [`alt_proof`] does.
pub(super) fn backward_forward<P: Program>(
    program: &mut P,
    deletions: P::Facts,
    insertions: P::Facts,
    mut work: Work,
    trace: Trace,
) -> Result<UpdateReport<P::Facts>, OverBudget<P::Facts>> {
    let mut report = UpdateReport::new(deletions.clone(), P::Facts::default(), trace);
    report.strategy = Strategy::BackwardForward;
    if !deletions.is_empty() {
        let started = Instant::now();
        let mut checked = Phase::default();
        let phase = unprovable_phase(
            program,
            deletions.clone(),
            &mut report.overdelete,
            &mut checked,
            trace,
            &mut work,
        );
        let Some(gone) = phase else {
            return Err(OverBudget::new(
                deletions,
                insertions,
                &report,
                Some(&checked),
                &work,
            ));
        };
        report.overdelete.elapsed = started.elapsed();
        checked.elapsed = report.overdelete.elapsed;
        report.checked = Some(checked);
        report.overdeleted_derived = derived_gone(&gone, trace);
    }
    Ok(finish_with_insertion(program, insertions, report, &work))
}
