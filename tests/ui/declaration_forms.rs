dred::datalog! {
    struct Graph;
    @inptu struct Edge(u32, u32);
    @input struct Program;
    struct Named { from: u32 }
    struct Generic<T>(T);
}

fn main() {}
