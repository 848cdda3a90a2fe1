//! A quick look (best of 3, not a benchmark) at from-scratch times of dred and the fastest
//! peers on every workload: `cargo run --release -p dred-benches --example scratch`.
use dred_benches::engines::*;
use std::time::{Duration, Instant};

fn best<T>(f: impl Fn() -> T) -> Duration {
    (0..3)
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
    for (i, w) in dred_benches::workloads().iter().enumerate() {
        if only.is_some_and(|o| o != i) {
            continue;
        }
        let dred = best(|| DredProgram::from_scratch(w).1);
        let ascent = best(|| ascent_scratch(w));
        let datafrog = best(|| datafrog_scratch(w));
        println!(
            "{:45} dred {:>10.1?} ascent {:>10.1?} datafrog {:>10.1?}  dred/best {:.2}",
            w.name,
            dred,
            ascent,
            datafrog,
            dred.as_secs_f64() / ascent.min(datafrog).as_secs_f64()
        );
    }
}
