//! The DRed driver: normalize → over-delete → rederive → insert, as delta joins over the
//! stored relations (no ground rule instance is ever stored).
//!
//! Invariant between calls: the program's relations hold exactly the least model of its
//! rules over its input facts. Every function here preserves it; only
//! [`from_facts_unchecked`] takes it on trust.

use std::time::Instant;

use crate::program::{Admit, Fact, FactSets, InputFact, Program};
use crate::report::{Phase, Round, Trace, UpdateReport, Witness};
use crate::text::{FieldError, GroundFact, TextError};

/// An update batch of input facts: deletions first, then insertions.
///
/// Only facts of input relations can be added (by type), so a typed batch is always valid.
/// The `dred` crate's documentation shows batches in use.
#[derive(Debug, Clone)]
pub struct Batch<F> {
    deletions: F,
    insertions: F,
}

impl<F: FactSets> Default for Batch<F> {
    fn default() -> Self {
        Batch {
            deletions: F::default(),
            insertions: F::default(),
        }
    }
}

impl<F: FactSets> Batch<F> {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also delete `fact` (a no-op if it does not hold).
    pub fn delete(mut self, fact: impl InputFact<F>) -> Self {
        fact.add_to(&mut self.deletions);
        self
    }

    /// Also insert `fact` (a no-op if it holds and is not deleted by this batch).
    pub fn insert(mut self, fact: impl InputFact<F>) -> Self {
        fact.add_to(&mut self.insertions);
        self
    }

    /// Also delete every fact of `facts`.
    pub fn delete_all<I: InputFact<F>>(mut self, facts: impl IntoIterator<Item = I>) -> Self {
        facts
            .into_iter()
            .for_each(|f| f.add_to(&mut self.deletions));
        self
    }

    /// Also insert every fact of `facts`.
    pub fn insert_all<I: InputFact<F>>(mut self, facts: impl IntoIterator<Item = I>) -> Self {
        facts
            .into_iter()
            .for_each(|f| f.add_to(&mut self.insertions));
        self
    }

    /// A batch inserting `insertions`.
    pub(crate) fn inserting(insertions: F) -> Self {
        Batch {
            deletions: F::default(),
            insertions,
        }
    }

    /// The facts to delete, as given.
    pub fn deletions(&self) -> &F {
        &self.deletions
    }

    /// The facts to insert, as given.
    pub fn insertions(&self) -> &F {
        &self.insertions
    }

    /// Adds an untyped fact (`relation`, one text value per column) to the deletions
    /// (`insert == false`) or insertions, after checking that the relation exists, is an
    /// input relation, has that arity, and that each value parses as its column's type.
    pub fn add_text<P: Program<Facts = F>>(
        &mut self,
        insert: bool,
        relation: &str,
        values: &[&str],
    ) -> Result<(), FieldError> {
        check_input_relation::<P>(relation).map_err(|e| FieldError {
            field: None,
            message: e.message,
        })?;
        let target = if insert {
            &mut self.insertions
        } else {
            &mut self.deletions
        };
        target.insert_text(relation, values)
    }
}

pub(crate) fn check_input_relation<P: Program>(relation: &str) -> Result<(), TextError> {
    match P::RELATIONS.iter().find(|r| r.name == relation) {
        Some(info) if info.input => Ok(()),
        Some(_) => Err(TextError::new(format!(
            "`{relation}` is a derived relation; only input relations can be updated"
        ))),
        None => Err(TextError::new(format!("no relation named `{relation}`"))),
    }
}

/// Builds a program's least model over `inputs` by semi-naive insertion from the empty
/// model: round 1 is the inputs together with the program's constant facts.
pub fn materialize<P: Program>(
    inputs: Batch<P::Facts>,
    trace: Trace,
) -> (P, UpdateReport<P::Facts>) {
    let mut program = P::empty();
    let mut seeds = P::constant_facts();
    seeds.union_with(&inputs.insertions);
    let mut report = UpdateReport::new(P::Facts::default(), inputs.insertions, trace);
    let started = Instant::now();
    insert_phase(&mut program, seeds, &mut report.insert, trace);
    report.insert.elapsed = started.elapsed();
    (program, report)
}

/// Applies one update batch with DRed and reports every round.
pub fn update<P: Program>(
    program: &mut P,
    batch: Batch<P::Facts>,
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

    let mut report = UpdateReport::new(deletions.clone(), P::Facts::default(), trace);
    if !deletions.is_empty() {
        let started = Instant::now();
        let overdeleted = overdelete_phase(program, deletions, &mut report.overdelete, trace);
        report.overdelete.elapsed = started.elapsed();

        report.overdeleted_derived = Round {
            len: overdeleted.len(),
            facts: None,
            witnesses: None,
        };
        if !overdeleted.is_empty() {
            if trace != Trace::Counts {
                report.overdeleted_derived.facts = Some(overdeleted.clone());
            }
            let started = Instant::now();
            let mut rederive = Phase::default();
            rederive_phase(program, overdeleted, &mut rederive, trace);
            rederive.elapsed = started.elapsed();
            report.rederive = Some(rederive);
        }
    }
    if !insertions.is_empty() {
        report.net_insert = insertions.clone();
        let started = Instant::now();
        insert_phase(program, insertions, &mut report.insert, trace);
        report.insert.elapsed = started.elapsed();
    }
    report
}

/// Over-deletion: round 1 is D⁻; round r+1 holds the heads, not yet over-deleted, of rule
/// instances that hold in the *old* relations and use a fact of round r. Nothing is removed
/// until the phase ends. Returns the over-deleted derived facts.
fn overdelete_phase<P: Program>(
    program: &mut P,
    net_delete: P::Facts,
    phase: &mut Phase<P::Facts>,
    trace: Trace,
) -> P::Facts {
    let mut overdeleted = net_delete.clone();
    let mut frontier = net_delete;
    let mut frontier_witnesses = None;
    loop {
        let mut next = P::Facts::default();
        program.fire(&frontier, Admit::NotIn(&overdeleted), &mut next);
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
    overdeleted.derived_part()
}

/// Rederivation: round 1 restores the over-deleted facts derivable from the survivors
/// (head-bound lookups); round k+1 those derivable with a fact restored in round k (a delta
/// join admitting only still-missing over-deleted heads). A round's facts become evidence
/// only after the round. The last, empty round is recorded too.
fn rederive_phase<P: Program>(
    program: &mut P,
    mut pending: P::Facts,
    phase: &mut Phase<P::Facts>,
    trace: Trace,
) {
    let mut restored = program.derivable(&pending);
    let mut restored_witnesses = witnesses(program, &restored, None, false, trace);
    while !restored.is_empty() {
        program.insert_facts(&restored);
        pending.subtract(&restored);
        let mut next = P::Facts::default();
        program.fire(&restored, Admit::In(&pending), &mut next);
        let next_witnesses = witnesses(program, &next, None, false, trace);
        phase.record(restored, trace, restored_witnesses);
        restored = next;
        restored_witnesses = next_witnesses;
    }
    phase.record(restored, trace, restored_witnesses);
}

/// Semi-naive insertion: `delta` is round 1; each next round is the heads not yet held of
/// instances using a fact of the previous round.
fn insert_phase<P: Program>(
    program: &mut P,
    mut delta: P::Facts,
    phase: &mut Phase<P::Facts>,
    trace: Trace,
) {
    if delta.is_empty() {
        return;
    }
    program.insert_facts(&delta);
    let mut delta_witnesses = None;
    loop {
        let mut next = P::Facts::default();
        program.fire(&delta, Admit::Absent, &mut next);
        let next_witnesses = witnesses(program, &next, Some(&delta), false, trace);
        phase.record(delta, trace, delta_witnesses);
        if next.is_empty() {
            return;
        }
        program.insert_facts(&next);
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
    let explain = |fact: Fact<P>| {
        let mut found = None;
        program.instances(&fact, &mut |rule, body| {
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
        let (rule, body, cause) = found.expect("a round's fact has an instance that put it there");
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
pub fn from_facts_unchecked<P: Program>(facts: &P::Facts) -> P {
    let mut program = P::empty();
    program.insert_facts(facts);
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
