fn double(x: u32) -> u32 {
    x * 2
}

dred::datalog! {
    struct Graph;
    @input struct Edge(u32, u32);
    struct Next(u32, u32);
    Next(x, y + 1) <- Edge(x, y);
    Next(x, double(y)) <- Edge(x, y);
    Next(x, y.pow(2)) <- Edge(x, y);
    Next(x, y) <- Edge(x, y), if x < y;
    Next(x, 1.5) <- Edge(x, _);
}

fn main() {}
