//! A quick look (best of 3, not a benchmark) at each strategy's 1-fact and k-fact deletion
//! on every workload, with the counts the report gives. `cargo run --release -p
//! dred-benches --example strategies [k]`.
use dred::Strategy;
use dred_benches::engines::DredProgram;
use std::time::{Duration, Instant};

fn main() {
    let k: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1);
    for w in dred_benches::workloads() {
        let started = Instant::now();
        let base = DredProgram::materialize(&w);
        let scratch = started.elapsed();
        let (deletions, _) = dred_benches::update_facts(&w, k, 7);
        println!("{} (from scratch {:?})", w.name, scratch);
        for strategy in [Strategy::DRed, Strategy::AltProof, Strategy::Auto] {
            let mut best = Duration::MAX;
            let mut counts = None;
            for _ in 0..3 {
                let mut p = base.clone();
                let started = Instant::now();
                let c = p.update_using(&deletions, &[], strategy);
                best = best.min(started.elapsed());
                counts = Some(c);
                drop(p);
            }
            let c = counts.unwrap();
            println!(
                "  {:?} -> {:?}: {:?}  checked {} lost {} rederived {} work {} phases {:?}",
                strategy, c.strategy, best, c.checked, c.overdeleted, c.rederived, c.work, c.phases
            );
        }
    }
}
