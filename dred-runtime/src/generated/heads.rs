//! The sink of a fire join's heads: what happens to each head a join finds, written once
//! here rather than at every join of every program.

use crate::admit::Admit;
use crate::program::Work;
use crate::relation::{FactSet, Relation, Stamp, Tuple};

use super::held::{
    admit_all, emit_held_all, no_floor, FloorRows, HeldHead, ADMIT_BATCH, HELD_BATCH,
};

/// Where one fire join (one rule, one delta position) sends the heads it finds, under the
/// [`Admit`] of the phase that runs it: the heads admitted go to `out`, and under
/// [`Admit::Held`] to `stamped` as well, with their stamps.
///
/// A join reads the sink's [`Route`] once, before its loops, and hands each head to
/// [`Heads::push`] with it, or, where the rows its floor reads are copies that only a loss
/// of support needs, asks the route first and hands the head to [`Heads::hold`] or
/// [`Heads::admit`]. Heads wait in batches ([`emit_held_all`],
/// [`admit_all`]), so [`Heads::finish`] must follow the join; a join that stops early
/// because its work budget is spent may skip it, since its phase then gives up.
///
/// `Rows` are the rows of the instance's other derived facts, whose stamps a held head's
/// floor reads ([`FloorRows`]): references into the relations, or copies of facts that do
/// not outlive their join step.
///
/// ```
/// use dred_runtime::generated::Heads;
/// use dred_runtime::{Admit, FactSet, Relation, Work};
/// let mut r: Relation<(u32, u32)> = Relation::new();
/// r.insert((1, 2), 1);
/// let (mut out, mut stamped) = (FactSet::default(), Vec::<((u32, u32), u32)>::new());
/// let work = &mut Work::unlimited();
/// let mut heads = Heads::new(Admit::Absent, &r, &mut out, &mut stamped, |f| f);
/// let route = heads.route();
/// for head in [(1, 2), (1, 3), (1, 3)] {
///     heads.push(route, work, head, None, ());
/// }
/// heads.finish();
/// assert_eq!(out, [(1, 3)].into_iter().collect());
/// ```
pub struct Heads<'j, T, X, F, Rows> {
    admit: Admit<&'j FactSet<T>>,
    held: &'j Relation<T, X>,
    out: &'j mut FactSet<T>,
    stamped: &'j mut Vec<(F, Stamp)>,
    fact: fn(T) -> F,
    /// Whether heads outside a loss of support are tested in batches
    /// ([`admits_in_batches`](super::admits_in_batches)), read once per join.
    in_batches: bool,
    /// Under [`Admit::Held`]: heads waiting for [`emit_held_all`], never more than
    /// [`HELD_BATCH`].
    held_heads: Vec<HeldHead<T, Rows>>,
    /// Under the other `Admit`s, in batches: heads waiting for [`admit_all`], never more
    /// than [`ADMIT_BATCH`].
    admitting: Vec<T>,
}

/// What a [`Heads`] does with every head of its join, read once per join: a value the
/// join holds in a local, so that the compiler takes the choice out of the join's loops.
/// Read from the sink per head, it was reloaded per head (`BENCHMARKS.md`, *Compile time
/// of generated code*, "At ec82be4").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// A loss of support's heads, held for [`emit_held_all`].
    Hold,
    /// Heads tested in batches ([`admit_all`]): their relation is too large for the cache.
    Batch,
    /// Heads tested one by one.
    Each,
}

impl Route {
    /// Whether heads go to [`Heads::hold`], with their causes and rows.
    #[inline(always)]
    pub fn holds(self) -> bool {
        self == Route::Hold
    }
}

impl<'j, T: Tuple, X, F, Rows: FloorRows> Heads<'j, T, X, F, Rows> {
    /// The sink of a join whose heads go into `held`'s relation: `out` is the phase's
    /// output set of it, `stamped` the phase's list of held heads admitted, `fact` makes a
    /// head the program's fact.
    #[inline(always)]
    pub fn new(
        admit: Admit<&'j FactSet<T>>,
        held: &'j Relation<T, X>,
        out: &'j mut FactSet<T>,
        stamped: &'j mut Vec<(F, Stamp)>,
        fact: fn(T) -> F,
    ) -> Self {
        Heads {
            admit,
            held,
            out,
            stamped,
            fact,
            in_batches: super::admits_in_batches(held),
            held_heads: Vec::new(),
            admitting: Vec::new(),
        }
    }

    /// What this sink does with every head: see [`Route`].
    #[inline(always)]
    pub fn route(&self) -> Route {
        match (self.admit.has_causes(), self.in_batches) {
            (true, _) => Route::Hold,
            (false, true) => Route::Batch,
            (false, false) => Route::Each,
        }
    }

    /// Sends `head`, found with a delta fact of `cause` and an instance whose floor
    /// reads `rows`, where `route` (this sink's [`Heads::route`]) says.
    ///
    /// Always inlined, as are the two it calls: a call per head made a materialization
    /// half as costly again (`BENCHMARKS.md`, *Compile time of generated code*, "At
    /// ec82be4").
    #[inline(always)]
    pub fn push(
        &mut self,
        route: Route,
        work: &mut Work,
        head: T,
        cause: Option<(Stamp, Stamp)>,
        rows: Rows,
    ) {
        if route.holds() {
            self.hold(work, head, cause, rows);
        } else {
            self.admit(route, head);
        }
    }

    /// Under [`Admit::Held`]: queues `head` for [`emit_held_all`], which tests it once
    /// [`HELD_BATCH`] heads wait. Its stamp will be looked up: counted as one lookup, for
    /// the guard.
    #[inline(always)]
    pub fn hold(&mut self, work: &mut Work, head: T, cause: Option<(Stamp, Stamp)>, rows: Rows) {
        work.lookup();
        self.held_heads.push((head, cause, rows));
        if self.held_heads.len() == HELD_BATCH {
            self.flush_held();
        }
    }

    /// Under the other `Admit`s: adds `head` to the output if [`Admit::admits`] it, at
    /// once or, for a relation too large for the cache, in a batch of [`ADMIT_BATCH`]
    /// (`route`, this sink's [`Heads::route`]).
    #[inline(always)]
    pub fn admit(&mut self, route: Route, head: T) {
        if route == Route::Batch {
            self.admitting.push(head);
            if self.admitting.len() == ADMIT_BATCH {
                self.flush_admitting();
            }
        } else if self.admit.admits(self.held, &head, None, &no_floor) {
            self.out.insert(head);
        }
    }

    /// Tests the heads still waiting, after the join.
    #[inline(always)]
    pub fn finish(mut self) {
        if !self.held_heads.is_empty() {
            self.flush_held();
        }
        if !self.admitting.is_empty() {
            self.flush_admitting();
        }
    }

    // The flushes are inlined and pass copies and fields, never `self` or `&self.admit`: an
    // address into the sink that escapes to a call would keep the optimizer from holding
    // the join's invariants (its `Admit`, whether it batches) in registers.
    #[inline(always)]
    fn flush_admitting(&mut self) {
        let admit = self.admit;
        admit_all(&admit, self.held, &mut self.admitting, self.out);
    }

    #[inline(always)]
    fn flush_held(&mut self) {
        emit_held_all(
            self.held,
            &mut self.held_heads,
            self.out,
            self.stamped,
            self.fact,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Pair = (u32, u32);
    /// A head found, with its delta fact's cause.
    type Found = (Pair, Option<(Stamp, Stamp)>);
    /// The heads admitted, and those stamped.
    type Emitted = (FactSet<Pair>, Vec<(Pair, Stamp)>);

    /// A relation of `(at, b)` stamped `stamp(b)` for `b` in `1..n`.
    fn stamped_relation(at: u32, n: u32, stamp: impl Fn(u32) -> Stamp) -> Relation<Pair> {
        let mut r = Relation::new();
        for b in 1..n {
            r.insert((at, b), stamp(b));
        }
        r
    }

    /// The fact of `others` beside a head `(1, b)` in its instance: `(2, b)`.
    fn other(head: Pair) -> Pair {
        (2, head.1)
    }

    /// What one head at a time gives under `admit`: [`Admit::admits`] on each, in order,
    /// the stamp of each admitted held head beside it.
    fn one_by_one(
        admit: Admit<&FactSet<Pair>>,
        (r, others): (&Relation<Pair>, &Relation<Pair>),
        heads: &[Found],
    ) -> Emitted {
        let (mut out, mut stamped) = (FactSet::default(), Vec::new());
        for &(head, cause) in heads {
            let floor = || others.floor_of(&other(head));
            if admit.admits(r, &head, cause, &floor) && out.insert(head) {
                if let (Admit::Held, Some(stamp)) = (admit, r.stamp(&head)) {
                    stamped.push((head, stamp));
                }
            }
        }
        (out, stamped)
    }

    fn through_sink(
        admit: Admit<&FactSet<Pair>>,
        (r, others): (&Relation<Pair>, &Relation<Pair>),
        heads: &[Found],
        in_batches: bool,
    ) -> (FactSet<Pair>, Vec<(Pair, Stamp)>, u64) {
        let (mut out, mut stamped) = (FactSet::default(), Vec::new());
        let mut work = Work::unlimited();
        let mut sink = Heads::new(admit, r, &mut out, &mut stamped, |f| f);
        sink.in_batches = in_batches;
        let route = sink.route();
        for &(head, cause) in heads {
            sink.push(route, &mut work, head, cause, ((others, other(head)), ()));
        }
        sink.finish();
        (out, stamped, work.counted().lookups)
    }

    #[test]
    fn every_admit_gives_what_its_test_gives_head_by_head() {
        let r = stamped_relation(1, 70, |b| b);
        // Every fourth head's other fact is as old as the head: it never counted on it.
        let others = stamped_relation(2, 100, |b| if b % 4 == 0 { b } else { b / 2 + 3 });
        let set: FactSet<Pair> = (0..100).step_by(3).map(|b| (1, b)).collect();
        // More heads than a batch, some twice, some absent from `r`.
        let heads: Vec<_> = (0..100)
            .chain(20..40)
            .map(|b| ((1, b), Some((9, 60))))
            .collect();
        for admit in [
            Admit::Absent,
            Admit::Held,
            Admit::NotIn(&set),
            Admit::In(&set),
        ] {
            let (out, stamped) = one_by_one(admit, (&r, &others), &heads);
            for in_batches in [false, true] {
                let (sunk, sunk_stamped, lookups) =
                    through_sink(admit, (&r, &others), &heads, in_batches);
                assert_eq!(sunk, out, "{admit:?}, in batches: {in_batches}");
                assert_eq!(sunk_stamped, stamped, "{admit:?}");
                let held = matches!(admit, Admit::Held);
                assert_eq!(lookups, if held { heads.len() as u64 } else { 0 });
            }
        }
        // The floors count: without them, more heads would be admitted.
        let (held, _) = one_by_one(Admit::Held, (&r, &Relation::new()), &heads);
        assert!(held.len() > one_by_one(Admit::Held, (&r, &others), &heads).0.len());
    }

    #[test]
    fn a_held_head_is_stamped_once_however_many_instances_find_it() {
        let r = stamped_relation(1, 10, |b| b);
        let heads = vec![((1, 5), None); 3 * HELD_BATCH];
        let (out, stamped, _) = through_sink(Admit::Held, (&r, &Relation::new()), &heads, false);
        assert_eq!(out.len(), 1);
        assert_eq!(stamped, [((1, 5), 5)]);
    }
}
