//! The program's glue: its `Program` impl (relation by relation, rule by rule) and the
//! inherent API users call.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::Ident;

use super::Context;
use crate::ir::{self, TypeClass};

impl Context<'_> {
    pub(super) fn program_impl(&self) -> TokenStream {
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
        let derived_names2 = derived_names.clone();
        let index_set_tys: Vec<TokenStream> =
            (0..relations.len()).map(|r| self.index_set_ty(r)).collect();
        let infos = relations.iter().map(|r| {
            let name = r.name.unraw().to_string();
            let columns = r.columns.iter().map(|c| &c.ty_text);
            let input = r.input;
            quote!(#rt::RelationInfo { name: #name, columns: &[#(#columns),*], input: #input })
        });
        let rules = self.program.rules.iter().map(|rule| self.rule_info(rule));
        // One function that rebuilds facts from their columns per stored type (relations
        // stored alike rebuild alike), not one per relation.
        let mut rebuilds: Vec<(String, TokenStream)> = Vec::new();
        let mut rebuild_of = vec![None; relations.len()];
        for (r, rebuild_of) in rebuild_of.iter_mut().enumerate() {
            if let Some(body) = self.rebuild_from_columns(r) {
                let ty = self.row_ty(r);
                let key = ty.to_string();
                let at = rebuilds.iter().position(|(k, _)| *k == key).unwrap_or_else(|| {
                    let rebuild = format_ident!("rebuild_{}", rebuilds.len());
                    rebuilds.push((
                        key,
                        quote!(fn #rebuild(columns: &[u64]) -> ::core::option::Option<#ty> { #body }),
                    ));
                    rebuilds.len() - 1
                });
                *rebuild_of = Some(format_ident!("rebuild_{}", at));
            }
        }
        let rebuilds = rebuilds.into_iter().map(|(_, rebuild)| rebuild);
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
            let dense = rebuild_of[r]
                .as_ref()
                .map(|rebuild| quote!(.with_facts_from_columns(#rebuild)));
            quote!(#name: #rt::Relation::with_indexes(::core::default::Default::default()).with_storage(settings.storage()) #bitset #dense)
        });
        let constants = self
            .program
            .rules
            .iter()
            .filter(|rule| rule.body.is_empty())
            .map(|rule| {
                let name = &self.relation(rule.head.relation).name;
                let head = self.construct(&rule.head, rule);
                quote!(facts.#name.insert(#head);)
            });
        let tsv_arms = names.iter().enumerate().map(|(r, name)| {
            let text = name.unraw().to_string();
            let to_struct = self.struct_of(r, quote!(stored));
            quote!(#text => { #rt::generated::write_relation_tsv(out, &self.#name, |stored| #to_struct); ::std::result::Result::Ok(()) })
        });
        let fire_calls = self
            .program
            .rules
            .iter()
            .enumerate()
            .filter(|(_, rule)| !rule.body.is_empty())
            .map(|(i, rule)| {
                let fire = format_ident!("fire_rule_{}", i);
                let call = quote!(self.#fire(delta, admit, out, stamped, work, part););
                if self.is_closure(rule.head.relation) {
                    // Its losses are found by reachability (`Program::closure_losses`).
                    quote!(if !(admit.has_causes() && self.__dred.reachability) { #call })
                } else {
                    call
                }
            });
        let closure_fns = (!self.plan.closures.is_empty()).then(|| self.closure_fns());
        let indexes_built = (!self.scan_spared().is_empty()).then(|| {
            let bits = self.indexes_built();
            quote!(fn indexes_built(&self) -> u64 { #bits })
        });
        // Per derived relation, its rules' head-bound checks, which the runtime runs.
        let derived_relations = || relations.iter().enumerate().filter(|(_, r)| !r.input);
        let derivable = derived_relations().map(|(r, relation)| {
            let name = &relation.name;
            let checks = self.rule_fns_of(r, "derives_rule");
            (!checks.is_empty()).then(|| {
                quote! {
                    if !#rt::generated::derivable_of(self, &candidates.#name, part, &[#(Self::#checks),*], &mut derived.#name, work) {
                        return derived;
                    }
                }
            })
        });
        let unsupported = derived_relations().map(|(r, relation)| {
            let (name, fact_enum) = (&relation.name, &self.fact_enum);
            let checks = self.rule_fns_of(r, "support_rule");
            let first_hash = match self.sorting_rule(r) {
                Some((i, ..)) => {
                    let first_hash = format_ident!("first_hash_rule_{}", i);
                    quote!(::core::option::Option::Some(Self::#first_hash))
                }
                None => quote!(::core::option::Option::None),
            };
            let (ty, to_fact) = (self.ty(relation), self.row_to_fact(r));
            quote! {
                let rules = #rt::generated::SupportRules {
                    head_of: |fact| match fact {
                        #fact_enum::#name(head) => ::core::option::Option::Some(<#ty as #rt::Stored>::as_row(head)),
                        _ => ::core::option::Option::None,
                    },
                    fact: #to_fact,
                    rules: &[#(Self::#checks),*],
                    first_hash: #first_hash,
                };
                if !#rt::generated::check_support_of(self, candidates, &rules, &mut unsupported.#name, &mut levels, work) {
                    return (unsupported, levels);
                }
            }
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
        let stored_refs: Vec<TokenStream> = (0..relations.len())
            .map(|r| self.stored_ref(r, quote!(fact)))
            .collect();
        let head_refs = (0..relations.len()).map(|r| self.stored_ref(r, quote!(head)));
        let derived_structs = (0..relations.len())
            .filter(|&r| !relations[r].input)
            .map(|r| self.struct_of(r, quote!(fact)));
        let input_rows = (0..relations.len())
            .filter(|&r| relations[r].input)
            .map(|r| self.owned_row(r, quote!(self)));
        let row_tys = self.row_tys();
        quote! {
            #[automatically_derived]
            impl #rt::Program for #program {
                type Facts = #facts;
                const RELATIONS: &'static [#rt::RelationInfo] = &[#(#infos),*];
                const RULES: &'static [#rt::RuleInfo] = &[#(#rules),*];

                fn empty(settings: #rt::Settings) -> Self {
                    #(#rebuilds)*
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
                fn bookkeeping(&self) -> &#rt::Bookkeeping<#facts> {
                    &self.__dred
                }
                fn bookkeeping_mut(&mut self) -> &mut #rt::Bookkeeping<#facts> {
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
                fn visit_stamps(&self, visit: &mut dyn ::core::ops::FnMut(#rt::Stamp)) {
                    #(self.#names.stamps().for_each(&mut *visit);)*
                }
                fn map_stamps(&mut self, map: &dyn ::core::ops::Fn(#rt::Stamp) -> #rt::Stamp) {
                    #(self.#names.map_stamps(map);)*
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
                fn fire(&self, delta: &#facts, admit: #rt::Admit<&#facts>, out: &mut #facts, stamped: &mut ::std::vec::Vec<(#fact_enum, #rt::Stamp)>, work: &mut #rt::Work, part: &#rt::parallel::Part) {
                    #(#fire_calls)*
                }
                #indexes_built
                fn fire_in_parts(&self, delta: &#facts, admit: #rt::Admit<&#facts>, parts: &[#rt::parallel::Part], budget: &#rt::Work, starts: ::std::vec::Vec<#facts>) -> ::core::result::Result<::std::vec::Vec<(#facts, #rt::Work)>, #facts> {
                    #[allow(unused_imports)]
                    use #rt::parallel::{OnCaller as _, OnThreads as _};
                    (&#rt::parallel::Threads(self)).fire_in_parts(delta, admit, parts, budget, starts)
                }
                fn derivable_in_parts(&self, candidates: &#facts, parts: &[#rt::parallel::Part], budget: &#rt::Work) -> ::core::option::Option<::std::vec::Vec<(#facts, #rt::Work)>> {
                    #[allow(unused_imports)]
                    use #rt::parallel::{OnCaller as _, OnThreads as _};
                    (&#rt::parallel::Threads(self)).derivable_in_parts(candidates, parts, budget)
                }
                #[allow(unused_mut)]
                fn derivable(&self, candidates: &#facts, work: &mut #rt::Work, part: &#rt::parallel::Part) -> #facts {
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
                    match #empty_deref fact { #(#fact_enum::#names(fact) => self.#names.restamp(#stored_refs, stamp),)* }
                }
                fn stamp(&self, fact: &#fact_enum) -> ::core::option::Option<#rt::Stamp> {
                    match #empty_deref fact { #(#fact_enum::#names(fact) => self.#names.stamp(#stored_refs),)* }
                }
                fn unstamp_derived(&mut self) {
                    #(self.#derived_names2.unstamp_every();)*
                }
                fn is_input(fact: &#fact_enum) -> bool {
                    match #empty_deref fact { #(#fact_enum::#names(_) => #input_flags,)* }
                }
                fn holds(&self, fact: &#fact_enum) -> bool {
                    match #empty_deref fact { #(#fact_enum::#names(fact) => self.#names.contains(#stored_refs),)* }
                }
                #[allow(unused_variables)]
                fn sample_derived(&self, per_relation: usize, out: &mut ::std::vec::Vec<#fact_enum>) {
                    #(#rt::generated::extend_facts(out, self.#derived_names.sample(per_relation), |fact| #fact_enum::#derived_names(#derived_structs));)*
                }
                #[allow(unused_variables)]
                fn instances(&self, head: &#fact_enum, visit: &mut dyn ::core::ops::FnMut(usize, &[#fact_enum]) -> bool) -> bool {
                    match #empty_deref head { #(#fact_enum::#names(head) => false #(|| self.#instance_fns(#head_refs, visit))*,)* }
                }
            }

            #[allow(non_snake_case, unused_variables, clippy::all)]
            impl #program {
                #(#rule_fns)*
            }

            #(
                impl #rt::InputFact<#facts> for #input_tys {
                    fn add_to(self, facts: &mut #facts) { facts.#input_names.insert(#input_rows); }
                }
            )*

            #(
                impl #rt::HasRelation<#tys> for #program {
                    type Indexes = #index_set_tys;
                    fn relation(&self) -> &#rt::Relation<#row_tys, #index_set_tys> { &self.#names }
                }
            )*
        }
    }

    /// `Program::closure_losses` and `Program::closures_dense`, for a program with
    /// [`crate::plan::Closure`]s.
    pub(super) fn closure_fns(&self) -> TokenStream {
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
            let name = &relation.name;
            let fact = self.make_row(closure.relation, [quote!(x), quote!(z)]);
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
                    lost_facts.#name.extend(lost.into_iter().map(|(x, z)| #fact));
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

    pub(super) fn rule_info(&self, rule: &ir::Rule) -> TokenStream {
        let atom_info = |atom: &ir::Atom| {
            let relation = self.relation(atom.relation).name.unraw().to_string();
            let rt = &self.rt;
            let terms = atom.terms.iter().map(|term| match term {
                ir::Term::Var(v) => {
                    let name = rule.vars[*v].unraw().to_string();
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
        let (text, doc) = (&rule.text, &rule.doc);
        quote!(#rt::RuleInfo { head: #head, body: &[#(#body),*], text: #text, doc: #doc })
    }

    pub(super) fn inherent_impl(&self) -> TokenStream {
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

                /// The program's table of interned strings: give it to a batch
                /// ([`Batch::with_symbols`](dred::runtime::Batch::with_symbols)) whose
                /// text holds strings the program may already hold.
                pub fn symbols(&self) -> #rt::Symbols {
                    ::std::clone::Clone::clone(&#rt::Program::bookkeeping(self).symbols)
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
                pub fn relation<T: #rt::Stored>(&self) -> #rt::TypedRelation<'_, T, <Self as #rt::HasRelation<T>>::Indexes>
                where
                    Self: #rt::HasRelation<T>,
                {
                    #rt::Program::bookkeeping(self).assert_usable();
                    #rt::TypedRelation::new(#rt::HasRelation::relation(self))
                }

                /// Whether `fact` holds.
                pub fn contains<T: #rt::Stored>(&self, fact: &T) -> bool
                where
                    Self: #rt::HasRelation<T>,
                {
                    self.relation::<T>().contains(fact)
                }

                /// A copy of every fact, input and derived.
                pub fn facts(&self) -> #facts {
                    #rt::Program::bookkeeping(self).assert_usable();
                    #rt::Program::all_facts(self)
                }

                /// What poisoned the program, if an update unwound part-way through it
                /// (a column type's method panicked): every query and update then panics
                /// until [`Self::recover`] rebuilds it.
                pub fn poisoned(&self) -> ::std::option::Option<#rt::Poisoned> {
                    #rt::Program::bookkeeping(self).poisoned()
                }

                /// Rebuilds a poisoned program exactly as it was before the update that
                /// poisoned it, and returns what had poisoned it (`None`, and nothing done,
                /// if it was not poisoned). See
                /// [`maintain::recover`](dred::runtime::maintain::recover).
                pub fn recover(&mut self) -> ::std::result::Result<::std::option::Option<#rt::Poisoned>, #rt::Unrecoverable> {
                    #rt::maintain::recover(self)
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
