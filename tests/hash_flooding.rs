//! Keys crafted to collide under the fixed hash ([`FixedHasher`]) cost a program with the
//! default keyed hash no more than random keys do. Cost is counted as key comparisons (a
//! table of colliding keys compares a probed key with every one of them), not timed; the
//! benchmarks time it (`cargo run --release -p dred-benches --bin flooding`).

use std::cell::Cell;
use std::collections::HashSet;
use std::hash::{BuildHasher, BuildHasherDefault, Hash, Hasher};

use dred::runtime::FixedHasher;
use dred::Batch;

thread_local! {
    static COMPARISONS: Cell<u64> = const { Cell::new(0) };
}

/// A `u64` that counts how often it is compared for equality (on this thread).
#[derive(Clone, Copy, Debug)]
pub struct Key(pub u64);

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        COMPARISONS.with(|c| c.set(c.get() + 1));
        self.0 == other.0
    }
}
impl Eq for Key {}
impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0);
    }
}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}

dred::datalog! {
    pub struct Links;
    @input pub struct Link(pub Key, pub Key);
    pub struct Linked(pub Key, pub Key);
    Linked(x, y) <- Link(x, y);
}

const FACTS: u64 = 2_000;

/// `Link(a, b)` with `b` chosen so that the fixed hash's state after both words is the
/// same for every `a`: one rotate-xor-multiply per word, so the second word can cancel
/// whatever the first left.
fn colliding(n: u64) -> Vec<Link> {
    const MULTIPLIER: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    (1..=n)
        .map(|a| {
            Link(
                Key(a),
                Key(a.wrapping_mul(MULTIPLIER).rotate_left(5) ^ 0xdead),
            )
        })
        .collect()
}

fn random(n: u64) -> Vec<Link> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        // splitmix64
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    (0..n).map(|_| Link(Key(next()), Key(next()))).collect()
}

fn comparisons(run: impl FnOnce()) -> u64 {
    let before = COMPARISONS.with(Cell::get);
    run();
    COMPARISONS.with(Cell::get) - before
}

/// Comparisons to materialize `links`, then to delete and re-insert a tenth of them.
fn program_comparisons(links: &[Link]) -> (u64, u64) {
    let mut program = None;
    let build = comparisons(|| {
        program = Some(Links::materialize(Batch::new().insert_all(links.iter().cloned())).0)
    });
    let mut program = program.unwrap();
    let tenth = &links[..links.len() / 10];
    let update = comparisons(|| {
        program.update(Batch::new().delete_all(tenth.iter().cloned()));
        program.update(Batch::new().insert_all(tenth.iter().cloned()));
    });
    assert_eq!(program.relation::<Linked>().len(), links.len());
    (build, update)
}

#[test]
fn the_crafted_keys_collide_under_the_fixed_hash() {
    let fixed = BuildHasherDefault::<FixedHasher>::default();
    let crafted = colliding(FACTS);
    let first = fixed.hash_one(&crafted[0]);
    assert!(crafted.iter().all(|link| fixed.hash_one(link) == first));
    // A set under the fixed hash compares each new key with every earlier one.
    let count = comparisons(|| {
        let set: HashSet<Link, BuildHasherDefault<FixedHasher>> = crafted.into_iter().collect();
        assert_eq!(set.len() as u64, FACTS);
    });
    assert!(count >= FACTS * FACTS / 4, "{count} comparisons");
}

#[test]
#[cfg_attr(
    feature = "fixed-hash",
    ignore = "the feature `fixed-hash` opts out of the keyed hash"
)]
fn crafted_keys_cost_the_keyed_hash_no_more_than_random_keys() {
    let (crafted_build, crafted_update) = program_comparisons(&colliding(FACTS));
    let (random_build, random_update) = program_comparisons(&random(FACTS));
    eprintln!(
        "comparisons, crafted/random: materialize {crafted_build}/{random_build}, update {crafted_update}/{random_update}"
    );
    // Each fact is compared a few times whatever its key (checked against its tables'
    // candidates); colliding keys would make it thousands.
    assert!(
        crafted_build <= 2 * random_build.max(FACTS),
        "{crafted_build} vs {random_build}"
    );
    assert!(
        crafted_update <= 2 * random_update.max(FACTS / 10),
        "{crafted_update} vs {random_update}"
    );
    assert!(
        crafted_build < 20 * FACTS,
        "{crafted_build} comparisons for {FACTS} facts"
    );
}
