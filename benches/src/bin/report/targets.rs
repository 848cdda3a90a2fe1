//! The benchmark issues' targets and the verdicts read off the measured tables.

use super::*;

/// The targets of the benchmark issues (#6: benchmarks and the fast exact-DRed path; #7:
/// no update slower than a recompute), in the issues' order.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Target {
    Scratch,
    PeakMemory,
    OneFact,
    SmallBatches,
    MemoryWhileUpdating,
    OneEdgeStronglyConnected,
    ThousandFacts,
    Guard,
}

impl Target {
    pub(crate) fn statement(self) -> &'static str {
        match self {
            Target::Scratch => "#6 from scratch ≤ 1.0× the fastest peer",
            Target::PeakMemory => "#6 peak memory ≤ the smallest peer's + 25%",
            Target::OneFact => {
                "#6 chains, Andersen, same-generation: a 1-fact update ≥ 50× the fastest \
                 recompute and ≥ 10× differential"
            }
            Target::SmallBatches => {
                "#6 chains, Andersen, same-generation: 10- and 100-fact batches faster than \
                 the fastest recompute and differential"
            }
            Target::MemoryWhileUpdating => "#6 memory while updating ≤ 1.25× the from-scratch peak",
            Target::OneEdgeStronglyConnected => {
                "#7 random graphs and the cycle: a 1-edge deletion ≥ 50× the fastest recompute \
                 and ≥ 10× differential"
            }
            Target::ThousandFacts => {
                "#7 1000-fact batches ≤ 1.2× dred's recompute (median of pairs)"
            }
            Target::Guard => {
                "#7 with the guard, the smaller batches too ≤ 1.2× dred's recompute (median of \
                 pairs)"
            }
        }
    }

    /// The update target of `change` of `k` facts on `workload`, with the factors by which
    /// dred must beat the fastest peer's recompute and differential-dataflow.
    pub(crate) fn of_update(
        workload: &str,
        change: Change,
        k: usize,
    ) -> Option<(Target, f64, f64)> {
        // DAGs with many derivations per fact, points-to analysis and same-generation (#6);
        // graphs with one giant strongly connected component (#7).
        let dag_like = workload.contains("/chain")
            || workload.starts_with("andersen")
            || workload.starts_with("same-generation");
        let strongly_connected = workload.contains("/random") || workload.contains("/cycle");
        match (change, k) {
            // A mixed batch of one fact is the deletion of one.
            (Change::Delete | Change::Reinsert, 1) if dag_like => {
                Some((Target::OneFact, 50.0, 10.0))
            }
            (Change::Delete, 1) if strongly_connected => {
                Some((Target::OneEdgeStronglyConnected, 50.0, 10.0))
            }
            (_, 10 | 100) if dag_like => Some((Target::SmallBatches, 1.0, 1.0)),
            _ => None,
        }
    }
}

/// The kinds of update batch the suite measures against the peers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// k input facts deleted.
    Delete,
    /// The same k facts inserted back.
    Reinsert,
    /// The ⌈k/2⌉ first of those deletions with ⌊k/2⌋ new facts.
    Mixed,
}

impl Change {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Change::Delete => "deletion",
            Change::Reinsert => "re-insertion",
            Change::Mixed => "mixed batch",
        }
    }
}

/// One measured row against one target.
pub(crate) struct Verdict {
    pub(crate) target: Target,
    pub(crate) workload: String,
    /// What this run measured, with the figures it compares.
    pub(crate) measured: String,
    /// `None` where a figure is missing from this run.
    pub(crate) met: Option<bool>,
}

impl Verdict {
    /// The verdict on `change` of `k` facts on `workload`, if a target covers it: dred's
    /// median (`dred`: the time and how to name it) against the fastest peer's recompute and
    /// differential-dataflow's update.
    pub(crate) fn of_update(
        workload: &str,
        change: Change,
        k: usize,
        dred: Option<(f64, String)>,
        recompute: Option<f64>,
        paired: Option<f64>,
        dd: Option<f64>,
    ) -> Option<Verdict> {
        let (target, recompute_factor, dd_factor) = Target::of_update(workload, change, k)?;
        let paired = paired.map_or_else(String::new, |s| format!("; in rotation {s:.1}×"));
        let (measured, met) = match (dred, recompute, dd) {
            (Some((time, named)), Some(recompute), Some(dd)) => (
                format!(
                    "{} of {k}: {named}; recompute {} ({:.1}×{paired}), differential {} ({:.1}×)",
                    change.name(),
                    seconds(recompute),
                    recompute / time,
                    seconds(dd),
                    dd / time
                ),
                Some(if target == Target::SmallBatches {
                    recompute / time > recompute_factor && dd / time > dd_factor
                } else {
                    recompute / time >= recompute_factor && dd / time >= dd_factor
                }),
            ),
            _ => (format!("{} of {k}: –", change.name()), None),
        };
        Some(Verdict {
            target,
            workload: workload.to_string(),
            measured,
            met,
        })
    }
}

/// The section that reads every target off this run's tables: ✓ met, ✗ not, – a figure
/// missing (a row the run's settings skipped).
pub(crate) fn targets_section(verdicts: &[Verdict]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Against the targets\n");
    let _ = writeln!(
        out,
        "Each target of the benchmark issues, read off the tables below (`auto` is \
         `Strategy::Auto`'s median; a recompute is the fastest peer's unless the target says \
         dred's own, and after a re-insertion, which gives back the workload's inputs, its \
         from-scratch time; an update is a deletion, a re-insertion or a mixed batch, each \
         against differential-dataflow's update on the same batch): {} of {} rows met.\n",
        verdicts.iter().filter(|v| v.met == Some(true)).count(),
        verdicts.len()
    );
    let _ = writeln!(out, "| target | workload | measured | met |");
    let _ = writeln!(out, "|---|---|---|:-:|");
    for verdict in verdicts {
        let met = match verdict.met {
            Some(true) => "✓",
            Some(false) => "✗",
            None => "–",
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {met} |",
            verdict.target.statement(),
            verdict.workload,
            verdict.measured
        );
    }
    out.push('\n');
    out
}
