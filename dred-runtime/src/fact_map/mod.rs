//! A relation's held facts and their stamps: one hash table while it is small, then
//! shards, so that growing never holds two copies of a large table; or, for facts of small
//! integers whose box of values they fill well enough, a bit and a stamp per point of it.

use std::borrow::Cow;
use std::collections::BinaryHeap;
use std::hash::{BuildHasher, BuildHasherDefault};

use hashbrown::hash_table::{Entry, HashTable};

use crate::bitset::{Bitset, NoBitset, MAX_COLUMNS};
use crate::fact::{FactHashState, FixedHasher, Stamp, Tuple};
use crate::settings::Storage;

mod entries;
#[cfg(test)]
mod tests;

/// How many shards a large map has. A hash table grows by moving into one twice its size,
/// and both are held until the move ends: for a map of millions of facts that copy was the
/// memory peak of a materialization. Shards grow one at a time, so the peak holds one
/// shard's two copies; each move also fits in the cache. Measured: `BENCHMARKS.md`,
/// *Design measurements*, "Shards".
const SHARDS: usize = 16;

/// The largest table (in buckets) a map keeps whole; growing past it splits the map into
/// [`SHARDS`] shards with the whole table's room between them, which then grow one at a
/// time ([`FactMap::split_for`]). Up to it, one table is faster than shards: a shard's
/// table is read from an array at a place the fact's hash picks, one more load between
/// the hash and the slot, where the whole table is a field (see [`FactMap::table`]).
/// Past it, growing the whole table would hold its old and new tables, three times its
/// room, at a moment the model is nearly at its largest: Andersen's points-to map of 2^18
/// buckets made its materialization's memory peak that way. Measured: `BENCHMARKS.md`,
/// *Design measurements*, "Whole tables up to 2^19 buckets" and "Splits at 2^18 buckets".
const LARGEST_WHOLE: usize = 1 << 18;

/// Which bits of a fact's hash choose its shard: above those a shard's table uses for its
/// slot (the low bits) and below its tag (the top seven), so that facts in one shard still
/// spread over all its slots and tags; and among the hash's well-mixed bits ([`FixedHasher`]'s state's
/// high half, rotated: a product's low bits see only its factors' low bits).
const SHARD_SHIFT: u32 = 52;

/// The most bytes a dense map's stamps may take whatever its tables take, so that small
/// relations (tests') can be dense too; a relation only considers it once it is large
/// ([`FactMap::consider_bitset`]).
const DENSE_MIN_BYTES: usize = 1 << 12;

/// From which share of the size at which tables outgrow the cache
/// ([`crate::settings::Storage::large_from_bytes`]) a map considers a bitset. Rounds grow by
/// several times at once, and the round after a bitset's build is the one whose head tests
/// read it: from a larger share, the suite's closures and Andersen built their bitsets only
/// after their largest round, whose head tests then missed the cache (with
/// [`BITSET_BUDGET_SHARE`]'s half, Andersen's is built before it). Measured:
/// `BENCHMARKS.md`, *Design measurements*, "Bitsets from a sixteenth".
const BITSET_FROM_SHARE: usize = 16;

/// A bitset may take up to the tables' bytes divided by this: a box a third of the tables
/// (Andersen's, before its largest round) is worth its bits. Measured: `BENCHMARKS.md`,
/// *Design measurements*, "Bitset budget".
const BITSET_BUDGET_SHARE: usize = 2;

/// Rebuilds a fact from its columns' values, as a bitset reads them (`None` for values no
/// fact has).
pub(crate) type Rebuild<T> = fn(&[u64]) -> Option<T>;

type Shard<T> = HashTable<(T, Stamp)>;

type Tables<'a, T> =
    std::iter::Chain<std::iter::Once<&'a Shard<T>>, std::slice::Iter<'a, Shard<T>>>;

/// The shard of a split map that holds the facts hashed to `hash`.
#[inline]
fn shard_of(hash: u64) -> usize {
    (hash >> SHARD_SHIFT) as usize % SHARDS
}

/// The hash that orders a sample ([`FactMap::sample`]).
fn fixed_hash<T: Tuple>(fact: &T) -> u64 {
    BuildHasherDefault::<FixedHasher>::default().hash_one(fact)
}

#[inline]
fn hash_of<T: Tuple>(fact: &T) -> u64 {
    FactHashState.hash_one(fact)
}

/// Fact → stamp, in one hash table or, once that would grow past [`LARGEST_WHOLE`]
/// buckets, split over [`SHARDS`] tables by a few bits of the fact's hash; a table is given
/// the same hash, so a fact is hashed once per operation.
///
/// Invariant: either `shards` is empty, or `whole` is and `shards` holds [`SHARDS`]
/// tables; a fact is only ever in the table its hash names, stored under that hash. The
/// tables hold the map's facts and `ghosts` more: facts removed from a `bitset`'s box,
/// whose bits are clear (a `bitset` holds the map's facts, see [`Bitset`]'s invariant), so
/// a table entry is a ghost exactly when its fact lies in the box and its bit is clear.
///
/// Why ghosts: a bitset exists only beside tables too large for the cache, where taking a
/// fact out of a table misses it twice (its control bytes, then its slot), and clearing a
/// bit in a box that fits the cache does not. Ghosts are purged, in one pass over the
/// tables, once they pass an eighth of the facts ([`FactMap::purge_if_many`]), before a
/// table shrinks or is split, and before a new bitset is built; and a table's ghosts are
/// purged before room is reserved for a batch (and before one insertion grows the whole
/// table) if that spares the table growing. Inserting a ghost's fact revives it in place.
///
/// A map that can rebuild its facts from their columns (`rebuild`) turns *dense* once its
/// bitset holds every fact and an array of stamps over the box, `dense`, would take no
/// more than its tables (soon: [`FactMap::consider_dense`]): the facts in the box then
/// leave the tables, and such a fact is held exactly when its bit is set, under the
/// stamp at its place in `dense` (`dense_len` counts them); the tables hold only facts
/// outside the box, and no ghost. A fact table takes 13 bytes a fact (a pair of `u32`
/// and its stamp, and a control byte) at a load of 7/16 to 7/8; the stamps take 4 bytes
/// a point of the box, and the pages of points no fact reached are never touched. A
/// dense map's box never widens: facts outside it stay in the tables.
#[derive(Clone)]
pub(crate) struct FactMap<T> {
    whole: Shard<T>,
    shards: Box<[Shard<T>]>,
    /// Whether the facts' columns are integers ([`FactMap::allow_bitset`]).
    integer_columns: bool,
    bitset: Option<Bitset>,
    /// How many facts the map held when it last built a bitset, or tried to.
    bitset_tried_at: usize,
    /// The bytes of the last box too large for the budget ([`BITSET_BUDGET_SHARE`]).
    bitset_wanted: usize,
    /// How many table entries are ghosts: the sum of `ghosts_by_table`, kept because the
    /// hot paths ask whether there are any.
    ghosts: usize,
    /// How many entries of each table are ghosts: of each shard, or of the whole table
    /// (at 0) while the map is whole.
    ghosts_by_table: [usize; SHARDS],
    /// Rebuilds a fact from its columns, if the map may turn dense.
    rebuild: Option<Rebuild<T>>,
    /// The stamps of the facts in the box, by place, once the map is dense (else empty).
    dense: Vec<Stamp>,
    /// How many facts in the box a dense map holds.
    dense_len: usize,
    /// Past which share of the facts ghosts are purged ([`Storage::ghost_share`]).
    ghost_share: usize,
    /// Whether the map may turn dense at all ([`Storage::dense`]).
    dense_allowed: bool,
}

impl<T: Tuple> Default for FactMap<T> {
    fn default() -> Self {
        FactMap {
            whole: Shard::new(),
            shards: Box::new([]),
            integer_columns: false,
            bitset: None,
            bitset_tried_at: 0,
            bitset_wanted: 0,
            ghosts: 0,
            ghosts_by_table: [0; SHARDS],
            rebuild: None,
            dense: Vec::new(),
            dense_len: 0,
            ghost_share: Storage::default().ghost_share,
            dense_allowed: Storage::default().dense,
        }
    }
}

impl<T: Tuple> FactMap<T> {
    /// The table that holds the facts hashed to `hash`: the whole one (a field, read
    /// without waiting for the hash), or the shard the hash picks.
    #[inline]
    fn table(&self, hash: u64) -> &Shard<T> {
        if self.shards.is_empty() {
            &self.whole
        } else {
            &self.shards[shard_of(hash)]
        }
    }

    #[inline]
    fn table_mut(&mut self, hash: u64) -> &mut Shard<T> {
        if self.shards.is_empty() {
            &mut self.whole
        } else {
            &mut self.shards[shard_of(hash)]
        }
    }

    /// Purges table `at`'s ghosts if that spares it growing to take `additional` more
    /// entries.
    fn purge_to_spare_growth(&mut self, at: usize, additional: usize) {
        let ghosts = self.ghosts_by_table[at];
        let table = self.shards.get(at).unwrap_or(&self.whole);
        let (len, capacity) = (table.len(), table.capacity());
        if ghosts > 0 && len + additional > capacity && len - ghosts + additional <= capacity {
            self.purge_table(at);
        }
    }

    /// Splits a whole map into shards if holding `facts` facts would grow its table past
    /// [`LARGEST_WHOLE`] buckets, unless it turns dense instead ([`FactMap::consider_dense`]).
    /// The shards get an even share of the whole table's room, not of `facts`: the split
    /// then holds about twice the whole table's room, not the three times of a table
    /// growing, and the shards grow to take `facts` afterwards, each holding two copies
    /// of itself alone. A shard that its share overflows grows during the move.
    fn split_for(&mut self, facts: usize) {
        if !self.shards.is_empty()
            || facts <= self.whole.capacity()
            || facts <= LARGEST_WHOLE / 8 * 7
        {
            return;
        }
        self.consider_dense(facts.saturating_sub(self.len()));
        if self.is_dense() {
            return;
        }
        self.purge();
        let share = self.whole.capacity().div_ceil(SHARDS);
        let mut shards: Box<[Shard<T>]> =
            (0..SHARDS).map(|_| Shard::with_capacity(share)).collect();
        for (fact, stamp) in std::mem::take(&mut self.whole) {
            let hash = hash_of(&fact);
            shards[shard_of(hash)].insert_unique(hash, (fact, stamp), |(held, _)| hash_of(held));
        }
        self.shards = shards;
    }

    /// The stamp of `fact`, if held: read from the table, bitset or not (the facts whose
    /// stamps are asked for are mostly held, and then the bitset would only add a read),
    /// unless the table may hold its ghost.
    #[inline]
    pub fn get(&self, fact: &T) -> Option<&Stamp> {
        if let Some((place, bitset)) = self.dense_place(fact) {
            return bitset.test(place).then(|| &self.dense[place]);
        }
        if self.ghosts > 0 && self.cleared(fact) {
            return None;
        }
        self.find(fact)
    }

    /// [`FactMap::get`] for a fact that may well not be held: the bitset, if it places the
    /// fact, answers for one that is not (or is a ghost) without reading the tables.
    #[inline]
    pub fn get_maybe_absent(&self, fact: &T) -> Option<&Stamp> {
        if let Some((place, bitset)) = self.dense_place(fact) {
            return bitset.test(place).then(|| &self.dense[place]);
        }
        if self.bit(fact) == Some(false) {
            return None;
        }
        // Held if its bit is set, and no ghost lies outside the box.
        self.find(fact)
    }

    /// The entry of `fact` in its table, if any: a ghost's too, if it lies in the box.
    /// Always inlined: relations stored alike share this function, and with callers in
    /// many joins the inliner left it out of Andersen's (+6% instructions from scratch).
    #[inline(always)]
    fn find(&self, fact: &T) -> Option<&Stamp> {
        let hash = hash_of(fact);
        self.table(hash)
            .find(hash, |(held, _)| held == fact)
            .map(|(_, stamp)| stamp)
    }

    #[inline]
    pub fn get_mut(&mut self, fact: &T) -> Option<&mut Stamp> {
        if let Some((place, bitset)) = self.dense_place(fact) {
            return bitset.test(place).then(|| &mut self.dense[place]);
        }
        if self.ghosts > 0 && self.cleared(fact) {
            return None;
        }
        let hash = hash_of(fact);
        self.table_mut(hash)
            .find_mut(hash, |(held, _)| held == fact)
            .map(|(_, stamp)| stamp)
    }

    /// Where `fact` lies in the box of a dense map, with the bitset, if it is and does.
    #[inline]
    fn dense_place(&self, fact: &T) -> Option<(usize, &Bitset)> {
        if self.dense.is_empty() {
            return None;
        }
        let bitset = self.bitset.as_ref()?;
        bitset.place(fact).map(|place| (place, bitset))
    }

    /// Whether `fact` lies in the bitset's box with its bit clear: not held, and a ghost
    /// if a table holds it. Asked only while the map holds ghosts ([`Bitset::clears`] is
    /// out of line).
    #[inline]
    fn cleared(&self, fact: &T) -> bool {
        self.bitset
            .as_ref()
            .is_some_and(|bitset| bitset.clears(fact))
    }

    /// Whether `fact` is held: one bit of the bitset, if it has one that places the fact.
    #[inline]
    pub fn contains_key(&self, fact: &T) -> bool {
        match self.bit(fact) {
            Some(held) => held,
            // Not in the box: no ghost can be.
            None => self.find(fact).is_some(),
        }
    }

    /// The bitset, if the map has one and it holds every held fact (none lies outside its
    /// box): then it lists them, in order.
    pub fn bitset_of_all(&self) -> Option<&Bitset> {
        self.bitset.as_ref().filter(|bitset| bitset.outside() == 0)
    }

    /// How many table entries are ghosts.
    #[cfg(test)]
    pub fn ghost_count(&self) -> usize {
        self.ghosts
    }

    /// Whether the bitset holds `fact`, if there is one and its box places the fact.
    #[inline]
    fn bit(&self, fact: &T) -> Option<bool> {
        let bitset = self.bitset.as_ref()?;
        bitset.place(fact).map(|place| bitset.test(place))
    }

    /// Adds `fact` stamped `stamp` unless it is held; `on_new` sees a new fact before it is
    /// stored. Returns whether it was new.
    #[inline]
    pub fn insert_new(&mut self, fact: T, stamp: Stamp, on_new: impl FnOnce(&T)) -> bool {
        // A dense map's whole table holds only facts outside the box, and grows as it needs.
        if self.shards.is_empty() && self.whole.len() == self.whole.capacity() && !self.is_dense() {
            if self.ghosts > 0 {
                self.purge_to_spare_growth(0, 1);
            }
            // May turn the map dense instead.
            self.split_for(self.whole.len() + 1);
        }
        if let Some((place, _)) = self.dense_place(&fact) {
            let bitset = self.bitset.as_mut().expect("a dense map has a bitset");
            if bitset.test(place) {
                return false;
            }
            on_new(&fact);
            bitset.set(place);
            self.dense[place] = stamp;
            self.dense_len += 1;
            return true;
        }
        let hash = hash_of(&fact);
        // The fields, not `table_mut`: the bitset is written while the table is borrowed.
        let (table, at) = if self.shards.is_empty() {
            (&mut self.whole, 0)
        } else {
            let at = shard_of(hash);
            (&mut self.shards[at], at)
        };
        match table.entry(hash, |(held, _)| *held == fact, |(held, _)| hash_of(held)) {
            // Held, unless a ghost: tested here, and only while there are ghosts (tested
            // before the lookup, it cost maps that never meet one an instruction count that
            // shows: `BENCHMARKS.md`, *Design measurements*, "Ghost test").
            Entry::Occupied(mut entry) => {
                // `cleared`, spelled out: the table is borrowed.
                let ghost = self.ghosts > 0
                    && self
                        .bitset
                        .as_ref()
                        .is_some_and(|bitset| bitset.clears(&fact));
                if ghost {
                    on_new(&fact);
                    entry.get_mut().1 = stamp;
                    self.ghosts -= 1;
                    self.ghosts_by_table[at] -= 1;
                    if let Some(bitset) = &mut self.bitset {
                        bitset.insert(&fact);
                    }
                }
                ghost
            }
            Entry::Vacant(slot) => {
                on_new(&fact);
                if let Some(bitset) = &mut self.bitset {
                    bitset.insert(&fact);
                }
                slot.insert((fact, stamp));
                true
            }
        }
    }

    /// Takes `fact` out of the map; returns whether it was held.
    #[inline]
    pub fn remove(&mut self, fact: &T) -> bool {
        if let Some((place, _)) = self.dense_place(fact) {
            let bitset = self.bitset.as_mut().expect("a dense map has a bitset");
            if !bitset.test(place) {
                return false;
            }
            bitset.clear(place);
            self.dense_len -= 1;
            return true;
        }
        if self.ghosts > 0 && self.cleared(fact) {
            return false;
        }
        let hash = hash_of(fact);
        let Ok(held) = self
            .table_mut(hash)
            .find_entry(hash, |(held, _)| held == fact)
        else {
            return false;
        };
        held.remove();
        if let Some(bitset) = &mut self.bitset {
            bitset.remove(fact);
        }
        true
    }

    /// Takes `fact` out of the map, as [`FactMap::remove`] does, but a fact in the bitset's
    /// box only has its bit cleared, and stays in its table as a ghost (see [`FactMap`]).
    /// For removals after which the map's stamps are seldom read: while it holds ghosts,
    /// [`FactMap::get`] reads the bitset too, which slows alternative proofs, readers of a
    /// stamp per support they check (`BENCHMARKS.md`, *Design measurements*, "Ghosts and
    /// stamps").
    #[inline]
    pub fn bury(&mut self, fact: &T) -> bool {
        if !self.dense.is_empty() {
            return self.remove(fact);
        }
        let Some(bitset) = &mut self.bitset else {
            return self.remove(fact);
        };
        let Some(place) = bitset.place(fact) else {
            return self.remove(fact);
        };
        if !bitset.test(place) {
            return false;
        }
        bitset.clear(place);
        let at = if self.shards.is_empty() {
            0
        } else {
            shard_of(hash_of(fact))
        };
        self.ghosts += 1;
        self.ghosts_by_table[at] += 1;
        true
    }

    /// Purges the ghosts once they are more than a share of the facts (an eighth by
    /// default, [`Storage::ghost_share`]): after a batch of removals, so that their room
    /// stays bounded and the pass amortized.
    pub fn purge_if_many(&mut self) {
        let share = self.ghost_share;
        if share > 0 && self.ghosts > self.len() / share {
            self.purge();
        }
    }

    /// Takes every ghost out of the tables, in one pass over them.
    fn purge(&mut self) {
        for at in 0..SHARDS {
            self.purge_table(at);
        }
    }

    /// Takes the ghosts out of table `at`, in one pass over it.
    fn purge_table(&mut self, at: usize) {
        if self.ghosts_by_table[at] == 0 {
            return;
        }
        let table = match self.shards.get_mut(at) {
            Some(shard) => shard,
            None => &mut self.whole,
        };
        if let Some(bitset) = &self.bitset {
            table.retain(|(fact, _)| !bitset.clears(fact));
        }
        self.ghosts -= self.ghosts_by_table[at];
        self.ghosts_by_table[at] = 0;
    }

    /// The tables: the whole one, then the shards (only one of them holds facts).
    fn tables(&self) -> Tables<'_, T> {
        std::iter::once(&self.whole).chain(self.shards.iter())
    }

    pub fn len(&self) -> usize {
        self.tables().map(HashTable::len).sum::<usize>() - self.ghosts + self.dense_len
    }

    pub fn is_empty(&self) -> bool {
        if self.dense_len > 0 {
            false
        } else if self.ghosts == 0 {
            // Stops at the first table that holds a fact, where `len` sums them all.
            self.tables().all(HashTable::is_empty)
        } else {
            self.len() == 0
        }
    }

    pub fn capacity(&self) -> usize {
        self.tables().map(HashTable::capacity).sum()
    }

    /// Bytes of the tables (slots, control bytes, the shard headers) and the bitset, not
    /// counting heap memory the facts own.
    pub fn table_bytes(&self) -> usize {
        self.tables_only_bytes()
            + self.bitset.as_ref().map_or(0, Bitset::bytes)
            + self.dense.capacity() * std::mem::size_of::<Stamp>()
    }

    fn tables_only_bytes(&self) -> usize {
        let tables: usize = self.tables().map(HashTable::allocation_size).sum();
        tables + std::mem::size_of_val::<[Shard<T>]>(&self.shards)
    }

    /// Lets the map keep a [`Bitset`] of its facts: only for facts whose `Hash` writes each
    /// column as one integer and whose equality is that of those integers (see
    /// [`crate::Relation::with_bitset`]).
    pub fn allow_bitset(&mut self) {
        self.integer_columns = true;
    }

    /// Lets a map that may keep a bitset turn dense (see [`FactMap`]), rebuilding facts
    /// from their columns with `rebuild`, which must give back the fact whose `Hash`
    /// wrote those columns.
    pub fn allow_dense(&mut self, rebuild: Rebuild<T>) {
        self.rebuild = Some(rebuild);
    }

    /// Takes the storage settings the map's relation received.
    pub fn set_storage(&mut self, storage: Storage) {
        self.ghost_share = storage.ghost_share;
        self.dense_allowed = storage.dense;
    }

    /// How the map rebuilds a fact from its columns, if it may ([`FactMap::allow_dense`]).
    pub fn rebuild(&self) -> Option<Rebuild<T>> {
        self.rebuild
    }

    /// Whether the map is dense (see [`FactMap`]).
    pub fn is_dense(&self) -> bool {
        !self.dense.is_empty()
    }

    /// Empties a dense map, and gives its box and its array of stamps (whose values
    /// mean nothing once no bit is set) to a map about to hold about the same facts
    /// ([`FactMap::reserve_like`]); `None`, and the map left as it is, if it is not dense.
    pub fn take_dense(&mut self) -> Option<(Bitset, Vec<Stamp>)> {
        if !self.is_dense() {
            return None;
        }
        let mut bitset = self.bitset.take().expect("a dense map has a bitset");
        bitset.clear_all();
        let dense = std::mem::take(&mut self.dense);
        *self = FactMap {
            integer_columns: self.integer_columns,
            rebuild: self.rebuild,
            ghost_share: self.ghost_share,
            dense_allowed: self.dense_allowed,
            ..FactMap::default()
        };
        Some((bitset, dense))
    }

    /// Room for `additional` facts; or, for an empty map that may turn dense, given the box
    /// and stamps of a dense one ([`FactMap::take_dense`]), dense from the start over them.
    /// A recompute reserves the old map's room. Reserved as tables, the room of a dense
    /// map was larger than the dense map; and a freed array of stamps, the largest block a
    /// program frees, raised glibc's threshold for mapping blocks of their own (a freed
    /// mapped block's size, up to 32 MiB), so that the next materialization's round sets
    /// came from its heap and left it larger after each recompute, its live bytes the
    /// same. Measured: `BENCHMARKS.md`, *Design measurements*, "Dense room handed over".
    pub fn reserve_like(&mut self, additional: usize, dense: Option<(Bitset, Vec<Stamp>)>) {
        match dense {
            Some((bitset, dense))
                if self.is_empty()
                    && self.rebuild.is_some()
                    && self.integer_columns
                    && self.dense_allowed =>
            {
                self.dense = dense;
                self.dense_len = 0;
                self.bitset_tried_at = additional;
                self.bitset = Some(bitset);
            }
            _ => self.reserve(additional),
        }
    }

    /// Turns the map dense if its bitset holds every fact and the stamps of the box would
    /// take no more than the tables take, or, if `additional` more facts grow them, twice
    /// what they will take then (the growth doubles them, or splits them into shards of
    /// about as much room; a map that grows once mostly grows on). Before they grow, so
    /// that the tables and their successors are never held beside the stamps; the facts
    /// move table by table, each table freed once emptied. Turning dense in place of a
    /// split, rather than beside the shards, keeps the peak below the tables' own.
    /// Measured: `BENCHMARKS.md`, *Design measurements*, "Dense in place of a split".
    fn consider_dense(&mut self, additional: usize) {
        let (Some(_), Some(bitset)) = (self.rebuild, self.bitset_of_all()) else {
            return;
        };
        if !self.dense.is_empty() || !self.dense_allowed {
            return;
        }
        let bytes = bitset.points() * std::mem::size_of::<Stamp>();
        let tables = self.tables_only_bytes();
        let grows = self.len() + additional > self.capacity();
        let tables_then = if grows { 4 * tables } else { tables };
        if bytes > tables_then.max(DENSE_MIN_BYTES) {
            return;
        }
        // Zeroed pages are mapped as they are first written: the points no fact reaches
        // cost nothing.
        let mut dense = vec![0; bitset.points()];
        let bitset = self.bitset.as_ref().expect("checked above");
        let mut held = 0;
        let tables = std::iter::once(std::mem::take(&mut self.whole))
            .chain(std::mem::take(&mut self.shards).into_vec());
        for table in tables {
            for (fact, stamp) in table {
                let place = bitset.place(&fact).expect("the bitset holds every fact");
                // A ghost's bit is clear: it goes.
                if bitset.test(place) {
                    dense[place] = stamp;
                    held += 1;
                }
            }
        }
        self.dense = dense;
        self.dense_len = held;
        self.ghosts = 0;
        self.ghosts_by_table = [0; SHARDS];
    }

    /// Builds a bitset of the facts if the box of their values takes at most half the
    /// tables' bytes ([`BITSET_BUDGET_SHARE`]); or a wider one, once facts outside the box
    /// are held. A bitset pays off once the tables outgrow the cache (`large_from_bytes`
    /// bytes of facts, [`Storage::large_from_bytes`]), and is built from a
    /// sixteenth of that ([`BITSET_FROM_SHARE`]): a build reads every fact twice, fewer
    /// facts then, and the bits of later ones are set as they arrive. Tries again only
    /// once the map has doubled since it last tried and the budget has room for the box
    /// it last found too large.
    pub fn consider_bitset(&mut self, large_from_bytes: usize) {
        if !self.integer_columns || !self.dense.is_empty() {
            return;
        }
        if self.bitset.as_ref().is_some_and(|b| b.outside() == 0) {
            self.consider_dense(0);
            return;
        }
        let len = self.len();
        if len == 0
            || len < 2 * self.bitset_tried_at
            || len * std::mem::size_of::<(T, Stamp)>() < large_from_bytes / BITSET_FROM_SHARE
        {
            return;
        }
        let budget = self.tables_only_bytes() / BITSET_BUDGET_SHARE;
        if budget < self.bitset_wanted {
            return;
        }
        self.bitset_tried_at = len;
        // The new box decides anew which entries are ghosts: none may be left.
        self.purge();
        // Table by table, not through `keys`: its function pointer is called per fact.
        let tables = || {
            self.tables()
                .map(|table| table.iter().map(|(fact, _)| fact))
        };
        match Bitset::build(tables, budget) {
            Ok(bitset) => {
                self.bitset = Some(bitset);
                self.consider_dense(0);
            }
            // A wider box that does not fit leaves the narrower one in place.
            Err(NoBitset::TooLarge { bytes }) => self.bitset_wanted = bytes,
            Err(NoBitset::Unplaceable) => self.integer_columns = false,
            Err(NoBitset::Empty) => {}
        }
    }

    /// Room for `additional` more facts: in the whole table (splitting it first if they
    /// would grow it past [`LARGEST_WHOLE`]), or spread evenly over the shards (a shard
    /// that gets more grows).
    pub fn reserve(&mut self, additional: usize) {
        if self.dense.is_empty() && self.bitset.is_some() {
            self.consider_dense(additional);
        }
        // A dense map's new facts are mostly in its box, and its tables grow as they need.
        if !self.dense.is_empty() {
            return;
        }
        if self.ghosts > 0 {
            let (tables, each) = if self.shards.is_empty() {
                (1, additional)
            } else {
                (SHARDS, additional.div_ceil(SHARDS))
            };
            for at in 0..tables {
                self.purge_to_spare_growth(at, each);
            }
        }
        self.split_for(self.len() + additional);
        if self.shards.is_empty() {
            self.whole.reserve(additional, |(held, _)| hash_of(held));
        }
        let each = additional.div_ceil(SHARDS);
        for shard in self.shards.iter_mut() {
            shard.reserve(each, |(held, _)| hash_of(held));
        }
    }

    pub fn shrink_to_fit(&mut self) {
        self.purge();
        self.whole.shrink_to_fit(|(held, _)| hash_of(held));
        for shard in self.shards.iter_mut() {
            shard.shrink_to_fit(|(held, _)| hash_of(held));
        }
    }

    /// Up to `n` facts, spread over the map, the same in every run: for a dense map, those
    /// at the points of its box that a Weyl sequence visits (a step of an odd multiple of
    /// the golden ratio, a permutation of the box's 2^k points), up to 64 points a fact,
    /// then those of its tables with the smallest [`FixedHasher`] hashes; else those. The box's own
    /// order, the facts sorted, took every fact of a sample from its first few values
    /// (linear closure: all of them paths from node 0), and skewed what
    /// [`crate::Strategy::Auto`] concluded from it.
    pub fn sample(&self, n: usize) -> Vec<Cow<'_, T>> {
        let mut sample = Vec::with_capacity(n);
        if let (Some(bitset), Some(rebuild), true) = (&self.bitset, self.rebuild, self.is_dense()) {
            let points = bitset.points();
            let step = (0x9E37_79B9_7F4A_7C15_u64 as usize) | 1;
            let mut columns = [0; MAX_COLUMNS];
            let mut place = 0usize;
            for _ in 0..points.min(n.saturating_mul(64)) {
                if sample.len() == n {
                    break;
                }
                if bitset.test(place) {
                    let fact = rebuild(bitset.columns_at(place, &mut columns));
                    sample.push(Cow::Owned(fact.expect("a fact in the box rebuilds")));
                }
                place = place.wrapping_add(step) & (points - 1);
            }
        }
        let missing = n - sample.len();
        if missing == 0 {
            return sample;
        }
        // The smallest under a fixed hash: the tables' own order follows the process's
        // hash key, and a sample must be the same in every run.
        let mut smallest: BinaryHeap<(u64, &T)> = BinaryHeap::with_capacity(missing + 1);
        let facts = self
            .tables()
            .flat_map(HashTable::iter)
            .filter(|(fact, _)| self.ghosts == 0 || !self.cleared(fact));
        for (fact, _) in facts {
            let entry = (fixed_hash(fact), fact);
            // Once full, most facts hash above the largest kept: no heap work for them.
            if smallest.len() == missing && smallest.peek().is_some_and(|largest| entry >= *largest)
            {
                continue;
            }
            smallest.push(entry);
            if smallest.len() > missing {
                smallest.pop();
            }
        }
        sample.extend(
            smallest
                .into_sorted_vec()
                .into_iter()
                .map(|(_, fact)| Cow::Borrowed(fact)),
        );
        sample
    }
}
