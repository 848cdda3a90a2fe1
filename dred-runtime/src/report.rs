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
pub struct UpdateReport<F: FactSets> {
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
                witnesses: None,
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

    /// With [`Trace::Explained`], one line per fact that entered a round through a rule:
    /// `overdelete 3: R(a,c) <- R(a,b), R(b,c)  (pulled in by R(a,b))`,
    /// `rederive 1: R(a,d) <- R(a,e), R(e,d)`, `insert 2: R(d,fresh) <- E(d,fresh)`.
    /// Empty for other traces.
    pub fn explained(&self) -> String {
        let mut out = String::new();
        let phases = [
            ("overdelete", Some(&self.overdelete)),
            ("rederive", self.rederive.as_ref()),
            ("insert", Some(&self.insert)),
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
            None if self.trace != Trace::Counts => writeln!(f, "overdeleted_idb:")?,
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
