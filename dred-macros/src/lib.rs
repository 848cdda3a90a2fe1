//! The `datalog!` macro: a small compiler from a positive Datalog program to typed Rust.
//!
//! Stages, one module each: `syntax` (tokens → items with spans) → `check` (every
//! mistake, on its token, all at once → `ir`) → `magic` (each `@query` rewritten into
//! a demand-driven program of its own) → `plan` (join orders and indexes) → `codegen`
//! (structs, program type, join functions), once per program. The generated code calls the
//! runtime through `::dred::runtime`; see the `dred` crate for the language and the API.

use proc_macro::TokenStream;
use proc_macro2::Span;

mod check;
mod codegen;
#[cfg(test)]
mod fuzz;
mod ir;
mod magic;
mod plan;
mod syntax;

/// Declares a positive Datalog program, checked at compile time, maintained with DRed.
///
/// See the `dred` crate documentation for the language and the generated API.
#[proc_macro]
pub fn datalog(input: TokenStream) -> TokenStream {
    expand(input.into())
        .unwrap_or_else(|error| error.to_compile_error())
        .into()
}

/// The whole expansion, on `proc_macro2` tokens so that tests can run it in-process: the
/// generated code, or every mistake of the program (combined into one error).
fn expand(input: proc_macro2::TokenStream) -> Result<proc_macro2::TokenStream, syn::Error> {
    let mut errors = Errors::default();
    let items = syntax::parse(input, &mut errors);
    let program = check::check(items, &mut errors);
    match (program, errors.into_error()) {
        (Some(program), None) => {
            let mut out = codegen::generate(&program, &plan::plan(&program));
            for query in &program.queries {
                let rewritten = magic::rewrite(&program, query);
                out.extend(codegen::generate(&rewritten, &plan::plan(&rewritten)));
            }
            Ok(out)
        }
        (_, Some(error)) => Err(error),
        (None, None) => unreachable!("check returns no program only with errors"),
    }
}

/// Collects every error of a program so that all are reported in one compile.
#[derive(Default)]
pub(crate) struct Errors {
    errors: Vec<syn::Error>,
}

impl Errors {
    pub fn push(&mut self, span: Span, message: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, message));
    }

    pub fn push_error(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    pub fn len(&self) -> usize {
        self.errors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    fn into_error(self) -> Option<syn::Error> {
        self.errors.into_iter().reduce(|mut all, next| {
            all.combine(next);
            all
        })
    }
}
