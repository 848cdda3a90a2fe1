//! Valid programs at the front end's edges compile and run: relations named like the
//! prelude's items, columns spelt through type aliases, documented rules, 32 columns.

pub type NodeId = u32;

mod prelude_names {
    dred::datalog! {
        pub struct Option;
        @input pub struct Some(pub u32, pub u32);
        pub struct None(pub u32, pub u32);
        pub struct Vec(pub u32);
        pub struct Ok(pub u32);
        pub struct Default(pub u32);
        pub struct String(pub u32);
        pub struct Box(pub u32);
        None(x, y) <- Some(x, y);
        None(x, z) <- None(x, y), Some(y, z);
        Vec(x) <- None(x, x);
        Ok(x) <- Vec(x);
        Default(x) <- Ok(x), Some(x, _);
        String(x) <- Default(x);
        Box(x) <- String(x), Vec(x);
    }
}

mod aliases {
    use super::NodeId;

    dred::datalog! {
        pub struct Graph;
        @input pub struct Edge(pub u32, pub NodeId);
        pub struct Reach(pub NodeId, pub ::std::primitive::u32);
        /// Every edge is a path.
        Reach(x, y) <- Edge(x, y);
        /// A path continues along an edge.
        Reach(x, z) <- Reach(x, y), Edge(y, z);
    }
}

mod wide {
    dred::datalog! {
        pub struct Wide;
        @input pub struct In(pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8,
            pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8,
            pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8, pub u8,
            pub u8, pub u8, pub u8, pub u8);
        pub struct Pair(pub u8, pub u8);
        Pair(a, z) <- In(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t, u, v, w, x,
            y, z, aa, ab, ac, ad, ae, af),
            In(z, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t, u, v, w, x, y, a, aa,
            ab, ac, ad, ae, af);
    }
}

fn main() {
    use dred::Batch;

    let (program, _) = prelude_names::Option::materialize(
        Batch::new().insert_all([prelude_names::Some(1, 2), prelude_names::Some(2, 1)]),
    );
    assert!(program.contains(&prelude_names::Box(1)));

    let (mut graph, _) = aliases::Graph::materialize(
        Batch::new().insert_all([aliases::Edge(1, 2), aliases::Edge(2, 3)]),
    );
    assert!(graph.contains(&aliases::Reach(1, 3)));
    let proof = graph.explain(aliases::Reach(1, 3)).expect("a proof").to_string();
    assert!(proof.contains("// A path continues along an edge."), "{proof}");
    graph.update(Batch::new().delete(aliases::Edge(2, 3)));
    assert!(!graph.contains(&aliases::Reach(1, 3)));

    let row = |a: u8, z: u8| {
        let mut columns = [7u8; 32];
        columns[0] = a;
        columns[25] = z;
        columns
    };
    let fact = |c: [u8; 32]| {
        wide::In(
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10], c[11], c[12],
            c[13], c[14], c[15], c[16], c[17], c[18], c[19], c[20], c[21], c[22], c[23], c[24],
            c[25], c[26], c[27], c[28], c[29], c[30], c[31],
        )
    };
    let (wide, _) = wide::Wide::materialize(Batch::new().insert_all([fact(row(1, 2)), fact(row(2, 1))]));
    assert!(wide.contains(&wide::Pair(1, 2)) && wide.contains(&wide::Pair(2, 1)));
}
