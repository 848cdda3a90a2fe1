dred::datalog! {
    struct Graph;
    @input struct Edge(u32, u32);
    Edge(y, x) <- Edge(x, y);
}

fn main() {}
