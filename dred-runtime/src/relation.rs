//! One relation: a membership set plus the hash indexes its program's join plans asked for.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hash};
use std::sync::OnceLock;

use hashbrown::hash_table::HashTable;

pub use crate::fact::{claims_support, FactHasher, FactSet, Stamp, Tuple, UNSTAMPED};
use crate::fact_map::FactMap;
use crate::settings::Storage;

/// The room a relation's facts took ([`Relation::into_room`]): what a recompute reserves
/// for them before they are derived anew.
#[derive(Default)]
pub struct Room {
    len: usize,
    /// The box of a dense relation, holding nothing, and its array of stamps.
    dense: Option<(crate::bitset::Bitset, Vec<Stamp>)>,
}

/// Hashes an index key: a tuple of references to the key columns, e.g. `(&x, &"a")`.
///
/// Index buckets are addressed by this hash rather than by an owned key, so a probe never
/// clones or allocates (a `String` column is hashed through a borrow). Insertion and probing
/// use the same [`FactHasher`], so equal keys always meet in the same bucket.
#[inline]
pub fn key_hash<K: Hash + ?Sized>(key: &K) -> u64 {
    BuildHasherDefault::<FactHasher>::default().hash_one(key)
}

/// The runs of equal keys of a slice sorted by key, in order: how a delta join walks its
/// delta grouped by the values the later steps read (each run is one group).
///
/// ```
/// let sorted = [(1, 'a'), (1, 'b'), (2, 'c')];
/// let runs: Vec<_> = dred_runtime::key_runs(&sorted).collect();
/// assert_eq!(runs, [&sorted[..2], &sorted[2..]]);
/// ```
pub fn key_runs<K: PartialEq, V>(sorted: &[(K, V)]) -> KeyRuns<'_, K, V> {
    KeyRuns { rest: sorted }
}

/// The iterator of [`key_runs`].
pub struct KeyRuns<'s, K, V> {
    rest: &'s [(K, V)],
}

impl<'s, K: PartialEq, V> Iterator for KeyRuns<'s, K, V> {
    type Item = &'s [(K, V)];

    fn next(&mut self) -> Option<Self::Item> {
        let (key, _) = self.rest.first()?;
        let end = self
            .rest
            .iter()
            .position(|(other, _)| other != key)
            .unwrap_or(self.rest.len());
        let (run, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(run)
    }
}

/// The rows of a bucket and their facts' stamps ([`Relation::probe_stamped`]).
pub struct StampedRows<'s, T, I, Row> {
    relation: &'s Relation<T, I>,
    rows: &'s [Row],
    stamps: &'s [Stamp],
}

impl<'s, T: Tuple, I, Row> StampedRows<'s, T, I, Row> {
    /// The rows, as [`Relation::probe`] gives them.
    #[inline]
    pub fn rows(&self) -> &'s [Row] {
        self.rows
    }

    /// How many rows there are.
    #[inline]
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// The stamps the bucket keeps beside its rows, in order (see
    /// [`IndexLayout::STAMPED`]): one a row, [`RETIRED`](Stamp::MAX) for a retired fact.
    /// Empty if the index keeps none.
    #[inline]
    pub fn kept_stamps(&self) -> &'s [Stamp] {
        self.stamps
    }

    /// Whether there are none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The stamp of `fact`, whose row the bucket keeps with stamp `kept`
    /// ([`StampedRows::kept_stamps`]), if it holds.
    #[inline]
    pub fn stamp(&self, kept: Stamp, fact: &T) -> Option<Stamp> {
        match kept {
            RETIRED => self.relation.stamp(fact),
            kept => {
                debug_assert_eq!(
                    self.relation.stamp(fact),
                    Some(kept),
                    "{fact:?}'s row is stale"
                );
                Some(kept)
            }
        }
    }
}

/// The bytes a hash table with `buckets` buckets holds, for entries of `entry` bytes: each
/// a slot and a control byte, and one group of control bytes more.
fn table_bytes(buckets: usize, entry: usize) -> usize {
    const GROUP: usize = 16;
    if buckets == 0 {
        return 0;
    }
    buckets * (entry + 1) + GROUP
}

/// The buckets a std (hashbrown) hash table that reports `capacity` has: a power of two,
/// seven eighths of them usable once there are eight.
fn buckets_for(capacity: usize) -> usize {
    match capacity {
        0 => 0,
        1..=7 => (capacity + 1).next_power_of_two(),
        _ => (capacity * 8 / 7).next_power_of_two(),
    }
}

/// How an index splits a relation's facts: the key columns that name a fact's bucket, and
/// the row the bucket keeps of it. `datalog!` generates one (a unit struct) per index its
/// join plans probe.
///
/// A row of a relation whose columns are all plain values (numbers, `char`, `bool`,
/// `&'static str`) holds only the columns outside the key — the key is the bucket's, and a
/// fact is rebuilt from both at no cost — so a closure's index costs half the bytes its
/// facts do (plus a stamp a row if it keeps stamps). Other relations' rows are whole
/// facts, as rebuilding a `String` would cost an allocation a row.
pub trait IndexLayout<T>: 'static {
    /// The key columns' values.
    type Key: Tuple;
    /// What a bucket keeps of a fact.
    type Row: Tuple;
    /// [`key_hash`] of a tuple of references to `fact`'s key columns, as probes hash them.
    fn hash(fact: &T) -> u64;
    /// Whether `fact`'s key columns hold `key`.
    fn matches(key: &Self::Key, fact: &T) -> bool;
    /// `fact`'s key.
    fn key(fact: &T) -> Self::Key;
    /// `fact`'s row.
    fn row(fact: &T) -> Self::Row;
    /// Whether each row keeps its fact's stamp beside it, for the indexes whose buckets
    /// joins read with their stamps ([`Relation::probe_stamped`]): a bucket's stamps are
    /// then read in one pass instead of looked up row by row (a cache miss each in a large
    /// relation), its rows are kept in stamp order (see `Bucket`), and each stamp change
    /// costs a pass over the fact's buckets instead. Non-linear chain, 1 deletion with
    /// alternative proofs: last-level cache misses −51%, first-level −44% (callgrind's
    /// cache model); the price is a stamp's 4 bytes a row (non-linear random's peak 15.6 →
    /// 18.6 MiB).
    const STAMPED: bool = false;
    /// Whether [`Relation::finish_materialization`] builds the index. `datalog!` leaves
    /// out an index of a derived relation that only joins from an input fact probe, when
    /// each of those joins can scan a small input relation instead while the index is
    /// unbuilt (same-generation's two indexes on `Sg`: a fifth of its materialization).
    /// Such an index is built by the first probe, and then maintained.
    const EAGER: bool = true;
    /// Whether the key is the fact's first columns, in order: then facts in the order of
    /// their columns come grouped by key (see [`IndexLayout::fact_from_columns`]).
    const KEY_LEADS: bool = false;
    /// The fact whose columns, each read as the one integer its `Hash` writes, are
    /// `columns`; `None` if the relation's facts cannot be rebuilt so (`datalog!` rebuilds
    /// those whose columns are all integers, chars and bools). With it, and a key that
    /// leads, an index is built from its relation's bitset: one pass over a bit per
    /// possible fact in order, bucket after bucket, where the other build passes twice over
    /// the fact table in hash order, each fact's row going to a bucket of its own.
    ///
    /// It is the relation's rebuild ([`Relation::with_facts_from_columns`]) again, which
    /// `datalog!` generates from the same code, but inlined into the build: through the
    /// relation's function pointer, linear closure on a random graph (5.8 M facts) took
    /// 674 ms from scratch instead of 632.
    #[inline]
    fn fact_from_columns(columns: &[u64]) -> Option<T> {
        let _ = columns;
        None
    }
}

/// The stamp a stamped index keeps for a retired fact's row (see [`IndexLayout::STAMPED`]).
/// A held fact may have it too (derived after the clock stopped), so a row that says
/// `RETIRED` is looked up.
const RETIRED: Stamp = Stamp::MAX;

/// A hash index of a relation of `T`, laid out by `L`: each fact's key names its bucket,
/// which keeps the fact's row.
///
/// Invariant: once built, every fact of the owning relation has one row, in the bucket of
/// its key: buckets are exact (keys that share a hash have a bucket each), so a probe's
/// rows all have the key asked for. An index is built when first probed while its relation
/// holds a fact, and only then maintained: a materialization probes many indexes only in
/// its first rounds, while the relation is still empty (linear closure's index on `R`,
/// same-generation's on `Sg`), and maintaining them fact by fact through the rounds costs
/// time, bucket slack and a place in the memory peak. [`Relation::finish_materialization`]
/// builds the rest in one pass, each bucket at its final size, but for those whose joins
/// can do without them ([`IndexLayout::EAGER`]). A `OnceLock` (not a
/// `OnceCell`) keeps relations `Sync`; its check on a probe is one load.
pub struct Index<T, L: IndexLayout<T>> {
    buckets: OnceLock<Buckets<L::Key, L::Row>>,
}

impl<T, L: IndexLayout<T>> Clone for Index<T, L> {
    fn clone(&self) -> Self {
        Index {
            buckets: self.buckets.clone(),
        }
    }
}

impl<T, L: IndexLayout<T>> Default for Index<T, L> {
    fn default() -> Self {
        Index {
            buckets: OnceLock::new(),
        }
    }
}

type Buckets<K, R> = HashTable<Keyed<K, R>>;

/// A bucket with its key and the key's hash.
#[derive(Clone)]
struct Keyed<K, R> {
    hash: u64,
    key: K,
    bucket: Bucket<R>,
}

/// One bucket of an index: its rows in the order they were added (in a stamped index, by
/// stamp), and which of them came before the relation's latest batch
/// ([`Relation::probe_before_latest`]).
///
/// Invariants:
/// - every row of the bucket that was added before batch `grown_in` began is among its
///   first `before` rows. Appending keeps this; so does each removal: `retain` keeps the
///   survivors' order, and `swap_remove` moves only the last row, at worst into the first
///   `before` (which may then hold later rows too: a superset is all a probe promises). A
///   row moved to keep the next invariant takes `before` past the rows it moved over.
/// - in a stamped index, the rows are in the order of their stamps (retired ones, kept as
///   [`RETIRED`], last), so that a loss of support finds the heads in a delta fact's stamp
///   range by binary search ([`heads_in_range`](crate::program::heads_in_range)) rather
///   than by copying and sorting the bucket (non-linear chain, 1 deletion by alternative
///   proofs: 26.5 → 23.6 ms, medians of three alternating runs of `profile_update 2
///   altproof 1 21`; from scratch and the other workloads' updates unchanged). Facts come
///   in stamp order (a round's stamp is the clock's newest), so appending mostly keeps it;
///   a stamp that changes (a raise, a retirement, a revival) moves its row, at the cost of
///   the pass that finds the row.
#[derive(Clone)]
struct Bucket<R> {
    rows: Vec<R>,
    /// In a stamped index ([`IndexLayout::STAMPED`]), each row's fact's stamp, or
    /// [`RETIRED`] for a retired fact, in order; else empty.
    stamps: Vec<Stamp>,
    /// The batch in which the bucket last grew.
    grown_in: u64,
    /// How many rows it had when that batch began.
    before: usize,
}

impl<R: PartialEq> Bucket<R> {
    /// Keeps the rows that pass `keep` (and their stamps), in order.
    fn retain(&mut self, mut keep: impl FnMut(&R) -> bool) {
        if self.stamps.is_empty() {
            self.rows.retain(keep);
            return;
        }
        let kept = self.move_to_front(|row, _| keep(row));
        self.rows.truncate(kept);
        self.stamps.truncate(kept);
    }

    /// Moves the rows (of a stamped bucket) that pass `keep` to the front, in order, and
    /// the others behind them; returns how many passed.
    fn move_to_front(&mut self, mut keep: impl FnMut(&R, Stamp) -> bool) -> usize {
        let mut kept = 0;
        for at in 0..self.rows.len() {
            if keep(&self.rows[at], self.stamps[at]) {
                self.rows.swap(kept, at);
                self.stamps.swap(kept, at);
                kept += 1;
            }
        }
        kept
    }

    /// Removes `row` if the bucket holds it: unstamped, by moving the last row into its
    /// place; stamped, by shifting the later rows, which keeps them in order.
    fn swap_remove(&mut self, row: &R) {
        if let Some(at) = self.rows.iter().position(|held| held == row) {
            if self.stamps.is_empty() {
                self.rows.swap_remove(at);
            } else {
                self.rows.remove(at);
                self.stamps.remove(at);
            }
        }
    }

    /// Sets the stamp of `row` if the bucket holds it, and moves the row among those of
    /// its new stamp.
    fn set_stamp(&mut self, row: &R, stamp: Stamp) {
        if let Some(at) = self.rows.iter().position(|held| held == row) {
            let old = std::mem::replace(&mut self.stamps[at], stamp);
            let moved = if stamp > old {
                let to = at + self.stamps[at + 1..].partition_point(|&s| s <= stamp);
                self.rows[at..=to].rotate_left(1);
                self.stamps[at..=to].rotate_left(1);
                to
            } else {
                let to = self.stamps[..at].partition_point(|&s| s <= stamp);
                self.rows[to..=at].rotate_right(1);
                self.stamps[to..=at].rotate_right(1);
                to
            };
            self.moved_over(at.max(moved));
        }
    }

    /// Puts the rows back in the order of their stamps after several changed in place.
    fn sort_by_stamp(&mut self) {
        if self.in_stamp_order() {
            return;
        }
        // Most often the changes are retirements: moving the retired rows behind the
        // others, which keep their order, is one pass without a copy (the retired rows'
        // order among themselves is no stamp order's business). Non-linear closure kept by
        // reachability, medians of `profile_update <w> altproof <k> <reps>`: the random
        // graph's 10 deletions 5.5 → 2.6 ms, the chain's 1 deletion 1.9 → 1.0 ms.
        self.move_to_front(|_, stamp| stamp != RETIRED);
        self.before = self.rows.len();
        if self.in_stamp_order() {
            return;
        }
        let mut pairs: Vec<(R, Stamp)> = self.rows.drain(..).zip(self.stamps.drain(..)).collect();
        // Stable, so that rows of one stamp keep the order they came in.
        pairs.sort_by_key(|&(_, stamp)| stamp);
        for (row, stamp) in pairs {
            self.rows.push(row);
            self.stamps.push(stamp);
        }
        self.before = self.rows.len();
    }

    /// Keeps the first invariant after a row moved within the first `last + 1` places.
    fn moved_over(&mut self, last: usize) {
        if last >= self.before {
            self.before = last + 1;
        }
    }

    /// Whether the rows are in the order of their stamps (vacuously, if unstamped).
    fn in_stamp_order(&self) -> bool {
        self.stamps.windows(2).all(|pair| pair[0] <= pair[1])
    }
}

impl<R> Bucket<R> {
    /// The rows, less those added in `batch` if it is the one the bucket last grew in.
    #[inline]
    fn before(&self, batch: u64) -> &[R] {
        if self.grown_in == batch {
            &self.rows[..self.before.min(self.rows.len())]
        } else {
            &self.rows
        }
    }
}

/// What an index is built from: its relation's held and retired facts, and the batch the
/// relation is in.
pub struct IndexSource<'a, T> {
    held: &'a FactMap<T>,
    dead: &'a FactSet<T>,
    batch: u64,
}

impl<'a, T: Tuple> IndexSource<'a, T> {
    fn facts(&self) -> impl Iterator<Item = Cow<'a, T>> + Clone + 'a {
        self.held.keys().chain(self.dead.iter().map(Cow::Borrowed))
    }

    /// The facts with their stamps ([`RETIRED`] for retired facts).
    fn stamped_facts(&self) -> impl Iterator<Item = (Cow<'a, T>, Stamp)> + 'a {
        let retired = self.dead.iter().map(|fact| (Cow::Borrowed(fact), RETIRED));
        self.held.entries().chain(retired)
    }
}

impl<T: Tuple, L: IndexLayout<T>> Index<T, L> {
    /// An index not built yet.
    pub fn new() -> Self {
        Index::default()
    }

    /// The buckets of `source`'s facts, each allocated at its final size. Their rows count
    /// as added before the relation's current batch: a superset of those that were (see
    /// [`Relation::probe_before_latest`]).
    fn build(source: &IndexSource<'_, T>) -> Buckets<L::Key, L::Row> {
        if let Some(buckets) = Self::build_in_order(source) {
            return buckets;
        }
        // Count first (in `before`, which ends as the size), so that each bucket is
        // allocated once, at its size.
        let mut buckets: Buckets<L::Key, L::Row> = HashTable::new();
        for fact in source.facts() {
            let fact = &*fact;
            let hash = L::hash(fact);
            match buckets.find_mut(hash, |k| L::matches(&k.key, fact)) {
                Some(keyed) => keyed.bucket.before += 1,
                None => {
                    let keyed = Keyed {
                        hash,
                        key: L::key(fact),
                        bucket: Bucket {
                            rows: Vec::new(),
                            stamps: Vec::new(),
                            grown_in: source.batch,
                            before: 1,
                        },
                    };
                    buckets.insert_unique(hash, keyed, |k| k.hash);
                }
            }
        }
        for (fact, stamp) in source.stamped_facts() {
            let fact = &*fact;
            let hash = L::hash(fact);
            let bucket = &mut buckets
                .find_mut(hash, |k| L::matches(&k.key, fact))
                .expect("counted")
                .bucket;
            if bucket.rows.capacity() == 0 {
                bucket.rows.reserve_exact(bucket.before);
                if L::STAMPED {
                    bucket.stamps.reserve_exact(bucket.before);
                }
            }
            bucket.rows.push(L::row(fact));
            if L::STAMPED {
                bucket.stamps.push(stamp);
            }
        }
        if L::STAMPED {
            for keyed in buckets.iter_mut() {
                keyed.bucket.sort_by_stamp();
            }
        }
        buckets
    }

    /// [`Index::build`] from the relation's bitset, which lists its facts in order, so
    /// grouped by a key that leads: each bucket's rows are gathered, then stored with an
    /// eighth more room, the step by which a bucket grows ([`Index::insert_built`]). Only
    /// for an unstamped index of a relation without retired facts, whose bitset holds all
    /// its facts and whose facts can be rebuilt from their columns (see
    /// [`IndexLayout::fact_from_columns`]); else `None`. Linear closure from scratch, whose
    /// index on `R` is built at the end: on a random graph (5.8 M facts) 103 → 12 ms, on a
    /// chain (2 M) 39 → 5 ms, on the cycle (1 M) 19 → 2.4 ms.
    ///
    /// Why the room: an update that adds a row to most buckets (an edge back into a
    /// cycle) moved each bucket stored at its size, leaving a hole the next, larger,
    /// bucket could not use; the holes stayed resident. Peak resident set over 10 pairs
    /// of 1-fact updates (`peak_memory dred <w> 10`), stored at size → with the room:
    /// cycle 17.1 → 15.7 MiB, linear random 117.6 → 97.9, each from-scratch peak the same
    /// (the index is built after it).
    fn build_in_order(source: &IndexSource<'_, T>) -> Option<Buckets<L::Key, L::Row>> {
        if L::STAMPED || !L::KEY_LEADS || !source.dead.is_empty() {
            return None;
        }
        let bitset = source.held.bitset_of_all()?;
        let mut buckets: Buckets<L::Key, L::Row> = HashTable::new();
        let mut rows: Vec<L::Row> = Vec::new();
        let mut current: Option<(u64, L::Key)> = None;
        let store = |buckets: &mut Buckets<_, _>, (hash, key), rows: &mut Vec<L::Row>| {
            let keyed = Keyed {
                hash,
                key,
                bucket: Bucket {
                    rows: {
                        let mut stored = Vec::with_capacity(rows.len() + rows.len() / 8);
                        stored.extend_from_slice(rows);
                        stored
                    },
                    stamps: Vec::new(),
                    grown_in: source.batch,
                    before: rows.len(),
                },
            };
            buckets.insert_unique(hash, keyed, |k| k.hash);
            rows.clear();
        };
        let rebuilt = bitset.visit_in_order(|columns| {
            let Some(fact) = L::fact_from_columns(columns) else {
                return false;
            };
            match &current {
                Some((_, key)) if L::matches(key, &fact) => {}
                _ => {
                    if let Some(done) = current.take() {
                        store(&mut buckets, done, &mut rows);
                    }
                    current = Some((L::hash(&fact), L::key(&fact)));
                }
            }
            rows.push(L::row(&fact));
            true
        });
        if !rebuilt {
            return None;
        }
        if let Some(done) = current {
            store(&mut buckets, done, &mut rows);
        }
        Some(buckets)
    }

    /// The bucket of the key that hashes to `hash` and passes `is_key`, building the index
    /// from `source` on the first probe of a relation that holds a fact.
    #[inline]
    fn keyed<'s>(
        &self,
        source: impl FnOnce() -> Option<IndexSource<'s, T>>,
        hash: u64,
        mut is_key: impl FnMut(&L::Key) -> bool,
    ) -> Option<&Keyed<L::Key, L::Row>> {
        let buckets = match self.buckets.get() {
            Some(buckets) => buckets,
            None => self.build_on_first_probe(source()?),
        };
        buckets.find(hash, |keyed| is_key(&keyed.key))
    }

    /// The buckets, built from `source` by the first probe. Out of line and free of the
    /// probe's closures, so that a program instantiates it once per index layout rather
    /// than once per probe that its joins write.
    #[inline(never)]
    fn build_on_first_probe(&self, source: IndexSource<'_, T>) -> &Buckets<L::Key, L::Row> {
        self.buckets.get_or_init(|| Self::build(&source))
    }

    /// Adds a fact of batch `batch` stamped `stamp` to its bucket (see
    /// [`IndexSet::insert`]).
    #[inline(never)]
    fn insert_built(buckets: &mut Buckets<L::Key, L::Row>, fact: &T, batch: u64, stamp: Stamp) {
        let hash = L::hash(fact);
        let keyed = buckets
            .entry(hash, |k| L::matches(&k.key, fact), |k| k.hash)
            .or_insert_with(|| Keyed {
                hash,
                key: L::key(fact),
                bucket: Bucket {
                    rows: Vec::new(),
                    stamps: Vec::new(),
                    grown_in: 0,
                    before: 0,
                },
            })
            .into_mut();
        let bucket = &mut keyed.bucket;
        if bucket.grown_in != batch {
            bucket.grown_in = batch;
            bucket.before = bucket.rows.len();
        }
        let rows = &mut bucket.rows;
        if rows.len() == rows.capacity() {
            rows.reserve_exact((rows.len() / 8).max(4));
        }
        if !L::STAMPED {
            rows.push(L::row(fact));
            return;
        }
        let stamps = &mut bucket.stamps;
        if stamps.len() == stamps.capacity() {
            stamps.reserve_exact((stamps.len() / 8).max(4));
        }
        // In stamp order: past the rows of its stamp and older, before those of retired
        // facts, which the newest stamp of a round is all a fact usually has to pass.
        let at = stamps.len() - stamps.iter().rev().take_while(|&&s| s > stamp).count();
        rows.insert(at, L::row(fact));
        stamps.insert(at, stamp);
        if at < bucket.before {
            bucket.before += 1;
        }
    }

    /// Calls `visit` with each bucket of `keyed` (facts with their hashes and a value,
    /// sorted by hash, then by fact) and its run of `keyed`, and drops the buckets it
    /// leaves empty. Facts without a bucket are skipped.
    fn bucket_runs<'f, X>(
        buckets: &mut Buckets<L::Key, L::Row>,
        keyed: &[(u64, &'f T, X)],
        mut visit: impl FnMut(&mut Bucket<L::Row>, &[(u64, &'f T, X)]),
    ) {
        // A key's facts come together (unless another key shares its hash, when they form
        // several runs), their rows in order.
        let mut rest = keyed;
        while let Some((hash, first, _)) = rest.first() {
            let hash = *hash;
            let Ok(mut entry) = buckets.find_entry(hash, |k| L::matches(&k.key, first)) else {
                rest = &rest[1..];
                continue;
            };
            let end = rest
                .iter()
                .position(|(h, f, _)| *h != hash || !L::matches(&entry.get().key, f))
                .unwrap_or(rest.len());
            let (run, after) = rest.split_at(end);
            rest = after;
            visit(&mut entry.get_mut().bucket, run);
            if entry.get().bucket.rows.is_empty() {
                entry.remove();
            }
        }
    }
}

/// A relation's indexes, kept in step with its facts: `()` for none, an [`Index`], or a
/// tuple of index sets (generated programs use tuples of up to twelve, nested beyond).
pub trait IndexSet<T>: Clone {
    /// Whether some index of the set keeps stamps ([`IndexLayout::STAMPED`]).
    const STAMPED: bool;
    /// Builds every [`IndexLayout::EAGER`] index not built yet from `source`.
    fn build_all(&mut self, source: &IndexSource<'_, T>);
    /// Adds a fact of batch `batch` stamped `stamp` to every built index.
    fn insert(&mut self, fact: &T, batch: u64, stamp: Stamp);
    /// Sets the stamps of facts the indexes hold, in those that keep stamps, touching each
    /// bucket once.
    fn set_stamps(&mut self, facts: &[(&T, Stamp)]);
    /// Removes a batch of facts from every built index, rewriting each touched bucket once.
    fn remove_all(&mut self, gone: &FactSet<T>);
    /// Gives back spare room.
    fn shrink_to_fit(&mut self);
    /// The heap bytes the indexes hold (tables, and each bucket's rows by capacity).
    fn heap_bytes(&self) -> usize;
    /// Whether some index of the set is built.
    fn any_built(&self) -> bool;
}

impl<T> IndexSet<T> for () {
    const STAMPED: bool = false;
    fn build_all(&mut self, _: &IndexSource<'_, T>) {}
    fn insert(&mut self, _: &T, _: u64, _: Stamp) {}
    fn set_stamps(&mut self, _: &[(&T, Stamp)]) {}
    fn remove_all(&mut self, _: &FactSet<T>) {}
    fn shrink_to_fit(&mut self) {}
    fn heap_bytes(&self) -> usize {
        0
    }
    fn any_built(&self) -> bool {
        false
    }
}

impl<T: Tuple, L: IndexLayout<T>> IndexSet<T> for Index<T, L> {
    const STAMPED: bool = L::STAMPED;

    fn build_all(&mut self, source: &IndexSource<'_, T>) {
        if L::EAGER && self.buckets.get().is_none() {
            self.buckets = OnceLock::from(Self::build(source));
        }
    }

    /// Adds a fact of batch `batch` to its bucket. A full bucket grows by an eighth, not
    /// twice its size: a bucket is built at its exact size, and an update that inserts one
    /// fact into each of many (a re-inserted edge of a closure) would otherwise double them
    /// all (cycle, 1-fact re-insertions after a recompute: +18% resident memory). Copying
    /// an eighth more per growth costs little beside the hash lookups around it.
    #[inline]
    fn insert(&mut self, fact: &T, batch: u64, stamp: Stamp) {
        if let Some(buckets) = self.buckets.get_mut() {
            Self::insert_built(buckets, fact, batch, stamp);
        }
    }

    /// Like [`IndexSet::remove_all`], a bucket's rows are compared with its own few facts
    /// (sorted, binary search) when it has more than one.
    fn set_stamps(&mut self, facts: &[(&T, Stamp)]) {
        if !L::STAMPED {
            return;
        }
        let Some(buckets) = self.buckets.get_mut() else {
            return;
        };
        if let [(fact, stamp)] = facts {
            let hash = L::hash(fact);
            if let Some(keyed) = buckets.find_mut(hash, |k| L::matches(&k.key, fact)) {
                keyed.bucket.set_stamp(&L::row(fact), *stamp);
            }
            return;
        }
        let mut keyed: Vec<(u64, &T, Stamp)> =
            facts.iter().map(|&(f, s)| (L::hash(f), f, s)).collect();
        keyed.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        Self::bucket_runs(buckets, &keyed, |bucket, run| {
            if let [(_, only, stamp)] = run {
                bucket.set_stamp(&L::row(only), *stamp);
                return;
            }
            let run: Vec<(L::Row, Stamp)> = run.iter().map(|(_, f, s)| (L::row(f), *s)).collect();
            for (row, stamp) in bucket.rows.iter().zip(&mut bucket.stamps) {
                if let Ok(at) = run.binary_search_by(|(other, _)| other.cmp(row)) {
                    *stamp = run[at].1;
                }
            }
            bucket.sort_by_stamp();
        });
    }

    /// A bucket's rows are compared with its own few gone rows (sorted, binary search),
    /// not looked up in `gone`: a comparison of short tuples costs a fraction of a hash
    /// lookup, and a closure's buckets are long while few of their facts go at a time.
    fn remove_all(&mut self, gone: &FactSet<T>) {
        let Some(buckets) = self.buckets.get_mut() else {
            return;
        };
        let mut keyed: Vec<(u64, &T, ())> = gone.iter().map(|f| (L::hash(f), f, ())).collect();
        keyed.sort_unstable();
        Self::bucket_runs(buckets, &keyed, |bucket, run| {
            if let [(_, only, ())] = run {
                bucket.swap_remove(&L::row(only));
            } else {
                let run: Vec<L::Row> = run.iter().map(|(_, f, ())| L::row(f)).collect();
                bucket.retain(|held| run.binary_search(held).is_err());
            }
        });
    }

    fn shrink_to_fit(&mut self) {
        if let Some(buckets) = self.buckets.get_mut() {
            buckets.shrink_to_fit(|k| k.hash);
        }
    }

    fn any_built(&self) -> bool {
        self.buckets.get().is_some()
    }

    fn heap_bytes(&self) -> usize {
        let Some(buckets) = self.buckets.get() else {
            return 0;
        };
        let row = std::mem::size_of::<L::Row>();
        let stamp = std::mem::size_of::<Stamp>();
        let rows: usize = buckets
            .iter()
            .map(|k| k.bucket.rows.capacity() * row + k.bucket.stamps.capacity() * stamp)
            .sum();
        rows + table_bytes(
            buckets_for(buckets.capacity()),
            std::mem::size_of::<Keyed<L::Key, L::Row>>(),
        )
    }
}

macro_rules! index_set_tuples {
    ($(($($set:ident $at:tt),+))+) => {$(
        impl<T, $($set: IndexSet<T>),+> IndexSet<T> for ($($set,)+) {
            const STAMPED: bool = false $(|| $set::STAMPED)+;
            fn build_all(&mut self, source: &IndexSource<'_, T>) {
                $(self.$at.build_all(source);)+
            }
            #[inline]
            fn insert(&mut self, fact: &T, batch: u64, stamp: Stamp) {
                $(self.$at.insert(fact, batch, stamp);)+
            }
            fn set_stamps(&mut self, facts: &[(&T, Stamp)]) {
                if Self::STAMPED {
                    $(self.$at.set_stamps(facts);)+
                }
            }
            fn remove_all(&mut self, gone: &FactSet<T>) {
                $(self.$at.remove_all(gone);)+
            }
            fn shrink_to_fit(&mut self) {
                $(self.$at.shrink_to_fit();)+
            }
            fn heap_bytes(&self) -> usize {
                0 $(+ self.$at.heap_bytes())+
            }
            fn any_built(&self) -> bool {
                false $(|| self.$at.any_built())+
            }
        }
    )+};
}

index_set_tuples! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, J 8)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, J 8, K 9)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, J 8, K 9, L 10)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, J 8, K 9, L 10, M 11)
}

/// How many facts [`Relation::retire_all`] looks up before it removes any: each lookup in a
/// table of millions of facts misses the cache, and the misses of lookups with nothing
/// between them overlap, where a removal's own branches on what it read kept the next
/// one from starting (same-generation, 10 deletions: the removals took 15-23% of the
/// update's profile samples).
const RETIRE_BATCH: usize = 32;

/// The facts of one relation and its indexes, kept in step.
///
/// Invariant: `facts` holds each fact once, with the [`Stamp`] of the round that added it;
/// every built index holds exactly the facts of `facts` and of `dead`, each once (an index
/// is built on its first probe of a relation that holds a fact, or by
/// [`Relation::finish_materialization`]). `dead` holds *retired* facts
/// ([`Relation::retire_all`]): gone, but left in the indexes (a bucket costs a pass to
/// update, and most retired facts come back), so a probe may return them and joins ask
/// [`Relation::live`]; while no index is built, a retired fact just goes. Inserting a
/// retired fact revives it; once retired facts pass an eighth of the relation,
/// [`Relation::settle`] takes them out of the indexes, so they never cost more than that
/// in memory. A built index that keeps stamps ([`IndexLayout::STAMPED`]) has each held
/// fact's stamp beside its row, and `Stamp::MAX` beside a retired fact's (a held fact
/// stamped `Stamp::MAX` says it too, and is looked up). Only the methods that take
/// `&mut self` change a relation; a fact's stamp only rises while it holds
/// ([`Relation::restamp`]).
///
/// ```
/// use dred_runtime::{key_hash, Index, IndexLayout, Relation};
/// // An index of pairs on their first column, whose rows hold the second.
/// struct ByFirst;
/// impl IndexLayout<(u32, u32)> for ByFirst {
///     type Key = (u32,);
///     type Row = (u32,);
///     fn hash(e: &(u32, u32)) -> u64 { key_hash(&(&e.0,)) }
///     fn matches(key: &(u32,), e: &(u32, u32)) -> bool { key.0 == e.0 }
///     fn key(e: &(u32, u32)) -> (u32,) { (e.0,) }
///     fn row(e: &(u32, u32)) -> (u32,) { (e.1,) }
/// }
/// let mut edges = Relation::with_indexes((Index::<_, ByFirst>::new(),));
/// edges.insert((1, 2), 1);
/// edges.insert((1, 3), 1);
/// assert!(edges.contains(&(1, 2)));
/// let mut from_one = edges.probe(|ix| &ix.0, key_hash(&(&1u32,)), |key| key.0 == 1).to_vec();
/// from_one.sort_unstable();
/// assert_eq!(from_one, [(2,), (3,)]);
/// ```
#[derive(Clone)]
pub struct Relation<T, I = ()> {
    facts: FactMap<T>,
    indexes: I,
    /// Retired facts: in the indexes but not in `facts`.
    dead: FactSet<T>,
    /// The stamps that facts had before [`Relation::restamp`] raised them, until
    /// [`Relation::forget_risen`]: the heads that counted on a risen fact are those younger
    /// than its old stamp.
    risen: HashMap<T, Stamp, BuildHasherDefault<FactHasher>>,
    /// How many batches [`Relation::insert_all`] has begun: the batch a fact inserted now
    /// belongs to.
    batch: u64,
    /// The settings its storage received from its program ([`Relation::with_storage`]).
    storage: Storage,
}

impl<T: Tuple> Relation<T> {
    /// An empty relation without indexes.
    pub fn new() -> Self {
        Relation::with_indexes(())
    }
}

impl<T: Tuple> Default for Relation<T> {
    fn default() -> Self {
        Relation::new()
    }
}

impl<T: Tuple, I> Relation<T, I> {
    /// An empty relation with `indexes` (none built yet).
    pub fn with_indexes(indexes: I) -> Self {
        Relation {
            facts: FactMap::default(),
            indexes,
            dead: FactSet::default(),
            risen: HashMap::default(),
            batch: 0,
            storage: Storage::default(),
        }
    }

    /// The relation with `storage` settings (see [`crate::settings::Settings`]) instead of
    /// the defaults; for a relation that holds no fact yet.
    pub fn with_storage(mut self, storage: Storage) -> Self {
        self.storage = storage;
        self.facts.set_storage(storage);
        self
    }

    /// The settings the relation's storage runs with.
    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// Lets the relation keep a bitset of its facts over the box of their columns' values,
    /// when that box is small beside the fact table, from a sixteenth of the size at which
    /// the table outgrows the cache ([`crate::settings::Storage::large_from_bytes`]):
    /// [`Relation::contains`] then reads one bit, not a table that misses the cache.
    /// `datalog!` asks for it on relations whose columns are all integers, chars or bools.
    ///
    /// Only for facts whose `Hash` writes each column as one integer, in order, and whose
    /// equality is that of those integers (such as tuples and derived structs of those
    /// types); a fact that writes anything else is never placed in a bitset, but a type
    /// whose `Hash` leaves out part of what its equality compares would see facts it does
    /// not hold as held.
    ///
    /// ```
    /// use dred_runtime::{FactSet, Relation};
    /// let mut pairs = Relation::new().with_bitset();
    /// let facts: FactSet<(u32, u32)> = (0..1000).map(|a| (a, a + 1)).collect();
    /// pairs.insert_all(&facts, 1);
    /// pairs.finish_materialization();
    /// assert!(pairs.contains(&(7, 8)) && !pairs.contains(&(8, 7)));
    /// ```
    pub fn with_bitset(mut self) -> Self {
        self.facts.allow_bitset();
        self
    }

    /// Lets a relation that keeps a bitset ([`Relation::with_bitset`]) keep its facts
    /// *dense*: once the bitset holds every fact and an array of stamps over its box
    /// would take no more room than the fact table, the facts in the box leave the table,
    /// each held exactly when its bit is set, its stamp at its place in the array, and
    /// rebuilt by `rebuild` from its columns' values when iterated. `rebuild` must give
    /// back the fact whose `Hash` wrote those values (and may answer `None` for values no
    /// fact has). `datalog!` asks for it on relations whose columns are all integers,
    /// chars or bools.
    ///
    /// ```
    /// use dred_runtime::{FactSet, Relation};
    /// let rebuild = |columns: &[u64]| Some((columns[0] as u32, columns[1] as u32));
    /// let mut pairs = Relation::new().with_bitset().with_facts_from_columns(rebuild);
    /// // Large enough to outgrow the cache, and filling their box.
    /// let facts: FactSet<(u32, u32)> =
    ///     (0..512).flat_map(|a| (0..256).map(move |b| (a, b))).collect();
    /// pairs.insert_all(&facts, 1);
    /// pairs.finish_materialization();
    /// assert!(pairs.is_dense());
    /// assert!(pairs.contains(&(7, 8)) && pairs.stamp(&(8, 7)) == Some(1));
    /// assert_eq!(pairs.to_set(), facts);
    /// ```
    pub fn with_facts_from_columns(mut self, rebuild: fn(&[u64]) -> Option<T>) -> Self {
        self.facts.allow_dense(rebuild);
        self
    }

    /// The fact whose columns' values (each the one integer its `Hash` writes) are
    /// `columns`, rebuilt as [`Relation::with_facts_from_columns`] allows; `None` if the
    /// relation does not rebuild its facts, or if no fact has those values.
    ///
    /// ```
    /// use dred_runtime::Relation;
    /// let rebuild = |c: &[u64]| Some((c[0] as u32, char::from_u32(c[1] as u32)?));
    /// let pairs = Relation::<(u32, char)>::new().with_bitset().with_facts_from_columns(rebuild);
    /// assert_eq!(pairs.fact_from_columns(&[7, 'x' as u64]), Some((7, 'x')));
    /// assert_eq!(pairs.fact_from_columns(&[7, 0xD800]), None);
    /// assert_eq!(Relation::<(u32, u32)>::new().fact_from_columns(&[7, 8]), None);
    /// ```
    pub fn fact_from_columns(&self, columns: &[u64]) -> Option<T> {
        self.facts.rebuild().and_then(|rebuild| rebuild(columns))
    }

    /// Whether the relation keeps its facts dense (see
    /// [`Relation::with_facts_from_columns`]).
    pub fn is_dense(&self) -> bool {
        self.facts.is_dense()
    }

    /// Whether `fact` holds.
    #[inline]
    pub fn contains(&self, fact: &T) -> bool {
        self.facts.contains_key(fact)
    }

    /// The stamp of `fact`, if it holds.
    #[inline]
    pub fn stamp(&self, fact: &T) -> Option<Stamp> {
        self.facts.get(fact).copied()
    }

    /// [`Relation::stamp`] for a fact that may well not hold, as a support check's fully
    /// bound body atom: if the relation keeps a bitset ([`Relation::with_bitset`]) that
    /// places the fact, its bit answers for an absent fact, and only a held one's stamp is
    /// read from the fact table.
    ///
    /// ```
    /// use dred_runtime::Relation;
    /// let mut r: Relation<(u32, u32)> = Relation::new();
    /// r.insert((1, 2), 7);
    /// assert_eq!(r.stamp_maybe_absent(&(1, 2)), Some(7));
    /// assert_eq!(r.stamp_maybe_absent(&(2, 1)), None);
    /// ```
    #[inline]
    pub fn stamp_maybe_absent(&self, fact: &T) -> Option<Stamp> {
        self.facts.get_maybe_absent(fact).copied()
    }

    /// Whether a fact returned by [`Relation::probe`] or [`Relation::iter`] still holds:
    /// always, unless some fact is retired.
    #[inline]
    pub fn live(&self, fact: &T) -> bool {
        self.dead.is_empty() || !self.dead.contains(fact)
    }

    /// The stamps between which a head's stamp must lie for the head to have counted on
    /// `fact` and to count on it no longer: above its stamp (or the stamp it had before it
    /// last rose), and up to the stamp it rose to (unbounded for a fact about to go).
    /// `None` if `fact` does not hold.
    #[inline]
    pub fn counted_on(&self, fact: &T) -> Option<(Stamp, Stamp)> {
        let stamp = self.stamp(fact)?;
        let old = (!self.risen.is_empty())
            .then(|| self.risen.get(fact).copied())
            .flatten();
        Some(match old {
            Some(old) => (old, stamp),
            None => (stamp, Stamp::MAX),
        })
    }

    /// Forgets the old stamps of risen facts (see [`Relation::restamp`]).
    pub fn forget_risen(&mut self) {
        self.risen.clear();
    }

    /// How many facts hold.
    pub fn len(&self) -> usize {
        self.facts.len()
    }

    /// Whether no fact holds.
    pub fn is_empty(&self) -> bool {
        self.facts.is_empty()
    }

    /// The facts, in no particular order: borrowed from the fact table, or rebuilt from
    /// their columns if the relation keeps them dense (see
    /// [`Relation::with_facts_from_columns`]).
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Cow<'_, T>> + '_ {
        self.facts.keys()
    }

    /// Up to `n` of the facts, spread over the relation, for a sample: a relation that
    /// keeps its facts dense iterates them sorted, where the first few share their first
    /// columns.
    pub fn sample(&self, n: usize) -> Vec<Cow<'_, T>> {
        self.facts.sample(n)
    }

    /// The facts, sorted (the order reports and files use).
    pub fn sorted(&self) -> Vec<Cow<'_, T>> {
        let mut facts: Vec<Cow<'_, T>> = self.facts.keys().collect();
        facts.sort_unstable();
        facts
    }

    /// A copy of the facts as a set.
    pub fn to_set(&self) -> FactSet<T> {
        self.facts.keys().map(Cow::into_owned).collect()
    }

    /// The rows of the bucket of index `index` (a field of the relation's index set) whose
    /// key hashes to `hash` ([`key_hash`] of a tuple of references to the key's values) and
    /// passes `is_key`. The first probe of a relation that holds a fact builds the index,
    /// which is maintained from then on.
    #[inline]
    pub fn probe<L: IndexLayout<T>>(
        &self,
        index: impl FnOnce(&I) -> &Index<T, L>,
        hash: u64,
        is_key: impl FnMut(&L::Key) -> bool,
    ) -> &[L::Row] {
        self.keyed(index, hash, is_key)
            .map_or(&[], |keyed| keyed.bucket.rows.as_slice())
    }

    /// Whether `index` is built: the first probe while the relation holds a fact builds
    /// it (see [`Index`]). A join with another plan that spares an unbuilt index (see
    /// [`IndexLayout::EAGER`]) asks first.
    ///
    /// ```
    /// use dred_runtime::{key_hash, Index, IndexLayout, Relation};
    /// # struct ByFirst;
    /// # impl IndexLayout<(u32, u32)> for ByFirst {
    /// #     type Key = (u32,);
    /// #     type Row = (u32,);
    /// #     fn hash(e: &(u32, u32)) -> u64 { key_hash(&(&e.0,)) }
    /// #     fn matches(key: &(u32,), e: &(u32, u32)) -> bool { key.0 == e.0 }
    /// #     fn key(e: &(u32, u32)) -> (u32,) { (e.0,) }
    /// #     fn row(e: &(u32, u32)) -> (u32,) { (e.1,) }
    /// # }
    /// let mut edges = Relation::with_indexes((Index::<_, ByFirst>::new(),));
    /// edges.insert((1, 2), 1);
    /// assert!(!edges.index_is_built(|ix| &ix.0));
    /// edges.probe(|ix| &ix.0, key_hash(&(&1u32,)), |key| key.0 == 1);
    /// assert!(edges.index_is_built(|ix| &ix.0));
    /// ```
    pub fn index_is_built<L: IndexLayout<T>>(
        &self,
        index: impl FnOnce(&I) -> &Index<T, L>,
    ) -> bool {
        index(&self.indexes).any_built()
    }

    /// [`Relation::probe`] without the rows added since the latest
    /// [`Relation::insert_all`] began (some of them may still be returned: a retired fact
    /// revived by it, or one moved by a removal), at no cost per row: a bucket keeps its
    /// rows in the order they came and knows where that batch's begin.
    ///
    /// A semi-naive round's joins, whose delta is that batch, walk the atoms before the
    /// delta's position with this, so that an instance with several delta facts is found
    /// once, by the variant of its first (every instance is still found: the facts it
    /// leaves out are all in the delta).
    ///
    /// ```
    /// use dred_runtime::{key_hash, FactSet, Index, IndexLayout, Relation};
    /// # struct ByFirst;
    /// # impl IndexLayout<(u32, u32)> for ByFirst {
    /// #     type Key = (u32,);
    /// #     type Row = (u32,);
    /// #     fn hash(e: &(u32, u32)) -> u64 { key_hash(&(&e.0,)) }
    /// #     fn matches(key: &(u32,), e: &(u32, u32)) -> bool { key.0 == e.0 }
    /// #     fn key(e: &(u32, u32)) -> (u32,) { (e.0,) }
    /// #     fn row(e: &(u32, u32)) -> (u32,) { (e.1,) }
    /// # }
    /// let mut edges = Relation::with_indexes((Index::<_, ByFirst>::new(),));
    /// let batch = |facts: &[(u32, u32)]| facts.iter().copied().collect::<FactSet<_>>();
    /// edges.insert_all(&batch(&[(1, 2)]), 1);
    /// let ones = key_hash(&(&1u32,));
    /// assert_eq!(edges.probe(|ix| &ix.0, ones, |k| k.0 == 1), [(2,)]); // builds the index
    /// edges.insert_all(&batch(&[(1, 3)]), 2);
    /// assert_eq!(edges.probe(|ix| &ix.0, ones, |k| k.0 == 1), [(2,), (3,)]);
    /// assert_eq!(edges.probe_before_latest(|ix| &ix.0, ones, |k| k.0 == 1), [(2,)]);
    /// ```
    #[inline]
    pub fn probe_before_latest<L: IndexLayout<T>>(
        &self,
        index: impl FnOnce(&I) -> &Index<T, L>,
        hash: u64,
        is_key: impl FnMut(&L::Key) -> bool,
    ) -> &[L::Row] {
        self.keyed(index, hash, is_key)
            .map_or(&[], |keyed| keyed.bucket.before(self.batch))
    }

    /// [`Relation::probe`], with the rows' stamps at hand ([`StampedRows::stamp`]): read
    /// from the bucket if the index keeps them ([`IndexLayout::STAMPED`]), else looked up.
    #[inline]
    pub fn probe_stamped<L: IndexLayout<T>>(
        &self,
        index: impl FnOnce(&I) -> &Index<T, L>,
        hash: u64,
        is_key: impl FnMut(&L::Key) -> bool,
    ) -> StampedRows<'_, T, I, L::Row> {
        let (rows, stamps): (&[L::Row], &[Stamp]) = match self.keyed(index, hash, is_key) {
            Some(keyed) => (&keyed.bucket.rows, &keyed.bucket.stamps),
            None => (&[], &[]),
        };
        StampedRows {
            relation: self,
            rows,
            stamps,
        }
    }

    /// The bucket of `index` for the key that hashes to `hash` and passes `is_key`, with
    /// its key; the index is built on the first probe of a relation that holds a fact.
    #[inline]
    fn keyed<'s, L: IndexLayout<T>>(
        &'s self,
        index: impl FnOnce(&'s I) -> &'s Index<T, L>,
        hash: u64,
        is_key: impl FnMut(&L::Key) -> bool,
    ) -> Option<&'s Keyed<L::Key, L::Row>> {
        let source =
            || (!self.facts.is_empty() || !self.dead.is_empty()).then(|| self.index_source());
        index(&self.indexes).keyed(source, hash, is_key)
    }

    fn index_source(&self) -> IndexSource<'_, T> {
        IndexSource {
            held: &self.facts,
            dead: &self.dead,
            batch: self.batch,
        }
    }

    /// How many facts are retired.
    pub fn retired(&self) -> usize {
        self.dead.len()
    }
}

impl<T: Tuple, I: IndexSet<T>> Relation<T, I> {
    /// Ends a materialization: builds every index not built yet (see
    /// [`Relation::probe`]) that is [`IndexLayout::EAGER`], each bucket at its final size,
    /// so that no later probe pays for it. First gives back the room of a fact table
    /// reserved far larger than what it came to hold: a recompute reserves the old model's
    /// sizes, and a deletion can leave a small part of it.
    pub fn finish_materialization(&mut self) {
        self.shrink_if_sparse();
        self.facts.consider_bitset(self.storage.large_from_bytes);
        let source = IndexSource {
            held: &self.facts,
            dead: &self.dead,
            batch: self.batch,
        };
        self.indexes.build_all(&source);
    }

    /// Room for `additional` more facts in the fact table (the indexes are built at their
    /// final size when first probed, or by [`Relation::finish_materialization`]).
    pub fn reserve(&mut self, additional: usize) {
        self.facts.reserve(additional);
    }

    /// The room the relation's facts took, for an empty relation about to hold about as
    /// many ([`Relation::reserve_room`]): how many there were, and, if the relation kept
    /// them dense, its box and array of stamps.
    pub fn into_room(mut self) -> Room {
        Room {
            len: self.facts.len(),
            dense: self.facts.take_dense(),
        }
    }

    /// Room for the facts of the relation `room` was taken of ([`Relation::into_room`]): as
    /// many in its table, or, if that relation kept them dense and this one is empty and
    /// may (see [`Relation::with_facts_from_columns`]), its box and array of stamps.
    pub fn reserve_room(&mut self, room: Room) {
        self.facts.reserve_like(room.len, room.dense);
    }

    /// Adds `fact` stamped `stamp`; returns whether it was new (a fact that holds keeps its
    /// stamp).
    pub fn insert(&mut self, fact: T, stamp: Stamp) -> bool {
        let revived = !self.dead.is_empty() && self.dead.remove(&fact);
        if revived {
            self.indexes.set_stamps(&[(&fact, stamp)]);
        }
        self.add(fact, stamp, revived)
    }

    /// Adds every fact of `facts` stamped `stamp` (those already present are skipped), as a
    /// new batch (see [`Relation::probe_before_latest`]), even if `facts` is empty.
    pub fn insert_all(&mut self, facts: &FactSet<T>, stamp: Stamp) {
        self.facts.consider_bitset(self.storage.large_from_bytes);
        self.batch += 1;
        self.facts.reserve(facts.len());
        let mut revived_facts = Vec::new();
        for fact in facts {
            let revived = !self.dead.is_empty() && self.dead.remove(fact);
            if revived && I::STAMPED {
                revived_facts.push((fact, stamp));
            }
            self.add(fact.clone(), stamp, revived);
        }
        self.indexes.set_stamps(&revived_facts);
    }

    /// Adds `fact` to the table, and to the indexes unless it is in them already (a
    /// revived retired fact); returns whether it was new.
    #[inline]
    fn add(&mut self, fact: T, stamp: Stamp, in_indexes: bool) -> bool {
        let (indexes, batch) = (&mut self.indexes, self.batch);
        self.facts.insert_new(fact, stamp, |fact| {
            if !in_indexes {
                indexes.insert(fact, batch, stamp);
            }
        })
    }

    /// Raises the stamp of `fact`, if it holds, to `stamp` (see [`Stamp`]'s invariant).
    /// Its old stamp is remembered until [`Relation::forget_risen`].
    pub fn restamp(&mut self, fact: &T, stamp: Stamp) {
        if let Some(held) = self.facts.get_mut(fact) {
            debug_assert!(*held <= stamp, "stamps only rise");
            self.risen.entry(fact.clone()).or_insert(*held);
            *held = stamp;
            if I::STAMPED {
                self.indexes.set_stamps(&[(fact, stamp)]);
            }
        }
    }

    /// Takes the facts of `gone` that hold out of the relation but leaves them in its
    /// indexes, as retired facts (see the type's invariant); with no index built, there is
    /// nothing to leave them in, and they go: same-generation's indexes on `Sg` are built
    /// only by large updates (see [`IndexLayout::EAGER`]), and its 10 deletions by
    /// alternative proofs, which retire 57,376 facts, ran 8% fewer instructions
    /// (callgrind, `profile_update 5 altproof 10 1`).
    pub fn retire_all(&mut self, gone: &FactSet<T>) {
        let indexed = self.indexes.any_built();
        if indexed {
            self.dead.reserve(gone.len());
        }
        let mut retired = Vec::new();
        let mut gone = gone.iter();
        loop {
            let mut batch: [Option<&T>; RETIRE_BATCH] = [None; RETIRE_BATCH];
            for (slot, fact) in batch.iter_mut().zip(&mut gone) {
                *slot = Some(fact);
            }
            if batch[0].is_none() {
                self.indexes.set_stamps(&retired);
                return;
            }
            let mut held = [false; RETIRE_BATCH];
            for (held, fact) in held.iter_mut().zip(batch) {
                *held = fact.is_some_and(|fact| self.facts.contains_key(fact));
            }
            for (fact, held) in batch.into_iter().flatten().zip(held) {
                if held {
                    self.facts.remove(fact);
                    if indexed {
                        self.dead.insert(fact.clone());
                        if I::STAMPED {
                            retired.push((fact, RETIRED));
                        }
                    }
                }
            }
        }
    }

    /// An estimate of the heap memory the relation holds, in bytes: its fact table, its
    /// indexes (their tables, and each bucket's rows by capacity), its retired facts and
    /// the old stamps of risen facts; not heap memory the facts themselves own (the text of
    /// a `String` column). Tables count at their capacity: the figure is what the relation
    /// keeps allocated, not what it uses.
    ///
    /// ```
    /// use dred_runtime::{key_hash, Index, IndexLayout, Relation};
    /// # struct ByFirst;
    /// # impl IndexLayout<(u32, u32)> for ByFirst {
    /// #     type Key = (u32,);
    /// #     type Row = (u32,);
    /// #     fn hash(e: &(u32, u32)) -> u64 { key_hash(&(&e.0,)) }
    /// #     fn matches(key: &(u32,), e: &(u32, u32)) -> bool { key.0 == e.0 }
    /// #     fn key(e: &(u32, u32)) -> (u32,) { (e.0,) }
    /// #     fn row(e: &(u32, u32)) -> (u32,) { (e.1,) }
    /// # }
    /// let mut edges = Relation::with_indexes((Index::<_, ByFirst>::new(),));
    /// let empty = edges.heap_bytes();
    /// for b in 0..1000 {
    ///     edges.insert((1, b), 1);
    /// }
    /// // Each fact costs its 8 bytes, its stamp's 4 and a table's slack.
    /// assert!(edges.heap_bytes() >= empty + 1000 * 12);
    /// let unindexed = edges.heap_bytes();
    /// edges.probe(|ix| &ix.0, key_hash(&(&1u32,)), |key| key.0 == 1); // builds the index
    /// // A row holds the second column only: 4 bytes.
    /// let index = edges.heap_bytes() - unindexed;
    /// assert!((1000 * 4..1000 * 8).contains(&index));
    /// ```
    pub fn heap_bytes(&self) -> usize {
        let row = std::mem::size_of::<T>();
        let table = |capacity, entry| table_bytes(buckets_for(capacity), entry);
        self.facts.table_bytes()
            + self.indexes.heap_bytes()
            + table(self.dead.capacity(), row)
            + table(self.risen.capacity(), std::mem::size_of::<(T, Stamp)>())
    }

    /// Ends an update: takes the retired facts out of the indexes once they are more than
    /// an eighth of the relation (so their cost stays bounded and amortized), and gives back
    /// the room of the tables that only an update uses: the old stamps of risen facts, and
    /// of the retired facts all but what those left need. Kept between updates, they held
    /// the largest update's sizes for good (non-linear closure: up to 27% more than the
    /// materialization's tables over a soak of deleted and restored edges; `soak` in
    /// `tests/strategies.rs`).
    pub fn settle(&mut self) {
        if self.dead.len() > self.facts.len() / 8 {
            let dead = std::mem::take(&mut self.dead);
            self.indexes.remove_all(&dead);
            self.shrink_if_sparse();
        }
        if self.dead.is_empty() {
            self.dead = FactSet::default();
        } else if self.dead.capacity() > 4 * self.dead.len() {
            self.dead.shrink_to_fit();
        }
        if self.risen.is_empty() {
            self.risen = HashMap::default();
        }
    }

    /// Removes every fact of `gone` that holds, touching each index bucket once.
    pub fn remove_all(&mut self, gone: &FactSet<T>) {
        if gone.is_empty() {
            return;
        }
        self.indexes.remove_all(gone);
        for fact in gone {
            self.facts.bury(fact);
        }
        self.facts.purge_if_many();
        self.shrink_if_sparse();
    }

    /// A relation that shrank a lot gives its memory back rather than keep capacity from
    /// its largest size.
    fn shrink_if_sparse(&mut self) {
        if self.facts.capacity() > 4 * self.facts.len().max(16) {
            self.facts.shrink_to_fit();
            self.indexes.shrink_to_fit();
        }
    }
}

impl<T: Tuple, I> std::fmt::Debug for Relation<T, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.sorted()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index of pairs on their first column.
    struct ByFirst;

    impl IndexLayout<(u32, u32)> for ByFirst {
        type Key = (u32,);
        type Row = (u32,);
        fn hash(e: &(u32, u32)) -> u64 {
            key_hash(&(&e.0,))
        }
        fn matches(key: &(u32,), e: &(u32, u32)) -> bool {
            key.0 == e.0
        }
        fn key(e: &(u32, u32)) -> (u32,) {
            (e.0,)
        }
        fn row(e: &(u32, u32)) -> (u32,) {
            (e.1,)
        }
    }

    type Pairs = Relation<(u32, u32), (Index<(u32, u32), ByFirst>,)>;

    /// Pairs with one index on the first column.
    fn pairs() -> Pairs {
        Relation::with_indexes((Index::new(),))
    }

    /// The facts of the bucket of `first`, rebuilt.
    fn probe(rel: &Pairs, first: u32) -> Vec<(u32, u32)> {
        let rows = rel.probe(|ix| &ix.0, key_hash(&(&first,)), |key| key.0 == first);
        rows.iter().map(|rest| (first, rest.0)).collect()
    }

    fn probe_before_latest(rel: &Pairs, first: u32) -> Vec<(u32, u32)> {
        let rows = rel.probe_before_latest(|ix| &ix.0, key_hash(&(&first,)), |key| key.0 == first);
        rows.iter().map(|rest| (first, rest.0)).collect()
    }

    /// A layout that is [`ByFirst`] but for the associated items given.
    macro_rules! by_first_but {
        ($(#[$doc:meta])* $name:ident { $($items:tt)* }) => {
            $(#[$doc])*
            struct $name;

            impl IndexLayout<(u32, u32)> for $name {
                type Key = (u32,);
                type Row = (u32,);
                fn hash(e: &(u32, u32)) -> u64 {
                    ByFirst::hash(e)
                }
                fn matches(key: &(u32,), e: &(u32, u32)) -> bool {
                    ByFirst::matches(key, e)
                }
                fn key(e: &(u32, u32)) -> (u32,) {
                    ByFirst::key(e)
                }
                fn row(e: &(u32, u32)) -> (u32,) {
                    ByFirst::row(e)
                }
                $($items)*
            }
        };
    }

    by_first_but!(
        /// [`ByFirst`], with the facts rebuilt from their columns: built from the bitset.
        ByFirstInOrder {
            const KEY_LEADS: bool = true;
            fn fact_from_columns(columns: &[u64]) -> Option<(u32, u32)> {
                Some((columns[0] as u32, columns[1] as u32))
            }
        }
    );

    #[test]
    fn an_index_built_from_the_bitset_has_the_buckets_of_one_built_from_the_table() {
        // Every relation counts as large, and keeps its ghosts.
        let storage = Storage {
            large_from_bytes: 0,
            ghost_share: 0,
            dense: true,
        };
        let facts: FactSet<(u32, u32)> = (0..400u32).map(|i| (i * 7 % 23, i * 13 % 41)).collect();
        let gone: FactSet<(u32, u32)> = facts.iter().copied().filter(|f| f.1 % 5 == 0).collect();
        // A fact outside the box (its first column wider than any before, and the wider
        // box over budget) leaves the bitset listing only some facts: the index is then
        // built from the table. Removed facts are ghosts: in the table, their bits clear.
        for outside in [None, Some((1000, 1))] {
            for removed in [false, true] {
                let mut table = pairs().with_storage(storage);
                let mut in_order: Relation<_, (Index<_, ByFirstInOrder>,)> =
                    Relation::with_indexes((Index::new(),))
                        .with_storage(storage)
                        .with_bitset();
                table.insert_all(&facts, 1);
                in_order.insert_all(&facts, 1);
                // A relation considers a bitset as a batch begins.
                in_order.insert_all(&FactSet::default(), 2);
                if let Some(fact) = outside {
                    table.insert(fact, 2);
                    in_order.insert(fact, 2);
                }
                if removed {
                    table.remove_all(&gone);
                    in_order.remove_all(&gone);
                    assert!(in_order.facts.ghost_count() > 0);
                }
                // Builds the indexes.
                table.finish_materialization();
                in_order.finish_materialization();
                assert_eq!(in_order.facts.bitset_of_all().is_some(), outside.is_none());
                for first in 0..1001 {
                    let key = key_hash(&(&first,));
                    let mut expected: Vec<u32> = table
                        .probe(|ix| &ix.0, key, |k| k.0 == first)
                        .iter()
                        .map(|row| row.0)
                        .collect();
                    let rows: Vec<u32> = in_order
                        .probe(|ix| &ix.0, key, |k| k.0 == first)
                        .iter()
                        .map(|row| row.0)
                        .collect();
                    if outside.is_none() {
                        // Rows in the order of the columns: built from the bitset.
                        assert!(rows.windows(2).all(|w| w[0] < w[1]), "{first}: {rows:?}");
                    }
                    let mut sorted = rows.clone();
                    sorted.sort_unstable();
                    expected.sort_unstable();
                    assert_eq!(sorted, expected, "bucket {first}");
                }
            }
        }
    }

    by_first_but!(
        /// [`ByFirst`], keeping stamps.
        ByFirstStamped {
            const STAMPED: bool = true;
        }
    );

    type StampedPairs = Relation<(u32, u32), (Index<(u32, u32), ByFirstStamped>,)>;

    /// The held facts of the bucket of `first` with the stamps the bucket gives, sorted,
    /// and whether each stamp was read from the bucket (not looked up).
    fn stamped(rel: &StampedPairs, first: u32) -> Vec<((u32, u32), Stamp, bool)> {
        let rows = rel.probe_stamped(|ix| &ix.0, key_hash(&(&first,)), |key| key.0 == first);
        assert_eq!(rows.kept_stamps().len(), rows.len());
        let mut facts: Vec<_> = (rows.rows().iter().zip(rows.kept_stamps()))
            .filter_map(|(row, &kept)| {
                let fact = (first, row.0);
                let stamp = rows.stamp(kept, &fact)?;
                assert_eq!(rel.stamp(&fact), Some(stamp), "{fact:?}");
                Some((fact, stamp, kept == stamp))
            })
            .collect();
        facts.sort_unstable();
        facts
    }

    #[test]
    fn stamped_rows_follow_every_stamp_change() {
        let batch = |facts: &[(u32, u32)]| facts.iter().copied().collect::<FactSet<_>>();
        let mut rel = StampedPairs::with_indexes((Index::new(),));
        rel.insert_all(&batch(&[(1, 2), (1, 3), (1, 4), (2, 5)]), 1);
        // Built from the table, at the first probe.
        assert_eq!(
            stamped(&rel, 1),
            [((1, 2), 1, true), ((1, 3), 1, true), ((1, 4), 1, true)]
        );
        rel.insert((1, 5), 2); // into a built index
        rel.restamp(&(1, 3), 4); // one fact
        rel.retire_all(&batch(&[(1, 2), (1, 4)])); // a run of a bucket
        assert_eq!(stamped(&rel, 1), [((1, 3), 4, true), ((1, 5), 2, true)]);
        assert_eq!(rel.retired(), 2);
        rel.insert_all(&batch(&[(1, 2), (1, 4)]), 6); // revived together
        rel.insert((2, 5), 9); // held: keeps its stamp
        assert_eq!(
            stamped(&rel, 1),
            [
                ((1, 2), 6, true),
                ((1, 3), 4, true),
                ((1, 4), 6, true),
                ((1, 5), 2, true)
            ]
        );
        assert_eq!(stamped(&rel, 2), [((2, 5), 1, true)]);
        // Removals keep each stamp beside its row: one (swapped into place) and a run.
        rel.remove_all(&batch(&[(1, 2)]));
        assert_eq!(
            stamped(&rel, 1),
            [((1, 3), 4, true), ((1, 4), 6, true), ((1, 5), 2, true)]
        );
        rel.remove_all(&batch(&[(1, 3), (1, 5)]));
        assert_eq!(stamped(&rel, 1), [((1, 4), 6, true)]);
        // A held fact stamped `RETIRED` (a stopped clock) is looked up, not taken for gone.
        rel.restamp(&(1, 4), Stamp::MAX);
        assert_eq!(stamped(&rel, 1), [((1, 4), Stamp::MAX, true)]);
        // An index built while facts are retired marks their rows.
        let mut late = StampedPairs::with_indexes((Index::new(),));
        late.insert_all(&batch(&[(3, 1), (3, 2)]), 1);
        late.retire_all(&batch(&[(3, 1)]));
        assert_eq!(stamped(&late, 3), [((3, 2), 1, true)]);
    }

    #[test]
    fn a_stamped_bucket_keeps_its_rows_in_stamp_order() {
        let batch = |facts: &[(u32, u32)]| facts.iter().copied().collect::<FactSet<_>>();
        let ones = key_hash(&(&1u32,));
        let kept = |rel: &StampedPairs| {
            let rows = rel.probe_stamped(|ix| &ix.0, ones, |key| key.0 == 1);
            rows.kept_stamps().to_vec()
        };
        const GONE: Stamp = RETIRED;
        let mut rel = StampedPairs::with_indexes((Index::new(),));
        rel.insert_all(&batch(&[(1, 2), (1, 3)]), 3);
        rel.insert_all(&batch(&[(1, 4)]), 1);
        assert_eq!(kept(&rel), [1, 3, 3]); // built from the table, then ordered
        rel.insert((1, 5), 2); // among its elders
        assert_eq!(kept(&rel), [1, 2, 3, 3]);
        rel.restamp(&(1, 4), 4); // a raise moves the row up
        assert_eq!(kept(&rel), [2, 3, 3, 4]);
        rel.retire_all(&batch(&[(1, 5)])); // retired rows go last, one...
        assert_eq!(kept(&rel), [3, 3, 4, GONE]);
        rel.retire_all(&batch(&[(1, 2), (1, 3)])); // ...or a run
        assert_eq!(kept(&rel), [4, GONE, GONE, GONE]);
        rel.insert_all(&batch(&[(1, 2)]), 5); // revived before the retired rows, one...
        assert_eq!(kept(&rel), [4, 5, GONE, GONE]);
        rel.insert_all(&batch(&[(1, 3), (1, 5)]), 6); // ...or a run
        assert_eq!(kept(&rel), [4, 5, 6, 6]);
        rel.retire_all(&batch(&[(1, 4)]));
        rel.insert_all(&batch(&[(1, 6)]), 7); // a new fact before a retired one
        assert_eq!(kept(&rel), [5, 6, 6, 7, GONE]);
        // The moves leave every row of the earlier batches among those a semi-naive round
        // reads ([`Relation::probe_before_latest`]).
        let before = rel.probe_before_latest(|ix| &ix.0, ones, |key| key.0 == 1);
        for earlier in [2, 3, 4, 5] {
            assert!(before.contains(&(earlier,)), "{earlier}");
        }
        rel.remove_all(&batch(&[(1, 2)])); // removals keep the order
        assert_eq!(kept(&rel), [6, 6, 7, GONE]);
        rel.remove_all(&batch(&[(1, 3), (1, 6)]));
        assert_eq!(kept(&rel), [6, GONE]);
    }

    #[test]
    fn indexes_follow_inserts_and_batch_removals() {
        let mut rel = pairs();
        for e in [(1, 2), (1, 3), (2, 3)] {
            assert!(rel.insert(e, 1));
        }
        assert!(!rel.insert((1, 2), 2));
        assert_eq!(rel.stamp(&(1, 2)), Some(1));
        let gone: FactSet<(u32, u32)> = [(1, 2), (9, 9)].into_iter().collect();
        rel.remove_all(&gone);
        assert_eq!(rel.len(), 2);
        let ones: Vec<_> = probe(&rel, 1).to_vec();
        assert_eq!(ones, vec![(1, 3)]);
        assert!(probe(&rel, 7).is_empty());
    }

    fn is_built(rel: &Pairs) -> bool {
        rel.indexes.0.buckets.get().is_some()
    }

    #[test]
    fn an_index_is_built_on_its_first_probe_of_a_held_fact_and_maintained_after() {
        let mut rel = pairs();
        assert!(probe(&rel, 1).is_empty());
        assert!(!is_built(&rel), "probing an empty relation builds nothing");
        rel.insert((1, 2), 1);
        rel.insert((2, 3), 1);
        assert!(!is_built(&rel), "an index not built yet is not maintained");
        assert_eq!(probe(&rel, 1), [(1, 2)]);
        assert!(is_built(&rel));
        rel.insert((1, 4), 2);
        rel.remove_all(&[(1, 2)].into_iter().collect());
        assert_eq!(probe(&rel, 1), [(1, 4)]);
    }

    #[test]
    fn finishing_a_materialization_builds_every_index() {
        let mut rel = pairs();
        for i in 0..1000 {
            rel.insert((i % 10, i), 1);
        }
        assert!(!is_built(&rel));
        rel.finish_materialization();
        assert!(is_built(&rel));
        let threes = probe(&rel, 3);
        assert_eq!((threes.len(), threes.iter().all(|e| e.0 == 3)), (100, true));
    }

    #[test]
    fn retiring_more_facts_than_a_batch_retires_exactly_the_held_ones() {
        let mut rel = pairs();
        for i in 0..200 {
            rel.insert((i % 7, i), 1);
        }
        rel.finish_materialization();
        // Three and a bit batches of facts, every third of them not held.
        let gone: FactSet<(u32, u32)> = (0..3 * RETIRE_BATCH as u32 + 5)
            .map(|i| if i % 3 == 0 { (99, i) } else { (i % 7, i) })
            .collect();
        let held = gone.iter().filter(|f| rel.contains(f)).count();
        rel.retire_all(&gone);
        assert_eq!((rel.len(), rel.retired()), (200 - held, held));
        assert!(gone.iter().all(|f| !rel.contains(f)));
        assert!((0..200).all(|i| rel.contains(&(i % 7, i)) != gone.contains(&(i % 7, i))));
    }

    fn batch(facts: &[(u32, u32)]) -> FactSet<(u32, u32)> {
        facts.iter().copied().collect()
    }

    fn sorted_probe(mut rows: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
        rows.sort_unstable();
        rows
    }

    #[test]
    fn a_probe_before_the_latest_batch_keeps_every_older_fact() {
        let mut rel = pairs();
        assert!(probe_before_latest(&rel, 1).is_empty(), "nothing built");
        rel.insert_all(&batch(&[(1, 0), (1, 1), (1, 2)]), 1);
        // Built during a batch: every row counts as older (a superset).
        assert_eq!(probe_before_latest(&rel, 1).len(), 3);
        rel.insert_all(&batch(&[(1, 3), (1, 4), (2, 0)]), 2);
        assert_eq!(
            sorted_probe(probe_before_latest(&rel, 1)),
            [(1, 0), (1, 1), (1, 2)]
        );
        // A swap-removal moves the last (newest) row forward: still a superset.
        rel.remove_all(&batch(&[(1, 0)]));
        let before = sorted_probe(probe_before_latest(&rel, 1));
        assert!(before.contains(&(1, 1)) && before.contains(&(1, 2)));
        // Order-keeping removal of several rows.
        rel.remove_all(&batch(&[(1, 1), (1, 3)]));
        let before = sorted_probe(probe_before_latest(&rel, 1));
        assert!(before.contains(&(1, 2)) && !before.contains(&(1, 1)));
        // An empty batch still begins a batch: everything held is older.
        rel.insert_all(&FactSet::default(), 3);
        assert_eq!(
            sorted_probe(probe_before_latest(&rel, 1)),
            sorted_probe(probe(&rel, 1))
        );
        // A retired fact revived by the latest batch stays where it was.
        rel.retire_all(&batch(&[(1, 2)]));
        rel.insert_all(&batch(&[(1, 2), (1, 5)]), 4);
        let before = sorted_probe(probe_before_latest(&rel, 1));
        assert!(before.contains(&(1, 4)) && !before.contains(&(1, 5)));
        assert!(probe(&rel, 1).contains(&(1, 5)));
    }

    #[test]
    fn without_a_built_index_retired_facts_just_go() {
        let mut rel = pairs();
        for i in 0..16 {
            rel.insert((1, i), 1);
        }
        rel.retire_all(&batch(&[(1, 0), (1, 1)]));
        assert_eq!((rel.len(), rel.retired()), (14, 0));
        // An index built afterwards holds the held facts only, and a re-inserted fact
        // comes back as new.
        assert_eq!(probe(&rel, 1).len(), 14);
        assert!(rel.insert((1, 0), 5));
        assert_eq!(probe(&rel, 1).len(), 15);
        assert_eq!(rel.stamp(&(1, 0)), Some(5));
    }

    #[test]
    fn relations_can_be_shared_between_threads() {
        fn shared<S: Send + Sync>() {}
        shared::<Relation<(u32, u32)>>();
    }

    #[test]
    fn retired_facts_stay_in_indexes_until_settled_and_revive_in_place() {
        let mut rel = pairs();
        for i in 0..16 {
            rel.insert((1, i), 1);
        }
        rel.finish_materialization();
        let gone: FactSet<(u32, u32)> = [(1, 0), (1, 1)].into_iter().collect();
        rel.retire_all(&gone);
        assert_eq!((rel.len(), rel.retired()), (14, 2));
        assert!(!rel.contains(&(1, 0)) && !rel.live(&(1, 0)) && rel.live(&(1, 2)));
        assert_eq!(probe(&rel, 1).len(), 16, "still indexed");
        // Reinserted, a retired fact is revived with its new stamp, not indexed twice.
        assert!(rel.insert((1, 0), 5));
        assert_eq!((rel.stamp(&(1, 0)), rel.retired()), (Some(5), 1));
        assert_eq!(probe(&rel, 1).len(), 16);
        rel.settle();
        assert_eq!(
            rel.retired(),
            1,
            "one retired fact of 15 is under an eighth"
        );
        rel.retire_all(&[(1, 2), (1, 3)].into_iter().collect());
        rel.settle();
        assert_eq!(rel.retired(), 0);
        assert_eq!(probe(&rel, 1).len(), 13);
    }

    #[test]
    fn a_risen_fact_names_the_heads_that_counted_on_it_until_forgotten() {
        let mut rel = pairs();
        rel.insert((1, 2), 3);
        // About to go: every head younger than it may have counted on it.
        assert_eq!(rel.counted_on(&(1, 2)), Some((3, Stamp::MAX)));
        rel.restamp(&(1, 2), 7);
        assert_eq!(rel.stamp(&(1, 2)), Some(7));
        // Risen: heads stamped 4..=7 counted on it and can no more.
        assert_eq!(rel.counted_on(&(1, 2)), Some((3, 7)));
        rel.forget_risen();
        assert_eq!(rel.counted_on(&(1, 2)), Some((7, Stamp::MAX)));
        assert_eq!(rel.counted_on(&(9, 9)), None);
        assert!(claims_support(7) && !claims_support(UNSTAMPED) && !claims_support(Stamp::MAX));
    }

    #[test]
    fn borrowed_and_owned_keys_hash_alike() {
        let owned = String::from("a");
        assert_eq!(key_hash(&(&owned,)), key_hash(&(&"a",)));
    }
}
