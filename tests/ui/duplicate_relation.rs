dred::datalog! {
    struct Graph;
    @input struct Edge(u32, u32);
    struct Edge(u32, u32);
}

fn main() {}
