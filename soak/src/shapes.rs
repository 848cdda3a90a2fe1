//! The programs the soak drives: one per shape of rule the engine handles differently.

use dred::runtime::Program;

use crate::check::{check_history, Divergence, Models, Run};
use crate::history::History;

/// The property tests' programs, the same text.
#[path = "../../tests/shapes/mod.rs"]
mod shared;
use shared::*;

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
        shape::<closure_downstream::Downstream>("closure-and-beyond"),
        shape::<same_generation::SameGen>("same-generation"),
        shape::<mutual_recursion::Mutual>("mutual-recursion"),
        shape::<three_way::ThreeWay>("three-relation-cycle"),
        shape::<andersen::Andersen>("andersen"),
        shape::<three_atoms::ThreeAtoms>("three-atom-bodies"),
        shape::<constants::Constants>("constants"),
        shape::<repeated_variables::Repeated>("repeated-variables"),
        shape::<zero_arity::ZeroArity>("zero-arity"),
        shape::<mixed::Access>("mixed-columns"),
        shape::<query::FromZero>("query-constant"),
        shape::<query::ReachFrom>("query-run-time-binding"),
    ]
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
