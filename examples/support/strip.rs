//! The deliberately wrong deletion the seed warns about: "repeatedly strip derived facts
//! that have no currently present support". Kept for demonstration and tests only.
//!
//! Conclusions that support each other in a cycle survive it even when nothing grounds
//! them: on the seed's graph, deleting E(a,b) leaves R(a,b) and R(a,c) standing.

use std::collections::{BTreeMap, BTreeSet};

use dred::runtime::{AtomInfo, GroundFact, RuleInfo, TermInfo};

/// Removes `deleted` input facts from `model`, then strips derived facts (those not in
/// `inputs_after`) that no rule instance over the remaining facts supports, until stable.
pub fn strip_unsupported(
    rules: &[RuleInfo],
    model: &BTreeSet<GroundFact>,
    deleted: &BTreeSet<GroundFact>,
    is_input: impl Fn(&str) -> bool,
) -> BTreeSet<GroundFact> {
    let mut current: BTreeSet<GroundFact> = model.difference(deleted).cloned().collect();
    loop {
        let unsupported: Vec<GroundFact> = current
            .iter()
            .filter(|f| !is_input(&f.relation))
            .filter(|f| !rules.iter().any(|rule| supports(rule, f, &current)))
            .cloned()
            .collect();
        if unsupported.is_empty() {
            return current;
        }
        for fact in unsupported {
            current.remove(&fact);
        }
    }
}

/// Whether some instance of `rule` with head `fact` has its whole body in `facts`.
fn supports(rule: &RuleInfo, fact: &GroundFact, facts: &BTreeSet<GroundFact>) -> bool {
    let Some(env) = unify(&rule.head, fact, &BTreeMap::new()) else {
        return false;
    };
    let mut envs = vec![env];
    for atom in rule.body {
        envs = envs
            .iter()
            .flat_map(|env| {
                facts
                    .iter()
                    .filter(|f| f.relation == atom.relation)
                    .filter_map(|f| unify(atom, f, env))
                    .collect::<Vec<_>>()
            })
            .collect();
    }
    !envs.is_empty()
}

fn unify(
    atom: &AtomInfo,
    fact: &GroundFact,
    env: &BTreeMap<&'static str, String>,
) -> Option<BTreeMap<&'static str, String>> {
    if atom.relation != fact.relation || atom.terms.len() != fact.values.len() {
        return None;
    }
    let mut env = env.clone();
    for (term, value) in atom.terms.iter().zip(&fact.values) {
        match term {
            TermInfo::Wildcard => {}
            TermInfo::Const(c) => {
                if c.as_deref() != Some(value.as_str()) {
                    return None;
                }
            }
            TermInfo::Var(v) => match env.get(v) {
                Some(bound) if bound != value => return None,
                Some(_) => {}
                None => {
                    env.insert(v, value.clone());
                }
            },
        }
    }
    Some(env)
}
