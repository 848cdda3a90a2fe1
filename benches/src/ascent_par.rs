//! ascent's parallel mode (`ascent_par!`, on rayon) on the suite's rules, run on a pool of
//! a given number of threads: the peer beside dred's `threads` setting.

use crate::{Facts, Rules, Workload};

mod programs {
    ascent::ascent_par! {
        pub struct TcNonlinear;
        relation e(u32, u32);
        relation r(u32, u32);
        r(x, y) <-- e(x, y);
        r(x, z) <-- r(x, y), r(y, z);
    }

    ascent::ascent_par! {
        pub struct TcLinear;
        relation e(u32, u32);
        relation r(u32, u32);
        r(x, y) <-- e(x, y);
        r(x, z) <-- e(x, y), r(y, z);
    }

    ascent::ascent_par! {
        pub struct SameGeneration;
        relation par(u32, u32);
        relation sg(u32, u32);
        sg(x, y) <-- par(x, p), par(y, p);
        sg(x, y) <-- par(x, a), sg(a, b), par(y, b);
    }

    ascent::ascent_par! {
        pub struct Andersen;
        relation address_of(u32, u32);
        relation assign(u32, u32);
        relation load(u32, u32);
        relation store(u32, u32);
        relation pt(u32, u32);
        pt(p, o) <-- address_of(p, o);
        pt(p, o) <-- assign(p, q), pt(q, o);
        pt(v, o) <-- load(v, p), pt(p, q), pt(q, o);
        pt(q, o) <-- store(p, w), pt(p, q), pt(w, o);
    }

    ascent::ascent_par! {
        pub struct Alias;
        relation assign(u32, u32);
        relation dereference(u32, u32);
        relation value_flow(u32, u32);
        relation memory_alias(u32, u32);
        relation value_alias(u32, u32);
        value_flow(y, x) <-- assign(y, x);
        value_flow(x, y) <-- assign(x, z), memory_alias(z, y);
        value_flow(x, y) <-- value_flow(x, z), value_flow(z, y);
        memory_alias(x, w) <-- dereference(y, x), value_alias(y, z), dereference(z, w);
        value_alias(x, y) <-- value_flow(z, x), value_flow(z, y);
        value_alias(x, y) <-- value_flow(z, x), memory_alias(z, w), value_flow(w, y);
        value_flow(x, x) <-- assign(x, _);
        value_flow(x, x) <-- assign(_, x);
        memory_alias(x, x) <-- assign(_, x);
        memory_alias(x, x) <-- assign(x, _);
    }
}

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
    use programs::*;
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
