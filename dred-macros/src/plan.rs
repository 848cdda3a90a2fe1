//! Plans: for every rule, a join order per semi-naive delta position and one for
//! head-bound rederivation, with the indexes they probe (shared across rules).

use crate::ir;

pub struct Plan {
    /// Per relation, the key columns of each of its indexes (index id = position).
    pub indexes: Vec<Vec<Vec<usize>>>,
    /// Per rule, in rule order.
    pub rules: Vec<RulePlan>,
}

pub struct RulePlan {
    /// One join per body atom: that atom matched against the delta.
    pub deltas: Vec<Join>,
    /// The join that checks whether a given head is derivable (head variables bound).
    pub derive: Join,
}

pub struct Join {
    /// The body position matched against the delta, if any.
    pub delta: Option<usize>,
    pub steps: Vec<Step>,
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
    let rules = program
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
            let deltas = (0..rule.body.len())
                .map(|position| planner.join(Some(position), vec![false; rule.vars.len()]))
                .collect();
            let mut head_bound = vec![false; rule.vars.len()];
            for term in &rule.head.terms {
                if let ir::Term::Var(v) = term {
                    head_bound[*v] = true;
                }
            }
            let derive = planner.join(None, head_bound);
            RulePlan { deltas, derive }
        })
        .collect();
    Plan { indexes, rules }
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
        let mut remaining: Vec<usize> = (0..self.rule.body.len())
            .filter(|&p| Some(p) != delta)
            .collect();
        let mut steps = Vec::new();
        if let Some(position) = delta {
            steps.push(self.step(position, true, &mut bound));
        }
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
        Join { delta, steps }
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
