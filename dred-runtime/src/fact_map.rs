//! A relation's held facts and their stamps, in shards, so that growing never holds two
//! copies of the whole table.

use std::collections::hash_map::{Entry, HashMap};
use std::hash::{BuildHasher, BuildHasherDefault};

use crate::relation::{FactHasher, Stamp, Tuple};

/// How many shards a map has. A hash table grows by moving into one twice its size, and
/// both are held until the move ends: for a map of millions of facts that copy was the
/// memory peak of a materialization (linear closure, 5.9 M facts: the 54 MiB table and
/// its 109 MiB successor at once). Shards grow one at a time, so the peak holds one
/// shard's two copies; each move also fits in the cache.
const SHARDS: usize = 16;

/// Which bits of a fact's hash choose its shard: above those a shard's table uses for its
/// slot (the low bits, up to a table of 2^40 slots) and below its tag (the top seven), so
/// that facts in one shard still spread over all its slots and tags.
const SHARD_SHIFT: u32 = 40;

type Shard<T> = HashMap<T, Stamp, BuildHasherDefault<FactHasher>>;

/// Fact → stamp, split over [`SHARDS`] hash maps by a few bits of the fact's hash.
///
/// Invariant: a fact is only ever in the shard [`FactMap::shard_of`] names.
#[derive(Clone)]
pub(crate) struct FactMap<T> {
    shards: Box<[Shard<T>]>,
}

impl<T: Tuple> Default for FactMap<T> {
    fn default() -> Self {
        FactMap {
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
        }
    }
}

impl<T: Tuple> FactMap<T> {
    #[inline]
    fn shard_of(&self, fact: &T) -> usize {
        let hash = BuildHasherDefault::<FactHasher>::default().hash_one(fact);
        (hash >> SHARD_SHIFT) as usize % SHARDS
    }

    #[inline]
    fn shard(&self, fact: &T) -> &Shard<T> {
        &self.shards[self.shard_of(fact)]
    }

    #[inline]
    fn shard_mut(&mut self, fact: &T) -> &mut Shard<T> {
        let shard = self.shard_of(fact);
        &mut self.shards[shard]
    }

    #[inline]
    pub fn get(&self, fact: &T) -> Option<&Stamp> {
        self.shard(fact).get(fact)
    }

    #[inline]
    pub fn get_mut(&mut self, fact: &T) -> Option<&mut Stamp> {
        self.shard_mut(fact).get_mut(fact)
    }

    #[inline]
    pub fn contains_key(&self, fact: &T) -> bool {
        self.shard(fact).contains_key(fact)
    }

    #[inline]
    pub fn entry(&mut self, fact: T) -> Entry<'_, T, Stamp> {
        self.shard_mut(&fact).entry(fact)
    }

    #[inline]
    pub fn remove(&mut self, fact: &T) -> Option<Stamp> {
        self.shard_mut(fact).remove(fact)
    }

    pub fn len(&self) -> usize {
        self.shards.iter().map(HashMap::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.shards.iter().all(HashMap::is_empty)
    }

    pub fn capacity(&self) -> usize {
        self.shards.iter().map(HashMap::capacity).sum()
    }

    /// Room for `additional` more facts, spread evenly (a shard that gets more grows).
    pub fn reserve(&mut self, additional: usize) {
        let each = additional.div_ceil(SHARDS);
        for shard in self.shards.iter_mut() {
            shard.reserve(each);
        }
    }

    pub fn shrink_to_fit(&mut self) {
        for shard in self.shards.iter_mut() {
            shard.shrink_to_fit();
        }
    }

    /// The facts, shard by shard.
    pub fn keys(&self) -> Keys<'_, T> {
        let mut shards = self.shards.iter();
        let current = shards.next().map(HashMap::keys);
        Keys {
            left: self.len(),
            current,
            shards,
        }
    }
}

/// The iterator of [`FactMap::keys`]: knows its length, as a scan's work count needs.
#[derive(Clone)]
pub(crate) struct Keys<'a, T> {
    left: usize,
    current: Option<std::collections::hash_map::Keys<'a, T, Stamp>>,
    shards: std::slice::Iter<'a, Shard<T>>,
}

impl<'a, T> Iterator for Keys<'a, T> {
    type Item = &'a T;

    #[inline]
    fn next(&mut self) -> Option<&'a T> {
        loop {
            if let Some(fact) = self.current.as_mut()?.next() {
                self.left -= 1;
                return Some(fact);
            }
            self.current = self.shards.next().map(HashMap::keys);
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T> ExactSizeIterator for Keys<'_, T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_land_in_one_shard_and_iterate_once() {
        let mut map: FactMap<(u32, u32)> = FactMap::default();
        for a in 0..100u32 {
            map.entry((a, a + 1)).or_insert(a);
        }
        assert_eq!(map.len(), 100);
        assert!(map.shards.iter().filter(|s| !s.is_empty()).count() > 1);
        assert_eq!(map.get(&(7, 8)), Some(&7));
        *map.get_mut(&(7, 8)).unwrap() = 9;
        assert_eq!(map.remove(&(7, 8)), Some(9));
        assert!(!map.contains_key(&(7, 8)));
        let keys = map.keys();
        assert_eq!(keys.len(), 99);
        let mut seen: Vec<_> = keys.copied().collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 99);
    }
}
