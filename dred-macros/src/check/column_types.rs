//! Column types that cannot hold facts, recognized by their spelling so that the user reads
//! one message on the type instead of one rustc error per trait the relation derives.
//!
//! A fact outlives the call that inserts it and is hashed, ordered, compared and cloned:
//! every column type must be `'static` and implement `Clone`, `Eq`, `Hash`, `Ord` and
//! `Debug`. Only spellings that fail this whatever the user's code are caught here (a type
//! of the user's own that lacks a trait is reported by rustc, on the type, per trait).

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{GenericArgument, PathArguments, Type};

/// Standard types that lack some of the traits a column needs, and what they lack.
const LACKING: &[(&str, &str)] = &[
    (
        "f32",
        "`Eq`, `Hash` and `Ord` (store `f32::to_bits` in a `u32`, or a fixed-point integer)",
    ),
    (
        "f64",
        "`Eq`, `Hash` and `Ord` (store `f64::to_bits` in a `u64`, or a fixed-point integer)",
    ),
    ("HashMap", "`Hash` and `Ord` (a `BTreeMap` has both)"),
    ("HashSet", "`Hash` and `Ord` (a `BTreeSet` has both)"),
    ("Cell", "`Hash`"),
    ("RefCell", "`Hash` and `Clone` of a shared value"),
    ("Mutex", "`Clone`, `Eq`, `Hash` and `Ord`"),
    ("RwLock", "`Clone`, `Eq`, `Hash` and `Ord`"),
];

/// The first reason `ty` cannot be a column type, on the token that shows it.
pub fn unsupported(ty: &Type) -> Option<(Span, String)> {
    match ty {
        Type::Slice(_) | Type::TraitObject(_) | Type::ImplTrait(_) => Some(unsized_type(ty)),
        Type::Path(path) if path.qself.is_none() && path.path.is_ident("str") => {
            Some(unsized_type(ty))
        }
        Type::Infer(_) => Some((
            ty.span(),
            "a column type must be written out: `_` cannot be inferred here".to_owned(),
        )),
        _ => within(ty),
    }
}

fn unsized_type(ty: &Type) -> (Span, String) {
    (
        ty.span(),
        "a column holds a sized value: use a reference with the `'static` lifetime (`&'static str`) or an owned type (`String`, `Vec<T>`, `Box<[T]>`)".to_owned(),
    )
}

/// What rules out `ty` anywhere inside it (where unsized types are fine, behind pointers).
fn within(ty: &Type) -> Option<(Span, String)> {
    match ty {
        Type::Reference(reference) => match &reference.lifetime {
            None => Some((
                reference.and_token.span,
                "a reference column needs the `'static` lifetime, e.g. `&'static str`: facts outlive the call that inserts them".to_owned(),
            )),
            Some(lifetime) => not_static(lifetime).or_else(|| within(&reference.elem)),
        },
        Type::Path(path) => {
            if let Some(qself) = &path.qself {
                if let Some(found) = within(&qself.ty) {
                    return Some(found);
                }
            }
            for segment in &path.path.segments {
                let name = segment.ident.to_string();
                if let Some((_, lacks)) = LACKING.iter().find(|(n, _)| *n == name) {
                    return Some((
                        segment.ident.span(),
                        format!("`{name}` cannot be a column type: columns need `Clone`, `Eq`, `Hash`, `Ord` and `Debug`, and `{name}` lacks {lacks}"),
                    ));
                }
                if let PathArguments::AngleBracketed(args) = &segment.arguments {
                    for arg in &args.args {
                        let found = match arg {
                            GenericArgument::Type(ty) => within(ty),
                            GenericArgument::Lifetime(lifetime) => not_static(lifetime),
                            _ => None,
                        };
                        if found.is_some() {
                            return found;
                        }
                    }
                }
            }
            None
        }
        Type::Tuple(tuple) => tuple.elems.iter().find_map(unsupported),
        Type::Array(array) => unsupported(&array.elem),
        Type::Paren(inner) => unsupported(&inner.elem),
        Type::Group(inner) => unsupported(&inner.elem),
        _ => None,
    }
}

fn not_static(lifetime: &syn::Lifetime) -> Option<(Span, String)> {
    (lifetime.ident != "static").then(|| {
        (
            lifetime.span(),
            format!("a column type cannot borrow for `{lifetime}`: facts outlive the call that inserts them, so columns are `'static` (`&'static str`, or an owned type)"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(ty: &str) -> Option<String> {
        unsupported(&syn::parse_str(ty).unwrap()).map(|(_, message)| message)
    }

    #[test]
    fn columns_that_can_hold_facts_pass() {
        for ty in [
            "u32",
            "&'static str",
            "String",
            "Box<str>",
            "Vec<(u8, &'static [u8])>",
            "std::rc::Rc<str>",
            "Option<[u64; 4]>",
            "my::Symbol",
            "<T as Trait>::Assoc",
        ] {
            assert_eq!(reason(ty), None, "{ty}");
        }
    }

    #[test]
    fn columns_that_cannot_are_named() {
        for (ty, expected) in [
            ("f64", "`f64` cannot be a column type"),
            (
                "Option<std::primitive::f32>",
                "`f32` cannot be a column type",
            ),
            ("(u32, f64)", "`f64` cannot be a column type"),
            ("std::collections::HashMap<u32, u32>", "`HashMap` cannot"),
            ("&str", "needs the `'static` lifetime"),
            ("&'a str", "cannot borrow for `'a`"),
            ("Cow<'_, str>", "cannot borrow for `'_`"),
            ("str", "a column holds a sized value"),
            ("[u8]", "a column holds a sized value"),
            ("dyn Fn()", "a column holds a sized value"),
            ("_", "must be written out"),
        ] {
            let found = reason(ty).unwrap_or_else(|| panic!("{ty} passed"));
            assert!(found.contains(expected), "{ty}: {found}");
        }
    }
}
