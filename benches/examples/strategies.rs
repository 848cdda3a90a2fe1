//! A quick look (best of 3, not a benchmark) at each strategy's 1-fact and k-fact deletion
//! on every workload, with the counts the report gives. `cargo run --release -p
//! dred-benches --example strategies [k] [workload index]`. `DRED_STRATEGIES` narrows the
//! strategies: `alt` (alternative proofs), `fast` (those and Auto), `ar` (those and a
//! recompute, to compare an update's rows and time with a recompute's). `DRED_STAMPS=1`
//! leaves closures to the support checks instead of keeping them by reachability.
use dred::Strategy;
use dred_benches::engines::DredProgram;
use std::time::{Duration, Instant};

fn main() {
    let k: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1);
    let only: Option<usize> = std::env::args().nth(2).and_then(|a| a.parse().ok());
    for (i, w) in dred_benches::workloads().into_iter().enumerate() {
        if only.is_some_and(|o| o != i) {
            continue;
        }
        let started = Instant::now();
        let base = match std::env::var_os("DRED_STAMPS") {
            Some(_) => DredProgram::materialize_checking_stamps(&w),
            None => DredProgram::materialize(&w),
        };
        let scratch = started.elapsed();
        let (deletions, _) = dred_benches::update_facts(&w, k, 7);
        println!("{} (from scratch {:?})", w.name, scratch);
        let strategies = match std::env::var("DRED_STRATEGIES").as_deref() {
            Ok("alt") => vec![Strategy::AltProof],
            Ok("fast") => vec![Strategy::AltProof, Strategy::Auto],
            Ok("ar") => vec![Strategy::AltProof, Strategy::Recompute],
            _ => vec![Strategy::DRed, Strategy::AltProof, Strategy::Auto],
        };
        for strategy in strategies {
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
                "  {:?} -> {:?}: {:?}  unreachable {} checked {} restamped {} lost {} rederived {} work {} phases {:?} rounds {:?}",
                strategy, c.strategy, best, c.unreachable, c.checked, c.restamped, c.overdeleted, c.rederived, c.work, c.phases, c.rounds
            );
        }
    }
}
