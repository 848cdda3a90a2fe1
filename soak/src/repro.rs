//! A divergence, minimized and written as a case in the format of `shared/cases`:
//! `program.dl`, `edb.facts`, `updates.upd` and `expected.trace`, with a `README.md` that
//! names the strategy and settings that diverged.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use dred::runtime::{GroundFact, RuleInfo, TermInfo};

use crate::check::{expected_models, settings, Divergence, Oracle, Run};
use crate::history::{ground, History};
use crate::shapes::Shape;

/// The history `shape` diverges on under `run`, made as small as removals keep it
/// diverging: batches after the divergence, then whole batches, single facts of batches and
/// initial facts, one at a time, until none can go.
pub fn minimize(
    shape: &Shape,
    run: &Run,
    oracle: Oracle,
    history: &History,
    at: &Divergence,
) -> History {
    let diverges = |candidate: &History| {
        let expected = oracle.expected(shape, candidate);
        (shape.check)(candidate, run, &expected).is_err()
    };
    let mut smallest = history.clone();
    if at.batch < smallest.batches.len() {
        smallest.batches.truncate(at.batch);
    }
    loop {
        let mut shrunk = false;
        let mut keep_if_diverges = |candidate: History, smallest: &mut History| {
            if diverges(&candidate) {
                *smallest = candidate;
                shrunk = true;
            }
        };
        for k in (0..smallest.batches.len()).rev() {
            let mut candidate = smallest.clone();
            candidate.batches.remove(k);
            keep_if_diverges(candidate, &mut smallest);
        }
        for k in (0..smallest.batches.len()).rev() {
            for j in (0..smallest.batches[k].deletions.len()).rev() {
                let mut candidate = smallest.clone();
                candidate.batches[k].deletions.remove(j);
                keep_if_diverges(candidate, &mut smallest);
            }
            for j in (0..smallest.batches[k].insertions.len()).rev() {
                let mut candidate = smallest.clone();
                candidate.batches[k].insertions.remove(j);
                keep_if_diverges(candidate, &mut smallest);
            }
        }
        for j in (0..smallest.initial.len()).rev() {
            let mut candidate = smallest.clone();
            candidate.initial.remove(j);
            keep_if_diverges(candidate, &mut smallest);
        }
        if !shrunk {
            return smallest;
        }
    }
}

/// Writes `history` (minimized) as a case under `dir`.
pub fn write_case(
    dir: &Path,
    shape: &Shape,
    run: &Run,
    history: &History,
    divergence: &Divergence,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("program.dl"), program_dl(shape))?;
    let facts = |raw: &[crate::history::RawFact]| -> Vec<GroundFact> {
        raw.iter()
            .map(|fact| ground(shape.relations, fact))
            .collect()
    };
    let mut edb = String::new();
    for fact in sorted(facts(&history.initial).into_iter().collect()) {
        let _ = writeln!(edb, "{fact}.");
    }
    std::fs::write(dir.join("edb.facts"), edb)?;
    let mut updates = Vec::new();
    for batch in &history.batches {
        let mut lines = String::new();
        for fact in facts(&batch.deletions) {
            let _ = writeln!(lines, "-{fact}.");
        }
        for fact in facts(&batch.insertions) {
            let _ = writeln!(lines, "+{fact}.");
        }
        updates.push(lines);
    }
    std::fs::write(dir.join("updates.upd"), updates.join("---\n"))?;
    let models = expected_models(shape.relations, shape.rules, history);
    let mut trace = String::new();
    let line = |trace: &mut String, label: &str, facts: &BTreeSet<GroundFact>| {
        let facts: Vec<String> = sorted(facts.clone())
            .iter()
            .map(|f| f.to_string())
            .collect();
        let _ = writeln!(trace, "{label}:{}", prefixed(&facts));
    };
    line(&mut trace, "initial_edb", &models[0].0);
    line(&mut trace, "initial_idb", &models[0].1);
    for (k, pair) in models.windows(2).enumerate() {
        let (before, after) = (&pair[0].0, &pair[1].0);
        let _ = writeln!(trace, "batch {}", k + 1);
        line(
            &mut trace,
            "net_delete",
            &before.difference(after).cloned().collect(),
        );
        line(
            &mut trace,
            "net_insert",
            &after.difference(before).cloned().collect(),
        );
        line(&mut trace, "edb", &pair[1].0);
        line(&mut trace, "idb", &pair[1].1);
    }
    std::fs::write(dir.join("expected.trace"), trace)?;
    let settings = settings(history, run);
    let readme = format!(
        "# Soak divergence: {shape} under {run}\n\n\
         Found by `dred-soak`, minimized. Program `{shape}` (`program.dl`), strategy \
         `{strategy}`, {threads} thread(s), settings variant {variant}{clock}:\n\n\
         ```\n{settings:#?}\n```\n\n\
         After {at}: {detail}\n\n\
         `expected.trace` holds the independent oracle's models after each batch, and the \
         net changes; it leaves out the rounds (the oracle computes models, not rounds: the \
         seed's literal reference in `tests/common` computes them).\n",
        shape = shape.name,
        run = run.name,
        strategy = run.strategy,
        threads = history.threads,
        variant = history.variant,
        clock = match history.late_clock {
            Some(rounds) => format!(
                ", the clock put {rounds} rounds before the middle of its range after the \
                 materialization"
            ),
            None => String::new(),
        },
        at = match divergence.batch {
            0 => "the materialization".to_string(),
            usize::MAX => "a panic".to_string(),
            k => format!("batch {k}"),
        },
        detail = divergence.detail,
    );
    std::fs::write(dir.join("README.md"), readme)
}

/// ` a b c` for `[a, b, c]`, and nothing for none: the trace's lines.
fn prefixed(items: &[String]) -> String {
    items.iter().map(|item| format!(" {item}")).collect()
}

/// Facts in the trace's order: relation name, arity, then values left to right, integers
/// (numerically) before strings.
fn sorted(facts: BTreeSet<GroundFact>) -> Vec<GroundFact> {
    let mut facts: Vec<GroundFact> = facts.into_iter().collect();
    facts.sort_by_cached_key(|fact| {
        let values: Vec<(u8, u64, String)> = (fact.values.iter())
            .map(|value| match value.parse::<u64>() {
                Ok(n) => (0, n, String::new()),
                Err(_) => (1, 0, value.trim_matches('"').to_string()),
            })
            .collect();
        (fact.relation.clone(), fact.values.len(), values)
    });
    facts
}

/// The program's rules in the cases' syntax: `R(X,Z) :- R(X,Y), R(Y,Z).`, variables
/// capitalized with a `V`, `.decl` lines for zero-arity relations no rule derives.
fn program_dl(shape: &Shape) -> String {
    let mut text = String::new();
    for rule in shape.rules {
        let _ = writeln!(text, "{}", rule_dl(rule));
    }
    for info in shape.relations {
        if info.input && info.columns.is_empty() {
            let _ = writeln!(text, ".decl {}().", info.name);
        }
    }
    text
}

fn rule_dl(rule: &RuleInfo) -> String {
    let atom = |atom: &dred::runtime::AtomInfo| {
        let terms: Vec<String> = (atom.terms.iter())
            .map(|term| match term {
                TermInfo::Var(name) => format!("V{name}"),
                TermInfo::Wildcard => "_".to_string(),
                TermInfo::Const(value) => value.unwrap_or("?").to_string(),
            })
            .collect();
        format!("{}({})", atom.relation, terms.join(","))
    };
    let body: Vec<String> = rule.body.iter().map(atom).collect();
    match body.is_empty() {
        true => format!("{}.", atom(&rule.head)),
        false => format!("{} :- {}.", atom(&rule.head), body.join(", ")),
    }
}
