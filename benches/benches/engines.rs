//! The suite: from-scratch materialization for every engine, and dred's update latency for
//! deletions, re-insertions and mixed batches of 1, 10, 100 and 1000 input facts, with
//! each maintenance strategy (DRed only at the sizes of `update_sizes`).
//! differential-dataflow's update latency is measured by `src/bin/differential.rs`
//! (its from-scratch build would otherwise be repeated for every criterion sample), and the
//! recompute guard's bound by `src/bin/guard.rs` (pairs, not medians minutes apart).
//!
//! Run the whole suite and regenerate BENCHMARKS.md with `bash benches/run.sh`.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use dred::Strategy;
use dred_benches::engines::*;
use dred_benches::*;

fn scratch(c: &mut Criterion) {
    for workload in workloads() {
        let mut group = c.benchmark_group(format!("scratch/{}", workload.name));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500));
        group.measurement_time(Duration::from_secs(8));
        group.bench_function("dred", |b| {
            b.iter(|| DredProgram::from_scratch(&workload).1)
        });
        group.bench_function("ascent", |b| b.iter(|| ascent_scratch(&workload)));
        group.bench_function("crepe", |b| b.iter(|| crepe_scratch(&workload)));
        group.bench_function("datafrog", |b| b.iter(|| datafrog_scratch(&workload)));
        group.finish();
    }
}

fn updates(c: &mut Criterion) {
    for workload in workloads() {
        let base = DredProgram::materialize(&workload);
        // Where closures are kept by reachability, the support checks they replace too.
        let by_stamps = base
            .reachability()
            .then(|| DredProgram::materialize_checking_stamps(&workload));
        let mut group = c.benchmark_group(format!("update/{}", workload.name));
        // Every iteration starts from a clone of the materialization (not timed, but paid):
        // a short measurement keeps the clones of million-fact programs affordable.
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(200));
        group.measurement_time(Duration::from_secs(1));
        let dred_sizes = update_sizes(&workload);
        for k in UPDATE_SIZES {
            let (deletions, _) = update_facts(&workload, k, 7);
            let (mixed_del, mixed_ins) = &mixed_batch(&workload, k);
            // Alternative proofs alone, like DRed, are hopeless on some large batches (that
            // is what Auto is for): measured on small ones only.
            let mut strategies = vec![("auto", Strategy::Auto)];
            if k <= ALT_PROOF_MAX_BATCH {
                strategies.insert(0, ("altproof", Strategy::AltProof));
            }
            if dred_sizes.contains(&k) {
                strategies.insert(0, ("dred", Strategy::DRed));
            }
            for (name, strategy) in strategies {
                group.bench_function(format!("{name}/delete-{k}"), |b| {
                    b.iter_batched(
                        || base.clone(),
                        |mut p| {
                            p.update_using(&deletions, &[], strategy);
                            p
                        },
                        BatchSize::PerIteration,
                    )
                });
                group.bench_function(format!("{name}/mixed-{k}"), |b| {
                    b.iter_batched(
                        || base.clone(),
                        |mut p| {
                            p.update_using(mixed_del, mixed_ins, strategy);
                            p
                        },
                        BatchSize::PerIteration,
                    )
                });
            }
            if let Some(by_stamps) = by_stamps.as_ref().filter(|_| k <= ALT_PROOF_MAX_BATCH) {
                group.bench_function(format!("stamps/delete-{k}"), |b| {
                    b.iter_batched(
                        || by_stamps.clone(),
                        |mut p| {
                            p.update_using(&deletions, &[], Strategy::AltProof);
                            p
                        },
                        BatchSize::PerIteration,
                    )
                });
            }
            // Insertion is the same semi-naive phase under every strategy.
            let mut deleted = base.clone();
            deleted.update_using(&deletions, &[], Strategy::AltProof);
            group.bench_function(format!("any/reinsert-{k}"), |b| {
                b.iter_batched(
                    || deleted.clone(),
                    |mut p| {
                        p.update(&[], &deletions);
                        p
                    },
                    BatchSize::PerIteration,
                )
            });
        }
        group.finish();
    }
}

criterion_group!(benches, scratch, updates);
criterion_main!(benches);
