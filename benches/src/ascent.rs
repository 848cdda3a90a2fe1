//! ascent, the peer closest to dred (a macro that compiles Datalog to Rust), on the suite's
//! rules: `ascent!` on one thread, and its parallel mode (`ascent_par!`, on rayon) on a pool
//! of a given number of threads, the peer beside dred's `threads` setting.

use crate::{Facts, Rules, Workload};

/// Each of the peer's programs twice, from one text: `ascent!` for ascent, and
/// `ascent_par!` for its parallel mode ([`ascent_par_scratch`]).
macro_rules! ascent_programs {
    ($({ $($program:tt)* })*) => {
        mod sequential {
            $(ascent::ascent! { $($program)* })*
        }

        /// The suite's programs in ascent's parallel mode.
        mod parallel {
            $(ascent::ascent_par! { $($program)* })*
        }
    };
}

ascent_programs! {
    {
        pub struct TcNonlinear;
        relation e(u32, u32);
        relation r(u32, u32);
        r(x, y) <-- e(x, y);
        r(x, z) <-- r(x, y), r(y, z);
    }
    {
        pub struct TcLinear;
        relation e(u32, u32);
        relation r(u32, u32);
        r(x, y) <-- e(x, y);
        r(x, z) <-- e(x, y), r(y, z);
    }
    {
        pub struct SameGeneration;
        relation par(u32, u32);
        relation sg(u32, u32);
        sg(x, y) <-- par(x, p), par(y, p);
        sg(x, y) <-- par(x, a), sg(a, b), par(y, b);
    }
    {
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
    {
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

/// A workload's input relation `name`, collected into a relation of either mode.
fn input<C: FromIterator<(u32, u32)>>(workload: &Workload, name: &str) -> C {
    let facts: &Facts = &workload
        .inputs
        .iter()
        .find(|(n, _)| *n == name)
        .expect("input")
        .1;
    facts.iter().copied().collect()
}

/// From scratch with the programs of `$mode` (`sequential` or `parallel`): the number of
/// derived facts.
macro_rules! scratch_in {
    ($mode:ident, $workload:expr) => {{
        use $mode::*;
        let workload: &Workload = $workload;
        match workload.rules {
            Rules::TcNonlinear => {
                let mut p = TcNonlinear::default();
                p.e = input(workload, "E");
                p.run();
                p.r.len()
            }
            Rules::TcLinear => {
                let mut p = TcLinear::default();
                p.e = input(workload, "E");
                p.run();
                p.r.len()
            }
            Rules::SameGeneration => {
                let mut p = SameGeneration::default();
                p.par = input(workload, "Par");
                p.run();
                p.sg.len()
            }
            Rules::Andersen => {
                let mut p = Andersen::default();
                p.address_of = input(workload, "AddressOf");
                p.assign = input(workload, "Assign");
                p.load = input(workload, "Load");
                p.store = input(workload, "Store");
                p.run();
                p.pt.len()
            }
            Rules::Alias => {
                let mut p = Alias::default();
                p.assign = input(workload, "Assign");
                p.dereference = input(workload, "Dereference");
                p.run();
                p.value_flow.len() + p.memory_alias.len() + p.value_alias.len()
            }
        }
    }};
}

/// ascent, from scratch: the number of derived facts.
pub fn ascent_scratch(workload: &Workload) -> usize {
    scratch_in!(sequential, workload)
}

/// ascent's parallel mode from scratch on `pool`: the number of derived facts. The pool
/// is built outside the work it runs ([`pool`]).
pub fn ascent_par_scratch(workload: &Workload, pool: &rayon::ThreadPool) -> usize {
    pool.install(|| scratch_in!(parallel, workload))
}

/// A rayon pool of `threads` threads.
pub fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
}
