//! One relation: a membership set plus the hash indexes its program's join plans asked for
//! (their layouts and probes are in `index`, their buckets in `bucket`).

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::Hash;

pub use crate::fact::{
    claims_support, FactHashState, FactSet, FixedHasher, Stamp, Tuple, ROUND_GAP, UNSTAMPED,
};
use crate::fact_map::FactMap;
use crate::settings::Storage;

mod bucket;
mod index;
use bucket::{Keyed, RETIRED};
pub use index::*;

/// The room a relation's facts took ([`Relation::into_room`]): what a recompute reserves
/// for them before they are derived anew.
#[derive(Default)]
pub struct Room {
    len: usize,
    /// The box of a dense relation, holding nothing, and its array of stamps.
    dense: Option<(crate::bitset::Bitset, Vec<Stamp>)>,
}

/// How many facts [`Relation::retire_all`] looks up before it removes any: each lookup in a
/// table of millions of facts misses the cache, and the misses of lookups with nothing
/// between them overlap, where a removal's own branches on what it read kept the next
/// one from starting (`BENCHMARKS.md`, *Design measurements*, "Retirement").
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
/// let mut from_one = edges.probe(|ix| &ix.0, (&1u32,)).to_vec();
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
    risen: HashMap<T, Stamp, FactHashState>,
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
        if !claims_support(stamp) {
            // Any head may have counted on a fact that claims no support.
            return Some((UNSTAMPED, Stamp::MAX));
        }
        let old = (!self.risen.is_empty())
            .then(|| self.risen.get(fact).copied())
            .flatten();
        Some(match old {
            Some(old) => (old, stamp),
            None => (stamp, Stamp::MAX),
        })
    }

    /// The lower end of [`Relation::counted_on`]'s range, 0 if `fact` does not hold: the
    /// stamp it had before this round's raises, which a loss of support's join takes as
    /// a floor for the heads of an instance that `fact` is in (see `Admit::admits`).
    #[inline]
    pub fn floor_of(&self, fact: &T) -> Stamp {
        self.counted_on(fact).map_or(0, |(before, _)| before)
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
    /// key holds the values `key` refers to (a tuple of references, see [`KeyQuery`]). The
    /// first probe of a relation that holds a fact builds the index, which is maintained
    /// from then on.
    #[inline(always)]
    pub fn probe<L: IndexLayout<T>>(
        &self,
        index: IndexOf<T, I, L>,
        key: impl KeyQuery<L::Key> + Hash,
    ) -> &[L::Row] {
        self.keyed(index, &key).map_or(&[], |keyed| keyed.rows())
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
    /// edges.probe(|ix| &ix.0, (&1u32,));
    /// assert!(edges.index_is_built(|ix| &ix.0));
    /// ```
    pub fn index_is_built<L: IndexLayout<T>>(&self, index: IndexOf<T, I, L>) -> bool {
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
    /// assert_eq!(edges.probe(|ix| &ix.0, (&1u32,)), [(2,)]); // builds the index
    /// edges.insert_all(&batch(&[(1, 3)]), 2);
    /// assert_eq!(edges.probe(|ix| &ix.0, (&1u32,)), [(2,), (3,)]);
    /// assert_eq!(edges.probe_before_latest(|ix| &ix.0, (&1u32,)), [(2,)]);
    /// ```
    #[inline(always)]
    pub fn probe_before_latest<L: IndexLayout<T>>(
        &self,
        index: IndexOf<T, I, L>,
        key: impl KeyQuery<L::Key> + Hash,
    ) -> &[L::Row] {
        self.keyed(index, &key)
            .map_or(&[], |keyed| keyed.before(self.batch))
    }

    /// [`Relation::probe`], with the rows' stamps at hand ([`StampedRows::stamp`]): read
    /// from the bucket if the index keeps them ([`IndexLayout::STAMPED`]), else looked up.
    #[inline(always)]
    pub fn probe_stamped<L: IndexLayout<T>>(
        &self,
        index: IndexOf<T, I, L>,
        key: impl KeyQuery<L::Key> + Hash,
    ) -> StampedRows<'_, T, I, L::Row> {
        let (rows, stamps): (&[L::Row], &[Stamp]) = match self.keyed(index, &key) {
            Some(keyed) => (keyed.rows(), keyed.stamps()),
            None => (&[], &[]),
        };
        StampedRows {
            relation: self,
            rows,
            stamps,
        }
    }

    /// The bucket of `index` for the key `key` refers to, with its key; the index is built
    /// on the first probe of a relation that holds a fact.
    ///
    /// This and the probes that call it are always inlined: each is compiled once per
    /// index and key type, and the inliner, weighing one body for many joins, left some
    /// out of the hot loops they sit in (`BENCHMARKS.md`, *Compile time*, "probes and the
    /// closures of every join").
    #[inline(always)]
    fn keyed<L: IndexLayout<T>>(
        &self,
        index: IndexOf<T, I, L>,
        key: &(impl KeyQuery<L::Key> + Hash),
    ) -> Option<&Keyed<L::Key, L::Row>> {
        let source =
            || (!self.facts.is_empty() || !self.dead.is_empty()).then(|| self.index_source());
        index(&self.indexes).keyed(source, key_hash(key), key)
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

    /// Sets the stamp of each fact of `facts` that holds to [`UNSTAMPED`]: it claims no
    /// support from now on (see [`Stamp`]'s invariant), for a fact kept without one. No
    /// other fact's support is lost, as a lower stamp only makes a body fact older.
    ///
    /// ```
    /// use dred_runtime::{FactSet, Relation, UNSTAMPED};
    /// let mut r: Relation<(u32, u32)> = Relation::new();
    /// r.insert((1, 2), 7);
    /// r.unstamp_all(&FactSet::from_iter([(1, 2), (3, 4)]));
    /// assert_eq!(r.stamp(&(1, 2)), Some(UNSTAMPED));
    /// assert!(!r.contains(&(3, 4)));
    /// ```
    pub fn unstamp_all(&mut self, facts: &FactSet<T>) {
        let mut changed = Vec::new();
        for fact in facts {
            if let Some(held) = self.facts.get_mut(fact) {
                *held = UNSTAMPED;
                changed.push((fact, UNSTAMPED));
            }
        }
        if I::STAMPED && !changed.is_empty() {
            self.indexes.set_stamps(&changed);
        }
    }

    /// The stamps of the facts held, in no order.
    pub fn stamps(&self) -> impl Iterator<Item = Stamp> + '_ {
        self.facts.entries().map(|(_, stamp)| stamp)
    }

    /// Replaces every stamp `s`, in the table and the indexes, with `map(s)`, which must
    /// keep the stamps' order and map `Stamp::MAX` (a retired fact's) to itself: a
    /// renumbering, so the facts' supports (see [`Stamp`]) and the indexes' order hold.
    /// Outside an update (no fact has risen in it).
    pub fn map_stamps(&mut self, map: &dyn Fn(Stamp) -> Stamp) {
        debug_assert!(self.risen.is_empty(), "outside an update");
        self.facts.map_stamps(map);
        self.indexes.map_stamps(map);
    }

    /// [`Relation::unstamp_all`] of every fact: none claims a support from now on.
    pub fn unstamp_every(&mut self) {
        let every = self.to_set();
        self.unstamp_all(&every);
    }

    /// Takes the facts of `gone` that hold out of the relation but leaves them in its
    /// indexes, as retired facts (see the type's invariant); with no index built, there is
    /// nothing to leave them in, and they go: same-generation's indexes on `Sg` are built
    /// only by large updates (see [`IndexLayout::EAGER`]), and taking its retired facts
    /// out at once saves instructions (`BENCHMARKS.md`, *Design measurements*,
    /// "Retirement").
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
    /// edges.probe(|ix| &ix.0, (&1u32,)); // builds the index
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
    /// the largest update's sizes for good (`BENCHMARKS.md`, *Design measurements*,
    /// "Retirement").
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
mod tests;
