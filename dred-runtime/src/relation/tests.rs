//! Unit tests of relations and their indexes.

use super::*;

/// An index of pairs on their first column.
struct ByFirst;

impl IndexLayout<(u32, u32)> for ByFirst {
    type Key = (u32,);
    type Row = (u32,);
    fn hash(e: &(u32, u32)) -> u64 {
        key_hash(&(&e.0,))
    }
    fn matches(key: &(u32,), e: &(u32, u32)) -> bool {
        key.0 == e.0
    }
    fn key(e: &(u32, u32)) -> (u32,) {
        (e.0,)
    }
    fn row(e: &(u32, u32)) -> (u32,) {
        (e.1,)
    }
}

type Pairs = Relation<(u32, u32), (Index<(u32, u32), ByFirst>,)>;

/// Pairs with one index on the first column.
fn pairs() -> Pairs {
    Relation::with_indexes((Index::new(),))
}

/// The facts of the bucket of `first`, rebuilt.
fn probe(rel: &Pairs, first: u32) -> Vec<(u32, u32)> {
    let rows = rel.probe(|ix| &ix.0, (&first,));
    rows.iter().map(|rest| (first, rest.0)).collect()
}

fn probe_before_latest(rel: &Pairs, first: u32) -> Vec<(u32, u32)> {
    let rows = rel.probe_before_latest(|ix| &ix.0, (&first,));
    rows.iter().map(|rest| (first, rest.0)).collect()
}

/// A layout that is [`ByFirst`] but for the associated items given.
macro_rules! by_first_but {
    ($(#[$doc:meta])* $name:ident { $($items:tt)* }) => {
        $(#[$doc])*
        struct $name;

        impl IndexLayout<(u32, u32)> for $name {
            type Key = (u32,);
            type Row = (u32,);
            fn hash(e: &(u32, u32)) -> u64 {
                ByFirst::hash(e)
            }
            fn matches(key: &(u32,), e: &(u32, u32)) -> bool {
                ByFirst::matches(key, e)
            }
            fn key(e: &(u32, u32)) -> (u32,) {
                ByFirst::key(e)
            }
            fn row(e: &(u32, u32)) -> (u32,) {
                ByFirst::row(e)
            }
            $($items)*
        }
    };
}

by_first_but!(
    /// [`ByFirst`], with the facts rebuilt from their columns: built from the bitset.
    ByFirstInOrder {
        const KEY_LEADS: bool = true;
        fn fact_from_columns(columns: &[u64]) -> Option<(u32, u32)> {
            Some((columns[0] as u32, columns[1] as u32))
        }
    }
);

#[test]
fn an_index_built_from_the_bitset_has_the_buckets_of_one_built_from_the_table() {
    // Every relation counts as large, and keeps its ghosts.
    let storage = Storage {
        large_from_bytes: 0,
        ghost_share: 0,
        dense: true,
    };
    let facts: FactSet<(u32, u32)> = (0..400u32).map(|i| (i * 7 % 23, i * 13 % 41)).collect();
    let gone: FactSet<(u32, u32)> = facts.iter().copied().filter(|f| f.1 % 5 == 0).collect();
    // A fact outside the box (its first column wider than any before, and the wider
    // box over budget) leaves the bitset listing only some facts: the index is then
    // built from the table. Removed facts are ghosts: in the table, their bits clear.
    for outside in [None, Some((1000, 1))] {
        for removed in [false, true] {
            let mut table = pairs().with_storage(storage);
            let mut in_order: Relation<_, (Index<_, ByFirstInOrder>,)> =
                Relation::with_indexes((Index::new(),))
                    .with_storage(storage)
                    .with_bitset();
            table.insert_all(&facts, 1);
            in_order.insert_all(&facts, 1);
            // A relation considers a bitset as a batch begins.
            in_order.insert_all(&FactSet::default(), 2);
            if let Some(fact) = outside {
                table.insert(fact, 2);
                in_order.insert(fact, 2);
            }
            if removed {
                table.remove_all(&gone);
                in_order.remove_all(&gone);
                assert!(in_order.facts.ghost_count() > 0);
            }
            // Builds the indexes.
            table.finish_materialization();
            in_order.finish_materialization();
            assert_eq!(in_order.facts.bitset_of_all().is_some(), outside.is_none());
            for first in 0..1001 {
                let mut expected: Vec<u32> = table
                    .probe(|ix| &ix.0, (&first,))
                    .iter()
                    .map(|row| row.0)
                    .collect();
                let rows: Vec<u32> = in_order
                    .probe(|ix| &ix.0, (&first,))
                    .iter()
                    .map(|row| row.0)
                    .collect();
                if outside.is_none() {
                    // Rows in the order of the columns: built from the bitset.
                    assert!(rows.windows(2).all(|w| w[0] < w[1]), "{first}: {rows:?}");
                }
                let mut sorted = rows.clone();
                sorted.sort_unstable();
                expected.sort_unstable();
                assert_eq!(sorted, expected, "bucket {first}");
            }
        }
    }
}

by_first_but!(
    /// [`ByFirst`], keeping stamps.
    ByFirstStamped {
        const STAMPED: bool = true;
    }
);

type StampedPairs = Relation<(u32, u32), (Index<(u32, u32), ByFirstStamped>,)>;

/// The held facts of the bucket of `first` with the stamps the bucket gives, sorted,
/// and whether each stamp was read from the bucket (not looked up).
fn stamped(rel: &StampedPairs, first: u32) -> Vec<((u32, u32), Stamp, bool)> {
    let rows = rel.probe_stamped(|ix| &ix.0, (&first,));
    assert_eq!(rows.kept_stamps().len(), rows.len());
    let mut facts: Vec<_> = (rows.rows().iter().zip(rows.kept_stamps()))
        .filter_map(|(row, &kept)| {
            let fact = (first, row.0);
            let stamp = rows.stamp(kept, &fact)?;
            assert_eq!(rel.stamp(&fact), Some(stamp), "{fact:?}");
            Some((fact, stamp, kept == stamp))
        })
        .collect();
    facts.sort_unstable();
    facts
}

#[test]
fn stamped_rows_follow_every_stamp_change() {
    let batch = |facts: &[(u32, u32)]| facts.iter().copied().collect::<FactSet<_>>();
    let mut rel = StampedPairs::with_indexes((Index::new(),));
    rel.insert_all(&batch(&[(1, 2), (1, 3), (1, 4), (2, 5)]), 1);
    // Built from the table, at the first probe.
    assert_eq!(
        stamped(&rel, 1),
        [((1, 2), 1, true), ((1, 3), 1, true), ((1, 4), 1, true)]
    );
    rel.insert((1, 5), 2); // into a built index
    rel.restamp(&(1, 3), 4); // one fact
    rel.retire_all(&batch(&[(1, 2), (1, 4)])); // a run of a bucket
    assert_eq!(stamped(&rel, 1), [((1, 3), 4, true), ((1, 5), 2, true)]);
    assert_eq!(rel.retired(), 2);
    rel.insert_all(&batch(&[(1, 2), (1, 4)]), 6); // revived together
    rel.insert((2, 5), 9); // held: keeps its stamp
    assert_eq!(
        stamped(&rel, 1),
        [
            ((1, 2), 6, true),
            ((1, 3), 4, true),
            ((1, 4), 6, true),
            ((1, 5), 2, true)
        ]
    );
    assert_eq!(stamped(&rel, 2), [((2, 5), 1, true)]);
    // Removals keep each stamp beside its row: one (swapped into place) and a run.
    rel.remove_all(&batch(&[(1, 2)]));
    assert_eq!(
        stamped(&rel, 1),
        [((1, 3), 4, true), ((1, 4), 6, true), ((1, 5), 2, true)]
    );
    rel.remove_all(&batch(&[(1, 3), (1, 5)]));
    assert_eq!(stamped(&rel, 1), [((1, 4), 6, true)]);
    // A held fact stamped `RETIRED` (a stopped clock) is looked up, not taken for gone.
    rel.restamp(&(1, 4), Stamp::MAX);
    assert_eq!(stamped(&rel, 1), [((1, 4), Stamp::MAX, true)]);
    // An index built while facts are retired marks their rows.
    let mut late = StampedPairs::with_indexes((Index::new(),));
    late.insert_all(&batch(&[(3, 1), (3, 2)]), 1);
    late.retire_all(&batch(&[(3, 1)]));
    assert_eq!(stamped(&late, 3), [((3, 2), 1, true)]);
}

#[test]
fn a_stamped_bucket_keeps_its_rows_in_stamp_order() {
    let batch = |facts: &[(u32, u32)]| facts.iter().copied().collect::<FactSet<_>>();
    let kept = |rel: &StampedPairs| {
        let rows = rel.probe_stamped(|ix| &ix.0, (&1u32,));
        rows.kept_stamps().to_vec()
    };
    const GONE: Stamp = RETIRED;
    let mut rel = StampedPairs::with_indexes((Index::new(),));
    rel.insert_all(&batch(&[(1, 2), (1, 3)]), 3);
    rel.insert_all(&batch(&[(1, 4)]), 1);
    assert_eq!(kept(&rel), [1, 3, 3]); // built from the table, then ordered
    rel.insert((1, 5), 2); // among its elders
    assert_eq!(kept(&rel), [1, 2, 3, 3]);
    rel.restamp(&(1, 4), 4); // a raise moves the row up
    assert_eq!(kept(&rel), [2, 3, 3, 4]);
    rel.retire_all(&batch(&[(1, 5)])); // retired rows go last, one...
    assert_eq!(kept(&rel), [3, 3, 4, GONE]);
    rel.retire_all(&batch(&[(1, 2), (1, 3)])); // ...or a run
    assert_eq!(kept(&rel), [4, GONE, GONE, GONE]);
    rel.insert_all(&batch(&[(1, 2)]), 5); // revived before the retired rows, one...
    assert_eq!(kept(&rel), [4, 5, GONE, GONE]);
    rel.insert_all(&batch(&[(1, 3), (1, 5)]), 6); // ...or a run
    assert_eq!(kept(&rel), [4, 5, 6, 6]);
    rel.retire_all(&batch(&[(1, 4)]));
    rel.insert_all(&batch(&[(1, 6)]), 7); // a new fact before a retired one
    assert_eq!(kept(&rel), [5, 6, 6, 7, GONE]);
    // The moves leave every row of the earlier batches among those a semi-naive round
    // reads ([`Relation::probe_before_latest`]).
    let before = rel.probe_before_latest(|ix| &ix.0, (&1u32,));
    for earlier in [2, 3, 4, 5] {
        assert!(before.contains(&(earlier,)), "{earlier}");
    }
    rel.remove_all(&batch(&[(1, 2)])); // removals keep the order
    assert_eq!(kept(&rel), [6, 6, 7, GONE]);
    rel.remove_all(&batch(&[(1, 3), (1, 6)]));
    assert_eq!(kept(&rel), [6, GONE]);
}

#[test]
fn indexes_follow_inserts_and_batch_removals() {
    let mut rel = pairs();
    for e in [(1, 2), (1, 3), (2, 3)] {
        assert!(rel.insert(e, 1));
    }
    assert!(!rel.insert((1, 2), 2));
    assert_eq!(rel.stamp(&(1, 2)), Some(1));
    let gone: FactSet<(u32, u32)> = [(1, 2), (9, 9)].into_iter().collect();
    rel.remove_all(&gone);
    assert_eq!(rel.len(), 2);
    let ones: Vec<_> = probe(&rel, 1).to_vec();
    assert_eq!(ones, vec![(1, 3)]);
    assert!(probe(&rel, 7).is_empty());
}

fn is_built(rel: &Pairs) -> bool {
    rel.indexes.0.buckets.get().is_some()
}

#[test]
fn an_index_is_built_on_its_first_probe_of_a_held_fact_and_maintained_after() {
    let mut rel = pairs();
    assert!(probe(&rel, 1).is_empty());
    assert!(!is_built(&rel), "probing an empty relation builds nothing");
    rel.insert((1, 2), 1);
    rel.insert((2, 3), 1);
    assert!(!is_built(&rel), "an index not built yet is not maintained");
    assert_eq!(probe(&rel, 1), [(1, 2)]);
    assert!(is_built(&rel));
    rel.insert((1, 4), 2);
    rel.remove_all(&[(1, 2)].into_iter().collect());
    assert_eq!(probe(&rel, 1), [(1, 4)]);
}

#[test]
fn finishing_a_materialization_builds_every_index() {
    let mut rel = pairs();
    for i in 0..1000 {
        rel.insert((i % 10, i), 1);
    }
    assert!(!is_built(&rel));
    rel.finish_materialization();
    assert!(is_built(&rel));
    let threes = probe(&rel, 3);
    assert_eq!((threes.len(), threes.iter().all(|e| e.0 == 3)), (100, true));
}

#[test]
fn retiring_more_facts_than_a_batch_retires_exactly_the_held_ones() {
    let mut rel = pairs();
    for i in 0..200 {
        rel.insert((i % 7, i), 1);
    }
    rel.finish_materialization();
    // Three and a bit batches of facts, every third of them not held.
    let gone: FactSet<(u32, u32)> = (0..3 * RETIRE_BATCH as u32 + 5)
        .map(|i| if i % 3 == 0 { (99, i) } else { (i % 7, i) })
        .collect();
    let held = gone.iter().filter(|f| rel.contains(f)).count();
    rel.retire_all(&gone);
    assert_eq!((rel.len(), rel.retired()), (200 - held, held));
    assert!(gone.iter().all(|f| !rel.contains(f)));
    assert!((0..200).all(|i| rel.contains(&(i % 7, i)) != gone.contains(&(i % 7, i))));
}

fn batch(facts: &[(u32, u32)]) -> FactSet<(u32, u32)> {
    facts.iter().copied().collect()
}

fn sorted_probe(mut rows: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    rows.sort_unstable();
    rows
}

#[test]
fn a_probe_before_the_latest_batch_keeps_every_older_fact() {
    let mut rel = pairs();
    assert!(probe_before_latest(&rel, 1).is_empty(), "nothing built");
    rel.insert_all(&batch(&[(1, 0), (1, 1), (1, 2)]), 1);
    // Built during a batch: every row counts as older (a superset).
    assert_eq!(probe_before_latest(&rel, 1).len(), 3);
    rel.insert_all(&batch(&[(1, 3), (1, 4), (2, 0)]), 2);
    assert_eq!(
        sorted_probe(probe_before_latest(&rel, 1)),
        [(1, 0), (1, 1), (1, 2)]
    );
    // A swap-removal moves the last (newest) row forward: still a superset.
    rel.remove_all(&batch(&[(1, 0)]));
    let before = sorted_probe(probe_before_latest(&rel, 1));
    assert!(before.contains(&(1, 1)) && before.contains(&(1, 2)));
    // Order-keeping removal of several rows.
    rel.remove_all(&batch(&[(1, 1), (1, 3)]));
    let before = sorted_probe(probe_before_latest(&rel, 1));
    assert!(before.contains(&(1, 2)) && !before.contains(&(1, 1)));
    // An empty batch still begins a batch: everything held is older.
    rel.insert_all(&FactSet::default(), 3);
    assert_eq!(
        sorted_probe(probe_before_latest(&rel, 1)),
        sorted_probe(probe(&rel, 1))
    );
    // A retired fact revived by the latest batch stays where it was.
    rel.retire_all(&batch(&[(1, 2)]));
    rel.insert_all(&batch(&[(1, 2), (1, 5)]), 4);
    let before = sorted_probe(probe_before_latest(&rel, 1));
    assert!(before.contains(&(1, 4)) && !before.contains(&(1, 5)));
    assert!(probe(&rel, 1).contains(&(1, 5)));
}

#[test]
fn without_a_built_index_retired_facts_just_go() {
    let mut rel = pairs();
    for i in 0..16 {
        rel.insert((1, i), 1);
    }
    rel.retire_all(&batch(&[(1, 0), (1, 1)]));
    assert_eq!((rel.len(), rel.retired()), (14, 0));
    // An index built afterwards holds the held facts only, and a re-inserted fact
    // comes back as new.
    assert_eq!(probe(&rel, 1).len(), 14);
    assert!(rel.insert((1, 0), 5));
    assert_eq!(probe(&rel, 1).len(), 15);
    assert_eq!(rel.stamp(&(1, 0)), Some(5));
}

#[test]
fn relations_can_be_shared_between_threads() {
    fn shared<S: Send + Sync>() {}
    shared::<Relation<(u32, u32)>>();
}

#[test]
fn retired_facts_stay_in_indexes_until_settled_and_revive_in_place() {
    let mut rel = pairs();
    for i in 0..16 {
        rel.insert((1, i), 1);
    }
    rel.finish_materialization();
    let gone: FactSet<(u32, u32)> = [(1, 0), (1, 1)].into_iter().collect();
    rel.retire_all(&gone);
    assert_eq!((rel.len(), rel.retired()), (14, 2));
    assert!(!rel.contains(&(1, 0)) && !rel.live(&(1, 0)) && rel.live(&(1, 2)));
    assert_eq!(probe(&rel, 1).len(), 16, "still indexed");
    // Reinserted, a retired fact is revived with its new stamp, not indexed twice.
    assert!(rel.insert((1, 0), 5));
    assert_eq!((rel.stamp(&(1, 0)), rel.retired()), (Some(5), 1));
    assert_eq!(probe(&rel, 1).len(), 16);
    rel.settle();
    assert_eq!(
        rel.retired(),
        1,
        "one retired fact of 15 is under an eighth"
    );
    rel.retire_all(&[(1, 2), (1, 3)].into_iter().collect());
    rel.settle();
    assert_eq!(rel.retired(), 0);
    assert_eq!(probe(&rel, 1).len(), 13);
}

#[test]
fn a_risen_fact_names_the_heads_that_counted_on_it_until_forgotten() {
    let mut rel = pairs();
    rel.insert((1, 2), 3);
    // About to go: every head younger than it may have counted on it.
    assert_eq!(rel.counted_on(&(1, 2)), Some((3, Stamp::MAX)));
    rel.restamp(&(1, 2), 7);
    assert_eq!(rel.stamp(&(1, 2)), Some(7));
    // Risen: heads stamped 4..=7 counted on it and can no more.
    assert_eq!(rel.counted_on(&(1, 2)), Some((3, 7)));
    rel.forget_risen();
    assert_eq!(rel.counted_on(&(1, 2)), Some((7, Stamp::MAX)));
    assert_eq!(rel.counted_on(&(9, 9)), None);
    assert!(claims_support(7) && !claims_support(UNSTAMPED) && !claims_support(Stamp::MAX));
}

#[test]
fn borrowed_and_owned_keys_hash_alike() {
    let owned = String::from("a");
    assert_eq!(key_hash(&(&owned,)), key_hash(&(&"a",)));
}
