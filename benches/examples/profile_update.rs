//! Repeats one update on one workload, for profilers: `profile_update <workload index>
//! <dred|altproof|backward_forward|recompute|auto|reinsert> <k> <repetitions> [seed]`: the
//! deletion of `k` input facts (chosen by `update_facts` with `seed`, 7 by default) with
//! that strategy, or (`reinsert`) their insertion into what the deletion left. An index
//! `g<i>` names one of `general_workloads` instead. Prints the mean, fastest and median
//! update. `DRED_THREADS` and `DRED_PARALLEL_FROM` set the program's thread count and
//! split threshold (`dred::Settings`); the defaults otherwise.
//!
//! With `PERF_CTL` naming perf's control FIFO, only the updates are profiled, not the
//! materialization and the clones around them:
//! `mkfifo ctl; PERF_CTL=ctl perf record -g --control=fifo:ctl -D -1 profile_update 1 altproof 1 30`.
use std::io::Write;
use std::time::{Duration, Instant};

use dred::Strategy;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `g<i>` names the general programs' workloads (`general_workloads`).
    let w = &match args[1].strip_prefix('g') {
        Some(_) => dred_benches::general_workloads(),
        None => dred_benches::workloads(),
    }[args[1].trim_start_matches('g').parse::<usize>().unwrap()];
    let reinsert = args[2] == "reinsert";
    let strategy = match args[2].as_str() {
        "dred" => Strategy::DRed,
        "altproof" => Strategy::AltProof,
        "backward_forward" => Strategy::BackwardForward,
        "recompute" => Strategy::Recompute,
        _ => Strategy::Auto,
    };
    let k: usize = args[3].parse().unwrap();
    let reps: usize = args[4].parse().unwrap();
    let started = Instant::now();
    let mut settings = dred::Settings::default();
    if let Ok(threads) = std::env::var("DRED_THREADS") {
        settings = settings.with_threads(threads.parse().expect("DRED_THREADS is a count"));
    }
    if let Ok(units) = std::env::var("DRED_PARALLEL_FROM") {
        settings =
            settings.with_parallel_from(units.parse().expect("DRED_PARALLEL_FROM is a count"));
    }
    let mut base = dred_benches::engines::DredProgram::from_scratch_with(w, settings).0;
    let materialized = started.elapsed();
    let seed = args.get(5).map_or(7, |s| s.parse().unwrap());
    let (deletions, _) = dred_benches::update_facts(w, k, seed);
    let (deletions, insertions) = if reinsert {
        base.update_using(&deletions, &[], Strategy::AltProof);
        (Vec::new(), deletions)
    } else {
        (deletions, Vec::new())
    };
    let profiling = std::env::var_os("PERF_CTL").is_some();
    let mut profiler = std::env::var("PERF_CTL").ok().map(|fifo| {
        std::fs::OpenOptions::new()
            .write(true)
            .open(fifo)
            .expect("PERF_CTL names perf's control FIFO")
    });
    let mut tell = |command: &str| {
        if let Some(fifo) = &mut profiler {
            fifo.write_all(command.as_bytes())
                .expect("perf reads its FIFO");
        }
    };
    let mut times: Vec<Duration> = Vec::new();
    for _ in 0..reps {
        let mut p = base.clone();
        tell("enable\n");
        settle(profiling);
        let started = Instant::now();
        let counts = p.update_using(&deletions, &insertions, strategy);
        times.push(started.elapsed());
        tell("disable\n");
        settle(profiling);
        std::hint::black_box(counts);
    }
    let mean = times.iter().sum::<Duration>() / reps as u32;
    times.sort();
    println!(
        "{} (materialized in {materialized:?}) {mean:?} per update, fastest {:?}, median {:?}",
        w.name,
        times[0],
        times[times.len() / 2]
    );
}

/// Gives perf time to act on a command written to its FIFO: it reads the FIFO between
/// samples, and without a pause the clone before an update and the drop after it were
/// sampled as part of the update.
fn settle(profiling: bool) {
    if profiling {
        std::thread::sleep(Duration::from_millis(20));
    }
}
