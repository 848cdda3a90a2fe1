//! Running a [`Dataflow`] on timely workers: input facts and update batches from fact
//! files, each worker feeding its share of their lines; after each batch, the number of
//! facts of each derived relation and, when asked, the relations themselves as fact files.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use differential_dataflow::input::Input as _;
use timely::dataflow::operators::probe::Handle as Probe;
use timely::dataflow::operators::vec::Input as _;
use timely::dataflow::operators::{Exchange as _, Inspect as _, Probe as _};

use super::{Dataflow, Instruction, Time};
use crate::io::{fact_lines, input_fact_files, read_input_dir};
use crate::program::{Fact, FactSets, Program};
use crate::symbol::Symbols;
use crate::text::TextError;

/// What to run: the input facts, the update batches in order, and where to write the
/// derived relations.
#[derive(Clone, Debug, Default)]
pub struct Job {
    /// A directory of input fact files, `<Relation>.facts`, as
    /// [`read_input_dir`](crate::io::read_input_dir) reads them (and rejects the same
    /// stray files).
    pub inputs: PathBuf,
    /// Update batches, applied in order: each a directory holding a `delete/` and an
    /// `insert/` directory (either may be missing) of fact files in the same format.
    pub batches: Vec<PathBuf>,
    /// If given, the derived relations are written after the inputs and after each batch
    /// `i` to `<output>/<i>/<Relation>.facts` (`0` after the inputs), lines sorted as text.
    pub output: Option<PathBuf>,
}

/// The facts of each derived relation after the inputs (`batch` 0) or after a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchCounts {
    /// 0 for the inputs, `i` for the `i`-th batch of [`Job::batches`].
    pub batch: usize,
    /// Per derived relation, in the program's order: its name and its number of facts.
    pub counts: Vec<(&'static str, u64)>,
}

/// What one worker reports about one batch to the first worker: a change of the number of
/// facts of a relation (no line), or one fact's line with its change of multiplicity.
type Report = (u32, Option<String>, i64);

/// What a worker's operators write and its loop reads, on the worker's thread.
type Shared<T> = Rc<RefCell<T>>;

/// Runs program `P` on timely workers configured by `config` (threads, processes and this
/// process's place among them; `timely::Config::from_args` reads timely's standard
/// arguments: `-w` workers per process, `-n` processes, `-p` this process's index, `-h`
/// a host file). Every process must be started with the same `job`.
///
/// Every file is checked before any worker starts, so bad input is an error and runs
/// nothing. Returns, in the process that holds the first worker, the counts after the
/// inputs and after each batch; other processes return an empty list.
pub fn run<P: Dataflow>(config: timely::Config, job: Job) -> Result<Vec<BatchCounts>, String> {
    check_files::<P>(&job).map_err(|e| e.to_string())?;
    let job = Arc::new(job);
    let guards = timely::execute(config, move |worker| work::<P>(worker, &job))?;
    let mut counts = Vec::new();
    for result in guards.join() {
        let mine = result?.map_err(|e| e.to_string())?;
        if !mine.is_empty() {
            counts = mine;
        }
    }
    Ok(counts)
}

/// Reads every file of `job` once, so that workers never meet a bad one.
fn check_files<P: Program>(job: &Job) -> Result<(), TextError> {
    read_input_dir::<P>(&job.inputs)?;
    for batch in &job.batches {
        if !batch.is_dir() {
            let origin = batch.display().to_string();
            return Err(TextError::new("a batch must be a directory").at(&origin, 1, 1));
        }
        for part in ["delete", "insert"] {
            let dir = batch.join(part);
            if dir.exists() {
                read_input_dir::<P>(&dir)?;
            }
        }
    }
    Ok(())
}

/// One worker's whole run.
fn work<P: Dataflow>(
    worker: &mut timely::worker::Worker,
    job: &Job,
) -> Result<Vec<BatchCounts>, TextError> {
    let (index, peers) = (worker.index(), worker.peers());
    let relations = P::RELATIONS.len();
    let write = job.output.is_some();
    // This worker's share of the derived facts' changes in the current batch.
    let counts = Rc::new(RefCell::new(vec![0i64; relations]));
    let changes: Shared<Vec<(Fact<P>, isize)>> = Rc::default();
    let probe = Probe::new();
    let (mut input, mut unit) = worker.dataflow::<Time, _, _>(|scope| {
        let (input, facts) = scope.new_collection::<(Fact<P>, Instruction), isize>();
        let (unit, units) = scope.new_collection::<(), isize>();
        let (counts, changes) = (counts.clone(), changes.clone());
        P::dataflow(facts, units)
            .inspect(move |(fact, _, diff)| {
                counts.borrow_mut()[P::relation_of(fact)] += *diff as i64;
                if write {
                    changes.borrow_mut().push((fact.clone(), *diff));
                }
            })
            .probe_with(&probe);
        (input, unit)
    });
    // The first worker gathers every worker's reports.
    let gathered: Shared<Vec<Report>> = Rc::default();
    let gathered_probe = Probe::new();
    let mut reports = worker.dataflow::<Time, _, _>(|scope| {
        let (reports, stream) = scope.new_input::<Report>();
        let sink = gathered.clone();
        stream
            .exchange(|_| 0)
            .inspect(move |report| sink.borrow_mut().push(report.clone()))
            .probe_with(&gathered_probe);
        reports
    });

    let symbols = Symbols::default();
    let mut totals = vec![0i64; relations];
    let mut lines: Vec<BTreeMap<String, i64>> = vec![BTreeMap::new(); relations];
    let mut done = Vec::new();
    for batch in 0..=job.batches.len() {
        let time = batch as Time;
        if batch == 0 {
            read_share::<P>(&job.inputs, index, peers, &symbols, |fact| {
                input.insert((fact, (time, true)));
            })?;
            if index == 0 {
                unit.insert(());
            }
        } else {
            let dir = &job.batches[batch - 1];
            for (part, inserts) in [("delete", false), ("insert", true)] {
                let dir = dir.join(part);
                if dir.exists() {
                    read_share::<P>(&dir, index, peers, &symbols, |fact| {
                        input.insert((fact, (time, inserts)));
                    })?;
                }
            }
        }
        input.advance_to(time + 1);
        input.flush();
        unit.advance_to(time + 1);
        unit.flush();
        worker.step_while(|| probe.less_than(&(time + 1)));

        for (relation, count) in counts.borrow_mut().iter_mut().enumerate() {
            if *count != 0 {
                reports.send((relation as u32, None, std::mem::take(count)));
            }
        }
        let mut changes = changes.borrow_mut();
        changes.sort();
        for (fact, diff) in consolidated(changes.drain(..)) {
            let relation = P::relation_of(&fact) as u32;
            reports.send((relation, Some(P::tsv_line(&fact)), diff as i64));
        }
        drop(changes);
        reports.advance_to(time + 1);
        worker.step_while(|| gathered_probe.less_than(&(time + 1)));

        if index == 0 {
            for (relation, line, change) in gathered.borrow_mut().drain(..) {
                let relation = relation as usize;
                match line {
                    None => totals[relation] += change,
                    Some(line) => {
                        let multiplicity = lines[relation].entry(line.clone()).or_insert(0);
                        *multiplicity += change;
                        if *multiplicity == 0 {
                            lines[relation].remove(&line);
                        }
                    }
                }
            }
            let derived = P::RELATIONS.iter().enumerate().filter(|(_, r)| !r.input);
            let counts = derived
                .clone()
                .map(|(r, info)| (info.name, totals[r].max(0) as u64))
                .collect();
            done.push(BatchCounts { batch, counts });
            if let Some(output) = &job.output {
                let dir = output.join(batch.to_string());
                write_lines(&dir, derived.map(|(r, info)| (info.name, &lines[r])))
                    .map_err(|e| TextError::new(format!("cannot write: {e}")))?;
            }
        }
    }
    Ok(done)
}

/// Sorted changes with equal facts summed, those that cancel left out.
fn consolidated<F: PartialEq>(sorted: impl Iterator<Item = (F, isize)>) -> Vec<(F, isize)> {
    let mut out: Vec<(F, isize)> = Vec::new();
    for (fact, diff) in sorted {
        match out.last_mut() {
            Some((last, sum)) if *last == fact => *sum += diff,
            _ => out.push((fact, diff)),
        }
    }
    out.retain(|(_, diff)| *diff != 0);
    out
}

/// Writes each relation's lines to `<dir>/<Relation>.facts`.
fn write_lines<'a>(
    dir: &Path,
    relations: impl Iterator<Item = (&'static str, &'a BTreeMap<String, i64>)>,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (name, lines) in relations {
        let mut text = String::new();
        for line in lines.keys() {
            text.push_str(line);
            text.push('\n');
        }
        std::fs::write(dir.join(format!("{name}.facts")), text)?;
    }
    Ok(())
}

/// Calls `each` with the facts of worker `index`'s share (of `peers`) of the lines of the
/// input fact files in `dir`: every `peers`-th line, from line `index`.
fn read_share<P: Program>(
    dir: &Path,
    index: usize,
    peers: usize,
    symbols: &Symbols,
    mut each: impl FnMut(Fact<P>),
) -> Result<(), TextError> {
    // The stray files were rejected before any worker started (`check_files`).
    let (inputs, _) = input_fact_files::<P>(dir)?;
    for (info, path) in inputs {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(&path)
            .map_err(|e| TextError::new(format!("cannot read: {e}")).at(&origin, 1, 1))?;
        let lines = fact_lines(&text, info.columns.len());
        // A zero-arity relation holds if its file has any line: one fact, the first worker's.
        let share = lines.filter(|(number, _)| match info.columns.len() {
            0 => index == 0 && *number == 0,
            _ => number % peers == index,
        });
        for (number, fields) in share {
            let fact = P::Facts::parse_fact(info.name, &fields, symbols)
                .map_err(|e| TextError::new(e.message).at(&origin, number + 1, 1))?;
            each(fact);
        }
    }
    Ok(())
}
