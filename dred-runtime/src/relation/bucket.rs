//! The buckets of an index: each key's rows in the order they came (in a stamped index,
//! in stamp order), and which of them came before the relation's latest batch.

use hashbrown::hash_table::HashTable;

use crate::fact::Stamp;

/// The stamp a stamped index keeps for a retired fact's row (see
/// [`IndexLayout::STAMPED`](super::IndexLayout::STAMPED)). A held fact may have it too
/// (derived after the clock stopped), so a row that says `RETIRED` is looked up.
pub(super) const RETIRED: Stamp = Stamp::MAX;

/// An index's table: one bucket per key, found by the key's hash.
pub(super) type Buckets<K, R> = HashTable<Keyed<K, R>>;

/// A bucket with its key and the key's hash.
#[derive(Clone)]
pub(super) struct Keyed<K, R> {
    pub(super) hash: u64,
    pub(super) key: K,
    pub(super) bucket: Bucket<R>,
}

impl<K, R> Keyed<K, R> {
    /// The bucket's rows.
    pub(super) fn rows(&self) -> &[R] {
        &self.bucket.rows
    }

    /// The rows' stamps, in a stamped index (else empty).
    pub(super) fn stamps(&self) -> &[Stamp] {
        &self.bucket.stamps
    }

    /// See [`Bucket::before`].
    pub(super) fn before(&self, batch: u64) -> &[R] {
        self.bucket.before(batch)
    }
}

/// One bucket of an index: its rows in the order they were added (in a stamped index, by
/// stamp), and which of them came before the relation's latest batch
/// ([`Relation::probe_before_latest`](super::Relation::probe_before_latest)).
///
/// Invariants:
/// - every row of the bucket that was added before batch `grown_in` began is among its
///   first `before` rows. Appending keeps this; so does each removal: `retain` keeps the
///   survivors' order, and `swap_remove` moves only the last row, at worst into the first
///   `before` (which may then hold later rows too: a superset is all a probe promises). A
///   row moved to keep the next invariant takes `before` past the rows it moved over.
/// - in a stamped index, the rows are in the order of their stamps (retired ones, kept as
///   [`RETIRED`], last), so that a loss of support finds the heads in a delta fact's stamp
///   range by binary search ([`heads_in_range`](crate::generated::heads_in_range)) rather
///   than by copying and sorting the bucket (`BENCHMARKS.md`, *Design measurements*,
///   "Stamp order in buckets"). Facts come
///   in stamp order (a round's stamp is the clock's newest), so appending mostly keeps it;
///   a stamp that changes (a raise, a retirement, a revival) moves its row, at the cost of
///   the pass that finds the row.
#[derive(Clone)]
pub(super) struct Bucket<R> {
    pub(super) rows: Vec<R>,
    /// In a stamped index ([`IndexLayout::STAMPED`](super::IndexLayout::STAMPED)), each row's fact's stamp, or
    /// [`RETIRED`] for a retired fact, in order; else empty.
    pub(super) stamps: Vec<Stamp>,
    /// The batch in which the bucket last grew.
    pub(super) grown_in: u64,
    /// How many rows it had when that batch began.
    pub(super) before: usize,
}

impl<R: PartialEq> Bucket<R> {
    /// Keeps the rows that pass `keep` (and their stamps), in order.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&R) -> bool) {
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
    pub(super) fn swap_remove(&mut self, row: &R) {
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
    pub(super) fn set_stamp(&mut self, row: &R, stamp: Stamp) {
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
    pub(super) fn sort_by_stamp(&mut self) {
        if self.in_stamp_order() {
            return;
        }
        // Most often the changes are retirements: moving the retired rows behind the
        // others, which keep their order, is one pass without a copy (the retired rows'
        // order among themselves is no stamp order's business). `BENCHMARKS.md`, *Design
        // measurements*, "Stamp order in buckets".
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
