//! One fact as text: `Edge(a,"New York")` as reports print it, or `Edge<TAB>a<TAB>New York`
//! as a fact file's line with the relation's name in front.

use super::TextError;

/// A fact split into its relation's name and its fields, each field as the text its column
/// type parses ([`super::TextValue`]), with the 1-based character column where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactFields {
    /// The relation's name.
    pub relation: String,
    /// One field per column: the value's text, quotes and escapes removed.
    pub fields: Vec<String>,
    /// Where each field starts in the text (1-based, in characters), for error messages.
    pub columns: Vec<usize>,
}

/// Splits one fact written in either form:
///
/// - **rendered**, as reports and `Display` print facts: `Name(v1,v2)`, values separated by
///   commas; a value in double quotes (or, for `char`, single quotes) is unescaped as Rust's
///   `Debug` escapes it, any other value is taken as written, trimmed, with commas inside
///   brackets kept (`Point { x: 1, y: 2 }`). `Name()` and a bare `Name` have no fields.
/// - **tab-separated**, as a line of a fact file preceded by the relation: `Name\tv1\tv2`;
///   fields are taken as written.
///
/// ```
/// use dred_runtime::text::split_fact;
/// let fact = split_fact("Edge(a, \"New York\")").unwrap();
/// assert_eq!((fact.relation.as_str(), fact.fields), ("Edge", vec!["a".to_string(), "New York".to_string()]));
/// let fact = split_fact("Edge\ta\tNew York").unwrap();
/// assert_eq!(fact.fields, ["a", "New York"]);
/// assert!(split_fact("Edge(a").is_err());
/// ```
pub fn split_fact(text: &str) -> Result<FactFields, TextError> {
    let line = text.strip_suffix('\n').unwrap_or(text);
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.contains('\t') {
        return Ok(split_tab_separated(line));
    }
    let chars: Vec<char> = line.chars().collect();
    let mut at = skip_spaces(&chars, 0);
    let name_start = at;
    while at < chars.len() && (chars[at].is_alphanumeric() || chars[at] == '_') {
        at += 1;
    }
    let relation: String = chars[name_start..at].iter().collect();
    if relation.is_empty() {
        return Err(error(name_start, "expected a relation name"));
    }
    at = skip_spaces(&chars, at);
    let mut fact = FactFields {
        relation,
        fields: Vec::new(),
        columns: Vec::new(),
    };
    if at == chars.len() {
        return Ok(fact);
    }
    if chars[at] != '(' {
        return Err(error(at, "expected `(` after the relation name"));
    }
    at = skip_spaces(&chars, at + 1);
    if chars.get(at) == Some(&')') {
        return finish(fact, &chars, at + 1);
    }
    loop {
        at = skip_spaces(&chars, at);
        let (field, next) = match chars.get(at) {
            Some(&quote @ ('"' | '\'')) => unquote(&chars, at, quote)?,
            _ => bare_value(&chars, at)?,
        };
        fact.fields.push(field);
        fact.columns.push(at + 1);
        at = skip_spaces(&chars, next);
        match chars.get(at) {
            Some(',') => at += 1,
            Some(')') => return finish(fact, &chars, at + 1),
            _ => return Err(error(at, "expected `,` or `)` after a value")),
        }
    }
}

fn split_tab_separated(line: &str) -> FactFields {
    let mut parts = line.split('\t');
    let relation = parts.next().unwrap_or("").trim().to_string();
    let mut column = relation.chars().count() + 2;
    let mut fact = FactFields {
        relation,
        fields: Vec::new(),
        columns: Vec::new(),
    };
    for part in parts {
        fact.fields.push(part.to_string());
        fact.columns.push(column);
        column += part.chars().count() + 1;
    }
    fact
}

fn finish(fact: FactFields, chars: &[char], at: usize) -> Result<FactFields, TextError> {
    let end = skip_spaces(chars, at);
    if end < chars.len() {
        return Err(error(end, "unexpected text after the fact's `)`"));
    }
    Ok(fact)
}

fn skip_spaces(chars: &[char], mut at: usize) -> usize {
    while at < chars.len() && chars[at].is_whitespace() {
        at += 1;
    }
    at
}

/// A value up to the next `,` or `)` outside brackets, trimmed.
fn bare_value(chars: &[char], start: usize) -> Result<(String, usize), TextError> {
    let mut depth = 0usize;
    let mut at = start;
    while let Some(&c) = chars.get(at) {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth > 0 => depth -= 1,
            ',' | ')' if depth == 0 => break,
            '"' => at = unquote(chars, at, '"')?.1 - 1,
            _ => {}
        }
        at += 1;
    }
    if at == chars.len() {
        return Err(error(at, "the fact has no closing `)`"));
    }
    let value: String = chars[start..at].iter().collect();
    let value = value.trim_end();
    if value.is_empty() {
        return Err(error(start, "expected a value"));
    }
    Ok((value.to_string(), at))
}

/// The quoted value starting at `chars[start] == quote`, unescaped, and the position after
/// its closing quote.
fn unquote(chars: &[char], start: usize, quote: char) -> Result<(String, usize), TextError> {
    let mut value = String::new();
    let mut at = start + 1;
    loop {
        match chars.get(at) {
            None => return Err(error(start, "a quoted value has no closing quote")),
            Some(&c) if c == quote => return Ok((value, at + 1)),
            Some('\\') => {
                let (c, next) = unescape(chars, at)?;
                value.push(c);
                at = next;
            }
            Some(&c) => {
                value.push(c);
                at += 1;
            }
        }
    }
}

/// The character escaped at `chars[at] == '\\'` (Rust's escapes, as `Debug` writes them)
/// and the position after the escape.
fn unescape(chars: &[char], at: usize) -> Result<(char, usize), TextError> {
    let simple = match chars.get(at + 1) {
        Some('n') => '\n',
        Some('r') => '\r',
        Some('t') => '\t',
        Some('0') => '\0',
        Some(&c @ ('\\' | '"' | '\'')) => c,
        Some('u') if chars.get(at + 2) == Some(&'{') => {
            let close = (at + 3..chars.len())
                .find(|&i| chars[i] == '}')
                .ok_or_else(|| error(at, "a `\\u{…}` escape has no closing `}`"))?;
            let digits: String = chars[at + 3..close].iter().collect();
            let c = u32::from_str_radix(&digits, 16)
                .ok()
                .and_then(char::from_u32)
                .ok_or_else(|| error(at, format!("`\\u{{{digits}}}` is not a character")))?;
            return Ok((c, close + 1));
        }
        _ => return Err(error(at, "unknown escape")),
    };
    Ok((simple, at + 2))
}

fn error(at: usize, message: impl Into<String>) -> TextError {
    let mut error = TextError::new(message);
    error.line = Some(1);
    error.column = Some(at + 1);
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(text: &str) -> Vec<String> {
        split_fact(text).unwrap().fields
    }

    #[test]
    fn rendered_values_unescape_as_debug_escapes_them() {
        let tricky = "a \"quoted\", tab\t and \\ and \u{1F600} and é";
        let rendered = format!("R({tricky:?},'\\'',-7)");
        assert_eq!(fields(&rendered), [tricky, "'", "-7"]);
    }

    #[test]
    fn bare_values_keep_commas_inside_brackets() {
        assert_eq!(
            fields("P(Point { x: 1, y: 2 }, [1, 2], (a, \"b)\"))"),
            ["Point { x: 1, y: 2 }", "[1, 2]", "(a, \"b)\")"]
        );
    }

    #[test]
    fn zero_arity_facts_have_no_fields() {
        for text in ["Ready", "Ready()", " Ready ( ) "] {
            let fact = split_fact(text).unwrap();
            assert_eq!((fact.relation.as_str(), fact.fields.len()), ("Ready", 0));
        }
    }

    #[test]
    fn tab_separated_fields_are_taken_as_written() {
        let fact = split_fact("Edge\t\"q\"\t b\r\n").unwrap();
        assert_eq!(fact.fields, ["\"q\"", " b"]);
        assert_eq!(fact.columns, [6, 10]);
    }

    #[test]
    fn malformed_facts_name_the_place() {
        for (text, column) in [
            ("", 1),
            ("(a)", 1),
            ("Edge a", 6),
            ("Edge(a", 7),
            ("Edge(a,)", 8),
            ("Edge(a) b", 9),
            ("Edge(\"a)", 6),
            ("Edge(a b c", 11),
            ("Edge(\"\\q\")", 7),
        ] {
            let error = split_fact(text).unwrap_err();
            assert_eq!(error.column, Some(column), "{text:?}: {error}");
        }
    }
}
