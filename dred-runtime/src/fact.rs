//! What every module stores: facts (the [`Tuple`] bound), their [`Stamp`]s, and the hash
//! that sets and tables of facts use. The base of the crate: it depends on no other module.

use std::collections::HashSet;
use std::hash::{BuildHasher, Hash, Hasher};

/// What a column value or a fact must offer to live in a relation.
///
/// Blanket-implemented: any `Clone + Eq + Hash + Ord + Debug` type qualifies.
pub trait Tuple: Clone + Eq + Hash + Ord + std::fmt::Debug + 'static {}
impl<T: Clone + Eq + Hash + Ord + std::fmt::Debug + 'static> Tuple for T {}

/// A set of facts of one relation (a delta, a round, an update batch).
pub type FactSet<T> = HashSet<T, FactHashState>;

/// When a fact was derived: a value of the program's clock, which advances by
/// [`ROUND_GAP`] per round of every phase that adds facts (and stops at `Stamp::MAX`).
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

/// How far the clock advances per round. A fact that loses its supports but keeps one
/// whose newest body fact is of its own round rises to one past that fact (see
/// [`crate::Strategy::AltProof`]); with a gap between rounds it stays below the next
/// round, so the facts of that round that counted on it still have an older support and
/// are not checked again. With a gap of one it would rise into the next round, and a
/// deletion in a dense recursive component shifted whole rounds up one by one. The gap
/// leaves room for 255 rises stacked on one another in a round; past them, rises reach the
/// next round as they would without a gap. It costs clock range: half of it is used after
/// 2²³ rounds, and an update then numbers again the rounds that still stamp facts.
pub const ROUND_GAP: Stamp = 256;

/// Whether a fact stamped `stamp` claims a support: all do but [`UNSTAMPED`] ones and
/// those derived after the clock stopped at `Stamp::MAX`.
#[inline]
pub fn claims_support(stamp: Stamp) -> bool {
    stamp != UNSTAMPED && stamp != Stamp::MAX
}

/// The stamp of facts loaded without derivation ([`crate::maintain::from_facts_unchecked`]): no
/// claim of support, and older than every derived fact, so every derived fact may count
/// on it (the clock's first round is [`ROUND_GAP`]).
pub const UNSTAMPED: Stamp = 0;

/// How fact sets, fact maps and index keys hash facts ([`FactSet`], `relation::key_hash`).
///
/// By default the hash is **keyed**: ahash, under keys drawn at random once per process, so
/// that facts sent by a user cannot be chosen to collide (a table of colliding keys turns
/// every probe into a walk over all of them). One key for the whole process, not one per
/// table: an index is probed with a hash computed by a join, and a fact map's shard is
/// chosen by the hash its table then reuses, so every table must hash alike. The key is a
/// secret, not a setting: it changes the order in which sets iterate, never a result, a
/// trace or an explanation.
///
/// With the crate feature `fixed-hash`, the hash is [`FixedHasher`] instead: faster, and
/// the same in every run, but only for inputs you trust.
#[derive(Default, Clone, Copy, Debug)]
pub struct FactHashState;

#[cfg(not(feature = "fixed-hash"))]
impl BuildHasher for FactHashState {
    type Hasher = ahash::AHasher;

    #[inline]
    fn build_hasher(&self) -> ahash::AHasher {
        static KEYS: std::sync::OnceLock<ahash::RandomState> = std::sync::OnceLock::new();
        KEYS.get_or_init(ahash::RandomState::new).build_hasher()
    }
}

#[cfg(feature = "fixed-hash")]
impl BuildHasher for FactHashState {
    type Hasher = FixedHasher;

    #[inline]
    fn build_hasher(&self) -> FixedHasher {
        FixedHasher::default()
    }
}

/// A fast hash with a fixed seed, for inputs you trust (the crate feature `fixed-hash`
/// makes it the hash of every table): one rotate-xor-multiply per word (the scheme of
/// rustc's FxHasher), rotated at the end so that the well-mixed high bits reach the bucket
/// index. Keys can be chosen to collide under it, by construction:
///
/// ```
/// use std::hash::BuildHasher;
/// type Fixed = std::hash::BuildHasherDefault<dred_runtime::FixedHasher>;
/// let k = 0x51_7c_c1_b7_27_22_0a_95_u64;
/// let pair = |a: u64| (a, (a.wrapping_mul(k)).rotate_left(5) ^ 7);
/// assert_eq!(Fixed::default().hash_one(pair(1)), Fixed::default().hash_one(pair(2)));
/// ```
#[derive(Default, Clone, Copy, Debug)]
pub struct FixedHasher(u64);

impl FixedHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FixedHasher {
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
