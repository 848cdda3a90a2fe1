dred::datalog! {
    struct Measures;
    // Each column type that cannot hold a fact is one error, on the type.
    @input struct Reading(u32, f64);
    @input struct Label(&str, u32);
    @input struct Borrowed(u32, std::borrow::Cow<'_, str>);
    @input struct Table(u32, std::collections::HashMap<u32, u32>);
    @input struct Text(u32, str);
    struct Fine(u32);
    Fine(x) <- Reading(x, _), Label(_, x), Borrowed(x, _), Table(x, _), Text(x, _);
}

fn main() {}
