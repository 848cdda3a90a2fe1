// A relation or query may not take a name that `datalog!` generates beside the program or a
// query's program: each clash is reported on the user's name.
dred::datalog! {
    pub struct Graph;
    @input pub struct GraphFacts(u32, u32);
    pub struct GraphFact(u32);
    pub struct FromOneAsk(u32);
    GraphFact(x) <- GraphFacts(x, _);
    @query pub FromOne = GraphFact(x);
}

fn main() {}
