dred::datalog! {
    struct Graph;
    @input struct Edge(u32, u32);
    struct Reach(u32, u32);
    Reach(x, y) <- Edge(x, y, z);
    Edge(x, y) <- Reach(x, y);
    Reach(x, q) <- Edge(x, _);
    Reach(x, "y") <- Edge(x, _);
}

fn main() {}
