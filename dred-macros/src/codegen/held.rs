//! What a fire join does with each head it finds (hands it to the runtime's
//! `generated::Heads`, with what a loss of support needs to test it), and a loss of
//! support's head-first join.

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
        let mut floor = FloorRows::default();
        for (step, s) in join.steps.iter().enumerate() {
            let r = rule.body[s.atom].relation;
            let relation = self.relation(r);
            if relation.input || matches!(s.access, Access::Delta) {
                continue;
            }
            let (row, name) = (format_ident!("row{}", step), &relation.name);
            // A compact index's row is a fact rebuilt for the row, and so may a scan's be
            // (see `Relation::iter`); a membership test's fact lives for its step only: a
            // held head's batch keeps a copy of these, and of the others a reference.
            let copied =
                self.probes_compact(rule, s) || matches!(s.access, Access::Scan | Access::Contains);
            if copied {
                floor
                    .rows
                    .push(quote!((&self.#name, ::std::clone::Clone::clone(#row))));
                floor.costly_copies |= !self.row_stored(r);
            } else {
                floor.rows.push(quote!((&self.#name, #row)));
            }
        }
        HeadEmit {
            rt: self.rt.clone(),
            head: self.construct(&rule.head, rule),
            head_relation: self.relation(rule.head.relation).name.clone(),
            to_fact: self.row_to_fact(rule.head.relation),
            floor,
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

/// What a fire join does with each head it finds: it hands them to the runtime's
/// `generated::Heads`, made before the join and finished after it, with what a loss of
/// support needs to test a head (the rows its floor reads: the largest stamp the
/// instance's other derived facts had before this round's raises).
pub(super) struct HeadEmit {
    rt: TokenStream,
    /// The head's construction from the join's variables.
    head: TokenStream,
    head_relation: Ident,
    /// The function from a stored head to the program's fact enum.
    to_fact: TokenStream,
    floor: FloorRows,
}

/// The rows of an instance's other derived facts, which a held head's floor reads.
#[derive(Default)]
struct FloorRows {
    /// Each relation beside what a held head's batch keeps of its row: a reference, or a
    /// copy.
    rows: Vec<TokenStream>,
    /// Whether a copy may allocate (a fact not stored as plain values): then only a loss
    /// of support makes it.
    costly_copies: bool,
}

impl FloorRows {
    /// The rows as the runtime's `FloorRows` list, `(first, (second, ()))`.
    fn list(&self) -> TokenStream {
        self.rows
            .iter()
            .rev()
            .fold(quote!(()), |rest, row| quote!((#row, #rest)))
    }
}

impl HeadEmit {
    /// The join's innermost code: the head, to the sink.
    pub(super) fn emit(&self) -> TokenStream {
        let HeadEmit { head, floor, .. } = self;
        let rows = floor.list();
        if floor.costly_copies {
            quote! {
                let head = #head;
                if route.holds() {
                    heads.hold(work, head, cause, #rows);
                } else {
                    heads.admit(route, head);
                }
            }
        } else {
            quote! {
                heads.push(route, work, #head, cause, #rows);
            }
        }
    }

    /// `join`, with the sink of its heads made before it and finished after it.
    pub(super) fn around(&self, join: TokenStream) -> TokenStream {
        let HeadEmit {
            rt,
            head_relation,
            to_fact,
            ..
        } = self;
        quote! {
            let mut heads = #rt::generated::Heads::new(
                admit,
                &self.#head_relation,
                &mut out.#head_relation,
                stamped,
                #to_fact,
            );
            let route = heads.route();
            #join
            heads.finish();
        }
    }
}
