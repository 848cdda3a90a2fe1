//! The distributed path (feature `dataflow`): the property tests' programs, on random
//! input facts and random histories of update batches written as fact files, run on timely
//! with one worker, two workers in one process, and two processes talking over the
//! loopback interface. After the inputs and after every batch, each derived relation
//! holds exactly the local engine's facts (and the count `run` reports is their number).
//!
//! `cargo test --features dataflow --test dataflow`. Histories per program and run: 3 by
//! default; set `DRED_DATAFLOW_CASES` for a longer soak.
#![cfg(feature = "dataflow")]

mod shapes;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use dred::runtime::dataflow::{run, timely, BatchCounts, Dataflow, Job};
use dred::runtime::io::read_input_dir;
use dred::runtime::maintain::materialize;
use dred::runtime::{Batch, Program, Strategy, Trace};
use shapes::*;

/// Columns of the three kinds that cross processes, strings among them.
mod mixed {
    use dred::Symbol;
    dred::datalog! {
        pub struct Mixed;
        @input pub struct Edge(pub Symbol, pub Symbol);
        @input pub struct Label(pub Symbol, pub String);
        @input pub struct Weight(pub String, pub i64, pub char);
        pub struct Path(pub Symbol, pub Symbol);
        pub struct Named(pub String, pub Symbol);
        pub struct Heavy(pub String, pub i64);
        Path(x, y) <- Edge(x, y);
        Path(x, z) <- Path(x, y), Edge(y, z);
        Named(l, y) <- Label(x, l), Path(x, y);
        Heavy(l, w) <- Named(l, _), Weight(l, w, 'k');
        Heavy(l, 3) <- Weight(l, _, _), Weight(l, 3, _);
    }
}

/// A column of a type of the program's own, which crosses processes by serde traits of
/// its own, beside `&'static str` columns.
mod own_types {
    use dred::runtime::dataflow::serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// A level, read and written as its number.
    #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
    pub struct Level(pub u8);

    impl dred::runtime::text::TextValue for Level {
        fn parse_text(field: &str) -> Result<Self, String> {
            field
                .parse()
                .map(Level)
                .map_err(|e| format!("expected a level: {e}"))
        }
        fn write_text(&self, out: &mut String) {
            out.push_str(&self.0.to_string());
        }
    }

    impl Serialize for Level {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_u8(self.0)
        }
    }

    impl<'de> Deserialize<'de> for Level {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            u8::deserialize(deserializer).map(Level)
        }
    }

    dred::datalog! {
        pub struct Ranks;
        @input pub struct Rank(pub &'static str, pub Level);
        @input pub struct Boss(pub &'static str, pub &'static str);
        pub struct Above(pub &'static str, pub &'static str);
        pub struct Peer(pub &'static str, pub &'static str, pub Level);
        pub struct Named(pub &'static str);
        Above(x, y) <- Boss(x, y);
        Above(x, z) <- Above(x, y), Boss(y, z);
        Peer(x, y, l) <- Rank(x, l), Rank(y, l), Above(x, _), Above(y, _);
        Named("b") <- Boss("b", _);
        Named(x) <- Named(y), Above(y, x);
    }
}

/// Magic-set rewrites: bound by a constant and by a run-time parameter.
mod queries {
    dred::datalog! {
        pub struct Graph;
        @input pub struct E(pub u32, pub u32);
        pub struct R(pub u32, pub u32);
        pub struct Even(pub u32, pub u32);
        pub struct Odd(pub u32, pub u32);
        R(x, y) <- E(x, y);
        R(x, z) <- R(x, y), R(y, z);
        Odd(x, y) <- E(x, y);
        Even(x, z) <- Odd(x, y), E(y, z);
        Odd(x, z) <- Even(x, y), E(y, z);
        @query pub FromZero = R(0, _);
        @query pub EvenFromOne = Even(1, _);
        @query pub ReachFrom = R(source, _);
    }
}

fn cases() -> u64 {
    std::env::var("DRED_DATAFLOW_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

/// A deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

/// One random line of input relation `columns`' fact file.
fn random_line(columns: &[&str], rng: &mut Rng) -> String {
    let fields: Vec<String> = columns
        .iter()
        .map(|ty| match *ty {
            "String" | "Symbol" | "dred::Symbol" | "&'static str" => {
                ["a", "b", "c", "x y"][rng.below(4) as usize].to_string()
            }
            _ => rng.below(6).to_string(),
        })
        .collect();
    fields.join("\t")
}

/// Writes `P`'s random inputs to `<dir>/inputs` and `batches` random batches to
/// `<dir>/batch-<i>/{delete,insert}`: deletions of held and of absent facts, insertions of
/// new and of held ones, and facts both deleted and inserted by one batch.
fn write_history<P: Program>(dir: &Path, seed: u64, batches: usize) -> Job {
    let mut rng = Rng(seed);
    let inputs: Vec<_> = P::RELATIONS.iter().filter(|r| r.input).collect();
    let write = |dir: &Path, lines: &[(usize, String)]| {
        std::fs::create_dir_all(dir).unwrap();
        for (r, info) in inputs.iter().enumerate() {
            let text: String = lines
                .iter()
                .filter(|(of, _)| *of == r)
                .map(|(_, line)| format!("{line}\n"))
                .collect();
            if !text.is_empty() {
                std::fs::write(dir.join(format!("{}.facts", info.name)), text).unwrap();
            }
        }
    };
    let random_lines = |count: u64, rng: &mut Rng| -> Vec<(usize, String)> {
        (0..count)
            .map(|_| {
                let r = rng.below(inputs.len() as u64) as usize;
                (r, random_line(inputs[r].columns, rng))
            })
            .collect()
    };
    let initial = random_lines(8 + rng.below(24), &mut rng);
    write(&dir.join("inputs"), &initial);
    let mut job = Job {
        inputs: dir.join("inputs"),
        batches: Vec::new(),
        output: Some(dir.join("out")),
    };
    for i in 0..batches {
        let batch = dir.join(format!("batch-{i}"));
        std::fs::create_dir_all(&batch).unwrap();
        let mut deletions = random_lines(rng.below(6), &mut rng);
        deletions.extend(
            (0..rng.below(4)).map(|_| initial[rng.below(initial.len() as u64) as usize].clone()),
        );
        let mut insertions = random_lines(rng.below(6), &mut rng);
        if let Some(both) = deletions.first() {
            if rng.below(2) == 0 {
                insertions.push(both.clone());
            }
        }
        write(&batch.join("delete"), &deletions);
        write(&batch.join("insert"), &insertions);
        job.batches.push(batch);
    }
    job
}

/// Each derived relation's facts as fact-file lines, after the inputs and after each batch
/// of `job`, by the local engine.
fn local_history<P: Program>(job: &Job) -> Vec<Vec<(&'static str, BTreeSet<String>)>> {
    let (mut program, _): (P, _) =
        materialize(read_input_dir::<P>(&job.inputs).unwrap(), Trace::Counts);
    let mut history = vec![derived_lines(&program)];
    for batch in &job.batches {
        let mut update = Batch::new();
        for (part, insert) in [("delete", false), ("insert", true)] {
            let dir = batch.join(part);
            if dir.exists() {
                let read = read_input_dir::<P>(&dir).unwrap();
                let facts = dred::runtime::FactSets::to_vec(read.insertions());
                if insert {
                    update.insert_facts(facts).unwrap();
                } else {
                    update.delete_facts(facts).unwrap();
                }
            }
        }
        dred::runtime::maintain::update_using(&mut program, update, Strategy::DRed, Trace::Counts);
        history.push(derived_lines(&program));
    }
    history
}

fn derived_lines<P: Program>(program: &P) -> Vec<(&'static str, BTreeSet<String>)> {
    P::RELATIONS
        .iter()
        .filter(|r| !r.input)
        .map(|info| {
            let text = dred::runtime::io::write_tsv(program, info.name).unwrap();
            (info.name, text.lines().map(str::to_string).collect())
        })
        .collect()
}

/// What the dataflow wrote after the inputs and after each batch.
fn dataflow_history<P: Program>(job: &Job) -> Vec<Vec<(&'static str, BTreeSet<String>)>> {
    let out = job.output.as_ref().unwrap();
    (0..=job.batches.len())
        .map(|i| {
            P::RELATIONS
                .iter()
                .filter(|r| !r.input)
                .map(|info| {
                    let path = out.join(i.to_string()).join(format!("{}.facts", info.name));
                    let text = std::fs::read_to_string(path).unwrap();
                    (info.name, text.lines().map(str::to_string).collect())
                })
                .collect()
        })
        .collect()
}

fn check_counts(counts: &[BatchCounts], expected: &[Vec<(&'static str, BTreeSet<String>)>]) {
    assert_eq!(counts.len(), expected.len());
    for (counts, expected) in counts.iter().zip(expected) {
        let expected: Vec<(&str, u64)> =
            expected.iter().map(|(n, l)| (*n, l.len() as u64)).collect();
        assert_eq!(
            counts.counts, expected,
            "counts after batch {}",
            counts.batch
        );
    }
}

fn scratch(name: &str, seed: u64, how: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "dred-dataflow-{}-{name}-{seed}-{how}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Runs every history of `P` with `config()` and compares it with the local engine.
fn agrees_in_process<P: Dataflow>(name: &str, how: &str, config: fn() -> timely::Config) {
    let mut derived_any = false;
    for seed in 0..cases() {
        let dir = scratch(name, seed, how);
        let job = write_history::<P>(&dir, seed * 7919 + name.len() as u64, 4);
        let expected = local_history::<P>(&job);
        let counts = run::<P>(config(), job.clone()).unwrap();
        assert_eq!(
            dataflow_history::<P>(&job),
            expected,
            "{name}, seed {seed}, {how}"
        );
        check_counts(&counts, &expected);
        derived_any |= expected
            .iter()
            .flatten()
            .any(|(_, lines)| !lines.is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(derived_any, "{name}: the histories derive something");
}

/// Calls `f::<P>(name)` for every program of the test, by name.
macro_rules! every_program {
    ($f:ident $(, $arg:expr)*) => {{
        $f::<tc_nonlinear::Tc>("tc_nonlinear" $(, $arg)*);
        $f::<tc_linear::Tc>("tc_linear" $(, $arg)*);
        $f::<closure_downstream::Downstream>("closure_downstream" $(, $arg)*);
        $f::<same_generation::SameGen>("same_generation" $(, $arg)*);
        $f::<mutual_recursion::Mutual>("mutual_recursion" $(, $arg)*);
        $f::<three_atoms::ThreeAtoms>("three_atoms" $(, $arg)*);
        $f::<constants::Constants>("constants" $(, $arg)*);
        $f::<repeated_variables::Repeated>("repeated_variables" $(, $arg)*);
        $f::<zero_arity::ZeroArity>("zero_arity" $(, $arg)*);
        $f::<mixed::Mixed>("mixed" $(, $arg)*);
        $f::<own_types::Ranks>("own_types" $(, $arg)*);
        $f::<queries::Graph>("queries" $(, $arg)*);
        $f::<queries::FromZero>("from_zero" $(, $arg)*);
        $f::<queries::EvenFromOne>("even_from_one" $(, $arg)*);
        $f::<queries::ReachFrom>("reach_from" $(, $arg)*);
    }};
}

#[test]
fn one_worker_agrees_with_the_local_engine() {
    every_program!(agrees_in_process, "one-worker", timely::Config::thread);
}

#[test]
fn two_workers_agree_with_the_local_engine() {
    every_program!(
        agrees_in_process,
        "two-workers",
        || timely::Config::process(2)
    );
}

/// The environment variable that makes this test binary one process of a cluster.
const CHILD: &str = "DRED_DATAFLOW_CHILD";

/// As a child: `program;process;port0,port1;job dir;batches`.
fn run_child(spec: &str) {
    let parts: Vec<&str> = spec.split(';').collect();
    let process: usize = parts[1].parse().unwrap();
    let addresses = parts[2]
        .split(',')
        .map(|port| format!("127.0.0.1:{port}"))
        .collect();
    let dir = PathBuf::from(parts[3]);
    let batches: usize = parts[4].parse().unwrap();
    let job = Job {
        inputs: dir.join("inputs"),
        batches: (0..batches)
            .map(|i| dir.join(format!("batch-{i}")))
            .collect(),
        output: Some(dir.join("out")),
    };
    let config = timely::Config {
        communication: timely::CommunicationConfig::Cluster {
            threads: 1,
            process,
            addresses,
            report: false,
            zerocopy: false,
        },
        worker: timely::WorkerConfig::default(),
    };
    every_program!(run_if_named, parts[0], &config, &job);
}

/// Runs `P` as one process of the cluster if it is the program named `wanted`.
fn run_if_named<P: Dataflow>(name: &str, wanted: &str, config: &timely::Config, job: &Job) {
    if name == wanted {
        run::<P>(config.clone(), job.clone()).unwrap();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Two processes of this test binary, each one process of the cluster, on 127.0.0.1.
fn agrees_across_processes<P: Dataflow>(name: &str) {
    for seed in 0..cases().min(2) {
        let dir = scratch(name, seed, "two-processes");
        let batches = 3;
        let job = write_history::<P>(&dir, seed * 7919 + name.len() as u64, batches);
        let expected = local_history::<P>(&job);
        let ports = format!("{},{}", free_port(), free_port());
        let mut children: Vec<_> = (0..2)
            .map(|process| {
                let spec = format!("{name};{process};{ports};{};{batches}", dir.display());
                Command::new(std::env::current_exe().unwrap())
                    .args([
                        "two_processes_agree_with_the_local_engine",
                        "--exact",
                        "--nocapture",
                    ])
                    .env(CHILD, spec)
                    .stdout(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let started = Instant::now();
        for child in &mut children {
            loop {
                if let Some(status) = child.try_wait().unwrap() {
                    assert!(status.success(), "{name}: a process failed");
                    break;
                }
                if started.elapsed() > Duration::from_secs(120) {
                    for child in &mut children {
                        let _ = child.kill();
                    }
                    panic!("{name}: the processes did not finish within 120 s");
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        assert_eq!(
            dataflow_history::<P>(&job),
            expected,
            "{name}, seed {seed}, two processes"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn two_processes_agree_with_the_local_engine() {
    if let Ok(spec) = std::env::var(CHILD) {
        run_child(&spec);
        return;
    }
    every_program!(agrees_across_processes);
}
