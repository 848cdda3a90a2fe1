//! Codegen: the relation structs, the fact set and fact enum types, the program type, and
//! one join function per rule and per purpose (delta firing, head-bound rederivation).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Ident, Index};

use crate::ir::{self, TypeClass};
use crate::plan::{Access, ColumnUse, HeadFirst, Join, Plan, ScanInstead, Step};

/// The most indexes a tuple of the runtime's `IndexSet` impls holds.
const INDEX_TUPLE: usize = 12;

pub fn generate(program: &ir::Program, plan: &Plan) -> TokenStream {
    let cx = Context::new(program, plan);
    let own = |module: Option<&Ident>| {
        let structs = program
            .relations
            .iter()
            .filter(move |r| !r.external && r.module.as_ref() == module)
            .map(|r| cx.relation_struct(r));
        quote!(#(#structs)*)
    };
    let mut relation_structs = own(None);
    if let Some(module) = program.relations.iter().find_map(|r| r.module.as_ref()) {
        let structs = own(Some(module));
        let vis = &program.vis;
        let doc = format!(
            " The relations the magic-set rewrite `{}` generates.",
            program.name
        );
        relation_structs.extend(quote! {
            #[doc = #doc]
            #vis mod #module {
                #[allow(unused_imports)]
                use super::*;
                #structs
            }
        });
    }
    let layouts = cx.index_layouts();
    let program_type = cx.program_type();
    let fact_sets = cx.fact_sets();
    let fact_enum = cx.fact_enum();
    let program_impl = cx.program_impl();
    let inherent = cx.inherent_impl();
    let answers = program.answers.as_ref().map(|a| cx.answers_impl(a));
    quote! {
        #answers
        #relation_structs
        #layouts
        #program_type
        #fact_sets
        #fact_enum
        #program_impl
        #inherent
    }
}

struct Context<'a> {
    program: &'a ir::Program,
    plan: &'a Plan,
    rt: TokenStream,
    facts: Ident,
    fact_enum: Ident,
}

impl<'a> Context<'a> {
    fn new(program: &'a ir::Program, plan: &'a Plan) -> Self {
        Context {
            program,
            plan,
            rt: quote!(::dred::runtime),
            facts: format_ident!("{}Facts", program.name),
            fact_enum: format_ident!("{}Fact", program.name),
        }
    }

    /// `*` where a `match` on a reference to the fact enum must see that it has no variants
    /// (a program without relations); nothing otherwise.
    fn empty_deref(&self) -> TokenStream {
        if self.program.relations.is_empty() {
            quote!(*)
        } else {
            quote!()
        }
    }

    /// The relation's struct as a type path (a query's relations live in its module).
    fn ty(&self, relation: &ir::Relation) -> TokenStream {
        let name = &relation.name;
        match &relation.module {
            Some(module) => quote!(#module::#name),
            None => quote!(#name),
        }
    }

    fn tys(&self) -> Vec<TokenStream> {
        self.program.relations.iter().map(|r| self.ty(r)).collect()
    }

    /// Whether relation `r`'s index rows hold only the columns outside their key (see
    /// `dred_runtime::Index`): when every column is a plain value, so that a fact rebuilt
    /// from a key and a row costs nothing.
    fn compact(&self, r: usize) -> bool {
        self.relation(r).columns.iter().all(|c| {
            matches!(
                c.class,
                TypeClass::Int { .. }
                    | TypeClass::Char
                    | TypeClass::Bool
                    | TypeClass::Str { owned: false }
            )
        })
    }

    /// The columns of relation `r` outside index `index`'s key, in order.
    fn rest_columns(&self, r: usize, index: usize) -> Vec<usize> {
        let key = &self.plan.indexes[r][index];
        (0..self.relation(r).columns.len())
            .filter(|c| !key.contains(c))
            .collect()
    }

    /// The unit struct that lays out index `index` of relation `r` (see
    /// `dred_runtime::IndexLayout`).
    fn layout_name(&self, r: usize, index: usize) -> Ident {
        format_ident!(
            "__Dred{}{}Index{}",
            self.program.name,
            self.relation(r).name,
            index
        )
    }

    /// The type of index `index` of relation `r`.
    fn index_ty(&self, r: usize, index: usize) -> TokenStream {
        let rt = &self.rt;
        let (ty, layout) = (self.ty(self.relation(r)), self.layout_name(r, index));
        quote!(#rt::Index<#ty, #layout>)
    }

    /// Every index's layout: its key columns, and what its rows keep (the other columns of
    /// a compact relation, else whole facts).
    fn index_layouts(&self) -> TokenStream {
        let rt = &self.rt;
        let vis = &self.program.vis;
        let stamped = self.stamped_indexes();
        let stamped = &stamped;
        let layouts = (0..self.program.relations.len()).flat_map(|r| {
            (0..self.plan.indexes[r].len()).map(move |index| {
                let stamps = stamped.contains(&(r, index)).then(|| {
                    quote!(
                        const STAMPED: bool = true;
                    )
                });
                let lazy = (!self.plan.eager[r][index]).then(|| {
                    quote!(
                        const EAGER: bool = false;
                    )
                });
                let relation = self.relation(r);
                let (ty, layout) = (self.ty(relation), self.layout_name(r, index));
                let key_columns = &self.plan.indexes[r][index];
                let column_ty = |c: usize| &relation.columns[c].ty;
                let key_tys = key_columns.iter().map(|&c| column_ty(c));
                let key: Vec<Index> = key_columns.iter().map(|&c| Index::from(c)).collect();
                let at = (0..key.len()).map(Index::from);
                let (row_ty, row) = if self.compact(r) {
                    let rest = self.rest_columns(r, index);
                    let rest_tys = rest.iter().map(|&c| column_ty(c));
                    let rest: Vec<Index> = rest.iter().map(|&c| Index::from(c)).collect();
                    (
                        quote!((#(#rest_tys,)*)),
                        quote!((#(::std::clone::Clone::clone(&fact.#rest),)*)),
                    )
                } else {
                    (ty.clone(), quote!(::std::clone::Clone::clone(fact)))
                };
                let leads = key_columns
                    .iter()
                    .copied()
                    .eq(0..key_columns.len())
                    .then(|| {
                        quote!(
                            const KEY_LEADS: bool = true;
                        )
                    });
                // Only an index whose key leads is built from the bitset.
                let from_columns = leads.as_ref().and_then(|_| self.fact_from_columns(r));
                let doc = format!(
                    " How `{}` lays out its index {index} on `{}`.",
                    self.program.name, relation.name
                );
                quote! {
                    #[doc = #doc]
                    #[doc(hidden)]
                    #[allow(non_camel_case_types)]
                    #[derive(Debug, Clone, Copy)]
                    #vis struct #layout;
                    impl #rt::IndexLayout<#ty> for #layout {
                        type Key = (#(#key_tys,)*);
                        type Row = #row_ty;
                        #[inline]
                        fn hash(fact: &#ty) -> u64 {
                            #rt::key_hash(&(#(&fact.#key,)*))
                        }
                        #[inline]
                        fn matches(key: &Self::Key, fact: &#ty) -> bool {
                            true #(&& key.#at == fact.#key)*
                        }
                        #[inline]
                        fn key(fact: &#ty) -> Self::Key {
                            (#(::std::clone::Clone::clone(&fact.#key),)*)
                        }
                        #[inline]
                        fn row(fact: &#ty) -> Self::Row {
                            #row
                        }
                        #stamps
                        #lazy
                        #leads
                        #from_columns
                    }
                }
            })
        });
        quote!(#(#layouts)*)
    }

    /// `IndexLayout::fact_from_columns` for relation `r`, if its columns are all integers
    /// (of at most 64 bits), chars and bools: the types whose `Hash` writes one integer,
    /// which the runtime's bitset reads as the column. A signed integer writes its bits
    /// as the unsigned integer of its width, which `as` gives back.
    fn fact_from_columns(&self, r: usize) -> Option<TokenStream> {
        let (ty, body) = (self.ty(self.relation(r)), self.rebuild_from_columns(r)?);
        Some(quote! {
            #[inline]
            fn fact_from_columns(columns: &[u64]) -> ::core::option::Option<#ty> {
                #body
            }
        })
    }

    /// The body of a function from `columns: &[u64]` to `Option` of relation `r`'s fact,
    /// if its columns are all integers (of at most 64 bits), chars and bools (see
    /// [`Self::fact_from_columns`]).
    fn rebuild_from_columns(&self, r: usize) -> Option<TokenStream> {
        let relation = self.relation(r);
        let columns = relation
            .columns
            .iter()
            .enumerate()
            .map(|(at, column)| {
                let value = quote!(columns[#at]);
                let ty = &column.ty;
                match column.class {
                    TypeClass::Int { bits, .. } if bits <= 64 => Some(quote!(#value as #ty)),
                    TypeClass::Char => Some(quote!(::core::char::from_u32(#value as u32)?)),
                    TypeClass::Bool => Some(quote!(#value != 0)),
                    _ => None,
                }
            })
            .collect::<Option<Vec<_>>>()?;
        if columns.is_empty() {
            return None;
        }
        let (ty, count) = (self.ty(relation), relation.columns.len());
        Some(quote! {
            if columns.len() != #count {
                return ::core::option::Option::None;
            }
            ::core::option::Option::Some(#ty(#(#columns),*))
        })
    }

    /// How relation `r`'s indexes group into tuples of at most [`INDEX_TUPLE`] (the
    /// runtime's `IndexSet` impls): one tuple, or a tuple of such tuples.
    fn index_groups(&self, r: usize) -> Vec<Vec<usize>> {
        let count = self.plan.indexes[r].len();
        let indexes: Vec<usize> = (0..count).collect();
        indexes.chunks(INDEX_TUPLE).map(<[usize]>::to_vec).collect()
    }

    /// The type of relation `r`'s index set: a tuple of its indexes, or a tuple of such
    /// tuples.
    fn index_set_ty(&self, r: usize) -> TokenStream {
        let tuple = |group: &Vec<usize>| {
            let items = group.iter().map(|&i| self.index_ty(r, i));
            quote!((#(#items,)*))
        };
        match self.index_groups(r).as_slice() {
            [] => quote!(()),
            [only] => tuple(only),
            groups => {
                let tuples = groups.iter().map(tuple);
                quote!((#(#tuples,)*))
            }
        }
    }

    /// A closure from relation `r`'s index set to its index `index`.
    fn index_path(&self, r: usize, index: usize) -> TokenStream {
        let at = Index::from(index % INDEX_TUPLE);
        if self.plan.indexes[r].len() <= INDEX_TUPLE {
            quote!(|indexes| &indexes.#at)
        } else {
            let group = Index::from(index / INDEX_TUPLE);
            quote!(|indexes| &indexes.#group.#at)
        }
    }

    /// A probe of `step`'s index, by `method` (`probe` or `probe_before_latest`), in `rule`:
    /// the rows of the bucket of the key the step knows.
    fn probe(&self, rule: &ir::Rule, step: &Step, method: &str) -> TokenStream {
        let Access::Probe { index, key } = &step.access else {
            unreachable!("a probe step has a key")
        };
        let atom = &rule.body[step.atom];
        let name = &self.relation(atom.relation).name;
        let path = self.index_path(atom.relation, *index);
        let hash = self.key_hash(rule, step);
        let method = format_ident!("{}", method);
        let is_key = key.iter().enumerate().map(|(i, &column)| {
            let i = Index::from(i);
            let value = self.key_column(rule, atom, step, column, KeyForm::Compared);
            quote!(key.#i == #value)
        });
        quote!(self.#name.#method(#path, #hash, |key| true #(&& #is_key)*))
    }

    /// The fact of a compact index's row `stored` for `step`'s probe: its key columns from
    /// what the step knows, the others from the row.
    fn rebuild(&self, rule: &ir::Rule, step: &Step, stored: &Ident) -> TokenStream {
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
    fn fact_of_row(
        &self,
        r: usize,
        index: usize,
        stored: &Ident,
        key_column: impl Fn(usize, usize) -> TokenStream,
    ) -> TokenStream {
        let key = &self.plan.indexes[r][index];
        let rest = self.rest_columns(r, index);
        let relation = self.relation(r);
        let ty = self.ty(relation);
        let values =
            (0..relation.columns.len()).map(|column| match key.iter().position(|&k| k == column) {
                Some(at) => key_column(at, column),
                None => {
                    let at = rest.iter().position(|&c| c == column);
                    let at = Index::from(at.expect("a column outside the key"));
                    quote!(#stored.#at)
                }
            });
        quote!(#ty(#(#values),*))
    }

    /// Whether `step` probes a compact index (its rows are rebuilt into facts).
    fn probes_compact(&self, rule: &ir::Rule, step: &Step) -> bool {
        matches!(step.access, Access::Probe { .. }) && self.compact(rule.body[step.atom].relation)
    }

    fn relation(&self, index: usize) -> &ir::Relation {
        &self.program.relations[index]
    }

    /// Relation indices sorted by name: the order of reports and ground fact lists.
    fn by_name(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.program.relations.len()).collect();
        order.sort_by_key(|&r| self.relation(r).name.to_string());
        order
    }

    fn relation_struct(&self, relation: &ir::Relation) -> TokenStream {
        let rt = &self.rt;
        let ir::Relation {
            attrs, vis, name, ..
        } = relation;
        let name_text = name.to_string();
        let columns = relation.columns.iter().map(|c| {
            let (attrs, vis, ty) = (&c.attrs, &c.vis, &c.ty);
            quote!(#(#attrs)* #vis #ty)
        });
        let ids: Vec<Index> = (0..relation.columns.len()).map(Index::from).collect();
        let types: Vec<&syn::Type> = relation.columns.iter().map(|c| &c.ty).collect();
        let arity = relation.columns.len();
        let write_fields = ids.iter().zip(&types).map(|(id, ty)| {
            let separator = (id.index > 0).then(|| quote!(out.push('\t');));
            quote! {
                #separator
                (&#rt::text::ColumnText::<#ty>::new()).write_column(&self.#id, out);
            }
        });
        let parse_fields = ids.iter().zip(&types).map(|(id, ty)| {
            let position = id.index as usize;
            quote! {
                (&#rt::text::ColumnText::<#ty>::new())
                    .parse_column(fields[#position])
                    .map_err(|message| #rt::text::FieldError { field: Some(#position), message })?
            }
        });
        quote! {
            #(#attrs)*
            // A column type lacking one of these is reported by the derive, on the type.
            #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
            #vis struct #name(#(#columns),*);

            #[automatically_derived]
            impl #rt::Record for #name {
                const NAME: &'static str = #name_text;
                fn render_values(&self) -> ::std::vec::Vec<::std::string::String> {
                    ::std::vec![#(#rt::text::render_value(&self.#ids)),*]
                }
                #[allow(unused_imports)]
                fn write_tsv(&self, out: &mut ::std::string::String) {
                    use #rt::text::{ViaNoText as _, ViaTextValue as _};
                    #(#write_fields)*
                }
                #[allow(unused_imports)]
                fn parse_text(fields: &[&str]) -> ::std::result::Result<Self, #rt::text::FieldError> {
                    use #rt::text::{ViaNoText as _, ViaTextValue as _};
                    if fields.len() != #arity {
                        return ::std::result::Result::Err(#rt::text::FieldError {
                            field: None,
                            message: ::std::format!(
                                "`{}` has {} column(s), {} value(s) given", #name_text, #arity, fields.len()
                            ),
                        });
                    }
                    ::std::result::Result::Ok(#name(#(#parse_fields),*))
                }
            }
        }
    }

    fn program_type(&self) -> TokenStream {
        let rt = &self.rt;
        let ir::Program {
            attrs, vis, name, ..
        } = self.program;
        let fields = self.program.relations.iter().enumerate().map(|(i, r)| {
            let (field, ty, indexes) = (&r.name, self.ty(r), self.index_set_ty(i));
            quote!(#field: #rt::Relation<#ty, #indexes>)
        });
        quote! {
            #(#attrs)*
            #[allow(non_snake_case)]
            #[derive(Debug, Clone)]
            #vis struct #name {
                #(#fields,)*
                __dred: #rt::Bookkeeping,
            }
        }
    }

    fn fact_sets(&self) -> TokenStream {
        let rt = &self.rt;
        let empty_deref = self.empty_deref();
        let (vis, program, facts) = (&self.program.vis, &self.program.name, &self.facts);
        let fact_enum = &self.fact_enum;
        let names: Vec<&Ident> = self.program.relations.iter().map(|r| &r.name).collect();
        let tys = self.tys();
        let doc = format!(
            "One set of facts per relation of [`{program}`]: the shape of update batches, rounds and report entries."
        );
        let derived = self.program.relations.iter().map(|r| {
            let name = &r.name;
            if r.input {
                quote!(#name: ::std::default::Default::default())
            } else {
                quote!(#name: self.#name.clone())
            }
        });
        let inputs = self
            .program
            .relations
            .iter()
            .filter(|r| r.input)
            .map(|r| &r.name);
        let sorted: Vec<&Ident> = self
            .by_name()
            .into_iter()
            .map(|r| &self.relation(r).name)
            .collect();
        let text_arms = self.program.relations.iter().map(|r| {
            let (name, ty) = (&r.name, self.ty(r));
            let text = name.to_string();
            quote! {
                #text => {
                    self.#name.insert(<#ty as #rt::Record>::parse_text(values)?);
                    ::std::result::Result::Ok(())
                }
            }
        });
        quote! {
            #[doc = #doc]
            #[allow(non_snake_case)]
            #[derive(Default, Clone, Debug)]
            #vis struct #facts { #(#[doc = "Facts of this relation."] pub #names: #rt::FactSet<#tys>,)* }

            impl #rt::FactSets for #facts {
                type Fact = #fact_enum;

                fn len(&self) -> usize { 0 #(+ self.#names.len())* }
                fn union_with(&mut self, other: &Self) {
                    #(#rt::program::union_sets(&mut self.#names, &other.#names);)*
                }
                fn subtract(&mut self, other: &Self) {
                    #(#rt::program::subtract_sets(&mut self.#names, &other.#names);)*
                }
                fn clear(&mut self) {
                    #(self.#names.clear();)*
                }
                fn reserve_half_of(&mut self, other: &Self) {
                    #(self.#names.reserve(other.#names.len() / 2);)*
                }
                fn recycle_for(&mut self, like: &Self) {
                    #(#rt::program::recycle_set(&mut self.#names, like.#names.len());)*
                }
                fn derived_part(&self) -> Self { Self { #(#derived,)* } }
                fn into_derived_part(mut self) -> Self {
                    #(self.#inputs = ::std::default::Default::default();)*
                    self
                }
                fn write_sorted(&self, out: &mut ::std::string::String) {
                    #(#rt::program::write_sorted(out, &self.#sorted);)*
                }
                fn ground(&self) -> ::std::vec::Vec<#rt::GroundFact> {
                    let mut ground = ::std::vec::Vec::with_capacity(#rt::FactSets::len(self));
                    #(#rt::program::extend_ground(&mut ground, &self.#sorted);)*
                    ground
                }
                fn to_vec(&self) -> ::std::vec::Vec<#fact_enum> {
                    let mut facts = ::std::vec::Vec::with_capacity(#rt::FactSets::len(self));
                    #(facts.extend(#rt::program::sorted(&self.#sorted).into_iter().cloned().map(#fact_enum::#sorted));)*
                    facts
                }
                fn contains_fact(&self, fact: &#fact_enum) -> bool {
                    match #empty_deref fact { #(#fact_enum::#names(fact) => self.#names.contains(fact),)* }
                }
                fn insert_fact(&mut self, fact: #fact_enum) -> bool {
                    match fact { #(#fact_enum::#names(fact) => self.#names.insert(fact),)* }
                }
                fn insert_text(&mut self, relation: &str, values: &[&str]) -> ::std::result::Result<(), #rt::text::FieldError> {
                    match relation {
                        #(#text_arms)*
                        _ => ::std::result::Result::Err(#rt::text::FieldError {
                            field: None,
                            message: ::std::format!("no relation named `{relation}`"),
                        }),
                    }
                }
            }
        }
    }

    fn fact_enum(&self) -> TokenStream {
        let rt = &self.rt;
        let empty_deref = self.empty_deref();
        let (vis, program, fact_enum) = (&self.program.vis, &self.program.name, &self.fact_enum);
        let names: Vec<&Ident> = self.program.relations.iter().map(|r| &r.name).collect();
        let tys = self.tys();
        let doc = format!("A fact of any relation of [`{program}`].");
        quote! {
            #[doc = #doc]
            #[allow(non_camel_case_types)]
            #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
            #vis enum #fact_enum { #(#[doc = "A fact of this relation."] #names(#tys),)* }

            #(
                impl ::std::convert::From<#tys> for #fact_enum {
                    fn from(fact: #tys) -> Self { #fact_enum::#names(fact) }
                }
            )*

            /// `Name(v1,v2)`, values as the trace format renders them.
            impl ::std::fmt::Display for #fact_enum {
                fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                    match #empty_deref self {
                        #(#fact_enum::#names(fact) => ::std::write!(
                            f, "{}({})", <#tys as #rt::Record>::NAME,
                            #rt::Record::render_values(fact).join(",")
                        ),)*
                    }
                }
            }
        }
    }

    fn program_impl(&self) -> TokenStream {
        let rt = &self.rt;
        let empty_deref = self.empty_deref();
        let (program, facts) = (&self.program.name, &self.facts);
        let relations = &self.program.relations;
        let names: Vec<&Ident> = relations.iter().map(|r| &r.name).collect();
        let tys = self.tys();
        let input_names = relations.iter().filter(|r| r.input).map(|r| &r.name);
        let input_names2: Vec<&Ident> = relations
            .iter()
            .filter(|r| r.input)
            .map(|r| &r.name)
            .collect();
        let input_tys = relations.iter().filter(|r| r.input).map(|r| self.ty(r));
        let derived_names = relations.iter().filter(|r| !r.input).map(|r| &r.name);
        let index_set_tys: Vec<TokenStream> =
            (0..relations.len()).map(|r| self.index_set_ty(r)).collect();
        let infos = relations.iter().map(|r| {
            let name = r.name.to_string();
            let columns = r.columns.iter().map(|c| &c.ty_text);
            let input = r.input;
            quote!(#rt::RelationInfo { name: #name, columns: &[#(#columns),*], input: #input })
        });
        let rules = self.program.rules.iter().map(|rule| self.rule_info(rule));
        // Every index set is a tuple (of tuples) of indexes, none built by default.
        let empties = relations.iter().enumerate().map(|(r, relation)| {
            let name = &relation.name;
            // A column of these types hashes as one integer, and equal integers are equal.
            let integers = relation.columns.iter().all(|c| {
                matches!(
                    c.class,
                    TypeClass::Int { bits: ..=64, .. } | TypeClass::Char | TypeClass::Bool
                )
            });
            let bitset = integers.then(|| quote!(.with_bitset()));
            let dense = self.rebuild_from_columns(r).map(|body| {
                let ty = self.ty(relation);
                quote!(.with_facts_from_columns({
                    fn rebuild(columns: &[u64]) -> ::core::option::Option<#ty> { #body }
                    rebuild
                }))
            });
            quote!(#name: #rt::Relation::with_indexes(::core::default::Default::default()).with_storage(settings.storage()) #bitset #dense)
        });
        let constants = self
            .program
            .rules
            .iter()
            .filter(|rule| rule.body.is_empty())
            .map(|rule| {
                let name = &self.relation(rule.head.relation).name;
                let head = self.construct(&rule.head, &rule.vars);
                quote!(facts.#name.insert(#head);)
            });
        let tsv_arms = names.iter().map(|name| {
            let text = name.to_string();
            quote!(#text => { #rt::program::write_relation_tsv(out, &self.#name); ::std::result::Result::Ok(()) })
        });
        let fire_calls = self
            .program
            .rules
            .iter()
            .enumerate()
            .filter(|(_, rule)| !rule.body.is_empty())
            .map(|(i, rule)| {
                let fire = format_ident!("fire_rule_{}", i);
                let call = quote!(self.#fire(delta, admit, out, stamped, work););
                if self.is_closure(rule.head.relation) {
                    // Its losses are found by reachability (`Program::closure_losses`).
                    quote!(if !(admit.has_causes() && self.__dred.reachability) { #call })
                } else {
                    call
                }
            });
        let closure_fns = (!self.plan.closures.is_empty()).then(|| self.closure_fns());
        let derivable =
            relations
                .iter()
                .enumerate()
                .filter(|(_, r)| !r.input)
                .map(|(r, relation)| {
                    let name = &relation.name;
                    let checks = self.rule_fns_of(r, "derives_rule");
                    if checks.is_empty() {
                        quote!()
                    } else {
                        quote! {
                            for head in &candidates.#name {
                                if work.exhausted() {
                                    return derived;
                                }
                                if #(self.#checks(head, work))||* {
                                    derived.#name.insert(::std::clone::Clone::clone(head));
                                }
                            }
                        }
                    }
                });
        let unsupported =
            relations
                .iter()
                .enumerate()
                .filter(|(_, r)| !r.input)
                .map(|(r, relation)| {
                    let name = &relation.name;
                    let fact_enum = &self.fact_enum;
                    let rules: Vec<_> = self.rules_of(r).collect();
                    let sorter = self.sorting_rule(r);
                    let checks = rules.iter().map(|&(i, _)| {
                        let check = format_ident!("support_rule_{}", i);
                        quote!(self.#check(head, bound, work))
                    });
                    let check_head = quote! {
                        if work.exhausted() {
                            return (unsupported, levels);
                        }
                        let mut lowest = u64::MAX;
                        #(
                            if lowest > u64::from(bound) {
                                lowest = lowest.min(#checks);
                            }
                        )*
                        if lowest <= u64::from(bound) {
                            continue;
                        }
                        match #rt::Stamp::try_from(lowest) {
                            ::std::result::Result::Ok(level) if level < #rt::Stamp::MAX => {
                                levels.push((#fact_enum::#name(::std::clone::Clone::clone(head)), level));
                            }
                            _ => {
                                unsupported.#name.insert(::std::clone::Clone::clone(head));
                            }
                        }
                    };
                    let heads = quote! {
                        candidates.iter().filter_map(|(fact, stamp)| match fact {
                            #fact_enum::#name(head) => ::core::option::Option::Some((head, *stamp)),
                            _ => ::core::option::Option::None,
                        })
                    };
                    let walk = match sorter {
                        None => quote! {
                            // Sized for the worst case (every candidate unsupported), so
                            // that a large round never grows the set step by step.
                            unsupported.#name.reserve(#heads.count());
                            for (head, bound) in #heads {
                                #check_head
                            }
                        },
                        Some((i, ..)) => {
                            let first_hash = format_ident!("first_hash_rule_{}", i);
                            quote! {
                                // Checks that walk one bucket first run together, its rows
                                // still in cache; a head of another rule comes last.
                                let mut heads: ::std::vec::Vec<(u64, _, #rt::Stamp)> = #heads
                                    .map(|(head, stamp)| (self.#first_hash(head).unwrap_or(u64::MAX), head, stamp))
                                    .collect();
                                heads.sort_unstable_by_key(|&(hash, ..)| hash);
                                unsupported.#name.reserve(heads.len());
                                for (_, head, bound) in heads {
                                    #check_head
                                }
                            }
                        }
                    };
                    walk
                });
        let rule_fns = self
            .program
            .rules
            .iter()
            .enumerate()
            .map(|(i, rule)| self.rule_fns(i, rule));
        let fact_enum = &self.fact_enum;
        let input_flags = relations.iter().map(|r| r.input);
        let instance_fns = (0..relations.len()).map(|r| self.rule_fns_of(r, "instances_rule"));
        quote! {
            #[automatically_derived]
            impl #rt::Program for #program {
                type Facts = #facts;
                const RELATIONS: &'static [#rt::RelationInfo] = &[#(#infos),*];
                const RULES: &'static [#rt::RuleInfo] = &[#(#rules),*];

                fn empty(settings: #rt::Settings) -> Self {
                    #program {
                        #(#empties,)*
                        __dred: #rt::Bookkeeping { settings, ..::std::default::Default::default() },
                    }
                }
                #[allow(unused_mut)]
                fn constant_facts() -> #facts {
                    let mut facts = <#facts as ::std::default::Default>::default();
                    #(#constants)*
                    facts
                }
                fn insert_facts(&mut self, facts: &#facts, stamp: #rt::Stamp) {
                    #(self.#names.insert_all(&facts.#names, stamp);)*
                }
                fn bookkeeping(&self) -> &#rt::Bookkeeping {
                    &self.__dred
                }
                fn bookkeeping_mut(&mut self) -> &mut #rt::Bookkeeping {
                    &mut self.__dred
                }
                fn remove_facts(&mut self, facts: &#facts) {
                    #(self.#names.remove_all(&facts.#names);)*
                }
                fn retire_facts(&mut self, facts: &#facts) {
                    #(self.#names.retire_all(&facts.#names);)*
                }
                fn settle(&mut self) {
                    #(self.#names.settle();)*
                }
                fn finish_materialization(&mut self) {
                    #(self.#names.finish_materialization();)*
                }
                fn forget_risen(&mut self) {
                    #(self.#names.forget_risen();)*
                }
                fn retain_held(&self, facts: &mut #facts, held: bool) {
                    #(facts.#names.retain(|fact| self.#names.contains(fact) == held);)*
                }
                fn all_facts(&self) -> #facts {
                    #facts { #(#names: self.#names.to_set(),)* }
                }
                #[allow(clippy::needless_update)]
                fn input_facts(&self) -> #facts {
                    #facts {
                        #(#input_names2: self.#input_names2.to_set(),)*
                        ..::std::default::Default::default()
                    }
                }
                fn fact_count(&self) -> usize {
                    0 #(+ self.#names.len())*
                }
                fn into_rooms(self) -> ::std::vec::Vec<#rt::Room> {
                    ::std::vec![#(self.#names.into_room()),*]
                }
                #[allow(unused_mut, unused_variables)]
                fn reserve_rooms(&mut self, rooms: ::std::vec::Vec<#rt::Room>) {
                    let mut rooms = rooms.into_iter();
                    #(self.#names.reserve_room(rooms.next().unwrap_or_default());)*
                }
                fn input_count(&self) -> usize {
                    0 #(+ self.#input_names2.len())*
                }
                fn write_tsv(&self, relation: &str, out: &mut ::std::string::String) -> ::std::result::Result<(), #rt::TextError> {
                    match relation {
                        #(#tsv_arms)*
                        _ => ::std::result::Result::Err(#rt::TextError::new(::std::format!("no relation named `{relation}`"))),
                    }
                }
                #[allow(unused_variables)]
                fn fire(&self, delta: &#facts, admit: #rt::Admit<&#facts>, out: &mut #facts, stamped: &mut ::std::vec::Vec<(#fact_enum, #rt::Stamp)>, work: &mut #rt::Work) {
                    #(#fire_calls)*
                }
                #[allow(unused_mut)]
                fn derivable(&self, candidates: &#facts, work: &mut #rt::Work) -> #facts {
                    let mut derived = <#facts as ::std::default::Default>::default();
                    #(#derivable)*
                    derived
                }
                #[allow(unused_mut, unused_variables, unreachable_patterns)]
                fn check_support(&self, candidates: &[(#fact_enum, #rt::Stamp)], work: &mut #rt::Work) -> (#facts, ::std::vec::Vec<(#fact_enum, #rt::Stamp)>) {
                    let mut unsupported = <#facts as ::std::default::Default>::default();
                    let mut levels = ::std::vec::Vec::new();
                    #(#unsupported)*
                    (unsupported, levels)
                }
                #closure_fns
                fn restamp(&mut self, fact: &#fact_enum, stamp: #rt::Stamp) {
                    match #empty_deref fact { #(#fact_enum::#names(fact) => self.#names.restamp(fact, stamp),)* }
                }
                fn is_input(fact: &#fact_enum) -> bool {
                    match #empty_deref fact { #(#fact_enum::#names(_) => #input_flags,)* }
                }
                fn holds(&self, fact: &#fact_enum) -> bool {
                    match #empty_deref fact { #(#fact_enum::#names(fact) => self.#names.contains(fact),)* }
                }
                #[allow(unused_variables)]
                fn sample_derived(&self, per_relation: usize, out: &mut ::std::vec::Vec<#fact_enum>) {
                    #(out.extend(self.#derived_names.sample(per_relation).into_iter().map(|fact| #fact_enum::#derived_names(::std::borrow::Cow::into_owned(fact))));)*
                }
                #[allow(unused_variables)]
                fn instances(&self, head: &#fact_enum, visit: &mut dyn FnMut(usize, &[#fact_enum]) -> bool) -> bool {
                    match #empty_deref head { #(#fact_enum::#names(head) => false #(|| self.#instance_fns(head, visit))*,)* }
                }
            }

            #[allow(non_snake_case, unused_variables, clippy::all)]
            impl #program {
                #(#rule_fns)*
            }

            #(
                impl #rt::InputFact<#facts> for #input_tys {
                    fn add_to(self, facts: &mut #facts) { facts.#input_names.insert(self); }
                }
            )*

            #(
                impl #rt::HasRelation<#tys> for #program {
                    type Indexes = #index_set_tys;
                    fn relation(&self) -> &#rt::Relation<#tys, #index_set_tys> { &self.#names }
                }
            )*
        }
    }

    /// Whether relation `r` is a [`crate::plan::Closure`].
    fn is_closure(&self, r: usize) -> bool {
        self.plan.closures.iter().any(|c| c.relation == r)
    }

    /// `Program::closure_losses` and `Program::closures_dense`, for a program with
    /// [`crate::plan::Closure`]s.
    fn closure_fns(&self) -> TokenStream {
        let rt = &self.rt;
        let facts = &self.facts;
        // The edges of a set of facts as pairs of values.
        let pairs = |facts: TokenStream| {
            let clone = quote!(::std::clone::Clone::clone);
            quote!(#facts.iter().map(|fact| (#clone(&fact.0), #clone(&fact.1))))
        };
        let (mut losses, mut dense) = (Vec::new(), Vec::new());
        for closure in &self.plan.closures {
            let relation = self.relation(closure.relation);
            let (name, ty) = (&relation.name, self.ty(relation));
            let edges = &self.relation(closure.edges).name;
            let all_edges = pairs(quote!(self.#edges));
            let deleted = pairs(quote!(deletions.#edges));
            losses.push(quote! {
                if !deletions.#edges.is_empty() {
                    let deleted = #deleted;
                    let left = limit - ::std::cmp::min(limit, #rt::FactSets::len(lost_facts));
                    let ::std::option::Option::Some(lost) = #rt::closure::lost_pairs(#all_edges, deleted, self.#name.len(), left) else {
                        return false;
                    };
                    lost_facts.#name.reserve(lost.len());
                    lost_facts.#name.extend(lost.into_iter().map(|(x, z)| #ty(x, z)));
                }
            });
            dense.push(quote!(#rt::closure::dense_enough(#all_edges, self.#name.len())));
        }
        quote! {
            fn closure_losses(&self, deletions: &#facts, lost_facts: &mut #facts, limit: usize) -> bool {
                #(#losses)*
                true
            }
            fn closures_dense(&self) -> bool {
                true #(&& #dense)*
            }
        }
    }

    /// The names (`{kind}_{i}`) of one per-rule function for every rule whose head is
    /// relation `relation`.
    fn rule_fns_of(&self, relation: usize, kind: &str) -> Vec<Ident> {
        self.rules_of(relation)
            .map(|(i, _)| format_ident!("{}_{}", kind, i))
            .collect()
    }

    /// The rules deriving `relation`, with their positions.
    fn rules_of(&self, relation: usize) -> impl Iterator<Item = (usize, &ir::Rule)> {
        self.program
            .rules
            .iter()
            .enumerate()
            .filter(move |(_, rule)| rule.head.relation == relation)
    }

    fn rule_info(&self, rule: &ir::Rule) -> TokenStream {
        let atom_info = |atom: &ir::Atom| {
            let relation = self.relation(atom.relation).name.to_string();
            let rt = &self.rt;
            let terms = atom.terms.iter().map(|term| match term {
                ir::Term::Var(v) => {
                    let name = rule.vars[*v].to_string();
                    quote!(#rt::TermInfo::Var(#name))
                }
                ir::Term::Wildcard => quote!(#rt::TermInfo::Wildcard),
                ir::Term::Const(c) => match &c.text {
                    Some(text) => quote!(#rt::TermInfo::Const(::std::option::Option::Some(#text))),
                    None => quote!(#rt::TermInfo::Const(::std::option::Option::None)),
                },
            });
            quote!(#rt::AtomInfo { relation: #relation, terms: &[#(#terms),*] })
        };
        let rt = &self.rt;
        let head = atom_info(&rule.head);
        let body = rule.body.iter().map(atom_info);
        let text = &rule.text;
        quote!(#rt::RuleInfo { head: #head, body: &[#(#body),*], text: #text })
    }

    /// The delta-firing and head-bound derivability functions of one rule.
    fn rule_fns(&self, index: usize, rule: &ir::Rule) -> TokenStream {
        let rt = &self.rt;
        let facts = &self.facts;
        let fact_enum = &self.fact_enum;
        let head_relation = &self.relation(rule.head.relation).name;
        let head_ty = self.ty(self.relation(rule.head.relation));
        let plan = &self.plan.rules[index];
        let doc = format!("`{}`", rule.text);

        let fire = (!rule.body.is_empty()).then(|| {
            let fire = format_ident!("fire_rule_{}", index);
            let variants = plan.deltas.iter().zip(&plan.head_first).zip(&plan.scans).map(|((join, head_first), scan)| {
                let position = join.delta.expect("a delta join has a delta atom");
                let delta_relation = &self.relation(rule.body[position].relation).name;
                let emit = self.head_emit(rule, join);
                let pending = format_ident!("pending");
                let body = emit.around(
                    &pending,
                    self.join_code(rule, join, &emit.emit(&pending), Mode::Live),
                );
                if let Some(scan) = scan {
                    let choice = self.scan_choice(scan, delta_relation);
                    let emit = self.head_emit(rule, &scan.join);
                    let scan_body = emit.around(
                        &pending,
                        self.join_code(rule, &scan.join, &emit.emit(&pending), Mode::Live),
                    );
                    return quote! {
                        if !delta.#delta_relation.is_empty() {
                            if #choice { #scan_body } else { #body }
                        }
                    };
                }
                let Some(head_first) = head_first else {
                    return quote! {
                        if !delta.#delta_relation.is_empty() { #body }
                    };
                };
                // A loss of support walks the heads first where that reads fewer facts;
                // the delta facts it leaves run the body-first join.
                let delta_ty = self.ty(self.relation(rule.body[position].relation));
                let heads_first = self.head_first_code(rule, join, head_first);
                let leftover = quote!(leftover.iter().copied());
                let pending = format_ident!("pending_leftover");
                let body_over_leftover = emit.around(
                    &pending,
                    self.join_code_over(rule, join, &emit.emit(&pending), Mode::Live, Some(&leftover)),
                );
                quote! {
                    if !delta.#delta_relation.is_empty() {
                        if admit.has_causes() {
                            let joins = self.__dred.settings.held_joins();
                            let by_cost = joins == #rt::HeldJoins::ByCost;
                            let mut leftover: ::std::vec::Vec<&#delta_ty> = ::std::vec::Vec::new();
                            if joins == #rt::HeldJoins::BodyFirst {
                                leftover.extend(delta.#delta_relation.iter());
                            } else {
                                #heads_first
                            }
                            if !leftover.is_empty() {
                                #body_over_leftover
                            }
                        } else {
                            #body
                        }
                    }
                }
            });
            // Whether a probe may leave out the delta's own facts (see `join_code`).
            let scans = plan.scans.iter().flatten().map(|scan| &scan.join);
            let before_latest = plan
                .deltas
                .iter()
                .chain(scans)
                .any(|join| join.steps.iter().any(|step| walks_before_delta(join, step)))
                .then(|| quote!(let before_latest = admit.delta_is_latest_batch();));
            quote! {
                #[doc = #doc]
                #[inline(never)]
                #[allow(unused_variables)]
                fn #fire(&self, delta: &#facts, admit: #rt::Admit<&#facts>, out: &mut #facts, stamped: &mut ::std::vec::Vec<(#fact_enum, #rt::Stamp)>, work: &mut #rt::Work) {
                    #before_latest
                    let admit = admit.project(|facts| &facts.#head_relation);
                    #(#variants)*
                }
            }
        });

        let derives = format_ident!("derives_rule_{}", index);
        let head_match = self.head_match(rule, &quote!(false));
        let head_match_level = self.head_match(rule, &quote!(u64::MAX));
        let body = self.join_code(rule, &plan.derive, &quote!(return true;), Mode::Live);
        let supports = format_ident!("support_rule_{}", index);
        let level_found = quote! {
            if level <= u64::from(bound) {
                return level;
            }
            lowest = lowest.min(level);
        };
        let support = self.join_code(rule, &plan.derive, &level_found, Mode::Supports);

        // Only the rule that orders its relation's candidates (`sorting_rule`) hashes them.
        let sorts = self
            .sorting_rule(rule.head.relation)
            .is_some_and(|(sorting, ..)| sorting == index);
        let first_hash = sorts.then(|| {
            let first_hash = format_ident!("first_hash_rule_{}", index);
            let head_match_key = self.head_match(rule, &quote!(::core::option::Option::None));
            let key_hash = self.key_hash(rule, &plan.derive.steps[0]);
            quote! {
                /// The key hash of the bucket this rule's support check walks first, if
                /// `head` matches the rule's head.
                #[inline]
                fn #first_hash(&self, head: &#head_ty) -> ::core::option::Option<u64> {
                    #head_match_key
                    ::core::option::Option::Some(#key_hash)
                }
            }
        });
        let instances = format_ident!("instances_rule_{}", index);
        let fact_enum = &self.fact_enum;
        let body_facts = (0..rule.body.len()).map(|position| {
            let step = plan
                .derive
                .steps
                .iter()
                .position(|s| s.atom == position)
                .expect("every body atom has a step");
            let row = format_ident!("row{}", step);
            let relation = &self.relation(rule.body[position].relation).name;
            quote!(#fact_enum::#relation(::std::clone::Clone::clone(#row)))
        });
        let visit = quote! {
            if visit(#index, &[#(#body_facts),*]) {
                return true;
            }
        };
        let enumerate = self.join_code(rule, &plan.derive, &visit, Mode::Live);
        quote! {
            #fire

            #[doc = #doc]
            #[inline(never)]
            fn #instances(&self, head: &#head_ty, visit: &mut dyn FnMut(usize, &[#fact_enum]) -> bool) -> bool {
                let work = &mut #rt::Work::unlimited();
                #head_match
                #enumerate
                false
            }

            #[doc = #doc]
            #[inline(never)]
            #[allow(unreachable_code)]
            fn #derives(&self, head: &#head_ty, work: &mut #rt::Work) -> bool {
                #head_match
                #body
                false
            }

            /// The lowest level of this rule's instances for `head` (one more than the
            /// largest stamp of their derived body facts, 0 without any; `u64::MAX` if none
            /// holds), stopping at the first instance at most `bound`: a support.
            #[doc = #doc]
            #[inline(never)]
            #[allow(unreachable_code, unused_mut, unused_assignments)]
            fn #supports(&self, head: &#head_ty, bound: #rt::Stamp, work: &mut #rt::Work) -> u64 {
                #head_match_level
                let mut lowest = u64::MAX;
                let level = 0u64;
                #support
                lowest
            }

            #first_hash
        }
    }

    /// Whether a delta of `delta_relation` takes `scan`'s join: while the indexes it
    /// spares are unbuilt, and scanning costs less than building them.
    fn scan_choice(&self, scan: &ScanInstead, delta_relation: &Ident) -> TokenStream {
        let scanned = &self.relation(scan.scanned).name;
        let built = scan.spared.iter().map(|&(r, index)| {
            let name = &self.relation(r).name;
            let path = self.index_path(r, index);
            quote!(self.#name.index_is_built(#path))
        });
        let mut spared_relations: Vec<usize> = scan.spared.iter().map(|&(r, _)| r).collect();
        spared_relations.sort_unstable();
        spared_relations.dedup();
        let sizes = spared_relations.iter().map(|&r| {
            let name = &self.relation(r).name;
            quote!(self.#name.len())
        });
        quote! {
            !(false #(|| #built)*)
                && delta.#delta_relation.len().saturating_mul(self.#scanned.len()) <= 0 #(+ #sizes)*
        }
    }

    /// What the fire join `join` of `rule` does with each head it finds.
    fn head_emit(&self, rule: &ir::Rule, join: &Join) -> HeadEmit {
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
            quote!(.max(self.#name.counted_on(#row).map_or(0, |(before, _)| before)))
        });
        HeadEmit {
            rt: self.rt.clone(),
            head: self.construct(&rule.head, &rule.vars),
            head_relation: self.relation(rule.head.relation).name.clone(),
            fact_enum: self.fact_enum.clone(),
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
    fn head_first_code(
        &self,
        rule: &ir::Rule,
        body_first: &Join,
        head_first: &HeadFirst,
    ) -> TokenStream {
        let rt = &self.rt;
        let fact_enum = &self.fact_enum;
        let mut extended = rule.clone();
        extended.body.push(rule.head.clone());
        let join = &head_first.join;
        let (delta_step, head_step) = (&join.steps[0], &join.steps[HeadFirst::HEAD_STEP]);
        let delta_atom = &extended.body[delta_step.atom];
        let delta_relation = &self.relation(delta_atom.relation).name;
        let head_relation = &self.relation(rule.head.relation).name;
        let (row0, row1) = (format_ident!("row0"), format_ident!("row1"));
        let delta_filters = self.filters(&extended, delta_atom, delta_step, &row0);
        let delta_binds = binds(rule, delta_step, &row0);
        let head_binds = binds(rule, head_step, &row1);
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
        let key_columns = key_vars.iter().map(|v| {
            let column = delta_step
                .columns
                .iter()
                .position(|use_| *use_ == ColumnUse::Bind(*v))
                .expect("the head's key variables are the delta's");
            Index::from(column)
        });
        let key_binds = key_vars.iter().enumerate().map(|(i, &v)| {
            let var = var_ident(&rule.vars[v]);
            let i = Index::from(i);
            quote!(let #var = key.#i;)
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
            #rt::program::heads_in_range(bucket.kept_stamps(), &mut emitted, cause, limit, &mut in_range)
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
                let fact = self.construct(atom, &rule.vars);
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
                    work.visit(1);
                    #test
                }
            })
            .collect::<Vec<_>>();
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
                            if #rt::program::held_admits(stamp, cause, || 0 #(#floors)*) {
                                emitted[at] = true;
                                if out.#head_relation.insert(::std::clone::Clone::clone(#row1)) {
                                    stamped.push((#fact_enum::#head_relation(::std::clone::Clone::clone(#row1)), stamp));
                                }
                            }
                        }
                    }
                }
            }
        };
        let keyed = keyed_delta(
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

    /// Binds the head's variables from a given head fact; returns `mismatch` on a mismatch.
    fn head_match(&self, rule: &ir::Rule, mismatch: &TokenStream) -> TokenStream {
        let mut first_column = vec![None; rule.vars.len()];
        let mut code = TokenStream::new();
        for (k, term) in rule.head.terms.iter().enumerate() {
            let id = Index::from(k);
            match term {
                ir::Term::Const(c) => {
                    let value = &c.expr;
                    code.extend(quote!(if head.#id != #value { return #mismatch; }));
                }
                ir::Term::Var(v) => match first_column[*v] {
                    Some(first) => {
                        let first = Index::from(first);
                        code.extend(quote!(if head.#id != head.#first { return #mismatch; }));
                    }
                    None => {
                        first_column[*v] = Some(k);
                        let var = var_ident(&rule.vars[*v]);
                        code.extend(quote!(let #var = &head.#id;));
                    }
                },
                ir::Term::Wildcard => unreachable!("checked: no `_` in heads"),
            }
        }
        code
    }

    /// Nested loops for `join.steps`, running `innermost` per complete match.
    fn join_code(
        &self,
        rule: &ir::Rule,
        join: &Join,
        innermost: &TokenStream,
        mode: Mode,
    ) -> TokenStream {
        self.join_code_over(rule, join, innermost, mode, None)
    }

    /// [`Context::join_code`], the delta step walking `delta_rows` (references to facts)
    /// rather than the delta's set when given.
    fn join_code_over(
        &self,
        rule: &ir::Rule,
        join: &Join,
        innermost: &TokenStream,
        mode: Mode,
        delta_rows: Option<&TokenStream>,
    ) -> TokenStream {
        let slots = probe_slots(join, Bound::BeforeJoin);
        let code = self.step_code(rule, join, 0, innermost, mode, delta_rows);
        quote!(#(#slots)* #code)
    }

    /// The nested loops of `join.steps[step..]` (see [`Context::join_code_over`]).
    fn step_code(
        &self,
        rule: &ir::Rule,
        join: &Join,
        step: usize,
        innermost: &TokenStream,
        mode: Mode,
        delta_rows: Option<&TokenStream>,
    ) -> TokenStream {
        let Some(current) = join.steps.get(step) else {
            return innermost.clone();
        };
        if let Some(grouped) = self.grouped_delta(rule, join, step, innermost, delta_rows) {
            return grouped;
        }
        let inner = self.step_code(rule, join, step + 1, innermost, mode, delta_rows);
        let slots = probe_slots(join, Bound::AtStep(step));
        let inner = quote!(#(#slots)* #inner);
        let atom = &rule.body[current.atom];
        let body_relation = self.relation(atom.relation);
        let relation = &body_relation.name;
        let row = format_ident!("row{}", step);
        // An instance's level is one more than the largest stamp of its derived body facts
        // (input facts need no support); looking a stamp up also tells whether a derived
        // fact holds. Facts may be retired: an index can still return them, so input
        // facts are checked too. A partial instance whose level already reaches the lowest
        // found cannot be a support (that one was not) nor a lower level, so its later steps
        // are skipped.
        let reads_stamp = mode == Mode::Supports && !body_relation.input;
        // A fully bound atom's fact, made from the variables, is often absent (in
        // non-linear closure over a chain, one edge deleted, 73% of the `R(y, z)` that
        // support checks looked up); a row read from an index is held unless retired.
        let stamp_of = if matches!(current.access, Access::Contains) {
            quote!(stamp_maybe_absent)
        } else {
            quote!(stamp)
        };
        let with_level = |inner: TokenStream| {
            if reads_stamp {
                quote! {
                    if let ::core::option::Option::Some(stamp) = self.#relation.#stamp_of(#row) {
                        let level = level.max(u64::from(stamp) + 1);
                        if level < lowest {
                            #inner
                        }
                    }
                }
            } else {
                inner
            }
        };
        // A delta's facts all hold (see `Program::fire`), so only rows read from the
        // relations may be retired.
        let support_filters = if reads_stamp || matches!(current.access, Access::Delta) {
            vec![]
        } else {
            vec![quote!(self.#relation.live(#row))]
        };

        match &current.access {
            Access::Contains => {
                let fact = self.construct(atom, &rule.vars);
                // A membership test never sees retired facts.
                let test = if reads_stamp {
                    with_level(inner)
                } else {
                    quote!(if self.#relation.contains(#row) { #inner })
                };
                quote! {
                    {
                        let #row = &#fact;
                        work.visit(1);
                        #test
                    }
                }
            }
            access => {
                let source = match access {
                    Access::Delta => delta_source(relation, delta_rows),
                    Access::Scan => quote!(self.#relation.iter()),
                    // Semi-naive: in the variant whose delta is atom i, the atoms before i
                    // match only facts older than the delta when it is the latest batch, so
                    // an instance with several delta facts is found once.
                    Access::Probe { .. } if walks_before_delta(join, current) => {
                        let before = self.probe(rule, current, "probe_before_latest");
                        let all = self.probe(rule, current, "probe");
                        quote! {
                            if before_latest { #before } else { #all }
                        }
                    }
                    Access::Probe { .. } => self.probe(rule, current, "probe"),
                    Access::Contains => unreachable!(),
                };
                let source = match probe_slot(join, step) {
                    Some(slot) => quote!(*#slot.get_or_insert_with(|| #source)),
                    None => source,
                };
                let mut filters = self.filters(rule, atom, current, &row);
                filters.extend(support_filters);
                // A delta fact's stamp decides which heads it may have supported; a derived
                // delta's are looked up ahead of the rows (`Admit::with_causes`).
                let derived_delta = matches!(access, Access::Delta) && !body_relation.input;
                let cause = match access {
                    Access::Delta => quote!(let cause = ::core::option::Option::None;),
                    _ => quote!(),
                };
                let binds = binds(rule, current, &row);
                // Work is rows visited: counted per probe, but per row where a support
                // check may stop early.
                let matched = with_level(quote!(#(#binds)* #inner));
                let (per_probe, mut per_row) = match mode {
                    Mode::Live => (quote!(work.visit(rows.len() as u64);), quote!()),
                    Mode::Supports => (quote!(), quote!(work.visit(1);)),
                };
                // A fire join stops between delta facts once the budget is spent.
                if matches!(access, Access::Delta) {
                    per_row.extend(quote!(if work.exhausted() {
                        return;
                    }));
                }
                // A compact index's rows are rebuilt into facts, which live for the row.
                let compact = self.probes_compact(rule, current);
                let (each, rebuilt) = if compact {
                    let stored = format_ident!("stored{}", step);
                    let fact = format_ident!("fact{}", step);
                    let rebuild = self.rebuild(rule, current, &stored);
                    (stored, quote!(let #fact = #rebuild; let #row = &#fact;))
                } else if matches!(access, Access::Scan) {
                    // A scan's facts are borrowed, or rebuilt if the relation keeps them dense.
                    let stored = format_ident!("stored{}", step);
                    (stored.clone(), quote!(let #row = &*#stored;))
                } else {
                    (row.clone(), quote!())
                };
                let plain = quote! {
                    for #each in rows {
                        #rebuilt
                        #per_row
                        if true #(&& #filters)* {
                            #cause
                            #matched
                        }
                    }
                };
                // Only a loss of support has causes; the other phases keep the plain loop
                // (through `with_causes`, which hands them `None`, a linear closure's
                // materialization ran 1% more instructions).
                let walk = if derived_delta {
                    quote! {
                        let rows = #source;
                        #per_probe
                        if admit.has_causes() {
                            for (#row, cause) in admit.with_causes(&self.#relation, rows) {
                                #per_row
                                if true #(&& #filters)* {
                                    #matched
                                }
                            }
                        } else {
                            #plain
                        }
                    }
                } else {
                    quote! {
                        let rows = #source;
                        #per_probe
                        #plain
                    }
                };
                // A support check's first bucket, when its index keeps stamps, is in stamp
                // order (see `dred_runtime::IndexLayout::STAMPED`). The rows older than the
                // head, which alone can support it, come first, youngest first (a support
                // of a closure's fact splits it in two halves about as old as each other,
                // so its first half is among the youngest that qualify); then the rest,
                // oldest first, until a row's level reaches the lowest found (no earlier
                // row's did: theirs are at most `bound`, and `lowest` is above it). Walked
                // in place, not copied once for the checks that share it (non-linear
                // chain, 1 deletion by alternative proofs: 23.2 → 22.2 ms, medians of three
                // alternating runs of `profile_update 2 altproof 1 21`).
                let Access::Probe { index, .. } = current.access else {
                    return walk;
                };
                if !(mode == Mode::Supports
                    && step == 0
                    && self.stamped_indexes().contains(&(atom.relation, index)))
                {
                    return walk;
                }
                let stamped = self.probe(rule, current, "probe_stamped");
                quote! {
                    let rows = #stamped;
                    let stamps = rows.kept_stamps();
                    let older = stamps.partition_point(|&stamp| stamp < bound);
                    for at in (0..older).rev().chain(older..stamps.len()) {
                        let #each = &rows.rows()[at];
                        #rebuilt
                        work.visit(1);
                        let ::core::option::Option::Some(stamp) = rows.stamp(stamps[at], #row) else {
                            continue;
                        };
                        let level = level.max(u64::from(stamp) + 1);
                        if level >= lowest {
                            break;
                        }
                        if true #(&& #filters)* {
                            #(#binds)*
                            #inner
                        }
                    }
                }
            }
        }
    }

    /// The delta step of a fire join, grouped by the values the later steps read: those
    /// steps then run once per group rather than once per delta fact, and the group's facts
    /// meet only the head. A delta of `Pt(q, o)` in `Pt(v, o) <- Load(v, p), Pt(p, q),
    /// Pt(q, o)` visits `Pt(_, q)` once per `q`, not once per `(q, o)`. `None` when the
    /// delta atom has nothing but keys (every fact its own group), or when no later step
    /// walks a derived relation: grouping sorts the delta, which costs more than probing an
    /// input relation's short buckets once per fact (linear TC 1.4 s → 1.7 s if grouped).
    fn grouped_delta(
        &self,
        rule: &ir::Rule,
        join: &Join,
        step: usize,
        innermost: &TokenStream,
        delta_rows: Option<&TokenStream>,
    ) -> Option<TokenStream> {
        let current = &join.steps[step];
        let walks_derived = join.steps[step + 1..].iter().any(|later| {
            let derived = !self.relation(rule.body[later.atom].relation).input;
            derived && matches!(later.access, Access::Probe { .. } | Access::Scan)
        });
        if !matches!(current.access, Access::Delta) || !walks_derived {
            return None;
        }
        let read_later = |v: usize| {
            join.steps[step + 1..]
                .iter()
                .any(|later| later.columns.contains(&ColumnUse::Check(v)))
        };
        let mut keys = Vec::new();
        let mut payload = Vec::new();
        let mut ignored = false;
        for (k, use_) in current.columns.iter().enumerate() {
            match *use_ {
                ColumnUse::Bind(v) if read_later(v) => keys.push((k, v)),
                ColumnUse::Bind(v) => payload.push((k, v)),
                ColumnUse::Ignore => ignored = true,
                ColumnUse::Check(_) | ColumnUse::Const => {}
            }
        }
        if payload.is_empty() && !ignored {
            return None;
        }
        let atom = &rule.body[current.atom];
        let body_relation = self.relation(atom.relation);
        let relation = &body_relation.name;
        let row = format_ident!("row{}", step);
        let filters = self.filters(rule, atom, current, &row);
        let key_columns = keys.iter().map(|&(k, _)| Index::from(k));
        let key_binds = keys.iter().enumerate().map(|(i, &(_, v))| {
            let var = var_ident(&rule.vars[v]);
            let i = Index::from(i);
            quote!(let #var = key.#i;)
        });
        let payload_binds = payload
            .iter()
            .map(|&(k, v)| {
                let var = var_ident(&rule.vars[v]);
                let id = Index::from(k);
                quote!(let #var = &#row.#id;)
            })
            .collect::<Vec<_>>();
        // Only a loss of support (`Admit::Held`) has causes. There, a delta fact's cause is
        // looked up once per group, not once per match of the later steps, into one buffer
        // the size of a group (not beside every key: a materialization's largest delta would
        // sort twice the bytes); the other rules keep the loop without it (reading causes
        // from the buffer slowed non-linear closure's insertion rounds by 12-20%).
        let causes = (!body_relation.input).then(|| {
            quote! {
                causes.clear();
                if admit.has_causes() {
                    causes.extend(group.iter().map(|&(_, #row)| admit.cause(&self.#relation, #row)));
                }
            }
        });
        // Work stays rows visited: a match of the later steps meets every fact of the group,
        // as the ungrouped join would have (the guard compares an update's rows with a
        // materialization's). The budget is asked per fact, as in the ungrouped join: one
        // group's matches times its facts can be a large share of a round.
        let without_causes = quote! {
            for &(_, #row) in group {
                if work.exhausted() {
                    return;
                }
                let cause = ::core::option::Option::None;
                #(#payload_binds)*
                #innermost
            }
        };
        let per_fact = match causes {
            None => quote! {
                work.visit(group.len() as u64);
                #without_causes
            },
            Some(_) => quote! {
                work.visit(group.len() as u64);
                if causes.is_empty() {
                    #without_causes
                } else {
                    for (&(_, #row), &cause) in group.iter().zip(&causes) {
                        if work.exhausted() {
                            return;
                        }
                        #(#payload_binds)*
                        #innermost
                    }
                }
            },
        };
        let rt = &self.rt;
        let causes_buffer = causes.is_some().then(|| {
            quote! {
                let mut causes: ::std::vec::Vec<::core::option::Option<(#rt::Stamp, #rt::Stamp)>> =
                    ::std::vec::Vec::new();
            }
        });
        let inner = self.step_code(rule, join, step + 1, &per_fact, Mode::Live, None);
        let slots = probe_slots(join, Bound::AtStep(step));
        let source = delta_source(relation, delta_rows);
        let groups = quote! {
            for group in #rt::key_runs(&keyed) {
                if work.exhausted() {
                    return;
                }
                #causes
                let key = group[0].0;
                #(#key_binds)*
                #(#slots)*
                #inner
            }
        };
        let keyed = keyed_delta(&source, &row, &filters, key_columns, groups);
        Some(quote! {
            #causes_buffer
            #keyed
        })
    }

    /// Comparisons for constants and already-bound variables, but for a probe's key
    /// columns: index buckets are exact, so a bucket's rows all have its key.
    fn filters(
        &self,
        rule: &ir::Rule,
        atom: &ir::Atom,
        step: &Step,
        row: &Ident,
    ) -> Vec<TokenStream> {
        let key: &[usize] = match &step.access {
            Access::Probe { key, .. } => key,
            _ => &[],
        };
        step.columns
            .iter()
            .enumerate()
            .filter(|(k, _)| !key.contains(k))
            .filter_map(|(k, use_)| {
                let id = Index::from(k);
                match use_ {
                    ColumnUse::Const => {
                        let ir::Term::Const(c) = &atom.terms[k] else {
                            unreachable!()
                        };
                        let value = &c.expr;
                        Some(quote!(#row.#id == #value))
                    }
                    ColumnUse::Check(v) => {
                        // Bound earlier in this same atom: compare with that column.
                        let same_atom = step.columns[..k]
                            .iter()
                            .position(|u| *u == ColumnUse::Bind(*v));
                        Some(match same_atom {
                            Some(first) => {
                                let first = Index::from(first);
                                quote!(#row.#id == #row.#first)
                            }
                            None => {
                                let var = var_ident(&rule.vars[*v]);
                                quote!(#row.#id == *#var)
                            }
                        })
                    }
                    ColumnUse::Bind(_) | ColumnUse::Ignore => None,
                }
            })
            .collect()
    }

    /// The hash of the key a [`Access::Probe`] step looks up.
    fn key_hash(&self, rule: &ir::Rule, step: &Step) -> TokenStream {
        let Access::Probe { key, .. } = &step.access else {
            unreachable!("a probe step has a key")
        };
        let atom = &rule.body[step.atom];
        let key_values = key
            .iter()
            .map(|&k| self.key_column(rule, atom, step, k, KeyForm::Hashed));
        let rt = &self.rt;
        quote!(#rt::key_hash(&(#(#key_values,)*)))
    }

    /// The indexes whose rows keep their stamps (`dred_runtime::IndexLayout::STAMPED`), as
    /// (relation, index): those that support checks walk first with their stamps (the
    /// first such rule of each derived relation sorts its candidates by that bucket), and
    /// the head indexes of head-first joins.
    fn stamped_indexes(&self) -> Vec<(usize, usize)> {
        let mut stamped = Vec::new();
        for r in 0..self.program.relations.len() {
            stamped.extend(self.sorting_rule(r).map(|(i, rule, index)| {
                let first = &self.plan.rules[i].derive.steps[0];
                (rule.body[first.atom].relation, index)
            }));
        }
        for (rule, plan) in self.program.rules.iter().zip(&self.plan.rules) {
            for head_first in plan.head_first.iter().flatten() {
                if let Access::Probe { index, .. } =
                    head_first.join.steps[HeadFirst::HEAD_STEP].access
                {
                    stamped.push((rule.head.relation, index));
                }
            }
        }
        stamped
    }

    /// The rule (its number, itself, and the index its check walks first) whose support
    /// check orders derived relation `r`'s candidates: the first whose check walks a
    /// derived bucket first, so that checks of one bucket run together, its rows in cache.
    fn sorting_rule(&self, r: usize) -> Option<(usize, &ir::Rule, usize)> {
        self.rules_of(r).find_map(|(i, rule)| {
            self.stamped_first(rule, &self.plan.rules[i].derive)
                .map(|index| (i, rule, index))
        })
    }

    /// When a head-bound join's first step walks a derived relation's bucket: that
    /// relation's index. Support checks then read the bucket's stamps in order (see
    /// `dred_runtime::IndexLayout::STAMPED`).
    fn stamped_first(&self, rule: &ir::Rule, join: &Join) -> Option<usize> {
        let first = join.steps.first()?;
        let relation = self.relation(rule.body[first.atom].relation);
        match first.access {
            Access::Probe { index, .. } if !relation.input => Some(index),
            _ => None,
        }
    }

    /// A key column's known value (a bound variable or a constant) in `form`.
    fn key_column(
        &self,
        rule: &ir::Rule,
        atom: &ir::Atom,
        step: &Step,
        column: usize,
        form: KeyForm,
    ) -> TokenStream {
        match step.columns[column] {
            ColumnUse::Check(v) => {
                let var = var_ident(&rule.vars[v]);
                match form {
                    KeyForm::Hashed => quote!(#var),
                    KeyForm::Compared => quote!(*#var),
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
                    KeyForm::Hashed if owned_str => quote!(&#value),
                    KeyForm::Hashed => quote!(&{ let value: #ty = #value; value }),
                    KeyForm::Compared => quote!(#value),
                    KeyForm::Owned if owned_str => quote!(::std::string::String::from(#value)),
                    KeyForm::Owned => quote!({ let value: #ty = #value; value }),
                }
            }
            ColumnUse::Bind(_) | ColumnUse::Ignore => unreachable!("key columns are known"),
        }
    }

    /// An owned fact of `atom`'s relation built from bound variables and constants.
    fn construct(&self, atom: &ir::Atom, vars: &[Ident]) -> TokenStream {
        let relation = self.relation(atom.relation);
        let name = self.ty(relation);
        let values = atom
            .terms
            .iter()
            .zip(&relation.columns)
            .map(|(term, column)| match term {
                ir::Term::Var(v) => {
                    let var = var_ident(&vars[*v]);
                    quote!(::std::clone::Clone::clone(#var))
                }
                ir::Term::Const(c) => {
                    let value = &c.expr;
                    let ty = &column.ty;
                    match column.class {
                        TypeClass::Str { owned: true } => {
                            quote!(::std::string::String::from(#value))
                        }
                        _ => quote!({ let value: #ty = #value; value }),
                    }
                }
                ir::Term::Wildcard => unreachable!("constructed atoms have every column known"),
            });
        quote!(#name(#(#values),*))
    }

    fn inherent_impl(&self) -> TokenStream {
        let rt = &self.rt;
        let (program, facts, fact_enum) = (&self.program.name, &self.facts, &self.fact_enum);
        let names = self.program.relations.iter().map(|r| &r.name);
        let rules_text: String = self
            .program
            .rules
            .iter()
            .map(|rule| format!("{}\n", rule.text))
            .collect();
        quote! {
            #[allow(dead_code)]
            impl #program {
                /// The program's rules as source text, one per line (for a query's program,
                /// the magic-set rewrite that runs).
                pub const RULES_TEXT: &'static str = #rules_text;

                /// The program over no input facts: only what its rules derive from nothing.
                pub fn new() -> Self {
                    #rt::maintain::materialize::<Self>(#rt::Batch::new(), #rt::Trace::Counts).0
                }

                /// [`Self::new`], running with `settings` now and through its recomputes.
                pub fn with_settings(settings: #rt::Settings) -> Self {
                    #rt::maintain::materialize_with_settings::<Self>(#rt::Batch::new(), settings, #rt::Trace::Counts).0
                }

                /// The program's least model over the insertions of `inputs`, built by
                /// semi-naive insertion; the report's insertion round 1 is the inputs and the
                /// program's own facts.
                pub fn materialize(inputs: #rt::Batch<#facts>) -> (Self, #rt::UpdateReport<#facts>) {
                    Self::materialize_with(inputs, #rt::Trace::Rounds)
                }

                /// [`Self::materialize_with`], running with `settings` now and through its
                /// recomputes.
                pub fn materialize_with_settings(
                    inputs: #rt::Batch<#facts>,
                    settings: #rt::Settings,
                    trace: #rt::Trace,
                ) -> (Self, #rt::UpdateReport<#facts>) {
                    #rt::maintain::materialize_with_settings::<Self>(inputs, settings, trace)
                }

                /// The settings the program runs with.
                pub fn settings(&self) -> #rt::Settings {
                    #rt::Program::bookkeeping(self).settings
                }

                /// [`Self::materialize`], keeping only what `trace` asks for in the report:
                /// with [`Trace::Counts`](dred::runtime::Trace::Counts), its rounds are counts, not a
                /// second copy of every fact.
                pub fn materialize_with(inputs: #rt::Batch<#facts>, trace: #rt::Trace) -> (Self, #rt::UpdateReport<#facts>) {
                    #rt::maintain::materialize::<Self>(inputs, trace)
                }

                /// Applies an update batch with DRed: delete first, then insert; reports every
                /// round of over-deletion, rederivation and insertion.
                pub fn update(&mut self, batch: #rt::Batch<#facts>) -> #rt::UpdateReport<#facts> {
                    #rt::maintain::update(self, batch, #rt::Trace::Rounds)
                }

                /// [`Self::update`], keeping only what `trace` asks for in the report.
                pub fn update_with(&mut self, batch: #rt::Batch<#facts>, trace: #rt::Trace) -> #rt::UpdateReport<#facts> {
                    #rt::maintain::update(self, batch, trace)
                }

                /// Applies an update batch with `strategy` (every strategy leaves the same
                /// facts; they differ in work and report), keeping what `trace` asks for.
                pub fn update_using(
                    &mut self,
                    batch: #rt::Batch<#facts>,
                    strategy: #rt::Strategy,
                    trace: #rt::Trace,
                ) -> #rt::UpdateReport<#facts> {
                    #rt::maintain::update_using(self, batch, strategy, trace)
                }

                /// The facts of relation `T`.
                pub fn relation<T: #rt::Tuple>(&self) -> &#rt::Relation<T, <Self as #rt::HasRelation<T>>::Indexes>
                where
                    Self: #rt::HasRelation<T>,
                {
                    #rt::HasRelation::relation(self)
                }

                /// Whether `fact` holds.
                pub fn contains<T: #rt::Tuple>(&self, fact: &T) -> bool
                where
                    Self: #rt::HasRelation<T>,
                {
                    #rt::HasRelation::relation(self).contains(fact)
                }

                /// A copy of every fact, input and derived.
                pub fn facts(&self) -> #facts {
                    #rt::Program::all_facts(self)
                }

                /// An estimate of the heap memory the program's relations hold, in bytes:
                /// the sum of [`Relation::heap_bytes`](dred::runtime::Relation::heap_bytes)
                /// over its relations. Updates that leave the facts as they were leave it
                /// about where it was: retired facts and spare capacity stay bounded.
                pub fn heap_bytes(&self) -> usize {
                    0 #(+ self.#names.heap_bytes())*
                }

                /// A program holding exactly `facts` (inputs and derived), unchecked: the
                /// derived facts must be the least model over the input facts, as DRed
                /// requires. See [`Self::verify`].
                pub fn from_facts_unchecked(facts: &#facts) -> Self {
                    #rt::maintain::from_facts_unchecked(facts)
                }

                /// A well-founded proof of why `fact` holds (an indented tree when displayed),
                /// or [`NotDerived`](dred::runtime::NotDerived) if it does not. Each call recomputes
                /// the ranks it needs; use [`Self::explainer`] to explain many facts.
                pub fn explain(
                    &self,
                    fact: impl ::std::convert::Into<#fact_enum>,
                ) -> ::std::result::Result<::std::rc::Rc<#rt::Proof<#fact_enum>>, #rt::NotDerived<#fact_enum>> {
                    #rt::Explainer::new(self).explain(&fact.into())
                }

                /// An explainer for the current facts: ranks them once, then proves any number
                /// of facts, sharing subproofs.
                pub fn explainer(&self) -> #rt::Explainer<'_, Self> {
                    #rt::Explainer::new(self)
                }

                /// Checks by full recomputation that the derived facts are exactly the least
                /// model over the input facts.
                pub fn verify(&self) -> ::std::result::Result<(), #rt::Mismatch> {
                    #rt::maintain::verify(self)
                }
            }

            impl ::std::default::Default for #program {
                fn default() -> Self { Self::new() }
            }
        }
    }
}

impl Context<'_> {
    /// `answers()` of a rewritten program: its adorned relation's facts that match the
    /// query's bindings, as the original relation's type.
    fn answers_impl(&self, answers: &ir::Answers) -> TokenStream {
        let program = &self.program.name;
        let original = &answers.original;
        let adorned = &self.relation(answers.adorned).name;
        let mut ask_column: Vec<Option<usize>> = Vec::new();
        let mut conditions = Vec::new();
        for (k, column) in answers.columns.iter().enumerate() {
            let id = Index::from(k);
            match column {
                ir::AnswerColumn::Free => {}
                ir::AnswerColumn::Const(c) => {
                    let value = &c.expr;
                    conditions.push(quote!(row.#id == #value));
                }
                ir::AnswerColumn::Param(p) => {
                    if ask_column.len() <= *p {
                        ask_column.resize(*p + 1, None);
                    }
                    match ask_column[*p] {
                        Some(first) => {
                            let first = Index::from(first);
                            conditions.push(quote!(row.#id == row.#first));
                        }
                        None => ask_column[*p] = Some(k),
                    }
                }
            }
        }
        if let Some(ask) = answers.ask {
            let ask = &self.relation(ask).name;
            let values = ask_column.iter().map(|c| {
                let id = Index::from(c.expect("every parameter has a column"));
                quote!(::std::clone::Clone::clone(&row.#id))
            });
            conditions.push(quote!(self.#ask.contains(&#ask(#(#values),*))));
        }
        let columns = (0..answers.columns.len()).map(Index::from);
        let doc =
            format!("The query's answers: facts of `{original}` that match its bindings, sorted.");
        quote! {
            impl #program {
                #[doc = #doc]
                pub fn answers(&self) -> ::std::vec::Vec<#original> {
                    let mut answers: ::std::vec::Vec<#original> = self.#adorned
                        .iter()
                        .filter(|row| true #(&& #conditions)*)
                        .map(|row| #original(#(::std::clone::Clone::clone(&row.#columns)),*))
                        .collect();
                    answers.sort();
                    answers
                }
            }
        }
    }
}

/// What a fire join does with each head it finds: under `Admit::Held`, a loss of support's
/// heads wait in a batch of `HELD_BATCH` (see `emit_held_all`), each with the rows its floor
/// reads (the largest stamp the instance's other derived facts had before this round's
/// raises), unless a floor reads a fact that cannot wait; under the other `Admit`s, they
/// wait in a batch of `ADMIT_BATCH` (see `admit_all`).
struct HeadEmit {
    rt: TokenStream,
    /// The head's construction from the join's variables.
    head: TokenStream,
    head_relation: Ident,
    fact_enum: Ident,
    /// The floor, an expression of `floor_rows`.
    floor: TokenStream,
    floor_rows: Vec<Ident>,
    /// What the batch keeps of each floor row.
    floor_pushed: Vec<TokenStream>,
    batched: bool,
}

impl HeadEmit {
    /// The batch of heads under the `Admit`s other than `Held`, beside `pending`.
    fn admitting(pending: &Ident) -> Ident {
        format_ident!("{}_admitting", pending)
    }

    /// The join's innermost code, with its batches of heads in `pending` and beside it.
    fn emit(&self, pending: &Ident) -> TokenStream {
        let HeadEmit {
            rt,
            head,
            head_relation,
            fact_enum,
            floor,
            floor_pushed,
            ..
        } = self;
        let held = if self.batched {
            let flush = self.flush(pending);
            quote! {
                #pending.push((head, cause, (#(#floor_pushed,)*)));
                if #pending.len() == #rt::program::HELD_BATCH {
                    #flush
                }
            }
        } else {
            quote!(#rt::program::emit_held(&self.#head_relation, head, cause, || #floor, &mut out.#head_relation, stamped, #fact_enum::#head_relation);)
        };
        let admitting = Self::admitting(pending);
        let flush_admitting = self.flush_admitting(&admitting);
        quote! {
            let head = #head;
            if admit.has_causes() {
                #held
            } else if admit_in_batches {
                #admitting.push(head);
                if #admitting.len() == #rt::program::ADMIT_BATCH {
                    #flush_admitting
                }
            } else if admit.admits(&self.#head_relation, &head, cause, || 0) {
                out.#head_relation.insert(head);
            }
        }
    }

    /// `join`, with its batches of heads made before it and flushed after it; twice, one
    /// copy testing heads in batches and one testing them one by one (see
    /// `admits_in_batches`), each a constant in its copy.
    fn around(&self, pending: &Ident, join: TokenStream) -> TokenStream {
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
            if #rt::program::admits_in_batches(&self.#head_relation) {
                let admit_in_batches = true;
                #join
            } else {
                let admit_in_batches = false;
                #join
            }
            #flush_held
            if !#admitting.is_empty() {
                #flush_admitting
            }
        }
    }

    /// The call that tests the heads of the batch `admitting` and adds those admitted.
    fn flush_admitting(&self, admitting: &Ident) -> TokenStream {
        let HeadEmit {
            rt, head_relation, ..
        } = self;
        quote!(#rt::program::admit_all(&admit, &self.#head_relation, &mut #admitting, &mut out.#head_relation);)
    }

    /// The call that tests the heads in `pending` and adds those admitted.
    fn flush(&self, pending: &Ident) -> TokenStream {
        let HeadEmit {
            rt,
            head_relation,
            fact_enum,
            floor,
            floor_rows,
            ..
        } = self;
        quote! {
            #rt::program::emit_held_all(&self.#head_relation, &mut #pending, |(#(#floor_rows,)*)| #floor, &mut out.#head_relation, stamped, #fact_enum::#head_relation);
        }
    }
}

/// How [`Context::key_column`] writes a key column's known value.
#[derive(Clone, Copy)]
enum KeyForm {
    /// A reference with the column's own type, hashed as the index's keys are.
    Hashed,
    /// A value to compare a stored key's column with.
    Compared,
    /// An owned value, for a key or a fact.
    Owned,
}

/// What a join demands of each body fact it matches.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// That it can support a head stamped `bound`, or else at what level it could.
    Supports,
    /// That it holds, though indexes may still hold retired facts.
    Live,
}

/// Where a join has bound every variable of a probe's key (in the order the join binds).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Bound {
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
fn probe_slot(join: &Join, step: usize) -> Option<Ident> {
    probe_home(join, step).map(|_| slot_ident(step))
}

fn slot_ident(step: usize) -> Ident {
    format_ident!("probe{}", step)
}

/// The empty slots of the probes whose keys are bound at `home`, declared there; each is
/// filled by the first walk of its step, so an index is never probed (and built) earlier
/// than the join would have probed it.
fn probe_slots(join: &Join, home: Bound) -> Vec<TokenStream> {
    (0..join.steps.len())
        .filter(|&step| probe_home(join, step) == Some(home))
        .map(|step| {
            let slot = slot_ident(step);
            quote!(let mut #slot = ::core::option::Option::None;)
        })
        .collect()
}

/// Whether `step` of a delta join probes an index for an atom before the delta's (it may then
/// leave out the delta's own facts: `Relation::probe_before_latest` in the runtime).
fn walks_before_delta(join: &Join, step: &Step) -> bool {
    matches!(step.access, Access::Probe { .. }) && join.delta.is_some_and(|delta| step.atom < delta)
}

/// The delta facts a join's delta step walks: `delta_rows` if given, else the delta's set of
/// `relation`.
fn delta_source(relation: &Ident, delta_rows: Option<&TokenStream>) -> TokenStream {
    match delta_rows {
        Some(rows) => rows.clone(),
        None => quote!(delta.#relation.iter()),
    }
}

/// Runs `per_chunk` over `keyed`: the delta facts from `source` that pass `filters`, each
/// beside its values at `key_columns`, sorted by them (for the runtime's `key_runs` to
/// group), the program's `Settings::delta_chunk` facts at a time.
fn keyed_delta(
    source: &TokenStream,
    row: &Ident,
    filters: &[TokenStream],
    key_columns: impl Iterator<Item = Index>,
    per_chunk: TokenStream,
) -> TokenStream {
    quote! {
        let mut rows = #source;
        work.visit(rows.len() as u64);
        let chunk = self.__dred.settings.delta_chunk();
        let mut keyed: ::std::vec::Vec<_> = ::std::vec::Vec::with_capacity(rows.len().min(chunk));
        while rows.len() > 0 {
            keyed.clear();
            keyed.extend(
                rows.by_ref()
                    .take(chunk)
                    .filter(|#row| true #(&& #filters)*)
                    .map(|#row| ((#(&#row.#key_columns,)*), #row)),
            );
            keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            #per_chunk
        }
    }
}

/// `let v_x = &row.k;` for each variable `step` binds from its column `k`.
fn binds(rule: &ir::Rule, step: &Step, row: &Ident) -> Vec<TokenStream> {
    step.columns
        .iter()
        .enumerate()
        .filter_map(|(k, use_)| match use_ {
            ColumnUse::Bind(v) => {
                let var = var_ident(&rule.vars[*v]);
                let id = Index::from(k);
                Some(quote!(let #var = &#row.#id;))
            }
            _ => None,
        })
        .collect()
}

fn var_ident(var: &Ident) -> Ident {
    format_ident!("v_{}", var)
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
