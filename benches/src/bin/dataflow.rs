//! #57, the distributed path: per workload, from-scratch time and the latencies of
//! deletions of k input facts and of their re-insertions (k = 1, 10, 100; `DRED_DF_SIZES`),
//! `DRED_DF_REPS` (default 3) batches each, medians, for dred's local engine
//! (`Strategy::Auto`, default settings), dred's generated dataflow on timely with 1 and 2
//! workers (one process), and the suite's hand-written differential-dataflow program (1
//! worker). `DRED_DF_WORKLOAD` (a part of a name) measures only the workloads it names,
//! `DRED_DF_ENGINES` (some of `local,generated_1,generated_2,hand_written`) only those
//! engines. Prints one JSON object per line.

use std::time::{Duration, Instant};

use dred::runtime::dataflow::{timely, Dataflow};
use dred::runtime::{FactSets, Program, Symbols};
use dred_benches::dataflow::{Fact, Session};
use dred_benches::engines::{differential_session, dred_programs, DredProgram};
use dred_benches::{env_or, median, update_facts, workloads, Rules, UpdateBatch, Workload};

/// A batch's deletions and insertions as facts of `P`.
type FactBatch<P> = (Vec<Fact<P>>, Vec<Fact<P>>);

/// One engine's session: from-scratch time, each batch's latency, derived facts at the end.
type Run = (Duration, Vec<Duration>, usize);

fn fact<P: Program>(name: &str, (a, b): (u32, u32), symbols: &Symbols) -> Fact<P> {
    let (a, b) = (a.to_string(), b.to_string());
    P::Facts::parse_fact(name, &[&a, &b], symbols).expect("a workload's fact")
}

/// The generated dataflow of `P` on `workers` workers: the from-scratch time, each
/// batch's latency (as the first worker sees it), and the derived facts at the end.
fn generated<P: Dataflow + Send>(
    workers: usize,
    workload: &Workload,
    batches: &[UpdateBatch],
) -> Run
where
    Fact<P>: Send,
{
    let symbols = Symbols::default();
    let inputs: Vec<Fact<P>> = workload
        .inputs
        .iter()
        .flat_map(|(name, facts)| facts.iter().map(|f| fact::<P>(name, *f, &symbols)))
        .collect();
    let batches: Vec<FactBatch<P>> = batches
        .iter()
        .map(|(deletions, insertions)| {
            let convert = |changes: &[(&'static str, (u32, u32))]| {
                changes
                    .iter()
                    .map(|(name, f)| fact::<P>(name, *f, &symbols))
                    .collect()
            };
            (convert(deletions), convert(insertions))
        })
        .collect();
    let shared = std::sync::Arc::new(std::sync::Mutex::new((inputs, batches)));
    let guards = timely::execute(timely::Config::process(workers), move |worker| {
        let (index, peers) = (worker.index(), worker.peers());
        let (inputs, batches) = shared.lock().unwrap().clone();
        let mut session = Session::<P>::new(worker);
        let started = Instant::now();
        for fact in inputs.into_iter().skip(index).step_by(peers) {
            session.input.insert((fact, (0, true)));
        }
        if index == 0 {
            session.unit.insert(());
        }
        session.finish(worker, 0);
        let scratch = started.elapsed();
        let mut latencies = Vec::new();
        for (t, (deletions, insertions)) in batches.into_iter().enumerate() {
            let time = t as u64 + 1;
            let started = Instant::now();
            for fact in deletions.into_iter().skip(index).step_by(peers) {
                session.input.insert((fact, (time, false)));
            }
            for fact in insertions.into_iter().skip(index).step_by(peers) {
                session.input.insert((fact, (time, true)));
            }
            session.finish(worker, time);
            latencies.push(started.elapsed());
        }
        (scratch, latencies, session.derived())
    })
    .expect("timely runs");
    let results: Vec<_> = guards
        .join()
        .into_iter()
        .map(|r| r.expect("a worker"))
        .collect();
    let facts = results.iter().map(|r| r.2).sum::<isize>() as usize;
    let (scratch, latencies, _) = results.into_iter().next().expect("a worker");
    (scratch, latencies, facts)
}

fn session(workload: &Workload, workers: usize, batches: &[UpdateBatch]) -> Run {
    use dred_programs::*;
    match workload.rules {
        Rules::TcNonlinear => generated::<TcNonlinear>(workers, workload, batches),
        Rules::TcLinear => generated::<linear::TcLinear>(workers, workload, batches),
        Rules::SameGeneration => {
            generated::<same_generation::SameGeneration>(workers, workload, batches)
        }
        Rules::Andersen => generated::<andersen::Andersen>(workers, workload, batches),
        Rules::Alias => generated::<alias::Alias>(workers, workload, batches),
    }
}

/// Deletions of k facts and their re-insertions, `repetitions` times per size.
fn batches(workload: &Workload, sizes: &[usize], repetitions: usize) -> Vec<UpdateBatch> {
    let mut batches = Vec::new();
    for &k in sizes {
        for rep in 0..repetitions {
            let (deletions, _) = update_facts(workload, k, 31 + rep as u64);
            batches.push((deletions.clone(), Vec::new()));
            batches.push((Vec::new(), deletions));
        }
    }
    batches
}

fn local(workload: &Workload, batches: &[UpdateBatch]) -> Run {
    let started = Instant::now();
    let (mut program, _) = DredProgram::from_scratch(workload);
    let scratch = started.elapsed();
    let latencies = batches
        .iter()
        .map(|(deletions, insertions)| {
            let started = Instant::now();
            program.update_using(deletions, insertions, dred::Strategy::Auto);
            started.elapsed()
        })
        .collect();
    (scratch, latencies, program.derived_len())
}

fn main() {
    let only: String = env_or("DRED_DF_WORKLOAD", String::new());
    let chosen: String = env_or(
        "DRED_DF_ENGINES",
        "local,generated_1,generated_2,hand_written".to_string(),
    );
    let repetitions: usize = env_or("DRED_DF_REPS", 3).max(1);
    let sizes: Vec<usize> = env_or("DRED_DF_SIZES", "1,10,100".to_string())
        .split(',')
        .filter_map(|k| k.trim().parse().ok())
        .collect();
    for workload in workloads() {
        if !workload.name.contains(&only) {
            continue;
        }
        let batches = batches(&workload, &sizes, repetitions);
        let engines: [(&str, &dyn Fn() -> Run); 4] = [
            ("local", &|| local(&workload, &batches)),
            ("generated_1", &|| session(&workload, 1, &batches)),
            ("generated_2", &|| session(&workload, 2, &batches)),
            ("hand_written", &|| {
                differential_session(&workload, &batches)
            }),
        ];
        let runs: Vec<(&str, Run)> = engines
            .iter()
            .filter(|(name, _)| chosen.split(',').any(|c| c == *name))
            .map(|(name, run)| (*name, run()))
            .collect();
        let facts: Vec<usize> = runs.iter().map(|(_, run)| run.2).collect();
        assert!(
            facts.windows(2).all(|w| w[0] == w[1]),
            "{}: the engines end with different facts: {facts:?}",
            workload.name
        );
        let fields: Vec<String> = runs
            .iter()
            .map(|(name, (scratch, latencies, _))| {
                let per_size: Vec<String> = sizes
                    .iter()
                    .enumerate()
                    .map(|(s, k)| {
                        let of_size = &latencies[s * 2 * repetitions..(s + 1) * 2 * repetitions];
                        let deletes = of_size.iter().step_by(2).copied().collect();
                        let inserts = of_size.iter().skip(1).step_by(2).copied().collect();
                        format!(
                            "\"{k}\": [{}, {}]",
                            median(deletes).as_secs_f64(),
                            median(inserts).as_secs_f64()
                        )
                    })
                    .collect();
                format!(
                    "\"{name}\": {{\"scratch_s\": {}, \"delete_insert_s\": {{{}}}}}",
                    scratch.as_secs_f64(),
                    per_size.join(", ")
                )
            })
            .collect();
        println!(
            "{{\"workload\": {:?}, \"derived\": {}, {}}}",
            workload.name,
            facts[0],
            fields.join(", ")
        );
    }
}
