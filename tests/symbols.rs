//! `Symbol` columns: strings read from text are interned in a table the program owns,
//! shared with later batches, and freed with their facts: the heap, measured by a counting
//! allocator, returns to where it was when the program is dropped, and stays bounded while
//! a long-running program keeps reading new strings and deleting old ones.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::Mutex;

use dred::runtime::io::parse_tsv;
use dred::runtime::{FactSets, Symbol, Symbols};
use dred::Batch;

/// Bytes allocated and not yet freed, by every thread of this test binary.
static LIVE: AtomicIsize = AtomicIsize::new(0);

struct Counting;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The tests of this binary measure one heap: one at a time.
static HEAP: Mutex<()> = Mutex::new(());

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

dred::datalog! {
    pub struct Visits;
    @input pub struct Visit(pub Symbol, pub Symbol);
    pub struct Reach(pub Symbol, pub Symbol);
    Reach(x, y) <- Visit(x, y);
    Reach(x, z) <- Reach(x, y), Visit(y, z);
}

dred::datalog! {
    pub struct Leaky;
    @input pub struct LeakyVisit(pub &'static str, pub &'static str);
}

/// `n` chain links whose names are long and differ from every other call's (`tag`).
fn chain_text(tag: &str, from: usize, n: usize) -> String {
    let name = |i: usize| format!("{tag}-{i:06}-{}", "x".repeat(200));
    (from..from + n)
        .map(|i| format!("{}\t{}\n", name(i), name(i + 1)))
        .collect()
}

const LINKS: usize = 300;
/// Far more than the program's own bookkeeping, far less than its strings (300 links,
/// over 200 bytes a name).
const SLACK: isize = 16 * 1024;

#[test]
fn a_program_frees_its_strings_when_dropped() {
    let _heap = HEAP.lock().unwrap_or_else(|e| e.into_inner());
    let before = live();
    {
        let mut batch = Batch::new();
        parse_tsv::<Visits>(
            "Visit",
            &chain_text("kept", 0, LINKS),
            "t",
            true,
            &mut batch,
        )
        .unwrap();
        let (program, _) = Visits::materialize(batch);
        assert_eq!(program.relation::<Reach>().len(), LINKS * (LINKS + 1) / 2);
        assert_eq!(program.symbols().len(), LINKS + 1, "one copy of each name");
        let held = live() - before;
        assert!(held > (LINKS * 200) as isize, "{held} bytes held");
    }
    let after = live() - before;
    assert!(
        after < SLACK,
        "{after} bytes still held after the program was dropped"
    );

    // The same strings in a `&'static str` column are leaked for good.
    let mut batch = Batch::new();
    let text = chain_text("leaked", 0, LINKS);
    parse_tsv::<Leaky>("LeakyVisit", &text, "t", true, &mut batch).unwrap();
    drop(Leaky::materialize(batch));
    let leaked = live() - before;
    assert!(leaked > (LINKS * 200) as isize, "{leaked} bytes leaked");
}

#[test]
fn a_long_running_program_reading_new_strings_stays_bounded() {
    let _heap = HEAP.lock().unwrap_or_else(|e| e.into_inner());
    let mut batch = Batch::new();
    parse_tsv::<Visits>("Visit", &chain_text("round0", 0, 50), "t", true, &mut batch).unwrap();
    let (mut program, _) = Visits::materialize(batch);
    let mut previous = chain_text("round0", 0, 50);
    let mut sizes = Vec::new();
    for round in 1..=40 {
        let text = chain_text(&format!("round{round}"), 0, 50);
        let mut batch = Batch::new().with_symbols(program.symbols());
        parse_tsv::<Visits>("Visit", &previous, "t", false, &mut batch).unwrap();
        parse_tsv::<Visits>("Visit", &text, "t", true, &mut batch).unwrap();
        drop(program.update(batch));
        assert_eq!(program.relation::<Reach>().len(), 50 * 51 / 2);
        previous = text;
        sizes.push((live(), program.symbols().len()));
    }
    let (heap_early, _) = sizes[4];
    let (heap_late, table_late) = *sizes.last().unwrap();
    assert!(
        heap_late < heap_early + SLACK,
        "the heap grew from {heap_early} to {heap_late} bytes"
    );
    assert!(table_late <= 4 * 51, "{table_late} strings in the table");
}

#[test]
fn later_batches_share_the_programs_strings() {
    let _heap = HEAP.lock().unwrap_or_else(|e| e.into_inner());
    let mut batch = Batch::new();
    parse_tsv::<Visits>("Visit", "a\tb\n", "t", true, &mut batch).unwrap();
    let (mut program, _) = Visits::materialize(batch);
    let table = program.symbols();
    let mut batch = Batch::new().with_symbols(program.symbols());
    parse_tsv::<Visits>("Visit", "b\tc\n", "t", true, &mut batch).unwrap();
    program.update(batch);
    assert_eq!(table.len(), 3);
    let facts: Vec<Reach> = program.relation::<Reach>().sorted();
    let b_as_head = &facts.iter().find(|f| f.0.as_str() == "b").unwrap().0;
    assert!(Symbol::ptr_eq(b_as_head, &table.intern("b")));
    assert!(program.contains(&Reach("a".into(), "c".into())));
    // Symbols read elsewhere are equal all the same.
    assert_eq!(Symbols::default().intern("a"), table.intern("a"));
    assert_eq!(program.facts().ground()[0].to_string(), "Reach(a,b)");
}
