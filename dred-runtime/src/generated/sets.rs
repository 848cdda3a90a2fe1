//! Set operations and text output over a relation's facts that generated code calls per
//! relation.

use std::borrow::Cow;

use crate::program::Record;
use crate::relation::{FactSet, Relation, Tuple};
use crate::text::GroundFact;

/// Adds every fact of `other` to `set`. When `other` is the larger, `set` becomes a copy of
/// it and takes its own facts back: a copy moves a table's entries without hashing them,
/// and DRed's over-deleted set, joined by each round's facts, is the smaller of the two in
/// most rounds where rounds grow (same-generation's grow fourfold).
///
/// ```
/// use dred_runtime::generated::union_sets;
/// use dred_runtime::FactSet;
/// let mut set: FactSet<(u32,)> = [(1,)].into_iter().collect();
/// let larger: FactSet<(u32,)> = [(1,), (2,), (3,)].into_iter().collect();
/// union_sets(&mut set, &larger);
/// assert_eq!(set, [(1,), (2,), (3,)].into_iter().collect());
/// ```
pub fn union_sets<T: Tuple>(set: &mut FactSet<T>, other: &FactSet<T>) {
    if other.len() > set.len() {
        let own = std::mem::replace(set, other.clone());
        set.reserve(own.len());
        set.extend(own);
        return;
    }
    // `extend` reserves for only half of `other` when `set` is not empty.
    set.reserve(other.len());
    set.extend(other.iter().cloned());
}

/// Adds every fact of `other` to `set`, taking them: a table with room for the other's
/// facts keeps them both (`set`'s first), or else the larger one does, so that no table is
/// copied and as few grow as can be (a round split over threads merges its parts' heads
/// at its memory peak).
///
/// ```
/// use dred_runtime::generated::merge_sets;
/// use dred_runtime::FactSet;
/// let mut set: FactSet<(u32,)> = [(1,)].into_iter().collect();
/// merge_sets(&mut set, [(1,), (2,), (3,)].into_iter().collect());
/// assert_eq!(set, [(1,), (2,), (3,)].into_iter().collect());
/// let mut roomy = FactSet::with_capacity_and_hasher(1000, Default::default());
/// roomy.insert((9,));
/// let capacity = roomy.capacity();
/// let mut full: FactSet<(u32,)> = [(1,), (2,), (3,)].into_iter().collect();
/// full.shrink_to_fit();
/// merge_sets(&mut full, roomy);
/// assert_eq!((full.len(), full.capacity()), (4, capacity));
/// ```
pub fn merge_sets<T: Tuple>(set: &mut FactSet<T>, mut other: FactSet<T>) {
    let has_room = |table: &FactSet<T>, facts: usize| table.capacity() - table.len() >= facts;
    if !has_room(set, other.len()) && (has_room(&other, set.len()) || other.len() > set.len()) {
        std::mem::swap(set, &mut other);
    }
    set.extend(other);
}

/// Empties `set` for a round of about `expected` facts: keeps its room if that is at
/// most twice what `expected` facts take, so that rounds of steady size reuse one table;
/// frees it otherwise, so that a large round's room is not held through the smaller ones
/// after it (at a materialization's memory peak).
///
/// ```
/// use dred_runtime::generated::recycle_set;
/// use dred_runtime::FactSet;
/// let mut round: FactSet<(u32,)> = (0..100).map(|a| (a,)).collect();
/// recycle_set(&mut round, 90);
/// assert!(round.is_empty() && round.capacity() >= 100);
/// recycle_set(&mut round, 10);
/// assert_eq!(round.capacity(), 0);
/// ```
pub fn recycle_set<T: Tuple>(set: &mut FactSet<T>, expected: usize) {
    if set.capacity() <= 2 * expected.max(16) {
        set.clear();
    } else {
        *set = FactSet::default();
    }
}

/// How many facts are in both sets, walking the smaller of the two.
///
/// ```
/// use dred_runtime::generated::common_len;
/// use dred_runtime::FactSet;
/// let set: FactSet<(u32,)> = (0..10).map(|a| (a,)).collect();
/// let other: FactSet<(u32,)> = (5..100).map(|a| (a,)).collect();
/// assert_eq!(common_len(&set, &other), 5);
/// ```
pub fn common_len<T: Tuple>(set: &FactSet<T>, other: &FactSet<T>) -> usize {
    let (small, large) = match set.len() <= other.len() {
        true => (set, other),
        false => (other, set),
    };
    small.iter().filter(|fact| large.contains(*fact)).count()
}

/// Removes every fact of `other` from `set`, walking the smaller of the two.
pub fn subtract_sets<T: Tuple>(set: &mut FactSet<T>, other: &FactSet<T>) {
    if other.len() < set.len() {
        for fact in other {
            set.remove(fact);
        }
    } else {
        set.retain(|fact| !other.contains(fact));
    }
}

/// The facts of `set`, in order.
pub fn sorted<T: Tuple>(set: &FactSet<T>) -> Vec<&T> {
    let mut facts: Vec<&T> = set.iter().collect();
    facts.sort_unstable();
    facts
}

/// Appends the facts of `set`, in order, to `out`, each made a program's fact by `fact`:
/// one function per stored type, not one per relation's closure.
pub fn extend_sorted<R: Tuple, F>(out: &mut Vec<F>, set: &FactSet<R>, fact: fn(&R) -> F) {
    out.extend(sorted(set).into_iter().map(fact));
}

/// Appends `rows` to `out`, each made a program's fact by `fact` (see [`extend_sorted`]).
pub fn extend_facts<R: Clone, F>(out: &mut Vec<F>, rows: Vec<Cow<'_, R>>, fact: fn(&R) -> F) {
    out.extend(rows.iter().map(|row| fact(row)));
}

/// Appends ` R(a,b)` for each fact of `set`, in order, each made its relation's struct by
/// `to_struct` (sets store rows, which order as their structs do).
pub fn write_sorted<R: Tuple, T: Record>(
    out: &mut String,
    set: &FactSet<R>,
    to_struct: fn(&R) -> T,
) {
    for fact in sorted(set) {
        out.push(' ');
        out.push_str(T::NAME);
        out.push('(');
        out.push_str(&to_struct(fact).render_values().join(","));
        out.push(')');
    }
}

/// Appends each fact of `set`, in order, as a [`GroundFact`] (see [`write_sorted`]).
pub fn extend_ground<R: Tuple, T: Record>(
    out: &mut Vec<GroundFact>,
    set: &FactSet<R>,
    to_struct: fn(&R) -> T,
) {
    out.extend(sorted(set).into_iter().map(|fact| GroundFact {
        relation: T::NAME.to_string(),
        values: to_struct(fact).render_values(),
    }));
}

/// Appends the facts of `relation` as tab-separated lines, in order (see [`write_sorted`]).
pub fn write_relation_tsv<R: Tuple, T: Record, X>(
    out: &mut String,
    relation: &Relation<R, X>,
    to_struct: fn(&R) -> T,
) {
    for fact in relation.sorted() {
        to_struct(&fact).write_tsv(out);
        out.push('\n');
    }
}
