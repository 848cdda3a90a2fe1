//! Per rule, its join functions: one fire join per delta position (and the scan that may
//! stand in for it), the head-bound instances, and the support levels; each a loop nest
//! over the plan's steps.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Ident, Index};

use super::probes::{probe_slot, probe_slots, Bound};
use super::{tuple, tuple_field, Context};
use crate::ir;
use crate::plan::{Access, ColumnUse, Join, ScanInstead, Step};

impl Context<'_> {
    /// The delta-firing and head-bound derivability functions of one rule.
    pub(super) fn rule_fns(&self, index: usize, rule: &ir::Rule) -> TokenStream {
        let rt = &self.rt;
        let facts = &self.facts;
        let fact_enum = &self.fact_enum;
        let head_relation = &self.relation(rule.head.relation).name;
        let head_ty = self.row_ty(rule.head.relation);
        let plan = &self.plan.rules[index];
        let doc = format!("`{}`", rule.text);

        let fire = (!rule.body.is_empty()).then(|| {
            let fire = format_ident!("fire_rule_{}", index);
            let variants = plan.deltas.iter().zip(&plan.head_first).zip(&plan.scans).map(|((join, head_first), scan)| {
                let position = join.delta.expect("a delta join has a delta atom");
                let delta_relation = &self.relation(rule.body[position].relation).name;
                let emit = self.head_emit(rule, join);
                let body = emit.around(self.join_code(rule, join, &emit.emit(), Mode::Live));
                if let Some(scan) = scan {
                    let choice = self.scan_choice(scan, delta_relation);
                    let emit = self.head_emit(rule, &scan.join);
                    let scan_body =
                        emit.around(self.join_code(rule, &scan.join, &emit.emit(), Mode::Live));
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
                let delta_ty = self.row_ty(rule.body[position].relation);
                let heads_first = self.head_first_code(rule, join, head_first);
                let leftover = quote!(leftover.iter().copied());
                let body_over_leftover = emit.around(self.join_code_over(
                    rule,
                    join,
                    &emit.emit(),
                    Mode::Live,
                    Some(&leftover),
                ));
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
                fn #fire(&self, delta: &#facts, admit: #rt::Admit<&#facts>, out: &mut #facts, stamped: &mut ::std::vec::Vec<(#fact_enum, #rt::Stamp)>, work: &mut #rt::Work, part: &#rt::parallel::Part) {
                    #before_latest
                    let admit = admit.looking_at(match admit.set() {
                        ::core::option::Option::Some(facts) => ::core::option::Option::Some(&facts.#head_relation),
                        ::core::option::Option::None => ::core::option::Option::None,
                    });
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
            let key = self.key_refs(rule, &plan.derive.steps[0]);
            let rt = &self.rt;
            quote! {
                /// The key hash of the bucket this rule's support check walks first, if
                /// `head` matches the rule's head.
                #[inline]
                fn #first_hash(&self, head: &#head_ty) -> ::core::option::Option<u64> {
                    #head_match_key
                    ::core::option::Option::Some(#rt::key_hash(&#key))
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
            let r = rule.body[position].relation;
            let relation = &self.relation(r).name;
            let fact = self.struct_of(r, quote!(#row));
            quote!(#fact_enum::#relation(#fact))
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
            fn #instances(&self, head: &#head_ty, visit: &mut dyn ::core::ops::FnMut(usize, &[#fact_enum]) -> bool) -> bool {
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
    /// Built-ness is read from the round's part (`Part::built`), as it was when the round
    /// began: parts of one round choose alike whatever indexes the others build meanwhile.
    pub(super) fn scan_choice(&self, scan: &ScanInstead, delta_relation: &Ident) -> TokenStream {
        let scanned = &self.relation(scan.scanned).name;
        let spared = self.scan_spared();
        let built = scan.spared.iter().map(|pair| {
            let bit = spared.iter().position(|p| p == pair).expect("listed") as u32;
            quote!(part.built(#bit))
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

    /// Every index some scan choice reads, as (relation, index), each once: its position is
    /// its bit in `Program::indexes_built`.
    pub(super) fn scan_spared(&self) -> Vec<(usize, usize)> {
        let mut spared: Vec<(usize, usize)> = Vec::new();
        for scan in self
            .plan
            .rules
            .iter()
            .flat_map(|rule| rule.scans.iter().flatten())
        {
            for pair in &scan.spared {
                if !spared.contains(pair) {
                    spared.push(*pair);
                }
            }
        }
        spared
    }

    /// `Program::indexes_built`: a bit per index of [`Context::scan_spared`] (the 64 first).
    pub(super) fn indexes_built(&self) -> TokenStream {
        let bits = self
            .scan_spared()
            .into_iter()
            .take(64)
            .enumerate()
            .map(|(bit, (r, index))| {
                let name = &self.relation(r).name;
                let path = self.index_path(r, index);
                let bit = bit as u32;
                quote!(| (u64::from(self.#name.index_is_built(#path)) << #bit))
            });
        quote!(0u64 #(#bits)*)
    }

    /// Binds the head's variables from a given head fact; returns `mismatch` on a mismatch.
    pub(super) fn head_match(&self, rule: &ir::Rule, mismatch: &TokenStream) -> TokenStream {
        let columns = &self.relation(rule.head.relation).columns;
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
                        let first_id = Index::from(first);
                        let earlier =
                            self.retype(&columns[first], &columns[k], quote!(&head.#first_id));
                        code.extend(quote!(if head.#id != *#earlier { return #mismatch; }));
                    }
                    None => {
                        first_column[*v] = Some(k);
                        code.extend(self.bind_var(rule, *v, &columns[k], quote!(&head.#id)));
                    }
                },
                ir::Term::Wildcard => unreachable!("checked: no `_` in heads"),
            }
        }
        code
    }

    /// Nested loops for `join.steps`, running `innermost` per complete match.
    pub(super) fn join_code(
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
    pub(super) fn join_code_over(
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
    pub(super) fn step_code(
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
        // A fully bound atom's fact, made from the variables, is often absent (most of the
        // `R(y, z)` that support checks look up in non-linear closure: `BENCHMARKS.md`,
        // *Design measurements*, "Support checks"); a row read from an index is held
        // unless retired.
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
                let fact = self.construct(atom, rule);
                // A membership test never sees retired facts.
                let test = if reads_stamp {
                    with_level(inner)
                } else {
                    quote!(if self.#relation.contains(#row) { #inner })
                };
                quote! {
                    {
                        let #row = &#fact;
                        work.lookup();
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
                let binds = self.binds(rule, current, &row);
                // Work is rows visited, counted per probe; a support check, which may stop
                // early, counts each row as a lookup: it tests the row's fact's stamp.
                let matched = with_level(quote!(#(#binds)* #inner));
                let (per_probe, mut per_row) = match mode {
                    Mode::Live => (quote!(work.visit(rows.len() as u64);), quote!()),
                    Mode::Supports => (quote!(), quote!(work.lookup();)),
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
                // Only a loss of support has causes; `with_causes` hands the other phases
                // `None`. One loop for both: a second copy for the phases without causes
                // saved a materialization a few percent of its instructions and doubled
                // the join's code (`BENCHMARKS.md`, *Design measurements*, "Support
                // checks").
                let walk = if derived_delta {
                    quote! {
                        let rows = #source;
                        #per_probe
                        for (#row, cause) in admit.with_causes(&self.#relation, rows) {
                            #per_row
                            if true #(&& #filters)* {
                                #matched
                            }
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
                // in place, not copied once for the checks that share it (`BENCHMARKS.md`,
                // *Design measurements*, "Support checks").
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
                        work.lookup();
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
    /// input relation's short buckets once per fact (`BENCHMARKS.md`, *Design
    /// measurements*, "Grouped deltas").
    pub(super) fn grouped_delta(
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
        let key_binds = keys.iter().enumerate().map(|(i, &(k, v))| {
            let field = tuple_field(i, keys.len());
            self.bind_var(rule, v, &body_relation.columns[k], quote!(key #field))
        });
        let payload_binds = payload
            .iter()
            .map(|&(k, v)| {
                let id = Index::from(k);
                self.bind_var(rule, v, &body_relation.columns[k], quote!(&#row.#id))
            })
            .collect::<Vec<_>>();
        // Only a loss of support (`Admit::Held`) has causes. There, a delta fact's cause is
        // looked up once per group, not once per match of the later steps, into one buffer
        // the size of a group (not beside every key: a materialization's largest delta would
        // sort twice the bytes); the other rules keep the loop without it (reading causes
        // from the buffer slowed insertion rounds: `BENCHMARKS.md`, *Design measurements*,
        // "Support checks").
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
                    for (at, &(_, #row)) in group.iter().enumerate() {
                        if work.exhausted() {
                            return;
                        }
                        let cause = causes[at];
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
        // A group is never split over parts: each part takes whole keys (`Part::takes_key`).
        let source = match delta_rows {
            Some(rows) => rows.clone(),
            None => quote!(delta.#relation.iter()),
        };
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
        let keyed = keyed_delta(rt, &source, &row, &filters, key_columns, groups);
        Some(quote! {
            #causes_buffer
            #keyed
        })
    }

    /// Comparisons for constants and already-bound variables, but for a probe's key
    /// columns: index buckets are exact, so a bucket's rows all have its key.
    pub(super) fn filters(
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
        let columns = &self.relation(atom.relation).columns;
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
                        let column = &columns[k];
                        Some(match same_atom {
                            Some(first) => {
                                let first_id = Index::from(first);
                                let earlier =
                                    self.retype(&columns[first], column, quote!(&#row.#first_id));
                                quote!(#row.#id == *#earlier)
                            }
                            None => {
                                let var = self.var_at(rule, *v, column);
                                quote!(#row.#id == *#var)
                            }
                        })
                    }
                    ColumnUse::Bind(_) | ColumnUse::Ignore => None,
                }
            })
            .collect()
    }
}

/// What a join demands of each body fact it matches.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// That it can support a head stamped `bound`, or else at what level it could.
    Supports,
    /// That it holds, though indexes may still hold retired facts.
    Live,
}

/// Whether `step` of a delta join probes an index for an atom before the delta's (it may then
/// leave out the delta's own facts: `Relation::probe_before_latest` in the runtime).
pub(super) fn walks_before_delta(join: &Join, step: &Step) -> bool {
    matches!(step.access, Access::Probe { .. }) && join.delta.is_some_and(|delta| step.atom < delta)
}

/// The delta facts a join's delta step walks one by one: `delta_rows` if given, else the
/// round's part of the delta's set of `relation`.
fn delta_source(relation: &Ident, delta_rows: Option<&TokenStream>) -> TokenStream {
    match delta_rows {
        Some(rows) => rows.clone(),
        None => quote!(part.rows(&delta.#relation)),
    }
}

/// Runs `per_chunk` over `keyed`: the delta facts from `source` whose keys the round's
/// part takes and that pass `filters`, each beside its values at `key_columns`, sorted by
/// them (for the runtime's `key_runs` to group), the program's `Settings::delta_chunk`
/// facts at a time (the runtime's `generated::fill_keyed`).
pub(super) fn keyed_delta(
    rt: &TokenStream,
    source: &TokenStream,
    row: &Ident,
    filters: &[TokenStream],
    key_columns: impl Iterator<Item = Index>,
    per_chunk: TokenStream,
) -> TokenStream {
    let key = tuple(&key_columns.map(|k| quote!(&#row.#k)).collect::<Vec<_>>());
    let keep = match filters.is_empty() {
        true => quote!(#rt::generated::keep_all),
        false => quote!(|#row| true #(&& #filters)*),
    };
    quote! {
        let mut rows = #source;
        let chunk = self.__dred.settings.delta_chunk();
        let mut keyed: ::std::vec::Vec<_> = ::std::vec::Vec::with_capacity(rows.len().min(chunk));
        while rows.len() > 0 {
            let taken = #rt::generated::fill_keyed(
                &mut keyed,
                &mut rows,
                chunk,
                part,
                |#row| #key,
                &#keep,
            );
            work.visit(taken);
            #per_chunk
        }
    }
}

impl Context<'_> {
    /// `let v_x = &row.k;` for each variable `step` binds from its column `k`.
    pub(super) fn binds(&self, rule: &ir::Rule, step: &Step, row: &Ident) -> Vec<TokenStream> {
        let columns = &self.relation(rule.body[step.atom].relation).columns;
        step.columns
            .iter()
            .enumerate()
            .filter_map(|(k, use_)| match use_ {
                ColumnUse::Bind(v) => {
                    let id = Index::from(k);
                    Some(self.bind_var(rule, *v, &columns[k], quote!(&#row.#id)))
                }
                _ => None,
            })
            .collect()
    }
}
