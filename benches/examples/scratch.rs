//! A quick look (best of 3, not a benchmark) at from-scratch times of dred, with its
//! default settings and on one thread, and of the fastest peers on every workload:
//! `cargo run --release -p dred-benches --example scratch [workload index]`
//! (`DRED_SCRATCH_REPS` sets how many runs the best is taken of).
use dred_benches::engines::*;
use std::time::{Duration, Instant};

fn best<T>(repetitions: usize, f: impl Fn() -> T) -> Duration {
    (0..repetitions)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(f());
            started.elapsed()
        })
        .min()
        .unwrap()
}

fn main() {
    let only: Option<usize> = std::env::args().nth(1).and_then(|a| a.parse().ok());
    let repetitions: usize = std::env::var("DRED_SCRATCH_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3)
        .max(1);
    let one_thread = dred::Settings::default().with_threads(1);
    for (i, w) in dred_benches::workloads().iter().enumerate() {
        if only.is_some_and(|o| o != i) {
            continue;
        }
        let dred = best(repetitions, || DredProgram::from_scratch(w).1);
        let dred_1 = best(repetitions, || {
            DredProgram::from_scratch_with(w, one_thread).1
        });
        let ascent = best(repetitions, || ascent_scratch(w));
        let datafrog = best(repetitions, || datafrog_scratch(w));
        let peer = ascent.min(datafrog).as_secs_f64();
        println!(
            "{:45} dred {:>10.1?} (1 thread {:>10.1?}) ascent {:>10.1?} datafrog {:>10.1?}  \
             dred/best {:.2} (1 thread {:.2})",
            w.name,
            dred,
            dred_1,
            ascent,
            datafrog,
            dred.as_secs_f64() / peer,
            dred_1.as_secs_f64() / peer,
        );
    }
}
