//! What an update did: the net change, and the facts of every round of every phase.

use std::fmt;
use std::time::Duration;

use crate::program::FactSets;

/// How much of each round an update keeps in its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Trace {
    /// Every round's facts (moved into the report, not copied).
    #[default]
    Rounds,
    /// Only how many facts each round had; the round sets are dropped as soon as used.
    Counts,
}

/// One round of a phase.
#[derive(Debug, Clone)]
pub struct Round<F> {
    /// How many facts entered in this round.
    pub len: usize,
    /// The facts, unless the update was asked for [`Trace::Counts`].
    pub facts: Option<F>,
}

/// The rounds of one phase, and how long it took.
#[derive(Debug, Clone)]
pub struct Phase<F> {
    /// The rounds in order; round 1 is `rounds[0]`.
    pub rounds: Vec<Round<F>>,
    /// Wall-clock time spent in the phase.
    pub elapsed: Duration,
}

impl<F> Default for Phase<F> {
    fn default() -> Self {
        Phase {
            rounds: Vec::new(),
            elapsed: Duration::ZERO,
        }
    }
}

impl<F: FactSets> Phase<F> {
    pub(crate) fn record(&mut self, facts: F, trace: Trace) {
        let len = facts.len();
        let facts = match trace {
            Trace::Rounds => Some(facts),
            Trace::Counts => None,
        };
        self.rounds.push(Round { len, facts });
    }

    /// Total facts over all rounds.
    pub fn total(&self) -> usize {
        self.rounds.iter().map(|r| r.len).sum()
    }
}

/// What one update (or the initial materialization) changed, phase by phase.
///
/// Phases follow the seed: over-deletion (round 1 is the net deletion), rederivation (present
/// only when some derived fact was over-deleted; its last round is the empty one that ends
/// it), insertion (round 1 is the net insertion). `Display` prints the canonical trace lines
/// of `shared/cases` (`overdelete 2: R(a,b)`), facts sorted by relation name, then by value.
#[derive(Debug, Clone)]
pub struct UpdateReport<F> {
    /// D⁻: input facts that held and are gone after the batch.
    pub net_delete: F,
    /// A⁺: input facts that did not hold and do after the batch.
    pub net_insert: F,
    /// Over-deletion rounds (empty when nothing was deleted).
    pub overdelete: Phase<F>,
    /// Derived facts over-deleted (all rounds' derived facts together).
    pub overdeleted_derived: Round<F>,
    /// Rederivation rounds, when some derived fact was over-deleted.
    pub rederive: Option<Phase<F>>,
    /// Insertion rounds (empty when nothing was inserted).
    pub insert: Phase<F>,
    /// How much the report kept.
    pub trace: Trace,
}

impl<F: FactSets> UpdateReport<F> {
    pub(crate) fn new(net_delete: F, net_insert: F, trace: Trace) -> Self {
        UpdateReport {
            net_delete,
            net_insert,
            overdelete: Phase::default(),
            overdeleted_derived: Round {
                len: 0,
                facts: None,
            },
            rederive: None,
            insert: Phase::default(),
            trace,
        }
    }

    /// How many derived facts were restored by rederivation.
    pub fn rederived(&self) -> usize {
        self.rederive.as_ref().map_or(0, Phase::total)
    }

    /// Derived facts that were over-deleted and not restored: the derived part of the net
    /// deletion (before insertion, which may add some back).
    pub fn withdrawn(&self) -> usize {
        self.overdeleted_derived.len - self.rederived()
    }

    /// Total time over all phases.
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
        match &round.facts {
            Some(facts) => write_line(f, &format!("{name} {}", i + 1), facts)?,
            None => writeln!(f, "{name} {}: ({} facts)", i + 1, round.len)?,
        }
    }
    Ok(())
}

impl<F: FactSets> fmt::Display for UpdateReport<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_line(f, "net_delete", &self.net_delete)?;
        write_line(f, "net_insert", &self.net_insert)?;
        write_phase(f, "overdelete", &self.overdelete)?;
        match &self.overdeleted_derived.facts {
            Some(facts) => write_line(f, "overdeleted_idb", facts)?,
            None if self.trace == Trace::Rounds => writeln!(f, "overdeleted_idb:")?,
            None => writeln!(
                f,
                "overdeleted_idb: ({} facts)",
                self.overdeleted_derived.len
            )?,
        }
        if let Some(rederive) = &self.rederive {
            write_phase(f, "rederive", rederive)?;
        }
        write_phase(f, "insert", &self.insert)
    }
}
