dred::datalog! {
    @input struct Edge(u32, u32);
}

fn main() {}
