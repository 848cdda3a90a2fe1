//! Prints each workload's input and derived fact counts and dred's from-scratch time.
fn main() {
    for w in dred_benches::workloads() {
        let inputs: usize = w.inputs.iter().map(|(_, f)| f.len()).sum();
        let started = std::time::Instant::now();
        let (_, derived) = dred_benches::engines::DredProgram::from_scratch(&w);
        println!(
            "{:45} inputs {:7} derived {:9} dred {:?}",
            w.name,
            inputs,
            derived,
            started.elapsed()
        );
    }
}
