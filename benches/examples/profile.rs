//! Materializes one workload (by index) from scratch, for profilers.
fn main() {
    let index: usize = std::env::args().nth(1).map_or(0, |a| a.parse().unwrap());
    let w = &dred_benches::workloads()[index];
    let (_, derived) = dred_benches::engines::DredProgram::from_scratch(w);
    println!("{} {derived}", w.name);
}
