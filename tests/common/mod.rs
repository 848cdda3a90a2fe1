//! Test support shared by the integration tests: the seed cases' file formats, and a
//! literal, instance-based re-implementation of the seed's DRed rounds.
//!
//! Nothing here uses the engine's joins or maintenance: the reference enumerates ground rule
//! instances naively over facts in text form, as the seed's own reference does.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use dred::runtime::oracle::least_model;
use dred::runtime::{AtomInfo, Batch, FactSets, GroundFact, Program, RuleInfo, TermInfo};

pub type Facts = BTreeSet<GroundFact>;

/// The seed's nine edges: a→b, a→e, b↔c, c→d, e→d, and the independent cycle u→v→w→u.
pub const SEED_EDGES: [(&str, &str); 9] = [
    ("a", "b"),
    ("a", "e"),
    ("b", "c"),
    ("c", "b"),
    ("c", "d"),
    ("e", "d"),
    ("u", "v"),
    ("v", "w"),
    ("w", "u"),
];

/// Parses `E(a,b)`, `Ready()`, `R(1,"x y")` (optionally ending in `.`) into a ground fact.
pub fn parse_fact(text: &str) -> GroundFact {
    let text = text.trim().trim_end_matches('.');
    let open = text.find('(').expect("a fact has `(`");
    let inner = &text[open + 1..text.len() - 1];
    let mut values = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in inner.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                current.push(c);
            }
            ',' if !quoted => values.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    if !inner.is_empty() {
        values.push(current);
    }
    GroundFact {
        relation: text[..open].to_string(),
        values,
    }
}

/// The text value a file field must hold to parse as a rendered value (`"x y"` → `x y`).
pub fn field_of(rendered: &str) -> String {
    match rendered.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(inner) => inner.replace("\\\"", "\"").replace("\\\\", "\\"),
        None => rendered.to_string(),
    }
}

/// Adds a ground fact to a batch through the checked untyped path.
pub fn add_ground<P: Program>(batch: &mut Batch<P::Facts>, insert: bool, fact: &GroundFact) {
    let fields: Vec<String> = fact.values.iter().map(|v| field_of(v)).collect();
    let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
    batch
        .add_text::<P>(insert, &fact.relation, &fields)
        .unwrap_or_else(|e| panic!("{fact}: {}", e.message));
}

/// One batch of an `updates.upd` file.
#[derive(Debug, Default, Clone)]
pub struct UpdateBatch {
    pub deletions: Vec<GroundFact>,
    pub insertions: Vec<GroundFact>,
}

/// A seed case folder: initial facts, batches, expected trace.
pub struct Case {
    pub name: String,
    pub edb: Vec<GroundFact>,
    pub batches: Vec<UpdateBatch>,
    pub trace: String,
}

pub fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/seed_cases")
}

pub fn load_case(name: &str) -> Case {
    let dir = cases_dir().join(name);
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).unwrap();
    let edb = read("edb.facts")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(parse_fact)
        .collect();
    let mut batches = vec![UpdateBatch::default()];
    let updates = read("updates.upd");
    let lines: Vec<&str> = updates.lines().filter(|l| !l.trim().is_empty()).collect();
    for (i, line) in lines.iter().enumerate() {
        let line = line.trim();
        if line == "---" {
            if i + 1 < lines.len() {
                batches.push(UpdateBatch::default());
            }
        } else if let Some(fact) = line.strip_prefix('-') {
            batches.last_mut().unwrap().deletions.push(parse_fact(fact));
        } else if let Some(fact) = line.strip_prefix('+') {
            batches
                .last_mut()
                .unwrap()
                .insertions
                .push(parse_fact(fact));
        }
    }
    Case {
        name: name.to_string(),
        edb,
        batches,
        trace: read("expected.trace"),
    }
}

/// `label: F1 F2` for a sorted fact set.
pub fn line(label: &str, facts: &Facts) -> String {
    let mut out = format!("{label}:");
    for fact in facts {
        out.push(' ');
        out.push_str(&fact.to_string());
    }
    out
}

pub fn ground_set<F: FactSets>(facts: &F) -> Facts {
    facts.ground().into_iter().collect()
}

/// The input and derived facts a program holds.
pub fn split_model<P: Program>(program: &P) -> (Facts, Facts) {
    let all = program.all_facts();
    let derived = ground_set(&all.derived_part());
    let inputs = ground_set(&all).difference(&derived).cloned().collect();
    (inputs, derived)
}

pub fn is_input<P: Program>(relation: &str) -> bool {
    P::RELATIONS.iter().any(|r| r.name == relation && r.input)
}

/// The derived part of the oracle's least model over `inputs`.
pub fn oracle_derived<P: Program>(inputs: &Facts) -> Facts {
    least_model(P::RULES, inputs)
        .expect("oracle")
        .into_iter()
        .filter(|f| !is_input::<P>(&f.relation))
        .collect()
}

// ---------------------------------------------------------------------------------------
// The seed's reference, literally: ground instances enumerated over facts.

/// A ground rule instance: head and body facts.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Instance {
    pub head: GroundFact,
    pub body: Vec<GroundFact>,
}

/// Every ground instance of `rules` whose body facts all hold in `facts`.
pub fn instances(rules: &[RuleInfo], facts: &Facts) -> Vec<Instance> {
    let mut by_relation: BTreeMap<&str, Vec<&GroundFact>> = BTreeMap::new();
    for fact in facts {
        by_relation.entry(&fact.relation).or_default().push(fact);
    }
    let mut out = Vec::new();
    for rule in rules {
        let mut partial: Vec<(BTreeMap<&str, String>, Vec<GroundFact>)> =
            vec![(BTreeMap::new(), Vec::new())];
        for atom in rule.body {
            let mut next = Vec::new();
            for (env, body) in &partial {
                for fact in by_relation.get(atom.relation).into_iter().flatten() {
                    if let Some(env) = bind(atom, fact, env) {
                        let mut body = body.clone();
                        body.push((*fact).clone());
                        next.push((env, body));
                    }
                }
            }
            partial = next;
        }
        for (env, body) in partial {
            out.push(Instance {
                head: head_fact(&rule.head, &env),
                body,
            });
        }
    }
    out
}

fn bind<'a>(
    atom: &AtomInfo,
    fact: &GroundFact,
    env: &BTreeMap<&'a str, String>,
) -> Option<BTreeMap<&'a str, String>>
where
    'static: 'a,
{
    let mut env = env.clone();
    for (term, value) in atom.terms.iter().zip(&fact.values) {
        match term {
            TermInfo::Wildcard => {}
            TermInfo::Const(c) => {
                if c.as_deref() != Some(value.as_str()) {
                    return None;
                }
            }
            TermInfo::Var(v) => {
                if let Some(bound) = env.get(v) {
                    if bound != value {
                        return None;
                    }
                } else {
                    env.insert(v, value.clone());
                }
            }
        }
    }
    Some(env)
}

fn head_fact(head: &AtomInfo, env: &BTreeMap<&str, String>) -> GroundFact {
    GroundFact {
        relation: head.relation.to_string(),
        values: head
            .terms
            .iter()
            .map(|t| match t {
                TermInfo::Var(v) => env[v].clone(),
                TermInfo::Const(Some(c)) => c.to_string(),
                _ => unreachable!(),
            })
            .collect(),
    }
}

/// The seed's per-round sets for one batch.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ReferenceTrace {
    pub net_delete: Facts,
    pub net_insert: Facts,
    pub overdelete: Vec<Facts>,
    pub overdeleted_idb: Facts,
    pub rederive: Option<Vec<Facts>>,
    pub insert: Vec<Facts>,
    pub final_model: Facts,
}

/// The seed's algorithm, as its reference states it: normalize; over-delete along stored old
/// instances with a queue, round by round; rederive by scanning all instances whose head was
/// over-deleted; insert by re-matching rules on the updated facts.
pub fn reference_update(
    rules: &[RuleInfo],
    old_model: &Facts,
    is_input: impl Fn(&str) -> bool,
    deletions: &Facts,
    insertions: &Facts,
) -> ReferenceTrace {
    let old_edb: Facts = old_model
        .iter()
        .filter(|f| is_input(&f.relation))
        .cloned()
        .collect();
    let new_edb: Facts = old_edb
        .difference(deletions)
        .cloned()
        .collect::<Facts>()
        .union(insertions)
        .cloned()
        .collect();
    let mut trace = ReferenceTrace {
        net_delete: old_edb.difference(&new_edb).cloned().collect(),
        net_insert: new_edb.difference(&old_edb).cloned().collect(),
        ..Default::default()
    };

    // Step 1: over-deletion along old instances.
    let mut current = old_model.clone();
    if !trace.net_delete.is_empty() {
        let old_instances = instances(rules, old_model);
        let mut deleted = trace.net_delete.clone();
        let mut frontier = trace.net_delete.clone();
        while !frontier.is_empty() {
            trace.overdelete.push(frontier.clone());
            let next: Facts = old_instances
                .iter()
                .filter(|i| i.body.iter().any(|b| frontier.contains(b)))
                .map(|i| i.head.clone())
                .filter(|h| !deleted.contains(h))
                .collect();
            deleted.extend(next.iter().cloned());
            frontier = next;
        }
        trace.overdeleted_idb = deleted
            .iter()
            .filter(|f| !is_input(&f.relation))
            .cloned()
            .collect();
        current = current.difference(&deleted).cloned().collect();

        // Step 2: rederive from survivors, scanning every instance with an over-deleted head.
        if !trace.overdeleted_idb.is_empty() {
            let mut rounds = Vec::new();
            let mut pending = trace.overdeleted_idb.clone();
            loop {
                let round: Facts = old_instances
                    .iter()
                    .filter(|i| pending.contains(&i.head))
                    .filter(|i| i.body.iter().all(|b| current.contains(b)))
                    .map(|i| i.head.clone())
                    .collect();
                rounds.push(round.clone());
                if round.is_empty() {
                    break;
                }
                current.extend(round.iter().cloned());
                pending = pending.difference(&round).cloned().collect();
            }
            trace.rederive = Some(rounds);
        }
    }

    // Step 3: insert and propagate, re-matching rules on the updated facts.
    let mut delta = trace.net_insert.clone();
    current.extend(delta.iter().cloned());
    while !delta.is_empty() {
        trace.insert.push(delta.clone());
        let next: Facts = instances(rules, &current)
            .into_iter()
            .filter(|i| i.body.iter().any(|b| delta.contains(b)))
            .map(|i| i.head)
            .filter(|h| !current.contains(h))
            .collect();
        current.extend(next.iter().cloned());
        delta = next;
    }
    trace.final_model = current;
    trace
}

/// The engine's report as the same sets.
pub fn engine_trace<F: FactSets>(
    report: &dred::UpdateReport<F>,
    final_model: Facts,
) -> ReferenceTrace {
    let rounds = |phase: &dred::runtime::Phase<F>| -> Vec<Facts> {
        phase
            .rounds
            .iter()
            .map(|r| ground_set(r.facts.as_ref().expect("traced")))
            .collect()
    };
    ReferenceTrace {
        net_delete: ground_set(&report.net_delete),
        net_insert: ground_set(&report.net_insert),
        overdelete: rounds(&report.overdelete),
        overdeleted_idb: report
            .overdeleted_derived
            .facts
            .as_ref()
            .map(ground_set)
            .unwrap_or_default(),
        rederive: report.rederive.as_ref().map(rounds),
        insert: rounds(&report.insert),
        final_model,
    }
}

// ---------------------------------------------------------------------------------------
// Checking explanations against the rules as written.

/// Whether `head <- body` is an instance of rule `rule` (one consistent substitution).
pub fn check_instance(
    rules: &[RuleInfo],
    rule: usize,
    head: &GroundFact,
    body: &[GroundFact],
) -> Result<(), String> {
    let info = &rules[rule];
    let shown = || {
        let body: Vec<String> = body.iter().map(ToString::to_string).collect();
        format!("{head} <- {} as `{}`", body.join(", "), info.text)
    };
    if info.body.len() != body.len() {
        return Err(format!("wrong body length: {}", shown()));
    }
    let mut env = Some(BTreeMap::new());
    for (atom, fact) in std::iter::once(&info.head)
        .chain(info.body)
        .zip(std::iter::once(head).chain(body))
    {
        if atom.relation != fact.relation {
            return Err(format!("relation mismatch: {}", shown()));
        }
        env = env.and_then(|env| bind(atom, fact, &env));
    }
    env.map(|_| ())
        .ok_or_else(|| format!("not an instance: {}", shown()))
}

/// Checks a proof: every node holds, inputs are input facts, every rule node is an instance
/// of its rule over the facts proven below it, and no fact repeats on a root-to-leaf path.
pub fn check_proof<P: Program>(
    program: &P,
    proof: &dred::runtime::Proof<dred::runtime::Fact<P>>,
    path: &mut Vec<String>,
) -> Result<(), String> {
    use dred::runtime::Justification;
    let name = proof.fact.to_string();
    if path.contains(&name) {
        return Err(format!("{name} repeats on the path {path:?}"));
    }
    if !program.holds(&proof.fact) {
        return Err(format!("{name} is in a proof but does not hold"));
    }
    match &proof.justification {
        Justification::Input if P::is_input(&proof.fact) => Ok(()),
        Justification::Input => Err(format!("{name} is derived, not an input")),
        Justification::Rule { rule, body, .. } => {
            let facts: Vec<GroundFact> = body
                .iter()
                .map(|p| parse_fact(&p.fact.to_string()))
                .collect();
            check_instance(P::RULES, *rule, &parse_fact(&name), &facts)?;
            path.push(name);
            for sub in body {
                check_proof(program, sub, path)?;
            }
            path.pop();
            Ok(())
        }
    }
}
