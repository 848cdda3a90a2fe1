//! What every module stores: facts (the [`Tuple`] bound), their [`Stamp`]s, and the hash
//! that sets and tables of facts use. The base of the crate: it depends on no other module.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// What a column value or a fact must offer to live in a relation.
///
/// Blanket-implemented: any `Clone + Eq + Hash + Ord + Debug` type qualifies.
pub trait Tuple: Clone + Eq + Hash + Ord + std::fmt::Debug + 'static {}
impl<T: Clone + Eq + Hash + Ord + std::fmt::Debug + 'static> Tuple for T {}

/// A set of facts of one relation (a delta, a round, an update batch).
pub type FactSet<T> = HashSet<T, BuildHasherDefault<FactHasher>>;

/// When a fact was derived: a value of the program's clock, which advances by one per
/// round of every phase that adds facts (and stops at `Stamp::MAX`).
///
/// Invariant: every derived fact that [claims support](claims_support) has a rule instance
/// whose derived body facts hold with smaller stamps (its *support*): a round only derives
/// from facts of earlier rounds, and the alternative-proof strategy raises a fact's stamp
/// only to a level where it has a support. That strategy relies on it twice: a fact with a
/// support is well founded (induction on stamps), and a fact needs checking only when it
/// loses, or sees raised, a body fact of an instance whose derived facts were all older
/// than itself. Facts that claim nothing are checked whenever any of their body facts
/// changes.
pub type Stamp = u32;

/// Whether a fact stamped `stamp` claims a support: all do but [`UNSTAMPED`] ones and
/// those derived after the clock stopped at `Stamp::MAX`.
#[inline]
pub fn claims_support(stamp: Stamp) -> bool {
    stamp != UNSTAMPED && stamp != Stamp::MAX
}

/// The stamp of facts loaded without derivation ([`crate::maintain::from_facts_unchecked`]): no
/// claim of support, and older than every derived fact, so every derived fact may count
/// on it (the clock's first round is 1).
pub const UNSTAMPED: Stamp = 0;

/// The hasher of fact sets, fact maps and index keys (`relation::key_hash`): facts are
/// short tuples of small values, hashed in the inner loop of every join, so the hash is one
/// rotate-xor-multiply per word (the scheme of rustc's FxHasher), rotated at the end so
/// that the well-mixed high bits reach the bucket index. It has a fixed seed, so it does
/// not resist keys chosen to collide; it was measured faster than ahash on every workload
/// of the benchmark suite.
#[derive(Default, Clone, Copy)]
pub struct FactHasher(u64);

impl FactHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FactHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        for &byte in chunks.remainder() {
            self.add(u64::from(byte));
        }
    }
    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }
    #[inline]
    fn write_u16(&mut self, n: u16) {
        self.add(u64::from(n));
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
}
