dred::datalog! {
    struct Graph;
    struct Other;
    @input struct Edge(u32, u32);
}

fn main() {}
