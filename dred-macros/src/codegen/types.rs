//! The types a program declares and the ones generated beside them: relation structs,
//! the fact sets and fact enum, the program struct, index layouts, a query's answers.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::ext::IdentExt;
use syn::{Ident, Index};

use super::{tuple, tuple_field, Context};
use crate::ir::{self, TypeClass};

impl Context<'_> {
    /// Every index's layout: its key columns, and what its rows keep (the other columns of
    /// a compact relation, else whole facts).
    pub(super) fn index_layouts(&self) -> TokenStream {
        let mut code = TokenStream::new();
        for r in 0..self.program.relations.len() {
            for index in 0..self.plan.indexes[r].len() {
                if self.layout_of(r, index) == (r, index) {
                    code.extend(self.layout_impl(r, index));
                }
                // The index in its relation's set: a function per index, not per layout,
                // since relations that share a layout may hold it in different sets.
                let (set_ty, field) = (self.index_set_ty(r), self.index_field(r, index));
                let (index_ty, accessor) = (self.index_ty(r, index), self.index_path(r, index));
                code.extend(quote! {
                    #[doc(hidden)]
                    #[allow(non_snake_case, dead_code)]
                    #[inline(always)]
                    fn #accessor<'set>(indexes: &'set #set_ty) -> &'set #index_ty {
                        &indexes #field
                    }
                });
            }
        }
        code
    }

    /// What decides the layout of index `index` of relation `r`: relations stored alike
    /// whose indexes agree on it share one layout type (see [`Self::layout_of`]).
    pub(super) fn layout_signature(&self, r: usize, index: usize) -> String {
        let stamped = self.stamped_indexes().contains(&(r, index));
        format!(
            "{} {:?} {} {} {} {}",
            self.row_ty(r),
            self.plan.indexes[r][index],
            self.compact(r),
            stamped,
            self.plan.eager[r][index],
            if self.row_stored(r) {
                String::new()
            } else {
                self.relation(r).name.to_string()
            },
        )
    }

    /// The code of the layout of index `index` of relation `r`.
    fn layout_impl(&self, r: usize, index: usize) -> TokenStream {
        let rt = &self.rt;
        let vis = &self.program.vis;
        let stamps = self.stamped_indexes().contains(&(r, index)).then(|| {
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
        let (ty, layout) = (self.row_ty(r), self.layout_name(r, index));
        let key_columns = &self.plan.indexes[r][index];
        let column_ty = |c: usize| &relation.columns[c].ty;
        let key_ty = tuple(
            &key_columns
                .iter()
                .map(|&c| column_ty(c).to_token_stream())
                .collect::<Vec<_>>(),
        );
        let key: Vec<Index> = key_columns.iter().map(|&c| Index::from(c)).collect();
        let at = (0..key.len()).map(|i| tuple_field(i, key.len()));
        let key_refs = tuple(&key.iter().map(|k| quote!(&fact.#k)).collect::<Vec<_>>());
        let key_values = tuple(
            &key.iter()
                .map(|k| quote!(::std::clone::Clone::clone(&fact.#k)))
                .collect::<Vec<_>>(),
        );
        let (row_ty, row) = if self.compact(r) {
            let rest = self.rest_columns(r, index);
            let rest_tys: Vec<TokenStream> = rest
                .iter()
                .map(|&c| column_ty(c).to_token_stream())
                .collect();
            let rest: Vec<TokenStream> = rest
                .iter()
                .map(|&c| {
                    let c = Index::from(c);
                    quote!(::std::clone::Clone::clone(&fact.#c))
                })
                .collect();
            (tuple(&rest_tys), tuple(&rest))
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
            " How `{}` lays out its index {index} on `{}`, and the same index of every relation stored alike.",
            self.program.name, relation.name
        );
        quote! {
            #[doc = #doc]
            #[doc(hidden)]
            #[allow(non_camel_case_types)]
            #[derive(Debug, Clone, Copy)]
            #vis struct #layout;
            impl #rt::IndexLayout<#ty> for #layout {
                type Key = #key_ty;
                type Row = #row_ty;
                #[inline]
                fn hash(fact: &#ty) -> u64 {
                    #rt::key_hash(&#key_refs)
                }
                #[inline]
                fn matches(key: &Self::Key, fact: &#ty) -> bool {
                    true #(&& key #at == fact.#key)*
                }
                #[inline]
                fn key(fact: &#ty) -> Self::Key {
                    #key_values
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
    }

    /// `IndexLayout::fact_from_columns` for relation `r`, if its columns are all integers
    /// (of at most 64 bits), chars and bools: the types whose `Hash` writes one integer,
    /// which the runtime's bitset reads as the column. A signed integer writes its bits
    /// as the unsigned integer of its width, which `as` gives back.
    pub(super) fn fact_from_columns(&self, r: usize) -> Option<TokenStream> {
        let (ty, body) = (self.row_ty(r), self.rebuild_from_columns(r)?);
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
    pub(super) fn rebuild_from_columns(&self, r: usize) -> Option<TokenStream> {
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
        let count = relation.columns.len();
        let fact = self.make_row(r, columns);
        Some(quote! {
            if columns.len() != #count {
                return ::core::option::Option::None;
            }
            ::core::option::Option::Some(#fact)
        })
    }

    pub(super) fn relation_struct(&self, relation: &ir::Relation) -> TokenStream {
        let rt = &self.rt;
        let ir::Relation {
            attrs, vis, name, ..
        } = relation;
        let name_text = name.unraw().to_string();
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
                    .parse_column(fields[#position], symbols)
                    .map_err(|message| #rt::text::FieldError { field: ::core::option::Option::Some(#position), message })?
            }
        });
        let stored = if super::stores_rows(relation) {
            let row = super::row_tuple(relation);
            let row_values = tuple(&ids.iter().map(|id| quote!(self.#id)).collect::<Vec<_>>());
            quote! {
                #[automatically_derived]
                #[allow(clippy::unused_unit)]
                impl #rt::Stored for #name {
                    type Row = #row;
                    #[inline]
                    fn to_row(&self) -> #row { #row_values }
                    #[inline]
                    fn into_row(self) -> #row { #row_values }
                    #[inline]
                    fn from_row(row: &#row) -> Self { #name(#(row.#ids),*) }
                    #[inline]
                    fn as_row(&self) -> ::std::borrow::Cow<'_, #row> { ::std::borrow::Cow::Owned(#row_values) }
                }
            }
        } else {
            quote! {
                #[automatically_derived]
                impl #rt::Stored for #name {
                    type Row = Self;
                    #[inline]
                    fn to_row(&self) -> Self { ::std::clone::Clone::clone(self) }
                    #[inline]
                    fn into_row(self) -> Self { self }
                    #[inline]
                    fn from_row(row: &Self) -> Self { ::std::clone::Clone::clone(row) }
                    #[inline]
                    fn as_row(&self) -> ::std::borrow::Cow<'_, Self> { ::std::borrow::Cow::Borrowed(self) }
                }
            }
        };
        // A row of plain values has its text written once, in the runtime.
        let record = if super::stores_rows(relation) {
            quote! {
                fn render_values(&self) -> ::std::vec::Vec<::std::string::String> {
                    #rt::text::TextRow::render_values(&#rt::Stored::to_row(self))
                }
                fn write_tsv(&self, out: &mut ::std::string::String) {
                    #rt::text::TextRow::write_tsv(&#rt::Stored::to_row(self), out)
                }
                fn parse_text(fields: &[&str], symbols: &#rt::Symbols) -> ::std::result::Result<Self, #rt::text::FieldError> {
                    #rt::text::parse_record(fields, symbols)
                }
            }
        } else {
            quote! {
                fn render_values(&self) -> ::std::vec::Vec<::std::string::String> {
                    ::std::vec![#(#rt::text::render_value(&self.#ids)),*]
                }
                #[allow(unused_imports)]
                fn write_tsv(&self, out: &mut ::std::string::String) {
                    use #rt::text::{ViaNoText as _, ViaTextValue as _};
                    #(#write_fields)*
                }
                #[allow(unused_imports)]
                fn parse_text(fields: &[&str], symbols: &#rt::Symbols) -> ::std::result::Result<Self, #rt::text::FieldError> {
                    use #rt::text::{ViaNoText as _, ViaTextValue as _};
                    if fields.len() != #arity {
                        return ::std::result::Result::Err(#rt::text::FieldError {
                            field: ::core::option::Option::None,
                            message: ::std::format!(
                                "`{}` has {} column(s), {} value(s) given", #name_text, #arity, fields.len()
                            ),
                        });
                    }
                    ::std::result::Result::Ok(#name(#(#parse_fields),*))
                }
            }
        };
        quote! {
            #(#attrs)*
            // A column type lacking one of these is reported by the derive, on the type.
            #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
            #vis struct #name(#(#columns),*);

            #stored

            #[automatically_derived]
            impl #rt::Record for #name {
                const NAME: &'static str = #name_text;
                #record
            }
        }
    }

    pub(super) fn program_type(&self) -> TokenStream {
        let rt = &self.rt;
        let ir::Program {
            attrs, vis, name, ..
        } = self.program;
        let facts = &self.facts;
        let fields = self.program.relations.iter().enumerate().map(|(i, r)| {
            let (field, ty, indexes) = (&r.name, self.row_ty(i), self.index_set_ty(i));
            quote!(#field: #rt::Relation<#ty, #indexes>)
        });
        quote! {
            #(#attrs)*
            #[allow(non_snake_case)]
            #[derive(Debug, Clone)]
            #vis struct #name {
                #(#fields,)*
                __dred: #rt::Bookkeeping<#facts>,
            }
        }
    }

    pub(super) fn fact_sets(&self) -> TokenStream {
        let rt = &self.rt;
        let empty_deref = self.empty_deref();
        let (vis, program, facts) = (&self.program.vis, &self.program.name, &self.facts);
        let fact_enum = &self.fact_enum;
        let names: Vec<&Ident> = self.program.relations.iter().map(|r| &r.name).collect();
        let tys = self.row_tys();
        let doc = format!(
            "One set of facts per relation of [`{program}`]: the shape of update batches, rounds and report entries."
        );
        let relations = 0..self.program.relations.len();
        let to_struct: Vec<TokenStream> = relations
            .clone()
            .map(|r| self.struct_of(r, quote!(stored)))
            .collect();
        let to_row: Vec<TokenStream> = relations
            .clone()
            .map(|r| self.stored_ref(r, quote!(fact)))
            .collect();
        let into_row: Vec<TokenStream> =
            relations.map(|r| self.owned_row(r, quote!(fact))).collect();
        let sorted_to_struct: Vec<&TokenStream> =
            self.by_name().into_iter().map(|r| &to_struct[r]).collect();
        let derived = self.program.relations.iter().map(|r| {
            let name = &r.name;
            if r.input {
                quote!(#name: ::std::default::Default::default())
            } else {
                quote!(#name: self.#name.clone())
            }
        });
        let inputs: Vec<&Ident> = self
            .program
            .relations
            .iter()
            .filter(|r| r.input)
            .map(|r| &r.name)
            .collect();
        let is_input = if inputs.is_empty() {
            quote!({
                let _ = fact;
                false
            })
        } else {
            quote!(::core::matches!(fact, #(#fact_enum::#inputs(_))|*))
        };
        let sorted: Vec<&Ident> = self
            .by_name()
            .into_iter()
            .map(|r| &self.relation(r).name)
            .collect();
        let text_arms = self.program.relations.iter().map(|r| {
            let (name, ty) = (&r.name, self.ty(r));
            let text = name.unraw().to_string();
            quote! {
                #text => <#ty as #rt::Record>::parse_text(values, symbols).map(#fact_enum::#name),
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
                    #(#rt::generated::union_sets(&mut self.#names, &other.#names);)*
                }
                fn merge_from(&mut self, other: Self) {
                    #(#rt::generated::merge_sets(&mut self.#names, other.#names);)*
                }
                fn common_len(&self, other: &Self) -> usize {
                    0 #(+ #rt::generated::common_len(&self.#names, &other.#names))*
                }
                fn subtract(&mut self, other: &Self) {
                    #(#rt::generated::subtract_sets(&mut self.#names, &other.#names);)*
                }
                fn clear(&mut self) {
                    #(self.#names.clear();)*
                }
                fn reserve_ratio_of(&mut self, other: &Self, times: usize, share: usize) {
                    #(self.#names.reserve(other.#names.len() * times / share);)*
                }
                fn recycle_for(&mut self, like: &Self) {
                    #(#rt::generated::recycle_set(&mut self.#names, like.#names.len());)*
                }
                fn derived_part(&self) -> Self { Self { #(#derived,)* } }
                fn into_derived_part(mut self) -> Self {
                    #(self.#inputs = ::std::default::Default::default();)*
                    self
                }
                fn write_sorted(&self, out: &mut ::std::string::String) {
                    #(#rt::generated::write_sorted(out, &self.#sorted, |stored| #sorted_to_struct);)*
                }
                fn ground(&self) -> ::std::vec::Vec<#rt::GroundFact> {
                    let mut ground = ::std::vec::Vec::with_capacity(#rt::FactSets::len(self));
                    #(#rt::generated::extend_ground(&mut ground, &self.#sorted, |stored| #sorted_to_struct);)*
                    ground
                }
                fn to_vec(&self) -> ::std::vec::Vec<#fact_enum> {
                    let mut facts = ::std::vec::Vec::with_capacity(#rt::FactSets::len(self));
                    #(#rt::generated::extend_sorted(&mut facts, &self.#sorted, |stored| #fact_enum::#sorted(#sorted_to_struct));)*
                    facts
                }
                fn contains_fact(&self, fact: &#fact_enum) -> bool {
                    match #empty_deref fact { #(#fact_enum::#names(fact) => self.#names.contains(#to_row),)* }
                }
                fn insert_fact(&mut self, fact: #fact_enum) -> bool {
                    match fact { #(#fact_enum::#names(fact) => self.#names.insert(#into_row),)* }
                }
                fn is_input(fact: &#fact_enum) -> bool {
                    #is_input
                }
                fn parse_fact(relation: &str, values: &[&str], symbols: &#rt::Symbols) -> ::std::result::Result<#fact_enum, #rt::text::FieldError> {
                    match relation {
                        #(#text_arms)*
                        _ => ::std::result::Result::Err(#rt::text::FieldError {
                            field: ::core::option::Option::None,
                            message: ::std::format!("no relation named `{relation}`"),
                        }),
                    }
                }
            }
        }
    }

    pub(super) fn fact_enum(&self) -> TokenStream {
        let rt = &self.rt;
        let empty_deref = self.empty_deref();
        let (vis, program, fact_enum) = (&self.program.vis, &self.program.name, &self.fact_enum);
        let facts = &self.facts;
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

            /// Parses `Name(v1,v2)`, as `Display` writes it, or `Name`, tab, and the values
            /// separated by tabs, as in fact files.
            impl ::std::str::FromStr for #fact_enum {
                type Err = #rt::TextError;
                fn from_str(text: &str) -> ::std::result::Result<Self, #rt::TextError> {
                    <#facts as #rt::FactSets>::fact_from_text(text, &#rt::Symbols::default())
                }
            }

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

    /// `answers()` of a rewritten program: its adorned relation's facts that match the
    /// query's bindings, as the original relation's type.
    pub(super) fn answers_impl(&self, answers: &ir::Answers) -> TokenStream {
        let program = &self.program.name;
        let original = &answers.original;
        let rt = &self.rt;
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
            let values = ask_column.iter().map(|c| {
                let id = Index::from(c.expect("every parameter has a column"));
                quote!(::std::clone::Clone::clone(&row.#id))
            });
            let fact = self.make_row(ask, values);
            let ask = &self.relation(ask).name;
            conditions.push(quote!(self.#ask.contains(&#fact)));
        }
        let columns = (0..answers.columns.len()).map(Index::from);
        let doc =
            format!("The query's answers: facts of `{original}` that match its bindings, sorted.");
        quote! {
            impl #program {
                #[doc = #doc]
                pub fn answers(&self) -> ::std::vec::Vec<#original> {
                    #rt::Program::bookkeeping(self).assert_usable();
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
