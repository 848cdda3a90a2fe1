//! ascent's parallel mode (`ascent_par!`, on rayon) on the suite's rules, run on a pool of
//! a given number of threads: the peer beside dred's `threads` setting.

use crate::{Facts, Rules, Workload};

fn input<'a>(workload: &'a Workload, name: &str) -> impl Iterator<Item = (u32, u32)> + 'a {
    let facts: &Facts = &workload
        .inputs
        .iter()
        .find(|(n, _)| *n == name)
        .expect("input")
        .1;
    facts.iter().copied()
}

/// ascent's parallel mode from scratch on a pool of `threads` threads: the number of
/// derived facts. The pool is built outside the work it runs.
pub fn ascent_par_scratch(workload: &Workload, pool: &rayon::ThreadPool) -> usize {
    use crate::engines::ascent_par_programs::*;
    pool.install(|| match workload.rules {
        Rules::TcNonlinear => {
            let mut p = TcNonlinear::default();
            p.e = input(workload, "E").collect();
            p.run();
            p.r.len()
        }
        Rules::TcLinear => {
            let mut p = TcLinear::default();
            p.e = input(workload, "E").collect();
            p.run();
            p.r.len()
        }
        Rules::SameGeneration => {
            let mut p = SameGeneration::default();
            p.par = input(workload, "Par").collect();
            p.run();
            p.sg.len()
        }
        Rules::Andersen => {
            let mut p = Andersen::default();
            p.address_of = input(workload, "AddressOf").collect();
            p.assign = input(workload, "Assign").collect();
            p.load = input(workload, "Load").collect();
            p.store = input(workload, "Store").collect();
            p.run();
            p.pt.len()
        }
        Rules::Alias => {
            let mut p = Alias::default();
            p.assign = input(workload, "Assign").collect();
            p.dereference = input(workload, "Dereference").collect();
            p.run();
            p.value_flow.len() + p.memory_alias.len() + p.value_alias.len()
        }
    })
}

/// A rayon pool of `threads` threads.
pub fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
}
