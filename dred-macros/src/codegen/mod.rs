//! Codegen: from a checked program and its plan to Rust. One module per thing generated:
//! `types` (the relation structs, fact sets, fact enum, index layouts), `glue` (the
//! `Program` impl and the program's inherent API), `joins` (one function per rule and
//! purpose: delta firing, head-bound instances and support levels), `probes` (how a join
//! step reads an index), and `held` (what a fire join does with the heads it finds, and a
//! loss of support's head-first join).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::{Ident, Index};

use crate::ir::{self, TypeClass};
use crate::plan::{Access, HeadFirst, Plan};

mod glue;
mod held;
mod joins;
mod probes;
mod types;

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

/// What every generator reads: the program, its plan, and the names of the generated
/// types the runtime is reached through.
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
        let (ty, layout) = (self.ty(self.relation(r)), self.layout_name(r, index));
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

fn var_ident(var: &Ident) -> Ident {
    format_ident!("v_{}", var)
}
