//! A relation's hash indexes: the layouts the generated code declares, the tables of
//! buckets (in `bucket`), and the probes the joins make.

use std::borrow::Cow;
use std::hash::{BuildHasher, Hash};
use std::sync::OnceLock;

use hashbrown::hash_table::HashTable;

use crate::fact::{FactHashState, FactSet, Stamp, Tuple};
use crate::fact_map::FactMap;

use super::bucket::{Bucket, Buckets, Keyed, RETIRED};
use super::Relation;

/// Hashes an index key: a tuple of references to the key columns, e.g. `(&x, &"a")`.
///
/// Index buckets are addressed by this hash rather than by an owned key, so a probe never
/// clones or allocates (a `String` column is hashed through a borrow). Insertion and probing
/// use the same [`FactHashState`], so equal keys always meet in the same bucket.
#[inline]
pub fn key_hash<K: Hash + ?Sized>(key: &K) -> u64 {
    FactHashState.hash_one(key)
}

/// A probe's key: a tuple of references to the values it looks up, e.g. `(&x, &"a")`,
/// compared column by column with the keys an index stores (`K`). A probe takes its key
/// this way, rather than as a closure that compares, so that the probe is compiled once
/// per index layout and key type rather than once per place a join probes (`datalog!`
/// writes hundreds of those); a stored `String` column is compared with a borrowed `str`.
///
/// ```
/// use dred_runtime::KeyQuery;
/// let stored = (String::from("a"), 1u32);
/// assert!((&"a", &1u32).matches(&stored));
/// assert!(!(&"b", &1u32).matches(&stored));
/// // Keys of more than twelve columns nest, as `datalog!` writes them.
/// assert!(((&1u8,), (&2u8,)).matches(&((1u8,), (2u8,))));
/// ```
pub trait KeyQuery<K> {
    /// Whether `key` holds the values this query refers to.
    fn matches(&self, key: &K) -> bool;
}

impl<A: PartialEq<B>, B: ?Sized> KeyQuery<A> for &B {
    #[inline]
    fn matches(&self, key: &A) -> bool {
        *key == **self
    }
}

macro_rules! key_query_tuples {
    ($(($($query:ident $stored:ident $at:tt),+))+) => {$(
        impl<$($stored, $query: KeyQuery<$stored>),+> KeyQuery<($($stored,)+)> for ($($query,)+) {
            #[inline]
            fn matches(&self, key: &($($stored,)+)) -> bool {
                true $(&& self.$at.matches(&key.$at))+
            }
        }
    )+};
}

key_query_tuples! {
    (Q0 K0 0)
    (Q0 K0 0, Q1 K1 1)
    (Q0 K0 0, Q1 K1 1, Q2 K2 2)
    (Q0 K0 0, Q1 K1 1, Q2 K2 2, Q3 K3 3)
    (Q0 K0 0, Q1 K1 1, Q2 K2 2, Q3 K3 3, Q4 K4 4)
    (Q0 K0 0, Q1 K1 1, Q2 K2 2, Q3 K3 3, Q4 K4 4, Q5 K5 5)
    (Q0 K0 0, Q1 K1 1, Q2 K2 2, Q3 K3 3, Q4 K4 4, Q5 K5 5, Q6 K6 6)
    (Q0 K0 0, Q1 K1 1, Q2 K2 2, Q3 K3 3, Q4 K4 4, Q5 K5 5, Q6 K6 6, Q7 K7 7)
    (Q0 K0 0, Q1 K1 1, Q2 K2 2, Q3 K3 3, Q4 K4 4, Q5 K5 5, Q6 K6 6, Q7 K7 7, Q8 K8 8)
    (Q0 K0 0, Q1 K1 1, Q2 K2 2, Q3 K3 3, Q4 K4 4, Q5 K5 5, Q6 K6 6, Q7 K7 7, Q8 K8 8, Q9 K9 9)
    (Q0 K0 0, Q1 K1 1, Q2 K2 2, Q3 K3 3, Q4 K4 4, Q5 K5 5, Q6 K6 6, Q7 K7 7, Q8 K8 8, Q9 K9 9, Q10 K10 10)
    (Q0 K0 0, Q1 K1 1, Q2 K2 2, Q3 K3 3, Q4 K4 4, Q5 K5 5, Q6 K6 6, Q7 K7 7, Q8 K8 8, Q9 K9 9, Q10 K10 10, Q11 K11 11)
}

/// Which index of a relation's index set (`I`) a probe reads: a function pointer, rather
/// than a closure, so that probes of one index share one compiled probe (see
/// [`KeyQuery`]); in an optimized build each probe still reads its field directly.
pub type IndexOf<T, I, L> = for<'i> fn(&'i I) -> &'i Index<T, L>;

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
    pub(super) relation: &'s Relation<T, I>,
    pub(super) rows: &'s [Row],
    pub(super) stamps: &'s [Stamp],
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
pub(super) fn table_bytes(buckets: usize, entry: usize) -> usize {
    const GROUP: usize = 16;
    if buckets == 0 {
        return 0;
    }
    buckets * (entry + 1) + GROUP
}

/// The buckets a std (hashbrown) hash table that reports `capacity` has: a power of two,
/// seven eighths of them usable once there are eight.
pub(super) fn buckets_for(capacity: usize) -> usize {
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
    /// costs a pass over the fact's buckets instead; the price is a stamp's 4 bytes a row.
    /// Measured: `BENCHMARKS.md`, *Design measurements*, "Stamped rows".
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
    /// `datalog!` generates from the same code, but inlined into the build, where a call
    /// through the relation's function pointer per fact showed from scratch
    /// (`BENCHMARKS.md`, *Design measurements*, "Builds from bitsets").
    #[inline]
    fn fact_from_columns(columns: &[u64]) -> Option<T> {
        let _ = columns;
        None
    }
}

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
    pub(super) buckets: OnceLock<Buckets<L::Key, L::Row>>,
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

/// What an index is built from: its relation's held and retired facts, and the batch the
/// relation is in.
pub struct IndexSource<'a, T> {
    pub(super) held: &'a FactMap<T>,
    pub(super) dead: &'a FactSet<T>,
    pub(super) batch: u64,
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
    /// [`IndexLayout::fact_from_columns`]); else `None`. Measured: `BENCHMARKS.md`,
    /// *Design measurements*, "Builds from bitsets".
    ///
    /// Why the room: an update that adds a row to most buckets (an edge back into a
    /// cycle) moved each bucket stored at its size, leaving a hole the next, larger,
    /// bucket could not use; the holes stayed resident (`BENCHMARKS.md`, *Design
    /// measurements*, "Room in built buckets").
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

    /// The bucket of the key that hashes to `hash` and matches `key`, building the index
    /// from `source` on the first probe of a relation that holds a fact.
    #[inline]
    pub(super) fn keyed<'s>(
        &self,
        source: impl FnOnce() -> Option<IndexSource<'s, T>>,
        hash: u64,
        key: &impl KeyQuery<L::Key>,
    ) -> Option<&Keyed<L::Key, L::Row>> {
        let buckets = match self.buckets.get() {
            Some(buckets) => buckets,
            None => self.build_on_first_probe(source()?),
        };
        buckets.find(hash, |keyed| key.matches(&keyed.key))
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
    /// [`Relation::map_stamps`] on every built index.
    fn map_stamps(&mut self, map: &dyn Fn(Stamp) -> Stamp);
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
    fn map_stamps(&mut self, _: &dyn Fn(Stamp) -> Stamp) {}
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
    /// all (`BENCHMARKS.md`, *Design measurements*, "Room in built buckets"). Copying an
    /// eighth more per growth costs little beside the hash lookups around it.
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

    fn map_stamps(&mut self, map: &dyn Fn(Stamp) -> Stamp) {
        if let Some(buckets) = self.buckets.get_mut() {
            for stamp in buckets.iter_mut().flat_map(|k| &mut k.bucket.stamps) {
                *stamp = map(*stamp);
            }
        }
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
            fn map_stamps(&mut self, map: &dyn Fn(Stamp) -> Stamp) {
                $(self.$at.map_stamps(map);)+
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
