//! The peers' recompute after a change, and dred's update on the same change beside it:
//! for every workload and update size, ascent and datafrog materialize from scratch the
//! inputs left after deleting the same k input facts that dred's updates delete
//! (`"change": "delete"`), after the same mixed batch (the ⌈k/2⌉ first of those deletions
//! with ⌊k/2⌋ new facts, `"change": "mixed"`), and after re-inserting the k deleted facts
//! (`"change": "reinsert"`: the workload's own inputs). A large deletion leaves a much
//! smaller model (1000 of non-linear random's 1500 edges take away all but 1k of its 296k
//! facts), so the peers' from-scratch time on the whole workload would overstate what they
//! pay to catch up. crepe is not run again: it is the slowest of the three from scratch on
//! every workload.
//!
//! Each change is measured `DRED_RECOMPUTE_REPS` times (default 3). A repetition runs the
//! two peers and dred's update (`Strategy::Auto`, as criterion's `auto` rows; a
//! re-insertion is the same under every strategy) seconds apart, the one that starts moving
//! on by one each repetition; dred's update starts from a clone of the program before the
//! change, made and dropped outside the timing, as in criterion. Criterion measures dred's
//! updates minutes before this binary measures the peers' recompute: a host that slows down
//! in between moves one side only (run S: non-linear chain's 100 deletions took 1.57 s in
//! criterion; the same update took 0.47–0.65 s alone, two hours later). A repetition's
//! ratio sees the same host.
//!
//! Prints one JSON object per line: each peer's median (`<peer>_s`), the facts they
//! derived, dred's median (`dred`), and the median, least and greatest of the
//! repetitions' speed-ups (the faster peer's recompute ÷ dred's update in that
//! repetition). `DRED_RECOMPUTE_WORKLOAD` (a part of a workload's name) measures only the
//! workloads it names.

use std::time::Instant;

use dred::Strategy;
use dred_benches::engines::{ascent_scratch, datafrog_scratch, DredProgram};
use dred_benches::{
    apply, env_or, median, mixed_batch, rotation_fields, update_facts, workloads, Changes,
    Workload, UPDATE_SIZES,
};

/// A peer's from-scratch materialization, returning how many facts it derived.
type Scratch = fn(&Workload) -> usize;

/// The peers whose recompute is measured, in the order of the printed fields.
const PEERS: [(&str, Scratch); 2] = [("ascent", ascent_scratch), ("datafrog", datafrog_scratch)];

/// One change of one size: the batch dred applies to the program `before`, and the inputs
/// the peers materialize, those after the change.
struct Change<'a> {
    name: &'static str,
    deletions: Changes,
    insertions: Changes,
    before: &'a DredProgram,
    after: Workload,
}

fn main() {
    let repetitions: usize = env_or("DRED_RECOMPUTE_REPS", 3).max(1);
    let only: String = env_or("DRED_RECOMPUTE_WORKLOAD", String::new());
    for workload in workloads().into_iter().filter(|w| w.name.contains(&only)) {
        let base = DredProgram::materialize(&workload);
        for k in UPDATE_SIZES {
            let (deletions, _) = update_facts(&workload, k, 7);
            let (mixed_deletions, mixed_insertions) = mixed_batch(&workload, k);
            // Re-insertion starts from what the deletion left.
            let mut deleted = base.clone();
            deleted.update_using(&deletions, &[], Strategy::AltProof);
            let changes = [
                Change {
                    name: "delete",
                    after: apply(&workload, &deletions, &[]),
                    deletions: deletions.clone(),
                    insertions: Vec::new(),
                    before: &base,
                },
                Change {
                    name: "mixed",
                    after: apply(&workload, &mixed_deletions, &mixed_insertions),
                    deletions: mixed_deletions,
                    insertions: mixed_insertions,
                    before: &base,
                },
                Change {
                    name: "reinsert",
                    after: workload.clone(),
                    deletions: Vec::new(),
                    insertions: deletions,
                    before: &deleted,
                },
            ];
            for change in &changes {
                measure(&workload, change, k, repetitions);
            }
        }
    }
}

/// Measures `change` of `k` facts on `workload` and prints its line.
fn measure(workload: &Workload, change: &Change, k: usize, repetitions: usize) {
    let mut peer_times: Vec<Vec<f64>> = vec![Vec::new(); PEERS.len()];
    let mut dred_times = Vec::new();
    let mut speedups = Vec::new();
    let mut derived = None;
    let mut agree = |facts: usize, who: &str| {
        assert_eq!(
            *derived.get_or_insert(facts),
            facts,
            "{who} disagrees on {} after the {} of {k}",
            workload.name,
            change.name
        );
    };
    // dred is the last "turn": turns 0..PEERS.len() are the peers.
    let turns = PEERS.len() + 1;
    for repetition in 0..repetitions {
        let mut peers = [f64::INFINITY; PEERS.len()];
        let mut dred = 0.0;
        for turn in 0..turns {
            let engine = (turn + repetition) % turns;
            if let Some((name, scratch)) = PEERS.get(engine) {
                let started = Instant::now();
                let facts = std::hint::black_box(scratch(&change.after));
                peers[engine] = started.elapsed().as_secs_f64();
                agree(facts, name);
            } else {
                let mut program = change.before.clone();
                let started = Instant::now();
                program.update_using(&change.deletions, &change.insertions, Strategy::Auto);
                dred = started.elapsed().as_secs_f64();
                agree(program.derived_len(), "dred");
            }
        }
        for (times, time) in peer_times.iter_mut().zip(peers) {
            times.push(time);
        }
        dred_times.push(dred);
        speedups.push(peers.into_iter().fold(f64::INFINITY, f64::min) / dred);
    }
    let names = PEERS.iter().map(|(name, _)| *name);
    println!(
        "{{\"workload\": {:?}, \"change\": \"{}\", \"k\": {k}, \"derived\": {}, \"dred\": {}, {}}}",
        workload.name,
        change.name,
        derived.unwrap_or(0),
        median(dred_times),
        rotation_fields(names.zip(peer_times), "speedup", speedups)
    );
}
