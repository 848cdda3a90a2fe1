//! A relation's held facts and their stamps: one hash table while it is small, then
//! shards, so that growing never holds two copies of a large table; or, for facts of small
//! integers whose box of values they fill well enough, a bit and a stamp per point of it.

use std::borrow::Cow;
use std::hash::{BuildHasher, BuildHasherDefault, Hash};

use hashbrown::hash_table::{Entry, HashTable};

use crate::bitset::{Bitset, NoBitset, Places, MAX_COLUMNS};
use crate::fact::{FactHasher, Stamp, Tuple};
use crate::settings::Storage;

/// How many shards a large map has. A hash table grows by moving into one twice its size,
/// and both are held until the move ends: for a map of millions of facts that copy was the
/// memory peak of a materialization (linear closure, 5.9 M facts: the 54 MiB table and its
/// 109 MiB successor at once). Shards grow one at a time, so the peak holds one shard's two
/// copies; each move also fits in the cache.
const SHARDS: usize = 16;

/// The largest table (in buckets) a map keeps whole; growing past it splits the map into
/// [`SHARDS`] shards, so a split holds at most 2^19 + 2^20 buckets at once (20 MiB for a
/// pair of `u32`). Up to it, one table is faster than shards: a shard's table is read from
/// an array at a place the fact's hash picks, one more load between the hash and the slot,
/// where the whole table is a field (see [`FactMap::table`]). Shards → whole, least user
/// time of 8 runs each, alternated (`benches/examples/profile.rs`, from scratch):
/// non-linear closure on a random graph 1.75 → 1.37 s, on a chain 1.91 → 1.37 s, Andersen
/// 1.01 → 0.80 s (7.7% fewer instructions, the same cache misses: cachegrind); non-linear
/// random, one edge deleted by alternative proofs, fastest of 100: 1.22 → 0.69 ms
/// (`profile_update 0 altproof 1 100`). Maps past it, as before: same-generation and linear
/// closure on a random graph unchanged.
const LARGEST_WHOLE: usize = 1 << 19;

/// Which bits of a fact's hash choose its shard: above those a shard's table uses for its
/// slot (the low bits) and below its tag (the top seven), so that facts in one shard still
/// spread over all its slots and tags; and among [`FactHasher`]'s well-mixed bits (its
/// state's high half, rotated: a product's low bits see only its factors' low bits).
const SHARD_SHIFT: u32 = 52;

/// The most bytes a dense map's stamps may take whatever its tables take, so that small
/// relations (tests') can be dense too; a relation only considers it once it is large
/// ([`FactMap::consider_bitset`]).
const DENSE_MIN_BYTES: usize = 1 << 12;

/// From which share of the size at which tables outgrow the cache
/// ([`crate::settings::Storage::large_from_bytes`]) a map considers a bitset. Rounds grow by
/// several times at once, and the round after a bitset's build is the one whose head tests
/// read it: from an eighth (1 MiB of facts), non-linear closure on a random graph built
/// its bitset after its largest round (52,506 → 218,092 facts), Andersen after its own
/// (94,902 → 216,093), both testing those rounds' heads against tables of 2^16–2^17
/// buckets that missed the cache; from a sixteenth, both before (Andersen's with
/// [`BITSET_BUDGET_SHARE`]'s half; its recompute after 10 deletions enters that round
/// with 85 k facts, under an eighth). From scratch, task-clock (`perf stat -r 3
/// examples/profile <w>`): non-linear random 608 → 376 ms (its largest round 411 → 190
/// ms), Andersen 407 → 286 ms; the other workloads unchanged; peak resident sets from
/// scratch within 3% (`peak_memory dred <w> 10`). Andersen's 10 deletions by
/// [`crate::Strategy::Auto`], which recomputes: 464 → 304 ms (`profile_update 6 auto 10
/// 5`).
const BITSET_FROM_SHARE: usize = 16;

/// A bitset may take up to the tables' bytes divided by this. Andersen's box (2^22
/// points, 512 KiB) is a third of its tables at 92 k facts; under a quarter it waited for
/// 213 k facts, after its largest round. Its bitset is built either way: peak resident
/// set from scratch 19.5 → 20.0 MiB (`peak_memory dred 6 0`, three runs each).
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

#[inline]
fn hash_of<T: Tuple>(fact: &T) -> u64 {
    BuildHasherDefault::<FactHasher>::default().hash_one(fact)
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
    /// The shards get room for an even share and an eighth.
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
        let share = facts.div_ceil(SHARDS);
        let mut shards: Box<[Shard<T>]> = (0..SHARDS)
            .map(|_| Shard::with_capacity(share + share / 8))
            .collect();
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
    #[inline]
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
            // before the lookup, it cost linear closure on a chain from scratch, which never
            // meets one, 1.7% more instructions).
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
    /// [`FactMap::get`] reads the bitset too (alternative proofs, which read a stamp per
    /// support they check, took 10-24% longer on linear closure's 10 deletions when their
    /// retired facts were ghosts, `profile_update 1 altproof 10 5`).
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
    /// map was larger than the dense map (linear closure on a random graph: 109 MiB of
    /// tables for 93 MiB of dense stamps and indexes); and a freed array of stamps, the
    /// largest block a program frees, raised glibc's threshold for mapping blocks of their
    /// own (a freed mapped block's size, up to 32 MiB), so that the next materialization's
    /// round sets came from its heap and left it larger after each recompute (linear
    /// closure on a chain, peak resident set over 10 pairs of 1-fact updates, 5 of them
    /// recomputes: 25.2 → 39.7 MiB, with the heap's live bytes the same).
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
    /// move table by table, each table freed once emptied. Same-generation from scratch,
    /// whose stamps (16 MiB) were twice its whole table when it split: turned dense at its
    /// shards' first growth (the stamps at most twice the tables then), beside the shards,
    /// its peak resident set was 54.4 MiB; in place of the split, 41.2 (the tables alone:
    /// 42.5; `peak_memory dred 5`).
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

    /// Up to `n` facts, spread over the map: for a dense map, those at the points of its box
    /// that a Weyl sequence visits (a step of an odd multiple of the golden ratio, a
    /// permutation of the box's 2^k points), up to 64 points a fact, then the first of its
    /// tables; else the first of its tables, whose order is their hashes'. The box's own
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
        sample.extend(
            self.tables()
                .flat_map(HashTable::iter)
                .filter(|(fact, _)| self.ghosts == 0 || !self.cleared(fact))
                .map(|(fact, _)| Cow::Borrowed(fact))
                .take(missing),
        );
        sample
    }

    /// The facts, table by table, then those of a dense map's box, rebuilt.
    pub fn keys(&self) -> Keys<'_, T> {
        let fact: fn((Cow<'_, T>, Stamp)) -> Cow<'_, T> = |(fact, _)| fact;
        self.entries().map(fact)
    }

    /// The facts with their stamps, table by table, then those of a dense map's box.
    pub fn entries(&self) -> Entries<'_, T> {
        let mut tables = self.tables();
        let current = tables.next().map(HashTable::iter);
        let in_box = match (&self.bitset, self.rebuild) {
            (Some(bitset), Some(rebuild)) if !self.dense.is_empty() => Some(InBox {
                places: bitset.places(),
                bitset,
                stamps: &self.dense,
                rebuild,
            }),
            _ => None,
        };
        Entries {
            left: self.len(),
            current,
            tables,
            ghosts_in: self.bitset.as_ref().filter(|_| self.ghosts > 0),
            in_box,
        }
    }
}

/// The iterator of [`FactMap::keys`].
pub(crate) type Keys<'a, T> = std::iter::Map<Entries<'a, T>, fn((Cow<'a, T>, Stamp)) -> Cow<'a, T>>;

/// The facts of a dense map's box, as [`Entries`] walks them.
#[derive(Clone)]
pub(crate) struct InBox<'a, T> {
    places: Places<'a>,
    bitset: &'a Bitset,
    stamps: &'a [Stamp],
    rebuild: Rebuild<T>,
}

/// The iterator of [`FactMap::entries`]: knows its length, as a scan's work count needs.
#[derive(Clone)]
pub(crate) struct Entries<'a, T> {
    left: usize,
    current: Option<hashbrown::hash_table::Iter<'a, (T, Stamp)>>,
    tables: Tables<'a, T>,
    /// The bitset that tells ghosts, while the tables hold any.
    ghosts_in: Option<&'a Bitset>,
    /// A dense map's box, walked after the tables.
    in_box: Option<InBox<'a, T>>,
}

impl<'a, T: Clone + Hash> Iterator for Entries<'a, T> {
    type Item = (Cow<'a, T>, Stamp);

    // Always inlined: walking the tables is the inner loop of an index build, and with the
    // ghost test the compiler stopped inlining it there (linear closure on a chain from
    // scratch: 10% more instructions).
    #[inline(always)]
    fn next(&mut self) -> Option<(Cow<'a, T>, Stamp)> {
        loop {
            let Some(current) = self.current.as_mut() else {
                return self.next_in_box();
            };
            if let Some((fact, stamp)) = current.next() {
                if self.ghosts_in.is_some_and(|bitset| bitset.clears(fact)) {
                    continue;
                }
                self.left -= 1;
                return Some((Cow::Borrowed(fact), *stamp));
            }
            self.current = self.tables.next().map(HashTable::iter);
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<'a, T: Clone + Hash> Entries<'a, T> {
    /// The next fact of a dense map's box, rebuilt, once the tables are walked.
    #[inline]
    fn next_in_box(&mut self) -> Option<(Cow<'a, T>, Stamp)> {
        let in_box = self.in_box.as_mut()?;
        let place = in_box.places.next()?;
        let mut columns = [0; MAX_COLUMNS];
        let columns = in_box.bitset.columns_at(place, &mut columns);
        let fact = (in_box.rebuild)(columns).expect("a fact in the box rebuilds");
        self.left -= 1;
        Some((Cow::Owned(fact), in_box.stamps[place]))
    }
}

impl<T: Clone + Hash> ExactSizeIterator for Entries<'_, T> {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every fact of `map` is found under its own stamp, and iterated once.
    fn assert_consistent(map: &FactMap<(u32, u32)>, len: usize) {
        assert_eq!(map.len(), len);
        let keys = map.keys();
        assert_eq!(keys.len(), len);
        assert!(map
            .entries()
            .all(|(fact, stamp)| map.get(&fact) == Some(&stamp)));
        let mut seen: Vec<_> = keys.map(Cow::into_owned).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), len);
    }

    #[test]
    fn a_small_map_stays_whole() {
        let mut map: FactMap<(u32, u32)> = FactMap::default();
        for a in 0..100u32 {
            assert!(map.insert_new((a, a + 1), a, |_| {}));
        }
        assert!(!map.insert_new((3, 4), 9, |_| panic!("held")));
        assert!(map.shards.is_empty());
        assert_eq!(map.get(&(7, 8)), Some(&7));
        *map.get_mut(&(7, 8)).unwrap() = 9;
        assert!(map.remove(&(7, 8)) && !map.remove(&(7, 8)));
        assert!(!map.contains_key(&(7, 8)));
        assert_consistent(&map, 99);
    }

    #[test]
    fn a_bitset_answers_for_the_facts_in_its_box_and_widens_once_the_map_doubles() {
        let mut map: FactMap<(u32, u32)> = FactMap::default();
        map.allow_bitset();
        for a in 0..8u32 {
            map.insert_new((a, a + 1), 0, |_| {});
        }
        map.consider_bitset(0);
        assert!(map.bitset.is_some());
        // Column 0 spans 3 bits (largest 7), column 1 four (largest 8): (9, 2) lies
        // outside, and only the table answers for it.
        map.insert_new((9, 2), 0, |_| {});
        assert_eq!(map.bitset.as_ref().map(Bitset::outside), Some(1));
        assert!(map.contains_key(&(9, 2)) && map.contains_key(&(3, 4)));
        assert!(!map.contains_key(&(4, 3)) && !map.contains_key(&(9, 3)));
        assert!(map.remove(&(3, 4)));
        assert!(!map.contains_key(&(3, 4)));
        // Not yet twice the 8 facts it was built of: the same box.
        map.consider_bitset(0);
        assert_eq!(map.bitset.as_ref().map(Bitset::outside), Some(1));
        for a in 20..30u32 {
            map.insert_new((a, a), 0, |_| {});
        }
        map.consider_bitset(0);
        assert_eq!(map.bitset.as_ref().map(Bitset::outside), Some(0));
        assert!(map.contains_key(&(9, 2)) && map.contains_key(&(25, 25)));
        assert!(!map.contains_key(&(3, 4)) && !map.contains_key(&(25, 24)));
        assert_consistent(&map, 18);
    }

    /// How many entries the tables hold, ghosts included.
    fn entries_stored(map: &FactMap<(u32, u32)>) -> usize {
        map.tables().map(HashTable::len).sum()
    }

    #[test]
    fn a_fact_buried_in_the_box_leaves_a_ghost_that_is_never_seen_and_revives_in_place() {
        let mut map: FactMap<(u32, u32)> = FactMap::default();
        map.allow_bitset();
        for a in 0..64u32 {
            map.insert_new((a, a % 8), a, |_| {});
        }
        map.consider_bitset(0);
        assert!(map.bury(&(5, 5)) && !map.bury(&(5, 5)));
        assert_eq!((map.ghosts, entries_stored(&map)), (1, 64));
        assert!(!map.contains_key(&(5, 5)) && map.get(&(5, 5)).is_none());
        assert!(map.get_mut(&(5, 5)).is_none());
        assert!(map.keys().all(|fact| *fact != (5, 5)));
        assert_consistent(&map, 63);
        // Revived with its new stamp, as a new fact.
        let mut told = None;
        assert!(map.insert_new((5, 5), 99, |fact| told = Some(*fact)));
        assert_eq!(
            (told, map.get(&(5, 5)), map.ghosts),
            (Some((5, 5)), Some(&99), 0)
        );
        assert!(!map.insert_new((5, 5), 7, |_| panic!("held")));
        assert_consistent(&map, 64);
        // Up to an eighth of the facts, ghosts wait; past it, they are purged.
        for a in 0..7u32 {
            assert!(map.bury(&(a, a % 8)));
        }
        map.purge_if_many();
        assert_eq!((map.ghosts, entries_stored(&map)), (7, 64));
        assert!(map.bury(&(7, 7)));
        map.purge_if_many();
        assert_eq!((map.ghosts, entries_stored(&map)), (0, 56));
        assert_consistent(&map, 56);
        assert!((0..8u32).all(|a| !map.contains_key(&(a, a % 8)) && map.get(&(a, a % 8)).is_none()));
    }

    #[test]
    fn ghosts_are_purged_before_a_table_would_grow_or_shrink_or_a_bitset_is_rebuilt() {
        let mut map: FactMap<(u32, u32)> = FactMap::default();
        map.allow_bitset();
        for a in 0..100u32 {
            map.insert_new((a, 1), 0, |_| {});
        }
        map.consider_bitset(0);
        let (capacity, bytes) = (map.capacity(), map.tables_only_bytes());
        // Ghosts fill the table's room: inserting more purges rather than grows.
        for a in 0..10u32 {
            map.bury(&(a, 1));
        }
        let room = capacity - entries_stored(&map);
        map.reserve(room + 1);
        assert_eq!((map.ghosts, map.tables_only_bytes()), (0, bytes));
        for a in 0..10u32 {
            map.bury(&(a, 1));
        }
        map.shrink_to_fit();
        assert_eq!((map.ghosts, entries_stored(&map)), (0, 90));
        // A fact outside the box makes a doubled map build a wider box, of held facts only.
        map.bury(&(50, 1));
        map.insert_new((1000, 1), 0, |_| {});
        for a in 200..320u32 {
            map.insert_new((a, 1), 0, |_| {});
        }
        map.consider_bitset(0);
        assert_eq!(map.bitset.as_ref().map(Bitset::outside), Some(0));
        assert_eq!(map.ghosts, 0);
        assert!(!map.contains_key(&(50, 1)) && map.contains_key(&(1000, 1)));
        assert_consistent(&map, 210);
    }

    #[test]
    fn a_map_of_facts_that_are_not_integers_keeps_no_bitset() {
        let mut map: FactMap<(u32, &str)> = FactMap::default();
        map.allow_bitset();
        map.insert_new((1, "a"), 0, |_| {});
        map.consider_bitset(0);
        assert!(map.bitset.is_none() && map.contains_key(&(1, "a")));
    }

    #[test]
    fn a_map_growing_past_the_largest_whole_table_splits_and_keeps_its_facts() {
        let facts = LARGEST_WHOLE as u32;
        // One by one: the insertion that would grow the whole table splits it.
        let mut one_by_one: FactMap<(u32, u32)> = FactMap::default();
        for a in 0..facts {
            one_by_one.insert_new((a, a % 7), a, |_| {});
        }
        // Reserved ahead, as a round's insertion does.
        let mut reserved: FactMap<(u32, u32)> = FactMap::default();
        reserved.reserve(facts as usize);
        for a in 0..facts {
            reserved.insert_new((a, a % 7), a, |_| {});
        }
        for map in [&mut one_by_one, &mut reserved] {
            assert!(map.whole.is_empty());
            assert_eq!(map.shards.len(), SHARDS);
            assert!(map.shards.iter().all(|shard| !shard.is_empty()));
            assert_consistent(map, facts as usize);
            assert!(map.remove(&(12, 12 % 7)));
            assert!(!map.insert_new((13, 13 % 7), 0, |_| panic!("held")));
            assert_consistent(map, facts as usize - 1);
        }
    }

    fn pair_of_columns(columns: &[u64]) -> Option<(u32, u32)> {
        Some((columns[0] as u32, columns[1] as u32))
    }

    fn dense_ready() -> FactMap<(u32, u32)> {
        let mut map = FactMap::default();
        map.allow_bitset();
        map.allow_dense(pair_of_columns);
        map
    }

    #[test]
    fn a_dense_map_keeps_its_box_as_bits_and_stamps_and_what_lies_outside_in_its_table() {
        let mut map = dense_ready();
        let held = |a: u32, b: u32| (a + b) % 3 != 0;
        let mut len = 0;
        for a in 0..8u32 {
            for b in (0..8u32).filter(|&b| held(a, b)) {
                map.insert_new((a, b), a * 8 + b, |_| {});
                len += 1;
            }
        }
        map.consider_bitset(0);
        assert!(map.is_dense());
        assert_eq!(entries_stored(&map), 0);
        assert_consistent(&map, len);
        assert_eq!(map.get(&(1, 1)), Some(&9));
        assert!(map.get(&(0, 0)).is_none() && !map.contains_key(&(1, 2)));
        *map.get_mut(&(1, 1)).unwrap() = 70;
        assert_eq!(map.get_maybe_absent(&(1, 1)), Some(&70));
        assert!(!map.insert_new((1, 1), 0, |_| panic!("held")));
        assert!(map.insert_new((0, 0), 5, |_| {}));
        assert_eq!(map.get(&(0, 0)), Some(&5));
        // Buried or removed, a fact of the box just loses its bit.
        assert!(map.bury(&(0, 0)) && !map.contains_key(&(0, 0)) && !map.remove(&(0, 0)));
        assert!(map.remove(&(1, 1)) && map.get_mut(&(1, 1)).is_none());
        assert_eq!(map.ghosts, 0);
        // Outside the box: in the table, and the box never widens.
        assert!(map.insert_new((9, 1), 3, |_| {}));
        assert_eq!((entries_stored(&map), map.get(&(9, 1))), (1, Some(&3)));
        for a in 20..40u32 {
            map.insert_new((a, a), 0, |_| {});
        }
        map.consider_bitset(0);
        assert!(map.is_dense());
        assert_eq!(map.bitset.as_ref().map(Bitset::outside), Some(21));
        assert_consistent(&map, len - 1 + 21);
    }

    #[test]
    fn a_dense_maps_box_and_stamps_go_to_the_next_map_which_sees_none_of_its_facts() {
        let mut map = dense_ready();
        for a in 0..16u32 {
            map.insert_new((a, 15 - a), a, |_| {});
        }
        map.consider_bitset(0);
        let dense = map.take_dense();
        assert!(dense.is_some() && map.is_empty() && !map.is_dense());
        assert!(map.take_dense().is_none());
        let mut next = dense_ready();
        next.reserve_like(16, dense);
        assert!(next.is_dense() && next.is_empty());
        assert!(next.get(&(3, 12)).is_none() && next.entries().next().is_none());
        assert!(next.insert_new((3, 12), 40, |_| {}));
        assert_eq!(next.get(&(3, 12)), Some(&40));
        assert_consistent(&next, 1);
        // Without a dense map's room, as many facts' room in the tables.
        let mut tables = dense_ready();
        tables.reserve_like(100, None);
        assert!(!tables.is_dense() && tables.capacity() >= 100);
    }

    #[test]
    fn a_map_whose_box_is_dense_enough_turns_dense_in_place_of_splitting() {
        let mut map = dense_ready();
        // The box's far corner first, then an eighth of the facts: the bitset holds them
        // all, but its 2^19 points, 2 MiB of stamps, are more than the whole table.
        map.insert_new((1023, 511), 1023, |_| {});
        let facts = |rows: std::ops::Range<u32>| {
            (0..1024u32).flat_map(move |a| rows.clone().map(move |b| (a, b)))
        };
        for (a, b) in facts(0..64) {
            map.insert_new((a, b), a, |_| {});
        }
        map.consider_bitset(0);
        assert_eq!(map.bitset.as_ref().map(Bitset::outside), Some(0));
        assert!(!map.is_dense());
        // Till the insertion that would split the whole table.
        for (a, b) in facts(64..512) {
            map.insert_new((a, b), a, |_| {});
        }
        assert!(map.is_dense() && map.shards.is_empty());
        assert_eq!(map.get(&(700, 3)), Some(&700));
        assert_consistent(&map, 1024 * 512);
    }

    #[test]
    fn a_sample_of_a_dense_map_is_spread_over_its_box_and_a_tables_is_its_first_facts() {
        let mut map = dense_ready();
        for a in 0..64u32 {
            for b in 0..64u32 {
                map.insert_new((a, b), 0, |_| {});
            }
        }
        map.consider_bitset(0);
        assert!(map.is_dense());
        let sample = map.sample(32);
        let mut firsts: Vec<u32> = sample.iter().map(|fact| fact.0).collect();
        firsts.sort_unstable();
        firsts.dedup();
        // Sorted, the first 32 facts would all begin with 0.
        assert!(firsts.len() >= 24, "{firsts:?}");
        let mut distinct: Vec<(u32, u32)> = sample.iter().map(|fact| **fact).collect();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 32);
        // Facts outside the box fill what the box does not give.
        map.insert_new((100, 100), 0, |_| {});
        assert_eq!(map.sample(5000).len(), 4097);
        let mut tables = FactMap::default();
        for a in 0..100u32 {
            tables.insert_new((a, a), 0, |_| {});
        }
        let first: Vec<(u32, u32)> = tables.keys().take(10).map(|fact| *fact).collect();
        let sampled: Vec<(u32, u32)> = tables.sample(10).iter().map(|fact| **fact).collect();
        assert_eq!(sampled, first);
    }
}
