//! The text of a relation stored as a row of plain values: written once per row type
//! here, where a relation struct's generated code would repeat it per relation.

use std::fmt::Debug;

use super::{render_value, FieldError, TextValue};
use crate::program::Record;
use crate::symbol::Symbols;
use crate::typed::Stored;

/// A row of column values that all have [`TextValue`]: a tuple of up to twelve. The
/// relations of plain columns (integers, `bool`, `char`, `&'static str`) store such rows,
/// and their [`Record`] methods are these.
pub trait TextRow: Sized {
    /// The number of columns.
    const ARITY: usize;
    /// [`Record::render_values`].
    fn render_values(&self) -> Vec<String>;
    /// [`Record::write_tsv`].
    fn write_tsv(&self, out: &mut String);
    /// Parses a row from exactly [`TextRow::ARITY`] fields, interning strings in `symbols`.
    fn parse_fields(fields: &[&str], symbols: &Symbols) -> Result<Self, FieldError>;
}

macro_rules! text_row {
    ($arity:literal: $($column:ident $at:tt),*) => {
        impl<$($column: TextValue + Debug),*> TextRow for ($($column,)*) {
            const ARITY: usize = $arity;

            fn render_values(&self) -> Vec<String> {
                vec![$(render_value(&self.$at)),*]
            }

            #[allow(unused_variables)]
            fn write_tsv(&self, out: &mut String) {
                $(
                    if $at > 0 {
                        out.push('\t');
                    }
                    self.$at.write_text(out);
                )*
            }

            #[allow(unused_variables, clippy::unused_unit)]
            fn parse_fields(fields: &[&str], symbols: &Symbols) -> Result<Self, FieldError> {
                Ok(($(
                    $column::parse_text_in(fields[$at], symbols).map_err(|message| FieldError {
                        field: Some($at),
                        message,
                    })?,
                )*))
            }
        }
    };
}

text_row!(0:);
text_row!(1: A 0);
text_row!(2: A 0, B 1);
text_row!(3: A 0, B 1, C 2);
text_row!(4: A 0, B 1, C 2, D 3);
text_row!(5: A 0, B 1, C 2, D 3, E 4);
text_row!(6: A 0, B 1, C 2, D 3, E 4, F 5);
text_row!(7: A 0, B 1, C 2, D 3, E 4, F 5, G 6);
text_row!(8: A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
text_row!(9: A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
text_row!(10: A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
text_row!(11: A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
text_row!(12: A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);

/// [`Record::parse_text`] of a relation stored as a [`TextRow`]: the fields' count
/// checked against its columns', then each parsed.
///
/// ```
/// use dred_runtime::text::parse_record;
/// use dred_runtime::{Record, Stored, Symbols};
/// #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
/// struct Edge(u32, char);
/// impl Stored for Edge {
///     type Row = (u32, char);
///     fn to_row(&self) -> (u32, char) {
///         (self.0, self.1)
///     }
///     fn into_row(self) -> (u32, char) {
///         (self.0, self.1)
///     }
///     fn from_row(row: &(u32, char)) -> Self {
///         Edge(row.0, row.1)
///     }
///     fn as_row(&self) -> std::borrow::Cow<'_, (u32, char)> {
///         std::borrow::Cow::Owned(self.to_row())
///     }
/// }
/// impl Record for Edge {
///     const NAME: &'static str = "Edge";
///     fn render_values(&self) -> Vec<String> {
///         dred_runtime::text::TextRow::render_values(&self.to_row())
///     }
///     fn write_tsv(&self, out: &mut String) {
///         dred_runtime::text::TextRow::write_tsv(&self.to_row(), out)
///     }
///     fn parse_text(fields: &[&str], symbols: &Symbols) -> Result<Self, dred_runtime::text::FieldError> {
///         parse_record(fields, symbols)
///     }
/// }
/// let symbols = Symbols::default();
/// let edge = Edge::parse_text(&["7", "x"], &symbols).unwrap();
/// assert_eq!(edge, Edge(7, 'x'));
/// let mut tsv = String::new();
/// edge.write_tsv(&mut tsv);
/// assert_eq!(tsv, "7\tx");
/// assert_eq!(edge.render_values(), ["7", "'x'"]);
/// let wrong = Edge::parse_text(&["7"], &symbols).unwrap_err();
/// assert_eq!(wrong.message, "`Edge` has 2 column(s), 1 value(s) given");
/// assert_eq!(Edge::parse_text(&["7", "xy"], &symbols).unwrap_err().field, Some(1));
/// ```
pub fn parse_record<S>(fields: &[&str], symbols: &Symbols) -> Result<S, FieldError>
where
    S: Stored + Record,
    S::Row: TextRow,
{
    let arity = <S::Row as TextRow>::ARITY;
    if fields.len() != arity {
        return Err(FieldError {
            field: None,
            message: format!(
                "`{}` has {} column(s), {} value(s) given",
                S::NAME,
                arity,
                fields.len()
            ),
        });
    }
    S::Row::parse_fields(fields, symbols).map(|row| S::from_row(&row))
}
