//! The peers' recompute after a change: for every workload and update size, ascent and
//! datafrog materialize from scratch the inputs left after deleting the same k input facts
//! that dred's updates delete (`"change": "delete"`), and after the same mixed batch (the
//! ⌈k/2⌉ first of those deletions with ⌊k/2⌋ new facts, `"change": "mixed"`),
//! `DRED_RECOMPUTE_REPS` times (default 3; which peer runs first alternates), and the median
//! is kept. (After a re-insertion the inputs are the workload's own: its from-scratch time.)
//! A large deletion leaves a much smaller model (1000 of non-linear random's 1500 edges take
//! away all but 1k of its 296k facts), so the peers' from-scratch time on the whole workload
//! would overstate what they pay to catch up.
//! crepe is not run again: it is the slowest of the three from scratch on every workload.
//! Prints one JSON object per line; `DRED_RECOMPUTE_WORKLOAD` (a part of a workload's name)
//! measures only the workloads it names.

use std::time::{Duration, Instant};

use dred_benches::engines::{ascent_scratch, datafrog_scratch};
use dred_benches::{
    apply, env_or, median, mixed_batch, update_facts, workloads, Workload, UPDATE_SIZES,
};

/// A peer's from-scratch materialization, returning how many facts it derived.
type Scratch = fn(&Workload) -> usize;

/// The peers whose recompute is measured, in the order of the printed fields.
const PEERS: [(&str, Scratch); 2] = [("ascent", ascent_scratch), ("datafrog", datafrog_scratch)];

fn main() {
    let repetitions: usize = env_or("DRED_RECOMPUTE_REPS", 3);
    let only: String = env_or("DRED_RECOMPUTE_WORKLOAD", String::new());
    for workload in workloads().into_iter().filter(|w| w.name.contains(&only)) {
        for (change, k) in UPDATE_SIZES
            .into_iter()
            .flat_map(|k| [("delete", k), ("mixed", k)])
        {
            let (deletions, insertions) = match change {
                "delete" => (update_facts(&workload, k, 7).0, Vec::new()),
                _ => mixed_batch(&workload, k),
            };
            let changed = apply(&workload, &deletions, &insertions);
            let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); PEERS.len()];
            let mut derived = None;
            for repetition in 0..repetitions {
                for turn in 0..PEERS.len() {
                    let peer = (turn + repetition) % PEERS.len();
                    let started = Instant::now();
                    let facts = std::hint::black_box(PEERS[peer].1(&changed));
                    samples[peer].push(started.elapsed());
                    assert_eq!(
                        *derived.get_or_insert(facts),
                        facts,
                        "the peers disagree on {} after the {change} of {k}",
                        workload.name
                    );
                }
            }
            let fields: Vec<String> = PEERS
                .iter()
                .zip(samples)
                .map(|((name, _), times)| format!("\"{name}_s\": {}", median(times).as_secs_f64()))
                .collect();
            println!(
                "{{\"workload\": {:?}, \"change\": \"{change}\", \"k\": {k}, \"derived\": {}, {}}}",
                workload.name,
                derived.unwrap_or(0),
                fields.join(", ")
            );
        }
    }
}
