//! differential-dataflow (timely, one worker) on every workload: from-scratch time, then the
//! median latency of 11 deletions of k input facts for each update size (each followed by
//! re-inserting them, unmeasured). Prints one JSON object per line.

use std::time::Duration;

use dred_benches::engines::differential_session;
use dred_benches::{update_facts, update_sizes, workloads};

const REPETITIONS: usize = 11;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let only: Option<String> = std::env::args().nth(1);
    for workload in workloads() {
        if only.as_deref().is_some_and(|o| !workload.name.contains(o)) {
            continue;
        }
        let sizes = update_sizes(&workload);
        let mut batches = Vec::new();
        for &k in &sizes {
            let (deletions, _) = update_facts(&workload, k, 7);
            for _ in 0..REPETITIONS {
                batches.push((deletions.clone(), Vec::new()));
                batches.push((Vec::new(), deletions.clone()));
            }
        }
        let (scratch, latencies, facts) = differential_session(&workload, &batches);
        let mut deletes = latencies.chunks(2).map(|pair| pair[0]);
        let per_size: Vec<String> = sizes
            .iter()
            .map(|k| {
                let samples: Vec<Duration> = deletes.by_ref().take(REPETITIONS).collect();
                format!("\"{k}\": {}", median(samples).as_secs_f64())
            })
            .collect();
        println!(
            "{{\"workload\": {:?}, \"facts\": {facts}, \"scratch_s\": {}, \"delete_s\": {{{}}}}}",
            workload.name,
            scratch.as_secs_f64(),
            per_size.join(", ")
        );
    }
}
