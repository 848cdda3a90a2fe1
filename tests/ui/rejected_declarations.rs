dred::datalog! {
    struct Graph;
    // A declaration the macro rejects is one error: the rules that use its relation are
    // not reported again, and the declaration after a braced struct is still read.
    @input struct Edge<T>(T, T);
    struct Named { from: u32 }
    struct Reach(u32, u32);
    Reach(x, y) <- Edge(x, y);
    Reach(x, z) <- Reach(x, y), Named(y), Edge(y, z);
    Reach(x, x) <- Reahc(x, x);
}

fn main() {}
