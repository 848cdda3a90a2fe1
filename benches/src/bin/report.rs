fn main() {
    if std::env::args().nth(1).as_deref() == Some("--count-workloads") {
        println!("{}", dred_benches::workloads().len());
    }
}
