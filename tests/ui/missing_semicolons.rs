// A forgotten `;` between two items is one error, after the first: the second item is
// still read (its relation declared, its rule checked).
dred::datalog! {
    pub struct Graph;
    @input pub struct E(u32, u32)
    pub struct R(u32, u32);
    /// Documented.
    #[doc = "Still documented."]
    pub struct S(u32)
    R(x, y) <- E(x, y)
    R(x, z) <- E(x, y), R(y, z);
    S(x) <- R(x, x)
    S(y) <- E(y, y);
}

fn main() {}
