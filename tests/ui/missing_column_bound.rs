#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Weight(u32);

dred::datalog! {
    struct Graph;
    @input struct Edge(u32, u32, Weight);
}

fn main() {}
