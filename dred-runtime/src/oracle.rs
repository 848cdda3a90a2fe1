//! An independent least-model computation: naive iteration over facts in text form.
//!
//! It reads only the rules as written ([`RuleInfo`]) and facts as [`GroundFact`]s, and
//! shares no join, index or maintenance code with the engine, so agreement between the two
//! means something. It is slow (every round re-matches every rule against every fact) and
//! meant for tests and demonstrations on small inputs.

use std::collections::{BTreeMap, BTreeSet};

use crate::program::{AtomInfo, RuleInfo, TermInfo};
use crate::text::GroundFact;

/// The least model of `rules` over `inputs`: every input fact and every derived fact.
///
/// Fails if a rule holds a constant whose text form the macro could not know (a constant
/// of a user-defined column type).
///
/// ```
/// use dred_runtime::oracle::least_model;
/// use dred_runtime::{AtomInfo, GroundFact, RuleInfo, TermInfo::Var};
/// // R(x, y) <- E(x, y);  R(x, z) <- R(x, y), R(y, z);
/// const XY: AtomInfo = AtomInfo { relation: "R", terms: &[Var("x"), Var("y")] };
/// const RULES: &[RuleInfo] = &[
///     RuleInfo {
///         head: XY,
///         body: &[AtomInfo { relation: "E", terms: &[Var("x"), Var("y")] }],
///         text: "R(x, y) <- E(x, y);",
///         doc: "",
///     },
///     RuleInfo {
///         head: AtomInfo { relation: "R", terms: &[Var("x"), Var("z")] },
///         body: &[XY, AtomInfo { relation: "R", terms: &[Var("y"), Var("z")] }],
///         text: "R(x, z) <- R(x, y), R(y, z);",
///         doc: "",
///     },
/// ];
/// let edge = |a: &str, b: &str| GroundFact { relation: "E".into(), values: vec![a.into(), b.into()] };
/// let model = least_model(RULES, &[edge("a", "b"), edge("b", "c")].into()).unwrap();
/// assert_eq!(model.len(), 5); // two edges, three R facts
/// ```
pub fn least_model(
    rules: &[RuleInfo],
    inputs: &BTreeSet<GroundFact>,
) -> Result<BTreeSet<GroundFact>, String> {
    for rule in rules {
        let atoms = std::iter::once(&rule.head).chain(rule.body);
        if atoms
            .flat_map(|a| a.terms)
            .any(|t| matches!(t, TermInfo::Const(None)))
        {
            return Err(format!(
                "the oracle cannot read a constant of `{}`: its column type has no known text form",
                rule.text
            ));
        }
    }
    let mut model = inputs.clone();
    loop {
        let mut by_relation: BTreeMap<&str, Vec<&GroundFact>> = BTreeMap::new();
        for fact in &model {
            by_relation.entry(&fact.relation).or_default().push(fact);
        }
        let mut derived = Vec::new();
        for rule in rules {
            for env in matches(rule.body, &by_relation) {
                derived.push(instantiate(&rule.head, &env));
            }
        }
        let before = model.len();
        model.extend(derived);
        if model.len() == before {
            return Ok(model);
        }
    }
}

type Env = BTreeMap<&'static str, String>;

/// Every variable assignment under which all `body` atoms are facts.
fn matches(body: &[AtomInfo], facts: &BTreeMap<&str, Vec<&GroundFact>>) -> Vec<Env> {
    let mut envs = vec![Env::new()];
    for atom in body {
        let candidates = facts.get(atom.relation).map_or(&[][..], Vec::as_slice);
        envs = envs
            .iter()
            .flat_map(|env| {
                candidates
                    .iter()
                    .filter(|f| f.values.len() == atom.terms.len())
                    .filter_map(move |fact| unify(atom, fact, env))
            })
            .collect();
    }
    envs
}

fn unify(atom: &AtomInfo, fact: &GroundFact, env: &Env) -> Option<Env> {
    let mut env = env.clone();
    for (term, value) in atom.terms.iter().zip(&fact.values) {
        match term {
            TermInfo::Wildcard => {}
            TermInfo::Const(Some(c)) if c == value => {}
            TermInfo::Const(_) => return None,
            TermInfo::Var(name) => match env.get(name) {
                Some(bound) if bound != value => return None,
                Some(_) => {}
                None => {
                    env.insert(name, value.clone());
                }
            },
        }
    }
    Some(env)
}

fn instantiate(head: &AtomInfo, env: &Env) -> GroundFact {
    let values = head
        .terms
        .iter()
        .map(|term| match term {
            TermInfo::Var(name) => env[name].clone(),
            TermInfo::Const(Some(c)) => c.to_string(),
            TermInfo::Const(None) | TermInfo::Wildcard => {
                unreachable!("checked: heads hold variables and known constants only")
            }
        })
        .collect();
    GroundFact {
        relation: head.relation.to_string(),
        values,
    }
}
