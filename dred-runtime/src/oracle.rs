//! An independent least-model computation: semi-naive iteration over facts in text form.
//!
//! It reads only the rules as written ([`RuleInfo`]) and facts as [`GroundFact`]s, and
//! shares no join, index or maintenance code with the engine, so agreement between the two
//! means something. It is slow (facts are strings, every variable binding a map, each
//! round's indexes rebuilt from scratch) and meant for tests, soaks and demonstrations on
//! inputs of up to a few thousand facts.

use std::collections::{BTreeMap, BTreeSet, HashMap};

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
    // Semi-naive: each round matches every rule with one body atom on the last round's new
    // facts and the others on all facts, so that the rounds cost the facts they add.
    let mut model = inputs.clone();
    let mut delta: Vec<GroundFact> = model.iter().cloned().collect();
    let mut derived: BTreeSet<GroundFact> = rules
        .iter()
        .filter(|rule| rule.body.is_empty())
        .map(|rule| instantiate(&rule.head, &Env::new()))
        .collect();
    loop {
        let all = Facts::new(model.iter());
        let new = Facts::new(delta.iter());
        for rule in rules {
            for position in 0..rule.body.len() {
                for env in matches(rule.body, position, &all, &new) {
                    derived.insert(instantiate(&rule.head, &env));
                }
            }
        }
        derived.retain(|fact| !model.contains(fact));
        if derived.is_empty() {
            return Ok(model);
        }
        model.extend(derived.iter().cloned());
        delta = std::mem::take(&mut derived).into_iter().collect();
    }
}

type Env = BTreeMap<&'static str, String>;

/// Facts by relation, and by relation, column and the hash of a value (to match an atom
/// with a bound term against the facts that may agree on it, not all of them; matching
/// checks every value).
struct Facts<'a> {
    all: HashMap<&'a str, Vec<&'a GroundFact>>,
    by_value: HashMap<(&'a str, usize, u64), Vec<&'a GroundFact>>,
}

fn value_hash(value: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

impl<'a> Facts<'a> {
    fn new(facts: impl Iterator<Item = &'a GroundFact>) -> Self {
        let mut index = Facts {
            all: HashMap::new(),
            by_value: HashMap::new(),
        };
        for fact in facts {
            index.all.entry(&fact.relation).or_default().push(fact);
            for (column, value) in fact.values.iter().enumerate() {
                let key = (fact.relation.as_str(), column, value_hash(value));
                index.by_value.entry(key).or_default().push(fact);
            }
        }
        index
    }

    /// The facts that may match `atom` under `env`: those agreeing with its first bound
    /// term, or all of its relation's.
    fn candidates(&self, atom: &AtomInfo, env: &Env) -> &[&'a GroundFact] {
        let bound = atom
            .terms
            .iter()
            .enumerate()
            .find_map(|(column, term)| match term {
                TermInfo::Const(Some(value)) => Some((column, *value)),
                TermInfo::Var(name) => env.get(name).map(|value| (column, value.as_str())),
                _ => None,
            });
        let found = match bound {
            Some((column, value)) => {
                (self.by_value).get(&(atom.relation, column, value_hash(value)))
            }
            None => self.all.get(atom.relation),
        };
        found.map_or(&[][..], Vec::as_slice)
    }
}

/// Every variable assignment under which all `body` atoms are facts of `all`, the one at
/// `position` a fact of `new`.
fn matches(body: &[AtomInfo], position: usize, all: &Facts, new: &Facts) -> Vec<Env> {
    let mut envs = vec![Env::new()];
    for (k, atom) in body.iter().enumerate() {
        let facts = if k == position { new } else { all };
        envs = envs
            .iter()
            .flat_map(|env| {
                facts
                    .candidates(atom, env)
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
