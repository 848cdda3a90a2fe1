//! The admission of heads under a loss of support and under the other phases' tests:
//! written once here, called by every generated join.

use std::borrow::Borrow;

use crate::admit::held_admits;
use crate::admit::Admit;
use crate::relation::{FactSet, Relation, Stamp, Tuple, UNSTAMPED};

/// The floor of a head whose instance has no derived fact but its delta fact's (see
/// [`held_admits`]): one function that [`Heads`](super::Heads) and every such head-first
/// join pass, where a closure of its own at each would be compiled at each.
pub fn no_floor() -> Stamp {
    0
}

/// The rows of a held head's instance whose stamps its floor reads (the largest stamp
/// the instance's other derived facts had before this round's raises: see
/// [`held_admits`]), as a list ending in `()`: `((relation, row), rest)`, each row a
/// reference to a fact of its relation or a copy of one. A trait rather than a closure at
/// each join, so that the floor is compiled once per list of row types.
///
/// ```
/// use dred_runtime::generated::FloorRows;
/// use dred_runtime::Relation;
/// let (mut r, mut s): (Relation<(u32,)>, Relation<(char,)>) = Default::default();
/// r.insert((1,), 4);
/// s.insert(('a',), 6);
/// assert_eq!(((&r, &(1,)), ((&s, ('a',)), ())).floor(), 6);
/// assert_eq!(((&r, (2,)), ()).floor(), 0); // not a fact
/// assert_eq!(().floor(), 0);
/// ```
pub trait FloorRows {
    /// The largest stamp the rows' facts had before this round's raises; 0 for none.
    fn floor(&self) -> Stamp;
}

impl FloorRows for () {
    #[inline]
    fn floor(&self) -> Stamp {
        0
    }
}

impl<U: Tuple, X, Row: Borrow<U>, Rest: FloorRows> FloorRows for ((&Relation<U, X>, Row), Rest) {
    #[inline]
    fn floor(&self) -> Stamp {
        let ((relation, row), rest) = self;
        relation.floor_of(row.borrow()).max(rest.floor())
    }
}

/// A head that a loss of support's join found, with the cause of its delta fact and the
/// rows its floor reads, waiting for [`emit_held_all`].
pub type HeldHead<T, Rows> = (T, Option<(Stamp, Stamp)>, Rows);
/// How many heads a loss of support's join collects before [`emit_held_all`] tests them.
pub const HELD_BATCH: usize = 32;

/// How many heads [`admit_all`] tests at a time.
pub const ADMIT_BATCH: usize = 32;

/// Whether a join tests the heads it derives into `held` in batches ([`admit_all`]) or
/// one by one: in batches once the relation's facts no longer fit in the cache (its
/// [`Storage::large_from_bytes`](crate::settings::Storage)).
#[doc(hidden)]
#[inline]
pub fn admits_in_batches<T: Tuple, X>(held: &Relation<T, X>) -> bool {
    held.len() * std::mem::size_of::<(T, Stamp)>() >= held.storage().large_from_bytes
}

/// Under an [`Admit`] other than [`Admit::Held`], adds to `out` the heads of `pending` (up
/// to [`ADMIT_BATCH`]) that [`Admit::admits`] admits, in order, leaving `pending` empty.
/// For the heads of relations too large for the cache ([`admits_in_batches`]), which may
/// answer [`Admit::Absent`]'s test from a bitset ([`Relation::with_bitset`]).
/// Every head is tested before any is added, for the reason [`emit_held_all`] gives: a
/// semi-naive round tests each head against a relation of millions of facts, and tested
/// one at a time, between the joins' steps, the lookups' cache misses did not overlap.
///
/// ```
/// use dred_runtime::generated::{admit_all, ADMIT_BATCH};
/// use dred_runtime::{Admit, FactSet, Relation};
/// let mut r: Relation<(u32, u32)> = Relation::new();
/// r.insert((1, 2), 1);
/// let mut pending = vec![(1, 3), (1, 2), (1, 3), (1, 4)];
/// let mut out = FactSet::default();
/// let absent: Admit<&FactSet<(u32, u32)>> = Admit::Absent;
/// admit_all(&absent, &r, &mut pending, &mut out);
/// assert!(pending.is_empty() && ADMIT_BATCH >= 4);
/// assert_eq!(out, [(1, 3), (1, 4)].into_iter().collect());
/// ```
#[inline(never)]
pub fn admit_all<T: Tuple, X>(
    admit: &Admit<&FactSet<T>>,
    held: &Relation<T, X>,
    pending: &mut Vec<T>,
    out: &mut FactSet<T>,
) {
    assert!(
        pending.len() <= ADMIT_BATCH,
        "a batch of heads is flushed when full"
    );
    let mut admitted = [false; ADMIT_BATCH];
    for (admitted, head) in admitted.iter_mut().zip(pending.iter()) {
        *admitted = admit.admits(held, head, None, &|| 0);
    }
    for (head, admitted) in pending.drain(..).zip(admitted) {
        if admitted {
            out.insert(head);
        }
    }
}

/// Under [`Admit::Held`], adds to `out` each head of `pending` (up to [`HELD_BATCH`]) that
/// [`Admit::admits`], leaving `pending` empty, and a head new to `out` to `stamped` as
/// well, with its stamp (see [`Program::fire`](crate::Program::fire)). Each head comes
/// with its cause and the rows its floor reads ([`FloorRows`], asked as [`held_admits`]
/// asks it). Out of line, so that the joins' loops keep their size (`BENCHMARKS.md`,
/// *Design measurements*, "Held heads"). Every head is looked up before any is tested: in
/// a relation of millions of facts each lookup misses the cache, and one head's test and insertion, branching on what its
/// lookup read, kept the processor from starting the next lookup before that miss
/// returned; lookups with nothing between them overlap (`BENCHMARKS.md`, *Design
/// measurements*, "Held heads").
///
/// ```
/// use dred_runtime::generated::{emit_held_all, HELD_BATCH};
/// use dred_runtime::{Admit, FactSet, Relation};
/// let (mut r, mut others): (Relation<(u32, u32)>, Relation<(u32, u32)>) = Default::default();
/// for b in 1..45 {
///     r.insert((1, b), b);
///     others.insert((2, b), b / 2 + 3);
/// }
/// // Heads that may have counted on a fact stamped 9, about to go, each with the
/// // instance's other body fact (whose stamp the floor reads): admitted if held, younger
/// // than 9 and younger than that fact.
/// let heads: Vec<_> = (0..45)
///     .map(|b| ((1, b), Some((9, u32::MAX)), ((&others, (2, b)), ())))
///     .collect();
/// let held: Admit<&FactSet<(u32, u32)>> = Admit::Held;
/// let one_by_one: Vec<_> = heads
///     .iter()
///     .filter(|(head, cause, ((_, other), ()))| {
///         held.admits(&r, head, *cause, &|| others.floor_of(other))
///     })
///     .map(|&(head, ..)| (head, r.stamp(&head).unwrap()))
///     .collect();
/// let (mut all_out, mut batched) = (FactSet::default(), Vec::new());
/// for chunk in heads.chunks(HELD_BATCH) {
///     let mut pending = chunk.to_vec();
///     emit_held_all(&r, &mut pending, &mut all_out, &mut batched, |f| f);
///     assert!(pending.is_empty());
/// }
/// assert_eq!(batched, one_by_one);
/// assert_eq!(batched.len(), 35); // (1, 10) to (1, 44)
/// ```
#[inline(never)]
pub fn emit_held_all<T: Tuple, X, F, Rows: FloorRows>(
    held: &Relation<T, X>,
    pending: &mut Vec<HeldHead<T, Rows>>,
    out: &mut FactSet<T>,
    stamped: &mut Vec<(F, Stamp)>,
    fact: fn(T) -> F,
) {
    assert!(
        pending.len() <= HELD_BATCH,
        "a batch of heads is flushed when full"
    );
    // Indexed rather than zipped: this function is compiled for every join's rows, and
    // each zip with it.
    let mut stamps = [None; HELD_BATCH];
    for (at, (head, _, _)) in pending.iter().enumerate() {
        stamps[at] = held.stamp(head);
    }
    // By reference, not drained: moving each head out cost more than cloning a head's
    // plain values twice (`BENCHMARKS.md`, *Design measurements*, "Held heads").
    for (at, (head, cause, rows)) in pending.iter().enumerate() {
        let Some(stamp) = stamps[at] else {
            continue;
        };
        if !held_admits(stamp, *cause, &|| rows.floor()) {
            continue;
        }
        if out.insert(head.clone()) {
            stamped.push((fact(head.clone()), stamp));
        }
    }
    pending.clear();
}

/// The places in a stamped bucket (`stamps`, the stamps it keeps, in order: see
/// [`Relation::probe_stamped`]) of the heads not `emitted` that a delta fact with `cause`
/// reaches: [`held_admits`] with no floor, in order. Rows kept as `Stamp::MAX` (retired
/// facts, or facts that claim nothing) are in every range: their facts are looked up.
/// Returns `false`, leaving `in_range` as it was, if that is `limit` places or more: the
/// caller then has a cheaper join.
///
/// `emitted` has a flag per row, or is empty while no head of the bucket is emitted: a
/// group of delta facts whose every fact has a cheaper join then never sizes it (Andersen,
/// whose buckets of heads are long and its body-first joins short).
///
/// ```
/// use dred_runtime::generated::heads_in_range;
/// let stamps = [0, 2, 4, 5, 7, u32::MAX];
/// let mut in_range = Vec::new();
/// let mut emitted = vec![false, false, true, false, false, false];
/// assert!(heads_in_range(&stamps, &mut emitted, Some((2, 5)), usize::MAX, &mut in_range));
/// assert_eq!(in_range, [0, 3, 5]); // 4 is emitted already; stamps 0 and MAX claim nothing
/// assert!(!heads_in_range(&stamps, &mut emitted, Some((2, 5)), 3, &mut Vec::new()));
/// let mut none_yet = Vec::new();
/// assert!(!heads_in_range(&stamps, &mut none_yet, Some((2, 5)), 4, &mut Vec::new()));
/// assert!(none_yet.is_empty());
/// ```
#[doc(hidden)]
pub fn heads_in_range(
    stamps: &[Stamp],
    emitted: &mut Vec<bool>,
    cause: Option<(Stamp, Stamp)>,
    limit: usize,
    in_range: &mut Vec<usize>,
) -> bool {
    debug_assert!(stamps.windows(2).all(|pair| pair[0] <= pair[1]));
    // Heads that claim no support come first (unstamped) and last (`Stamp::MAX`).
    let claiming = stamps.partition_point(|&stamp| stamp == UNSTAMPED);
    let unclaiming = stamps.partition_point(|&stamp| stamp < Stamp::MAX);
    let (low, high) = match cause {
        Some((above, upto)) => (
            stamps.partition_point(|&stamp| stamp <= above),
            stamps.partition_point(|&stamp| stamp <= upto),
        ),
        None => (claiming, unclaiming),
    };
    let high = high.clamp(claiming, unclaiming);
    let ranges = [
        0..claiming,
        low.clamp(claiming, high)..high,
        unclaiming..stamps.len(),
    ];
    if ranges.iter().map(ExactSizeIterator::len).sum::<usize>() >= limit {
        // Emitted heads cost nothing: count those that are not.
        let fresh: usize = if emitted.is_empty() {
            limit
        } else {
            ranges
                .iter()
                .map(|r| emitted[r.clone()].iter().filter(|&&done| !done).count())
                .sum()
        };
        if fresh >= limit {
            return false;
        }
    }
    if emitted.is_empty() {
        emitted.resize(stamps.len(), false);
    }
    // Without a branch per place: each is written, and kept by counting it. Filtered and
    // pushed one by one, the places cost a branch and a capacity check each
    // (`BENCHMARKS.md`, *Design measurements*, "Held heads").
    for places in ranges {
        let start = in_range.len();
        in_range.resize(start + places.len(), 0);
        let mut kept = start;
        for (at, &done) in places.clone().zip(&emitted[places]) {
            in_range[kept] = at;
            kept += usize::from(!done);
        }
        in_range.truncate(kept);
    }
    true
}
