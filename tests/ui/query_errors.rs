dred::datalog! {
    struct Graph;
    @input struct Edge(u32, u32);
    struct Reach(u32, u32);
    Reach(x, y) <- Edge(x, y);
    @query FromEdge = Edge(1, _);
    @query FromReahc = Reahc(1, _);
    @query Wide = Reach(1, _, _);
    @query Reach = Reach(1, _);
    @query Typed = Reach("one", _);
    @query Missing Reach(1, _);
}

fn main() {}
