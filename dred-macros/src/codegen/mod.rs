//! Codegen: from a checked program and its plan to Rust. One module per thing generated:
//! `types` (the relation structs, fact sets, fact enum, index layouts), `glue` (the
//! `Program` impl and the program's inherent API), `joins` (one function per rule and
//! purpose: delta firing, head-bound instances and support levels), `probes` (how a join
//! step reads an index), and `held` (what a fire join does with the heads it finds, and a
//! loss of support's head-first join).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::{Ident, Index};

use crate::ir::{self, TypeClass};
use crate::plan::{Access, HeadFirst, Plan};

#[cfg(feature = "dataflow")]
mod dataflow;
mod glue;
mod held;
mod joins;
mod probes;
mod types;

/// The most indexes a tuple of the runtime's `IndexSet` impls holds.
const INDEX_TUPLE: usize = 12;

/// The most elements of a tuple that std implements `Hash`, `Ord` and `Debug` for.
const STD_TUPLE: usize = 12;

/// The tuple of `items` (types, values or patterns) that index keys and rows are made of:
/// flat up to [`STD_TUPLE`] elements, past it the last element a [`tuple`] of the rest, so
/// that keys of any width are hashed, ordered and printed.
fn tuple(items: &[TokenStream]) -> TokenStream {
    if items.len() <= STD_TUPLE {
        return quote!((#(#items,)*));
    }
    let (head, rest) = items.split_at(STD_TUPLE - 1);
    let rest = tuple(rest);
    quote!((#(#head,)* #rest,))
}

/// The field path of element `i` of a [`tuple`] of `len` elements: `.3`, or `.11.2`.
fn tuple_field(i: usize, len: usize) -> TokenStream {
    if len <= STD_TUPLE || i < STD_TUPLE - 1 {
        let i = Index::from(i);
        return quote!(.#i);
    }
    let last = Index::from(STD_TUPLE - 1);
    let rest = tuple_field(i - (STD_TUPLE - 1), len - (STD_TUPLE - 1));
    quote!(.#last #rest)
}

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
    let type_assertions = program.type_assertions.iter().map(type_assertion);
    #[cfg(feature = "dataflow")]
    let dataflow = cx.dataflow_impl();
    #[cfg(not(feature = "dataflow"))]
    let dataflow = TokenStream::new();
    quote! {
        #(#type_assertions)*
        #answers
        #relation_structs
        #layouts
        #program_type
        #fact_sets
        #fact_enum
        #program_impl
        #inherent
        #dataflow
    }
}

/// What every generator reads: the program, its plan, and the names of the generated
/// types the runtime is reached through.
struct Context<'a> {
    program: &'a ir::Program,
    plan: &'a Plan,
    rt: TokenStream,
    facts: Ident,
    fact_enum: Ident,
    /// Per relation and index, the index whose layout type it uses ([`Context::layout_of`]).
    layouts: Vec<Vec<(usize, usize)>>,
}

impl<'a> Context<'a> {
    fn new(program: &'a ir::Program, plan: &'a Plan) -> Self {
        let mut cx = Context {
            program,
            plan,
            rt: quote!(::dred::runtime),
            facts: format_ident!("{}Facts", program.name),
            fact_enum: format_ident!("{}Fact", program.name),
            layouts: Vec::new(),
        };
        let mut first: std::collections::HashMap<String, (usize, usize)> = Default::default();
        cx.layouts = (0..program.relations.len())
            .map(|r| {
                (0..plan.indexes[r].len())
                    .map(|index| {
                        *first
                            .entry(cx.layout_signature(r, index))
                            .or_insert((r, index))
                    })
                    .collect()
            })
            .collect();
        cx
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

    /// Whether relation `r` stores its facts as rows, the tuple of its column types, rather
    /// than as its struct: when its columns are plain values ([`Self::compact`]) and fit one
    /// flat tuple. Relations of the same column types then share one storage type, so the
    /// runtime's generic code is compiled once for all of them, not once per relation; a
    /// column of another type keeps its relation's struct, whose derives report what that
    /// type lacks.
    fn row_stored(&self, r: usize) -> bool {
        stores_rows(self.relation(r))
    }

    /// The type relation `r`'s facts are stored as (see [`Self::row_stored`]).
    fn row_ty(&self, r: usize) -> TokenStream {
        let relation = self.relation(r);
        if self.row_stored(r) {
            row_tuple(relation)
        } else {
            self.ty(relation)
        }
    }

    fn row_tys(&self) -> Vec<TokenStream> {
        (0..self.program.relations.len())
            .map(|r| self.row_ty(r))
            .collect()
    }

    /// A stored fact of relation `r` made of `values`, one per column.
    fn make_row(&self, r: usize, values: impl IntoIterator<Item = TokenStream>) -> TokenStream {
        let values: Vec<TokenStream> = values.into_iter().collect();
        if self.row_stored(r) {
            tuple(&values)
        } else {
            let ty = self.ty(self.relation(r));
            quote!(#ty(#(#values),*))
        }
    }

    /// Relation `r`'s struct, owned, from `stored`, a reference to its stored fact.
    fn struct_of(&self, r: usize, stored: TokenStream) -> TokenStream {
        let (rt, ty) = (&self.rt, self.ty(self.relation(r)));
        quote!(<#ty as #rt::Stored>::from_row(#stored))
    }

    /// A function from relation `r`'s stored fact, owned, to the program's fact enum: the
    /// runtime's, one instance per relation for all its joins.
    fn row_to_fact(&self, r: usize) -> TokenStream {
        let (rt, fact_enum, ty) = (&self.rt, &self.fact_enum, self.ty(self.relation(r)));
        quote!(#rt::generated::fact_of_row::<#ty, #fact_enum>)
    }

    /// Relation `r`'s stored fact from `fact`, its struct, owned.
    fn owned_row(&self, r: usize, fact: TokenStream) -> TokenStream {
        let (rt, ty) = (&self.rt, self.ty(self.relation(r)));
        quote!(<#ty as #rt::Stored>::into_row(#fact))
    }

    /// Relation `r`'s stored fact from `fact`, a reference to its struct: the row, owned,
    /// or `fact` itself where the struct is what is stored (`Borrow` gives a reference to
    /// the stored type from either).
    fn row_view(&self, r: usize, fact: TokenStream) -> TokenStream {
        if self.row_stored(r) {
            self.row_of(r, fact)
        } else {
            fact
        }
    }

    /// Relation `r`'s stored fact, owned, from `fact`, a reference to its struct.
    fn row_of(&self, r: usize, fact: TokenStream) -> TokenStream {
        let (rt, ty) = (&self.rt, self.ty(self.relation(r)));
        quote!(<#ty as #rt::Stored>::to_row(#fact))
    }

    /// A reference to relation `r`'s stored fact from `fact`, a reference to its struct
    /// (see [`Self::row_view`]), for the expression it is written in.
    fn stored_ref(&self, r: usize, fact: TokenStream) -> TokenStream {
        let (view, row_ty) = (self.row_view(r, fact), self.row_ty(r));
        quote!(::core::borrow::Borrow::<#row_ty>::borrow(&#view))
    }

    /// Whether relation `r`'s index rows hold only the columns outside their key (see
    /// `dred_runtime::Index`): when every column is a plain value, so that a fact rebuilt
    /// from a key and a row costs nothing.
    fn compact(&self, r: usize) -> bool {
        plain_columns(self.relation(r))
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
        let (r, index) = self.layout_of(r, index);
        // The program's name behind its length: two programs in one module never make the
        // same name (`A` with `BC`, `AB` with `C`), as a plain concatenation would.
        let program = self.program.name.unraw().to_string();
        format_ident!(
            "__Dred{}{}{}Index{}",
            program.len(),
            program,
            self.relation(r).name,
            index
        )
    }

    /// The type of index `index` of relation `r`.
    fn index_ty(&self, r: usize, index: usize) -> TokenStream {
        let rt = &self.rt;
        let (ty, layout) = (self.row_ty(r), self.layout_name(r, index));
        quote!(#rt::Index<#ty, #layout>)
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

    /// The field path from relation `r`'s index set to its index `index`: `.3`, or `.1.3`.
    fn index_field(&self, r: usize, index: usize) -> TokenStream {
        let at = Index::from(index % INDEX_TUPLE);
        if self.plan.indexes[r].len() <= INDEX_TUPLE {
            quote!(.#at)
        } else {
            let group = Index::from(index / INDEX_TUPLE);
            quote!(.#group.#at)
        }
    }

    /// The function from relation `r`'s index set to its index `index` (a
    /// `dred_runtime::IndexOf`): one function per index rather than a closure at each
    /// probe, and not one per layout, which relations of other index sets may share.
    fn index_path(&self, r: usize, index: usize) -> Ident {
        let program = self.program.name.unraw().to_string();
        format_ident!(
            "__dred{}{}{}_index{}",
            program.len(),
            program,
            self.relation(r).name,
            index
        )
    }

    /// The index whose layout type index `index` of relation `r` uses: the first of the
    /// same [`Self::layout_signature`].
    fn layout_of(&self, r: usize, index: usize) -> (usize, usize) {
        self.layouts[r][index]
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

    /// The rules deriving `relation`, with their positions.
    fn rules_of(&self, relation: usize) -> impl Iterator<Item = (usize, &ir::Rule)> {
        self.program
            .rules
            .iter()
            .enumerate()
            .filter(move |(_, rule)| rule.head.relation == relation)
    }

    /// The names (`{kind}_{i}`) of one per-rule function for every rule whose head is
    /// relation `relation`.
    fn rule_fns_of(&self, relation: usize, kind: &str) -> Vec<Ident> {
        self.rules_of(relation)
            .map(|(i, _)| format_ident!("{}_{}", kind, i))
            .collect()
    }

    /// Whether relation `r` is a [`crate::plan::Closure`].
    fn is_closure(&self, r: usize) -> bool {
        self.plan.closures.iter().any(|c| c.relation == r)
    }

    /// The column whose type a rule's variable has in generated code: its first one in
    /// the body, as the checks saw it.
    fn var_column(&self, rule: &ir::Rule, v: usize) -> &ir::Column {
        rule.body
            .iter()
            .chain([&rule.head])
            .find_map(|atom| {
                let k = atom
                    .terms
                    .iter()
                    .position(|t| matches!(t, ir::Term::Var(w) if *w == v))?;
                Some(&self.relation(atom.relation).columns[k])
            })
            .expect("every variable occurs in its rule")
    }

    /// `value`, a `&` of column `from`'s type, as a `&` of column `to`'s. Columns spelt
    /// alike need nothing; others go through `Retype`, which is the identity when the
    /// spellings name one type (the program's type assertions reject the rest).
    fn retype(&self, from: &ir::Column, to: &ir::Column, value: TokenStream) -> TokenStream {
        if from.ty_text == to.ty_text {
            return value;
        }
        let (rt, from, to) = (&self.rt, &from.ty, &to.ty);
        quote!({
            #[allow(unused_imports)]
            use #rt::generated::Unequal as _;
            #rt::generated::Retype::<#from, #to>::NEW.retype(#value)
        })
    }

    /// Variable `v`, bound in generated code, as a `&` of `column`'s type.
    fn var_at(&self, rule: &ir::Rule, v: usize, column: &ir::Column) -> TokenStream {
        let var = var_ident(&rule.vars[v]);
        self.retype(self.var_column(rule, v), column, quote!(#var))
    }

    /// `let v_x = value;` for `value`, a `&` of `column`'s type.
    fn bind_var(
        &self,
        rule: &ir::Rule,
        v: usize,
        column: &ir::Column,
        value: TokenStream,
    ) -> TokenStream {
        let var = var_ident(&rule.vars[v]);
        let value = self.retype(column, self.var_column(rule, v), value);
        quote!(let #var = #value;)
    }

    /// An owned fact of `atom`'s relation built from bound variables and constants.
    fn construct(&self, atom: &ir::Atom, rule: &ir::Rule) -> TokenStream {
        let relation = self.relation(atom.relation);
        let values = atom
            .terms
            .iter()
            .zip(&relation.columns)
            .map(|(term, column)| match term {
                ir::Term::Var(v) => {
                    let var = self.var_at(rule, *v, column);
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
        self.make_row(atom.relation, values)
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
}

/// A check that rustc runs on a variable whose columns are spelt differently: nothing if
/// the spellings name one type, else the assertion's message on the variable.
fn type_assertion(assertion: &ir::TypeAssertion) -> TokenStream {
    let ir::TypeAssertion {
        here,
        first,
        span,
        message,
    } = assertion;
    let here = respan(here.to_token_stream(), *span);
    let first = respan(first.to_token_stream(), *span);
    // All at the variable, so that every line of rustc's report points at it.
    quote_spanned! {*span=>
        const _: fn() = {
            #[diagnostic::on_unimplemented(message = #message, label = "one variable has one type")]
            trait SameType<T: ?::core::marker::Sized> {}
            impl<T: ?::core::marker::Sized> SameType<T> for T {}
            fn same_type<First: ?::core::marker::Sized, Here: ?::core::marker::Sized + SameType<First>>() {}
            || same_type::<#first, #here>()
        };
    }
}

/// `tokens` with every token at `span`, so that rustc reports on the user's token.
fn respan(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tree| {
            if let proc_macro2::TokenTree::Group(group) = &tree {
                let mut respanned =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                respanned.set_span(span);
                tree = respanned.into();
            } else {
                tree.set_span(span);
            }
            tree
        })
        .collect()
}

/// Whether `relation`'s columns are all plain values: integers, chars, bools and static
/// strings, whose clones cost nothing.
fn plain_columns(relation: &ir::Relation) -> bool {
    relation.columns.iter().all(|c| {
        matches!(
            c.class,
            TypeClass::Int { .. }
                | TypeClass::Char
                | TypeClass::Bool
                | TypeClass::Str { owned: false }
        )
    })
}

/// Whether `relation` stores its facts as rows (see [`Context::row_stored`]).
fn stores_rows(relation: &ir::Relation) -> bool {
    plain_columns(relation) && relation.columns.len() <= STD_TUPLE
}

/// The tuple of `relation`'s column types.
fn row_tuple(relation: &ir::Relation) -> TokenStream {
    let columns: Vec<TokenStream> = relation
        .columns
        .iter()
        .map(|c| c.ty.to_token_stream())
        .collect();
    tuple(&columns)
}

fn var_ident(var: &Ident) -> Ident {
    format_ident!("v_{}", var)
}
