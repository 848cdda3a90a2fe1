//! #57, the dataflow's memory over many batches: a program that copies its input relation
//! (`Out(x, y) <- Edge(x, y)`), run as its generated dataflow on one timely worker, whose
//! batches alternately delete and re-insert the same `DRED_CHURN_FACTS` facts (1,000 by
//! default), `DRED_CHURN_BATCHES` batches in all (4,000). Every batch names every fact
//! once, so what the dataflow keeps of past batches shows as growth. After batch 100 and
//! after the last (both re-insertions, so the model is the same), prints the heap in use
//! (counted by this binary's allocator) and the resident set, and their ratios.

use std::time::Instant;

use dred::runtime::dataflow::timely;
use dred_benches::dataflow::Session;
use dred_benches::{env_or, live_bytes, status_kib, Counting};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

dred::datalog! {
    pub struct Mirror;
    @input pub struct Edge(pub u32, pub u32);
    pub struct Out(pub u32, pub u32);
    Out(x, y) <- Edge(x, y);
}

fn main() {
    let facts: u32 = env_or("DRED_CHURN_FACTS", 1000);
    let batches: u64 = env_or("DRED_CHURN_BATCHES", 4000).max(102) / 2 * 2;
    timely::execute(timely::Config::thread(), move |worker| {
        let mut session = Session::<Mirror>::new(worker);
        session.unit.insert(());
        let started = Instant::now();
        let mut at_100 = (0, 0);
        for time in 0..=batches {
            // Batch 0 holds the inputs; odd batches delete them all, even ones put them back.
            let inserts = time % 2 == 0;
            for x in 0..facts {
                let fact = MirrorFact::Edge(Edge(x, x + 1));
                session.input.insert((fact, (time, inserts)));
            }
            session.finish(worker, time);
            let expected = if inserts { facts as isize } else { 0 };
            assert_eq!(session.derived(), expected, "facts of `Out` after batch {time}");
            if time == 100 || time == batches {
                let (heap, resident) = (live_bytes(), status_kib("VmRSS"));
                println!(
                    "after batch {time}: heap {:.1} MiB, resident {:.1} MiB, {:.2} s",
                    heap as f64 / (1 << 20) as f64,
                    resident as f64 / 1024.0,
                    started.elapsed().as_secs_f64()
                );
                if time == 100 {
                    at_100 = (heap, resident);
                } else {
                    println!(
                        "{batches} batches of {facts} facts against 100: heap {:.3}×, resident {:.3}×",
                        heap as f64 / at_100.0 as f64,
                        resident as f64 / at_100.1 as f64
                    );
                }
            }
        }
    })
    .expect("timely runs");
}
