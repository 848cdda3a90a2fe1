//! The programs the soak drives: one per shape of rule the engine handles differently.

use dred::runtime::Program;

use crate::check::{check_history, Divergence, Models, Run};
use crate::history::History;

/// A program of one shape, behind function pointers so that the driver can loop over them.
pub struct Shape {
    /// Its name on the command line and in the output.
    pub name: &'static str,
    /// Runs one history under one strategy, checking every batch against the expected
    /// models ([`crate::check::expected_models`]).
    pub check: fn(&History, &Run, &[Models]) -> Result<u64, Divergence>,
    /// Its program's relations.
    pub relations: &'static [dred::runtime::RelationInfo],
    /// Its program's rules (the rewrite, for a query).
    pub rules: &'static [dred::runtime::RuleInfo],
}

fn shape<P: Program>(name: &'static str) -> Shape {
    Shape {
        name,
        check: check_history::<P>,
        relations: P::RELATIONS,
        rules: P::RULES,
    }
}

/// Every shape, in the order the soak runs them.
pub fn shapes() -> Vec<Shape> {
    vec![
        shape::<tc_nonlinear::Tc>("nonlinear-closure"),
        shape::<tc_linear::Tc>("linear-closure"),
        shape::<beyond_closure::Downstream>("closure-and-beyond"),
        shape::<same_generation::SameGen>("same-generation"),
        shape::<mutual::Mutual>("mutual-recursion"),
        shape::<three_way::ThreeWay>("three-relation-cycle"),
        shape::<andersen::Andersen>("andersen"),
        shape::<three_atoms::ThreeAtoms>("three-atom-bodies"),
        shape::<constants::Constants>("constants"),
        shape::<repeated::Repeated>("repeated-variables"),
        shape::<zero_arity::ZeroArity>("zero-arity"),
        shape::<mixed::Access>("mixed-columns"),
        shape::<query::FromZero>("query-constant"),
        shape::<query::ReachFrom>("query-run-time-binding"),
    ]
}

mod tc_nonlinear {
    dred::datalog! {
        pub struct Tc;
        @input pub struct E(pub u32, pub u32);
        pub struct R(pub u32, pub u32);
        R(x, y) <- E(x, y);
        R(x, z) <- R(x, y), R(y, z);
    }
}

mod tc_linear {
    dred::datalog! {
        pub struct Tc;
        @input pub struct E(pub u32, pub u32);
        pub struct R(pub u32, pub u32);
        R(x, y) <- E(x, y);
        R(x, z) <- E(x, y), R(y, z);
    }
}

mod beyond_closure {
    dred::datalog! {
        pub struct Downstream;
        @input pub struct E(pub &'static str, pub &'static str);
        @input pub struct M(pub &'static str);
        pub struct R(pub &'static str, pub &'static str);
        pub struct OnCycle(pub &'static str);
        pub struct Via(pub &'static str, pub &'static str);
        R(x, y) <- E(x, y);
        R(x, z) <- R(x, y), R(y, z);
        OnCycle(x) <- R(x, x), M(x);
        Via(x, z) <- R(x, y), M(y), R(y, z);
    }
}

mod same_generation {
    dred::datalog! {
        pub struct SameGen;
        @input pub struct Parent(pub u32, pub u32);
        pub struct Sg(pub u32, pub u32);
        Sg(x, y) <- Parent(x, p), Parent(y, p);
        Sg(x, y) <- Parent(x, a), Sg(a, b), Parent(y, b);
    }
}

mod mutual {
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
        P(x) <- Seed(x);
        P(x) <- Q(x);
        Q(x) <- P(x);
        Q(y) <- Q(x), Next(x, y), Odd(y);
    }
}

mod three_way {
    dred::datalog! {
        pub struct ThreeWay;
        @input pub struct E(pub u32, pub u32);
        @input pub struct F(pub u32, pub u32);
        pub struct A(pub u32, pub u32);
        pub struct B(pub u32, pub u32);
        pub struct C(pub u32, pub u32);
        A(x, y) <- E(x, y);
        B(x, z) <- A(x, y), F(y, z);
        C(x, z) <- B(x, y), E(y, z);
        A(x, z) <- C(x, y), F(y, z);
        A(x, z) <- A(x, y), C(y, z);
    }
}

mod andersen {
    dred::datalog! {
        pub struct Andersen;
        @input pub struct AddressOf(pub u32, pub u32);
        @input pub struct Assign(pub u32, pub u32);
        @input pub struct Load(pub u32, pub u32);
        @input pub struct Store(pub u32, pub u32);
        pub struct PointsTo(pub u32, pub u32);
        PointsTo(p, a) <- AddressOf(p, a);
        PointsTo(p, a) <- Assign(p, q), PointsTo(q, a);
        PointsTo(p, a) <- Load(p, q), PointsTo(q, r), PointsTo(r, a);
        PointsTo(r, a) <- Store(p, q), PointsTo(p, r), PointsTo(q, a);
    }
}

mod three_atoms {
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

mod constants {
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

mod repeated {
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
        pub struct Pair(pub u32, pub u32, pub u32);
        SelfLoop(x) <- E(x, x);
        Sym(x, y) <- E(x, y), E(y, x);
        R(x, y) <- E(x, y);
        R(x, z) <- R(x, y), E(y, z);
        OnCycle(x) <- R(x, x);
        Diag(x, z) <- T(x, x, z), R(z, z);
        Diag(x, x) <- T(x, _, x);
        Via(x, w) <- T(x, x, y), R(y, w);
        Pair(x, z, z) <- R(x, y), R(y, z);
    }
}

mod zero_arity {
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

mod mixed {
    use dred::Symbol;

    dred::datalog! {
        pub struct Access;
        @input pub struct Member(pub String, pub u32);
        @input pub struct Grant(pub u32, pub &'static str);
        @input pub struct Includes(pub &'static str, pub &'static str);
        @input pub struct Owner(pub Symbol, pub &'static str);
        pub struct CanRead(pub String, pub &'static str);
        pub struct Public(pub &'static str);
        pub struct RootOnly(pub &'static str);
        pub struct Owns(pub Symbol, pub &'static str);
        CanRead(u, d) <- Member(u, g), Grant(g, d);
        CanRead(u, e) <- CanRead(u, d), Includes(d, e);
        Public(d) <- Grant(0, d);
        Public(e) <- Public(d), Includes(d, e);
        RootOnly(d) <- CanRead("root", d), Grant(g, d), Member("x y", g);
        Owns(o, d) <- Owner(o, d);
        Owns(o, e) <- Owns(o, d), Includes(d, e);
    }
}

mod query {
    dred::datalog! {
        pub struct Paths;
        @input pub struct E(pub u32, pub u32);
        pub struct R(pub u32, pub u32);
        R(x, y) <- E(x, y);
        R(x, z) <- R(x, y), R(y, z);
        @query pub FromZero = R(0, _);
        @query pub ReachFrom = R(source, _);
    }
}
