//! A relation's held facts and their stamps, in shards, so that growing never holds two
//! copies of the whole table.

use std::hash::{BuildHasher, BuildHasherDefault};

use hashbrown::hash_table::{Entry, HashTable};

use crate::relation::{FactHasher, Stamp, Tuple};

/// How many shards a map has. A hash table grows by moving into one twice its size, and
/// both are held until the move ends: for a map of millions of facts that copy was the
/// memory peak of a materialization (linear closure, 5.9 M facts: the 54 MiB table and
/// its 109 MiB successor at once). Shards grow one at a time, so the peak holds one
/// shard's two copies; each move also fits in the cache.
const SHARDS: usize = 16;

/// Which bits of a fact's hash choose its shard: above those a shard's table uses for its
/// slot (the low bits) and below its tag (the top seven), so that facts in one shard still
/// spread over all its slots and tags; and among [`FactHasher`]'s well-mixed bits (its
/// state's high half, rotated: a product's low bits see only its factors' low bits).
const SHARD_SHIFT: u32 = 52;

type Shard<T> = HashTable<(T, Stamp)>;

#[inline]
fn hash_of<T: Tuple>(fact: &T) -> u64 {
    BuildHasherDefault::<FactHasher>::default().hash_one(fact)
}

/// Fact → stamp, split over [`SHARDS`] hash tables by a few bits of the fact's hash; the
/// shard's table is given the same hash, so a fact is hashed once per operation.
///
/// Invariant: a fact is only ever in the shard its hash names, stored under that hash.
#[derive(Clone)]
pub(crate) struct FactMap<T> {
    shards: Box<[Shard<T>]>,
}

impl<T: Tuple> Default for FactMap<T> {
    fn default() -> Self {
        FactMap {
            shards: (0..SHARDS).map(|_| Shard::new()).collect(),
        }
    }
}

impl<T: Tuple> FactMap<T> {
    #[inline]
    fn locate(&self, fact: &T) -> (usize, u64) {
        let hash = hash_of(fact);
        ((hash >> SHARD_SHIFT) as usize % SHARDS, hash)
    }

    #[inline]
    pub fn get(&self, fact: &T) -> Option<&Stamp> {
        let (shard, hash) = self.locate(fact);
        self.shards[shard]
            .find(hash, |(held, _)| held == fact)
            .map(|(_, stamp)| stamp)
    }

    #[inline]
    pub fn get_mut(&mut self, fact: &T) -> Option<&mut Stamp> {
        let (shard, hash) = self.locate(fact);
        self.shards[shard]
            .find_mut(hash, |(held, _)| held == fact)
            .map(|(_, stamp)| stamp)
    }

    #[inline]
    pub fn contains_key(&self, fact: &T) -> bool {
        self.get(fact).is_some()
    }

    /// Adds `fact` stamped `stamp` unless it is held; `on_new` sees a new fact before it is
    /// stored. Returns whether it was new.
    #[inline]
    pub fn insert_new(&mut self, fact: T, stamp: Stamp, on_new: impl FnOnce(&T)) -> bool {
        let (shard, hash) = self.locate(&fact);
        match self.shards[shard].entry(hash, |(held, _)| *held == fact, |(held, _)| hash_of(held)) {
            Entry::Occupied(_) => false,
            Entry::Vacant(slot) => {
                on_new(&fact);
                slot.insert((fact, stamp));
                true
            }
        }
    }

    #[inline]
    pub fn remove(&mut self, fact: &T) -> Option<Stamp> {
        let (shard, hash) = self.locate(fact);
        let held = self.shards[shard]
            .find_entry(hash, |(held, _)| held == fact)
            .ok()?;
        let ((_, stamp), _) = held.remove();
        Some(stamp)
    }

    pub fn len(&self) -> usize {
        self.shards.iter().map(HashTable::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.shards.iter().all(HashTable::is_empty)
    }

    pub fn capacity(&self) -> usize {
        self.shards.iter().map(HashTable::capacity).sum()
    }

    /// Bytes of the shards' tables (slots, control bytes, the shard headers), not counting
    /// heap memory the facts own.
    pub fn table_bytes(&self) -> usize {
        let tables: usize = self.shards.iter().map(HashTable::allocation_size).sum();
        tables + std::mem::size_of_val::<[Shard<T>]>(&self.shards)
    }

    /// Room for `additional` more facts, spread evenly (a shard that gets more grows).
    pub fn reserve(&mut self, additional: usize) {
        let each = additional.div_ceil(SHARDS);
        for shard in self.shards.iter_mut() {
            shard.reserve(each, |(held, _)| hash_of(held));
        }
    }

    pub fn shrink_to_fit(&mut self) {
        for shard in self.shards.iter_mut() {
            shard.shrink_to_fit(|(held, _)| hash_of(held));
        }
    }

    /// The facts, shard by shard.
    pub fn keys(&self) -> Keys<'_, T> {
        let fact: fn((&T, Stamp)) -> &T = |(fact, _)| fact;
        self.entries().map(fact)
    }

    /// The facts with their stamps, shard by shard.
    pub fn entries(&self) -> Entries<'_, T> {
        let mut shards = self.shards.iter();
        let current = shards.next().map(HashTable::iter);
        Entries {
            left: self.len(),
            current,
            shards,
        }
    }
}

/// The iterator of [`FactMap::keys`].
pub(crate) type Keys<'a, T> = std::iter::Map<Entries<'a, T>, fn((&'a T, Stamp)) -> &'a T>;

/// The iterator of [`FactMap::entries`]: knows its length, as a scan's work count needs.
#[derive(Clone)]
pub(crate) struct Entries<'a, T> {
    left: usize,
    current: Option<hashbrown::hash_table::Iter<'a, (T, Stamp)>>,
    shards: std::slice::Iter<'a, Shard<T>>,
}

impl<'a, T> Iterator for Entries<'a, T> {
    type Item = (&'a T, Stamp);

    #[inline]
    fn next(&mut self) -> Option<(&'a T, Stamp)> {
        loop {
            if let Some((fact, stamp)) = self.current.as_mut()?.next() {
                self.left -= 1;
                return Some((fact, *stamp));
            }
            self.current = self.shards.next().map(HashTable::iter);
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T> ExactSizeIterator for Entries<'_, T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_land_in_one_shard_and_iterate_once() {
        let mut map: FactMap<(u32, u32)> = FactMap::default();
        for a in 0..100u32 {
            assert!(map.insert_new((a, a + 1), a, |_| {}));
        }
        assert!(!map.insert_new((3, 4), 9, |_| panic!("held")));
        assert_eq!(map.len(), 100);
        assert!(map.shards.iter().filter(|s| !s.is_empty()).count() > 1);
        assert_eq!(map.get(&(7, 8)), Some(&7));
        *map.get_mut(&(7, 8)).unwrap() = 9;
        assert_eq!(map.remove(&(7, 8)), Some(9));
        assert!(!map.contains_key(&(7, 8)));
        let keys = map.keys();
        assert_eq!(keys.len(), 99);
        assert!(map
            .entries()
            .all(|(fact, stamp)| map.get(fact) == Some(&stamp)));
        let mut seen: Vec<_> = keys.copied().collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 99);
    }
}
