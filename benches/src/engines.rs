//! Each workload's rules in every engine, behind one small interface: from-scratch
//! materialization returning the number of derived facts, and (dred, differential-dataflow)
//! incremental updates.

use std::time::{Duration, Instant};

use crate::{Facts, Rules, Workload};

/// The engines the suite compares.
pub const ENGINES: [&str; 5] = ["dred", "ascent", "crepe", "datafrog", "differential"];

// ---------------------------------------------------------------------------------------
// dred

pub mod dred_programs {
    dred::datalog! {
        pub struct TcNonlinear;
        @input pub struct E(pub u32, pub u32);
        pub struct R(pub u32, pub u32);
        R(x, y) <- E(x, y);
        R(x, z) <- R(x, y), R(y, z);
    }

    pub mod linear {
        dred::datalog! {
            pub struct TcLinear;
            @input pub struct E(pub u32, pub u32);
            pub struct R(pub u32, pub u32);
            R(x, y) <- E(x, y);
            R(x, z) <- E(x, y), R(y, z);
            /// What node 0 reaches: the bound query of the magic-set benchmark.
            @query pub FromZero = R(0, _);
        }
    }

    pub mod same_generation {
        dred::datalog! {
            pub struct SameGeneration;
            @input pub struct Par(pub u32, pub u32);
            pub struct Sg(pub u32, pub u32);
            Sg(x, y) <- Par(x, p), Par(y, p);
            Sg(x, y) <- Par(x, a), Sg(a, b), Par(y, b);
        }
    }

    pub mod andersen {
        dred::datalog! {
            pub struct Andersen;
            /// `p = &o`
            @input pub struct AddressOf(pub u32, pub u32);
            /// `p = q`
            @input pub struct Assign(pub u32, pub u32);
            /// `v = *p`
            @input pub struct Load(pub u32, pub u32);
            /// `*p = w`
            @input pub struct Store(pub u32, pub u32);
            pub struct Pt(pub u32, pub u32);
            Pt(p, o) <- AddressOf(p, o);
            Pt(p, o) <- Assign(p, q), Pt(q, o);
            Pt(v, o) <- Load(v, p), Pt(p, q), Pt(q, o);
            Pt(q, o) <- Store(p, w), Pt(p, q), Pt(w, o);
        }
    }

    pub mod alias {
        dred::datalog! {
            pub struct Alias;
            @input pub struct Assign(pub u32, pub u32);
            @input pub struct Dereference(pub u32, pub u32);
            pub struct ValueFlow(pub u32, pub u32);
            pub struct MemoryAlias(pub u32, pub u32);
            pub struct ValueAlias(pub u32, pub u32);
            ValueFlow(y, x) <- Assign(y, x);
            ValueFlow(x, y) <- Assign(x, z), MemoryAlias(z, y);
            ValueFlow(x, y) <- ValueFlow(x, z), ValueFlow(z, y);
            MemoryAlias(x, w) <- Dereference(y, x), ValueAlias(y, z), Dereference(z, w);
            ValueAlias(x, y) <- ValueFlow(z, x), ValueFlow(z, y);
            ValueAlias(x, y) <- ValueFlow(z, x), MemoryAlias(z, w), ValueFlow(w, y);
            ValueFlow(x, x) <- Assign(x, _);
            ValueFlow(x, x) <- Assign(_, x);
            MemoryAlias(x, x) <- Assign(_, x);
            MemoryAlias(x, x) <- Assign(x, _);
        }
    }
}

/// A materialized dred program of any of the suite's rules.
// A few hundred bytes of relation headers per variant; programs are made once and updated
// in place, so boxing would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone)]
pub enum DredProgram {
    TcNonlinear(dred_programs::TcNonlinear),
    TcLinear(dred_programs::linear::TcLinear),
    SameGeneration(dred_programs::same_generation::SameGeneration),
    Andersen(dred_programs::andersen::Andersen),
    Alias(dred_programs::alias::Alias),
}

/// What one dred update did: the counts the report puts next to the true net change.
#[derive(Clone, Copy, Debug, Default)]
pub struct UpdateCounts {
    pub net_delete: usize,
    pub net_insert: usize,
    pub overdeleted: usize,
    pub rederived: usize,
    pub inserted: usize,
    /// Facts checked for support (alternative proofs only).
    pub checked: usize,
    /// Facts kept by raising their stamps (alternative proofs only).
    pub restamped: usize,
    /// Closure facts found lost by reachability (alternative proofs only).
    pub unreachable: usize,
    /// The strategy that ran.
    pub strategy: dred::Strategy,
    /// The deletion strategy that ran first (see `dred::Account::first_tried`).
    pub first_tried: Option<dred::Strategy>,
    /// What an attempt Auto gave up on had done (see `dred::Account::abandoned`).
    pub abandoned: Option<dred::Abandoned>,
    /// The update's counted work (units), and the same by kind.
    pub work: u64,
    pub counted: dred::runtime::Counted,
    /// Time in the deletion phase (over-deletion or checking) and in rederivation.
    pub phases: [std::time::Duration; 2],
    /// Rounds of the deletion phase and of rederivation.
    pub rounds: [usize; 2],
}

fn counts<F: dred::FactSets>(report: &dred::UpdateReport<F>) -> UpdateCounts {
    UpdateCounts {
        net_delete: report.net_delete.len(),
        net_insert: report.net_insert.len(),
        overdeleted: report.overdeleted_derived.len,
        rederived: report.rederived(),
        inserted: report
            .insert
            .total()
            .saturating_sub(report.net_insert.len()),
        checked: report.checked(),
        restamped: report.restamped(),
        unreachable: report.by_reachability.as_ref().map_or(0, |round| round.len),
        strategy: report.strategy,
        first_tried: report.account.first_tried,
        abandoned: report.account.abandoned,
        work: report.work,
        counted: report.counted,
        rounds: [
            report.overdelete.rounds.len(),
            report.rederive.as_ref().map_or(0, |p| p.rounds.len()),
        ],
        phases: [
            report.overdelete.elapsed,
            report
                .rederive
                .as_ref()
                .map_or(Default::default(), |p| p.elapsed),
        ],
    }
}

type Changes = [(&'static str, (u32, u32))];

macro_rules! batch_of {
    ($deletions:expr, $insertions:expr, { $($name:literal => $ty:path),* }) => {{
        let mut batch = dred::Batch::new();
        for (relation, (a, b)) in $deletions {
            batch = match *relation { $($name => batch.delete($ty(*a, *b)),)* _ => unreachable!() };
        }
        for (relation, (a, b)) in $insertions {
            batch = match *relation { $($name => batch.insert($ty(*a, *b)),)* _ => unreachable!() };
        }
        batch
    }};
}

impl DredProgram {
    /// The least model of `workload`, by semi-naive evaluation.
    pub fn materialize(workload: &Workload) -> Self {
        Self::from_scratch(workload).0
    }

    /// [`DredProgram::materialize`], with closure relations left to the alternative
    /// proofs' support checks rather than kept by reachability (`dred::runtime::closure`).
    pub fn materialize_checking_stamps(workload: &Workload) -> Self {
        let settings = dred::Settings::default().with_reachability(false);
        Self::from_scratch_with(workload, settings).0
    }

    /// Whether alternative proofs keep this program's closure relations by reachability.
    pub fn reachability(&self) -> bool {
        use dred::runtime::Program;
        match self {
            DredProgram::TcNonlinear(p) => p.bookkeeping().reachability,
            DredProgram::TcLinear(p) => p.bookkeeping().reachability,
            DredProgram::SameGeneration(p) => p.bookkeeping().reachability,
            DredProgram::Andersen(p) => p.bookkeeping().reachability,
            DredProgram::Alias(p) => p.bookkeeping().reachability,
        }
    }

    /// The least model, and how many derived facts it has.
    pub fn from_scratch(workload: &Workload) -> (Self, usize) {
        Self::from_scratch_with(workload, dred::Settings::default())
    }

    /// [`DredProgram::from_scratch`], the program running with `settings`.
    pub fn from_scratch_with(workload: &Workload, settings: dred::Settings) -> (Self, usize) {
        use dred_programs::{alias as al, andersen as a, linear as l, same_generation as s};
        let none: &Changes = &[];
        let inserts: Vec<(&'static str, (u32, u32))> = workload
            .inputs
            .iter()
            .flat_map(|(name, facts)| facts.iter().map(move |f| (*name, *f)))
            .collect();
        let inserts = &inserts[..];
        // Counts only, as the peers report nothing: a report of rounds holds every fact twice.
        let trace = dred::Trace::Counts;
        let program = match workload.rules {
            Rules::TcNonlinear => DredProgram::TcNonlinear(
                dred_programs::TcNonlinear::materialize_with_settings(
                    batch_of!(none, inserts, { "E" => dred_programs::E }),
                    settings,
                    trace,
                )
                .0,
            ),
            Rules::TcLinear => DredProgram::TcLinear(
                l::TcLinear::materialize_with_settings(
                    batch_of!(none, inserts, { "E" => l::E }),
                    settings,
                    trace,
                )
                .0,
            ),
            Rules::SameGeneration => DredProgram::SameGeneration(
                s::SameGeneration::materialize_with_settings(
                    batch_of!(none, inserts, { "Par" => s::Par }),
                    settings,
                    trace,
                )
                .0,
            ),
            Rules::Andersen => DredProgram::Andersen(
                a::Andersen::materialize_with_settings(
                    batch_of!(none, inserts, {
                        "AddressOf" => a::AddressOf, "Assign" => a::Assign,
                        "Load" => a::Load, "Store" => a::Store
                    }),
                    settings,
                    trace,
                )
                .0,
            ),
            Rules::Alias => DredProgram::Alias(
                al::Alias::materialize_with_settings(
                    batch_of!(none, inserts, {
                        "Assign" => al::Assign, "Dereference" => al::Dereference
                    }),
                    settings,
                    trace,
                )
                .0,
            ),
        };
        let derived = program.derived_len();
        (program, derived)
    }

    /// Applies one batch with DRed (counts-only report).
    pub fn update(&mut self, deletions: &Changes, insertions: &Changes) -> UpdateCounts {
        self.update_using(deletions, insertions, dred::Strategy::DRed)
    }

    /// Applies one batch with `strategy` (counts-only report).
    pub fn update_using(
        &mut self,
        deletions: &Changes,
        insertions: &Changes,
        strategy: dred::Strategy,
    ) -> UpdateCounts {
        use dred_programs::{alias as al, andersen as a, linear as l, same_generation as s};
        let trace = dred::Trace::Counts;
        match self {
            DredProgram::TcNonlinear(p) => {
                let batch = batch_of!(deletions, insertions, { "E" => dred_programs::E });
                counts(&p.update_using(batch, strategy, trace))
            }
            DredProgram::TcLinear(p) => {
                let batch = batch_of!(deletions, insertions, { "E" => l::E });
                counts(&p.update_using(batch, strategy, trace))
            }
            DredProgram::SameGeneration(p) => {
                let batch = batch_of!(deletions, insertions, { "Par" => s::Par });
                counts(&p.update_using(batch, strategy, trace))
            }
            DredProgram::Andersen(p) => {
                let batch = batch_of!(deletions, insertions, {
                    "AddressOf" => a::AddressOf, "Assign" => a::Assign,
                    "Load" => a::Load, "Store" => a::Store
                });
                counts(&p.update_using(batch, strategy, trace))
            }
            DredProgram::Alias(p) => {
                let batch = batch_of!(deletions, insertions, {
                    "Assign" => al::Assign, "Dereference" => al::Dereference
                });
                counts(&p.update_using(batch, strategy, trace))
            }
        }
    }

    /// How many derived facts it holds.
    pub fn derived_len(&self) -> usize {
        match self {
            DredProgram::TcNonlinear(p) => p.relation::<dred_programs::R>().len(),
            DredProgram::TcLinear(p) => p.relation::<dred_programs::linear::R>().len(),
            DredProgram::SameGeneration(p) => {
                p.relation::<dred_programs::same_generation::Sg>().len()
            }
            DredProgram::Andersen(p) => p.relation::<dred_programs::andersen::Pt>().len(),
            DredProgram::Alias(p) => {
                use dred_programs::alias::{MemoryAlias, ValueAlias, ValueFlow};
                p.relation::<ValueFlow>().len()
                    + p.relation::<MemoryAlias>().len()
                    + p.relation::<ValueAlias>().len()
            }
        }
    }

    /// What its relations keep allocated (the generated `heap_bytes`).
    pub fn heap_bytes(&self) -> usize {
        match self {
            DredProgram::TcNonlinear(p) => p.heap_bytes(),
            DredProgram::TcLinear(p) => p.heap_bytes(),
            DredProgram::SameGeneration(p) => p.heap_bytes(),
            DredProgram::Andersen(p) => p.heap_bytes(),
            DredProgram::Alias(p) => p.heap_bytes(),
        }
    }
}

// ---------------------------------------------------------------------------------------
// ascent

pub use crate::ascent::{ascent_par_scratch, ascent_scratch};

fn input<'a>(workload: &'a Workload, name: &str) -> &'a Facts {
    &workload
        .inputs
        .iter()
        .find(|(n, _)| *n == name)
        .expect("input")
        .1
}

// ---------------------------------------------------------------------------------------
// crepe

mod crepe_tc_nonlinear {
    crepe::crepe! {
        @input
        pub struct E(pub u32, pub u32);
        @output
        pub struct R(pub u32, pub u32);
        R(x, y) <- E(x, y);
        R(x, z) <- R(x, y), R(y, z);
    }
}

mod crepe_tc_linear {
    crepe::crepe! {
        @input
        pub struct E(pub u32, pub u32);
        @output
        pub struct R(pub u32, pub u32);
        R(x, y) <- E(x, y);
        R(x, z) <- E(x, y), R(y, z);
    }
}

mod crepe_same_generation {
    crepe::crepe! {
        @input
        pub struct Par(pub u32, pub u32);
        @output
        pub struct Sg(pub u32, pub u32);
        Sg(x, y) <- Par(x, p), Par(y, p);
        Sg(x, y) <- Par(x, a), Sg(a, b), Par(y, b);
    }
}

mod crepe_andersen {
    crepe::crepe! {
        @input
        pub struct AddressOf(pub u32, pub u32);
        @input
        pub struct Assign(pub u32, pub u32);
        @input
        pub struct Load(pub u32, pub u32);
        @input
        pub struct Store(pub u32, pub u32);
        @output
        pub struct Pt(pub u32, pub u32);
        Pt(p, o) <- AddressOf(p, o);
        Pt(p, o) <- Assign(p, q), Pt(q, o);
        Pt(v, o) <- Load(v, p), Pt(p, q), Pt(q, o);
        Pt(q, o) <- Store(p, w), Pt(p, q), Pt(w, o);
    }
}

mod crepe_alias {
    crepe::crepe! {
        @input
        pub struct Assign(pub u32, pub u32);
        @input
        pub struct Dereference(pub u32, pub u32);
        @output
        pub struct ValueFlow(pub u32, pub u32);
        @output
        pub struct MemoryAlias(pub u32, pub u32);
        @output
        pub struct ValueAlias(pub u32, pub u32);
        ValueFlow(y, x) <- Assign(y, x);
        ValueFlow(x, y) <- Assign(x, z), MemoryAlias(z, y);
        ValueFlow(x, y) <- ValueFlow(x, z), ValueFlow(z, y);
        MemoryAlias(x, w) <- Dereference(y, x), ValueAlias(y, z), Dereference(z, w);
        ValueAlias(x, y) <- ValueFlow(z, x), ValueFlow(z, y);
        ValueAlias(x, y) <- ValueFlow(z, x), MemoryAlias(z, w), ValueFlow(w, y);
        ValueFlow(x, x) <- Assign(x, _);
        ValueFlow(x, x) <- Assign(_, x);
        MemoryAlias(x, x) <- Assign(_, x);
        MemoryAlias(x, x) <- Assign(x, _);
    }
}

/// crepe, from scratch: the number of derived facts.
pub fn crepe_scratch(workload: &Workload) -> usize {
    match workload.rules {
        Rules::TcNonlinear => {
            use crepe_tc_nonlinear::*;
            let mut p = Crepe::new();
            p.extend(input(workload, "E").iter().map(|&(a, b)| E(a, b)));
            p.run().0.len()
        }
        Rules::TcLinear => {
            use crepe_tc_linear::*;
            let mut p = Crepe::new();
            p.extend(input(workload, "E").iter().map(|&(a, b)| E(a, b)));
            p.run().0.len()
        }
        Rules::SameGeneration => {
            use crepe_same_generation::*;
            let mut p = Crepe::new();
            p.extend(input(workload, "Par").iter().map(|&(a, b)| Par(a, b)));
            p.run().0.len()
        }
        Rules::Andersen => {
            use crepe_andersen::*;
            let mut p = Crepe::new();
            p.extend(
                input(workload, "AddressOf")
                    .iter()
                    .map(|&(a, b)| AddressOf(a, b)),
            );
            p.extend(input(workload, "Assign").iter().map(|&(a, b)| Assign(a, b)));
            p.extend(input(workload, "Load").iter().map(|&(a, b)| Load(a, b)));
            p.extend(input(workload, "Store").iter().map(|&(a, b)| Store(a, b)));
            p.run().0.len()
        }
        Rules::Alias => {
            use crepe_alias::*;
            let mut p = Crepe::new();
            p.extend(input(workload, "Assign").iter().map(|&(a, b)| Assign(a, b)));
            p.extend(
                input(workload, "Dereference")
                    .iter()
                    .map(|&(a, b)| Dereference(a, b)),
            );
            let (value_flow, memory_alias, value_alias) = p.run();
            value_flow.len() + memory_alias.len() + value_alias.len()
        }
    }
}

// ---------------------------------------------------------------------------------------
// datafrog

/// datafrog, from scratch (semi-naive joins written by hand): the number of derived facts.
pub fn datafrog_scratch(workload: &Workload) -> usize {
    use datafrog::Iteration;
    let swap = |&(a, b): &(u32, u32)| (b, a);
    let mut iteration = Iteration::new();
    match workload.rules {
        Rules::TcNonlinear => {
            // r(x, z) <- r(x, y), r(y, z): r keyed by destination joins r keyed by source.
            let r = iteration.variable::<(u32, u32)>("r");
            let r_by_dst = iteration.variable::<(u32, u32)>("r_by_dst");
            r.extend(input(workload, "E").iter().copied());
            while iteration.changed() {
                r_by_dst.from_map(&r, swap);
                r.from_join(&r_by_dst, &r, |_, &x, &z| (x, z));
            }
            r.complete().len()
        }
        Rules::TcLinear => {
            let r = iteration.variable::<(u32, u32)>("r");
            let e_by_dst = iteration.variable::<(u32, u32)>("e_by_dst");
            e_by_dst.extend(input(workload, "E").iter().map(swap));
            r.extend(input(workload, "E").iter().copied());
            while iteration.changed() {
                r.from_join(&r, &e_by_dst, |_, &z, &x| (x, z));
            }
            r.complete().len()
        }
        Rules::SameGeneration => {
            let by_parent: Vec<(u32, u32)> = input(workload, "Par").iter().map(swap).collect();
            let par_by_parent = iteration.variable::<(u32, u32)>("par_by_parent");
            par_by_parent.extend(by_parent.iter().copied());
            let sg = iteration.variable::<(u32, u32)>("sg");
            let step = iteration.variable::<(u32, u32)>("step");
            while iteration.changed() {
                sg.from_join(&par_by_parent, &par_by_parent, |_, &x, &y| (x, y));
                step.from_join(&sg, &par_by_parent, |_, &b, &x| (b, x));
                sg.from_join(&step, &par_by_parent, |_, &x, &y| (x, y));
            }
            sg.complete().len()
        }
        Rules::Andersen => {
            let pt = iteration.variable::<(u32, u32)>("pt");
            let assign_by_src = iteration.variable::<(u32, u32)>("assign");
            let load_by_ptr = iteration.variable::<(u32, u32)>("load");
            let store_by_ptr = iteration.variable::<(u32, u32)>("store");
            let loaded = iteration.variable::<(u32, u32)>("loaded");
            let stored = iteration.variable::<(u32, u32)>("stored");
            pt.extend(input(workload, "AddressOf").iter().copied());
            assign_by_src.extend(input(workload, "Assign").iter().map(swap));
            load_by_ptr.extend(input(workload, "Load").iter().map(swap));
            store_by_ptr.extend(input(workload, "Store").iter().copied());
            while iteration.changed() {
                pt.from_join(&assign_by_src, &pt, |_, &p, &o| (p, o));
                loaded.from_join(&load_by_ptr, &pt, |_, &v, &q| (q, v));
                pt.from_join(&loaded, &pt, |_, &v, &o| (v, o));
                stored.from_join(&store_by_ptr, &pt, |_, &w, &q| (w, q));
                pt.from_join(&stored, &pt, |_, &q, &o| (q, o));
            }
            pt.complete().len()
        }
        Rules::Alias => {
            let assign = input(workload, "Assign");
            let vf = iteration.variable::<(u32, u32)>("value_flow");
            let ma = iteration.variable::<(u32, u32)>("memory_alias");
            let va = iteration.variable::<(u32, u32)>("value_alias");
            let vf_by_dst = iteration.variable::<(u32, u32)>("value_flow_by_dst");
            let assign_by_dst = iteration.variable::<(u32, u32)>("assign_by_dst");
            let deref = iteration.variable::<(u32, u32)>("dereference");
            let deref_va = iteration.variable::<(u32, u32)>("dereference_value_alias");
            let vf_ma = iteration.variable::<(u32, u32)>("value_flow_memory_alias");
            let ends = assign.iter().flat_map(|&(x, y)| [(x, x), (y, y)]);
            vf.extend(assign.iter().copied().chain(ends.clone()));
            ma.extend(ends);
            assign_by_dst.extend(assign.iter().map(swap));
            deref.extend(input(workload, "Dereference").iter().copied());
            while iteration.changed() {
                vf_by_dst.from_map(&vf, swap);
                // ValueFlow(x, y) <- Assign(x, z), MemoryAlias(z, y).
                vf.from_join(&assign_by_dst, &ma, |_, &x, &y| (x, y));
                // ValueFlow(x, y) <- ValueFlow(x, z), ValueFlow(z, y).
                vf.from_join(&vf_by_dst, &vf, |_, &x, &y| (x, y));
                // MemoryAlias(x, w) <- Dereference(y, x), ValueAlias(y, z), Dereference(z, w).
                deref_va.from_join(&deref, &va, |_, &x, &z| (z, x));
                ma.from_join(&deref_va, &deref, |_, &x, &w| (x, w));
                // ValueAlias(x, y) <- ValueFlow(z, x), ValueFlow(z, y).
                va.from_join(&vf, &vf, |_, &x, &y| (x, y));
                // ValueAlias(x, y) <- ValueFlow(z, x), MemoryAlias(z, w), ValueFlow(w, y).
                vf_ma.from_join(&vf, &ma, |_, &x, &w| (w, x));
                va.from_join(&vf_ma, &vf, |_, &x, &y| (x, y));
            }
            vf.complete().len() + ma.complete().len() + va.complete().len()
        }
    }
}

// ---------------------------------------------------------------------------------------
// differential-dataflow (timely, one worker)

/// Materializes `workload` in differential-dataflow, then applies each batch
/// incrementally. Returns the from-scratch time, each batch's latency, and the final
/// number of derived facts.
pub fn differential_session(
    workload: &Workload,
    batches: &[crate::UpdateBatch],
) -> (Duration, Vec<Duration>, usize) {
    use differential_dataflow::input::Input;
    use differential_dataflow::operators::Iterate;
    use differential_dataflow::VecCollection;
    use timely::dataflow::operators::probe::Handle;

    let workload = workload.clone();
    let batches = batches.to_vec();
    timely::execute_directly(move |worker| {
        let names: Vec<&'static str> = workload.inputs.iter().map(|(n, _)| *n).collect();
        let probe = Handle::new();
        let count = std::rc::Rc::new(std::cell::Cell::new(0isize));
        let rules = workload.rules;
        let mut inputs = worker.dataflow::<u32, _, _>(|scope| {
            let mut handles = Vec::new();
            let mut collections: Vec<VecCollection<_, (u32, u32)>> = Vec::new();
            for _ in &names {
                let (handle, collection) = scope.new_collection::<(u32, u32), isize>();
                handles.push(handle);
                collections.push(collection);
            }
            let derived: VecCollection<_, (u32, u32)> = match rules {
                Rules::TcNonlinear => {
                    let e = collections[0].clone();
                    e.clone().iterate(|scope, r| {
                        let e = e.enter(scope);
                        let r_by_dst = r.clone().map(|(x, y)| (y, x));
                        r_by_dst
                            .join_map(r, |_, &x, &z| (x, z))
                            .concat(e)
                            .distinct()
                    })
                }
                Rules::TcLinear => {
                    let e = collections[0].clone();
                    let e_by_dst = e.clone().map(|(x, y)| (y, x));
                    e.clone().iterate(|scope, r| {
                        let e = e.enter(scope);
                        let e_by_dst = e_by_dst.enter(scope);
                        r.join_map(e_by_dst, |_, &z, &x| (x, z))
                            .concat(e)
                            .distinct()
                    })
                }
                Rules::SameGeneration => {
                    let by_parent = collections[0].clone().map(|(c, p)| (p, c));
                    let base = by_parent
                        .clone()
                        .join_map(by_parent.clone(), |_, &x, &y| (x, y));
                    base.clone().iterate(|scope, sg| {
                        let by_parent = by_parent.enter(scope);
                        let base = base.enter(scope);
                        sg.join_map(by_parent.clone(), |_, &b, &x| (b, x))
                            .join_map(by_parent, |_, &x, &y| (x, y))
                            .concat(base)
                            .distinct()
                    })
                }
                Rules::Andersen => {
                    let [address_of, assign, load, store] =
                        [0, 1, 2, 3].map(|i| collections[i].clone());
                    let assign_by_src = assign.map(|(p, q)| (q, p));
                    let load_by_ptr = load.map(|(v, p)| (p, v));
                    address_of.clone().iterate(|scope, pt| {
                        let address_of = address_of.enter(scope);
                        let assign_by_src = assign_by_src.enter(scope);
                        let load_by_ptr = load_by_ptr.enter(scope);
                        let store = store.enter(scope);
                        let assigned = assign_by_src.join_map(pt.clone(), |_, &p, &o| (p, o));
                        let loaded = load_by_ptr
                            .join_map(pt.clone(), |_, &v, &q| (q, v))
                            .join_map(pt.clone(), |_, &v, &o| (v, o));
                        let stored = store
                            .join_map(pt.clone(), |_, &w, &q| (w, q))
                            .join_map(pt, |_, &q, &o| (q, o));
                        address_of
                            .concat(assigned)
                            .concat(loaded)
                            .concat(stored)
                            .distinct()
                    })
                }
                Rules::Alias => {
                    // The three mutually recursive relations as one collection of tagged
                    // facts, iterated together; each derived fact leaves as
                    // `(x, tag << 24 | y)` (values stay below 2^24), so counts stay exact.
                    let [assign, dereference] = [0, 1].map(|i| collections[i].clone());
                    const FLOW: u32 = 0;
                    const MEMORY: u32 = 1;
                    const VALUE: u32 = 2;
                    let ends = assign.clone().flat_map(|(x, y)| [(x, x), (y, y)]);
                    let base = assign
                        .clone()
                        .concat(ends.clone())
                        .map(|(x, y)| (FLOW, x, y))
                        .concat(ends.map(|(x, y)| (MEMORY, x, y)));
                    let derived = base.clone().iterate(|scope, all| {
                        let base = base.enter(scope);
                        let assign_by_dst = assign.enter(scope).map(|(x, z)| (z, x));
                        let dereference = dereference.enter(scope);
                        let of = |tag: u32| {
                            all.clone()
                                .filter(move |f| f.0 == tag)
                                .map(|(_, x, y)| (x, y))
                        };
                        let (flow, memory, value) = (of(FLOW), of(MEMORY), of(VALUE));
                        let flow_by_dst = flow.clone().map(|(x, z)| (z, x));
                        let flow_assigned =
                            assign_by_dst.join_map(memory.clone(), |_, &x, &y| (FLOW, x, y));
                        let flow_closed =
                            flow_by_dst.join_map(flow.clone(), |_, &x, &y| (FLOW, x, y));
                        let memory_new = dereference
                            .clone()
                            .join_map(value, |_, &x, &z| (z, x))
                            .join_map(dereference, |_, &x, &w| (MEMORY, x, w));
                        let value_direct = flow
                            .clone()
                            .join_map(flow.clone(), |_, &x, &y| (VALUE, x, y));
                        let value_through = flow
                            .clone()
                            .join_map(memory, |_, &x, &w| (w, x))
                            .join_map(flow, |_, &x, &y| (VALUE, x, y));
                        base.concat(flow_assigned)
                            .concat(flow_closed)
                            .concat(memory_new)
                            .concat(value_direct)
                            .concat(value_through)
                            .distinct()
                    });
                    derived.map(|(tag, x, y)| (x, tag << 24 | y))
                }
            };
            let counter = count.clone();
            derived
                .inspect(move |(_, _, diff)| counter.set(counter.get() + diff))
                .probe_with(&probe);
            handles
        });

        let started = Instant::now();
        for (handle, (_, facts)) in inputs.iter_mut().zip(&workload.inputs) {
            for fact in facts {
                handle.insert(*fact);
            }
        }
        let mut time = 1;
        for handle in inputs.iter_mut() {
            handle.advance_to(time);
            handle.flush();
        }
        worker.step_while(|| probe.less_than(&time));
        let scratch = started.elapsed();

        let mut latencies = Vec::new();
        for (deletions, insertions) in &batches {
            let started = Instant::now();
            for (relation, fact) in deletions {
                let i = names.iter().position(|n| n == relation).expect("input");
                inputs[i].remove(*fact);
            }
            for (relation, fact) in insertions {
                let i = names.iter().position(|n| n == relation).expect("input");
                inputs[i].insert(*fact);
            }
            time += 1;
            for handle in inputs.iter_mut() {
                handle.advance_to(time);
                handle.flush();
            }
            worker.step_while(|| probe.less_than(&time));
            latencies.push(started.elapsed());
        }
        (scratch, latencies, count.get() as usize)
    })
}
