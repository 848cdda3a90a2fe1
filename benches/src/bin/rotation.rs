//! From scratch with the engines in rotation: for every workload, one round to warm up and
//! then `DRED_ROTATIONS` rounds (default 7), in each of which dred, ascent and datafrog
//! materialize the workload once, the one that starts moving on by one each round. Prints,
//! one JSON object per line, each engine's median time and the median, least and greatest
//! of the rounds' ratios dred / the faster peer of that round.
//!
//! Criterion measures one engine for several seconds, then the next: a host that slows down
//! for a minute moves one engine's median and not another's (run S: linear chain 609 ms in
//! criterion, 0.43 s alone minutes later). A round's engines run within seconds of each
//! other, so its ratio sees the same host. crepe is not run: it is the slowest from scratch
//! on every workload. `DRED_ROTATION_WORKLOAD` (a part of a workload's name) measures only
//! the workloads it names.

use std::time::Instant;

use dred_benches::engines::{ascent_scratch, datafrog_scratch, DredProgram};
use dred_benches::{env_or, rotation_fields, workloads, Workload};

/// An engine's from-scratch materialization, returning how many facts it derived.
type Scratch = fn(&Workload) -> usize;

fn dred_scratch(workload: &Workload) -> usize {
    DredProgram::from_scratch(workload).1
}

/// The engines, dred first, in the order of the printed fields.
const ENGINES: [(&str, Scratch); 3] = [
    ("dred", dred_scratch),
    ("ascent", ascent_scratch),
    ("datafrog", datafrog_scratch),
];

fn main() {
    let rounds: usize = env_or("DRED_ROTATIONS", 7).max(1);
    let only: String = env_or("DRED_ROTATION_WORKLOAD", String::new());
    for workload in workloads().into_iter().filter(|w| w.name.contains(&only)) {
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); ENGINES.len()];
        let mut ratios = Vec::new();
        let mut derived = None;
        // A first round warms up (the allocator's arenas, the page cache) and is not kept.
        for round in 0..=rounds {
            let mut this_round = [0.0; ENGINES.len()];
            for turn in 0..ENGINES.len() {
                let engine = (turn + round) % ENGINES.len();
                let started = Instant::now();
                let facts = std::hint::black_box(ENGINES[engine].1(&workload));
                this_round[engine] = started.elapsed().as_secs_f64();
                assert_eq!(
                    *derived.get_or_insert(facts),
                    facts,
                    "the engines disagree on {}",
                    workload.name
                );
            }
            if round == 0 {
                continue;
            }
            let fastest_peer = this_round[1..]
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min);
            ratios.push(this_round[0] / fastest_peer);
            for (engine, time) in this_round.into_iter().enumerate() {
                times[engine].push(time);
            }
        }
        let names = ENGINES.iter().map(|(name, _)| *name);
        println!(
            "{{\"workload\": {:?}, \"rounds\": {rounds}, {}}}",
            workload.name,
            rotation_fields(names.zip(times), "ratio", ratios)
        );
    }
}
