//! Update batches: the input facts an update deletes and inserts.

use crate::program::{FactSets, InputFact, Program};
use crate::symbol::Symbols;
use crate::text::{FieldError, TextError};

/// An update batch of input facts: deletions first, then insertions.
///
/// Only facts of input relations can be added (by type), so a typed batch is always valid.
/// The `dred` crate's documentation shows batches in use.
///
/// Strings that text parsed into the batch gives [`Symbol`](crate::symbol::Symbol) columns
/// are interned in the batch's table: its own, unless [`Batch::with_symbols`] gave it a
/// program's.
#[derive(Debug, Clone)]
pub struct Batch<F> {
    pub(crate) deletions: F,
    pub(crate) insertions: F,
    pub(crate) symbols: Symbols,
}

impl<F: FactSets> Default for Batch<F> {
    fn default() -> Self {
        Batch {
            deletions: F::default(),
            insertions: F::default(),
            symbols: Symbols::default(),
        }
    }
}

impl<F: FactSets> Batch<F> {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same batch, interning the strings parsed into it from now on in `symbols`:
    /// usually a program's (its `symbols()`), so that the strings it already holds are
    /// shared rather than read again.
    pub fn with_symbols(mut self, symbols: Symbols) -> Self {
        self.symbols = symbols;
        self
    }

    /// The table that strings parsed into this batch are interned in.
    pub fn symbols(&self) -> &Symbols {
        &self.symbols
    }

    /// Also delete `fact` (a no-op if it does not hold).
    pub fn delete(mut self, fact: impl InputFact<F>) -> Self {
        fact.add_to(&mut self.deletions);
        self
    }

    /// Also insert `fact` (a no-op if it holds and is not deleted by this batch).
    pub fn insert(mut self, fact: impl InputFact<F>) -> Self {
        fact.add_to(&mut self.insertions);
        self
    }

    /// Also delete every fact of `facts`.
    pub fn delete_all<I: InputFact<F>>(mut self, facts: impl IntoIterator<Item = I>) -> Self {
        facts
            .into_iter()
            .for_each(|f| f.add_to(&mut self.deletions));
        self
    }

    /// Also insert every fact of `facts`.
    pub fn insert_all<I: InputFact<F>>(mut self, facts: impl IntoIterator<Item = I>) -> Self {
        facts
            .into_iter()
            .for_each(|f| f.add_to(&mut self.insertions));
        self
    }

    /// Also deletes every fact of `facts`, given as the program's fact enum
    /// ([`Fact`](crate::Fact)), which holds facts of any relation: if one is of a derived
    /// relation, the error names it and the batch is left as it was.
    pub fn delete_facts(
        &mut self,
        facts: impl IntoIterator<Item = F::Fact>,
    ) -> Result<(), TextError> {
        add_input_facts(&mut self.deletions, facts)
    }

    /// Also inserts every fact of `facts`, as [`Batch::delete_facts`] deletes them.
    pub fn insert_facts(
        &mut self,
        facts: impl IntoIterator<Item = F::Fact>,
    ) -> Result<(), TextError> {
        add_input_facts(&mut self.insertions, facts)
    }

    /// A batch inserting `insertions`.
    pub(crate) fn inserting(insertions: F) -> Self {
        Batch {
            deletions: F::default(),
            insertions,
            symbols: Symbols::default(),
        }
    }

    /// The facts to delete, as given.
    pub fn deletions(&self) -> &F {
        &self.deletions
    }

    /// The facts to insert, as given.
    pub fn insertions(&self) -> &F {
        &self.insertions
    }

    /// Adds an untyped fact (`relation`, one text value per column) to the deletions
    /// (`insert == false`) or insertions, after checking that the relation exists, is an
    /// input relation, has that arity, and that each value parses as its column's type.
    pub fn add_text<P: Program<Facts = F>>(
        &mut self,
        insert: bool,
        relation: &str,
        values: &[&str],
    ) -> Result<(), FieldError> {
        check_input_relation::<P>(relation).map_err(|e| FieldError {
            field: None,
            message: e.message,
        })?;
        let target = if insert {
            &mut self.insertions
        } else {
            &mut self.deletions
        };
        target.insert_text(relation, values, &self.symbols)
    }
}

fn add_input_facts<F: FactSets>(
    target: &mut F,
    facts: impl IntoIterator<Item = F::Fact>,
) -> Result<(), TextError> {
    let facts: Vec<F::Fact> = facts.into_iter().collect();
    if let Some(derived) = facts.iter().find(|fact| !F::is_input(fact)) {
        return Err(TextError::new(format!(
            "`{derived}` is a fact of a derived relation; only input relations can be updated"
        )));
    }
    for fact in facts {
        target.insert_fact(fact);
    }
    Ok(())
}

pub(crate) fn check_input_relation<P: Program>(relation: &str) -> Result<(), TextError> {
    match P::RELATIONS.iter().find(|r| r.name == relation) {
        Some(info) if info.input => Ok(()),
        Some(_) => Err(TextError::new(format!(
            "`{relation}` is a derived relation; only input relations can be updated"
        ))),
        None => Err(TextError::new(format!("no relation named `{relation}`"))),
    }
}
