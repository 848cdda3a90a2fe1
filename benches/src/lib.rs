//! dred's benchmark workloads and the engines measured on them: deterministic, seeded
//! generators, and each program written once per engine (dred, ascent, crepe, datafrog,
//! differential-dataflow).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

pub mod ascent;
pub mod dataflow;
pub mod engines;

/// A small xorshift generator: the workloads must not depend on a crate's RNG version.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn below(&mut self, n: u32) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % u64::from(n)) as u32
    }
}

/// The system allocator, counting the bytes of live allocations ([`live_bytes`]) and their
/// peak ([`peak_live_bytes`]): a binary that measures its heap installs it as its
/// `#[global_allocator]`.
pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// The bytes of live allocations, if [`Counting`] is the global allocator (else 0).
pub fn live_bytes() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// The most bytes of live allocations at any one time so far, if [`Counting`] is the
/// global allocator (else 0): unlike the peak resident set, blind to what the system
/// allocator keeps of freed memory (per-thread arenas, for one).
pub fn peak_live_bytes() -> usize {
    PEAK.load(Ordering::Relaxed)
}

fn grew(by: usize) {
    let live = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(live, Ordering::Relaxed);
}

// SAFETY: every call is passed on to the system allocator unchanged; the counters only
// observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        grew(new_size);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

/// A field of this process's `/proc/self/status` in KiB (`VmHWM`, the peak resident set;
/// `VmRSS`, the current one).
pub fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    (status.lines())
        .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/self/status"))
}

/// Which rules a workload runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    /// `R(x, y) <- E(x, y); R(x, z) <- R(x, y), R(y, z);` (the seed's rules).
    TcNonlinear,
    /// `R(x, y) <- E(x, y); R(x, z) <- E(x, y), R(y, z);`
    TcLinear,
    /// `Sg(x, y) <- Par(x, p), Par(y, p); Sg(x, y) <- Par(x, a), Sg(a, b), Par(y, b);`
    SameGeneration,
    /// Andersen-style points-to: address-of, assign, load, store.
    Andersen,
    /// The context-insensitive alias analysis of the Graspan and Soufflé benchmarks (cspa):
    /// `ValueFlow`, `MemoryAlias` and `ValueAlias`, mutually recursive over `Assign` and
    /// `Dereference`.
    Alias,
}

/// An input: one relation's facts (every input relation here is binary over `u32`).
pub type Facts = Vec<(u32, u32)>;

/// A named workload: rules and inputs.
#[derive(Clone, Debug)]
pub struct Workload {
    pub name: String,
    pub rules: Rules,
    /// Input relations by name: `E` for the closures, `Par` for same-generation,
    /// `AddressOf`, `Assign`, `Load`, `Store` for Andersen.
    pub inputs: Vec<(&'static str, Facts)>,
}

fn dedup(mut facts: Facts) -> Facts {
    facts.sort_unstable();
    facts.dedup();
    facts
}

/// `e` random edges over `n` nodes: one giant strongly connected component when e ≥ 1.5 n.
pub fn random_sparse(n: u32, e: usize, seed: u64) -> Facts {
    let mut rng = Rng::new(seed);
    let mut edges = std::collections::BTreeSet::new();
    while edges.len() < e {
        edges.insert((rng.below(n), rng.below(n)));
    }
    edges.into_iter().collect()
}

/// A chain 0 → 1 → … → n-1 with `shortcuts` random forward edges: a DAG whose reachability
/// facts have many derivations.
pub fn chain_with_shortcuts(n: u32, shortcuts: usize, seed: u64) -> Facts {
    let mut rng = Rng::new(seed);
    let mut edges: Facts = (0..n - 1).map(|i| (i, i + 1)).collect();
    for _ in 0..shortcuts {
        let a = rng.below(n - 1);
        let b = a + 1 + rng.below(n - 1 - a);
        edges.push((a, b));
    }
    dedup(edges)
}

/// A cycle 0 → 1 → … → n-1 → 0 with `chords` random chords: one strongly connected component.
pub fn cycle_with_chords(n: u32, chords: usize, seed: u64) -> Facts {
    let mut rng = Rng::new(seed);
    let mut edges: Facts = (0..n).map(|i| (i, (i + 1) % n)).collect();
    for _ in 0..chords {
        edges.push((rng.below(n), rng.below(n)));
    }
    dedup(edges)
}

/// `Par(child, parent)` of a complete binary tree of the given depth.
pub fn binary_tree(depth: u32) -> Facts {
    let nodes = (1u32 << (depth + 1)) - 1;
    (1..nodes).map(|child| (child, (child - 1) / 2)).collect()
}

/// Andersen inputs: `statements` random statements over `n` variables, by kind.
pub fn andersen(n: u32, statements: usize, seed: u64) -> Vec<(&'static str, Facts)> {
    let mut rng = Rng::new(seed);
    let mut kinds: [Facts; 4] = Default::default();
    for _ in 0..statements {
        // Weights: address-of 25%, assign 35%, load 20%, store 20%.
        let kind = match rng.below(20) {
            0..=4 => 0,
            5..=11 => 1,
            12..=15 => 2,
            _ => 3,
        };
        kinds[kind].push((rng.below(n), rng.below(n)));
    }
    let [address_of, assign, load, store] = kinds.map(dedup);
    vec![
        ("AddressOf", address_of),
        ("Assign", assign),
        ("Load", load),
        ("Store", store),
    ]
}

/// Alias-analysis inputs over `n` variables: `assigns` random `Assign(x, y)` facts, and
/// `Dereference(y, x)` (x stands for `*y`) for `derefs` distinct variables y.
pub fn alias(n: u32, assigns: usize, derefs: usize, seed: u64) -> Vec<(&'static str, Facts)> {
    let mut rng = Rng::new(seed);
    let assign = (0..assigns).map(|_| (rng.below(n), rng.below(n))).collect();
    let mut dereferenced = std::collections::BTreeSet::new();
    let mut dereference = Vec::new();
    while dereference.len() < derefs.min(n as usize) {
        let pointer = rng.below(n);
        if dereferenced.insert(pointer) {
            dereference.push((pointer, rng.below(n)));
        }
    }
    vec![
        ("Assign", dedup(assign)),
        ("Dereference", dedup(dereference)),
    ]
}

/// Recursive programs other than closures, for the deletions of general programs
/// (`general_deletions`): larger than the suite's Andersen, and the alias analysis.
pub fn general_workloads() -> Vec<Workload> {
    let alias_vars = env_or("DRED_ALIAS_VARS", 1000);
    vec![
        Workload {
            name: format!("alias n={alias_vars}"),
            rules: Rules::Alias,
            inputs: alias(alias_vars, alias_vars as usize, alias_vars as usize / 4, 11),
        },
        Workload {
            name: "andersen n=2000 e=3000".to_string(),
            rules: Rules::Andersen,
            inputs: andersen(2000, 3000, 5),
        },
    ]
}

/// The suite's workloads, sized so that the headline rows hold ≥ 10⁶ facts where the
/// machine allows within the suite's time.
pub fn workloads() -> Vec<Workload> {
    let graph = |name: &str, rules, edges| Workload {
        name: name.to_string(),
        rules,
        inputs: vec![("E", edges)],
    };
    vec![
        graph(
            "tc-nonlinear/random n=1000 e=1500",
            Rules::TcNonlinear,
            random_sparse(1000, 1500, 1),
        ),
        graph(
            "tc-linear/random n=3000 e=6000",
            Rules::TcLinear,
            random_sparse(3000, 6000, 2),
        ),
        graph(
            "tc-nonlinear/chain n=800 +800",
            Rules::TcNonlinear,
            chain_with_shortcuts(800, 800, 3),
        ),
        graph(
            "tc-linear/chain n=2000 +2000",
            Rules::TcLinear,
            chain_with_shortcuts(2000, 2000, 3),
        ),
        graph(
            "tc-linear/cycle n=1000 +100",
            Rules::TcLinear,
            cycle_with_chords(1000, 100, 4),
        ),
        Workload {
            name: "same-generation/binary tree depth 10".to_string(),
            rules: Rules::SameGeneration,
            inputs: vec![("Par", binary_tree(10))],
        },
        Workload {
            name: "andersen n=2000 e=3000".to_string(),
            rules: Rules::Andersen,
            inputs: andersen(2000, 3000, 5),
        },
    ]
}

/// Input facts named by relation: the changes of an update batch.
pub type Changes = Vec<(&'static str, (u32, u32))>;

/// An update batch: input facts to delete, then input facts to insert.
pub type UpdateBatch = (Changes, Changes);

/// A workload's update batches: `k` input facts chosen at random (deterministically) to
/// delete, and `k` new facts over the same nodes to insert.
pub fn update_facts(workload: &Workload, k: usize, seed: u64) -> UpdateBatch {
    let mut rng = Rng::new(seed);
    let all: Vec<(&'static str, (u32, u32))> = workload
        .inputs
        .iter()
        .flat_map(|(name, facts)| facts.iter().map(move |f| (*name, *f)))
        .collect();
    let nodes = all
        .iter()
        .map(|(_, (a, b))| a.max(b) + 1)
        .max()
        .unwrap_or(1);
    let mut chosen = std::collections::BTreeSet::new();
    while chosen.len() < k.min(all.len()) {
        chosen.insert(rng.below(all.len() as u32) as usize);
    }
    let deletions = chosen.into_iter().map(|i| all[i]).collect();
    let existing: std::collections::BTreeSet<_> = all.iter().copied().collect();
    let mut insertions = std::collections::BTreeSet::new();
    while insertions.len() < k {
        let (relation, _) = all[rng.below(all.len() as u32) as usize];
        let fact = (relation, (rng.below(nodes), rng.below(nodes)));
        if !existing.contains(&fact) {
            insertions.insert(fact);
        }
    }
    (deletions, insertions.into_iter().collect())
}

/// A workload's mixed batch of `k` facts: the ⌈k/2⌉ first deletions of
/// [`update_facts`]`(workload, k, 7)` with its ⌊k/2⌋ first new facts.
pub fn mixed_batch(workload: &Workload, k: usize) -> UpdateBatch {
    let (mut deletions, mut insertions) = update_facts(workload, k, 7);
    let half = k.div_ceil(2);
    deletions.truncate(half);
    insertions.truncate(k - half);
    (deletions, insertions)
}

/// The workload's inputs after deleting `deletions` and inserting `insertions`.
pub fn apply(
    workload: &Workload,
    deletions: &[(&'static str, (u32, u32))],
    insertions: &[(&'static str, (u32, u32))],
) -> Workload {
    let mut changed = workload.clone();
    for (name, facts) in &mut changed.inputs {
        facts.retain(|f| !deletions.contains(&(*name, *f)));
        facts.extend(
            insertions
                .iter()
                .filter(|(n, _)| n == name)
                .map(|(_, f)| *f),
        );
        *facts = dedup(std::mem::take(facts));
    }
    changed
}

/// Update batch sizes measured with the automatic strategy.
pub const UPDATE_SIZES: [usize; 4] = [1, 10, 100, 1000];

/// The largest batch measured with alternative proofs alone.
pub const ALT_PROOF_MAX_BATCH: usize = 10;

/// Update batch sizes measured with DRed (and differential-dataflow) on a workload. On
/// graphs with one giant strongly connected component, every DRed deletion over-deletes
/// nearly the whole closure (the subject of the alternative-proof strategy), so only the
/// smallest and largest sizes are run there.
pub fn update_sizes(workload: &Workload) -> Vec<usize> {
    if workload.name.contains("random") || workload.name.contains("cycle") {
        vec![1, 1000]
    } else {
        vec![1, 10, 100, 1000]
    }
}

/// `components` disjoint random graphs of `n` nodes and `e` edges each (node ids offset per
/// component): a bound query on node 0 touches only the first component.
pub fn forest(components: u32, n: u32, e: usize, seed: u64) -> Facts {
    (0..components)
        .flat_map(|c| {
            random_sparse(n, e, seed + u64::from(c))
                .into_iter()
                .map(move |(a, b)| (a + c * n, b + c * n))
        })
        .collect()
}

/// The magic-set benchmark's graph: 40 components of 60 nodes and 90 edges.
pub fn query_forest() -> Facts {
    forest(40, 60, 90, 11)
}

/// The value of environment variable `name`, or `default` when it is unset or unparsable:
/// how the suite's binaries read their settings (`DRED_DD_REPS`, `DRED_GUARD_PAIRS`, …).
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The median of `samples` (the upper one of an even count).
///
/// ```
/// assert_eq!(dred_benches::median(vec![3.0, 1.0, 2.0]), 2.0);
/// ```
pub fn median<T: PartialOrd>(mut samples: Vec<T>) -> T {
    samples.sort_by(|a, b| a.partial_cmp(b).expect("comparable samples"));
    samples.swap_remove(samples.len() / 2)
}

/// The JSON fields (no braces) of a binary's line for engines timed in rotation: each
/// engine's median time as `"<name>_s"`, then the median of the rounds' ratios as
/// `"<ratio>"` with their least and greatest.
///
/// ```
/// let line = dred_benches::rotation_fields(
///     [("a", vec![1.0, 3.0, 2.0])],
///     "ratio",
///     vec![0.5, 0.25, 1.0],
/// );
/// assert_eq!(line, r#""a_s": 2, "ratio": 0.5, "least": 0.25, "greatest": 1"#);
/// ```
pub fn rotation_fields<'a>(
    times: impl IntoIterator<Item = (&'a str, Vec<f64>)>,
    ratio: &str,
    ratios: Vec<f64>,
) -> String {
    let least = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let greatest = ratios.iter().copied().fold(0.0, f64::max);
    let mut fields: Vec<String> = times
        .into_iter()
        .map(|(name, times)| format!("\"{name}_s\": {}", median(times)))
        .collect();
    fields.push(format!(
        "\"{ratio}\": {}, \"least\": {least}, \"greatest\": {greatest}",
        median(ratios)
    ));
    fields.join(", ")
}
