//! Repeats one update on one workload, for profilers: `profile_update <workload index>
//! <dred|altproof|auto> <k> <repetitions>`.
use dred::Strategy;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let w = &dred_benches::workloads()[args[1].parse::<usize>().unwrap()];
    let strategy = match args[2].as_str() {
        "dred" => Strategy::DRed,
        "altproof" => Strategy::AltProof,
        _ => Strategy::Auto,
    };
    let k: usize = args[3].parse().unwrap();
    let reps: usize = args[4].parse().unwrap();
    let base = dred_benches::engines::DredProgram::materialize(w);
    let (deletions, _) = dred_benches::update_facts(w, k, 7);
    let mut total = std::time::Duration::ZERO;
    for _ in 0..reps {
        let mut p = base.clone();
        let started = std::time::Instant::now();
        let counts = p.update_using(&deletions, &[], strategy);
        total += started.elapsed();
        std::hint::black_box(counts);
    }
    println!("{} {:?} per update", w.name, total / reps as u32);
}
