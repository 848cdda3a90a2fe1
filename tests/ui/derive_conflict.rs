dred::datalog! {
    struct Graph;
    #[derive(Debug, Clone)]
    @input struct Edge(u32, u32);
}

fn main() {}
