//! dred on one thread and on two, side by side in one run (#56): for every workload of the
//! suite and of `general_workloads`, the from-scratch time with `threads = 1` and
//! `threads = 2`, and ascent's parallel mode's on pools of 1 and 2 threads, in rotation,
//! `DRED_THREADS_REPS` (default 3) times each, and the median of each; then the same for updates of 1, 100 and 1000 input facts deleted and as many
//! inserted (DRed, the default strategy, on a clone made outside the timing), but on the
//! alias analysis, where DRed over-deletes nearly the whole model (a minute an update).
//! `DRED_THREADS_WORKLOAD` (a part of a name) measures only the workloads it names.
//!
//! Prints one JSON object per workload: the model's size and the medians in seconds.

use std::time::{Duration, Instant};

use dred::{Settings, Strategy};
use dred_benches::ascent::{ascent_par_scratch, pool};
use dred_benches::engines::DredProgram;
use dred_benches::{env_or, general_workloads, median, update_facts, workloads};

/// The update sizes measured.
const SIZES: [usize; 3] = [1, 100, 1000];

fn main() {
    let repetitions: usize = env_or("DRED_THREADS_REPS", 3).max(1);
    let only: String = env_or("DRED_THREADS_WORKLOAD", String::new());
    let from: u64 = env_or("DRED_THREADS_FROM", dred::runtime::settings::PARALLEL_FROM);
    let with = |threads| {
        Settings::default()
            .with_threads(threads)
            .with_parallel_from(from)
    };
    let mut all = workloads();
    all.extend(
        general_workloads()
            .into_iter()
            .filter(|w| w.name.starts_with("alias")),
    );
    for workload in all.into_iter().filter(|w| w.name.contains(&only)) {
        let mut scratch: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
        let mut ascent: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
        let pools = [pool(1), pool(2)];
        let mut programs = Vec::new();
        for _ in 0..repetitions {
            for (slot, threads) in [1, 2].into_iter().enumerate() {
                let started = Instant::now();
                let (program, _) = DredProgram::from_scratch_with(&workload, with(threads));
                scratch[slot].push(started.elapsed());
                if programs.len() < 2 {
                    programs.push(program);
                }
                let started = Instant::now();
                ascent_par_scratch(&workload, &pools[slot]);
                ascent[slot].push(started.elapsed());
            }
        }
        let seconds = |samples: &[Duration]| median(samples.to_vec()).as_secs_f64();
        let mut fields = vec![
            format!("\"workload\": {:?}", workload.name),
            format!("\"derived\": {}", programs[0].derived_len()),
            format!("\"scratch_1_s\": {}", seconds(&scratch[0])),
            format!("\"scratch_2_s\": {}", seconds(&scratch[1])),
            format!("\"ascent_par_1_s\": {}", seconds(&ascent[0])),
            format!("\"ascent_par_2_s\": {}", seconds(&ascent[1])),
        ];
        let sizes = match workload.name.starts_with("alias") {
            true => &[][..],
            false => &SIZES[..],
        };
        for &k in sizes {
            let mut times: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
            for rep in 0..repetitions {
                let (deletions, insertions) = update_facts(&workload, k, 31 + rep as u64);
                for (slot, base) in programs.iter().enumerate() {
                    let mut program = base.clone();
                    let started = Instant::now();
                    program.update_using(&deletions, &insertions, Strategy::DRed);
                    times[slot].push(started.elapsed());
                }
            }
            for (slot, threads) in [1, 2].into_iter().enumerate() {
                let median = seconds(&times[slot]);
                fields.push(format!("\"update_{k}_{threads}_s\": {median}"));
            }
        }
        println!("{{{}}}", fields.join(", "));
    }
}
