dred::datalog! {
    struct Graph;
    @input struct Graph(u32, u32);
}

fn main() {}
