//! The map's unit tests: every storage form and every transition between them.

use super::*;

/// Every fact of `map` is found under its own stamp, and iterated once.
fn assert_consistent(map: &FactMap<(u32, u32)>, len: usize) {
    assert_eq!(map.len(), len);
    let keys = map.keys();
    assert_eq!(keys.len(), len);
    assert!(map
        .entries()
        .all(|(fact, stamp)| map.get(&fact) == Some(&stamp)));
    let mut seen: Vec<_> = keys.map(Cow::into_owned).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), len);
}

#[test]
fn a_small_map_stays_whole() {
    let mut map: FactMap<(u32, u32)> = FactMap::default();
    for a in 0..100u32 {
        assert!(map.insert_new((a, a + 1), a, |_| {}));
    }
    assert!(!map.insert_new((3, 4), 9, |_| panic!("held")));
    assert!(map.shards.is_empty());
    assert_eq!(map.get(&(7, 8)), Some(&7));
    *map.get_mut(&(7, 8)).unwrap() = 9;
    assert!(map.remove(&(7, 8)) && !map.remove(&(7, 8)));
    assert!(!map.contains_key(&(7, 8)));
    assert_consistent(&map, 99);
}

#[test]
fn a_bitset_answers_for_the_facts_in_its_box_and_widens_once_the_map_doubles() {
    let mut map: FactMap<(u32, u32)> = FactMap::default();
    map.allow_bitset();
    for a in 0..8u32 {
        map.insert_new((a, a + 1), 0, |_| {});
    }
    map.consider_bitset(0);
    assert!(map.bitset.is_some());
    // Column 0 spans 3 bits (largest 7), column 1 four (largest 8): (9, 2) lies
    // outside, and only the table answers for it.
    map.insert_new((9, 2), 0, |_| {});
    assert_eq!(map.bitset.as_ref().map(Bitset::outside), Some(1));
    assert!(map.contains_key(&(9, 2)) && map.contains_key(&(3, 4)));
    assert!(!map.contains_key(&(4, 3)) && !map.contains_key(&(9, 3)));
    assert!(map.remove(&(3, 4)));
    assert!(!map.contains_key(&(3, 4)));
    // Not yet twice the 8 facts it was built of: the same box.
    map.consider_bitset(0);
    assert_eq!(map.bitset.as_ref().map(Bitset::outside), Some(1));
    for a in 20..30u32 {
        map.insert_new((a, a), 0, |_| {});
    }
    map.consider_bitset(0);
    assert_eq!(map.bitset.as_ref().map(Bitset::outside), Some(0));
    assert!(map.contains_key(&(9, 2)) && map.contains_key(&(25, 25)));
    assert!(!map.contains_key(&(3, 4)) && !map.contains_key(&(25, 24)));
    assert_consistent(&map, 18);
}

/// How many entries the tables hold, ghosts included.
fn entries_stored(map: &FactMap<(u32, u32)>) -> usize {
    map.tables().map(HashTable::len).sum()
}

#[test]
fn a_fact_buried_in_the_box_leaves_a_ghost_that_is_never_seen_and_revives_in_place() {
    let mut map: FactMap<(u32, u32)> = FactMap::default();
    map.allow_bitset();
    for a in 0..64u32 {
        map.insert_new((a, a % 8), a, |_| {});
    }
    map.consider_bitset(0);
    assert!(map.bury(&(5, 5)) && !map.bury(&(5, 5)));
    assert_eq!((map.ghosts, entries_stored(&map)), (1, 64));
    assert!(!map.contains_key(&(5, 5)) && map.get(&(5, 5)).is_none());
    assert!(map.get_mut(&(5, 5)).is_none());
    assert!(map.keys().all(|fact| *fact != (5, 5)));
    assert_consistent(&map, 63);
    // Revived with its new stamp, as a new fact.
    let mut told = None;
    assert!(map.insert_new((5, 5), 99, |fact| told = Some(*fact)));
    assert_eq!(
        (told, map.get(&(5, 5)), map.ghosts),
        (Some((5, 5)), Some(&99), 0)
    );
    assert!(!map.insert_new((5, 5), 7, |_| panic!("held")));
    assert_consistent(&map, 64);
    // Up to an eighth of the facts, ghosts wait; past it, they are purged.
    for a in 0..7u32 {
        assert!(map.bury(&(a, a % 8)));
    }
    map.purge_if_many();
    assert_eq!((map.ghosts, entries_stored(&map)), (7, 64));
    assert!(map.bury(&(7, 7)));
    map.purge_if_many();
    assert_eq!((map.ghosts, entries_stored(&map)), (0, 56));
    assert_consistent(&map, 56);
    assert!((0..8u32).all(|a| !map.contains_key(&(a, a % 8)) && map.get(&(a, a % 8)).is_none()));
}

#[test]
fn ghosts_are_purged_before_a_table_would_grow_or_shrink_or_a_bitset_is_rebuilt() {
    let mut map: FactMap<(u32, u32)> = FactMap::default();
    map.allow_bitset();
    for a in 0..100u32 {
        map.insert_new((a, 1), 0, |_| {});
    }
    map.consider_bitset(0);
    let (capacity, bytes) = (map.capacity(), map.tables_only_bytes());
    // Ghosts fill the table's room: inserting more purges rather than grows.
    for a in 0..10u32 {
        map.bury(&(a, 1));
    }
    let room = capacity - entries_stored(&map);
    map.reserve(room + 1);
    assert_eq!((map.ghosts, map.tables_only_bytes()), (0, bytes));
    for a in 0..10u32 {
        map.bury(&(a, 1));
    }
    map.shrink_to_fit();
    assert_eq!((map.ghosts, entries_stored(&map)), (0, 90));
    // A fact outside the box makes a doubled map build a wider box, of held facts only.
    map.bury(&(50, 1));
    map.insert_new((1000, 1), 0, |_| {});
    for a in 200..320u32 {
        map.insert_new((a, 1), 0, |_| {});
    }
    map.consider_bitset(0);
    assert_eq!(map.bitset.as_ref().map(Bitset::outside), Some(0));
    assert_eq!(map.ghosts, 0);
    assert!(!map.contains_key(&(50, 1)) && map.contains_key(&(1000, 1)));
    assert_consistent(&map, 210);
}

#[test]
fn a_map_of_facts_that_are_not_integers_keeps_no_bitset() {
    let mut map: FactMap<(u32, &str)> = FactMap::default();
    map.allow_bitset();
    map.insert_new((1, "a"), 0, |_| {});
    map.consider_bitset(0);
    assert!(map.bitset.is_none() && map.contains_key(&(1, "a")));
}

#[test]
fn a_map_growing_past_the_largest_whole_table_splits_and_keeps_its_facts() {
    let facts = LARGEST_WHOLE as u32;
    // One by one: the insertion that would grow the whole table splits it.
    let mut one_by_one: FactMap<(u32, u32)> = FactMap::default();
    for a in 0..facts {
        one_by_one.insert_new((a, a % 7), a, |_| {});
    }
    // Reserved ahead, as a round's insertion does.
    let mut reserved: FactMap<(u32, u32)> = FactMap::default();
    reserved.reserve(facts as usize);
    for a in 0..facts {
        reserved.insert_new((a, a % 7), a, |_| {});
    }
    for map in [&mut one_by_one, &mut reserved] {
        assert!(map.whole.is_empty());
        assert_eq!(map.shards.len(), SHARDS);
        assert!(map.shards.iter().all(|shard| !shard.is_empty()));
        assert_consistent(map, facts as usize);
        assert!(map.remove(&(12, 12 % 7)));
        assert!(!map.insert_new((13, 13 % 7), 0, |_| panic!("held")));
        assert_consistent(map, facts as usize - 1);
    }
}

#[test]
fn a_split_gives_the_shards_the_whole_tables_room_not_twice_it() {
    let mut map: FactMap<(u32, u32)> = FactMap::default();
    let mut facts = 0;
    while map.shards.is_empty() {
        map.insert_new((facts, facts % 7), facts, |_| {});
        facts += 1;
    }
    // The whole table was full at 2^18 buckets: growing it would have doubled its room.
    let whole_room = LARGEST_WHOLE / 8 * 7;
    assert_eq!(facts as usize, whole_room + 1);
    let shard_room: usize = map.shards.iter().map(|shard| shard.capacity()).sum();
    assert!(
        shard_room < 2 * whole_room,
        "{shard_room} of room for {facts} facts"
    );
    assert_consistent(&map, facts as usize);
}

fn pair_of_columns(columns: &[u64]) -> Option<(u32, u32)> {
    Some((columns[0] as u32, columns[1] as u32))
}

fn dense_ready() -> FactMap<(u32, u32)> {
    let mut map = FactMap::default();
    map.allow_bitset();
    map.allow_dense(pair_of_columns);
    map
}

#[test]
fn a_dense_map_keeps_its_box_as_bits_and_stamps_and_what_lies_outside_in_its_table() {
    let mut map = dense_ready();
    let held = |a: u32, b: u32| (a + b) % 3 != 0;
    let mut len = 0;
    for a in 0..8u32 {
        for b in (0..8u32).filter(|&b| held(a, b)) {
            map.insert_new((a, b), a * 8 + b, |_| {});
            len += 1;
        }
    }
    map.consider_bitset(0);
    assert!(map.is_dense());
    assert_eq!(entries_stored(&map), 0);
    assert_consistent(&map, len);
    assert_eq!(map.get(&(1, 1)), Some(&9));
    assert!(map.get(&(0, 0)).is_none() && !map.contains_key(&(1, 2)));
    *map.get_mut(&(1, 1)).unwrap() = 70;
    assert_eq!(map.get_maybe_absent(&(1, 1)), Some(&70));
    assert!(!map.insert_new((1, 1), 0, |_| panic!("held")));
    assert!(map.insert_new((0, 0), 5, |_| {}));
    assert_eq!(map.get(&(0, 0)), Some(&5));
    // Buried or removed, a fact of the box just loses its bit.
    assert!(map.bury(&(0, 0)) && !map.contains_key(&(0, 0)) && !map.remove(&(0, 0)));
    assert!(map.remove(&(1, 1)) && map.get_mut(&(1, 1)).is_none());
    assert_eq!(map.ghosts, 0);
    // Outside the box: in the table, and the box never widens.
    assert!(map.insert_new((9, 1), 3, |_| {}));
    assert_eq!((entries_stored(&map), map.get(&(9, 1))), (1, Some(&3)));
    for a in 20..40u32 {
        map.insert_new((a, a), 0, |_| {});
    }
    map.consider_bitset(0);
    assert!(map.is_dense());
    assert_eq!(map.bitset.as_ref().map(Bitset::outside), Some(21));
    assert_consistent(&map, len - 1 + 21);
}

#[test]
fn a_dense_maps_box_and_stamps_go_to_the_next_map_which_sees_none_of_its_facts() {
    let mut map = dense_ready();
    for a in 0..16u32 {
        map.insert_new((a, 15 - a), a, |_| {});
    }
    map.consider_bitset(0);
    let dense = map.take_dense();
    assert!(dense.is_some() && map.is_empty() && !map.is_dense());
    assert!(map.take_dense().is_none());
    let mut next = dense_ready();
    next.reserve_like(16, dense);
    assert!(next.is_dense() && next.is_empty());
    assert!(next.get(&(3, 12)).is_none() && next.entries().next().is_none());
    assert!(next.insert_new((3, 12), 40, |_| {}));
    assert_eq!(next.get(&(3, 12)), Some(&40));
    assert_consistent(&next, 1);
    // Without a dense map's room, as many facts' room in the tables.
    let mut tables = dense_ready();
    tables.reserve_like(100, None);
    assert!(!tables.is_dense() && tables.capacity() >= 100);
}

#[test]
fn a_map_whose_box_is_dense_enough_turns_dense_in_place_of_splitting() {
    let mut map = dense_ready();
    // The box's far corner first, then an eighth of the facts: the bitset holds them
    // all, but its 2^19 points, 2 MiB of stamps, are more than the whole table.
    map.insert_new((1023, 511), 1023, |_| {});
    let facts = |rows: std::ops::Range<u32>| {
        (0..1024u32).flat_map(move |a| rows.clone().map(move |b| (a, b)))
    };
    for (a, b) in facts(0..64) {
        map.insert_new((a, b), a, |_| {});
    }
    map.consider_bitset(0);
    assert_eq!(map.bitset.as_ref().map(Bitset::outside), Some(0));
    assert!(!map.is_dense());
    // Till the insertion that would split the whole table.
    for (a, b) in facts(64..512) {
        map.insert_new((a, b), a, |_| {});
    }
    assert!(map.is_dense() && map.shards.is_empty());
    assert_eq!(map.get(&(700, 3)), Some(&700));
    assert_consistent(&map, 1024 * 512);
}

#[test]
fn a_sample_of_a_dense_map_is_spread_over_its_box_and_a_tables_is_its_smallest_fixed_hashes() {
    let mut map = dense_ready();
    for a in 0..64u32 {
        for b in 0..64u32 {
            map.insert_new((a, b), 0, |_| {});
        }
    }
    map.consider_bitset(0);
    assert!(map.is_dense());
    let sample = map.sample(32);
    let mut firsts: Vec<u32> = sample.iter().map(|fact| fact.0).collect();
    firsts.sort_unstable();
    firsts.dedup();
    // Sorted, the first 32 facts would all begin with 0.
    assert!(firsts.len() >= 24, "{firsts:?}");
    let mut distinct: Vec<(u32, u32)> = sample.iter().map(|fact| **fact).collect();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 32);
    // Facts outside the box fill what the box does not give.
    map.insert_new((100, 100), 0, |_| {});
    assert_eq!(map.sample(5000).len(), 4097);
    let mut tables = FactMap::default();
    for a in 0..100u32 {
        tables.insert_new((a, a), 0, |_| {});
    }
    let mut by_fixed_hash: Vec<(u64, (u32, u32))> =
        (0..100u32).map(|a| (fixed_hash(&(a, a)), (a, a))).collect();
    by_fixed_hash.sort_unstable();
    let expected: Vec<(u32, u32)> = by_fixed_hash[..10].iter().map(|&(_, f)| f).collect();
    let sampled: Vec<(u32, u32)> = tables.sample(10).iter().map(|fact| **fact).collect();
    assert_eq!(sampled, expected, "whatever order the tables keep");
    let firsts: Vec<u32> = sampled.iter().map(|fact| fact.0).collect();
    assert!(firsts.iter().any(|&a| a >= 50), "spread: {firsts:?}");
}
