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
}

pub struct Relation {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub name: Ident,
    pub input: bool,
    pub columns: Vec<Column>,
}

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

pub struct Rule {
    pub head: Atom,
    pub body: Vec<Atom>,
    /// The rule as normalized source text.
    pub text: String,
    /// Variable names, indexed by `Term::Var`.
    pub vars: Vec<Ident>,
}

pub struct Atom {
    pub relation: usize,
    pub terms: Vec<Term>,
}

pub enum Term {
    Var(usize),
    Wildcard,
    Const(Const),
}

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
