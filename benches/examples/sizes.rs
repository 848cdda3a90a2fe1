//! Prints each workload's input and derived fact counts, dred's from-scratch time, and what
//! its relations keep allocated (`heap_bytes`), in all and per fact held.
fn main() {
    for w in dred_benches::workloads() {
        let inputs: usize = w.inputs.iter().map(|(_, f)| f.len()).sum();
        let started = std::time::Instant::now();
        let (program, derived) = dred_benches::engines::DredProgram::from_scratch(&w);
        let elapsed = started.elapsed();
        let bytes = program.heap_bytes();
        println!(
            "{:45} inputs {:7} derived {:9} dred {:?} tables {:.1} MiB ({:.1} bytes a fact)",
            w.name,
            inputs,
            derived,
            elapsed,
            bytes as f64 / (1 << 20) as f64,
            bytes as f64 / (inputs + derived) as f64
        );
    }
}
