//! Facts as text: the canonical trace rendering of values, and checked parsing of values
//! read from files.

use std::collections::HashSet;
use std::fmt::{self, Debug, Write};
use std::sync::Mutex;

mod fact;
mod row;

pub use fact::{split_fact, FactFields};
pub use row::{parse_record, TextRow};

use crate::symbol::{Symbol, Symbols};

/// A fact with its values in canonical text form: what reports print and independent
/// checkers compare.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroundFact {
    /// Relation name.
    pub relation: String,
    /// Values, rendered by [`render_value`].
    pub values: Vec<String>,
}

impl fmt::Display for GroundFact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.relation, self.values.join(","))
    }
}

/// Renders a value in the trace format: integers as decimals; a string matching
/// `[a-z][A-Za-z0-9_]*` bare, any other string quoted and escaped; other types by `Debug`.
///
/// ```
/// use dred_runtime::text::render_value;
/// assert_eq!(render_value(&"fresh"), "fresh");
/// assert_eq!(render_value(&"New York"), "\"New York\"");
/// assert_eq!(render_value(&String::from("a")), "a");
/// assert_eq!(render_value(&-7i64), "-7");
/// ```
pub fn render_value<V: Debug + ?Sized>(value: &V) -> String {
    let debug = format!("{value:?}");
    match debug.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(inner) if is_bare_word(inner) => inner.to_string(),
        _ => debug,
    }
}

/// Whether a string prints without quotes: `[a-z][A-Za-z0-9_]*`.
pub fn is_bare_word(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some('a'..='z')) && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A column value that can be read from and written to a tab-separated fact file.
///
/// Implemented for the integer types, `bool`, `char`, `String`, [`Symbol`] and
/// `&'static str`. Implement
/// it for your own column types to read them from files; a program whose input columns lack
/// it still compiles, and reading such a column reports an error naming the type.
pub trait TextValue: Sized {
    /// Parses one field; the error says what was expected.
    fn parse_text(field: &str) -> Result<Self, String>;
    /// Parses one field read for a batch whose strings are interned in `symbols`: what
    /// [`Symbol`] does; other types parse as [`TextValue::parse_text`].
    fn parse_text_in(field: &str, symbols: &Symbols) -> Result<Self, String> {
        let _ = symbols;
        Self::parse_text(field)
    }
    /// Writes the value as one field (no tabs or newlines).
    fn write_text(&self, out: &mut String);
}

macro_rules! text_value_via_from_str {
    ($($t:ty),*) => {$(
        impl TextValue for $t {
            fn parse_text(field: &str) -> Result<Self, String> {
                field.parse().map_err(|e| format!("expected {}: {e}", stringify!($t)))
            }
            fn write_text(&self, out: &mut String) {
                let _ = write!(out, "{self}");
            }
        }
    )*};
}
text_value_via_from_str!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, bool, char
);

impl TextValue for String {
    fn parse_text(field: &str) -> Result<Self, String> {
        Ok(field.to_string())
    }
    fn write_text(&self, out: &mut String) {
        out.push_str(self);
    }
}

/// Symbols read into a batch are interned in its table ([`crate::Batch::with_symbols`]).
impl TextValue for Symbol {
    fn parse_text(field: &str) -> Result<Self, String> {
        Ok(Symbol::from(field))
    }
    fn parse_text_in(field: &str, symbols: &Symbols) -> Result<Self, String> {
        Ok(symbols.intern(field))
    }
    fn write_text(&self, out: &mut String) {
        out.push_str(self);
    }
}

/// Strings read into `&'static str` columns are interned: each distinct string is leaked once
/// and shared for the rest of the process. A program that keeps reading new strings should
/// declare such columns [`Symbol`]s, which are freed with their facts.
impl TextValue for &'static str {
    fn parse_text(field: &str) -> Result<Self, String> {
        Ok(intern(field))
    }
    fn write_text(&self, out: &mut String) {
        out.push_str(self);
    }
}

/// Returns the process-wide `&'static str` equal to `s`, leaking it the first time.
pub fn intern(s: &str) -> &'static str {
    static INTERNED: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut guard = INTERNED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let set = guard.get_or_insert_with(HashSet::new);
    if let Some(&held) = set.get(s) {
        return held;
    }
    let leaked: &'static str = Box::leak(s.to_string().into_boxed_str());
    set.insert(leaked);
    leaked
}

/// Selects, for a column type known at the call site, [`TextValue`] if the type has it and
/// an error otherwise (autoref specialization; used by generated code).
pub struct ColumnText<T>(std::marker::PhantomData<T>);

impl<T> ColumnText<T> {
    /// A selector for column type `T`.
    pub const fn new() -> Self {
        ColumnText(std::marker::PhantomData)
    }
}

impl<T> Default for ColumnText<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The text route for column types with [`TextValue`].
pub trait ViaTextValue<T> {
    /// Parses one field, interning strings in `symbols`.
    fn parse_column(&self, field: &str, symbols: &Symbols) -> Result<T, String>;
    /// Writes one field.
    fn write_column(&self, value: &T, out: &mut String);
}

impl<T: TextValue> ViaTextValue<T> for ColumnText<T> {
    fn parse_column(&self, field: &str, symbols: &Symbols) -> Result<T, String> {
        T::parse_text_in(field, symbols)
    }
    fn write_column(&self, value: &T, out: &mut String) {
        value.write_text(out);
    }
}

/// The fallback for column types without [`TextValue`].
pub trait ViaNoText<T> {
    /// Always an error naming the type.
    fn parse_column(&self, field: &str, symbols: &Symbols) -> Result<T, String>;
    /// Writes the value's canonical rendering ([`render_value`]).
    fn write_column(&self, value: &T, out: &mut String)
    where
        T: Debug,
    {
        out.push_str(&render_value(value));
    }
}

impl<T> ViaNoText<T> for &ColumnText<T> {
    fn parse_column(&self, _field: &str, _symbols: &Symbols) -> Result<T, String> {
        Err(format!(
            "column type `{}` cannot be read from text: implement dred::text::TextValue for it",
            std::any::type_name::<T>()
        ))
    }
}

/// Why one untyped fact was rejected: which field (0-based), if one field is to blame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The offending field's 0-based position, or `None` for the fact as a whole.
    pub field: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// Why untyped facts were rejected; where a file is involved, which file, line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextError {
    /// The file (or other origin) the text came from, if known.
    pub file: Option<String>,
    /// 1-based line, if known.
    pub line: Option<usize>,
    /// 1-based column (in characters) of the offending field, if known.
    pub column: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl TextError {
    /// An error with a message only; [`TextError::at`] adds the place.
    pub fn new(message: impl Into<String>) -> Self {
        TextError {
            file: None,
            line: None,
            column: None,
            message: message.into(),
        }
    }

    /// The same error, placed at `file:line:column`.
    pub fn at(mut self, file: &str, line: usize, column: usize) -> Self {
        self.file = Some(file.to_string());
        self.line = Some(line);
        self.column = Some(column);
        self
    }
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}:")?;
        }
        if let (Some(line), Some(column)) = (self.line, self.column) {
            write!(f, "{line}:{column}: ")?;
        } else if self.file.is_some() {
            f.write_str(" ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for TextError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::needless_borrow)] // the borrow is the selector, as in generated code
    fn column_text_picks_text_value_when_present() {
        #[derive(Debug)]
        struct Opaque;
        let symbols = Symbols::default();
        assert_eq!(
            (&ColumnText::<u8>::new()).parse_column("7", &symbols),
            Ok(7)
        );
        assert!((&ColumnText::<u8>::new())
            .parse_column("300", &symbols)
            .is_err());
        let err = (&ColumnText::<Opaque>::new())
            .parse_column("x", &symbols)
            .unwrap_err();
        let read = (&ColumnText::<Symbol>::new()).parse_column("s", &symbols);
        assert!(Symbol::ptr_eq(&read.unwrap(), &symbols.intern("s")));
        assert!(err.contains("Opaque"), "{err}");
    }

    #[test]
    fn interning_returns_one_pointer_per_string() {
        let a = intern("same");
        let b = intern(&String::from("same"));
        assert!(std::ptr::eq(a, b));
    }
}
