//! differential-dataflow (timely, one worker) on every workload: from-scratch time, then the
//! median latency of `DRED_DD_REPS` (default 11) deletions of k input facts for each update
//! size (each followed by re-inserting them, unmeasured); sizes are the suite's, or those
//! listed in `DRED_DD_SIZES` (e.g. `1,10`). Prints one JSON object per line.

use std::time::Duration;

use dred_benches::engines::differential_session;
use dred_benches::{env_or, median, update_facts, update_sizes, workloads};

fn main() {
    let only: Option<String> = std::env::args().nth(1);
    let repetitions: usize = env_or("DRED_DD_REPS", 11);
    let listed: Option<Vec<usize>> = std::env::var("DRED_DD_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|k| k.trim().parse().ok()).collect());
    for workload in workloads() {
        if only.as_deref().is_some_and(|o| !workload.name.contains(o)) {
            continue;
        }
        let sizes = listed.clone().unwrap_or_else(|| update_sizes(&workload));
        let mut batches = Vec::new();
        for &k in &sizes {
            let (deletions, _) = update_facts(&workload, k, 7);
            for _ in 0..repetitions {
                batches.push((deletions.clone(), Vec::new()));
                batches.push((Vec::new(), deletions.clone()));
            }
        }
        let (scratch, latencies, facts) = differential_session(&workload, &batches);
        let mut deletes = latencies.chunks(2).map(|pair| pair[0]);
        let per_size: Vec<String> = sizes
            .iter()
            .map(|k| {
                let samples: Vec<Duration> = deletes.by_ref().take(repetitions).collect();
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
