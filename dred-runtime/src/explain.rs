//! Explanations: a finite, well-founded proof tree for any fact a program holds.
//!
//! Nothing is stored for this on the update path. An [`Explainer`] recomputes the least
//! model once by semi-naive evaluation and takes each fact's round as its rank: a fact of
//! round r has a rule instance whose body facts all have rank < r. A proof only ever uses
//! such instances, so ranks strictly decrease from root to leaf: no fact repeats on a path,
//! and conclusions that merely support each other in a cycle can never prove themselves.

use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use crate::batch::Batch;
use crate::maintain::materialize;
use crate::program::{least_instance, Fact, FactSets, Program};
use crate::report::Trace;

/// Why a fact holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Justification<T> {
    /// It is an input fact.
    Input,
    /// A rule instance derives it from facts proven below (none, for a fact of the program).
    Rule {
        /// Index of the rule in `Program::RULES`.
        rule: usize,
        /// The rule as written.
        text: &'static str,
        /// The rule's doc comments (empty if none).
        doc: &'static str,
        /// Proofs of the instance's body facts, in the rule's source order.
        body: Vec<Rc<Proof<T>>>,
    },
}

/// A proof tree: a fact and its justification. Subproofs are shared (`Rc`), so a proof is
/// a DAG in memory and a tree when read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proof<T> {
    /// The fact proven.
    pub fact: T,
    /// How.
    pub justification: Justification<T>,
}

impl<T> Proof<T> {
    /// The longest root-to-leaf path, counting facts.
    pub fn height(&self) -> usize {
        match &self.justification {
            Justification::Input => 1,
            Justification::Rule { body, .. } => {
                1 + body.iter().map(|p| p.height()).max().unwrap_or(0)
            }
        }
    }
}

impl<T: fmt::Display + Eq + std::hash::Hash + Clone> Proof<T> {
    fn write(&self, f: &mut fmt::Formatter<'_>, depth: usize, shown: &mut Vec<T>) -> fmt::Result {
        let indent = "  ".repeat(depth);
        match &self.justification {
            Justification::Input => writeln!(f, "{indent}{}  (input)", self.fact),
            Justification::Rule { body, .. } if body.is_empty() => {
                writeln!(f, "{indent}{}  (a fact of the program)", self.fact)
            }
            Justification::Rule { .. } if shown.contains(&self.fact) => {
                writeln!(f, "{indent}{}  (proven above)", self.fact)
            }
            Justification::Rule {
                text, doc, body, ..
            } => {
                let facts: Vec<String> = body.iter().map(|p| p.fact.to_string()).collect();
                write!(
                    f,
                    "{indent}{} <- {}    [{text}]",
                    self.fact,
                    facts.join(", ")
                )?;
                if doc.is_empty() {
                    writeln!(f)?;
                } else {
                    writeln!(f, "  // {doc}")?;
                }
                shown.push(self.fact.clone());
                for proof in body {
                    proof.write(f, depth + 1, shown)?;
                }
                Ok(())
            }
        }
    }
}

/// An indented tree, one fact per line: `R(a,d) <- R(a,e), R(e,d)    [rule]` (then
/// `  // doc` if the rule has doc comments), then its body's proofs one level deeper. A
/// derived fact whose proof was already printed says so instead of printing it again.
impl<T: fmt::Display + Eq + std::hash::Hash + Clone> fmt::Display for Proof<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, 0, &mut Vec::new())
    }
}

/// The answer for a fact that does not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotDerived<T>(pub T);

impl<T: fmt::Display> fmt::Display for NotDerived<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} does not hold: it is neither an input fact nor derived",
            self.0
        )
    }
}

impl<T: fmt::Debug + fmt::Display> std::error::Error for NotDerived<T> {}

/// Answers "why does this fact hold?" for one state of a program.
///
/// Creating it costs one full semi-naive evaluation (the ranks); each proof then costs one
/// head-bound search per fact in it, memoized across calls.
pub struct Explainer<'p, P: Program> {
    program: &'p P,
    rank: HashMap<Fact<P>, usize>,
    proven: HashMap<Fact<P>, Rc<Proof<Fact<P>>>>,
}

impl<'p, P: Program> Explainer<'p, P> {
    /// Ranks every fact `program` holds by its semi-naive round. Panics if `program` is
    /// poisoned ([`crate::poison`]).
    pub fn new(program: &'p P) -> Self {
        program.bookkeeping().assert_usable();
        let all = program.all_facts();
        let mut inputs = all.clone();
        inputs.subtract(&all.derived_part());
        let (_, report) = materialize::<P>(Batch::inserting(inputs), Trace::Rounds);
        let mut rank = HashMap::new();
        for (round, facts) in report.insert.rounds.iter().enumerate() {
            for fact in facts.facts.as_ref().expect("traced").to_vec() {
                rank.insert(fact, round);
            }
        }
        Explainer {
            program,
            rank,
            proven: HashMap::new(),
        }
    }

    /// A well-founded proof of `fact`, or [`NotDerived`] if it does not hold.
    pub fn explain(&mut self, fact: &Fact<P>) -> Result<Rc<Proof<Fact<P>>>, NotDerived<Fact<P>>> {
        if !self.rank.contains_key(fact) {
            return Err(NotDerived(fact.clone()));
        }
        // Depth-first without recursion: ranks can be as deep as the longest derivation.
        let mut witnesses: HashMap<Fact<P>, (usize, Vec<Fact<P>>)> = HashMap::new();
        let mut stack = vec![fact.clone()];
        while let Some(current) = stack.last().cloned() {
            if self.proven.contains_key(&current) {
                stack.pop();
                continue;
            }
            if P::is_input(&current) {
                let proof = Proof {
                    fact: current.clone(),
                    justification: Justification::Input,
                };
                self.proven.insert(current, Rc::new(proof));
                stack.pop();
                continue;
            }
            let (rule, body) = witnesses
                .entry(current.clone())
                .or_insert_with(|| self.lower_ranked_instance(&current));
            let unproven: Vec<Fact<P>> = body
                .iter()
                .filter(|b| !self.proven.contains_key(*b))
                .cloned()
                .collect();
            if unproven.is_empty() {
                let proof = Proof {
                    fact: current.clone(),
                    justification: Justification::Rule {
                        rule: *rule,
                        text: P::RULES[*rule].text,
                        doc: P::RULES[*rule].doc,
                        body: body.iter().map(|b| self.proven[b].clone()).collect(),
                    },
                };
                self.proven.insert(current, Rc::new(proof));
                stack.pop();
            } else {
                stack.extend(unproven);
            }
        }
        Ok(self.proven[fact].clone())
    }

    /// The least rule instance deriving `fact` whose body facts all have a lower rank.
    fn lower_ranked_instance(&self, fact: &Fact<P>) -> (usize, Vec<Fact<P>>) {
        let rank = self.rank[fact];
        least_instance(self.program, fact, |body| {
            body.iter()
                .all(|b| self.rank.get(b).is_some_and(|&r| r < rank))
        })
        .expect("a fact of semi-naive round r has an instance over facts of earlier rounds")
    }
}
