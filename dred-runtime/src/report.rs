//! What an update did: the net change, and the facts of every round of every phase.

use std::fmt;
use std::time::Duration;

use crate::account::{Account, Reason};
use crate::program::{Counted, FactSets};
use crate::strategy::Strategy;

/// How much of each round an update keeps in its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Trace {
    /// Every round's facts (moved into the report, not copied).
    #[default]
    Rounds,
    /// Only how many facts each round had; the round sets are dropped as soon as used.
    Counts,
    /// Every round's facts, and for each fact the rule instance that put it there
    /// ([`Witness`]). Costs a head-bound search per fact; see [`UpdateReport::explained`].
    Explained,
}

/// Why a fact entered a round: the rule instance (rule index and body facts) that put it
/// there, and for over-deletion the body fact of the previous round that pulled it in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Witness<T> {
    /// The fact.
    pub fact: T,
    /// Index of the rule in `Program::RULES`.
    pub rule: usize,
    /// The instance's body facts, in the rule's source order.
    pub body: Vec<T>,
    /// Over-deletion only: the body fact, deleted in the previous round, that pulled this
    /// fact in.
    pub pulled_in_by: Option<T>,
}

/// One round of a phase.
#[derive(Debug, Clone)]
pub struct Round<F: FactSets> {
    /// How many facts entered in this round.
    pub len: usize,
    /// The facts, unless the update was asked for [`Trace::Counts`].
    pub facts: Option<F>,
    /// With [`Trace::Explained`], each fact's witness, in fact order (none for the net
    /// deletion and insertion rounds: those are input changes).
    pub witnesses: Option<Vec<Witness<F::Fact>>>,
}

/// The rounds of one phase, and how long it took.
#[derive(Debug, Clone)]
pub struct Phase<F: FactSets> {
    /// The rounds in order; round 1 is `rounds[0]`.
    pub rounds: Vec<Round<F>>,
    /// Wall-clock time spent in the phase.
    pub elapsed: Duration,
}

impl<F: FactSets> Default for Phase<F> {
    fn default() -> Self {
        Phase {
            rounds: Vec::new(),
            elapsed: Duration::ZERO,
        }
    }
}

impl<F: FactSets> Phase<F> {
    pub(crate) fn record(
        &mut self,
        facts: F,
        trace: Trace,
        witnesses: Option<Vec<Witness<F::Fact>>>,
    ) {
        let len = facts.len();
        let facts = match trace {
            Trace::Rounds | Trace::Explained => Some(facts),
            Trace::Counts => None,
        };
        self.rounds.push(Round {
            len,
            facts,
            witnesses,
        });
    }

    /// [`Phase::record`], giving `facts` back if `trace` does not keep them.
    pub(crate) fn record_or_return(
        &mut self,
        facts: F,
        trace: Trace,
        witnesses: Option<Vec<Witness<F::Fact>>>,
    ) -> Option<F> {
        if trace == Trace::Counts && witnesses.is_none() {
            self.record_count(facts.len());
            return Some(facts);
        }
        self.record(facts, trace, witnesses);
        None
    }

    /// A round of `len` facts, kept as a count only (under [`Trace::Counts`]).
    pub(crate) fn record_count(&mut self, len: usize) {
        self.rounds.push(Round {
            len,
            facts: None,
            witnesses: None,
        });
    }

    /// [`Phase::record`] of a copy of `facts`, made only if `trace` keeps facts.
    pub(crate) fn record_copy(&mut self, facts: &F, trace: Trace) {
        self.rounds.push(Round {
            len: facts.len(),
            facts: (trace != Trace::Counts).then(|| facts.clone()),
            witnesses: None,
        });
    }

    /// Total facts over all rounds.
    pub fn total(&self) -> usize {
        self.rounds.iter().map(|r| r.len).sum()
    }
}

/// What one update (or the initial materialization) changed, phase by phase.
///
/// With [`Strategy::DRed`], phases follow the seed: over-deletion (round 1 is the net
/// deletion), rederivation (present only when some derived fact was over-deleted; its last
/// round is the empty one that ends it), insertion (round 1 is the net insertion). `Display`
/// prints the canonical trace lines of `shared/cases` (`overdelete 2: R(a,b)`), facts sorted
/// by relation name, then by value.
///
/// With [`Strategy::AltProof`], `overdelete` holds the rounds of facts that lost their
/// support (`unsupported r` lines; round 1 is the net deletion), `checked` the facts checked
/// in each round (`check r`), `restamped` the facts kept by raising their stamps
/// (`restamp r`), and rederivation restores the unsupported facts that still have a proof.
/// With [`Strategy::BackwardForward`], `overdelete` holds the rounds of facts left without
/// a proof (`unprovable r`), `checked` the facts whose proof was searched for in each round
/// (`check r`), and nothing is rederived. With [`Strategy::Recompute`], `insert` holds the rematerialization's rounds
/// (`recompute r`). Those reports open with a `strategy:` line, and so does a DRed update
/// that [`Strategy::Auto`] chose (with its reason).
#[derive(Debug, Clone)]
pub struct UpdateReport<F: FactSets> {
    /// The strategy that produced the result ([`Strategy::Auto`] reports the one it chose,
    /// or [`Strategy::Recompute`] if it gave up).
    pub strategy: Strategy,
    /// What ran and why, as data: the strategy asked for, the one tried first, the reason,
    /// and the counts of an attempt [`Strategy::Auto`] gave up on.
    pub account: Account,
    /// D⁻: input facts that held and are gone after the batch.
    pub net_delete: F,
    /// A⁺: input facts that did not hold and do after the batch.
    pub net_insert: F,
    /// Over-deletion rounds (empty when nothing was deleted); for
    /// [`Strategy::AltProof`], the rounds of facts that lost their support; for
    /// [`Strategy::BackwardForward`], of facts left without a proof.
    pub overdelete: Phase<F>,
    /// [`Strategy::AltProof`] and [`Strategy::BackwardForward`] only: the facts whose
    /// support was checked (or proof searched for), per round (round 1, the net deletion,
    /// checks nothing).
    pub checked: Option<Phase<F>>,
    /// [`Strategy::AltProof`] only: the checked facts that had no support at their stamp but
    /// one at a higher level, and were kept with their stamp raised to it, per round.
    pub restamped: Option<Phase<F>>,
    /// [`Strategy::AltProof`] on a program that keeps its closure relations by reachability
    /// ([`crate::Bookkeeping::reachability`]) only: the facts of those relations that the
    /// deletion took away, found at once from the graph. They are in round 1 of
    /// [`Self::overdelete`] beside D⁻, and no fact of those relations is ever checked.
    pub by_reachability: Option<Round<F>>,
    /// Derived facts over-deleted (all rounds' derived facts together); for
    /// [`Strategy::AltProof`], the derived facts that lost their support; for
    /// [`Strategy::BackwardForward`], those that are gone.
    pub overdeleted_derived: Round<F>,
    /// Rederivation rounds, when some derived fact was over-deleted (or lost support).
    pub rederive: Option<Phase<F>>,
    /// Insertion rounds (empty when nothing was inserted); for [`Strategy::Recompute`], the
    /// rematerialization's rounds.
    pub insert: Phase<F>,
    /// How much the report kept.
    pub trace: Trace,
    /// The update's counted work ([`Counted::units`]: the unit of the recompute guard).
    pub work: u64,
    /// The same work by kind.
    pub counted: Counted,
}

impl<F: FactSets> UpdateReport<F> {
    pub(crate) fn new(net_delete: F, net_insert: F, trace: Trace) -> Self {
        UpdateReport {
            strategy: Strategy::DRed,
            account: Account::requested(Strategy::DRed),
            net_delete,
            net_insert,
            overdelete: Phase::default(),
            checked: None,
            restamped: None,
            by_reachability: None,
            overdeleted_derived: Round {
                len: 0,
                facts: None,
                witnesses: None,
            },
            rederive: None,
            insert: Phase::default(),
            trace,
            work: 0,
            counted: Counted::default(),
        }
    }

    /// Why [`Strategy::Auto`] ran what it ran, as the report's first line gives it (`None`
    /// for a strategy the caller named).
    pub fn why(&self) -> Option<String> {
        (self.account.requested == Strategy::Auto).then(|| self.account.to_string())
    }

    /// How many derived facts were restored by rederivation.
    pub fn rederived(&self) -> usize {
        self.rederive.as_ref().map_or(0, Phase::total)
    }

    /// Derived facts that were over-deleted and not restored: the derived part of the net
    /// deletion (before insertion, which may add some back). Not known after a
    /// [`Strategy::Recompute`] (0).
    pub fn withdrawn(&self) -> usize {
        self.overdeleted_derived.len - self.rederived()
    }

    /// How many facts [`Strategy::AltProof`] checked for support, or
    /// [`Strategy::BackwardForward`] searched a proof for (0 for other strategies).
    pub fn checked(&self) -> usize {
        self.checked.as_ref().map_or(0, Phase::total)
    }

    /// How many facts [`Strategy::AltProof`] kept by raising their stamps (0 for other
    /// strategies).
    pub fn restamped(&self) -> usize {
        self.restamped.as_ref().map_or(0, Phase::total)
    }

    /// The names a phase's lines carry for this report's strategy: deletion, its derived
    /// total, rederivation, insertion.
    fn labels(&self) -> [&'static str; 4] {
        match self.strategy {
            Strategy::AltProof => ["unsupported", "unsupported_idb", "rederive", "insert"],
            Strategy::BackwardForward => ["unprovable", "unprovable_idb", "rederive", "insert"],
            Strategy::Recompute => ["overdelete", "overdeleted_idb", "rederive", "recompute"],
            Strategy::DRed | Strategy::Auto => {
                ["overdelete", "overdeleted_idb", "rederive", "insert"]
            }
        }
    }

    /// With [`Trace::Explained`], one line per fact that entered a round through a rule:
    /// `overdelete 3: R(a,c) <- R(a,b), R(b,c)  (pulled in by R(a,b))`,
    /// `rederive 1: R(a,d) <- R(a,e), R(e,d)`, `insert 2: R(d,fresh) <- E(d,fresh)`.
    /// Empty for other traces.
    pub fn explained(&self) -> String {
        let mut out = String::new();
        let [deletion, _, rederive, insert] = self.labels();
        let phases = [
            (deletion, Some(&self.overdelete)),
            (rederive, self.rederive.as_ref()),
            (insert, Some(&self.insert)),
        ];
        for (name, phase) in phases {
            let Some(phase) = phase else { continue };
            for (i, round) in phase.rounds.iter().enumerate() {
                for witness in round.witnesses.iter().flatten() {
                    let body: Vec<String> = witness.body.iter().map(ToString::to_string).collect();
                    out.push_str(&format!("{name} {}: {}", i + 1, witness.fact));
                    if body.is_empty() {
                        out.push_str("  (a fact of the program)");
                    } else {
                        out.push_str(&format!(" <- {}", body.join(", ")));
                    }
                    if let Some(cause) = &witness.pulled_in_by {
                        out.push_str(&format!("  (pulled in by {cause})"));
                    }
                    out.push('\n');
                }
            }
        }
        out
    }

    /// Total time over all phases (checking is part of [`Self::overdelete`]'s).
    pub fn elapsed(&self) -> Duration {
        self.overdelete.elapsed
            + self.rederive.as_ref().map_or(Duration::ZERO, |p| p.elapsed)
            + self.insert.elapsed
    }
}

fn write_line<F: FactSets>(f: &mut fmt::Formatter<'_>, label: &str, facts: &F) -> fmt::Result {
    let mut line = String::with_capacity(16 + 8 * facts.len());
    line.push_str(label);
    line.push(':');
    facts.write_sorted(&mut line);
    writeln!(f, "{line}")
}

fn write_phase<F: FactSets>(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    phase: &Phase<F>,
) -> fmt::Result {
    for (i, round) in phase.rounds.iter().enumerate() {
        write_round(f, &format!("{name} {}", i + 1), round)?;
    }
    Ok(())
}

fn write_round<F: FactSets>(
    f: &mut fmt::Formatter<'_>,
    label: &str,
    round: &Round<F>,
) -> fmt::Result {
    match &round.facts {
        Some(facts) => write_line(f, label, facts),
        None => writeln!(f, "{label}: ({} facts)", round.len),
    }
}

impl<F: FactSets> fmt::Display for UpdateReport<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [deletion, deleted_derived, rederive, insert] = self.labels();
        match (self.strategy, &self.why()) {
            (_, Some(why)) if self.account.reason == Reason::NothingDeleted => {
                writeln!(f, "strategy: none ({why})")?
            }
            (Strategy::DRed | Strategy::Auto, None) => {}
            (Strategy::DRed | Strategy::Auto, Some(why)) => writeln!(f, "strategy: DRed ({why})")?,
            (Strategy::AltProof, None) => writeln!(f, "strategy: alternative proofs")?,
            (Strategy::AltProof, Some(why)) => writeln!(f, "strategy: alternative proofs ({why})")?,
            (Strategy::BackwardForward, None) => writeln!(f, "strategy: backward/forward proofs")?,
            (Strategy::BackwardForward, Some(why)) => {
                writeln!(f, "strategy: backward/forward proofs ({why})")?
            }
            (Strategy::Recompute, None) => writeln!(f, "strategy: recompute")?,
            (Strategy::Recompute, Some(why)) => writeln!(f, "strategy: recompute ({why})")?,
        }
        write_line(f, "net_delete", &self.net_delete)?;
        write_line(f, "net_insert", &self.net_insert)?;
        if let Some(round) = &self.by_reachability {
            write_round(f, "unreachable", round)?;
        }
        if self.strategy != Strategy::Recompute {
            match &self.checked {
                Some(checked) => {
                    for (i, round) in self.overdelete.rounds.iter().enumerate() {
                        if i > 0 {
                            write_round(f, &format!("check {}", i + 1), &checked.rounds[i])?;
                        }
                        write_round(f, &format!("{deletion} {}", i + 1), round)?;
                        if let (true, Some(restamped)) = (i > 0, &self.restamped) {
                            let restamp = &restamped.rounds[i];
                            write_round(f, &format!("restamp {}", i + 1), restamp)?;
                        }
                    }
                }
                None => write_phase(f, deletion, &self.overdelete)?,
            }
            match &self.overdeleted_derived.facts {
                Some(facts) => write_line(f, deleted_derived, facts)?,
                None if self.trace != Trace::Counts => writeln!(f, "{deleted_derived}:")?,
                None => writeln!(
                    f,
                    "{deleted_derived}: ({} facts)",
                    self.overdeleted_derived.len
                )?,
            }
        }
        if let Some(phase) = &self.rederive {
            write_phase(f, rederive, phase)?;
        }
        write_phase(f, insert, &self.insert)
    }
}
