//! Strings read from text, shared and freed with the facts that hold them: the column type
//! [`Symbol`] and the interning table [`Symbols`] that a program owns.
//!
//! A `&'static str` column must leak every string read into it (nothing can free it while
//! the process lives), so a service that keeps reading new input grows without bound. A
//! `Symbol` is a reference-counted string: it is freed when the last fact holding it is,
//! and parsing interns it into a table, so that every fact reading the same string shares
//! one copy.

use std::borrow::Borrow;
use std::collections::HashSet;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::{Arc, Mutex, MutexGuard};

/// A string column value shared by reference count, for strings read at run time (use
/// `&'static str` for literals of the program).
///
/// It compares, orders and hashes as its text, and renders as a `&str` does, so a relation
/// reads the same in traces and files whether its column is a `Symbol`, a `String` or a
/// `&'static str`. Symbols interned in the same [`Symbols`] table compare by pointer first.
///
/// ```
/// use dred_runtime::symbol::{Symbol, Symbols};
/// let symbols = Symbols::default();
/// let a = symbols.intern("New York");
/// assert!(Symbol::ptr_eq(&a, &symbols.intern("New York")));
/// assert_eq!(a, Symbol::from("New York"));
/// assert!(a == "New York");
/// assert_eq!(format!("{a:?}"), "\"New York\"");
/// ```
#[derive(Clone)]
pub struct Symbol(Arc<str>);

impl Symbol {
    /// Whether `a` and `b` share one allocation (interned in the same table).
    pub fn ptr_eq(a: &Symbol, b: &Symbol) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl PartialEq for Symbol {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

impl Eq for Symbol {}

impl PartialEq<str> for Symbol {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Symbol {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Hash for Symbol {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialOrd for Symbol {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Symbol {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl fmt::Debug for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl Deref for Symbol {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Symbol {
    fn as_ref(&self) -> &str {
        self
    }
}

/// Hashes and compares as its text, as `Borrow` requires.
impl Borrow<str> for Symbol {
    fn borrow(&self) -> &str {
        self
    }
}

impl From<&str> for Symbol {
    fn from(text: &str) -> Self {
        Symbol(Arc::from(text))
    }
}

impl From<String> for Symbol {
    fn from(text: String) -> Self {
        Symbol(Arc::from(text))
    }
}

/// An interning table of [`Symbol`]s: a handle, cheap to clone, whose clones share one
/// table.
///
/// Every program owns one (its `symbols()`): a program materialized from a batch adopts
/// the batch's table, and a batch made with [`crate::Batch::with_symbols`] interns the
/// strings it parses there, so equal strings share one copy across batches. The table
/// holds each string once more than its facts do; it drops the strings no fact holds any
/// more when it has doubled since it last did ([`Symbols::purge_if_grown`], after every
/// update), and all of them with the program.
#[derive(Clone, Default)]
pub struct Symbols(Arc<Mutex<Table>>);

#[derive(Default)]
struct Table {
    symbols: HashSet<Symbol>,
    /// How many symbols the table held after its last purge.
    after_purge: usize,
}

impl Table {
    fn purge(&mut self) {
        self.symbols
            .retain(|symbol| Arc::strong_count(&symbol.0) > 1);
        self.after_purge = self.symbols.len();
    }
}

impl Symbols {
    /// The table's symbol equal to `text`, added if it has none.
    pub fn intern(&self, text: &str) -> Symbol {
        let mut table = self.table();
        if let Some(held) = table.symbols.get(text) {
            return held.clone();
        }
        let symbol = Symbol::from(text);
        table.symbols.insert(symbol.clone());
        symbol
    }

    /// How many distinct strings the table holds.
    pub fn len(&self) -> usize {
        self.table().symbols.len()
    }

    /// Whether the table holds no string.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `self` and `other` are handles of one table.
    pub fn same_table(&self, other: &Symbols) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Drops the strings that only the table holds (no fact, batch or caller does).
    pub fn purge(&self) {
        self.table().purge();
    }

    /// [`Symbols::purge`]s if the table has more than doubled since it last did (and holds
    /// more than a few strings): amortized, a constant cost per string interned.
    pub fn purge_if_grown(&self) {
        let mut table = self.table();
        if table.symbols.len() > 2 * table.after_purge.max(32) {
            table.purge();
        }
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        // A panic while the table was held left it a valid set; interning may go on.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl fmt::Debug for Symbols {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Symbols").field("len", &self.len()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_text_is_equal_whichever_table_made_it() {
        let (one, other) = (Symbols::default(), Symbols::default());
        let (a, b) = (one.intern("x"), other.intern("x"));
        assert!(!Symbol::ptr_eq(&a, &b));
        assert_eq!(a, b);
        let (first, second) = (Symbol::from("a"), Symbol::from("b"));
        assert!(first < second);
        let hash = |v: &dyn Fn(&mut std::collections::hash_map::DefaultHasher)| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            v(&mut h);
            h.finish()
        };
        assert_eq!(hash(&|h| a.hash(h)), hash(&|h| "x".hash(h)));
    }

    #[test]
    fn a_purge_drops_only_the_strings_nothing_else_holds() {
        let symbols = Symbols::default();
        let kept = symbols.intern("kept");
        drop(symbols.intern("dropped"));
        assert_eq!(symbols.len(), 2);
        symbols.purge();
        assert_eq!(symbols.len(), 1);
        assert!(Symbol::ptr_eq(&kept, &symbols.intern("kept")));
    }

    #[test]
    fn the_table_purges_itself_once_doubled() {
        let symbols = Symbols::default();
        let held: Vec<Symbol> = (0..40).map(|i| symbols.intern(&i.to_string())).collect();
        for i in 40..64 {
            drop(symbols.intern(&i.to_string()));
        }
        symbols.purge_if_grown();
        assert_eq!(symbols.len(), 64, "not yet doubled past 32");
        drop(symbols.intern("64"));
        symbols.purge_if_grown();
        assert_eq!(symbols.len(), held.len());
    }
}
