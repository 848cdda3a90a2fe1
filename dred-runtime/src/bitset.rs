//! A large relation's membership as one bit per combination of its columns' values, for
//! relations whose columns are small integers (graph nodes, variables, objects).
//!
//! A membership test in a fact table of millions misses the cache (and, on a virtual
//! machine, the TLB); the semi-naive join asks one per head it derives. Where the columns'
//! values span a small box (a linear closure over 3,000 nodes: 2²⁴ combinations, 2 MiB of
//! bits beside a 110 MiB table), the same answer is one bit in a table that the cache keeps.

use std::hash::{Hash, Hasher};

/// The most columns a placed fact has.
pub(crate) const MAX_COLUMNS: usize = 8;

/// The most bits a place has: past it, the box would not fit any budget (and a place must
/// fit a `usize`).
const MAX_PLACE_BITS: u32 = if usize::BITS > 40 {
    40
} else {
    usize::BITS - 1
};

/// The fewest bytes a bitset may take whatever its table's size, so that small relations
/// (tests') can keep one too.
const MIN_BUDGET_BYTES: usize = 1 << 10;

/// What a fact's `Hash` writes, read as one integer per column: a relation whose columns
/// are all integers, chars or bools writes just that (the macro's derive writes each field
/// in order, and each of those types writes itself as one integer). `visit` sees each
/// column's position and value; anything else written makes the fact unplaceable.
struct ColumnWriter<F: FnMut(usize, u64)> {
    visit: F,
    columns: usize,
    integers: bool,
}

impl<F: FnMut(usize, u64)> ColumnWriter<F> {
    /// Visits `fact`'s columns; returns how many it has, if all are integers.
    #[inline]
    fn read<T: Hash>(fact: &T, visit: F) -> Option<usize> {
        let mut writer = ColumnWriter {
            visit,
            columns: 0,
            integers: true,
        };
        fact.hash(&mut writer);
        (writer.integers && writer.columns <= MAX_COLUMNS).then_some(writer.columns)
    }

    #[inline]
    fn column(&mut self, value: u64) {
        if self.columns < MAX_COLUMNS {
            (self.visit)(self.columns, value);
        }
        self.columns += 1;
    }
}

impl<F: FnMut(usize, u64)> Hasher for ColumnWriter<F> {
    fn finish(&self) -> u64 {
        unreachable!("columns are read, not hashed")
    }
    fn write(&mut self, _: &[u8]) {
        self.integers = false;
    }
    #[inline]
    fn write_u8(&mut self, value: u8) {
        self.column(u64::from(value));
    }
    #[inline]
    fn write_u16(&mut self, value: u16) {
        self.column(u64::from(value));
    }
    #[inline]
    fn write_u32(&mut self, value: u32) {
        self.column(u64::from(value));
    }
    #[inline]
    fn write_u64(&mut self, value: u64) {
        self.column(value);
    }
    #[inline]
    fn write_usize(&mut self, value: usize) {
        self.column(value as u64);
    }
}

/// Why [`Bitset::build`] built none.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum NoBitset {
    /// No fact is held.
    Empty,
    /// A fact writes something other than one integer per column, or not as many.
    Unplaceable,
    /// The box takes `bytes`, more than the budget.
    TooLarge { bytes: usize },
}

/// One bit per point of a box of column values: the box each column's values spanned when
/// the bitset was built (the bits of its largest value; a signed value counts as its
/// two's-complement bits, so a negative one is a large one).
///
/// Invariant: a fact whose values lie in the box ([`Bitset::place`] is `Some`) is held
/// exactly when its bit is set; `outside` counts the held facts that do not.
#[derive(Clone)]
pub(crate) struct Bitset {
    widths: [u32; MAX_COLUMNS],
    columns: usize,
    words: Vec<u64>,
    outside: usize,
}

impl Bitset {
    /// A bitset of the facts held, which `tables` walks (twice) table by table, if there
    /// are any, each writes the same number of integer columns, and the box of their
    /// values takes at most `budget` bytes (or [`MIN_BUDGET_BYTES`]). Loops nest as the
    /// tables do: a flattened iterator was not inlined, and walking it cost more than the
    /// bits.
    pub fn build<'a, T, Tables, Table>(
        tables: impl Fn() -> Tables,
        budget: usize,
    ) -> Result<Bitset, NoBitset>
    where
        T: Hash + 'a,
        Tables: Iterator<Item = Table>,
        Table: Iterator<Item = &'a T>,
    {
        let mut columns = None;
        let mut largest = [0u64; MAX_COLUMNS];
        for fact in tables().flatten() {
            let read = ColumnWriter::read(fact, |at, value| largest[at] = largest[at].max(value));
            match read {
                Some(read) if *columns.get_or_insert(read) == read => {}
                _ => return Err(NoBitset::Unplaceable),
            }
        }
        let columns = columns.ok_or(NoBitset::Empty)?;
        let mut widths = [0u32; MAX_COLUMNS];
        for (width, largest) in widths.iter_mut().zip(&largest[..columns]) {
            *width = u64::BITS - largest.leading_zeros();
        }
        let place_bits: u32 = widths.iter().sum();
        if place_bits > MAX_PLACE_BITS {
            return Err(NoBitset::TooLarge { bytes: usize::MAX });
        }
        let words = (1usize << place_bits).div_ceil(64);
        if words * 8 > budget.max(MIN_BUDGET_BYTES) {
            return Err(NoBitset::TooLarge { bytes: words * 8 });
        }
        let mut bitset = Bitset {
            widths,
            columns,
            words: vec![0; words],
            outside: 0,
        };
        for fact in tables().flatten() {
            let place = bitset
                .place(fact)
                .expect("the box holds every fact it was built of");
            bitset.set(place);
        }
        Ok(bitset)
    }

    /// Where `fact`'s bit is, if its values lie in the box.
    #[inline]
    pub fn place<T: Hash>(&self, fact: &T) -> Option<usize> {
        let (mut place, mut inside) = (0u64, true);
        let columns = ColumnWriter::read(fact, |at, value| {
            let width = self.widths[at];
            inside &= value >> width == 0;
            place = (place << width) | value;
        });
        (inside && columns == Some(self.columns)).then_some(place as usize)
    }

    #[inline]
    pub fn test(&self, place: usize) -> bool {
        self.words[place / 64] & (1 << (place % 64)) != 0
    }

    #[inline]
    pub fn set(&mut self, place: usize) {
        self.words[place / 64] |= 1 << (place % 64);
    }

    /// Whether `fact` lies in the box with its bit clear (so is not held). Out of line: it
    /// is asked only while a map holds ghosts, and inlined it changed how the joins and
    /// index builds that never meet one were compiled.
    #[inline(never)]
    pub fn clears<T: Hash>(&self, fact: &T) -> bool {
        self.place(fact).is_some_and(|place| !self.test(place))
    }

    /// Records that the fact at `place`, held, no longer is.
    #[inline]
    pub fn clear(&mut self, place: usize) {
        self.words[place / 64] &= !(1 << (place % 64));
    }

    /// Records that `fact`, new, is now held.
    #[inline]
    pub fn insert<T: Hash>(&mut self, fact: &T) {
        match self.place(fact) {
            Some(place) => self.set(place),
            None => self.outside += 1,
        }
    }

    /// Records that `fact`, held, no longer is.
    #[inline]
    pub fn remove<T: Hash>(&mut self, fact: &T) {
        match self.place(fact) {
            Some(place) => self.clear(place),
            None => self.outside -= 1,
        }
    }

    /// How many held facts lie outside the box (a wider one would hold them).
    pub fn outside(&self) -> usize {
        self.outside
    }

    /// Visits the columns of each fact whose bit is set, in the order of the columns'
    /// values (the first column's, then the second's, ...), until `visit` says to stop;
    /// returns whether it visited them all. One pass over the words: the box is the
    /// relation's facts in order, at a bit each.
    pub fn visit_in_order(&self, mut visit: impl FnMut(&[u64]) -> bool) -> bool {
        let mut columns = [0u64; MAX_COLUMNS];
        self.places()
            .all(|place| visit(self.columns_at(place, &mut columns)))
    }

    /// The places whose bits are set, in order.
    pub fn places(&self) -> Places<'_> {
        Places {
            words: self.words.iter(),
            word: 0,
            base: 0,
        }
    }

    /// The column values of the point at `place`, written into `columns`.
    #[inline]
    pub fn columns_at<'c>(&self, place: usize, columns: &'c mut [u64; MAX_COLUMNS]) -> &'c [u64] {
        let mut place = place as u64;
        for column in (0..self.columns).rev() {
            let width = self.widths[column];
            columns[column] = place & ((1u64 << width) - 1);
            place >>= width;
        }
        &columns[..self.columns]
    }

    /// How many points the box has: one past the largest place.
    pub fn points(&self) -> usize {
        1 << self.widths[..self.columns].iter().sum::<u32>()
    }

    pub fn bytes(&self) -> usize {
        self.words.capacity() * 8
    }

    /// Forgets every fact: the same box, holding nothing.
    pub fn clear_all(&mut self) {
        self.words.fill(0);
        self.outside = 0;
    }
}

/// The iterator of [`Bitset::places`].
#[derive(Clone)]
pub(crate) struct Places<'a> {
    words: std::slice::Iter<'a, u64>,
    /// The bits of the current word not visited yet.
    word: u64,
    /// The place of the current word's first bit.
    base: usize,
}

impl Iterator for Places<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.word == 0 {
            self.word = *self.words.next()?;
            self.base = self.base.wrapping_add(64);
        }
        let place = self.base.wrapping_sub(64) + self.word.trailing_zeros() as usize;
        self.word &= self.word - 1;
        Some(place)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fact_in_the_box_is_held_exactly_when_its_bit_is_set() {
        let facts = [(0u32, 5u32), (3, 1), (2, 2)];
        let mut bitset = Bitset::build(|| [facts.iter()].into_iter(), 0).expect("a small box");
        // Column 0 spans 2 bits (largest 3), column 1 three (largest 5).
        assert_eq!(bitset.place(&(3u32, 5u32)), Some(0b11_101));
        assert!(facts.iter().all(|f| bitset.test(bitset.place(f).unwrap())));
        assert!(!bitset.test(bitset.place(&(3u32, 5u32)).unwrap()));
        assert_eq!(bitset.place(&(4u32, 0u32)), None);
        bitset.insert(&(4u32, 0u32));
        bitset.insert(&(1u32, 1u32));
        assert_eq!(bitset.outside(), 1);
        assert!(bitset.test(bitset.place(&(1u32, 1u32)).unwrap()));
        bitset.remove(&(1u32, 1u32));
        bitset.remove(&(4u32, 0u32));
        assert!(!bitset.test(bitset.place(&(1u32, 1u32)).unwrap()));
        assert_eq!(bitset.outside(), 0);
    }

    #[test]
    fn the_facts_are_visited_in_the_order_of_their_columns() {
        let facts = [(3u32, 0u32), (0, 5), (2, 2), (0, 1), (3, 7)];
        let bitset = Bitset::build(|| [facts.iter()].into_iter(), 0).expect("a small box");
        let mut visited = Vec::new();
        assert!(bitset.visit_in_order(|columns| {
            visited.push((columns[0] as u32, columns[1] as u32));
            true
        }));
        let mut sorted = facts.to_vec();
        sorted.sort();
        assert_eq!(visited, sorted);
        // Stopped after the second.
        let mut seen = 0;
        assert!(!bitset.visit_in_order(|_| {
            seen += 1;
            seen < 2
        }));
        assert_eq!(seen, 2);
        // A column whose values are all 0 takes no bits, and reads as 0.
        let zeros = [(0u8, 4u8, 0u8), (0, 1, 0)];
        let bitset = Bitset::build(|| [zeros.iter()].into_iter(), 0).expect("a small box");
        let mut visited = Vec::new();
        bitset.visit_in_order(|columns| {
            visited.push(columns.to_vec());
            true
        });
        assert_eq!(visited, [vec![0, 1, 0], vec![0, 4, 0]]);
    }

    #[test]
    fn facts_that_are_not_integers_or_span_too_large_a_box_have_no_bitset() {
        let no_bitset = |result: Result<Bitset, NoBitset>| result.err();
        let unplaceable = Some(NoBitset::Unplaceable);
        let strings = [["a", "b"].iter()];
        assert_eq!(
            no_bitset(Bitset::build(|| strings.clone().into_iter(), 0)),
            unplaceable
        );
        let mixed = [[(1u8, "a")].iter()];
        assert_eq!(
            no_bitset(Bitset::build(|| mixed.clone().into_iter(), 0)),
            unplaceable
        );
        let wide = [[(u64::MAX, 1u8)].iter()];
        assert_eq!(
            no_bitset(Bitset::build(|| wide.clone().into_iter(), usize::MAX)),
            Some(NoBitset::TooLarge { bytes: usize::MAX })
        );
        // Two columns of 8 bits: 2^16 bits, 8 KiB, over the least budget of 1 KiB.
        let bytes = [[(255u8, 255u8)].iter()];
        assert_eq!(
            no_bitset(Bitset::build(|| bytes.clone().into_iter(), 0)),
            Some(NoBitset::TooLarge { bytes: 8192 })
        );
        assert!(Bitset::build(|| bytes.clone().into_iter(), 8192).is_ok());
        let none = std::iter::empty::<std::slice::Iter<(u8, u8)>>;
        assert_eq!(no_bitset(Bitset::build(none, 0)), Some(NoBitset::Empty));
    }
}
