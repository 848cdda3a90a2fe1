dred::datalog! {
    struct Graph;
    @input struct Edge(u32, u32);
    struct Degree(u32, u32);
    Degree(x, count(y)) <- Edge(x, y);
    Degree(x, n) <- Edge(x, _), agg n = count() in Edge(x, _);
}

fn main() {}
