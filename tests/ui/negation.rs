dred::datalog! {
    struct Graph;
    @input struct Edge(u32, u32);
    @input struct Node(u32);
    struct Sink(u32);
    struct Isolated(u32);
    Sink(x) <- Node(x), !Edge(x, _);
    Isolated(x) <- Node(x), not Edge(x, _);
}

fn main() {}
