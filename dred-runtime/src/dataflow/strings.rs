//! How the string column types cross processes: each as its text.
//!
//! A [`Symbol`] received from another process is a fresh allocation, not interned in any
//! table: it still compares, orders and hashes as its text, which is all a dataflow asks
//! of it. A `&'static str` column travels inside a dataflow as a [`StaticStr`], which a
//! receiving process interns ([`crate::text::intern`]) as reading the string from a fact
//! file would have: a process keeps one copy of each distinct string it ever holds.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::symbol::Symbol;

impl Serialize for Symbol {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Symbol {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Symbol::from)
    }
}

/// A `&'static str` column value inside a dataflow. Timely asks of what it sends that any
/// process can build it from bytes, and a received string has no `'static` home until
/// one is made for it; so a generated dataflow wraps such columns in `StaticStr` where
/// facts enter and unwraps them where they leave. It compares, orders and hashes as its
/// text, exactly as the `&'static str` does.
///
/// ```
/// use dred_runtime::dataflow::StaticStr;
/// let (a, b) = (StaticStr("apple"), StaticStr("banana"));
/// assert!(a < b);
/// assert_eq!(a.0, "apple");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct StaticStr(pub &'static str);

impl Serialize for StaticStr {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

impl<'de> Deserialize<'de> for StaticStr {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Ok(StaticStr(crate::text::intern(&text)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::value::{Error, StrDeserializer, StringDeserializer};

    #[test]
    fn a_symbol_is_read_from_its_text() {
        let text = StrDeserializer::<Error>::new("New York");
        assert_eq!(Symbol::deserialize(text).unwrap(), Symbol::from("New York"));
    }

    #[test]
    fn a_static_str_is_interned_once_per_text() {
        let read = |text: &str| {
            let text = StringDeserializer::<Error>::new(text.to_string());
            StaticStr::deserialize(text).unwrap()
        };
        let (first, again) = (read("Lisbon"), read("Lisbon"));
        assert_eq!(first, StaticStr("Lisbon"));
        assert!(std::ptr::eq(first.0, again.0), "one copy per distinct text");
    }
}
