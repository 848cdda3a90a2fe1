dred::datalog! {
    struct Consts;
    @input struct Small(u8, &'static str);
    @input struct Flag(bool, char);
    struct Out(u8);
    Out(x) <- Small(x, 7);
    Out(300) <- Small(_, "a");
    Out(x) <- Small(x, "a"), Small("b", _);
    Out(-1) <- Flag(true, 'c');
    Out(x) <- Small(x, _), Flag('c', true);
    Out(5u32) <- Flag(_, _);
}

fn main() {}
