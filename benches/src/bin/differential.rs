//! differential-dataflow (timely, one worker) on every workload: from-scratch time, then for
//! each update size k the median latency of `DRED_DD_REPS` (default 11) deletions of k input
//! facts, of their re-insertions, and of mixed batches (the ⌈k/2⌉ first of those deletions
//! with ⌊k/2⌋ new facts, each followed by its inverse, unmeasured): the batches dred's
//! benches apply. Sizes are the suite's, or those listed in `DRED_DD_SIZES` (e.g. `1,10`).
//! Prints one JSON object per line.

use std::time::Duration;

use dred_benches::engines::differential_session;
use dred_benches::{env_or, median, mixed_batch, update_facts, update_sizes, workloads, Workload};

/// The batches of one repetition for size `k`, in order; those measured name their field.
fn repetition(
    workload: &Workload,
    k: usize,
) -> [(dred_benches::UpdateBatch, Option<&'static str>); 4] {
    let (deletions, _) = update_facts(workload, k, 7);
    let (mixed_del, mixed_ins) = mixed_batch(workload, k);
    [
        ((deletions.clone(), Vec::new()), Some("delete_s")),
        ((Vec::new(), deletions), Some("insert_s")),
        ((mixed_del.clone(), mixed_ins.clone()), Some("mixed_s")),
        ((mixed_ins, mixed_del), None),
    ]
}

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
        let mut fields = Vec::new();
        for &k in &sizes {
            let batches_of_k = repetition(&workload, k);
            for _ in 0..repetitions {
                for (batch, field) in batches_of_k.clone() {
                    batches.push(batch);
                    fields.push(field.map(|field| (field, k)));
                }
            }
        }
        let (scratch, latencies, facts) = differential_session(&workload, &batches);
        let mut samples: std::collections::BTreeMap<(&str, usize), Vec<Duration>> =
            Default::default();
        for (field, latency) in fields.into_iter().zip(latencies) {
            if let Some(key) = field {
                samples.entry(key).or_default().push(latency);
            }
        }
        let per_field = ["delete_s", "insert_s", "mixed_s"].map(|field| {
            let per_size: Vec<String> = sizes
                .iter()
                .map(|&k| {
                    let times = samples.remove(&(field, k)).unwrap_or_default();
                    format!("\"{k}\": {}", median(times).as_secs_f64())
                })
                .collect();
            format!("\"{field}\": {{{}}}", per_size.join(", "))
        });
        println!(
            "{{\"workload\": {:?}, \"facts\": {facts}, \"scratch_s\": {}, {}}}",
            workload.name,
            scratch.as_secs_f64(),
            per_field.join(", ")
        );
    }
}
