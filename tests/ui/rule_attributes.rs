dred::datalog! {
    struct Graph;
    @input struct Edge(u32, u32);
    struct Reach(u32, u32);
    /// Doc comments document a rule: they are accepted.
    Reach(x, y) <- Edge(x, y);
    #[inline]
    Reach(x, z) <- Reach(x, y), Edge(y, z);
}

fn main() {}
