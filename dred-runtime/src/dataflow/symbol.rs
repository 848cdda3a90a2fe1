//! [`Symbol`] crosses processes as its text. A symbol received from another process is a
//! fresh allocation, not interned in any table: it still compares, orders and hashes as
//! its text, which is all a dataflow asks of it.

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::value::{Error, StrDeserializer};

    #[test]
    fn a_symbol_is_read_from_its_text() {
        let text = StrDeserializer::<Error>::new("New York");
        assert_eq!(Symbol::deserialize(text).unwrap(), Symbol::from("New York"));
    }
}
