//! The program as a differential-dataflow dataflow (feature `dataflow`): the
//! `dred::runtime::dataflow::Dataflow` impl. Each relation is a collection of tuples of its
//! column values; each recursive component an iterative scope with one variable per
//! relation; each rule a chain of joins in the order of its plan's delta join from its
//! first recursive atom, one arrangement per step. The runtime runs it
//! (`dred_runtime::dataflow::run`).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use syn::Ident;

use super::{tuple, Context};
use crate::ir::{self, Term, TypeClass};
use crate::plan::ColumnUse;

impl Context<'_> {
    /// The `Dataflow` impl. A column of a type of the user's own (which rustc, not the
    /// macro, knows to cross processes or not) makes it conditional on that type's
    /// serde traits, by a bound under a binder: a bound naming no generic parameter would
    /// be checked where the impl is written, and fail there for a type without them; this
    /// one is checked where the impl is used.
    pub(super) fn dataflow_impl(&self) -> TokenStream {
        let rt = &self.rt;
        let (program, fact_enum) = (&self.program.name, &self.fact_enum);
        let df = self.df();
        let mut own_types: Vec<&ir::Column> = Vec::new();
        for column in self.program.relations.iter().flat_map(|r| &r.columns) {
            if is_own_type(column) && !own_types.iter().any(|c| c.ty_text == column.ty_text) {
                own_types.push(column);
            }
        }
        let own_types = own_types.iter().map(|column| &column.ty);
        let inputs = self
            .program
            .relations
            .iter()
            .enumerate()
            .filter(|(_, r)| r.input);
        let inputs = inputs.map(|(k, relation)| {
            let (name, ty) = (&relation.name, self.ty(relation));
            let columns = column_idents(relation.columns.len());
            let row = tuple(&self.entering(&relation.columns, &columns));
            let rel = rel_ident(k);
            quote! {
                let #rel = #df::latest(input.clone().flat_map(|(fact, instruction)| match fact {
                    #fact_enum::#name(#ty(#(#columns),*)) => ::core::option::Option::Some((#row, instruction)),
                    #[allow(unreachable_patterns)]
                    _ => ::core::option::Option::None,
                }));
            }
        });
        let components = self
            .components()
            .into_iter()
            .map(|(members, recursive)| self.component(&members, recursive));
        let derived: Vec<usize> = (0..self.program.relations.len())
            .filter(|&k| !self.relation(k).input)
            .collect();
        let outputs = derived.iter().map(|&k| {
            let relation = self.relation(k);
            let (name, ty) = (&relation.name, self.ty(relation));
            let columns = column_idents(relation.columns.len());
            let row = tuple(&columns);
            let values = leaving(&relation.columns, &columns);
            let rel = rel_ident(k);
            quote!(#rel.map(|#row| #fact_enum::#name(#ty(#(#values),*))))
        });
        let names: Vec<&Ident> = self.program.relations.iter().map(|r| &r.name).collect();
        let positions = 0..names.len();
        let empty_deref = self.empty_deref();
        quote! {
            #[allow(
                unused_variables,
                unreachable_code,
                clippy::clone_on_copy,
                clippy::redundant_clone,
                clippy::unused_unit
            )]
            impl #df::Dataflow for #program
            where
                #(for<'dred> #own_types: #df::differential_dataflow::ExchangeData,)*
            {
                fn dataflow<'scope>(
                    input: #df::Facts<'scope, #df::Time, (#fact_enum, #df::Instruction)>,
                    unit: #df::Facts<'scope, #df::Time, ()>,
                ) -> #df::Facts<'scope, #df::Time, #fact_enum> {
                    let scope = unit.scope();
                    #(#inputs)*
                    #(#components)*
                    unit.flat_map(|()| ::core::option::Option::None::<#fact_enum>)
                        #(.concat(#outputs))*
                }

                fn relation_of(fact: &#fact_enum) -> usize {
                    match #empty_deref fact { #(#fact_enum::#names(_) => #positions,)* }
                }

                fn tsv_line(fact: &#fact_enum) -> ::std::string::String {
                    let mut line = ::std::string::String::new();
                    match #empty_deref fact {
                        #(#fact_enum::#names(fact) => #rt::Record::write_tsv(fact, &mut line),)*
                    }
                    line
                }
            }
        }
    }

    /// The derived relations in components of mutual dependence, each after the components
    /// it reads, with whether it is recursive.
    fn components(&self) -> Vec<(Vec<usize>, bool)> {
        let n = self.program.relations.len();
        // reaches[a][b]: a's facts depend on b's, through one rule or more.
        let mut reaches = vec![vec![false; n]; n];
        for rule in &self.program.rules {
            for atom in &rule.body {
                reaches[rule.head.relation][atom.relation] = true;
            }
        }
        for via in 0..n {
            let through = reaches[via].clone();
            for row in reaches.iter_mut().filter(|row| row[via]) {
                for (reach, &more) in row.iter_mut().zip(&through) {
                    *reach |= more;
                }
            }
        }
        let mut left: Vec<usize> = (0..n).filter(|&k| !self.relation(k).input).collect();
        let mut components = Vec::new();
        while !left.is_empty() {
            // A relation that reads nothing still unplaced outside its own component.
            let ready = left
                .iter()
                .copied()
                .find(|&a| left.iter().all(|&b| !reaches[a][b] || reaches[b][a]))
                .expect("components of mutual dependence form an acyclic graph");
            let members: Vec<usize> = left
                .iter()
                .copied()
                .filter(|&b| b == ready || (reaches[ready][b] && reaches[b][ready]))
                .collect();
            left.retain(|b| !members.contains(b));
            components.push((members, reaches[ready][ready]));
        }
        components
    }

    /// One component's relations, bound to their `rel_k` names in the outer scope: a
    /// recursive one from an iterative scope. A rule of a recursive component that reads
    /// none of its relations (an exit rule) is joined outside the scope and its heads
    /// entered, as a hand-written dataflow does: inside, its joins would run with the
    /// loop's timestamps, for facts that only ever arrive at its first iteration.
    fn component(&self, members: &[usize], recursive: bool) -> TokenStream {
        if !recursive {
            let k = members[0];
            let (rel, body) = (rel_ident(k), self.relation_rules(k));
            return quote!(let #rel = #body;);
        }
        let reads_component =
            |rule: &ir::Rule| (rule.body.iter()).any(|atom| members.contains(&atom.relation));
        let rels: Vec<Ident> = members.iter().map(|&k| rel_ident(k)).collect();
        let variables: Vec<Ident> = members
            .iter()
            .map(|&k| format_ident!("var_{}", k))
            .collect();
        let nexts: Vec<Ident> = members
            .iter()
            .map(|&k| format_ident!("next_{}", k))
            .collect();
        let exits: Vec<Ident> = members
            .iter()
            .map(|&k| format_ident!("exit_{}", k))
            .collect();
        let exit_rules = members.iter().map(|&k| {
            let rules = self
                .rules_of(k)
                .filter(|(_, rule)| !reads_component(rule))
                .map(|(i, rule)| self.rule_dataflow(i, rule, &[]));
            let row_ty = self.wire_row_ty(k);
            quote! {
                unit.clone().flat_map(|()| ::core::option::Option::None::<#row_ty>)
                    #(.concat(#rules))*
            }
        });
        let mut outer: Vec<usize> = self
            .program
            .rules
            .iter()
            .filter(|rule| members.contains(&rule.head.relation) && reads_component(rule))
            .flat_map(|rule| rule.body.iter().map(|atom| atom.relation))
            .filter(|k| !members.contains(k))
            .collect();
        outer.sort_unstable();
        outer.dedup();
        let entered = outer.iter().map(|&k| {
            let rel = rel_ident(k);
            quote!(let #rel = #rel.clone().enter(inner);)
        });
        let bodies = members.iter().zip(&exits).map(|(&k, exit)| {
            let rules = self
                .rules_of(k)
                .filter(|(_, rule)| reads_component(rule))
                .map(|(i, rule)| self.rule_dataflow(i, rule, members));
            quote!(#exit.enter(inner) #(.concat(#rules))* .distinct())
        });
        let df = self.df();
        quote! {
            #(let #exits = #exit_rules;)*
            let (#(#rels,)*) = scope.iterative::<u64, _, _>(|inner| {
                let step = #df::timely::order::Product::new(::core::default::Default::default(), 1);
                let unit = unit.clone().enter(inner);
                #(#entered)*
                #(let (#variables, #rels) = #df::differential_dataflow::operators::iterate::Variable::new(inner, step.clone());)*
                #(let #nexts = #bodies;)*
                #(#variables.set(#nexts.clone());)*
                (#(#nexts.leave(scope),)*)
            });
        }
    }

    /// The path of the runtime's `dataflow` module.
    fn df(&self) -> TokenStream {
        let rt = &self.rt;
        quote!(#rt::dataflow)
    }

    /// The tuple type of relation `k`'s rows inside the dataflow.
    fn wire_row_ty(&self, k: usize) -> TokenStream {
        let types: Vec<TokenStream> = (self.relation(k).columns.iter())
            .map(|c| self.wire_ty(c))
            .collect();
        tuple(&types)
    }

    /// The type in which `column`'s values travel inside the dataflow: their own, but a
    /// `&'static str`'s, which travels as a `StaticStr`.
    fn wire_ty(&self, column: &ir::Column) -> TokenStream {
        let df = self.df();
        match is_static_str(column) {
            true => quote!(#df::StaticStr),
            false => column.ty.to_token_stream(),
        }
    }

    /// The fact's column `values` (bound by value), as they enter the dataflow.
    fn entering(&self, columns: &[ir::Column], values: &[TokenStream]) -> Vec<TokenStream> {
        let df = self.df();
        map_static_strs(columns, values, |value| quote!(#df::StaticStr(#value)))
    }

    /// The union of the rules deriving non-recursive relation `k`, made distinct.
    fn relation_rules(&self, k: usize) -> TokenStream {
        let row_ty = self.wire_row_ty(k);
        let rules = self
            .rules_of(k)
            .map(|(i, rule)| self.rule_dataflow(i, rule, &[]));
        quote! {
            unit.clone().flat_map(|()| ::core::option::Option::None::<#row_ty>)
                #(.concat(#rules))*
                .distinct()
        }
    }

    /// Rule `i`'s head tuples: its body joined step by step, starting from its first atom
    /// of `component` (if any), in the order of its plan's delta join from there.
    fn rule_dataflow(&self, i: usize, rule: &ir::Rule, component: &[usize]) -> TokenStream {
        let plan = &self.plan.rules[i];
        let start = rule
            .body
            .iter()
            .position(|atom| component.contains(&atom.relation))
            .unwrap_or(0);
        let mut bound: Vec<usize> = Vec::new();
        let mut chain = quote!(unit.clone());
        let mut first = true;
        if let Some(join) = plan.deltas.get(start) {
            for (s, step) in join.steps.iter().enumerate() {
                // What the steps after this one and the head read: the only variables a
                // join's output carries on, so that no arrangement holds a dead one.
                let later: Vec<usize> = join.steps[s + 1..]
                    .iter()
                    .flat_map(|step| &step.columns)
                    .filter_map(|use_| match use_ {
                        ColumnUse::Bind(v) | ColumnUse::Check(v) => Some(*v),
                        _ => None,
                    })
                    .chain(rule.head.terms.iter().filter_map(|t| match t {
                        Term::Var(v) => Some(*v),
                        _ => None,
                    }))
                    .collect();
                let atom = &rule.body[step.atom];
                let columns = column_idents(atom.terms.len());
                let row = tuple(&columns);
                let rel = rel_ident(atom.relation);
                let mut filters = Vec::new();
                let mut key: Vec<usize> = Vec::new();
                let mut fresh: Vec<usize> = Vec::new();
                for (c, use_) in step.columns.iter().enumerate() {
                    let column = &columns[c];
                    match use_ {
                        ColumnUse::Bind(v) => fresh.push(*v),
                        ColumnUse::Check(v) => {
                            if bound.contains(v) && !key.contains(v) {
                                key.push(*v);
                            } else {
                                let earlier = &columns[first_column(&step.columns, *v)];
                                filters.push(quote!(#column == #earlier));
                            }
                        }
                        ColumnUse::Const => {
                            let Term::Const(constant) = &atom.terms[c] else {
                                unreachable!("a constant column holds a constant")
                            };
                            let of = &self.relation(atom.relation).columns[c];
                            filters.push(equals_constant(column, of, constant));
                        }
                        ColumnUse::Ignore => {}
                    }
                }
                let live = |vars: &[usize]| -> Vec<usize> {
                    vars.iter().copied().filter(|v| later.contains(v)).collect()
                };
                let carried: Vec<usize> = live(&bound)
                    .into_iter()
                    .filter(|v| !key.contains(v))
                    .collect();
                let (kept_key, kept_fresh) = (live(&key), live(&fresh));
                let binds = |vars: &[usize]| -> Vec<TokenStream> {
                    vars.iter()
                        .map(|&v| {
                            let column = &columns[first_column(&step.columns, v)];
                            quote!(::std::clone::Clone::clone(#column))
                        })
                        .collect()
                };
                let (key_values, fresh_values) = (tuple(&binds(&key)), tuple(&binds(&kept_fresh)));
                let rows = quote! {
                    #rel.clone().flat_map(|row| {
                        let #row = &row;
                        if true #(&& #filters)* {
                            ::core::option::Option::Some((#key_values, #fresh_values))
                        } else {
                            ::core::option::Option::None
                        }
                    })
                };
                let before = tuple(&vars(rule, &bound));
                let key_vars = tuple(&vars(rule, &key));
                let (carried_vars, carried_owned) =
                    (tuple(&vars(rule, &carried)), tuple(&owned(rule, &carried)));
                let key_owned = tuple(&owned(rule, &key));
                let fresh_vars = tuple(&vars(rule, &kept_fresh));
                bound = carried
                    .into_iter()
                    .chain(kept_key)
                    .chain(kept_fresh)
                    .collect();
                let after = tuple(&owned(rule, &bound));
                chain = if first {
                    quote!(#rows.map(|row| { let (_, #fresh_vars) = &row; #after }))
                } else {
                    quote! {
                        #chain
                            .map(|row| { let #before = &row; (#key_owned, #carried_owned) })
                            .join_map(#rows, |#key_vars, #carried_vars, #fresh_vars| #after)
                    }
                };
                first = false;
            }
        }
        let before = tuple(&vars(rule, &bound));
        let head_relation = self.relation(rule.head.relation);
        let head = rule
            .head
            .terms
            .iter()
            .zip(&head_relation.columns)
            .map(|(term, column)| match term {
                Term::Var(v) => {
                    let var = var(rule, *v);
                    quote!(::std::clone::Clone::clone(#var))
                }
                Term::Const(constant) => self.constant(column, constant),
                Term::Wildcard => unreachable!("a head has no `_`"),
            });
        let head = tuple(&head.collect::<Vec<_>>());
        quote!(#chain.map(|row| { let #before = &row; #head }))
    }

    /// A constant as an owned value of `column`'s type inside the dataflow.
    fn constant(&self, column: &ir::Column, constant: &ir::Const) -> TokenStream {
        let (value, ty, df) = (&constant.expr, &column.ty, self.df());
        match column.class {
            TypeClass::Str { owned: true } => quote!(::std::string::String::from(#value)),
            TypeClass::Str { owned: false } => quote!(#df::StaticStr(#value)),
            _ => quote!({ let value: #ty = #value; value }),
        }
    }
}

/// Whether a column is of a type of the user's own: not one whose serde traits the runtime
/// knows (integers, `bool`, `char`, the strings and `dred::Symbol`).
fn is_own_type(column: &ir::Column) -> bool {
    column.class == TypeClass::Other
        && !matches!(
            column.ty_text.as_str(),
            "Symbol" | "dred::Symbol" | "::dred::Symbol" | "dred::runtime::Symbol"
        )
}

/// Whether `column` is a `&'static str`, which travels inside the dataflow as a
/// `StaticStr`.
fn is_static_str(column: &ir::Column) -> bool {
    column.class == TypeClass::Str { owned: false }
}

/// A fact's column `values` (bound by value) from the dataflow, as its relation's struct
/// holds them.
fn leaving(columns: &[ir::Column], values: &[TokenStream]) -> Vec<TokenStream> {
    map_static_strs(columns, values, |value| quote!(#value.0))
}

/// The column `values`, those of `&'static str` columns through `convert`.
fn map_static_strs(
    columns: &[ir::Column],
    values: &[TokenStream],
    convert: impl Fn(&TokenStream) -> TokenStream,
) -> Vec<TokenStream> {
    columns
        .iter()
        .zip(values)
        .map(|(column, value)| match is_static_str(column) {
            true => convert(value),
            false => value.clone(),
        })
        .collect()
}

/// Whether the value of `column` (bound by reference to its value in the dataflow) is
/// `constant`: strings compare as `&str`, with no owned copy of the constant.
fn equals_constant(value: &TokenStream, column: &ir::Column, constant: &ir::Const) -> TokenStream {
    let (constant, ty) = (&constant.expr, &column.ty);
    match column.class {
        TypeClass::Str { owned: true } => quote!(#value.as_str() == #constant),
        TypeClass::Str { owned: false } => quote!(#value.0 == #constant),
        _ => quote!(*#value == { let value: #ty = #constant; value }),
    }
}

/// The first column of a step that holds variable `v`.
fn first_column(columns: &[ColumnUse], v: usize) -> usize {
    columns
        .iter()
        .position(|use_| matches!(use_, ColumnUse::Bind(w) | ColumnUse::Check(w) if *w == v))
        .expect("the step holds the variable")
}

fn column_idents(n: usize) -> Vec<TokenStream> {
    (0..n)
        .map(|c| {
            let c = format_ident!("c{}", c);
            quote!(#c)
        })
        .collect()
}

fn rel_ident(k: usize) -> Ident {
    format_ident!("rel_{}", k)
}

fn var(rule: &ir::Rule, v: usize) -> Ident {
    format_ident!("v_{}", rule.vars[v])
}

/// The variables as patterns (bound by reference in join closures).
fn vars(rule: &ir::Rule, vars: &[usize]) -> Vec<TokenStream> {
    vars.iter()
        .map(|&v| {
            let var = var(rule, v);
            quote!(#var)
        })
        .collect()
}

/// The variables (bound by reference), cloned.
fn owned(rule: &ir::Rule, vars: &[usize]) -> Vec<TokenStream> {
    vars.iter()
        .map(|&v| {
            let var = var(rule, v);
            quote!(::std::clone::Clone::clone(#var))
        })
        .collect()
}
