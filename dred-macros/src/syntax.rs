//! Syntax: the macro input as items (program, relations, rules) that keep every span.
//!
//! Items are split at top-level `;` and parsed one by one, and a rule's body literals one
//! by one, so one malformed item or literal costs one error and the rest is still checked.

use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, Ident, Lit, Token, Type, Visibility};

use crate::Errors;

/// One item of the macro input.
pub enum Item {
    /// `struct Name;`: the program type.
    Program(ProgramDecl),
    /// `@input struct Edge(u32, u32);` or `struct Reach(u32, u32);`.
    Relation(RelationDecl),
    /// `Head(..) <- Body(..), ..;` or a fact `Head(..);`.
    Rule(Rule),
    /// `@query FromA = Reach("a", _);`: a demand-driven program for one query.
    Query(QueryDecl),
    /// A declaration reported as malformed, under the name it declares: uses of that name
    /// are not reported again as undeclared.
    Rejected(Ident),
}

impl Item {
    /// Where the item names something: its program, relation or query name, or its head's
    /// relation.
    pub fn span(&self) -> Span {
        match self {
            Item::Program(program) => program.name.span(),
            Item::Relation(relation) => relation.name.span(),
            Item::Rule(rule) => rule.head.relation.span(),
            Item::Query(query) => query.name.span(),
            Item::Rejected(name) => name.span(),
        }
    }
}

pub struct QueryDecl {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    /// The generated program's name.
    pub name: Ident,
    /// Constants and parameters are bound, `_` is free.
    pub atom: Atom,
}

pub struct ProgramDecl {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub name: Ident,
}

pub struct RelationDecl {
    pub attrs: Vec<Attribute>,
    /// The `@input` marker's span, if any.
    pub input: Option<Span>,
    pub vis: Visibility,
    pub name: Ident,
    pub columns: Vec<Column>,
}

pub struct Column {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub ty: Type,
}

pub struct Rule {
    /// Outer attributes: doc comments document the rule; others are errors.
    pub attrs: Vec<Attribute>,
    pub head: Atom,
    /// The head was written negated (`!R(..) <- ..`): always an error.
    pub head_negation: Option<Span>,
    pub body: Vec<Literal>,
}

pub struct Atom {
    pub relation: Ident,
    pub args: Vec<Term>,
    /// Span of the parenthesized argument list.
    pub parens: Span,
}

pub enum Literal {
    Atom(Atom),
    /// `!A(..)` or `not A(..)`; `marker` spans the `!` or `not`.
    Negated {
        marker: Span,
    },
    /// Anything else in a body (a condition, an aggregate, a binding).
    Unsupported {
        span: Span,
        kind: Unsupported,
    },
}

#[derive(Clone, Copy)]
pub enum Unsupported {
    Aggregation,
    Condition,
    Expression,
}

pub enum Term {
    Var(Ident),
    Wildcard(Span),
    Const(Box<Constant>),
    /// An expression a function-free program cannot hold.
    Invalid {
        span: Span,
        kind: InvalidTerm,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum InvalidTerm {
    Arithmetic,
    Call,
    Aggregate,
    Float,
    Other,
}

/// A literal constant (`5`, `-5`, `"a"`, `'c'`, `true`) or a path (`Color::Red`).
pub struct Constant {
    pub expr: Expr,
    pub kind: ConstKind,
}

#[derive(Clone, PartialEq, Eq)]
pub enum ConstKind {
    /// Absolute value, sign, type suffix.
    Int {
        magnitude: Option<u128>,
        negative: bool,
        suffix: String,
    },
    Str(String),
    Char(char),
    Bool(bool),
    /// A path or another literal: its type is only known to rustc.
    Opaque,
}

impl Constant {
    pub fn span(&self) -> Span {
        self.expr.span()
    }
}

/// Parses the whole macro input into items, recording every syntax error.
pub fn parse(input: TokenStream, errors: &mut Errors) -> Vec<Item> {
    let mut items = Vec::new();
    for (chunk, terminator) in split_items(input) {
        let Some(end) = terminator.or_else(|| last_span(&chunk)) else {
            continue;
        };
        // A braced struct ends at its brace, as in Rust: what follows is another item.
        let braced = matches!(chunk.clone().into_iter().last(), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace);
        if terminator.is_none() && !braced {
            errors.push(end, "expected `;` after this item");
        }
        match parse_item(chunk.clone(), end) {
            Ok(item) => items.push(item),
            Err(e) => {
                errors.push_error(e);
                items.extend(declared_name(chunk).map(Item::Rejected));
            }
        }
    }
    items
}

/// The name a declaration that failed to parse declares (`struct Name`), if it has one.
fn declared_name(chunk: TokenStream) -> Option<Ident> {
    let mut tokens = chunk.into_iter();
    tokens.find(|t| matches!(t, TokenTree::Ident(i) if i == "struct"))?;
    match tokens.next()? {
        TokenTree::Ident(name) => Some(name),
        _ => None,
    }
}

/// Splits the macro input into items, each beside the span of the `;` that ended it (none
/// for an item without one). A braced struct's `{ .. }` ends its item, as in Rust; and
/// where a `;` was forgotten, a second item is recognized by how items start (a
/// declaration's `@`, `struct` or attributes; a rule's head before a second `<-`).
fn split_items(input: TokenStream) -> Vec<(TokenStream, Option<Span>)> {
    let mut items = Vec::new();
    for (chunk, terminator) in split_top_level(input, ';') {
        let mut tokens: Vec<TokenTree> = chunk.into_iter().collect();
        while let Some(start) = next_item_start(&tokens) {
            let rest = tokens.split_off(start);
            items.push((tokens.into_iter().collect(), None));
            tokens = rest;
        }
        items.push((tokens.into_iter().collect(), terminator));
    }
    items
}

/// Where in `tokens` a second item starts (after a braced struct, or where the `;` before
/// it was forgotten), if one does.
fn next_item_start(tokens: &[TokenTree]) -> Option<usize> {
    let is_ident = |i: usize, word: &str| matches!(&tokens[i], TokenTree::Ident(t) if t == word);
    let is_punct =
        |i: usize, c: char| matches!(&tokens[i], TokenTree::Punct(p) if p.as_char() == c);
    let is_group =
        |i: usize, d: Delimiter| matches!(&tokens[i], TokenTree::Group(g) if g.delimiter() == d);
    // The attributes (`#[..]`, doc comments) before position `i` belong to its item.
    let with_attributes = |mut i: usize| {
        while i >= 2 && is_punct(i - 2, '#') && is_group(i - 1, Delimiter::Bracket) {
            i -= 2;
        }
        i
    };
    for i in 1..tokens.len() {
        if is_group(i - 1, Delimiter::Brace)
            && tokens[..i - 1]
                .iter()
                .enumerate()
                .any(|(k, _)| is_ident(k, "struct"))
        {
            return Some(i);
        }
        let start = if is_punct(i, '@') {
            Some(i)
        } else if is_ident(i, "struct") {
            let mut start = i;
            if start >= 2
                && is_group(start - 1, Delimiter::Parenthesis)
                && is_ident(start - 2, "pub")
            {
                start -= 2;
            } else if is_ident(start - 1, "pub") {
                start -= 1;
            }
            if start >= 2 && is_punct(start - 2, '@') {
                start -= 2;
            }
            Some(start)
        } else if is_punct(i - 1, '<') && is_punct(i, '-') {
            // The head before this `<-`: `Name(..)`, perhaps negated.
            let head = i.checked_sub(3).filter(|&h| {
                matches!(&tokens[h], TokenTree::Ident(_)) && is_group(h + 1, Delimiter::Parenthesis)
            });
            head.map(|h| {
                if h >= 1 && is_punct(h - 1, '!') {
                    h - 1
                } else {
                    h
                }
            })
        } else {
            None
        };
        if let Some(start) = start.map(with_attributes).filter(|&s| s > 0) {
            return Some(start);
        }
    }
    None
}

/// Splits at top-level `sep` punctuation, each chunk beside the span of the `sep` that ended
/// it (none for a last chunk without one).
fn split_top_level(input: TokenStream, sep: char) -> Vec<(TokenStream, Option<Span>)> {
    let mut chunks = Vec::new();
    let mut current: Vec<TokenTree> = Vec::new();
    for tree in input {
        match &tree {
            TokenTree::Punct(p) if p.as_char() == sep => {
                chunks.push((current.drain(..).collect(), Some(p.span())));
            }
            _ => current.push(tree),
        }
    }
    if !current.is_empty() {
        chunks.push((current.into_iter().collect(), None));
    }
    chunks
}

/// The span of the last token of `tokens`, if any.
fn last_span(tokens: &TokenStream) -> Option<Span> {
    tokens.clone().into_iter().last().map(|t| t.span())
}

/// Parses all of `tokens` with `parse`, as `Parser::parse2` does, except that an error at
/// their end points at `end` (the `;` or `,` after them, or their last token) rather than
/// at the whole macro call, where syn puts the end of a stream of its own.
fn parse_before<T>(
    parse: fn(ParseStream) -> syn::Result<T>,
    tokens: TokenStream,
    end: Span,
) -> syn::Result<T> {
    let mut group = Group::new(Delimiter::Parenthesis, tokens);
    group.set_span(end);
    let scoped = |input: ParseStream| {
        let content;
        syn::parenthesized!(content in input);
        let value = parse(&content)?;
        if !content.is_empty() {
            return Err(content.error("unexpected token"));
        }
        Ok(value)
    };
    scoped.parse2(TokenTree::Group(group).into())
}

fn parse_item(chunk: TokenStream, end: Span) -> syn::Result<Item> {
    let first = chunk.clone().into_iter().next();
    let is_declaration = match &first {
        Some(TokenTree::Punct(p)) => p.as_char() == '#' || p.as_char() == '@',
        Some(TokenTree::Ident(i)) => i == "pub" || i == "struct",
        _ => false,
    };
    if is_declaration {
        parse_before(parse_declaration, chunk, end)
    } else {
        parse_before(parse_rule, chunk, end).map(Item::Rule)
    }
}

fn parse_declaration(input: ParseStream) -> syn::Result<Item> {
    let mut attrs = input.call(Attribute::parse_outer)?;
    if !(input.peek(Token![@]) || input.peek(Token![pub]) || input.peek(Token![struct])) {
        let mut rule = parse_rule(input)?;
        rule.attrs = attrs;
        return Ok(Item::Rule(rule));
    }
    let mut marker = None;
    if input.peek(Token![@]) {
        let at: Token![@] = input.parse()?;
        let word: Ident = input.parse()?;
        if word == "query" {
            return parse_query(input, attrs);
        }
        if word != "input" {
            return Err(syn::Error::new(
                word.span(),
                format!("unknown directive `@{word}`: `@input` marks an input relation, `@query` declares a query"),
            ));
        }
        marker = Some(at.span.join(word.span()).unwrap_or(word.span()));
        attrs.extend(input.call(Attribute::parse_outer)?);
    }
    let vis: Visibility = input.parse()?;
    input.parse::<Token![struct]>()?;
    let name: Ident = input.parse()?;
    if input.peek(Token![<]) {
        return Err(input.error("relations and programs cannot be generic"));
    }
    if input.is_empty() {
        if let Some(span) = marker {
            return Err(syn::Error::new(
                span,
                format!("`struct {name};` declares the program, which cannot be an input; an input relation with no columns is written `@input struct {name}();`"),
            ));
        }
        return Ok(Item::Program(ProgramDecl { attrs, vis, name }));
    }
    if input.peek(syn::token::Brace) {
        return Err(input.error(
            "relations are tuple structs, e.g. `struct Reach(u32, u32);` (named fields are not supported)",
        ));
    }
    let content;
    syn::parenthesized!(content in input);
    let fields = Punctuated::<syn::Field, Token![,]>::parse_terminated_with(
        &content,
        syn::Field::parse_unnamed,
    )?;
    if !input.is_empty() {
        return Err(input.error("unexpected tokens after the relation's columns"));
    }
    let columns = fields
        .into_iter()
        .map(|f| Column {
            attrs: f.attrs,
            vis: f.vis,
            ty: f.ty,
        })
        .collect();
    Ok(Item::Relation(RelationDecl {
        attrs,
        input: marker,
        vis,
        name,
        columns,
    }))
}

/// `@query [pub] Name = Relation(args)` (the `@query` already read).
fn parse_query(input: ParseStream, mut attrs: Vec<Attribute>) -> syn::Result<Item> {
    attrs.extend(input.call(Attribute::parse_outer)?);
    let vis: Visibility = input.parse()?;
    let name: Ident = input.parse()?;
    if !input.peek(Token![=]) {
        return Err(input.error(format!(
            "expected `=`: a query is declared as `@query {name} = Relation(\"bound\", _);`"
        )));
    }
    input.parse::<Token![=]>()?;
    let atom = parse_atom(input)?;
    if !input.is_empty() {
        return Err(input.error("unexpected tokens after the query's atom"));
    }
    Ok(Item::Query(QueryDecl {
        attrs,
        vis,
        name,
        atom,
    }))
}

fn parse_rule(input: ParseStream) -> syn::Result<Rule> {
    let head_negation = if input.peek(Token![!]) {
        Some(input.parse::<Token![!]>()?.span)
    } else {
        None
    };
    let head = parse_atom(input)?;
    let mut body = Vec::new();
    if input.is_empty() {
        return Ok(Rule {
            attrs: Vec::new(),
            head,
            head_negation,
            body,
        });
    }
    if input.peek(Token![:]) && input.peek2(Token![-]) {
        return Err(input.error("write rules as `Head(..) <- Body(..), ..;` (`<-`, not `:-`)"));
    }
    if input.peek(Token![=]) || input.peek(Token![<=]) {
        return Err(input.error("expected `<-` between the head and the body"));
    }
    let arrow = input.parse::<Token![<-]>()?;
    let rest: TokenStream = input.parse()?;
    let Some(last) = last_span(&rest) else {
        return Err(syn::Error::new(
            arrow.span(),
            "a rule with `<-` needs at least one body atom; a fact is written `Head(..);`",
        ));
    };
    let mut failure: Option<syn::Error> = None;
    for (literal, comma) in split_top_level(rest, ',') {
        match parse_before(parse_literal, literal, comma.unwrap_or(last)) {
            Ok(l) => body.push(l),
            Err(e) => match &mut failure {
                Some(f) => f.combine(e),
                None => failure = Some(e),
            },
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(Rule {
            attrs: Vec::new(),
            head,
            head_negation,
            body,
        }),
    }
}

fn parse_literal(input: ParseStream) -> syn::Result<Literal> {
    let span = input.span();
    if input.peek(Token![!]) {
        let bang: Token![!] = input.parse()?;
        parse_atom(input)?;
        return Ok(Literal::Negated { marker: bang.span });
    }
    if input.peek(Ident) && input.peek2(Ident) {
        let fork = input.fork();
        let word: Ident = fork.parse()?;
        if word == "not" {
            input.parse::<Ident>()?;
            parse_atom(input)?;
            return Ok(Literal::Negated {
                marker: word.span(),
            });
        }
        if word == "agg" {
            return Ok(unsupported(input, span, Unsupported::Aggregation));
        }
    }
    let looks_like_atom = input.peek(Ident) && input.peek2(syn::token::Paren);
    if looks_like_atom {
        let fork = input.fork();
        if parse_atom(&fork).is_ok() && fork.is_empty() {
            return parse_atom(input).map(Literal::Atom);
        }
    }
    let kind = if input.peek(Token![if]) || input.peek(Token![let]) {
        Unsupported::Condition
    } else {
        match input.fork().parse::<Expr>() {
            Ok(Expr::Binary(_)) => Unsupported::Condition,
            _ => Unsupported::Expression,
        }
    };
    Ok(unsupported(input, span, kind))
}

/// Consumes the rest of a literal and spans all of it.
fn unsupported(input: ParseStream, first: Span, kind: Unsupported) -> Literal {
    let rest: TokenStream = input.parse().unwrap_or_default();
    let span = rest
        .into_iter()
        .last()
        .and_then(|last| first.join(last.span()))
        .unwrap_or(first);
    Literal::Unsupported { span, kind }
}

fn parse_atom(input: ParseStream) -> syn::Result<Atom> {
    let relation: Ident = input.parse()?;
    if !input.peek(syn::token::Paren) {
        return Err(syn::Error::new(
            relation.span(),
            format!("expected an atom such as `{relation}(x, y)`: a relation name and its arguments in parentheses"),
        ));
    }
    let group: proc_macro2::Group = match input.parse::<TokenTree>()? {
        TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis => g,
        other => return Err(syn::Error::new(other.span(), "expected `(`")),
    };
    let exprs = parse_before(
        Punctuated::<Expr, Token![,]>::parse_terminated,
        group.stream(),
        group.span_close(),
    )?;
    Ok(Atom {
        relation,
        args: exprs.into_iter().map(classify_term).collect(),
        parens: group.span(),
    })
}

fn classify_term(expr: Expr) -> Term {
    let span = expr.span();
    match &expr {
        Expr::Infer(_) => Term::Wildcard(span),
        Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => match p.path.get_ident() {
            Some(ident) if ident == "_" => Term::Wildcard(span),
            Some(ident) => Term::Var(ident.clone()),
            None => Term::Const(Box::new(Constant {
                expr,
                kind: ConstKind::Opaque,
            })),
        },
        Expr::Lit(lit) => match literal_kind(&lit.lit, false) {
            Some(kind) => Term::Const(Box::new(Constant { expr, kind })),
            None => Term::Invalid {
                span,
                kind: InvalidTerm::Float,
            },
        },
        Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Neg(_)) => match &*unary.expr {
            Expr::Lit(lit) if matches!(lit.lit, Lit::Int(_)) => Term::Const(Box::new(Constant {
                kind: literal_kind(&lit.lit, true).expect("integer literal"),
                expr,
            })),
            Expr::Lit(lit) if matches!(lit.lit, Lit::Float(_)) => Term::Invalid {
                span,
                kind: InvalidTerm::Float,
            },
            _ => Term::Invalid {
                span,
                kind: InvalidTerm::Arithmetic,
            },
        },
        Expr::Group(g) => classify_term((*g.expr).clone()),
        Expr::Paren(p) => classify_term((*p.expr).clone()),
        Expr::Binary(binary) => Term::Invalid {
            span: binary.op.span(),
            kind: InvalidTerm::Arithmetic,
        },
        Expr::Unary(_) | Expr::Range(_) => Term::Invalid {
            span,
            kind: InvalidTerm::Arithmetic,
        },
        Expr::Call(call) => {
            let aggregate = matches!(&*call.func, Expr::Path(p) if p.path.get_ident().is_some_and(|i| {
                ["count", "sum", "min", "max", "mean", "avg"].iter().any(|a| i == a)
            }));
            Term::Invalid {
                span,
                kind: if aggregate {
                    InvalidTerm::Aggregate
                } else {
                    InvalidTerm::Call
                },
            }
        }
        Expr::MethodCall(call) => Term::Invalid {
            span: call.method.span(),
            kind: InvalidTerm::Call,
        },
        Expr::Macro(_) => Term::Invalid {
            span,
            kind: InvalidTerm::Call,
        },
        _ => Term::Invalid {
            span,
            kind: InvalidTerm::Other,
        },
    }
}

/// The kind of a literal constant; `None` for a float (never a valid column value).
fn literal_kind(lit: &Lit, negative: bool) -> Option<ConstKind> {
    Some(match lit {
        Lit::Int(int) => ConstKind::Int {
            magnitude: int.base10_parse::<u128>().ok(),
            negative,
            suffix: int.suffix().to_string(),
        },
        Lit::Str(s) => ConstKind::Str(s.value()),
        Lit::Char(c) => ConstKind::Char(c.value()),
        Lit::Bool(b) => ConstKind::Bool(b.value),
        Lit::Float(_) => return None,
        _ => ConstKind::Opaque,
    })
}

/// Source text of an atom, normalized: `Reach(x, "a", _)`.
pub fn atom_text(atom: &Atom) -> String {
    let args: Vec<String> = atom
        .args
        .iter()
        .map(|term| match term {
            Term::Var(v) => v.unraw().to_string(),
            Term::Wildcard(_) => "_".to_string(),
            Term::Const(c) => c.expr.to_token_stream().to_string().replace("- ", "-"),
            Term::Invalid { .. } => "?".to_string(),
        })
        .collect();
    format!("{}({})", atom.relation.unraw(), args.join(", "))
}
