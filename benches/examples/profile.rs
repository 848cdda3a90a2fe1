//! Materializes one workload (by index) from scratch, for profilers:
//! `profile <workload index> [threads]` (threads: the default settings' when omitted).
fn main() {
    let mut args = std::env::args().skip(1);
    let index: usize = args.next().map_or(0, |a| a.parse().unwrap());
    let mut settings = dred::Settings::default();
    if let Some(threads) = args.next() {
        settings = settings.with_threads(threads.parse().unwrap());
    }
    let w = &dred_benches::workloads()[index];
    let (_, derived) = dred_benches::engines::DredProgram::from_scratch_with(w, settings);
    println!("{} {derived}", w.name);
}
