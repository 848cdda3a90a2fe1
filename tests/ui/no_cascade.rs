dred::datalog! {
    struct Graph;
    @input struct Edge(u32, u32);
    struct Reach(u32, u32);
    // One mistake (a misspelt relation) is one error: no arity or safety errors follow.
    Reach(x, z) <- Edge(x, y), Reahc(y, z, w);
}

fn main() {}
