//! The differential soak: random histories of update batches on programs of every shape,
//! each run under every strategy and checked after every batch against the independent
//! oracle (`dred::runtime::oracle`) and the engine's own `verify()`.
//!
//! ```text
//! cargo run --release -p dred-soak -- [--batches N] [--seed S] [--shape NAME] [--out DIR]
//! ```
//!
//! Each history also draws its program's thread count (1, 2 or 3; with more than one,
//! every round is split over the threads, however small), and one in four puts its
//! program's clock a few rounds before the middle of its range once materialized, so that
//! an update soon renumbers the rounds.
//!
//! It runs until it has checked `N` batches (10⁶ by default; a batch checked under every
//! strategy run counts once per run), prints its progress every ten seconds and, at the end, the
//! batches checked per program and strategy. A divergence (other facts than the oracle's,
//! a failed `verify()`, or a panic) is minimized and written as a case in the format of
//! `shared/cases` under `DIR` (`target/soak-divergences` by default); the soak then goes on,
//! and exits with status 1. `--inject-fault` checks the closure programs against a wrong
//! oracle (one that derives no self-loop after the first batch), to show the minimization and the case
//! files at work.

mod check;
mod history;
mod repro;
mod shapes;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use check::{Oracle, RUNS};
use history::History;

struct Options {
    batches: u64,
    seed: u64,
    shape: Option<String>,
    out: PathBuf,
    oracle: Oracle,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        batches: 1_000_000,
        seed: 1,
        shape: None,
        out: PathBuf::from("target/soak-divergences"),
        oracle: Oracle::True,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--batches" => options.batches = parse(&value("--batches")?)?,
            "--seed" => options.seed = parse(&value("--seed")?)?,
            "--shape" => options.shape = Some(value("--shape")?),
            "--out" => options.out = PathBuf::from(value("--out")?),
            "--inject-fault" => options.oracle = Oracle::NoSelfLoops,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(options)
}

fn parse(text: &str) -> Result<u64, String> {
    let digits: String = text.chars().filter(|c| *c != '_').collect();
    digits
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))
}

fn main() {
    let options = options().unwrap_or_else(|message| {
        eprintln!("dred-soak: {message}");
        std::process::exit(2);
    });
    let mut shapes = shapes::shapes();
    if let Some(name) = &options.shape {
        shapes.retain(|shape| shape.name == name);
        if shapes.is_empty() {
            let names: Vec<&str> = shapes::shapes().iter().map(|s| s.name).collect();
            eprintln!("dred-soak: no shape `{name}`; shapes: {}", names.join(", "));
            std::process::exit(2);
        }
    }
    // Panics are caught and reported as divergences; the default hook would print each.
    std::panic::set_hook(Box::new(|_| {}));
    let started = Instant::now();
    let mut last_report = Instant::now();
    let mut checked: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    let mut by_threads: BTreeMap<usize, u64> = BTreeMap::new();
    let mut late_clock = 0u64;
    let (mut total, mut histories, mut divergences) = (0u64, 0u64, 0u64);
    'soak: for round in 0.. {
        for (s, shape) in shapes.iter().enumerate() {
            let seed = options.seed.wrapping_mul(0x1_0000_0001) ^ (round * 64 + s as u64);
            let history = History::generate(shape.relations, seed);
            let expected = options.oracle.expected(shape, &history);
            histories += 1;
            for run in &RUNS {
                match (shape.check)(&history, run, &expected) {
                    Ok(batches) => {
                        *checked.entry((shape.name, run.name)).or_default() += batches;
                        *by_threads.entry(history.threads).or_default() += batches;
                        if history.late_clock.is_some() {
                            late_clock += batches;
                        }
                        total += batches;
                    }
                    Err(divergence) => {
                        divergences += 1;
                        report_divergence(&options, shape, run, &history, &divergence, seed);
                        if options.oracle != Oracle::True {
                            break 'soak;
                        }
                    }
                }
            }
            if last_report.elapsed() > Duration::from_secs(10) {
                last_report = Instant::now();
                let seconds = started.elapsed().as_secs_f64();
                println!(
                    "{total} batches checked ({:.0}/s), {histories} histories, \
                     {divergences} divergences, {seconds:.0} s",
                    total as f64 / seconds
                );
            }
            if total >= options.batches {
                break 'soak;
            }
        }
    }
    print_summary(
        &checked,
        &by_threads,
        late_clock,
        histories,
        divergences,
        started.elapsed(),
    );
    if divergences > 0 {
        std::process::exit(1);
    }
}

fn report_divergence(
    options: &Options,
    shape: &shapes::Shape,
    run: &check::Run,
    history: &History,
    divergence: &check::Divergence,
    seed: u64,
) {
    println!(
        "DIVERGENCE: {} under {} (history seed {seed}), batch {}: {}",
        shape.name, run.name, divergence.batch, divergence.detail
    );
    let small = repro::minimize(shape, run, options.oracle, history, divergence);
    let expected = options.oracle.expected(shape, &small);
    let small_divergence = (shape.check)(&small, run, &expected)
        .err()
        .unwrap_or_else(|| divergence.clone());
    let dir = (options.out).join(format!("{}-{}-{seed}", shape.name, run.name));
    match repro::write_case(&dir, shape, run, &small, &small_divergence) {
        Ok(()) => println!(
            "  minimized to {} initial facts and {} batches ({} facts): {}",
            small.initial.len(),
            small.batches.len(),
            small.batch_facts(),
            dir.display()
        ),
        Err(error) => println!("  could not write {}: {error}", dir.display()),
    }
}

fn print_summary(
    checked: &BTreeMap<(&str, &str), u64>,
    by_threads: &BTreeMap<usize, u64>,
    late_clock: u64,
    histories: u64,
    divergences: u64,
    elapsed: Duration,
) {
    let runs: Vec<&str> = RUNS.iter().map(|run| run.name).collect();
    println!("\nbatches checked, by program and strategy:");
    println!("{:<24} {}", "program", runs.join(" "));
    let mut shapes: Vec<&str> = checked.keys().map(|(shape, _)| *shape).collect();
    shapes.dedup();
    for shape in shapes {
        let counts: Vec<String> = (runs.iter())
            .map(|run| {
                let count = checked.get(&(shape, *run)).copied().unwrap_or(0);
                format!("{count:>width$}", width = run.len())
            })
            .collect();
        println!("{shape:<24} {}", counts.join(" "));
    }
    let threads: Vec<String> = (by_threads.iter())
        .map(|(threads, count)| format!("{count} on {threads} thread(s)"))
        .collect();
    if !threads.is_empty() {
        println!("by thread count: {}", threads.join(", "));
    }
    println!("with the clock put near the middle of its range: {late_clock}");
    let total: u64 = checked.values().sum();
    println!(
        "total: {total} batches checked in {histories} histories, {divergences} divergences, \
         {:.0} s",
        elapsed.as_secs_f64()
    );
}
