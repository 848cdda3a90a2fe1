//! Which heads a join may emit, chosen by the phase that runs it, and the delta facts'
//! causes that the test reads.

use crate::relation::{claims_support, FactSet, Relation, Stamp, Tuple};

/// Which heads a join may emit; chosen by the phase that runs it.
///
/// The join narrows the per-program value (`Admit<&Facts>`) to one relation
/// (`Admit<&FactSet<T>>`, [`Admit::looking_at`]) once per rule, then asks [`Admit::admits`] per head.
#[derive(Clone, Copy, Debug)]
pub enum Admit<S> {
    /// Heads that do not hold yet (semi-naive insertion).
    Absent,
    /// Heads that hold and that the delta fact may have supported and may support no more
    /// (loss of support: the candidates to check). A head whose stamp is not younger than
    /// a derived delta fact's never counted on it (a support's derived facts are older
    /// than its head, see [`crate::Stamp`]); nor, once the fact's stamp has risen, has a
    /// head younger than its new stamp stopped counting on it; nor did a head count on an
    /// instance with another derived fact no older than itself (before this round's raises:
    /// two facts that rise together may both have supported it).
    Held,
    /// Heads not in this set (over-deletion: not already over-deleted).
    NotIn(S),
    /// Heads in this set (rederivation: over-deleted and not yet restored).
    In(S),
}

impl<'a, S> Admit<&'a S> {
    /// The set that [`Admit::NotIn`] and [`Admit::In`] read; `None` for the others.
    #[inline]
    pub fn set(&self) -> Option<&'a S> {
        match *self {
            Admit::NotIn(set) | Admit::In(set) => Some(set),
            Admit::Absent | Admit::Held => None,
        }
    }

    /// The same rule, looking at `part`: the part of [`Admit::set`] that concerns one
    /// relation, `None` where there is no set. A join takes its head relation's part so
    /// (the part chosen by the generated code, so that this is compiled once per part's
    /// type, not once per rule).
    ///
    /// ```
    /// use dred_runtime::Admit;
    /// let sets = (vec![1], vec!['a']);
    /// let admit = Admit::In(&sets);
    /// let chars = admit.looking_at(admit.set().map(|sets| &sets.1));
    /// assert!(matches!(chars, Admit::In(part) if part == &['a']));
    /// let held: Admit<&(Vec<u8>, Vec<char>)> = Admit::Held;
    /// assert!(matches!(held.looking_at::<Vec<char>>(None), Admit::Held));
    /// ```
    #[inline]
    pub fn looking_at<U>(self, part: Option<&'a U>) -> Admit<&'a U> {
        let part = || part.expect("a rule that reads a set looks at a part of it");
        match self {
            Admit::Absent => Admit::Absent,
            Admit::Held => Admit::Held,
            Admit::NotIn(_) => Admit::NotIn(part()),
            Admit::In(_) => Admit::In(part()),
        }
    }
}

impl<S> Admit<S> {
    /// Whether the delta of a join run under this rule is the relations' latest batch
    /// ([`Relation::insert_all`]): in semi-naive insertion, it is the facts just added, so
    /// the atoms before the delta's may be matched against older facts only
    /// ([`Relation::probe_before_latest`]).
    #[inline]
    pub fn delta_is_latest_batch(&self) -> bool {
        matches!(self, Admit::Absent)
    }

    /// Whether [`Admit::cause`] can be anything but `None`: only for a loss of support.
    #[inline]
    pub fn has_causes(&self) -> bool {
        matches!(self, Admit::Held)
    }
}

impl<T: Tuple> Admit<&FactSet<T>> {
    /// For [`Admit::Held`], the stamps between which a head must lie to have lost a
    /// support with the derived delta fact `row` of `relation` ([`Relation::counted_on`]);
    /// a join passes them to [`Admit::admits`] as the `cause`.
    #[inline]
    pub fn cause<U: Tuple, X>(&self, relation: &Relation<U, X>, row: &U) -> Option<(Stamp, Stamp)> {
        match self {
            Admit::Held => relation.counted_on(row),
            _ => None,
        }
    }

    /// `rows`, derived delta facts of `relation`, each beside its [`Admit::cause`]. For
    /// [`Admit::Held`] the causes are looked up [`CAUSE_BATCH`] rows ahead, all before the
    /// first of them is used: in a relation of millions of facts each lookup misses the
    /// cache, and looked up one row at a time, between the row's probes and its heads'
    /// tests, the misses did not overlap (same-generation, 10 deletions: the causes took
    /// a fifth of the update). Otherwise every cause is `None`, read from no buffer.
    ///
    /// ```
    /// use dred_runtime::{Admit, FactSet, Relation};
    /// let mut r: Relation<(u32, u32)> = Relation::new();
    /// r.insert((1, 2), 4);
    /// let delta = [(1, 2), (5, 6)];
    /// let held: Admit<&FactSet<(u32, u32)>> = Admit::Held;
    /// let caused: Vec<_> = held.with_causes(&r, delta.iter()).collect();
    /// assert_eq!(caused, [(&(1, 2), Some((4, u32::MAX))), (&(5, 6), None)]);
    /// let absent: Admit<&FactSet<(u32, u32)>> = Admit::Absent;
    /// assert!(absent.with_causes(&r, delta.iter()).all(|(_, cause)| cause.is_none()));
    ///
    /// // Over several batches, each row comes once, in order, with its own cause.
    /// for i in (0..100).step_by(2) {
    ///     r.insert((i, i), i + 1);
    /// }
    /// let rows: Vec<(u32, u32)> = (0..100).map(|i| (i, i)).collect();
    /// let caused: Vec<_> = held.with_causes(&r, rows.iter()).collect();
    /// let expected: Vec<_> = rows
    ///     .iter()
    ///     .map(|row| (row, (row.0 % 2 == 0).then_some((row.0 + 1, u32::MAX))))
    ///     .collect();
    /// assert_eq!(caused, expected);
    /// ```
    #[inline]
    pub fn with_causes<'r, U: Tuple, X, I: Iterator<Item = &'r U>>(
        &self,
        relation: &'r Relation<U, X>,
        rows: I,
    ) -> WithCauses<'r, U, X, I> {
        WithCauses {
            relation: self.has_causes().then_some(relation),
            rows,
            ahead: [(None, None); CAUSE_BATCH],
            next: 0,
            end: 0,
        }
    }

    /// Whether a join may emit `head` into its output, given the head relation's facts,
    /// the `cause` of [`Admit::cause`] (`None` for an input delta fact: input facts
    /// support heads of any age), and, for [`Admit::Held`] only, the largest stamp the
    /// instance's other derived facts had before this round's raises (`floor`, asked
    /// last: it costs a lookup per fact): a head no younger than that never had the
    /// instance as its support.
    ///
    /// Always inlined: it runs once per head a join finds, and a join's probes, inlined
    /// too, can tip the inliner's budget against it (`BENCHMARKS.md`, *Compile time*,
    /// "probes and the closures of every join").
    #[inline(always)]
    pub fn admits<X>(
        &self,
        held: &Relation<T, X>,
        head: &T,
        cause: Option<(Stamp, Stamp)>,
        floor: &dyn Fn() -> Stamp,
    ) -> bool {
        match self {
            Admit::Absent => !held.contains(head),
            Admit::Held => held
                .stamp(head)
                .is_some_and(|stamp| held_admits(stamp, cause, floor)),
            Admit::NotIn(set) => !set.contains(head),
            Admit::In(set) => set.contains(head),
        }
    }
}

/// How many delta facts' causes [`Admit::with_causes`] looks up at a time.
pub const CAUSE_BATCH: usize = 32;

/// A row of [`WithCauses`]'s buffer (`None` in the slots not filled).
type Caused<'r, U> = (Option<&'r U>, Option<(Stamp, Stamp)>);

/// The iterator of [`Admit::with_causes`].
pub struct WithCauses<'r, U, X, I> {
    /// The delta's relation, if causes are looked up.
    relation: Option<&'r Relation<U, X>>,
    rows: I,
    /// Rows taken from `rows` with their causes; `ahead[next..end]` are still to come.
    ahead: [Caused<'r, U>; CAUSE_BATCH],
    next: usize,
    end: usize,
}

impl<'r, U: Tuple, X, I: Iterator<Item = &'r U>> Iterator for WithCauses<'r, U, X, I> {
    type Item = (&'r U, Option<(Stamp, Stamp)>);

    /// Always inlined: every phase's joins walk derived deltas through it, and those
    /// without causes take the first branch only.
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let Some(relation) = self.relation else {
            return self.rows.next().map(|row| (row, None));
        };
        if self.next == self.end && !self.look_ahead(relation) {
            return None;
        }
        let (row, cause) = self.ahead[self.next];
        self.next += 1;
        Some((row.expect("taken from `rows`"), cause))
    }
}

impl<'r, U: Tuple, X, I: Iterator<Item = &'r U>> WithCauses<'r, U, X, I> {
    /// Takes the next rows with their causes into the buffer; `false` if there were none.
    #[inline]
    fn look_ahead(&mut self, relation: &'r Relation<U, X>) -> bool {
        self.next = 0;
        self.end = 0;
        for (slot, row) in self.ahead.iter_mut().zip(self.rows.by_ref()) {
            *slot = (Some(row), relation.counted_on(row));
            self.end += 1;
        }
        self.end > 0
    }
}

/// [`Admit::Held`]'s test of a held head stamped `stamp`, given the `cause` of the
/// instance's delta fact and the largest stamp its other derived facts had before this
/// round's raises (`floor`, asked last). With `&|| 0` for `floor`, whether the head may have
/// counted on any instance with that delta fact: a join that walks the heads before the
/// rest of the body filters them so.
///
/// ```
/// use dred_runtime::admit::held_admits;
/// // A delta fact stamped 3, about to go: heads younger than it may have counted on it.
/// assert!(held_admits(5, Some((3, u32::MAX)), &|| 4));
/// assert!(!held_admits(3, Some((3, u32::MAX)), &|| 0));
/// // Not if the instance's other fact is no older than the head.
/// assert!(!held_admits(5, Some((3, u32::MAX)), &|| 5));
/// // A fact risen from 3 to 6: heads stamped 4 to 6 counted on it, and count no more.
/// assert!(!held_admits(7, Some((3, 6)), &|| 0));
/// ```
///
/// `floor` is a trait object, not a type parameter: every join of every program calls
/// this, each with a closure of its own, and a type parameter compiled a copy per call.
/// Inlined into its caller, the call is direct again.
#[inline]
pub fn held_admits(stamp: Stamp, cause: Option<(Stamp, Stamp)>, floor: &dyn Fn() -> Stamp) -> bool {
    if !claims_support(stamp) {
        return true;
    }
    let in_range = match cause {
        Some((above, upto)) => above < stamp && stamp <= upto,
        None => true,
    };
    in_range && floor() < stamp
}
