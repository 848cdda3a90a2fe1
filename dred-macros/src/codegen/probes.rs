//! How a join step reads a relation: index probes and their keys, rows rebuilt into facts,
//! and the slots that keep a probe's bucket where its key is bound.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

use super::{tuple, tuple_field, Context};
use crate::ir::{self, TypeClass};
use crate::plan::{Access, ColumnUse, Join, Step};

impl Context<'_> {
    /// A probe of `step`'s index, by `method` (`probe`, `probe_before_latest` or
    /// `probe_stamped`), in `rule`: the rows of the bucket of the key the step knows, given
    /// as a tuple of references (`dred_runtime::KeyQuery`).
    pub(super) fn probe(&self, rule: &ir::Rule, step: &Step, method: &str) -> TokenStream {
        let Access::Probe { index, .. } = &step.access else {
            unreachable!("a probe step has a key")
        };
        let atom = &rule.body[step.atom];
        let name = &self.relation(atom.relation).name;
        let path = self.index_path(atom.relation, *index);
        let key = self.key_refs(rule, step);
        let method = format_ident!("{}", method);
        quote!(self.#name.#method(#path, #key))
    }

    /// The fact of a compact index's row `stored` for `step`'s probe: its key columns from
    /// what the step knows, the others from the row.
    pub(super) fn rebuild(&self, rule: &ir::Rule, step: &Step, stored: &Ident) -> TokenStream {
        let Access::Probe { index, .. } = &step.access else {
            unreachable!("a probe step has a key")
        };
        let atom = &rule.body[step.atom];
        self.fact_of_row(atom.relation, *index, stored, |_, column| {
            self.key_column(rule, atom, step, column, KeyForm::Owned)
        })
    }

    /// The fact of relation `r` whose row `stored` index `index` keeps: its key columns
    /// from `key_column` (given their place in the key and in the fact), the others from
    /// the row.
    pub(super) fn fact_of_row(
        &self,
        r: usize,
        index: usize,
        stored: &Ident,
        key_column: impl Fn(usize, usize) -> TokenStream,
    ) -> TokenStream {
        let key = &self.plan.indexes[r][index];
        let rest = self.rest_columns(r, index);
        let relation = self.relation(r);
        let values =
            (0..relation.columns.len()).map(|column| match key.iter().position(|&k| k == column) {
                Some(at) => key_column(at, column),
                None => {
                    let at = rest.iter().position(|&c| c == column);
                    let field = tuple_field(at.expect("a column outside the key"), rest.len());
                    quote!(#stored #field)
                }
            });
        self.make_row(r, values)
    }

    /// Whether `step` probes a compact index (its rows are rebuilt into facts).
    pub(super) fn probes_compact(&self, rule: &ir::Rule, step: &Step) -> bool {
        matches!(step.access, Access::Probe { .. }) && self.compact(rule.body[step.atom].relation)
    }

    /// The key a [`Access::Probe`] step looks up, as a tuple of references to its values.
    pub(super) fn key_refs(&self, rule: &ir::Rule, step: &Step) -> TokenStream {
        let Access::Probe { key, .. } = &step.access else {
            unreachable!("a probe step has a key")
        };
        let atom = &rule.body[step.atom];
        let key_values: Vec<TokenStream> = key
            .iter()
            .map(|&k| self.key_column(rule, atom, step, k, KeyForm::Borrowed))
            .collect();
        tuple(&key_values)
    }

    /// A key column's known value (a bound variable or a constant) in `form`.
    pub(super) fn key_column(
        &self,
        rule: &ir::Rule,
        atom: &ir::Atom,
        step: &Step,
        column: usize,
        form: KeyForm,
    ) -> TokenStream {
        match step.columns[column] {
            ColumnUse::Check(v) => {
                let column = &self.relation(atom.relation).columns[column];
                let var = self.var_at(rule, v, column);
                match form {
                    KeyForm::Borrowed => quote!(#var),
                    KeyForm::Owned => quote!(::std::clone::Clone::clone(#var)),
                }
            }
            ColumnUse::Const => {
                let ir::Term::Const(c) = &atom.terms[column] else {
                    unreachable!()
                };
                let column = &self.relation(atom.relation).columns[column];
                let value = &c.expr;
                let ty = &column.ty;
                let owned_str = column.class == (TypeClass::Str { owned: true });
                match form {
                    // `String` hashes as `str`: probe with the borrowed literal.
                    KeyForm::Borrowed if owned_str => quote!(&#value),
                    KeyForm::Borrowed => quote!(&{ let value: #ty = #value; value }),
                    KeyForm::Owned if owned_str => quote!(::std::string::String::from(#value)),
                    KeyForm::Owned => quote!({ let value: #ty = #value; value }),
                }
            }
            ColumnUse::Bind(_) | ColumnUse::Ignore => unreachable!("key columns are known"),
        }
    }

    /// When a head-bound join's first step walks a derived relation's bucket: that
    /// relation's index. Support checks then read the bucket's stamps in order (see
    /// `dred_runtime::IndexLayout::STAMPED`).
    pub(super) fn stamped_first(&self, rule: &ir::Rule, join: &Join) -> Option<usize> {
        let first = join.steps.first()?;
        let relation = self.relation(rule.body[first.atom].relation);
        match first.access {
            Access::Probe { index, .. } if !relation.input => Some(index),
            _ => None,
        }
    }
}

/// How [`Context::key_column`] writes a key column's known value.
#[derive(Clone, Copy)]
pub(super) enum KeyForm {
    /// A reference to the value (to a `str` for a `String` column's literal), hashed as
    /// the index's keys are and compared with them (`dred_runtime::KeyQuery`).
    Borrowed,
    /// An owned value, for a key or a fact.
    Owned,
}

/// Where a join has bound every variable of a probe's key (in the order the join binds).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(super) enum Bound {
    /// Before its first step (a head-bound join's head variables).
    BeforeJoin,
    /// By this step.
    AtStep(usize),
}

/// Where the key of `join.steps[step]`'s probe is bound, when that is outside the loop of
/// the step just before it: the probe then returns the same bucket on every round of the
/// loops in between (same-generation's delta `Sg(a, b)` walks `Par(x, a)` and, for each
/// `x`, `Par(y, b)`), so it is made once where its key is bound and kept in a slot. `None`
/// for steps that do not probe, keys of constants only, and keys the step before binds.
fn probe_home(join: &Join, step: usize) -> Option<Bound> {
    let current = &join.steps[step];
    let Access::Probe { key, .. } = &current.access else {
        return None;
    };
    let binder = |v: usize| {
        join.steps[..step]
            .iter()
            .position(|earlier| earlier.columns.contains(&ColumnUse::Bind(v)))
    };
    let home = key
        .iter()
        .filter_map(|&column| match current.columns[column] {
            ColumnUse::Check(v) => Some(binder(v).map_or(Bound::BeforeJoin, Bound::AtStep)),
            _ => None,
        })
        .max();
    match home? {
        Bound::BeforeJoin if step == 0 => None,
        Bound::AtStep(at) if at + 1 >= step => None,
        home => Some(home),
    }
}

/// The slot that keeps `join.steps[step]`'s bucket (see [`probe_home`]), if it has one.
pub(super) fn probe_slot(join: &Join, step: usize) -> Option<Ident> {
    probe_home(join, step).map(|_| slot_ident(step))
}

fn slot_ident(step: usize) -> Ident {
    format_ident!("probe{}", step)
}

/// The empty slots of the probes whose keys are bound at `home`, declared there; each is
/// filled by the first walk of its step, so an index is never probed (and built) earlier
/// than the join would have probed it.
pub(super) fn probe_slots(join: &Join, home: Bound) -> Vec<TokenStream> {
    (0..join.steps.len())
        .filter(|&step| probe_home(join, step) == Some(home))
        .map(|step| {
            let slot = slot_ident(step);
            quote!(let mut #slot = ::core::option::Option::None;)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    /// Per rule, per delta join then the head-bound one: the steps whose probe is made
    /// before the loop just outside it, and where.
    fn hoisted(source: TokenStream) -> Vec<Vec<Vec<(usize, Bound)>>> {
        let homes = |join: &Join| -> Vec<(usize, Bound)> {
            (0..join.steps.len())
                .filter_map(|step| Some((step, probe_home(join, step)?)))
                .collect()
        };
        crate::plan::tests::plan_of(source)
            .rules
            .iter()
            .map(|rule| {
                rule.deltas
                    .iter()
                    .chain([&rule.derive])
                    .map(homes)
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_probe_whose_key_an_outer_step_binds_is_made_there() {
        // Same generation: a delta `Sg(a, b)` walks `Par(x, a)`, then `Par(y, b)` for each
        // `x`, keyed by the delta alone; the head-bound join walks `Par(x, a)`, then
        // `Par(y, b)` keyed by the head's `y`.
        let same_generation = hoisted(quote! {
            struct SameGeneration;
            @input struct Par(u32, u32);
            struct Sg(u32, u32);
            Sg(x, y) <- Par(x, p), Par(y, p);
            Sg(x, y) <- Par(x, a), Sg(a, b), Par(y, b);
        });
        assert_eq!(same_generation[0], [vec![], vec![], vec![]]);
        let [par_first, sg_delta, par_last, derive] = &same_generation[1][..] else {
            panic!("three delta joins and a head-bound one")
        };
        assert_eq!(sg_delta, &[(2, Bound::AtStep(0))]);
        assert_eq!(derive, &[(1, Bound::BeforeJoin)]);
        // From a delta `Par`, every later step's key comes from the step just before.
        assert_eq!((par_first, par_last), (&vec![], &vec![]));
        // Linear closure: each step's key comes from the step before it.
        let linear = hoisted(crate::plan::tests::linear_closure());
        assert!(linear.iter().flatten().all(Vec::is_empty));
    }
}
