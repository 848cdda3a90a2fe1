//! Deletions on recursive programs other than closures (`general_workloads`: the alias
//! analysis and a larger Andersen), side by side in one run: for k = 1 and 10 deleted input
//! facts, `DRED_GENERAL_REPS` (default 3) random batches each, dred's update under each
//! deletion strategy (from a clone of the materialized program, made outside the timing),
//! ascent's recompute of the inputs left, and differential-dataflow applying the same
//! deletion (then its inverse, unmeasured) in one session.
//!
//! Prints one JSON object per workload and size: the model's size; per strategy the median
//! time, the facts its deletion checked (or over-deleted) and its counted work; the true
//! change (input and derived facts gone) of each batch; ascent's and differential's median
//! times. `DRED_GENERAL_WORKLOAD` (a part of a name) measures only the workloads it names;
//! `DRED_GENERAL_DD=0` leaves differential-dataflow out; `DRED_GENERAL_WITH_DRED=1` adds
//! DRed.

use std::time::{Duration, Instant};

use dred::Strategy;
use dred_benches::engines::{ascent_scratch, differential_session, DredProgram, UpdateCounts};
use dred_benches::{apply, env_or, general_workloads, median, update_facts, Changes};

/// The strategies measured, by the name printed. DRed over-deletes nearly the whole model
/// of these programs (a minute a batch on the alias analysis): `DRED_GENERAL_WITH_DRED=1`
/// adds it.
const STRATEGIES: [(&str, Strategy); 4] = [
    ("backward_forward", Strategy::BackwardForward),
    ("altproof", Strategy::AltProof),
    ("auto", Strategy::Auto),
    ("dred", Strategy::DRed),
];

/// The batch sizes measured.
const SIZES: [usize; 2] = [1, 10];

fn main() {
    let repetitions: usize = env_or("DRED_GENERAL_REPS", 3).max(1);
    let only: String = env_or("DRED_GENERAL_WORKLOAD", String::new());
    let with_dd = env_or("DRED_GENERAL_DD", 1) != 0;
    let strategies = match env_or("DRED_GENERAL_WITH_DRED", 0) {
        0 => &STRATEGIES[..3],
        _ => &STRATEGIES[..],
    };
    for workload in general_workloads()
        .into_iter()
        .filter(|w| w.name.contains(&only))
    {
        let started = Instant::now();
        let base = DredProgram::materialize(&workload);
        let scratch = started.elapsed();
        let inputs: usize = workload.inputs.iter().map(|(_, facts)| facts.len()).sum();
        let model = base.derived_len() + inputs;
        let batches: Vec<(usize, Changes)> = SIZES
            .iter()
            .flat_map(|&k| (0..repetitions).map(move |rep| (k, rep)))
            .map(|(k, rep)| (k, update_facts(&workload, k, 7 + rep as u64).0))
            .collect();
        let dd_latencies = with_dd.then(|| {
            let session: Vec<_> = batches
                .iter()
                .flat_map(|(_, d)| [(d.clone(), Vec::new()), (Vec::new(), d.clone())])
                .collect();
            let (_, latencies, _) = differential_session(&workload, &session);
            latencies.into_iter().step_by(2).collect::<Vec<_>>()
        });
        for k in SIZES {
            let mut fields = vec![
                format!("\"workload\": {:?}", workload.name),
                format!("\"k\": {k}"),
                format!("\"model\": {model}"),
                format!("\"dred_scratch_s\": {}", scratch.as_secs_f64()),
            ];
            let of_k: Vec<usize> = (0..batches.len()).filter(|&i| batches[i].0 == k).collect();
            let mut true_change = Vec::new();
            for &(name, strategy) in strategies {
                let mut times = Vec::new();
                let mut runs: Vec<UpdateCounts> = Vec::new();
                for &i in &of_k {
                    let mut program = base.clone();
                    let started = Instant::now();
                    let counts = program.update_using(&batches[i].1, &[], strategy);
                    times.push(started.elapsed());
                    if strategy == Strategy::BackwardForward {
                        true_change.push(model - program.derived_len() - inputs + k);
                    }
                    runs.push(counts);
                    drop(program);
                }
                let checked: Vec<usize> =
                    runs.iter().map(|c| c.checked.max(c.overdeleted)).collect();
                let work: Vec<u64> = runs.iter().map(|c| c.work).collect();
                let ran: Vec<String> = runs
                    .iter()
                    .map(|c| format!("{:?}", c.strategy.name()))
                    .collect();
                fields.push(format!(
                    "\"{name}\": {{\"median_s\": {}, \"checked\": {checked:?}, \"work\": {work:?}, \"ran\": [{}]}}",
                    median(times).as_secs_f64(),
                    ran.join(", ")
                ));
            }
            fields.push(format!("\"true_change\": {true_change:?}"));
            let ascent: Vec<Duration> = of_k
                .iter()
                .map(|&i| {
                    let after = apply(&workload, &batches[i].1, &[]);
                    let started = Instant::now();
                    std::hint::black_box(ascent_scratch(&after));
                    started.elapsed()
                })
                .collect();
            fields.push(format!(
                "\"ascent_recompute_s\": {}",
                median(ascent).as_secs_f64()
            ));
            if let Some(latencies) = &dd_latencies {
                let dd: Vec<Duration> = of_k.iter().map(|&i| latencies[i]).collect();
                fields.push(format!("\"differential_s\": {}", median(dd).as_secs_f64()));
            }
            println!("{{{}}}", fields.join(", "));
        }
    }
}
