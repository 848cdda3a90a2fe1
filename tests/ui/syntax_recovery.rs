// Each mistake is reported on its own token, even where the item ends too early: never on
// the whole macro call.
dred::datalog! {
    pub struct Graph;
    @input pub struct E(u32, u32);
    pub struct R(u32, u32);
    @input pub struct;
    R(x, y) <- ;
    R(x, y) <- E(x, y), , E(y, x);
    R(x, z) <- E(x, y), R(y, z)
}

fn main() {}
