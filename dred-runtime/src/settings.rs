//! How a program stores its facts and runs its joins: one value, chosen when the program
//! is built and kept through its recomputes, so that nothing an update does depends on
//! the thread that runs it.
//!
//! Every setting has a default tuned for real workloads; the others exist so that tests can
//! drive small programs down the paths that only large ones take (batched head tests,
//! bitsets, ghosts, split delta chunks, forced join orders) and so that benchmarks can
//! compare the alternatives. This module depends on no other module of the crate.

/// From how many bytes of facts a relation counts as outgrowing the cache: its joins'
/// heads are tested in batches, and from a sixteenth of it the relation may keep a bitset
/// of its facts. Below it, the fact table stays in the cache, lookups do not miss, and a
/// batch only adds work.
pub const LARGE_FROM_BYTES: usize = 8 << 20;

/// The share of a relation's facts past which the ghosts that removals leave in its fact
/// table are purged: an eighth, as for retired facts, so that their room stays bounded and
/// the purge is amortized.
pub const GHOST_SHARE: usize = 8;

/// How many delta facts a grouped delta join sorts by key at a time. A sorted copy of a
/// whole delta is live beside a materialization's largest round, at its memory peak; a
/// chunk that fits the cache also sorts faster. A key whose facts split over chunks walks
/// its bucket once per chunk: few rows beside a round's.
pub const DELTA_CHUNK: usize = 1 << 14;

/// From how much counted work (in units of a row visited, [`Work`](crate::Work)) a join
/// round is expected to do before it is split over threads (when the program has more
/// than one): below it, waking other threads and merging their heads costs more than the
/// joins they share. A round of a linear closure's cycle, a few thousand facts that each
/// read a few rows, stays on one thread; a materialization's large rounds split.
pub const PARALLEL_FROM: u64 = 1 << 17;

/// Which join a loss of support runs for a rule variant that has a head-first join as well
/// as its body-first one. Both find the same heads; by default the cheaper is chosen per
/// group of delta facts. Tests force either, to check that they agree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HeldJoins {
    /// Per group of delta facts (and per fact), the join that reads fewer facts.
    #[default]
    ByCost,
    /// The head-first join for every delta fact.
    HeadsFirst,
    /// The body-first join for every delta fact.
    BodyFirst,
}

/// The settings of one relation's storage, which the relation receives from its program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Storage {
    /// See [`Settings::with_large_from_bytes`].
    pub large_from_bytes: usize,
    /// See [`Settings::with_ghost_share`].
    pub ghost_share: usize,
    /// See [`Settings::with_dense`].
    pub dense: bool,
}

impl Default for Storage {
    fn default() -> Self {
        Storage {
            large_from_bytes: LARGE_FROM_BYTES,
            ghost_share: GHOST_SHARE,
            dense: true,
        }
    }
}

/// A program's settings (see the [module](self) docs), built from the defaults:
///
/// ```
/// use dred_runtime::settings::{HeldJoins, Settings};
/// let settings = Settings::default()
///     .with_held_joins(HeldJoins::BodyFirst)
///     .with_delta_chunk(2);
/// assert_eq!(settings.delta_chunk(), 2);
/// assert!(settings.reachability());
/// assert_eq!(Settings::default().held_joins(), HeldJoins::ByCost);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Settings {
    storage: Storage,
    held_joins: HeldJoins,
    delta_chunk: usize,
    reachability: bool,
    threads: usize,
    parallel_from: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            storage: Storage::default(),
            held_joins: HeldJoins::default(),
            delta_chunk: DELTA_CHUNK,
            reachability: true,
            threads: std::thread::available_parallelism().map_or(1, usize::from),
            parallel_from: PARALLEL_FROM,
        }
    }
}

impl Settings {
    /// From how many bytes of facts a relation counts as outgrowing the cache (default
    /// [`LARGE_FROM_BYTES`]); 0 treats every relation so.
    pub fn with_large_from_bytes(mut self, bytes: usize) -> Self {
        self.storage.large_from_bytes = bytes;
        self
    }

    /// Past which share of a relation's facts the ghosts of removed facts are purged
    /// (default [`GHOST_SHARE`], an eighth); 0 purges them only when a table must grow or
    /// shrink, or its bitset be rebuilt.
    pub fn with_ghost_share(mut self, share: usize) -> Self {
        self.storage.ghost_share = share;
        self
    }

    /// Whether relations of small integers may keep their facts dense, a bit and a stamp
    /// per point of their box of values (default `true`); if not, they keep tables beside
    /// their bitsets.
    pub fn with_dense(mut self, allowed: bool) -> Self {
        self.storage.dense = allowed;
        self
    }

    /// Which join a loss of support runs where a rule has two (default
    /// [`HeldJoins::ByCost`]).
    pub fn with_held_joins(mut self, joins: HeldJoins) -> Self {
        self.held_joins = joins;
        self
    }

    /// How many delta facts a grouped delta join sorts at a time (default
    /// [`DELTA_CHUNK`]; at least 1).
    pub fn with_delta_chunk(mut self, chunk: usize) -> Self {
        self.delta_chunk = chunk.max(1);
        self
    }

    /// Whether a materialization may decide to keep closure relations by reachability (see
    /// [`crate::Bookkeeping::reachability`]; default `true`). If not, the alternative
    /// proofs check closure facts by their stamps, as every other relation's.
    pub fn with_reachability(mut self, allowed: bool) -> Self {
        self.reachability = allowed;
        self
    }

    /// How many threads a join round may be split over (default: the number of cores the
    /// process may use; at least 1). With 1, every join runs on the calling thread, as
    /// code without threads would. Facts, and the reports and explanations of every
    /// strategy but [`Strategy::Auto`](crate::Strategy::Auto), are the same for every
    /// number (see [`crate::parallel`]).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// From how much work a join round is expected to count before it is split over
    /// threads (default [`PARALLEL_FROM`]; at least 1, which splits every round). A round
    /// expects as many units per delta fact as the round before it counted (16 for the
    /// first one).
    pub fn with_parallel_from(mut self, units: u64) -> Self {
        self.parallel_from = units.max(1);
        self
    }

    /// See [`Settings::with_threads`].
    #[inline]
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// See [`Settings::with_parallel_from`].
    #[inline]
    pub fn parallel_from(&self) -> u64 {
        self.parallel_from
    }

    /// The storage settings every relation of the program receives.
    pub fn storage(&self) -> Storage {
        self.storage
    }

    /// See [`Settings::with_held_joins`].
    #[inline]
    pub fn held_joins(&self) -> HeldJoins {
        self.held_joins
    }

    /// See [`Settings::with_delta_chunk`].
    #[inline]
    pub fn delta_chunk(&self) -> usize {
        self.delta_chunk
    }

    /// See [`Settings::with_reachability`].
    pub fn reachability(&self) -> bool {
        self.reachability
    }
}
