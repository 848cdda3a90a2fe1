//! Join rounds split over threads (`dred::runtime::parallel`): a program whose facts cannot
//! cross threads still runs, on the calling thread; a budget spent by the parts of a round
//! stops it where one thread stops it; and every part of a round counts the work of its
//! share, so that the parts together count what the whole round counts; and an insertion
//! round sampled for its heads' room derives and counts what it does in one piece.

use std::rc::Rc;

use dred::runtime::parallel::{fire, fire_sized, SAMPLED_FROM, SAMPLED_RATE};
use dred::runtime::{Admit, FactSets, Program, Settings, Work};
use dred::{Batch, Trace};

mod shared_names {
    use std::rc::Rc;

    // `Rc<str>` is neither `Send` nor `Sync`: the generated program falls back to running
    // its rounds on the calling thread.
    dred::datalog! {
        pub struct Names;
        @input pub struct Link(pub Rc<str>, pub Rc<str>);
        pub struct Reaches(pub Rc<str>, pub Rc<str>);
        Reaches(x, y) <- Link(x, y);
        Reaches(x, z) <- Reaches(x, y), Reaches(y, z);
    }
}

mod closure {
    dred::datalog! {
        pub struct Closure;
        @input pub struct E(pub u32, pub u32);
        pub struct R(pub u32, pub u32);
        R(x, y) <- E(x, y);
        R(x, z) <- R(x, y), E(y, z);
        R(x, z) <- R(x, y), R(y, z);
    }
}

fn split_everything(threads: usize) -> Settings {
    Settings::default()
        .with_threads(threads)
        .with_parallel_from(1)
}

#[test]
fn facts_that_cannot_cross_threads_are_joined_on_the_calling_thread() {
    use shared_names::*;
    let name = |i: u32| -> Rc<str> { Rc::from(format!("n{i}")) };
    let links = || Batch::new().insert_all((0..40).map(|i| Link(name(i), name((i + 1) % 40))));
    let (one, _) = Names::materialize_with_settings(links(), split_everything(1), Trace::Counts);
    let (four, _) = Names::materialize_with_settings(links(), split_everything(4), Trace::Counts);
    assert_eq!(one.all_facts().to_vec(), four.all_facts().to_vec());
    assert_eq!(four.relation::<Reaches>().len(), 40 * 40);
}

/// A cycle of 200 nodes with chords, its closure materialized on `threads` threads (the
/// tables' order depends on it).
fn cycle(threads: usize) -> closure::Closure {
    use closure::*;
    let edges = (0..200).flat_map(|i| [E(i, (i + 1) % 200), E(i, (i * 13) % 200)]);
    let settings = split_everything(threads);
    Closure::materialize_with_settings(Batch::new().insert_all(edges), settings, Trace::Counts).0
}

/// Every fact of `R` as a delta, fired under `Admit::NotIn` an empty set (a round of
/// over-deletion that meets every instance) with `work`.
fn fire_all(program: &closure::Closure, mut work: Work) -> (closure::ClosureFacts, Work) {
    use closure::*;
    let delta = ClosureFacts {
        R: program
            .relation::<R>()
            .iter()
            .map(dred::runtime::Stored::into_row)
            .collect(),
        ..ClosureFacts::default()
    };
    let nothing = ClosureFacts::default();
    let mut out = ClosureFacts::default();
    fire(
        program,
        &delta,
        Admit::NotIn(&nothing),
        &mut out,
        &mut Vec::new(),
        &mut work,
    );
    (out, work)
}

/// The program of `cycle(1)`, and a copy of it (the same tables, in the same order) whose
/// rounds split over two threads.
fn cycles() -> (closure::Closure, closure::Closure) {
    let one = cycle(1);
    let mut two = one.clone();
    two.bookkeeping_mut().settings = split_everything(2);
    (one, two)
}

#[test]
fn the_parts_of_a_round_count_the_work_of_the_whole() {
    let (one, two) = cycles();
    let (heads, counted) = fire_all(&one, Work::unlimited());
    let (split_heads, split_counted) = fire_all(&two, Work::unlimited());
    assert_eq!(heads.to_vec(), split_heads.to_vec());
    assert_eq!(heads.len(), 200 * 200);
    assert_eq!(counted.counted(), split_counted.counted());
}

#[test]
fn a_budget_spent_by_the_parts_stops_the_round_where_one_thread_stops_it() {
    let (one, two) = cycles();
    let whole = fire_all(&one, Work::unlimited()).1.units();
    // Each part alone stays within the budget; together they pass it.
    let budget = whole * 3 / 4;
    let (heads, counted) = fire_all(&one, Work::limited(budget));
    let (split_heads, split_counted) = fire_all(&two, Work::limited(budget));
    assert!(counted.is_exhausted() && split_counted.is_exhausted());
    assert_eq!(counted.counted(), split_counted.counted());
    assert_eq!(heads.to_vec(), split_heads.to_vec());
}

/// A cycle of `nodes` nodes and a partial closure of it (the pairs up to 3 edges apart),
/// held unchecked, run with `settings`; and every fact of its `R` as a delta.
fn partial_closure(nodes: u32, settings: Settings) -> (closure::Closure, closure::ClosureFacts) {
    use closure::*;
    let pairs =
        |reach: u32| (0..nodes).flat_map(move |i| (1..=reach).map(move |d| (i, (i + d) % nodes)));
    let held = ClosureFacts {
        E: (0..nodes).map(|i| (i, (i + 1) % nodes)).collect(),
        R: pairs(3).collect(),
    };
    let program = dred::runtime::maintain::from_facts_unchecked_with_settings(&held, settings);
    let delta = ClosureFacts {
        R: held.R,
        ..ClosureFacts::default()
    };
    (program, delta)
}

#[test]
fn a_round_sampled_for_its_room_derives_and_counts_what_the_whole_round_does() {
    let (whole, delta) = partial_closure(2000, Settings::default().with_threads(1));
    assert!(delta.len() >= SAMPLED_FROM, "the round is sampled");
    let mut heads = closure::ClosureFacts::default();
    let mut counted = Work::unlimited();
    fire(
        &whole,
        &delta,
        Admit::Absent,
        &mut heads,
        &mut Vec::new(),
        &mut counted,
    );
    // The pairs 4 to 6 edges apart.
    assert_eq!(heads.len(), 3 * 2000);
    for threads in [1, 2, 4] {
        let (program, delta) = partial_closure(2000, split_everything(threads));
        let mut sized = closure::ClosureFacts::default();
        // As after a round that counted one unit per delta fact: few enough to sample.
        let mut sized_counted = Work::unlimited();
        sized_counted.rate_round(1, 0);
        assert!(sized_counted.round_rate() <= SAMPLED_RATE);
        fire_sized(&program, &delta, &mut sized, &mut sized_counted);
        assert_eq!(sized.to_vec(), heads.to_vec(), "{threads} threads");
        assert_eq!(
            sized_counted.counted(),
            counted.counted(),
            "{threads} threads"
        );
    }
}
