//! Peak memory of one engine on one workload, in a process of its own:
//! `peak_memory <engine> <workload index>` prints the peak resident set (KiB) after the
//! from-scratch materialization, and for dred also after a soak of update batches
//! (1-fact deletions and re-insertions), which must not grow it; then, for dred, what its
//! relations keep allocated (`heap_bytes`, in bytes) after each of the two. The engine
//! `dred-threads-1` is dred from scratch on one thread (`dred` runs on one per core).

use dred_benches::engines::*;
use dred_benches::{update_facts, workloads};

fn peak_kib() -> u64 {
    dred_benches::status_kib("VmHWM")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let engine = args.next().expect("engine");
    let index: usize = args.next().expect("workload index").parse().expect("index");
    let soak: usize = args
        .next()
        .map_or(200, |s| s.parse().expect("soak batches"));
    let workload = &workloads()[index];
    let scratch_kib;
    // After the soak (dred only): the peak, and what its relations kept allocated before
    // and after it.
    let mut after_soak = None;
    match engine.as_str() {
        "dred" => {
            let mut program = DredProgram::materialize(workload);
            scratch_kib = peak_kib();
            let materialized = program.heap_bytes();
            for seed in 0..soak as u64 {
                let (deletions, _) = update_facts(workload, 1, 100 + seed);
                program.update_using(&deletions, &[], dred::Strategy::Auto);
                program.update_using(&[], &deletions, dred::Strategy::Auto);
            }
            after_soak = Some((peak_kib(), materialized, program.heap_bytes()));
            std::hint::black_box(program.derived_len());
        }
        // dred from scratch with `threads` 1 (the `dred` engine runs with the default, one
        // thread per core): what splitting rounds over threads adds to the peak.
        "dred-threads-1" => {
            let settings = dred::Settings::default().with_threads(1);
            std::hint::black_box(DredProgram::from_scratch_with(workload, settings));
            scratch_kib = peak_kib();
        }
        // The process with the workload's inputs generated and no engine run: what every
        // engine's peak includes.
        "baseline" => {
            std::hint::black_box(workload);
            scratch_kib = peak_kib();
        }
        "ascent" => {
            std::hint::black_box(ascent_scratch(workload));
            scratch_kib = peak_kib();
        }
        "crepe" => {
            std::hint::black_box(crepe_scratch(workload));
            scratch_kib = peak_kib();
        }
        "datafrog" => {
            std::hint::black_box(datafrog_scratch(workload));
            scratch_kib = peak_kib();
        }
        "differential" => {
            let (deletions, _) = update_facts(workload, 1, 100);
            let batches = vec![(deletions.clone(), Vec::new()), (Vec::new(), deletions)];
            std::hint::black_box(differential_session(workload, &batches));
            scratch_kib = peak_kib();
        }
        "forest-full" | "forest-query" => {
            use dred_benches::engines::dred_programs::linear::{FromZero, TcLinear, E};
            let edges = dred_benches::query_forest()
                .into_iter()
                .map(|(a, b)| E(a, b));
            if engine == "forest-full" {
                let inputs = dred::Batch::new().insert_all(edges);
                std::hint::black_box(TcLinear::materialize(inputs).0.facts());
            } else {
                let inputs = dred::Batch::new().insert_all(edges);
                std::hint::black_box(FromZero::materialize(inputs).0.facts());
            }
            scratch_kib = peak_kib();
        }
        other => panic!("unknown engine {other}"),
    }
    match after_soak {
        Some((soak_kib, materialized, updated)) => {
            println!("{scratch_kib} {soak_kib} {materialized} {updated}")
        }
        None => println!("{scratch_kib}"),
    }
}
