//! Random histories: initial input facts and a sequence of update batches, drawn for a
//! program's input relations from one seed.

use std::collections::BTreeSet;

use dred::runtime::text::render_value;
use dred::runtime::{GroundFact, RelationInfo};

/// A small deterministic generator (splitmix64): a soak replays a history from its seed.
pub struct Rng(u64);

impl Rng {
    /// The generator of `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A number in `low..=high`.
    pub fn between(&mut self, low: usize, high: usize) -> usize {
        low + self.below(high - low + 1)
    }
}

/// An input fact: which input relation (its position among the program's input
/// relations) and a raw value per column.
pub type RawFact = (usize, Vec<u32>);

/// An update batch: deletions (applied first) and insertions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawBatch {
    /// Facts to delete.
    pub deletions: Vec<RawFact>,
    /// Facts to insert.
    pub insertions: Vec<RawFact>,
}

/// Initial facts and batches, over raw values below `domain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    /// The values each column draws from.
    pub domain: u32,
    /// Which of the strategies' settings variants the history runs with.
    pub variant: usize,
    /// How many threads its program splits rounds over: 1, 2 or 3 (with more than one,
    /// every round is split, however small).
    pub threads: usize,
    /// In one history of four, how many rounds before the middle of its range the clock is
    /// put after the materialization, so that an update soon renumbers the rounds.
    pub late_clock: Option<u32>,
    /// The facts the program is materialized from.
    pub initial: Vec<RawFact>,
    /// The update batches, in order.
    pub batches: Vec<RawBatch>,
}

/// Strings a text column draws from: one that renders quoted, one a rule names.
const NAMES: &[&str] = &["a", "b", "c", "d", "root", "x y", "fresh", "new", "e", "f"];

/// The input relations of a program, in declaration order.
pub fn inputs(relations: &'static [RelationInfo]) -> Vec<&'static RelationInfo> {
    relations.iter().filter(|r| r.input).collect()
}

/// A raw value's text field for a column of type `ty`.
pub fn field(ty: &str, raw: u32) -> String {
    let is_text = ty.contains("str") || ty.contains("String") || ty.contains("Symbol");
    if is_text {
        let name = NAMES[raw as usize % NAMES.len()];
        match raw as usize / NAMES.len() {
            0 => name.to_string(),
            round => format!("{name}{round}"),
        }
    } else {
        raw.to_string()
    }
}

/// The ground fact of a raw fact, values in canonical text form.
pub fn ground(relations: &'static [RelationInfo], raw: &RawFact) -> GroundFact {
    let info = inputs(relations)[raw.0];
    let values = info
        .columns
        .iter()
        .zip(&raw.1)
        .map(|(ty, &value)| {
            let text = field(ty, value);
            if text.parse::<u64>().is_ok() {
                text
            } else {
                render_value(text.as_str())
            }
        })
        .collect();
    GroundFact {
        relation: info.name.to_string(),
        values,
    }
}

/// A batch size: mostly one to a few facts, sometimes dozens, now and then thousands.
fn size(rng: &mut Rng) -> usize {
    match rng.below(20) {
        0..=7 => 1,
        8..=13 => rng.between(2, 5),
        14..=18 => rng.between(6, 50),
        _ => rng.between(51, 4000),
    }
}

impl History {
    /// The history of `seed` for a program with `relations`.
    pub fn generate(relations: &'static [RelationInfo], seed: u64) -> History {
        let mut rng = Rng::new(seed);
        let inputs = inputs(relations);
        // Most histories are small; one in twenty spans enough values for batches of
        // thousands of facts.
        let domain = match rng.below(20) {
            0 => rng.between(24, 48),
            1..=5 => rng.between(8, 16),
            _ => rng.between(2, 7),
        } as u32;
        let random_fact = |rng: &mut Rng| -> RawFact {
            let relation = rng.below(inputs.len());
            let values = (0..inputs[relation].columns.len())
                .map(|_| rng.below(domain as usize) as u32)
                .collect();
            (relation, values)
        };
        let initial_size = rng.below(3 * domain as usize + 6);
        let initial: Vec<RawFact> = (0..initial_size).map(|_| random_fact(&mut rng)).collect();
        let mut held: BTreeSet<RawFact> = initial.iter().cloned().collect();
        let mut batches = Vec::new();
        let mut last_deleted: Vec<RawFact> = Vec::new();
        for _ in 0..rng.between(1, 12) {
            let mut batch = RawBatch::default();
            let pick_held = |rng: &mut Rng, n: usize| -> Vec<RawFact> {
                let held: Vec<&RawFact> = held.iter().collect();
                match held.len() {
                    0 => Vec::new(),
                    len => (0..n).map(|_| held[rng.below(len)].clone()).collect(),
                }
            };
            match rng.below(6) {
                // Deletions of held facts.
                0 | 1 => {
                    let n = size(&mut rng);
                    batch.deletions = pick_held(&mut rng, n);
                }
                // Insertions, new or held.
                2 => {
                    let n = size(&mut rng);
                    batch.insertions = (0..n).map(|_| random_fact(&mut rng)).collect();
                }
                // Both.
                3 => {
                    let n = size(&mut rng);
                    batch.deletions = pick_held(&mut rng, n);
                    let n = size(&mut rng);
                    batch.insertions = (0..n).map(|_| random_fact(&mut rng)).collect();
                }
                // What the last batch deleted, back.
                4 => batch.insertions = last_deleted.clone(),
                // No change: deleting and re-inserting held facts, inserting held ones,
                // deleting facts (likely) absent, or nothing.
                _ => {
                    let n = rng.between(0, 3);
                    let same = pick_held(&mut rng, n);
                    match rng.below(3) {
                        0 => batch.deletions = same.clone(),
                        1 => {}
                        _ => batch.deletions = vec![random_fact(&mut rng)],
                    }
                    batch.insertions = same;
                }
            }
            for fact in &batch.deletions {
                held.remove(fact);
            }
            held.extend(batch.insertions.iter().cloned());
            last_deleted = batch.deletions.clone();
            batches.push(batch);
        }
        let (variant, threads) = (rng.below(16), 1 + rng.below(3));
        let late_clock = (rng.below(4) == 0).then(|| rng.below(4) as u32);
        History {
            domain,
            variant,
            threads,
            late_clock,
            initial,
            batches,
        }
    }

    /// How many facts its batches list.
    pub fn batch_facts(&self) -> usize {
        (self.batches.iter())
            .map(|b| b.deletions.len() + b.insertions.len())
            .sum()
    }
}
