//! Hash flooding: the time per fact of inserting facts crafted to collide under the fixed
//! hash, against random facts, into a program already holding random facts. Build it twice
//! to compare the hashes: `cargo run --release -p dred-benches --bin flooding` (the default
//! keyed hash) and the same with `--features dred/fixed-hash`. Prints one line per kind of
//! key: the median of `DRED_FLOOD_REPS` (default 5) updates of `DRED_FLOOD_FACTS` (default
//! 5,000) facts each.

use std::time::Instant;

use dred::Batch;
use dred_benches::env_or;

dred::datalog! {
    pub struct Links;
    @input pub struct Link(pub u64, pub u64);
    pub struct Linked(pub u64, pub u64);
    Linked(x, y) <- Link(x, y);
}

/// Facts whose fixed hash is the same: the second word cancels what the first left in the
/// hash's state (one rotate-xor-multiply per word).
fn colliding(from: u64, n: u64) -> Vec<Link> {
    const MULTIPLIER: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    (from..from + n)
        .map(|a| Link(a, a.wrapping_mul(MULTIPLIER).rotate_left(5) ^ 0xdead))
        .collect()
}

fn random(seed: u64, n: u64) -> Vec<Link> {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    (0..n).map(|_| Link(next(), next())).collect()
}

fn main() {
    let facts: u64 = env_or("DRED_FLOOD_FACTS", 5_000);
    let reps: usize = env_or("DRED_FLOOD_REPS", 5);
    let hash = if dred_fixed_hash() { "fixed" } else { "keyed" };
    let (base, _) = Links::materialize(Batch::new().insert_all(random(1, 100_000)));
    for (kind, make) in [
        ("random", random as fn(u64, u64) -> Vec<Link>),
        ("crafted", colliding),
    ] {
        let mut times = Vec::new();
        for rep in 0..reps {
            let links = make(1_000_000 * (rep as u64 + 2), facts);
            let mut program = base.clone();
            let started = Instant::now();
            program.update(Batch::new().insert_all(links));
            times.push(started.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        println!(
            "{hash} hash, {kind} keys: {:.3} µs a fact ({facts} facts, median of {reps})",
            median * 1e6 / facts as f64
        );
    }
}

/// Whether the runtime was built with the fixed hash: its colliding keys then share one
/// hash under the program's own hasher.
fn dred_fixed_hash() -> bool {
    use std::hash::BuildHasher;
    let keys = colliding(1, 2);
    let state = dred::runtime::FactHashState;
    state.hash_one(&keys[0]) == state.hash_one(&keys[1])
}
