dred::datalog! {
    struct Graph;
    @input struct Edge(u32, u32);
    struct Reach(u32, u32);
    Reach(x, _) <- Edge(x, y);
}

fn main() {}
