dred::datalog! {
    struct Graph;
    @input struct Edge(u32, u32);
    struct Reach(u32, u32);
    Reach(x, y) <- Edge(x, y);
    Reach(x, z) <- Reahc(x, y), Edge(y, z);
    Reach(x, y) <- Path(x, y);
}

fn main() {}
