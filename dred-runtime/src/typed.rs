//! Relations as their users see them: facts of a relation's struct, whatever the program
//! stores them as. A relation whose columns are plain values stores its facts as the tuple
//! of its column types (its *row*), so that every relation of the same column types is one
//! storage type and the crate's generic code is compiled once for all of them; the struct
//! is made from the row where a user reads a fact.

use std::borrow::Cow;

use crate::relation::{Relation, Stamp, Tuple};

/// A relation's struct and the type its program stores its facts as (the struct itself,
/// or the tuple of its columns). Implemented by `datalog!` for every relation struct.
///
/// Invariant: `from_row(&fact.to_row()) == fact`, and rows compare, order and hash as
/// their structs do (both are their columns in order).
pub trait Stored: Tuple {
    /// What the program stores this relation's facts as.
    type Row: Tuple;
    /// This fact as its program stores it.
    fn to_row(&self) -> Self::Row;
    /// This fact, owned, as its program stores it.
    fn into_row(self) -> Self::Row;
    /// The fact that `row` stores.
    fn from_row(row: &Self::Row) -> Self;
    /// This fact as its program stores it, borrowed where it is stored as itself.
    fn as_row(&self) -> Cow<'_, Self::Row>;
}

/// The facts of one relation of a program, as its struct `T`: what the generated
/// `relation::<T>()` returns. [`TypedRelation::rows`] gives the stored relation itself.
pub struct TypedRelation<'a, T: Stored, I> {
    relation: &'a Relation<T::Row, I>,
}

impl<T: Stored, I> Clone for TypedRelation<'_, T, I> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: Stored, I> Copy for TypedRelation<'_, T, I> {}

impl<'a, T: Stored, I> TypedRelation<'a, T, I> {
    /// A view of `relation`, which stores `T`'s facts.
    pub fn new(relation: &'a Relation<T::Row, I>) -> Self {
        TypedRelation { relation }
    }

    /// The stored relation: its facts as rows, its indexes.
    pub fn rows(&self) -> &'a Relation<T::Row, I> {
        self.relation
    }

    /// How many facts hold.
    pub fn len(&self) -> usize {
        self.relation.len()
    }

    /// Whether no fact holds.
    pub fn is_empty(&self) -> bool {
        self.relation.is_empty()
    }

    /// Whether `fact` holds.
    pub fn contains(&self, fact: &T) -> bool {
        self.relation.contains(&fact.to_row())
    }

    /// The stamp of `fact`, if it holds.
    pub fn stamp(&self, fact: &T) -> Option<Stamp> {
        self.relation.stamp(&fact.to_row())
    }

    /// Every fact, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = T> + 'a {
        self.relation.iter().map(|row| T::from_row(&row))
    }

    /// Every fact, sorted.
    pub fn sorted(&self) -> Vec<T> {
        self.relation
            .sorted()
            .iter()
            .map(|row| T::from_row(row))
            .collect()
    }

    /// Whether the relation keeps its facts as a bit per point of their box.
    pub fn is_dense(&self) -> bool {
        self.relation.is_dense()
    }
}

impl<T: Stored, I> std::fmt::Debug for TypedRelation<'_, T, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.sorted()).finish()
    }
}
