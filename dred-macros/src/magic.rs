//! Magic sets: each `@query` becomes a demand-driven program of its own, with adorned
//! copies of the relations the query reaches, one demand relation per adorned relation,
//! and left-to-right sideways information passing.
//!
//! The rewritten program is an ordinary positive program (demand and answers are derived
//! together), so DRed maintains both: a demand that only a deleted path supported is
//! withdrawn with the answers it alone supported.

use std::collections::BTreeMap;

use quote::{format_ident, ToTokens};
use syn::parse_quote;

use crate::ir::{self, AnswerColumn, Answers, Atom, QueryArg, Relation, Rule, Term};

/// The demand-driven program for `query` over `program`'s rules.
pub fn rewrite(program: &ir::Program, query: &ir::Query) -> ir::Program {
    let mut rewriter = Rewriter {
        program,
        query,
        module: format_ident!(
            "{}",
            snake_case(&query.name.to_string()),
            span = query.name.span()
        ),
        relations: Vec::new(),
        rules: Vec::new(),
        inputs: BTreeMap::new(),
        adorned: BTreeMap::new(),
        pending: Vec::new(),
    };
    let adornment: Vec<bool> = query
        .args
        .iter()
        .map(|arg| !matches!(arg, QueryArg::Free))
        .collect();
    let (answers_relation, demand) = rewriter.adorned(query.relation, &adornment);
    let (ask, answer_columns) = rewriter.seed(demand);
    while let Some((relation, adornment)) = rewriter.pending.pop() {
        rewriter.rewrite_rules_of(relation, &adornment);
    }
    ir::Program {
        attrs: {
            let doc = format!(
                " The magic-set rewrite of `{}` for the query `{}`: it derives only what the query's demand reaches.",
                program.name,
                query_text(program, query)
            );
            let mut attrs = query.attrs.clone();
            attrs.push(parse_quote!(#[doc = #doc]));
            attrs
        },
        vis: query.vis.clone(),
        name: query.name.clone(),
        relations: rewriter.relations,
        rules: rewriter.rules,
        queries: Vec::new(),
        answers: Some(Answers {
            original: program.relations[query.relation].name.clone(),
            adorned: answers_relation,
            columns: answer_columns,
            ask,
        }),
        // The original program asserts its rules' types; the rewrite copies its columns.
        type_assertions: Vec::new(),
    }
}

struct Rewriter<'a> {
    program: &'a ir::Program,
    query: &'a ir::Query,
    /// The module holding the adorned and demand relations' structs.
    module: syn::Ident,
    relations: Vec<Relation>,
    rules: Vec<Rule>,
    /// Original input relation → its index here.
    inputs: BTreeMap<usize, usize>,
    /// (original relation, adornment) → (adorned relation, demand relation) here.
    adorned: BTreeMap<(usize, String), (usize, usize)>,
    /// Adorned relations whose rules are still to be rewritten.
    pending: Vec<(usize, Vec<bool>)>,
}

/// `FromZero` → `from_zero`.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 && !out.ends_with('_') {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn adornment_text(adornment: &[bool]) -> String {
    adornment
        .iter()
        .map(|&b| if b { 'b' } else { 'f' })
        .collect()
}

impl Rewriter<'_> {
    fn push_relation(&mut self, relation: Relation) -> usize {
        self.relations.push(relation);
        self.relations.len() - 1
    }

    /// The original input relation, used as is (its struct is the original program's).
    fn input(&mut self, original: usize) -> usize {
        if let Some(&index) = self.inputs.get(&original) {
            return index;
        }
        let source = &self.program.relations[original];
        let index = self.push_relation(Relation {
            attrs: Vec::new(),
            vis: source.vis.clone(),
            name: source.name.clone(),
            input: true,
            columns: source.columns.clone(),
            external: true,
            module: None,
        });
        self.inputs.insert(original, index);
        index
    }

    /// The adorned copy of `original` and its demand relation, created (and queued for
    /// rewriting) on first use.
    fn adorned(&mut self, original: usize, adornment: &[bool]) -> (usize, usize) {
        let text = adornment_text(adornment);
        if let Some(&pair) = self.adorned.get(&(original, text.clone())) {
            return pair;
        }
        let source = &self.program.relations[original];
        let query = &self.query.name;
        let adorned_doc = format!(
            " `{}` restricted to what the query `{query}` demands (adornment `{text}`: b = bound, f = free).",
            source.name
        );
        let adorned = Relation {
            attrs: vec![
                parse_quote!(#[doc = #adorned_doc]),
                parse_quote!(#[allow(non_camel_case_types)]),
            ],
            vis: self.query.vis.clone(),
            name: format_ident!("{}_{}", source.name, text, span = source.name.span()),
            input: false,
            columns: source.columns.clone(),
            external: false,
            module: Some(self.module.clone()),
        };
        let demand_doc = format!(
            " The bound arguments of `{}_{text}` the query `{query}` asks for.",
            source.name
        );
        let demand = Relation {
            attrs: vec![
                parse_quote!(#[doc = #demand_doc]),
                parse_quote!(#[allow(non_camel_case_types)]),
            ],
            vis: self.query.vis.clone(),
            name: format_ident!("demand_{}_{}", source.name, text, span = source.name.span()),
            input: false,
            columns: bound_columns(&source.columns, adornment),
            external: false,
            module: Some(self.module.clone()),
        };
        let pair = (self.push_relation(adorned), self.push_relation(demand));
        self.adorned.insert((original, text), pair);
        self.pending.push((original, adornment.to_vec()));
        pair
    }

    /// The query's seed: a fact of the demand relation for compile-time bindings, or a rule
    /// from a generated input relation for run-time ones. Returns that input relation and
    /// how each answer column is bound.
    fn seed(&mut self, demand: usize) -> (Option<usize>, Vec<AnswerColumn>) {
        let source = &self.program.relations[self.query.relation];
        let mut params: Vec<(syn::Ident, ir::Column)> = Vec::new();
        let mut columns = Vec::new();
        let mut demand_terms = Vec::new();
        for (arg, column) in self.query.args.iter().zip(&source.columns) {
            match arg {
                QueryArg::Free => columns.push(AnswerColumn::Free),
                QueryArg::Const(c) => {
                    columns.push(AnswerColumn::Const(c.clone()));
                    demand_terms.push(Term::Const(c.clone()));
                }
                QueryArg::Param(name) => {
                    let position = match params.iter().position(|(p, _)| p == name) {
                        Some(existing) => existing,
                        None => {
                            params.push((name.clone(), column.clone()));
                            params.len() - 1
                        }
                    };
                    columns.push(AnswerColumn::Param(position));
                    demand_terms.push(Term::Var(position));
                }
            }
        }
        let demand_atom = Atom {
            relation: demand,
            terms: demand_terms,
        };
        if params.is_empty() {
            self.add_rule(demand_atom, Vec::new(), Vec::new());
            return (None, columns);
        }
        let ask_doc = format!(
            " Asks the query `{}`: insert a fact to ask for its bindings' answers, delete it to withdraw the question.",
            self.query.name
        );
        let ask = self.push_relation(Relation {
            attrs: vec![parse_quote!(#[doc = #ask_doc])],
            vis: self.query.vis.clone(),
            name: format_ident!("{}Ask", self.query.name),
            input: true,
            columns: params.iter().map(|(_, c)| c.clone()).collect(),
            external: false,
            module: None,
        });
        let vars: Vec<syn::Ident> = params.iter().map(|(p, _)| p.clone()).collect();
        let ask_atom = Atom {
            relation: ask,
            terms: (0..vars.len()).map(Term::Var).collect(),
        };
        self.add_rule(demand_atom, vec![ask_atom], vars);
        (Some(ask), columns)
    }

    /// Rewrites every rule deriving `original`, for demand with `adornment`.
    fn rewrite_rules_of(&mut self, original: usize, adornment: &[bool]) {
        let (adorned, demand) = self.adorned(original, adornment);
        let program = self.program;
        for rule in program.rules.iter().filter(|r| r.head.relation == original) {
            let mut bound = vec![false; rule.vars.len()];
            let guard = Atom {
                relation: demand,
                terms: bound_terms(&rule.head.terms, adornment),
            };
            mark_bound(&guard.terms, &mut bound);
            let mut body = vec![guard];
            for atom in &rule.body {
                let source = &program.relations[atom.relation];
                if source.input {
                    let relation = self.input(atom.relation);
                    body.push(Atom {
                        relation,
                        terms: atom.terms.clone(),
                    });
                } else {
                    let sip: Vec<bool> = atom
                        .terms
                        .iter()
                        .map(|t| match t {
                            Term::Const(_) => true,
                            Term::Var(v) => bound[*v],
                            Term::Wildcard => false,
                        })
                        .collect();
                    let (callee, callee_demand) = self.adorned(atom.relation, &sip);
                    let demand_head = Atom {
                        relation: callee_demand,
                        terms: bound_terms(&atom.terms, &sip),
                    };
                    // `demand(x) <- demand(x), ...` derives nothing: drop it.
                    if !body.iter().any(|b| same_atom(b, &demand_head)) {
                        self.add_rule(demand_head, body.clone(), rule.vars.clone());
                    }
                    body.push(Atom {
                        relation: callee,
                        terms: atom.terms.clone(),
                    });
                }
                mark_bound(&atom.terms, &mut bound);
            }
            let head = Atom {
                relation: adorned,
                terms: rule.head.terms.clone(),
            };
            self.add_rule(head, body, rule.vars.clone());
        }
    }

    fn add_rule(&mut self, head: Atom, body: Vec<Atom>, vars: Vec<syn::Ident>) {
        let mut rule = Rule {
            head,
            body,
            text: String::new(),
            // The rewrite's rules are its own: their text says what they do.
            doc: String::new(),
            vars,
        };
        rule.text = rule_text(&self.relations, &rule);
        self.rules.push(rule);
    }
}

fn bound_columns(columns: &[ir::Column], adornment: &[bool]) -> Vec<ir::Column> {
    columns
        .iter()
        .zip(adornment)
        .filter(|(_, &b)| b)
        .map(|(c, _)| c.clone())
        .collect()
}

fn bound_terms(terms: &[Term], adornment: &[bool]) -> Vec<Term> {
    terms
        .iter()
        .zip(adornment)
        .filter(|(_, &b)| b)
        .map(|(t, _)| t.clone())
        .collect()
}

fn mark_bound(terms: &[Term], bound: &mut [bool]) {
    for term in terms {
        if let Term::Var(v) = term {
            bound[*v] = true;
        }
    }
}

fn same_atom(a: &Atom, b: &Atom) -> bool {
    a.relation == b.relation
        && a.terms.len() == b.terms.len()
        && a.terms.iter().zip(&b.terms).all(|pair| match pair {
            (Term::Var(x), Term::Var(y)) => x == y,
            (Term::Const(x), Term::Const(y)) => const_text(x) == const_text(y),
            _ => false,
        })
}

fn const_text(c: &ir::Const) -> String {
    c.expr.to_token_stream().to_string()
}

/// A rule as text over the rewritten program's relation names.
pub fn rule_text(relations: &[Relation], rule: &Rule) -> String {
    let atom = |atom: &Atom| {
        let terms: Vec<String> = atom
            .terms
            .iter()
            .map(|t| match t {
                Term::Var(v) => rule.vars[*v].to_string(),
                Term::Wildcard => "_".to_string(),
                Term::Const(c) => const_text(c).replace("- ", "-"),
            })
            .collect();
        format!("{}({})", relations[atom.relation].name, terms.join(", "))
    };
    if rule.body.is_empty() {
        format!("{};", atom(&rule.head))
    } else {
        let body: Vec<String> = rule.body.iter().map(atom).collect();
        format!("{} <- {};", atom(&rule.head), body.join(", "))
    }
}

fn query_text(program: &ir::Program, query: &ir::Query) -> String {
    let args: Vec<String> = query
        .args
        .iter()
        .map(|a| match a {
            QueryArg::Free => "_".to_string(),
            QueryArg::Param(p) => p.to_string(),
            QueryArg::Const(c) => const_text(c),
        })
        .collect();
    format!(
        "{}({})",
        program.relations[query.relation].name,
        args.join(", ")
    )
}
