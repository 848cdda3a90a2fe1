//! Plans: for every rule, a join order per semi-naive delta position (and, for a loss of
//! support, one that walks the heads first) and one for head-bound rederivation, with the
//! indexes they probe (shared across rules); and the relations whose losses the runtime
//! can find by reachability instead of by joins ([`Closure`]).

use crate::ir;

pub struct Plan {
    /// Per relation, the key columns of each of its indexes (index id = position).
    pub indexes: Vec<Vec<Vec<usize>>>,
    /// Per relation, per index: whether a materialization builds it when no join has (see
    /// [`ScanInstead`]).
    pub eager: Vec<Vec<bool>>,
    /// Per rule, in rule order.
    pub rules: Vec<RulePlan>,
    /// The relations kept by reachability under alternative proofs (see [`Closure`]).
    pub closures: Vec<Closure>,
}

/// A derived relation defined as the transitive closure of an input relation, and by
/// nothing else: `p(x, y) :- e(x, y).` and one of `p(x, z) :- p(x, y), e(y, z).`,
/// `p(x, z) :- e(x, y), p(y, z).` or `p(x, z) :- p(x, y), p(y, z).` (body atoms in either
/// order, any variable names). The runtime can then find what a deletion of edges takes
/// from it by reachability over the edges (`dred_runtime::closure`).
pub struct Closure {
    pub relation: usize,
    pub edges: usize,
}

pub struct RulePlan {
    /// One join per body atom: that atom matched against the delta.
    pub deltas: Vec<Join>,
    /// Per body atom, the join that may stand in for its delta join (see [`ScanInstead`]).
    pub scans: Vec<Option<ScanInstead>>,
    /// Per body atom, the join a loss of support may run instead (see [`HeadFirst`]).
    pub head_first: Vec<Option<HeadFirst>>,
    /// The join that checks whether a given head is derivable (head variables bound).
    pub derive: Join,
}

pub struct Join {
    /// The body position matched against the delta, if any.
    pub delta: Option<usize>,
    pub steps: Vec<Step>,
}

/// A loss of support's join from a delta atom: the delta fact, then the heads it may have
/// supported (held facts of the head relation sharing its values, read from an index the
/// other joins already keep), then the rest of the body, every variable of both bound.
/// `Admit::Held` admits only heads in a stamp range, which a bucket kept in stamp order
/// gives by binary search, so it can cost far fewer lookups than the body-first join's
/// matches, one head lookup each (non-linear closure: `R(x, z)` for a delta `R(x, y)`).
///
/// `join.steps[1]` matches the head, as body atom `rule.body.len()` of the rule with its
/// head appended (see [`HeadFirst::HEAD_STEP`]); `join.delta` is `None`, as nothing after the
/// head walks a relation's older facts only.
pub struct HeadFirst {
    pub join: Join,
}

impl HeadFirst {
    /// The step of `join` that matches the head.
    pub const HEAD_STEP: usize = 1;
}

/// A delta join from an input atom that spares a derived relation's indexes: the delta
/// fact, then the other input atoms (one of them scanned), then the derived atoms, each by
/// then a membership test. Same-generation's `Sg(x, y) <- Par(x, a), Sg(a, b), Par(y, b)`
/// from a delta `Par(x, a)`: every `Par(y, b)`, then `Sg(a, b)`, where the delta join
/// walks `Sg(a, _)`. Those indexes serve no other join, so a materialization leaves them
/// unbuilt (its first round, the only one with input deltas, meets `Sg` empty); an update
/// scans while that costs less than building them: `|delta| × |scanned| ≤` the derived
/// relations' facts.
pub struct ScanInstead {
    pub join: Join,
    /// The input relation the join scans, once per delta fact.
    pub scanned: usize,
    /// The indexes of derived relations the delta join probes, as (relation, index).
    pub spared: Vec<(usize, usize)>,
}

pub struct Step {
    /// Body position of the atom this step matches.
    pub atom: usize,
    pub access: Access,
    /// What each column does, in column order.
    pub columns: Vec<ColumnUse>,
}

pub enum Access {
    /// Iterate the delta set.
    Delta,
    /// Every column known: one membership test.
    Contains,
    /// Some columns known: probe the relation's index `index` on `key` columns.
    Probe { index: usize, key: Vec<usize> },
    /// Nothing known: scan the relation.
    Scan,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ColumnUse {
    /// First occurrence of a variable used again later: bind it.
    Bind(usize),
    /// A variable already bound: compare.
    Check(usize),
    /// A constant: compare.
    Const,
    /// `_`, or a variable used nowhere else.
    Ignore,
}

pub fn plan(program: &ir::Program) -> Plan {
    let mut indexes = vec![Vec::new(); program.relations.len()];
    let inputs: Vec<bool> = program.relations.iter().map(|r| r.input).collect();
    let mut rules = program
        .rules
        .iter()
        .map(|rule| {
            let occurrences = rule.occurrences();
            let mut planner = JoinPlanner {
                rule,
                occurrences: &occurrences,
                inputs: &inputs,
                indexes: &mut indexes,
            };
            let deltas: Vec<Join> = (0..rule.body.len())
                .map(|position| planner.join(Some(position), vec![false; rule.vars.len()]))
                .collect();
            let mut head_bound = vec![false; rule.vars.len()];
            for term in &rule.head.terms {
                if let ir::Term::Var(v) = term {
                    head_bound[*v] = true;
                }
            }
            let derive = planner.join(None, head_bound);
            let scans = deltas
                .iter()
                .map(|join| scan_instead(rule, join, &occurrences, &inputs, planner.indexes))
                .collect();
            RulePlan {
                deltas,
                scans,
                head_first: Vec::new(),
                derive,
            }
        })
        .collect::<Vec<_>>();
    // Head-first joins only use indexes the other joins keep: a new index on a derived
    // relation would cost memory in every materialization for the sake of some updates.
    for (rule, rule_plan) in program.rules.iter().zip(&mut rules) {
        rule_plan.head_first = (0..rule.body.len())
            .map(|position| head_first(rule, position, &inputs, &indexes))
            .collect();
    }
    let eager = spare_indexes(program, &mut rules, &inputs, &indexes);
    Plan {
        indexes,
        eager,
        rules,
        closures: closures(program),
    }
}

/// The program's [`Closure`]s.
fn closures(program: &ir::Program) -> Vec<Closure> {
    (0..program.relations.len())
        .filter_map(|relation| {
            if program.relations[relation].input {
                return None;
            }
            let rules: Vec<&ir::Rule> = program
                .rules
                .iter()
                .filter(|rule| rule.head.relation == relation)
                .collect();
            let [first, second] = rules.as_slice() else {
                return None;
            };
            let (base, step) = if first.body.len() == 1 {
                (first, second)
            } else {
                (second, first)
            };
            let edges = closure_base(program, base)?;
            // The reachability code moves nodes between the two relations' columns: it
            // needs them spelt alike (two spellings of one type take the general path).
            let node = &program.relations[relation].columns[0].ty_text;
            let one_node_type = [relation, edges]
                .iter()
                .flat_map(|&r| &program.relations[r].columns)
                .all(|column| column.ty_text == *node);
            (one_node_type && closure_step(step, relation, edges))
                .then_some(Closure { relation, edges })
        })
        .collect()
}

/// The two distinct variables of a binary atom.
fn pair(atom: &ir::Atom) -> Option<(usize, usize)> {
    match atom.terms.as_slice() {
        [ir::Term::Var(a), ir::Term::Var(b)] if a != b => Some((*a, *b)),
        _ => None,
    }
}

/// For `p(x, y) :- e(x, y).` with `e` an input relation, `e`.
fn closure_base(program: &ir::Program, rule: &ir::Rule) -> Option<usize> {
    let [edge] = rule.body.as_slice() else {
        return None;
    };
    let head = pair(&rule.head)?;
    (program.relations[edge.relation].input && pair(edge)? == head).then_some(edge.relation)
}

/// Whether `rule` is `closure(x, z) :- a(x, y), b(y, z).` with `a` and `b` the closure or
/// its edges, not both edges, in either order.
fn closure_step(rule: &ir::Rule, closure: usize, edges: usize) -> bool {
    let (Some((x, z)), [one, two]) = (pair(&rule.head), rule.body.as_slice()) else {
        return false;
    };
    let chained = |first: &ir::Atom, second: &ir::Atom| match (pair(first), pair(second)) {
        (Some((a, y)), Some((y2, c))) => a == x && c == z && y == y2 && y != x && y != z && x != z,
        _ => false,
    };
    let relations = [one.relation, two.relation];
    relations.iter().all(|&r| r == closure || r == edges)
        && relations.contains(&closure)
        && (chained(one, two) || chained(two, one))
}

/// The index sets a materialization builds: every index but those of derived relations
/// that only delta joins with a [`ScanInstead`] probe. A scan that would spare an index
/// some other join needs anyway is dropped, and its join's probes then count as needs.
fn spare_indexes(
    program: &ir::Program,
    rules: &mut [RulePlan],
    inputs: &[bool],
    indexes: &[Vec<Vec<usize>>],
) -> Vec<Vec<bool>> {
    loop {
        let mut eager: Vec<Vec<bool>> = indexes
            .iter()
            .zip(inputs)
            .map(|(keys, &input)| vec![input; keys.len()])
            .collect();
        for (rule, plan) in program.rules.iter().zip(rules.iter()) {
            let head_first = plan.head_first.iter().flatten().map(|h| &h.join);
            let scans = plan.scans.iter().flatten().map(|s| &s.join);
            let unspared = plan
                .deltas
                .iter()
                .zip(&plan.scans)
                .filter(|(_, scan)| scan.is_none())
                .map(|(join, _)| join);
            let needing = unspared
                .chain(head_first)
                .chain(scans)
                .chain(std::iter::once(&plan.derive));
            for join in needing {
                for (relation, index) in probes(rule, join) {
                    eager[relation][index] = true;
                }
            }
        }
        let mut dropped = false;
        for plan in rules.iter_mut() {
            for scan in &mut plan.scans {
                if scan
                    .as_ref()
                    .is_some_and(|s| s.spared.iter().any(|&(r, i)| eager[r][i]))
                {
                    *scan = None;
                    dropped = true;
                }
            }
        }
        if !dropped {
            return eager;
        }
    }
}

/// The (relation, index) pairs a join of `rule` probes (a head-first join's head step
/// included: body atom `rule.body.len()`).
fn probes<'a>(rule: &'a ir::Rule, join: &'a Join) -> impl Iterator<Item = (usize, usize)> + 'a {
    join.steps.iter().filter_map(|step| match step.access {
        Access::Probe { index, .. } => Some((relation_of(rule, step), index)),
        _ => None,
    })
}

/// The relation `step` of a join of `rule` matches.
fn relation_of(rule: &ir::Rule, step: &Step) -> usize {
    rule.body.get(step.atom).unwrap_or(&rule.head).relation
}

/// The [`ScanInstead`] of `delta_join`, when one applies: its delta atom is an input's, it
/// probes a derived relation's index, and ordering the input atoms first leaves exactly
/// one of them scanned and every derived atom fully known.
fn scan_instead(
    rule: &ir::Rule,
    delta_join: &Join,
    occurrences: &[usize],
    inputs: &[bool],
    indexes: &mut Vec<Vec<Vec<usize>>>,
) -> Option<ScanInstead> {
    let position = delta_join.delta?;
    if !inputs[rule.body[position].relation] {
        return None;
    }
    let spared: Vec<(usize, usize)> = probes(rule, delta_join)
        .filter(|&(relation, _)| !inputs[relation])
        .collect();
    if spared.is_empty() {
        return None;
    }
    // Planned against a copy: a scan that does not apply adds no index.
    let mut planned = indexes.clone();
    let mut planner = JoinPlanner {
        rule,
        occurrences,
        inputs,
        indexes: &mut planned,
    };
    let mut bound = vec![false; rule.vars.len()];
    let mut steps = vec![planner.step(position, true, &mut bound)];
    // The input atoms, then the derived ones: each call plans the atoms not yet done.
    let (input_atoms, derived_atoms): (Vec<usize>, Vec<usize>) = (0..rule.body.len())
        .filter(|&p| p != position)
        .partition(|&p| inputs[rule.body[p].relation]);
    let all_but_inputs = [&[position][..], &derived_atoms].concat();
    steps.extend(planner.join_rest(&all_but_inputs, bound.clone()));
    for column in steps[1..].iter().flat_map(|step| &step.columns) {
        if let ColumnUse::Bind(v) = column {
            bound[*v] = true;
        }
    }
    let all_but_derived = [&[position][..], &input_atoms].concat();
    steps.extend(planner.join_rest(&all_but_derived, bound));
    let scanned: Vec<usize> = steps
        .iter()
        .filter(|s| matches!(s.access, Access::Scan))
        .map(|s| relation_of(rule, s))
        .collect();
    let derived_known = steps
        .iter()
        .filter(|s| !inputs[relation_of(rule, s)])
        .all(|s| matches!(s.access, Access::Contains));
    if scanned.len() != 1 || !derived_known {
        return None;
    }
    *indexes = planned;
    Some(ScanInstead {
        join: Join {
            delta: Some(position),
            steps,
        },
        scanned: scanned[0],
        spared,
    })
}

/// The head-first join from body atom `position`, when one applies: the delta atom is of
/// a derived relation (an input fact's heads are not filtered by stamp), binds some but not
/// all of the head's columns, the head relation has an index on exactly those, and the rest
/// of the body is then fully known: a membership test per atom, so a head costs a known
/// number of lookups (with a probe among them, Andersen's `Load(v, p)` after `Pt(_, o)`,
/// its walks made the join slower than the body-first one).
fn head_first(
    rule: &ir::Rule,
    position: usize,
    inputs: &[bool],
    indexes: &[Vec<Vec<usize>>],
) -> Option<HeadFirst> {
    if inputs[rule.body[position].relation] || rule.body.len() < 2 {
        return None;
    }
    let mut extended = rule.clone();
    extended.body.push(rule.head.clone());
    let occurrences = extended.occurrences();
    // Planned against a copy: a head step without an index to reuse is dropped.
    let mut planner = JoinPlanner {
        rule: &extended,
        occurrences: &occurrences,
        inputs,
        indexes: &mut indexes.to_vec(),
    };
    let mut bound = vec![false; rule.vars.len()];
    let delta = planner.step(position, true, &mut bound);
    let binds_head_var = rule
        .head
        .terms
        .iter()
        .any(|t| matches!(t, ir::Term::Var(v) if bound[*v]));
    let head = planner.step(rule.body.len(), false, &mut bound);
    let kept_index = match head.access {
        Access::Probe { index, .. } => index < indexes[rule.head.relation].len(),
        _ => false,
    };
    if !binds_head_var || !kept_index {
        return None;
    }
    let rest = planner.join_rest(&[position, rule.body.len()], bound);
    if !rest.iter().all(|s| matches!(s.access, Access::Contains)) {
        return None;
    }
    let mut steps = vec![delta, head];
    steps.extend(rest);
    Some(HeadFirst {
        join: Join { delta: None, steps },
    })
}

struct JoinPlanner<'a> {
    rule: &'a ir::Rule,
    occurrences: &'a [usize],
    /// Per relation, whether it is an input relation.
    inputs: &'a [bool],
    indexes: &'a mut Vec<Vec<Vec<usize>>>,
}

impl JoinPlanner<'_> {
    /// Greedy order: start at the delta atom, then always the atom with the most known
    /// columns (fully known first), ties to input relations (derived ones, closures of
    /// them, tend to have far more facts per key), then to source order.
    fn join(&mut self, delta: Option<usize>, mut bound: Vec<bool>) -> Join {
        let mut steps = Vec::new();
        if let Some(position) = delta {
            steps.push(self.step(position, true, &mut bound));
        }
        steps.extend(self.join_rest(delta.as_slice(), bound));
        Join { delta, steps }
    }

    /// The greedy order of the body atoms but those `done`, given the variables `bound`.
    fn join_rest(&mut self, done: &[usize], mut bound: Vec<bool>) -> Vec<Step> {
        let mut remaining: Vec<usize> = (0..self.rule.body.len())
            .filter(|p| !done.contains(p))
            .collect();
        let mut steps = Vec::new();
        while !remaining.is_empty() {
            let best = remaining
                .iter()
                .enumerate()
                .max_by_key(|(_, &p)| {
                    let (known, arity) = self.known_columns(p, &bound);
                    let input = self.inputs[self.rule.body[p].relation];
                    (known == arity, known, input, std::cmp::Reverse(p))
                })
                .map(|(i, _)| i)
                .expect("remaining is not empty");
            let position = remaining.remove(best);
            steps.push(self.step(position, false, &mut bound));
        }
        steps
    }

    fn known_columns(&self, position: usize, bound: &[bool]) -> (usize, usize) {
        let terms = &self.rule.body[position].terms;
        let known = terms
            .iter()
            .filter(|t| match t {
                ir::Term::Const(_) => true,
                ir::Term::Var(v) => bound[*v],
                ir::Term::Wildcard => false,
            })
            .count();
        (known, terms.len())
    }

    fn step(&mut self, position: usize, is_delta: bool, bound: &mut [bool]) -> Step {
        let atom = &self.rule.body[position];
        let mut key = Vec::new();
        let mut bound_here = Vec::new();
        let columns: Vec<ColumnUse> = atom
            .terms
            .iter()
            .enumerate()
            .map(|(column, term)| match term {
                ir::Term::Const(_) => {
                    key.push(column);
                    ColumnUse::Const
                }
                ir::Term::Var(v) if bound[*v] => {
                    key.push(column);
                    ColumnUse::Check(*v)
                }
                // Repeated within this atom: compared with its first occurrence, not a key.
                ir::Term::Var(v) if bound_here.contains(v) => ColumnUse::Check(*v),
                ir::Term::Var(v) if self.occurrences[*v] > 1 => {
                    bound_here.push(*v);
                    ColumnUse::Bind(*v)
                }
                ir::Term::Var(_) | ir::Term::Wildcard => ColumnUse::Ignore,
            })
            .collect();
        for v in bound_here {
            bound[v] = true;
        }
        let access = if is_delta {
            Access::Delta
        } else if key.len() == columns.len() {
            Access::Contains
        } else if key.is_empty() {
            Access::Scan
        } else {
            let relation_indexes = &mut self.indexes[atom.relation];
            let index = match relation_indexes.iter().position(|k| *k == key) {
                Some(existing) => existing,
                None => {
                    relation_indexes.push(key.clone());
                    relation_indexes.len() - 1
                }
            };
            Access::Probe { index, key }
        };
        Step {
            atom: position,
            access,
            columns,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use quote::quote;

    /// The plan of a valid program's source.
    pub(crate) fn plan_of(source: proc_macro2::TokenStream) -> Plan {
        let mut errors = crate::Errors::default();
        let items = crate::syntax::parse(source, &mut errors);
        plan(&crate::check::check(items, &mut errors).expect("a valid program"))
    }

    /// Linear transitive closure, a program several stages' tests plan.
    pub(crate) fn linear_closure() -> proc_macro2::TokenStream {
        quote! {
            struct Tc;
            @input struct E(u32, u32);
            struct R(u32, u32);
            R(x, y) <- E(x, y);
            R(x, z) <- E(x, y), R(y, z);
        }
    }

    /// Per rule, the body atoms from which a loss of support may walk the heads first.
    fn head_first_atoms(source: proc_macro2::TokenStream) -> Vec<Vec<usize>> {
        plan_of(source)
            .rules
            .iter()
            .map(|rule| {
                let atoms = rule.head_first.iter().enumerate();
                atoms.filter_map(|(p, h)| h.as_ref().map(|_| p)).collect()
            })
            .collect()
    }

    /// Per rule, the body atoms whose delta join may scan instead, with the relation each
    /// scans.
    fn scans(plan: &Plan) -> Vec<Vec<(usize, usize)>> {
        let of_rule = |rule: &RulePlan| {
            let atoms = rule.scans.iter().enumerate();
            atoms
                .filter_map(|(p, s)| s.as_ref().map(|s| (p, s.scanned)))
                .collect()
        };
        plan.rules.iter().map(of_rule).collect()
    }

    /// The (closure, edges) relation pairs a program's plan keeps by reachability.
    fn closures_of(source: proc_macro2::TokenStream) -> Vec<(usize, usize)> {
        let plan = plan_of(source);
        plan.closures
            .iter()
            .map(|c| (c.relation, c.edges))
            .collect()
    }

    #[test]
    fn closures_of_input_relations_are_recognized_in_every_form() {
        assert_eq!(closures_of(linear_closure()), [(1, 0)]);
        let forms = [
            quote!(R(a, c) <- R(a, b), E(b, c);),
            quote!(R(a, c) <- E(b, c), R(a, b);),
            quote!(R(a, c) <- R(b, c), R(a, b);),
        ];
        for step in forms {
            let source = quote! {
                struct Tc;
                @input struct E(u32, u32);
                struct R(u32, u32);
                #step
                R(p, q) <- E(p, q);
                struct Other(u32);
                Other(x) <- R(x, x);
            };
            assert_eq!(closures_of(source), [(1, 0)]);
        }
    }

    #[test]
    fn a_relation_with_anything_besides_the_closure_rules_is_no_closure() {
        let not_closures = [
            // A third rule.
            quote!(R(x, y) <- E(x, y); R(x, z) <- R(x, y), E(y, z); R(x, x) <- E(x, y);),
            // Edges read backwards.
            quote!(R(x, y) <- E(y, x); R(x, z) <- R(x, y), E(y, z);),
            // Not a chain through `y`.
            quote!(R(x, y) <- E(x, y); R(x, z) <- R(x, y), E(x, z);),
            quote!(R(x, y) <- E(x, y); R(x, z) <- R(y, x), E(y, z);),
            // Only edges in the step.
            quote!(R(x, y) <- E(x, y); R(x, z) <- E(x, y), E(y, z);),
            // A constant.
            quote!(R(x, y) <- E(x, y); R(x, z) <- R(x, 1), E(1, z);),
            // Derived edges.
            quote!(R(x, y) <- D(x, y); R(x, z) <- R(x, y), D(y, z); D(x, y) <- E(x, y);),
        ];
        for rules in not_closures {
            let source = quote! {
                struct Tc;
                @input struct E(u32, u32);
                struct R(u32, u32);
                struct D(u32, u32);
                #rules
            };
            assert_eq!(closures_of(source.clone()), [], "{source}");
        }
    }

    #[test]
    fn input_deltas_scan_instead_of_probing_indexes_no_other_join_needs() {
        // Same-generation: a delta `Par` fact scans the other `Par` atom, then tests `Sg`;
        // both of `Sg`'s indexes serve only those joins, so neither is built eagerly.
        let plan = plan_of(quote! {
            struct SameGeneration;
            @input struct Par(u32, u32);
            struct Sg(u32, u32);
            Sg(x, y) <- Par(x, p), Par(y, p);
            Sg(x, y) <- Par(x, a), Sg(a, b), Par(y, b);
        });
        assert_eq!(scans(&plan), [vec![], vec![(0, 0), (2, 0)]]);
        assert_eq!(plan.eager, [vec![true, true], vec![false, false]]);
        let scan = plan.rules[1].scans[0]
            .as_ref()
            .expect("a scan from Par(x, a)");
        let accesses: Vec<_> = scan
            .join
            .steps
            .iter()
            .map(|s| (s.atom, access_name(&s.access)))
            .collect();
        assert_eq!(accesses, [(0, "delta"), (2, "scan"), (1, "contains")]);
        // Linear closure: no other input atom to scan, so `R`'s index is built.
        let plan = plan_of(linear_closure());
        assert_eq!(scans(&plan), [vec![], vec![]]);
        assert_eq!(plan.eager[1], [true]);
        // A scan that would spare an index another join probes is dropped: `Sg(a, _)` is
        // also probed from a delta `Mark` fact here.
        let plan = plan_of(quote! {
            struct Shared;
            @input struct Par(u32, u32);
            struct Sg(u32, u32);
            struct Mark(u32);
            struct Up(u32);
            Sg(x, y) <- Par(x, p), Par(y, p);
            Sg(x, y) <- Par(x, a), Sg(a, b), Par(y, b);
            Mark(a) <- Par(a, a);
            Up(a) <- Mark(a), Sg(a, b);
        });
        assert_eq!(scans(&plan)[1], [(2, 0)]);
        assert_eq!(plan.eager[1].iter().filter(|&&e| !e).count(), 1);
        // No scan where the derived atom is still not fully known after the inputs...
        let plan = plan_of(quote! {
            struct Partial;
            @input struct A(u32);
            @input struct B(u32, u32);
            struct D(u32, u32);
            D(x, y) <- B(x, y);
            D(x, z) <- A(x), D(x, y), B(z, w), A(w);
        });
        assert_eq!(scans(&plan)[1], []);
        // ... nor where it would scan two input relations, a product.
        let plan = plan_of(quote! {
            struct Product;
            @input struct A(u32);
            @input struct B(u32);
            @input struct T(u32, u32, u32);
            struct D(u32, u32, u32);
            struct H(u32);
            D(x, y, z) <- T(x, y, z);
            H(x) <- A(x), B(y), B(z), D(x, y, z);
        });
        assert_eq!(scans(&plan)[1], []);
        assert!(plan.eager[3].iter().all(|&eager| eager));
    }

    fn access_name(access: &Access) -> &'static str {
        match access {
            Access::Delta => "delta",
            Access::Contains => "contains",
            Access::Probe { .. } => "probe",
            Access::Scan => "scan",
        }
    }

    #[test]
    fn heads_first_only_from_derived_atoms_with_a_kept_head_index_and_a_known_rest() {
        // Non-linear closure: each atom binds one column of the head, whose index the other
        // variant probes; the other atom is then fully known.
        let nonlinear = head_first_atoms(quote! {
            struct Tc;
            @input struct E(u32, u32);
            struct R(u32, u32);
            R(x, y) <- E(x, y);
            R(x, z) <- R(x, y), R(y, z);
        });
        assert_eq!(nonlinear, [vec![], vec![0, 1]]);
        // Linear closure: `R`'s only index is on its first column, and the delta `R(y, z)`
        // binds the head's second.
        let linear = head_first_atoms(linear_closure());
        assert_eq!(linear, [vec![], vec![]]);
        // Andersen: `Assign`'s rule only; the others would leave a probe after the head.
        let andersen = head_first_atoms(quote! {
            struct Andersen;
            @input struct AddressOf(u32, u32);
            @input struct Assign(u32, u32);
            @input struct Load(u32, u32);
            @input struct Store(u32, u32);
            struct Pt(u32, u32);
            Pt(p, o) <- AddressOf(p, o);
            Pt(p, o) <- Assign(p, q), Pt(q, o);
            Pt(v, o) <- Load(v, p), Pt(p, q), Pt(q, o);
            Pt(q, o) <- Store(p, w), Pt(p, q), Pt(w, o);
        });
        assert_eq!(andersen, [vec![], vec![1], vec![], vec![]]);
    }
}
