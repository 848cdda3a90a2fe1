//! Checks: every rule of finite positive Datalog, each mistake reported once on its token,
//! all mistakes of a program in one compile; produces the checked program.

use std::collections::HashMap;

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::Ident;

use crate::ir;
use crate::syntax::{self, ConstKind, InvalidTerm, Item, Literal, Term, Unsupported};
use crate::Errors;

mod column_types;

/// Traits `datalog!` derives on every relation struct itself.
const DERIVED_TRAITS: &[&str] = &[
    "Clone",
    "PartialEq",
    "Eq",
    "Hash",
    "PartialOrd",
    "Ord",
    "Debug",
];

/// Checks the parsed items; returns the checked program when there was no error at all.
pub fn check(items: Vec<Item>, errors: &mut Errors) -> Option<ir::Program> {
    let mut program: Option<syntax::ProgramDecl> = None;
    let mut relations: Vec<ir::Relation> = Vec::new();
    let mut rules = Vec::new();
    let mut queries = Vec::new();
    let mut rejected: Vec<Ident> = Vec::new();
    // Where a missing program declaration is reported: the first item, if there is one.
    // An item that did not parse may have been the declaration: then no error of its own.
    let first_item = items.first().map(Item::span);
    let unparsed_items = !errors.is_empty();

    for item in items {
        match item {
            Item::Program(decl) => {
                if let Some(first) = &program {
                    errors.push(
                        decl.name.span(),
                        format!(
                            "a second program name: this macro already declares program `{}`; use one `datalog!` per program",
                            first.name
                        ),
                    );
                } else {
                    program = Some(decl);
                }
            }
            Item::Relation(decl) => {
                if relations.iter().any(|r| r.name == decl.name) {
                    errors.push(
                        decl.name.span(),
                        format!("relation `{}` is declared twice", decl.name),
                    );
                    continue;
                }
                relations.push(check_relation(decl, errors));
            }
            Item::Rule(rule) => rules.push(rule),
            Item::Query(query) => queries.push(query),
            Item::Rejected(name) => rejected.push(name),
        }
    }

    let Some(program) = program else {
        if !unparsed_items {
            errors.push(
                first_item.unwrap_or_else(Span::call_site),
                "missing program name: declare the program type first, e.g. `pub struct Reachability;`",
            );
        }
        return None;
    };
    if let Some(clash) = relations.iter().find(|r| r.name == program.name) {
        errors.push(
            clash.name.span(),
            format!("`{}` names both the program and a relation", clash.name),
        );
    }
    // The names `datalog!` gives what it generates beside a program or a query's program:
    // a relation or query may not take them.
    let generated = |owner: &Ident| {
        [
            (format!("{owner}Facts"), "fact sets"),
            (format!("{owner}Fact"), "fact enum"),
        ]
    };
    let owners: Vec<&Ident> = std::iter::once(&program.name)
        .chain(queries.iter().map(|q| &q.name))
        .collect();
    let named = relations
        .iter()
        .map(|r| (&r.name, "relation"))
        .chain(queries.iter().map(|q| (&q.name, "query")));
    for (name, what) in named {
        let text = name.to_string();
        let taken = owners.iter().find_map(|owner| {
            let (_, of) = generated(owner).into_iter().find(|(g, _)| *g == text)?;
            Some((owner, of))
        });
        let asked = queries.iter().find(|q| format!("{}Ask", q.name) == text);
        if let Some((owner, of)) = taken {
            errors.push(
                name.span(),
                format!("`{name}` is the name of `{owner}`'s generated {of}; rename this {what}"),
            );
        } else if let Some(query) = asked {
            errors.push(
                name.span(),
                format!(
                    "`{name}` is the name of the input relation that asks query `{}`; rename this {what}",
                    query.name
                ),
            );
        }
    }

    let by_name: HashMap<String, usize> = relations
        .iter()
        .enumerate()
        .map(|(i, r)| (r.name.to_string(), i))
        .collect();
    let checker = RuleChecker {
        relations: &relations,
        by_name: &by_name,
        rejected: &rejected,
    };
    let mut type_assertions = Vec::new();
    let rules: Vec<ir::Rule> = rules
        .into_iter()
        .filter_map(|rule| checker.check_rule(rule, errors, &mut type_assertions))
        .collect();

    let mut query_names: Vec<Ident> = Vec::new();
    let queries: Vec<ir::Query> = queries
        .into_iter()
        .filter_map(|query| {
            let name = &query.name;
            let taken = *name == program.name
                || relations.iter().any(|r| r.name == *name)
                || query_names.contains(name);
            if taken {
                errors.push(
                    name.span(),
                    format!("`{name}` is already the name of the program, a relation or a query"),
                );
            }
            query_names.push(name.clone());
            checker.check_query(query, errors)
        })
        .collect();

    if !errors.is_empty() {
        return None;
    }
    Some(ir::Program {
        attrs: program.attrs,
        vis: program.vis,
        name: program.name,
        relations,
        rules,
        queries,
        answers: None,
        type_assertions,
    })
}

fn check_relation(decl: syntax::RelationDecl, errors: &mut Errors) -> ir::Relation {
    for attr in &decl.attrs {
        if !attr.path().is_ident("derive") {
            continue;
        }
        let _ = attr.parse_nested_meta(|meta| {
            if let Some(name) = DERIVED_TRAITS.iter().find(|t| meta.path.is_ident(t)) {
                errors.push(
                    meta.path.span(),
                    format!("`{name}` is derived by `datalog!` on every relation; remove it here"),
                );
            }
            Ok(())
        });
    }
    for column in &decl.columns {
        if let Some((span, message)) = column_types::unsupported(&column.ty) {
            errors.push(span, message);
        }
    }
    let columns = decl
        .columns
        .into_iter()
        .map(|c| {
            let ty_text = type_text(&c.ty);
            ir::Column {
                class: classify_type(&ty_text),
                attrs: c.attrs,
                vis: c.vis,
                ty: c.ty,
                ty_text,
            }
        })
        .collect();
    ir::Relation {
        attrs: decl.attrs,
        vis: decl.vis,
        name: decl.name,
        input: decl.input.is_some(),
        columns,
        external: false,
        module: None,
    }
}

/// A type as text, spaced as a person writes it (`&'static str`, `Vec<u8>`); equal for
/// equal token streams, however the source was spaced.
fn type_text(ty: &syn::Type) -> String {
    let mut text = ty.to_token_stream().to_string();
    for (from, to) in [
        ("& '", "&'"),
        ("& ", "&"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
        (" :: ", "::"),
        (":: ", "::"),
    ] {
        text = text.replace(from, to);
    }
    text
}

fn classify_type(ty: &str) -> ir::TypeClass {
    use ir::TypeClass::*;
    let int = |signed, bits| Int { signed, bits };
    match ty {
        "u8" => int(false, 8),
        "u16" => int(false, 16),
        "u32" => int(false, 32),
        "u64" | "usize" => int(false, 64),
        "u128" => int(false, 128),
        "i8" => int(true, 8),
        "i16" => int(true, 16),
        "i32" => int(true, 32),
        "i64" | "isize" => int(true, 64),
        "i128" => int(true, 128),
        "&'static str" | "&str" => Str { owned: false },
        "String" | "std::string::String" | "::std::string::String" => Str { owned: true },
        "char" => Char,
        "bool" => Bool,
        _ => Other,
    }
}

struct RuleChecker<'a> {
    relations: &'a [ir::Relation],
    by_name: &'a HashMap<String, usize>,
    /// Names of declarations already reported as malformed.
    rejected: &'a [Ident],
}

/// Which part of a rule an atom is in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Position {
    Body,
    Head,
    /// The head of a rule some body literal of which was rejected.
    HeadOfIncompleteRule,
}

/// Where a variable was first seen, and at which column type.
struct FirstUse {
    id: usize,
    /// The column's type, as written and as text (none for an unsafe head variable).
    ty: Option<(syn::Type, String)>,
    place: String,
}

/// The variables of the rule being checked.
#[derive(Default)]
struct Scope {
    first_uses: HashMap<String, FirstUse>,
    /// Names in order of first use: `Term::Var`'s numbering.
    names: Vec<Ident>,
}

impl RuleChecker<'_> {
    fn check_rule(
        &self,
        rule: syntax::Rule,
        errors: &mut Errors,
        assertions: &mut Vec<ir::TypeAssertion>,
    ) -> Option<ir::Rule> {
        let before = errors.len();
        let text = rule_text(&rule);
        let doc = rule_doc(&rule.attrs, errors);
        if let Some(span) = rule.head_negation {
            errors.push(
                span,
                "a rule head cannot be negated: dred maintains positive Datalog",
            );
        }
        let head_relation = self.relation_of(&rule.head, errors);
        if let Some(r) = head_relation {
            if self.relations[r].input {
                errors.push(
                    rule.head.relation.span(),
                    format!(
                        "`{}` is an input relation (`@input`): rules cannot derive input facts; insert them with an update batch, or declare a derived relation for the rule's head",
                        rule.head.relation
                    ),
                );
            }
        }

        let mut scope = Scope::default();
        let assertions_before = assertions.len();
        let mut body = Vec::new();
        for literal in &rule.body {
            match literal {
                Literal::Atom(atom) => {
                    if let Some(r) = self.relation_of(atom, errors) {
                        let terms =
                            self.check_terms(atom, r, Position::Body, &mut scope, errors, assertions);
                        body.push(ir::Atom { relation: r, terms });
                    }
                }
                Literal::Negated { marker } => errors.push(
                    *marker,
                    "negation is not supported: DRed here maintains positive Datalog, where deleting an input can only withdraw conclusions",
                ),
                Literal::Unsupported { span, kind } => errors.push(*span, match kind {
                    Unsupported::Aggregation => "aggregation is not supported: dred maintains positive, function-free Datalog",
                    Unsupported::Condition => "conditions are not supported in rule bodies: dred maintains positive, function-free Datalog; express the test as an input relation",
                    Unsupported::Expression => "expected a relation atom such as `Edge(x, y)`: rule bodies hold only atoms",
                }),
            }
        }
        // A body literal that was rejected may have bound the head's variables: judging
        // safety without it would report mistakes the user did not make.
        let position = if body.len() == rule.body.len() {
            Position::Head
        } else {
            Position::HeadOfIncompleteRule
        };
        let head_terms = head_relation
            .map(|r| self.check_terms(&rule.head, r, position, &mut scope, errors, assertions));
        if errors.len() > before || body.len() < rule.body.len() {
            assertions.truncate(assertions_before);
            return None;
        }
        Some(ir::Rule {
            head: ir::Atom {
                relation: head_relation?,
                terms: head_terms?,
            },
            body,
            text,
            doc,
            vars: scope.names,
        })
    }

    fn check_query(&self, query: syntax::QueryDecl, errors: &mut Errors) -> Option<ir::Query> {
        let relation = self.relation_of(&query.atom, errors)?;
        let info = &self.relations[relation];
        if info.input {
            errors.push(
                query.atom.relation.span(),
                format!(
                    "`{}` is an input relation: a query asks for derived facts (read input facts with `relation::<{}>()`)",
                    info.name, info.name
                ),
            );
            return None;
        }
        let args = query
            .atom
            .args
            .iter()
            .zip(&info.columns)
            .map(|(term, column)| match term {
                Term::Wildcard(_) => ir::QueryArg::Free,
                Term::Var(name) => ir::QueryArg::Param(name.clone()),
                Term::Const(constant) => {
                    check_constant(constant, column, errors);
                    ir::QueryArg::Const(Box::new(ir::Const {
                        expr: constant.expr.clone(),
                        text: canonical_text(&constant.kind),
                    }))
                }
                Term::Invalid { span, kind } => {
                    errors.push(*span, invalid_term_message(*kind));
                    ir::QueryArg::Free
                }
            })
            .collect();
        Some(ir::Query {
            attrs: query.attrs,
            vis: query.vis,
            name: query.name,
            relation,
            args,
        })
    }

    /// The declared relation an atom uses, with its arity checked.
    fn relation_of(&self, atom: &syntax::Atom, errors: &mut Errors) -> Option<usize> {
        let name = atom.relation.to_string();
        let Some(&index) = self.by_name.get(&name) else {
            if self.rejected.iter().any(|r| *r == name) {
                return None; // reported at its declaration
            }
            let suggestion = closest(&name, self.relations.iter().map(|r| r.name.to_string()))
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            errors.push(
                atom.relation.span(),
                format!("no relation named `{name}` is declared{suggestion}"),
            );
            return None;
        };
        let arity = self.relations[index].columns.len();
        if atom.args.len() != arity {
            errors.push(
                atom.parens,
                format!(
                    "`{name}` has {arity} column{}, but {} argument{} given here",
                    plural(arity),
                    atom.args.len(),
                    if atom.args.len() == 1 { " is" } else { "s are" }
                ),
            );
            return None;
        }
        Some(index)
    }

    fn check_terms(
        &self,
        atom: &syntax::Atom,
        relation: usize,
        position: Position,
        scope: &mut Scope,
        errors: &mut Errors,
        assertions: &mut Vec<ir::TypeAssertion>,
    ) -> Vec<ir::Term> {
        let columns = &self.relations[relation].columns;
        let is_head = position != Position::Body;
        let mut terms = Vec::new();
        for (column_index, (term, column)) in atom.args.iter().zip(columns).enumerate() {
            let place = format!("column {} of `{}`", column_index + 1, atom.relation);
            terms.push(match term {
                Term::Wildcard(span) => {
                    if is_head {
                        errors.push(
                            *span,
                            "`_` cannot appear in a rule head: every head column needs a value (a variable bound in the body, or a constant)",
                        );
                    }
                    ir::Term::Wildcard
                }
                Term::Invalid { span, kind } => {
                    errors.push(*span, invalid_term_message(*kind));
                    ir::Term::Wildcard
                }
                Term::Const(constant) => {
                    check_constant(constant, column, errors);
                    ir::Term::Const(Box::new(ir::Const {
                        expr: constant.expr.clone(),
                        text: canonical_text(&constant.kind),
                    }))
                }
                Term::Var(ident) => {
                    let name = ident.to_string();
                    match scope.first_uses.get(&name) {
                        None if position == Position::HeadOfIncompleteRule => ir::Term::Wildcard,
                        None if is_head => {
                            // Remember it so a repeated use is not reported again.
                            scope.first_uses.insert(
                                name.clone(),
                                FirstUse {
                                    id: 0,
                                    ty: None,
                                    place,
                                },
                            );
                            errors.push(
                                ident.span(),
                                format!(
                                    "unsafe rule: head variable `{name}` is bound by no body atom; every head variable must appear in the body"
                                ),
                            );
                            ir::Term::Wildcard
                        }
                        None => {
                            let id = scope.names.len();
                            scope.names.push(ident.clone());
                            scope.first_uses.insert(
                                name,
                                FirstUse {
                                    id,
                                    ty: Some((column.ty.clone(), column.ty_text.clone())),
                                    place,
                                },
                            );
                            ir::Term::Var(id)
                        }
                        Some(first) => {
                            // Spelt differently, the types may still be one (an alias):
                            // only rustc can tell, so the generated code asks it.
                            match &first.ty {
                                Some((first_ty, first_text)) if *first_text != column.ty_text => {
                                    assertions.push(ir::TypeAssertion {
                                        here: column.ty.clone(),
                                        first: first_ty.clone(),
                                        span: ident.span(),
                                        message: format!(
                                            "`{name}` is used at a `{}` column here ({place}) but at a `{first_text}` column earlier ({}); one variable has one type",
                                            column.ty_text, first.place
                                        ),
                                    })
                                }
                                _ => {}
                            }
                            ir::Term::Var(first.id)
                        }
                    }
                }
            });
        }
        terms
    }
}

fn invalid_term_message(kind: InvalidTerm) -> &'static str {
    match kind {
        InvalidTerm::Arithmetic => {
            "arithmetic is not supported: dred programs are function-free; arguments are variables, `_` or constants"
        }
        InvalidTerm::Call => {
            "function and method calls are not supported: dred programs are function-free; arguments are variables, `_` or constants"
        }
        InvalidTerm::Aggregate => {
            "aggregation is not supported: dred maintains positive, function-free Datalog"
        }
        InvalidTerm::Float => {
            "floating-point constants are not supported: column values need `Eq`, `Hash` and `Ord`"
        }
        InvalidTerm::Other => {
            "expected a variable, `_` or a constant: dred programs are function-free"
        }
    }
}

/// Reports a constant that cannot be a value of `column`'s type (when the type is known).
fn check_constant(constant: &syntax::Constant, column: &ir::Column, errors: &mut Errors) {
    use ir::TypeClass;
    let expected = &column.ty_text;
    let found = match (&constant.kind, column.class) {
        (_, TypeClass::Other) | (ConstKind::Opaque, _) => return,
        (
            ConstKind::Int {
                magnitude,
                negative,
                suffix,
            },
            TypeClass::Int { signed, bits },
        ) => {
            if !suffix.is_empty() && suffix != expected {
                errors.push(
                    constant.span(),
                    format!("this constant is a `{suffix}`, but the column is `{expected}`"),
                );
                return;
            }
            if *negative && !signed {
                errors.push(
                    constant.span(),
                    format!("`{expected}` is unsigned: a negative constant does not fit"),
                );
                return;
            }
            let fits = match magnitude {
                None => false,
                Some(m) if *negative => signed && *m <= 1u128 << (bits - 1),
                Some(m) if signed => *m < 1u128 << (bits - 1),
                Some(m) => bits == 128 || *m < 1u128 << bits,
            };
            if !fits {
                errors.push(
                    constant.span(),
                    format!("this constant does not fit the column's type `{expected}`"),
                );
            }
            return;
        }
        (ConstKind::Str(_), TypeClass::Str { .. })
        | (ConstKind::Char(_), TypeClass::Char)
        | (ConstKind::Bool(_), TypeClass::Bool) => return,
        (ConstKind::Int { .. }, _) => "an integer",
        (ConstKind::Str(_), _) => "a string",
        (ConstKind::Char(_), _) => "a character",
        (ConstKind::Bool(_), _) => "a boolean",
    };
    errors.push(
        constant.span(),
        format!("mismatched constant: the column is `{expected}`, but this is {found}"),
    );
}

/// The runtime's canonical rendering of a constant (`render_value`), when knowable here.
fn canonical_text(kind: &ConstKind) -> Option<String> {
    match kind {
        ConstKind::Int {
            magnitude: Some(m),
            negative,
            ..
        } => Some(if *negative && *m != 0 {
            format!("-{m}")
        } else {
            m.to_string()
        }),
        ConstKind::Str(s) => Some(if is_bare_word(s) {
            s.clone()
        } else {
            format!("{s:?}")
        }),
        ConstKind::Char(c) => Some(format!("{c:?}")),
        ConstKind::Bool(b) => Some(b.to_string()),
        ConstKind::Int {
            magnitude: None, ..
        }
        | ConstKind::Opaque => None,
    }
}

/// Mirrors `dred_runtime::text::is_bare_word` (the macro crate cannot depend on the runtime).
fn is_bare_word(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('a'..='z')) && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A rule's documentation: its doc comments' lines, trimmed and joined by spaces. Any other
/// attribute is an error: a rule is not an item rustc sees.
fn rule_doc(attrs: &[syn::Attribute], errors: &mut Errors) -> String {
    let mut lines = Vec::new();
    for attr in attrs {
        let text = match &attr.meta {
            syn::Meta::NameValue(nv) if nv.path.is_ident("doc") => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(text),
                    ..
                }) => Some(text.value()),
                _ => None,
            },
            _ => None,
        };
        match text {
            Some(text) => lines.push(text.trim().to_owned()),
            None => errors.push(
                attr.path().span(),
                "only doc comments can annotate a rule (they document it in explanations): a rule is not a Rust item, so other attributes have nothing to apply to",
            ),
        }
    }
    lines.retain(|line| !line.is_empty());
    lines.join(" ")
}

fn rule_text(rule: &syntax::Rule) -> String {
    let head = syntax::atom_text(&rule.head);
    let body: Vec<String> = rule
        .body
        .iter()
        .filter_map(|l| match l {
            Literal::Atom(a) => Some(syntax::atom_text(a)),
            _ => None,
        })
        .collect();
    if body.is_empty() {
        format!("{head};")
    } else {
        format!("{head} <- {};", body.join(", "))
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The declared name closest to a misspelt one, if any is close enough to be a typo.
fn closest(name: &str, candidates: impl Iterator<Item = String>) -> Option<String> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .map(|c| (edit_distance(&name.to_lowercase(), &c.to_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)))
        .map(|(_, c)| c)
}

/// Edit distance counting an adjacent transposition (`Reahc`) as one edit.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_catch_typos_only() {
        let names = || ["Reach", "Edge", "SameGen"].map(String::from).into_iter();
        assert_eq!(closest("Reahc", names()), Some("Reach".into()));
        assert_eq!(closest("edge", names()), Some("Edge".into()));
        assert_eq!(closest("Parent", names()), None);
    }
}
