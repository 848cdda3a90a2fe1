dred::datalog! {
    pub struct Reachability;
    @input pub struct E(pub &'static str, pub &'static str);
    pub struct R(pub &'static str, pub &'static str);
    R(x, y) <- E(x, y);
    R(x, z) <- R(x, y), R(y, z);
}
fn main() {
    let edges = [
        ("a", "b"),
        ("a", "e"),
        ("b", "c"),
        ("c", "b"),
        ("c", "d"),
        ("e", "d"),
        ("u", "v"),
        ("v", "w"),
        ("w", "u"),
    ];
    let (mut p, rep) = Reachability::materialize(
        dred::Batch::new().insert_all(edges.iter().map(|&(a, b)| E(a, b))),
    );
    println!("{rep}");
    println!("R = {}", p.relation::<R>().len());
    let rep = p.update(dred::Batch::new().delete(E("a", "b")));
    println!("{rep}");
    println!("R = {}", p.relation::<R>().len());
    let rep = p.update(
        dred::Batch::new()
            .insert(E("d", "fresh"))
            .insert(E("fresh", "a")),
    );
    println!("{rep}");
    p.verify().unwrap();
}
