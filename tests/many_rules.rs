//! A program of 101 rules over 101 relations: each rule compiles to its own functions, so
//! the macro's output stays proportionate; the result is checked against the oracle.
//! (The rules were written out by a short script: L(i+1) extends L(i) by one edge, every
//! tenth rule joins three atoms, and L100 feeds back into L1.)

use std::collections::BTreeSet;

use dred::runtime::oracle::least_model;
use dred::runtime::{FactSets, Program};
use dred::Batch;

mod chain {
    dred::datalog! {
        pub struct Chain;
        @input pub struct Base(pub u32, pub u32);
        pub struct L1(pub u32, pub u32);
        pub struct L2(pub u32, pub u32);
        pub struct L3(pub u32, pub u32);
        pub struct L4(pub u32, pub u32);
        pub struct L5(pub u32, pub u32);
        pub struct L6(pub u32, pub u32);
        pub struct L7(pub u32, pub u32);
        pub struct L8(pub u32, pub u32);
        pub struct L9(pub u32, pub u32);
        pub struct L10(pub u32, pub u32);
        pub struct L11(pub u32, pub u32);
        pub struct L12(pub u32, pub u32);
        pub struct L13(pub u32, pub u32);
        pub struct L14(pub u32, pub u32);
        pub struct L15(pub u32, pub u32);
        pub struct L16(pub u32, pub u32);
        pub struct L17(pub u32, pub u32);
        pub struct L18(pub u32, pub u32);
        pub struct L19(pub u32, pub u32);
        pub struct L20(pub u32, pub u32);
        pub struct L21(pub u32, pub u32);
        pub struct L22(pub u32, pub u32);
        pub struct L23(pub u32, pub u32);
        pub struct L24(pub u32, pub u32);
        pub struct L25(pub u32, pub u32);
        pub struct L26(pub u32, pub u32);
        pub struct L27(pub u32, pub u32);
        pub struct L28(pub u32, pub u32);
        pub struct L29(pub u32, pub u32);
        pub struct L30(pub u32, pub u32);
        pub struct L31(pub u32, pub u32);
        pub struct L32(pub u32, pub u32);
        pub struct L33(pub u32, pub u32);
        pub struct L34(pub u32, pub u32);
        pub struct L35(pub u32, pub u32);
        pub struct L36(pub u32, pub u32);
        pub struct L37(pub u32, pub u32);
        pub struct L38(pub u32, pub u32);
        pub struct L39(pub u32, pub u32);
        pub struct L40(pub u32, pub u32);
        pub struct L41(pub u32, pub u32);
        pub struct L42(pub u32, pub u32);
        pub struct L43(pub u32, pub u32);
        pub struct L44(pub u32, pub u32);
        pub struct L45(pub u32, pub u32);
        pub struct L46(pub u32, pub u32);
        pub struct L47(pub u32, pub u32);
        pub struct L48(pub u32, pub u32);
        pub struct L49(pub u32, pub u32);
        pub struct L50(pub u32, pub u32);
        pub struct L51(pub u32, pub u32);
        pub struct L52(pub u32, pub u32);
        pub struct L53(pub u32, pub u32);
        pub struct L54(pub u32, pub u32);
        pub struct L55(pub u32, pub u32);
        pub struct L56(pub u32, pub u32);
        pub struct L57(pub u32, pub u32);
        pub struct L58(pub u32, pub u32);
        pub struct L59(pub u32, pub u32);
        pub struct L60(pub u32, pub u32);
        pub struct L61(pub u32, pub u32);
        pub struct L62(pub u32, pub u32);
        pub struct L63(pub u32, pub u32);
        pub struct L64(pub u32, pub u32);
        pub struct L65(pub u32, pub u32);
        pub struct L66(pub u32, pub u32);
        pub struct L67(pub u32, pub u32);
        pub struct L68(pub u32, pub u32);
        pub struct L69(pub u32, pub u32);
        pub struct L70(pub u32, pub u32);
        pub struct L71(pub u32, pub u32);
        pub struct L72(pub u32, pub u32);
        pub struct L73(pub u32, pub u32);
        pub struct L74(pub u32, pub u32);
        pub struct L75(pub u32, pub u32);
        pub struct L76(pub u32, pub u32);
        pub struct L77(pub u32, pub u32);
        pub struct L78(pub u32, pub u32);
        pub struct L79(pub u32, pub u32);
        pub struct L80(pub u32, pub u32);
        pub struct L81(pub u32, pub u32);
        pub struct L82(pub u32, pub u32);
        pub struct L83(pub u32, pub u32);
        pub struct L84(pub u32, pub u32);
        pub struct L85(pub u32, pub u32);
        pub struct L86(pub u32, pub u32);
        pub struct L87(pub u32, pub u32);
        pub struct L88(pub u32, pub u32);
        pub struct L89(pub u32, pub u32);
        pub struct L90(pub u32, pub u32);
        pub struct L91(pub u32, pub u32);
        pub struct L92(pub u32, pub u32);
        pub struct L93(pub u32, pub u32);
        pub struct L94(pub u32, pub u32);
        pub struct L95(pub u32, pub u32);
        pub struct L96(pub u32, pub u32);
        pub struct L97(pub u32, pub u32);
        pub struct L98(pub u32, pub u32);
        pub struct L99(pub u32, pub u32);
        pub struct L100(pub u32, pub u32);
        L1(x, y) <- Base(x, y);
        L2(x, z) <- L1(x, y), Base(y, z);
        L3(x, z) <- L2(x, y), Base(y, z);
        L4(x, z) <- L3(x, y), Base(y, z);
        L5(x, z) <- L4(x, y), Base(y, z);
        L6(x, z) <- L5(x, y), Base(y, z);
        L7(x, z) <- L6(x, y), Base(y, z);
        L8(x, z) <- L7(x, y), Base(y, z);
        L9(x, z) <- L8(x, y), Base(y, z);
        L10(x, z) <- L9(x, y), Base(y, z);
        L11(x, z) <- L10(x, y), L1(y, z), Base(z, _);
        L12(x, z) <- L11(x, y), Base(y, z);
        L13(x, z) <- L12(x, y), Base(y, z);
        L14(x, z) <- L13(x, y), Base(y, z);
        L15(x, z) <- L14(x, y), Base(y, z);
        L16(x, z) <- L15(x, y), Base(y, z);
        L17(x, z) <- L16(x, y), Base(y, z);
        L18(x, z) <- L17(x, y), Base(y, z);
        L19(x, z) <- L18(x, y), Base(y, z);
        L20(x, z) <- L19(x, y), Base(y, z);
        L21(x, z) <- L20(x, y), L2(y, z), Base(z, _);
        L22(x, z) <- L21(x, y), Base(y, z);
        L23(x, z) <- L22(x, y), Base(y, z);
        L24(x, z) <- L23(x, y), Base(y, z);
        L25(x, z) <- L24(x, y), Base(y, z);
        L26(x, z) <- L25(x, y), Base(y, z);
        L27(x, z) <- L26(x, y), Base(y, z);
        L28(x, z) <- L27(x, y), Base(y, z);
        L29(x, z) <- L28(x, y), Base(y, z);
        L30(x, z) <- L29(x, y), Base(y, z);
        L31(x, z) <- L30(x, y), L3(y, z), Base(z, _);
        L32(x, z) <- L31(x, y), Base(y, z);
        L33(x, z) <- L32(x, y), Base(y, z);
        L34(x, z) <- L33(x, y), Base(y, z);
        L35(x, z) <- L34(x, y), Base(y, z);
        L36(x, z) <- L35(x, y), Base(y, z);
        L37(x, z) <- L36(x, y), Base(y, z);
        L38(x, z) <- L37(x, y), Base(y, z);
        L39(x, z) <- L38(x, y), Base(y, z);
        L40(x, z) <- L39(x, y), Base(y, z);
        L41(x, z) <- L40(x, y), L4(y, z), Base(z, _);
        L42(x, z) <- L41(x, y), Base(y, z);
        L43(x, z) <- L42(x, y), Base(y, z);
        L44(x, z) <- L43(x, y), Base(y, z);
        L45(x, z) <- L44(x, y), Base(y, z);
        L46(x, z) <- L45(x, y), Base(y, z);
        L47(x, z) <- L46(x, y), Base(y, z);
        L48(x, z) <- L47(x, y), Base(y, z);
        L49(x, z) <- L48(x, y), Base(y, z);
        L50(x, z) <- L49(x, y), Base(y, z);
        L51(x, z) <- L50(x, y), L5(y, z), Base(z, _);
        L52(x, z) <- L51(x, y), Base(y, z);
        L53(x, z) <- L52(x, y), Base(y, z);
        L54(x, z) <- L53(x, y), Base(y, z);
        L55(x, z) <- L54(x, y), Base(y, z);
        L56(x, z) <- L55(x, y), Base(y, z);
        L57(x, z) <- L56(x, y), Base(y, z);
        L58(x, z) <- L57(x, y), Base(y, z);
        L59(x, z) <- L58(x, y), Base(y, z);
        L60(x, z) <- L59(x, y), Base(y, z);
        L61(x, z) <- L60(x, y), L6(y, z), Base(z, _);
        L62(x, z) <- L61(x, y), Base(y, z);
        L63(x, z) <- L62(x, y), Base(y, z);
        L64(x, z) <- L63(x, y), Base(y, z);
        L65(x, z) <- L64(x, y), Base(y, z);
        L66(x, z) <- L65(x, y), Base(y, z);
        L67(x, z) <- L66(x, y), Base(y, z);
        L68(x, z) <- L67(x, y), Base(y, z);
        L69(x, z) <- L68(x, y), Base(y, z);
        L70(x, z) <- L69(x, y), Base(y, z);
        L71(x, z) <- L70(x, y), L7(y, z), Base(z, _);
        L72(x, z) <- L71(x, y), Base(y, z);
        L73(x, z) <- L72(x, y), Base(y, z);
        L74(x, z) <- L73(x, y), Base(y, z);
        L75(x, z) <- L74(x, y), Base(y, z);
        L76(x, z) <- L75(x, y), Base(y, z);
        L77(x, z) <- L76(x, y), Base(y, z);
        L78(x, z) <- L77(x, y), Base(y, z);
        L79(x, z) <- L78(x, y), Base(y, z);
        L80(x, z) <- L79(x, y), Base(y, z);
        L81(x, z) <- L80(x, y), L8(y, z), Base(z, _);
        L82(x, z) <- L81(x, y), Base(y, z);
        L83(x, z) <- L82(x, y), Base(y, z);
        L84(x, z) <- L83(x, y), Base(y, z);
        L85(x, z) <- L84(x, y), Base(y, z);
        L86(x, z) <- L85(x, y), Base(y, z);
        L87(x, z) <- L86(x, y), Base(y, z);
        L88(x, z) <- L87(x, y), Base(y, z);
        L89(x, z) <- L88(x, y), Base(y, z);
        L90(x, z) <- L89(x, y), Base(y, z);
        L91(x, z) <- L90(x, y), L9(y, z), Base(z, _);
        L92(x, z) <- L91(x, y), Base(y, z);
        L93(x, z) <- L92(x, y), Base(y, z);
        L94(x, z) <- L93(x, y), Base(y, z);
        L95(x, z) <- L94(x, y), Base(y, z);
        L96(x, z) <- L95(x, y), Base(y, z);
        L97(x, z) <- L96(x, y), Base(y, z);
        L98(x, z) <- L97(x, y), Base(y, z);
        L99(x, z) <- L98(x, y), Base(y, z);
        L100(x, z) <- L99(x, y), Base(y, z);
        L1(x, z) <- L100(x, y), Base(y, z);
    }
}

#[test]
fn a_hundred_rules_agree_with_the_oracle_through_updates() {
    use chain::*;
    let edges = [(0u32, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 2)];
    let (mut program, _) =
        Chain::materialize(Batch::new().insert_all(edges.map(|(a, b)| Base(a, b))));
    for batch in [
        Batch::new().delete(Base(2, 0)),
        Batch::new().insert(Base(4, 5)).delete(Base(3, 4)),
        Batch::new().insert(Base(2, 0)),
    ] {
        program.update(batch);
        let held: BTreeSet<_> = program.facts().ground().into_iter().collect();
        let inputs = held
            .iter()
            .filter(|f| f.relation == "Base")
            .cloned()
            .collect();
        assert_eq!(least_model(Chain::RULES, &inputs).unwrap(), held);
    }
    assert_eq!(Chain::RULES.len(), 101);
}

/// The type a program stores relation `T` as, with its indexes.
type StoredRelation<T> = dred::runtime::Relation<
    <T as dred::runtime::Stored>::Row,
    <chain::Chain as dred::runtime::HasRelation<T>>::Indexes,
>;

fn same_type<A: 'static, B: 'static>() -> bool {
    std::any::TypeId::of::<A>() == std::any::TypeId::of::<B>()
}

#[test]
fn relations_of_the_same_columns_and_indexes_share_one_stored_type() {
    use chain::*;
    // The chain's links are probed alike, so the runtime's code for them is compiled once.
    assert!(same_type::<StoredRelation<L12>, StoredRelation<L13>>());
    assert!(same_type::<StoredRelation<L52>, StoredRelation<L98>>());
    assert!(same_type::<<L2 as dred::runtime::Stored>::Row, (u32, u32)>());
    // `L1` to `L9` are probed in the middle of every tenth rule besides (`L9` by `L91`'s),
    // so they have an index the others lack.
    assert!(same_type::<StoredRelation<L8>, StoredRelation<L9>>());
    assert!(!same_type::<StoredRelation<L9>, StoredRelation<L13>>());
    // A fact reads back as its struct.
    let (program, _) = Chain::materialize(Batch::new().insert(Base(0, 1)));
    assert_eq!(program.relation::<L1>().sorted(), [L1(0, 1)]);
    assert!(program.contains(&L1(0, 1)) && !program.contains(&L2(0, 1)));
}
