//! Peak live heap of one from-scratch materialization with a given number of threads,
//! beside what the peak resident set says (`peak_memory`): how much of a peak is the
//! engine's data and how much the system allocator's keeping:
//! `cargo run --release -p dred-benches --example heap_peak <workload index> <threads>`.
use dred_benches::engines::DredProgram;
use dred_benches::{peak_live_bytes, status_kib, Counting};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn main() {
    let mut args = std::env::args().skip(1);
    let index: usize = args.next().expect("workload index").parse().expect("index");
    let threads: usize = args.next().map_or(1, |t| t.parse().expect("threads"));
    let workload = &dred_benches::workloads()[index];
    let inputs = peak_live_bytes();
    let settings = dred::Settings::default().with_threads(threads);
    std::hint::black_box(DredProgram::from_scratch_with(workload, settings));
    let mib = |bytes: usize| bytes as f64 / f64::from(1 << 20);
    println!(
        "{} threads {threads}: peak live heap {:.2} MiB (inputs {:.2} MiB), peak resident set {:.2} MiB",
        workload.name,
        mib(peak_live_bytes()),
        mib(inputs),
        status_kib("VmHWM") as f64 / 1024.0,
    );
}
