dred::datalog! {
    struct People;
    @input struct Age(&'static str, u32);
    @input struct Friend(&'static str, &'static str);
    struct Odd(&'static str, u32);
    Odd(p, a) <- Age(p, a), Friend(a, p);
}

fn main() {}
