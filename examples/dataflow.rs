//! The seed's reachability on timely dataflow (feature `dataflow`): the input edges of a
//! fact directory, then each batch directory in order (`delete/` and `insert/` fact
//! files), printing after each the number of facts of every derived relation and writing
//! them to `<out>/<i>/`.
//!
//! ```text
//! cargo run --release --features dataflow --example dataflow -- \
//!     examples/dataflow/inputs examples/dataflow/batch-1 --out target/dataflow-out -- -w 2
//! ```
//!
//! Arguments after a second `--` are timely's: `-w` workers per process, `-n` processes,
//! `-p` this process's index, `-h` a file of the processes' addresses (see the README for
//! two processes).

use std::path::PathBuf;

use dred::runtime::dataflow::{run, timely, Job};

dred::datalog! {
    /// Positive-length reachability, the seed's first example, over names read from files.
    pub struct Reachability;
    /// An input edge.
    @input pub struct E(pub dred::Symbol, pub dred::Symbol);
    /// `R(x, y)`: there is a path of length at least one from `x` to `y`.
    pub struct R(pub dred::Symbol, pub dred::Symbol);
    R(x, y) <- E(x, y);
    R(x, z) <- R(x, y), R(y, z);
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (ours, timely_args) = match args.iter().position(|a| a == "--") {
        Some(at) => (&args[..at], &args[at + 1..]),
        None => (&args[..], &[][..]),
    };
    let mut job = Job::default();
    let mut paths = ours.iter();
    while let Some(arg) = paths.next() {
        if arg == "--out" {
            job.output = paths.next().map(PathBuf::from);
        } else if job.inputs.as_os_str().is_empty() {
            job.inputs = PathBuf::from(arg);
        } else {
            job.batches.push(PathBuf::from(arg));
        }
    }
    if job.inputs.as_os_str().is_empty() {
        return Err(
            "usage: dataflow <inputs dir> [batch dir…] [--out DIR] [-- timely args]".into(),
        );
    }
    let config = timely::Config::from_args(timely_args.iter().cloned())?;
    // Only the process of the first worker gathers the counts; the others print nothing.
    for after in run::<Reachability>(config, job)? {
        let counts: Vec<String> = after
            .counts
            .iter()
            .map(|(relation, n)| format!("{relation}: {n}"))
            .collect();
        let when = match after.batch {
            0 => "the inputs".to_string(),
            i => format!("batch {i}"),
        };
        println!("after {when}: {}", counts.join(", "));
    }
    Ok(())
}
