//! The expansion on programs nobody wrote for it: valid programs mutated by random token
//! edits (delete, duplicate, swap, replace with punctuation, keywords or literals), run
//! in-process. The expansion must never panic, must return code or errors, and every error
//! must point inside its input (a user's token, never the whole call or generated code).
//!
//! Cases: `DRED_FUZZ_CASES` (default 1,500 per run, spread over the seed programs); a long
//! soak: `DRED_FUZZ_CASES=100000 cargo test -p dred-macros --release fuzz`. A failure
//! names its seed and prints the mutated program.

use std::panic::{catch_unwind, AssertUnwindSafe};

use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};

/// Valid programs that cover the language: inputs, derived relations, constants, facts,
/// zero-arity relations, repeated variables, wildcards, several column types, queries, raw
/// identifiers, prelude names, type aliases, documented rules, keys wider than 12 columns.
const PROGRAMS: &[&str] = &[
    "pub struct Graph;
     @input pub struct E(pub &'static str, pub &'static str);
     pub struct R(pub &'static str, pub &'static str);
     R(x, y) <- E(x, y);
     R(x, z) <- R(x, y), R(y, z);",
    "pub struct Chain;
     @input pub struct E(pub u32, pub u32);
     pub struct R(pub u32, pub u32);
     R(x, y) <- E(x, y);
     R(x, z) <- E(x, y), R(y, z);
     @query pub FromOne = R(1, _);
     @query pub From = R(source, _);",
    "pub struct Flags;
     @input pub struct Seed(pub u8, pub bool, pub char);
     pub struct On();
     pub struct Pair(pub u8, pub u8);
     pub struct Same(pub u8);
     On() <- Seed(_, true, _);
     Pair(x, x) <- Seed(x, _, 'a');
     Pair(3, 4);
     Same(x) <- Pair(x, x), On();",
    "pub struct Andersen;
     @input pub struct AddressOf(pub u32, pub u32);
     @input pub struct Assign(pub u32, pub u32);
     @input pub struct Load(pub u32, pub u32);
     @input pub struct Store(pub u32, pub u32);
     pub struct PointsTo(pub u32, pub u32);
     PointsTo(y, x) <- AddressOf(y, x);
     PointsTo(y, x) <- Assign(y, z), PointsTo(z, x);
     PointsTo(y, w) <- Load(y, x), PointsTo(x, z), PointsTo(z, w);
     PointsTo(z, w) <- Store(y, x), PointsTo(y, z), PointsTo(x, w);",
    "struct Owned;
     @input struct Name(String, i64);
     struct Known(String);
     struct Negative(i64);
     Known(n) <- Name(n, _);
     Negative(-1);
     Negative(v) <- Name(_, v), Known(\"root\");",
    "pub(crate) struct Mutual;
     @input pub struct Seed(pub &'static str);
     pub struct P(pub &'static str);
     pub struct Q(pub &'static str);
     P(x) <- Seed(x);
     Q(x) <- P(x);
     P(x) <- Q(x);",
    "pub struct r#struct;
     @input pub struct r#type(pub u32, pub u32);
     pub struct r#fn(pub u32);
     r#fn(r#in) <- r#type(r#in, _);",
    "pub struct Option;
     @input pub struct Some(pub u32, pub NodeId);
     @input pub struct Wide(pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8,
         pub u8, pub u8, pub u8, pub u8, pub u8, pub u8);
     pub struct None(pub ids::Id, pub ::std::primitive::u32);
     pub struct Vec(pub u8, pub u8);
     /// Every edge is a path.
     None(x, y) <- Some(x, y);
     /// A path continues along an edge.
     None(x, z) <- None(x, y), Some(y, z);
     Vec(a, n) <- Wide(a, b, c, d, e, f, g, h, i, j, k, l, m, n),
         Wide(n, b, c, d, e, f, g, h, i, j, k, l, m, a);",
];

/// A tiny deterministic generator (xorshift), so that a failing case is reproduced by its
/// seed alone.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A token to put where the user's token at `span` was.
fn palette(rng: &mut Rng, span: Span) -> TokenTree {
    let punct = |c: char, spacing| TokenTree::Punct(Punct::new(c, spacing));
    let mut token = match rng.below(14) {
        0 => punct(';', Spacing::Alone),
        1 => punct(',', Spacing::Alone),
        2 => punct('<', Spacing::Joint),
        3 => punct('-', Spacing::Alone),
        4 => punct('@', Spacing::Alone),
        5 => punct('!', Spacing::Alone),
        6 => TokenTree::Ident(Ident::new("_", span)),
        7 => {
            let words = [
                "struct", "pub", "input", "query", "fn", "not", "impl", "self", "Self", "crate",
                "mod", "r#struct", "x", "u32", "String", "Some", "None", "f64",
            ];
            TokenTree::Ident(Ident::new_raw_or_plain(words[rng.below(words.len())], span))
        }
        8 => TokenTree::Literal(Literal::u32_unsuffixed(rng.below(300) as u32)),
        9 => TokenTree::Literal(Literal::string("s")),
        10 => TokenTree::Literal(Literal::f64_unsuffixed(1.5)),
        11 => TokenTree::Literal(Literal::character('c')),
        12 => TokenTree::Group(Group::new(Delimiter::Parenthesis, TokenStream::new())),
        _ => TokenTree::Group(Group::new(Delimiter::Brace, TokenStream::new())),
    };
    token.set_span(span);
    token
}

/// `Ident::new` panics on a raw keyword's text; `r#` words become raw identifiers.
trait NewRawOrPlain {
    fn new_raw_or_plain(word: &str, span: Span) -> Ident;
}

impl NewRawOrPlain for Ident {
    fn new_raw_or_plain(word: &str, span: Span) -> Ident {
        match word.strip_prefix("r#") {
            Some(raw) => Ident::new_raw(raw, span),
            None => Ident::new(word, span),
        }
    }
}

/// Applies one random edit somewhere in `tokens`, descending into groups at random.
fn mutate(tokens: &mut Vec<TokenTree>, rng: &mut Rng) {
    if tokens.is_empty() {
        return;
    }
    let at = rng.below(tokens.len());
    if let TokenTree::Group(group) = &tokens[at] {
        if rng.below(3) > 0 {
            let mut inner: Vec<TokenTree> = group.stream().into_iter().collect();
            mutate(&mut inner, rng);
            let mut rebuilt = Group::new(group.delimiter(), inner.into_iter().collect());
            rebuilt.set_span(group.span());
            tokens[at] = TokenTree::Group(rebuilt);
            return;
        }
    }
    match rng.below(4) {
        0 => {
            tokens.remove(at);
        }
        1 => {
            let copy = tokens[at].clone();
            tokens.insert(at, copy);
        }
        2 => {
            let other = rng.below(tokens.len());
            tokens.swap(at, other);
        }
        _ => tokens[at] = palette(rng, tokens[at].span()),
    }
}

/// The first and last positions (line, column) of any token of `tokens`, at any depth.
fn extent(tokens: &TokenStream) -> Option<((usize, usize), (usize, usize))> {
    let mut range: Option<((usize, usize), (usize, usize))> = None;
    for token in tokens.clone() {
        let (start, end) = (token.span().start(), token.span().end());
        let (start, end) = ((start.line, start.column), (end.line, end.column));
        range = Some(match range {
            None => (start, end),
            Some((low, high)) => (low.min(start), high.max(end)),
        });
    }
    range
}

/// What is wrong with the expansion of `input`, if anything.
fn check_case(input: TokenStream) -> Result<(), String> {
    let Some((low, high)) = extent(&input) else {
        return Ok(());
    };
    // The expansion's own panics are caught and reported; the default hook would print each
    // of them too. (A hook is global: this is the crate's only test that replaces it.)
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let expanded = catch_unwind(AssertUnwindSafe(|| crate::expand(input)));
    std::panic::set_hook(hook);
    let expanded = expanded.map_err(|panic| match panic.downcast_ref::<&str>() {
        Some(message) => format!("the expansion panicked: {message}"),
        None => match panic.downcast_ref::<String>() {
            Some(message) => format!("the expansion panicked: {message}"),
            None => "the expansion panicked".to_string(),
        },
    })?;
    let Err(errors) = expanded else {
        return Ok(());
    };
    for error in errors {
        let (start, end) = (error.span().start(), error.span().end());
        let (start, end) = ((start.line, start.column), (end.line, end.column));
        if start < low || end > high {
            return Err(format!(
                "an error outside the input ({start:?}..{end:?}, input {low:?}..{high:?}): {error}"
            ));
        }
    }
    Ok(())
}

fn cases() -> u64 {
    std::env::var("DRED_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_500)
}

#[test]
fn the_seed_programs_and_their_mutations_expand_to_code_or_errors_inside_their_input() {
    for program in PROGRAMS {
        let input: TokenStream = program.parse().expect("a seed program tokenizes");
        if let Err(error) = crate::expand(input) {
            panic!("a seed program is rejected: {error}\n{program}");
        }
    }
    let mut failures = Vec::new();
    for seed in 1..=cases() {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let program = PROGRAMS[rng.below(PROGRAMS.len())];
        // From the second line: the first holds nothing, so that an error at the whole call
        // (line 1, column 0 here) is outside every input.
        let mut tokens: Vec<TokenTree> = format!("\n{program}")
            .parse::<TokenStream>()
            .expect("a seed program tokenizes")
            .into_iter()
            .collect();
        for _ in 0..1 + rng.below(4) {
            mutate(&mut tokens, &mut rng);
        }
        let input: TokenStream = tokens.into_iter().collect();
        if let Err(problem) = check_case(input.clone()) {
            failures.push(format!("seed {seed}: {problem}\n  program: {input}"));
            if failures.len() == 5 {
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
