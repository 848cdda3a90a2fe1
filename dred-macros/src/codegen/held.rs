//! What a fire join does with each head it finds (batched admission, or a loss of
//! support's held heads), and a loss of support's head-first join.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Ident, Index};

use super::joins::keyed_delta;
use super::{tuple_field, Context};
use crate::ir;
use crate::plan::{Access, ColumnUse, HeadFirst, Join};

impl Context<'_> {
    /// What the fire join `join` of `rule` does with each head it finds.
    pub(super) fn head_emit(&self, rule: &ir::Rule, join: &Join) -> HeadEmit {
        // The stamps the instance's other derived facts had before this round's raises: a
        // head no older than one of them never counted on the instance.
        let floor_steps: Vec<_> = join
            .steps
            .iter()
            .enumerate()
            .map(|(step, s)| (step, s, self.relation(rule.body[s.atom].relation)))
            .filter(|(_, s, relation)| !relation.input && !matches!(s.access, Access::Delta))
            .collect();
        let before = floor_steps.iter().map(|(step, _, relation)| {
            let name = &relation.name;
            let row = format_ident!("row{}", step);
            quote!(.max(self.#name.floor_of(#row)))
        });
        HeadEmit {
            rt: self.rt.clone(),
            head: self.construct(&rule.head, rule),
            head_relation: self.relation(rule.head.relation).name.clone(),
            to_fact: self.row_to_fact(rule.head.relation),
            floor: quote!(0 #(#before)*),
            floor_rows: floor_steps
                .iter()
                .map(|(step, _, _)| format_ident!("row{}", step))
                .collect(),
            // A compact index's row is a fact rebuilt for the row, and so may a scan's be
            // (see `Relation::iter`): the batch keeps a copy.
            floor_pushed: floor_steps
                .iter()
                .map(|(step, s, _)| {
                    let row = format_ident!("row{}", step);
                    if self.probes_compact(rule, s) || matches!(s.access, Access::Scan) {
                        quote!(::std::clone::Clone::clone(#row))
                    } else {
                        quote!(#row)
                    }
                })
                .collect(),
            // A fact that a membership test builds does not outlive its step.
            batched: !floor_steps
                .iter()
                .any(|(_, s, _)| matches!(s.access, Access::Contains)),
        }
    }

    /// A loss of support's head-first join (see [`HeadFirst`]) over the delta: its facts
    /// grouped by the head columns they bind; per group, one bucket of held heads, in stamp
    /// order; then, per delta fact, the heads in its stamp range (found by binary search)
    /// that no earlier fact of the group emitted, each checked against the rest of the body.
    /// The facts whose heads in range outnumber the rows the body-first join
    /// (`body_first`) would walk for them (its second step's rows, one head lookup each) go
    /// to `leftover`, for that join.
    pub(super) fn head_first_code(
        &self,
        rule: &ir::Rule,
        body_first: &Join,
        head_first: &HeadFirst,
    ) -> TokenStream {
        let rt = &self.rt;
        let head_enum = {
            let (fact_enum, name) = (&self.fact_enum, &self.relation(rule.head.relation).name);
            let head = self.struct_of(rule.head.relation, quote!(row1));
            quote!(#fact_enum::#name(#head))
        };
        let mut extended = rule.clone();
        extended.body.push(rule.head.clone());
        let join = &head_first.join;
        let (delta_step, head_step) = (&join.steps[0], &join.steps[HeadFirst::HEAD_STEP]);
        let delta_atom = &extended.body[delta_step.atom];
        let delta_relation = &self.relation(delta_atom.relation).name;
        let head_relation = &self.relation(rule.head.relation).name;
        let (row0, row1) = (format_ident!("row0"), format_ident!("row1"));
        let delta_filters = self.filters(&extended, delta_atom, delta_step, &row0);
        let delta_binds = self.binds(&extended, delta_step, &row0);
        let head_binds = self.binds(&extended, head_step, &row1);
        let Access::Probe { key: head_key, .. } = &head_step.access else {
            unreachable!("a head-first join probes the head relation")
        };
        // The group key: the delta's columns that bind the head's key variables (its other
        // key columns are constants; a repeated head variable the delta does not bind is a
        // check within the head, not a key).
        let key_vars: Vec<usize> = head_key
            .iter()
            .filter_map(|&column| match head_step.columns[column] {
                ColumnUse::Check(v) => Some(v),
                _ => None,
            })
            .collect();
        let key_positions: Vec<usize> = key_vars
            .iter()
            .map(|v| {
                delta_step
                    .columns
                    .iter()
                    .position(|use_| *use_ == ColumnUse::Bind(*v))
                    .expect("the head's key variables are the delta's")
            })
            .collect();
        let key_columns = key_positions.iter().map(|&k| Index::from(k));
        let delta_columns = &self.relation(delta_atom.relation).columns;
        let key_binds = key_vars
            .iter()
            .zip(&key_positions)
            .enumerate()
            .map(|(i, (&v, &k))| {
                let field = tuple_field(i, key_vars.len());
                self.bind_var(&extended, v, &delta_columns[k], quote!(key #field))
            });
        let head_bucket = self.probe(&extended, head_step, "probe_stamped");
        let head_filters = self.filters(&extended, &rule.head, head_step, &row1);
        // A compact head index's rows are rebuilt into facts, which the heads keep; other
        // heads are references to the index's facts.
        let compact_heads = self.compact(rule.head.relation);
        let (head_row, head_rebuilt, head_fact, head_by_ref) = if compact_heads {
            let stored = format_ident!("stored1");
            let rebuild = self.rebuild(&extended, head_step, &stored);
            (
                stored,
                quote!(let #row1 = #rebuild;),
                quote!(&#row1),
                quote!(let #row1 = &#row1;),
            )
        } else {
            (row1.clone(), quote!(), quote!(#row1), quote!())
        };
        // The heads in a delta fact's stamp range, by their places in the bucket; a head
        // already emitted is in no later range of its group: another instance cannot make
        // it more of a candidate (non-linear chain, 1 deletion: most instances the join
        // checked were of heads some earlier delta fact of their group had emitted).
        let fill_in_range = quote! {
            let limit = if by_cost { walk } else { usize::MAX };
            #rt::generated::heads_in_range(bucket.kept_stamps(), &mut emitted, cause, limit, &mut in_range)
        };
        // A head in range, read from the bucket: its fact, and its stamp (looked up if the
        // bucket keeps it as retired); a retired head, or one the head's constants or
        // repeated variables rule out, is skipped.
        let in_range_head = quote! {
            let #head_row = &bucket.rows()[at];
            #head_rebuilt
            let ::core::option::Option::Some(stamp) = bucket.stamp(bucket.kept_stamps()[at], #head_fact) else {
                continue;
            };
            if !(true #(&& #head_filters)*) {
                continue;
            }
            #head_by_ref
        };
        // What the body-first join walks per delta fact: its second step's rows.
        let body_rows = match body_first.steps.get(1) {
            Some(next) => {
                let relation = &self.relation(rule.body[next.atom].relation).name;
                match &next.access {
                    Access::Probe { .. } => {
                        let rows = self.probe(rule, next, "probe");
                        quote!(#rows.len())
                    }
                    Access::Scan => quote!(self.#relation.len()),
                    Access::Contains | Access::Delta => quote!(1),
                }
            }
            None => quote!(1),
        };
        // Membership tests only (see `plan::head_first`): a derived fact's lookup gives the
        // stamp it had before this round's raises too.
        let mut floors = Vec::new();
        let tests = join.steps[2..]
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let atom = &extended.body[s.atom];
                let relation = self.relation(atom.relation);
                let name = &relation.name;
                let row = format_ident!("row{}", i + 2);
                let fact = self.construct(atom, rule);
                let test = if relation.input {
                    quote!(if !self.#name.contains(#row) { break 'instance; })
                } else {
                    let before = format_ident!("before{}", i + 2);
                    floors.push(quote!(.max(#before)));
                    quote! {
                        let ::core::option::Option::Some((#before, _)) = self.#name.counted_on(#row) else {
                            break 'instance;
                        };
                    }
                };
                quote! {
                    let #row = &#fact;
                    work.lookup();
                    #test
                }
            })
            .collect::<Vec<_>>();
        let floor = match floors.is_empty() {
            true => quote!(#rt::generated::no_floor),
            false => quote!(|| 0 #(#floors)*),
        };
        let groups = quote! {
            for group in #rt::key_runs(&keyed) {
                if work.exhausted() {
                    return;
                }
                let key = group[0].0;
                #(#key_binds)*
                let bucket = #head_bucket;
                walks.clear();
                walks.extend(group.iter().map(|&(_, #row0)| {
                    #(#delta_binds)*
                    #body_rows
                }));
                emitted.clear();
                for (&(_, #row0), &walk) in group.iter().zip(&walks) {
                    if work.exhausted() {
                        return;
                    }
                    let cause = admit.cause(&self.#delta_relation, #row0);
                    in_range.clear();
                    // A head in range costs a lookup or two of the rest of the body; a row
                    // of the body-first join, one head lookup.
                    let filled = { #fill_in_range };
                    if !filled {
                        leftover.push(#row0);
                        continue;
                    }
                    #(#delta_binds)*
                    work.visit(in_range.len() as u64);
                    for &at in &in_range {
                        #in_range_head
                        #(#head_binds)*
                        'instance: {
                            #(#tests)*
                            if #rt::generated::held_admits(stamp, cause, &#floor) {
                                emitted[at] = true;
                                if out.#head_relation.insert(::std::clone::Clone::clone(#row1)) {
                                    stamped.push((#head_enum, stamp));
                                }
                            }
                        }
                    }
                }
            }
        };
        let keyed = keyed_delta(
            rt,
            &quote!(delta.#delta_relation.iter()),
            &row0,
            &delta_filters,
            key_columns,
            groups,
        );
        quote! {
            let mut in_range: ::std::vec::Vec<usize> = ::std::vec::Vec::new();
            let mut emitted: ::std::vec::Vec<bool> = ::std::vec::Vec::new();
            let mut walks: ::std::vec::Vec<usize> = ::std::vec::Vec::new();
            #keyed
        }
    }
}

/// What a fire join does with each head it finds: under `Admit::Held`, a loss of support's
/// heads wait in a batch of `HELD_BATCH` (see `emit_held_all`), each with the rows its floor
/// reads (the largest stamp the instance's other derived facts had before this round's
/// raises), unless a floor reads a fact that cannot wait; under the other `Admit`s, they
/// wait in a batch of `ADMIT_BATCH` (see `admit_all`).
pub(super) struct HeadEmit {
    rt: TokenStream,
    /// The head's construction from the join's variables.
    head: TokenStream,
    head_relation: Ident,
    /// The function from a stored head to the program's fact enum.
    to_fact: TokenStream,
    /// The floor, an expression of `floor_rows`.
    floor: TokenStream,
    floor_rows: Vec<Ident>,
    /// What the batch keeps of each floor row.
    floor_pushed: Vec<TokenStream>,
    batched: bool,
}

impl HeadEmit {
    /// The batch of heads under the `Admit`s other than `Held`, beside `pending`.
    pub(super) fn admitting(pending: &Ident) -> Ident {
        format_ident!("{}_admitting", pending)
    }

    /// The join's innermost code, with its batches of heads in `pending` and beside it.
    pub(super) fn emit(&self, pending: &Ident) -> TokenStream {
        let HeadEmit {
            rt,
            head,
            head_relation,
            to_fact,
            floor,
            floor_pushed,
            ..
        } = self;
        let held = if self.batched {
            let flush = self.flush(pending);
            quote! {
                #pending.push((head, cause, (#(#floor_pushed,)*)));
                if #pending.len() == #rt::generated::HELD_BATCH {
                    #flush
                }
            }
        } else {
            quote!(#rt::generated::emit_held(&self.#head_relation, head, cause, &|| #floor, &mut out.#head_relation, stamped, #to_fact);)
        };
        let admitting = Self::admitting(pending);
        let flush_admitting = self.flush_admitting(&admitting);
        quote! {
            let head = #head;
            if admit.has_causes() {
                // A held head's stamp is looked up: count it as one, for the guard.
                work.lookup();
                #held
            } else if admit_in_batches {
                #admitting.push(head);
                if #admitting.len() == #rt::generated::ADMIT_BATCH {
                    #flush_admitting
                }
            } else if admit.admits(&self.#head_relation, &head, cause, &#rt::generated::no_floor) {
                out.#head_relation.insert(head);
            }
        }
    }

    /// `join`, with its batches of heads made before it and flushed after it. Whether it
    /// tests heads in batches or one by one (see `admits_in_batches`) is read once, before
    /// the join: one copy of the join, where a copy per answer doubled the code (and the
    /// instances of every generic function its closures call) for a branch that the
    /// processor predicts.
    pub(super) fn around(&self, pending: &Ident, join: TokenStream) -> TokenStream {
        let HeadEmit {
            rt, head_relation, ..
        } = self;
        let admitting = Self::admitting(pending);
        let flush_admitting = self.flush_admitting(&admitting);
        let (make_held, flush_held) = if self.batched {
            let flush = self.flush(pending);
            (
                quote!(let mut #pending = ::std::vec::Vec::new();),
                quote! {
                    if !#pending.is_empty() {
                        #flush
                    }
                },
            )
        } else {
            (quote!(), quote!())
        };
        quote! {
            #make_held
            let mut #admitting = ::std::vec::Vec::new();
            let admit_in_batches = #rt::generated::admits_in_batches(&self.#head_relation);
            #join
            #flush_held
            if !#admitting.is_empty() {
                #flush_admitting
            }
        }
    }

    /// The call that tests the heads of the batch `admitting` and adds those admitted.
    pub(super) fn flush_admitting(&self, admitting: &Ident) -> TokenStream {
        let HeadEmit {
            rt, head_relation, ..
        } = self;
        quote!(#rt::generated::admit_all(&admit, &self.#head_relation, &mut #admitting, &mut out.#head_relation);)
    }

    /// The call that tests the heads in `pending` and adds those admitted.
    pub(super) fn flush(&self, pending: &Ident) -> TokenStream {
        let HeadEmit {
            rt,
            head_relation,
            to_fact,
            floor,
            floor_rows,
            ..
        } = self;
        let floor = match floor_rows.is_empty() {
            true => quote!(#rt::generated::no_floor_rows),
            false => quote!(|(#(#floor_rows,)*)| #floor),
        };
        quote! {
            #rt::generated::emit_held_all(&self.#head_relation, &mut #pending, &#floor, &mut out.#head_relation, stamped, #to_fact);
        }
    }
}
