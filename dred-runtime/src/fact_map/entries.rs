//! Walking a map's facts: its tables, then a dense map's box.

use std::borrow::Cow;
use std::hash::Hash;

use hashbrown::hash_table::HashTable;

use super::{FactMap, Rebuild, Tables};
use crate::bitset::{Bitset, Places, MAX_COLUMNS};
use crate::fact::{Stamp, Tuple};

impl<T: Tuple> FactMap<T> {
    /// The facts, table by table, then those of a dense map's box, rebuilt.
    pub fn keys(&self) -> Keys<'_, T> {
        let fact: fn((Cow<'_, T>, Stamp)) -> Cow<'_, T> = |(fact, _)| fact;
        self.entries().map(fact)
    }

    /// Replaces every stamp `s` the map keeps with `map(s)`, ghosts' and the unheld points'
    /// of a dense box included: `map` must keep the stamps' order.
    pub fn map_stamps(&mut self, map: &dyn Fn(Stamp) -> Stamp) {
        let tables = std::iter::once(&mut self.whole).chain(self.shards.iter_mut());
        for (_, stamp) in tables.flat_map(HashTable::iter_mut) {
            *stamp = map(*stamp);
        }
        for stamp in &mut self.dense {
            *stamp = map(*stamp);
        }
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
    // ghost test the compiler stopped inlining it there (`BENCHMARKS.md`, *Design
    // measurements*, "Ghost test").
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
