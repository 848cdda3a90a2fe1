dred::datalog! {
    struct Graph;
    @input struct Edge(u32, u32);
    struct Reach(u32, u32);
    struct Node(u32);
    Reach(x, z) <- Edge(x, y);
    Node(n);
}

fn main() {}
