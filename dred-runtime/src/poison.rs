//! Updates that fail part-way. Column types are the user's, and their `Clone`, `Hash`, `Eq`
//! or `Ord` may panic (or memory run out) in the middle of an update, after some facts have
//! gone and before others came back. Such a program must not answer from its half-updated
//! facts, so an update marks it [`Unfinished`] before it changes anything and clears the
//! mark when it ends: a program found marked between calls was left by an unwinding
//! update, and is *poisoned*.
//!
//! A poisoned program refuses every query and update with a panic that says so
//! ([`Bookkeeping::assert_usable`](crate::Bookkeeping::assert_usable)) until
//! [`recover`](crate::maintain::recover) rebuilds it. The mark holds what the update was
//! changing in the input relations (the only relations a batch writes), so the inputs as
//! they were before it are the inputs held now with its changes undone, and a recovery
//! rematerializes from those: the program ends exactly as before the failed update.
//!
//! A panic before an update changes anything (while it reads which of the batch's facts
//! hold) leaves it unmarked and unchanged. Materializations need no mark: one that unwinds
//! returns no program at all.

use std::fmt;

use crate::strategy::Strategy;

/// What was running when a program was poisoned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// An update, with the strategy it was asked to run.
    Update(Strategy),
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operation::Update(strategy) => write!(f, "an update (strategy {strategy})"),
        }
    }
}

/// The mark an update leaves on its program while it runs ([`Bookkeeping::unfinished`]):
/// its batch as normalized (each deletion held before it, each insertion did not), so that
/// the inputs from before it can be rebuilt.
///
/// [`Bookkeeping::unfinished`]: crate::Bookkeeping::unfinished
#[derive(Debug, Clone)]
pub struct Unfinished<F> {
    /// What is running.
    pub operation: Operation,
    /// Input facts the update takes away; each held before it.
    pub deletions: F,
    /// Input facts the update adds; none held before it.
    pub insertions: F,
    /// How many input facts held before the update: a recovery that rebuilds another
    /// number found the input relations damaged.
    pub inputs_before: usize,
    /// The inputs after the update, while a recompute has taken them out of the relations
    /// it is rebuilding.
    pub rebuilding: Option<F>,
}

impl<F> Unfinished<F> {
    /// The error a program holding this mark reports.
    pub fn poisoned(&self) -> Poisoned {
        Poisoned {
            operation: self.operation,
        }
    }
}

/// A program is poisoned: an update unwound part-way (a panic in a column type's `Clone`,
/// `Hash`, `Eq` or `Ord`, or memory running out), so its facts may be half-updated. Every
/// query and update panics with this message until the program is recovered
/// ([`recover`](crate::maintain::recover), `recover()` on a generated program).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Poisoned {
    /// What was running.
    pub operation: Operation,
}

impl fmt::Display for Poisoned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the program is poisoned: {} panicked part-way and may have left its facts \
             half-updated; `recover()` rebuilds it from its inputs as they were before that \
             update",
            self.operation
        )
    }
}

impl std::error::Error for Poisoned {}

/// A recovery found the input relations damaged (a panic inside a table's own upkeep can
/// drop facts from it), so it could not rebuild the inputs from before the failed update.
/// The program stays poisoned; rebuild it from a copy of its inputs kept elsewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unrecoverable {
    /// What had poisoned the program.
    pub poisoned: Poisoned,
    /// How many input facts held before the failed update.
    pub expected: usize,
    /// How many the damaged relations gave back, with the update's changes undone.
    pub found: usize,
}

impl fmt::Display for Unrecoverable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot recover: {} and its input relations are damaged ({} input facts held \
             before it, {} left); rebuild the program from a copy of its inputs",
            self.poisoned.operation, self.expected, self.found
        )
    }
}

impl std::error::Error for Unrecoverable {}
