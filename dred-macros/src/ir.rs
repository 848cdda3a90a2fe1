//! The checked program: what `check` produces and `plan` and `codegen` read.
//!
//! Everything here has passed every check: relations exist, arities match, rules are safe,
//! variables and constants fit their columns' types.

use syn::{Attribute, Expr, Ident, Type, Visibility};

pub struct Program {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub name: Ident,
    pub relations: Vec<Relation>,
    pub rules: Vec<Rule>,
    /// Queries to rewrite into demand-driven programs of their own.
    pub queries: Vec<Query>,
    /// Set on a program produced by the magic-set rewrite.
    pub answers: Option<Answers>,
    /// Variables that join columns spelt differently: rustc decides whether the spellings
    /// name one type (an alias) or the program is wrong.
    pub type_assertions: Vec<TypeAssertion>,
}

/// That a variable's column here has the type of its first column: `message`, on
/// `span`, if not.
pub struct TypeAssertion {
    pub here: Type,
    pub first: Type,
    pub span: proc_macro2::Span,
    pub message: String,
}

/// `@query Name = Relation(args)`.
pub struct Query {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub name: Ident,
    pub relation: usize,
    pub args: Vec<QueryArg>,
}

pub enum QueryArg {
    /// Bound at compile time.
    Const(Box<Const>),
    /// Bound at run time (named by the user).
    Param(Ident),
    /// Free: `_`.
    Free,
}

/// What a rewritten program answers: its query, over its own relations.
pub struct Answers {
    /// The original relation (its struct is the answers' type).
    pub original: Ident,
    /// The adorned relation holding the answers.
    pub adorned: usize,
    /// Per column: bound to this constant, bound to a column of the ask relation, or free.
    pub columns: Vec<AnswerColumn>,
    /// The input relation carrying run-time bindings, if the query has parameters.
    pub ask: Option<usize>,
}

pub enum AnswerColumn {
    Const(Box<Const>),
    /// Equal to this column of the ask relation.
    Param(usize),
    Free,
}

pub struct Relation {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub name: Ident,
    pub input: bool,
    pub columns: Vec<Column>,
    /// Its struct is declared by another program of the same macro call (the rewrite's
    /// input relations are the original program's).
    pub external: bool,
    /// The module its struct lives in, if not the macro's own (a query's relations).
    pub module: Option<Ident>,
}

#[derive(Clone)]
pub struct Column {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub ty: Type,
    /// The type as written, whitespace removed: what "the same type" means to the checks.
    pub ty_text: String,
    pub class: TypeClass,
}

/// What the checks know about a column type from its spelling.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TypeClass {
    Int {
        signed: bool,
        bits: u32,
    },
    /// `&'static str` (borrowed) or `String` (owned).
    Str {
        owned: bool,
    },
    Char,
    Bool,
    /// A user type: only rustc knows what fits it.
    Other,
}

#[derive(Clone)]
pub struct Rule {
    pub head: Atom,
    pub body: Vec<Atom>,
    /// The rule as normalized source text.
    pub text: String,
    /// Its doc comments, joined into one line (empty without).
    pub doc: String,
    /// Variable names, indexed by `Term::Var`.
    pub vars: Vec<Ident>,
}

#[derive(Clone)]
pub struct Atom {
    pub relation: usize,
    pub terms: Vec<Term>,
}

#[derive(Clone)]
pub enum Term {
    Var(usize),
    Wildcard,
    Const(Box<Const>),
}

#[derive(Clone)]
pub struct Const {
    pub expr: Expr,
    /// Canonical text form (as the runtime renders the value), when known.
    pub text: Option<String>,
}

impl Rule {
    /// How many times each variable occurs in the rule (head and body).
    pub fn occurrences(&self) -> Vec<usize> {
        let mut counts = vec![0; self.vars.len()];
        for atom in std::iter::once(&self.head).chain(&self.body) {
            for term in &atom.terms {
                if let Term::Var(v) = term {
                    counts[*v] += 1;
                }
            }
        }
        counts
    }
}
