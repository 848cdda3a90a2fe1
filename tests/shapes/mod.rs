//! Programs of the shapes the engine handles differently, shared by the property tests
//! (`tests/properties.rs`) and the differential soak (`soak/`, which includes this file).

pub mod tc_nonlinear {
    dred::datalog! {
        pub struct Tc;
        @input pub struct E(pub u32, pub u32);
        pub struct R(pub u32, pub u32);
        R(x, y) <- E(x, y);
        R(x, z) <- R(x, y), R(y, z);
    }
}

pub mod tc_linear {
    dred::datalog! {
        pub struct Tc;
        @input pub struct E(pub u32, pub u32);
        pub struct R(pub u32, pub u32);
        R(x, y) <- E(x, y);
        R(x, z) <- E(x, y), R(y, z);
    }
}

/// A closure kept by reachability (`dred::runtime::closure`) whose losses reach rules
/// beyond it, next to a second closure over other edges (the mirror form).
pub mod closure_downstream {
    dred::datalog! {
        pub struct Downstream;
        @input pub struct E(pub &'static str, pub &'static str);
        @input pub struct M(pub &'static str);
        @input pub struct F(pub u32, pub u32);
        pub struct R(pub &'static str, pub &'static str);
        pub struct OnCycle(pub &'static str);
        pub struct Via(pub &'static str, pub &'static str);
        pub struct S(pub u32, pub u32);
        R(x, y) <- E(x, y);
        R(x, z) <- R(x, y), R(y, z);
        OnCycle(x) <- R(x, x), M(x);
        Via(x, z) <- R(x, y), M(y), R(y, z);
        S(x, y) <- F(x, y);
        S(x, z) <- F(x, y), S(y, z);
    }
}

pub mod same_generation {
    dred::datalog! {
        pub struct SameGen;
        @input pub struct Parent(pub u32, pub u32);
        pub struct Sg(pub u32, pub u32);
        Sg(x, y) <- Parent(x, p), Parent(y, p);
        Sg(x, y) <- Parent(x, a), Sg(a, b), Parent(y, b);
    }
}

pub mod mutual_recursion {
    dred::datalog! {
        pub struct Mutual;
        @input pub struct Start(pub u32);
        @input pub struct Next(pub u32, pub u32);
        @input pub struct Seed(pub u32);
        pub struct Even(pub u32);
        pub struct Odd(pub u32);
        pub struct P(pub u32);
        pub struct Q(pub u32);
        Even(x) <- Start(x);
        Odd(y) <- Even(x), Next(x, y);
        Even(y) <- Odd(x), Next(x, y);
        // P and Q support each other; only Seed grounds them.
        P(x) <- Seed(x);
        P(x) <- Q(x);
        Q(x) <- P(x);
        Q(y) <- Q(x), Next(x, y), Odd(y);
    }
}

pub mod three_atoms {
    dred::datalog! {
        pub struct ThreeAtoms;
        @input pub struct E(pub u32, pub u32);
        pub struct Tri(pub u32, pub u32, pub u32);
        pub struct Path3(pub u32, pub u32);
        pub struct Conn(pub u32, pub u32);
        Tri(x, y, z) <- E(x, y), E(y, z), E(z, x);
        Path3(x, w) <- E(x, y), E(y, z), E(z, w);
        Conn(x, y) <- E(x, y);
        Conn(x, w) <- Conn(x, y), E(y, z), Conn(z, w);
    }
}

pub mod constants {
    dred::datalog! {
        pub struct Constants;
        @input pub struct E(pub u32, pub u32);
        pub struct FromZero(pub u32);
        pub struct Hub(pub u32);
        pub struct Special(pub u32);
        pub struct Marked(pub u32);
        pub struct Tagged(pub u32, pub u32);
        FromZero(y) <- E(0, y);
        FromZero(z) <- FromZero(y), E(y, z);
        Hub(x) <- E(x, 3), E(3, x);
        Special(1);
        Special(4);
        Marked(x) <- Special(x);
        Marked(y) <- Marked(x), E(x, y);
        Tagged(x, 7) <- Marked(x), E(x, 2);
        Tagged(2, y) <- E(y, y);
    }
}

pub mod repeated_variables {
    dred::datalog! {
        pub struct Repeated;
        @input pub struct E(pub u32, pub u32);
        @input pub struct T(pub u32, pub u32, pub u32);
        pub struct SelfLoop(pub u32);
        pub struct Sym(pub u32, pub u32);
        pub struct R(pub u32, pub u32);
        pub struct OnCycle(pub u32);
        pub struct Diag(pub u32, pub u32);
        pub struct Via(pub u32, pub u32);
        pub struct Lit(pub u32, pub u32);
        pub struct Pair(pub u32, pub u32, pub u32);
        pub struct Back(pub u32);
        SelfLoop(x) <- E(x, x);
        Sym(x, y) <- E(x, y), E(y, x);
        R(x, y) <- E(x, y);
        R(x, z) <- R(x, y), E(y, z);
        OnCycle(x) <- R(x, x);
        Diag(x, z) <- T(x, x, z), R(z, z);
        Diag(x, x) <- T(x, _, x);
        // A delta of T is grouped by the column R is probed with: the group's facts keep a
        // repeated variable, a `_` and a constant, and only the head reads the rest.
        Via(x, w) <- T(x, x, y), R(y, w);
        Lit(x, z) <- T(x, _, 1), R(x, z);
        // A loss of support may walk `Pair(x, _, _)` first (the index `Back` probes): the
        // head repeats a variable the delta does not bind.
        Pair(x, z, z) <- R(x, y), R(y, z);
        Back(w) <- E(w, x), Pair(x, _, _);
    }
}

pub mod zero_arity {
    dred::datalog! {
        pub struct ZeroArity;
        @input pub struct Sig();
        @input pub struct E(pub u32, pub u32);
        pub struct Ready();
        pub struct Go();
        pub struct Any();
        pub struct Loop();
        pub struct Reach(pub u32, pub u32);
        Ready();
        Go() <- Ready(), Sig();
        Any() <- E(_, _);
        Reach(x, y) <- Go(), E(x, y);
        Reach(x, z) <- Reach(x, y), E(y, z);
        Loop() <- Reach(x, x), Any();
    }
}
