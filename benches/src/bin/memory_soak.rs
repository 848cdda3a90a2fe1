//! Long-run memory of one workload under churn: `memory_soak <workload index> [batches]
//! [seconds]` (10⁵ batches by default; with a time limit, it ends at the first even batch
//! past it). Batch i deletes a random input fact and puts back the one batch i − 1
//! deleted; one odd batch in every [`NEW_EVERY`] also inserts a fact the inputs never had,
//! which the next batch deletes again (a random new edge can join a chain's closure into
//! one component, a recompute's worth of work, so not every time); every batch runs
//! `Strategy::Auto`. After the first 100 batches, half of them and all, a batch puts back the
//! fact last deleted, so that the program holds exactly its materialization's facts, and
//! the soak prints the heap in use (every live allocation, counted by this binary's
//! allocator), what the relations keep allocated (`heap_bytes`) and the resident set, and
//! at the end their ratios.

use std::time::{Duration, Instant};

use dred_benches::engines::DredProgram;
use dred_benches::{live_bytes, workloads, Counting};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn resident_kib() -> u64 {
    dred_benches::status_kib("VmRSS")
}

/// A deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }
}

type Fact = (&'static str, (u32, u32));

/// One odd batch in this many inserts a new fact (`DRED_SOAK_NEW_EVERY` sets another
/// number; 0, none).
const NEW_EVERY: usize = 250;

fn main() {
    let mut args = std::env::args().skip(1);
    let index: usize = args.next().expect("workload index").parse().expect("index");
    let batches: usize = args.next().map_or(100_000, |s| s.parse().expect("batches"));
    assert!(
        batches >= 100 && batches.is_multiple_of(2),
        "an even number of batches, at least 100"
    );
    let limit = args
        .next()
        .map(|s| Duration::from_secs(s.parse().expect("seconds")));
    let workload = &workloads()[index];
    let inputs: Vec<Fact> = (workload.inputs.iter())
        .flat_map(|(name, facts)| facts.iter().map(move |f| (*name, *f)))
        .collect();
    let held: std::collections::HashSet<Fact> = inputs.iter().copied().collect();
    let nodes = inputs
        .iter()
        .map(|(_, (a, b))| a.max(b) + 1)
        .max()
        .unwrap_or(1) as usize;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let started = Instant::now();
    let mut program = DredProgram::materialize(workload);
    let mut deleted: Option<Fact> = None;
    let mut new: Option<Fact> = None;
    let new_every = (std::env::var("DRED_SOAK_NEW_EVERY").ok())
        .map_or(NEW_EVERY, |n| n.parse().expect("DRED_SOAK_NEW_EVERY"));
    let mut first = None;
    let (mut batch, mut batches) = (0, batches);
    while batch < batches {
        batch += 1;
        let late = limit.is_some_and(|limit| started.elapsed() > limit);
        if late && batch > 100 && batch.is_multiple_of(2) {
            batches = batch;
        }
        let take = inputs[rng.below(inputs.len())];
        let mut deletions = vec![take];
        let mut insertions: Vec<Fact> = deleted.take().into_iter().collect();
        match new.take() {
            Some(fact) => deletions.push(fact),
            None if new_every == 0 || batch % (2 * new_every) != 1 => {}
            None => loop {
                let (relation, _) = inputs[rng.below(inputs.len())];
                let fact = (relation, (rng.below(nodes) as u32, rng.below(nodes) as u32));
                if !held.contains(&fact) {
                    insertions.push(fact);
                    new = Some(fact);
                    break;
                }
            },
        }
        insertions.retain(|fact| *fact != take);
        program.update_using(&deletions, &insertions, dred::Strategy::Auto);
        deleted = Some(take);
        if batch == 100 || batch == batches / 2 / 2 * 2 || batch == batches {
            let back: Vec<Fact> = deleted.take().into_iter().collect();
            program.update_using(&[], &back, dred::Strategy::Auto);
            assert!(
                new.is_none(),
                "measured after an even batch: no new fact held"
            );
            let measured = (live_bytes(), program.heap_bytes(), resident_kib());
            if batch == 100 {
                first = Some(measured);
            }
            let (live, heap, resident) = measured;
            println!(
                "{}: after {batch} batches ({:.0} s): heap in use {live} B, relations' \
                 heap_bytes {heap} B, resident {resident} KiB",
                workload.name,
                started.elapsed().as_secs_f64()
            );
        }
    }
    if let Some((live, heap, resident)) = first {
        let (live_end, heap_end) = (live_bytes(), program.heap_bytes());
        println!(
            "{}: after {batches} / after 100 batches: heap in use {:.3}×, heap_bytes {:.3}×, \
             resident {:.3}×",
            workload.name,
            live_end as f64 / live as f64,
            heap_end as f64 / heap as f64,
            resident_kib() as f64 / resident as f64
        );
    }
    std::hint::black_box(program.derived_len());
}
