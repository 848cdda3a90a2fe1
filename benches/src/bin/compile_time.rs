//! The build cost of generated code: the same program of N rules written for dred, ascent
//! and crepe, each built alone (its dependencies already built, incremental compilation
//! off, so that every build is cold), in debug and release, side by side in one run.
//!
//! The program: one input relation `Base(u32, u32)`; `L1(x, y) <- Base(x, y)`; each
//! `L(i+1)` extends `L(i)` by one `Base` edge, and every tenth by two (a three-atom body);
//! the last relation feeds `L1`, so that all of them form one recursive component.
//!
//! ```sh
//! cargo run --release -p dred-benches --bin compile_time            # N = 10, 100, 300
//! DRED_COMPILE_SIZES=10,100 cargo run --release -p dred-benches --bin compile_time
//! DRED_COMPILE_BASELINE=/path/to/an/older/dred cargo run --release -p dred-benches --bin compile_time
//! ```
//!
//! `DRED_COMPILE_BASELINE` adds a column: the same program built against another checkout
//! of dred (a `git worktree` of an older commit), so that a change to the generated code
//! is measured side by side with what it replaces.
//!
//! Each build runs under GNU time (`/usr/bin/time`, Debian's package `time`), whose
//! maximum resident set size is rustc's peak: cargo waits for rustc, and a process's peak
//! includes those of the children it waited for. The table goes to
//! `target/dred-bench/compile_time.md`, which `report` puts into BENCHMARKS.md, and to
//! standard output; the scratch crates live in `target/dred-bench/compile-time/`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use dred_benches::env_or;

/// The engines, in the table's order (`dred-baseline` only with `DRED_COMPILE_BASELINE`).
const ENGINES: [&str; 4] = ["dred", "ascent", "crepe", "dred-baseline"];

/// The name of relation `L{i}`.
fn level(i: usize) -> String {
    format!("L{i}")
}

/// The rules as `(head, body)` pairs of atoms, each atom `(relation, variables)`, with
/// relation names in dred's and crepe's case (ascent's are lowered).
fn rules(n: usize) -> Vec<(Atom, Vec<Atom>)> {
    let atom = |relation: String, vars: [&'static str; 2]| (relation, vars);
    let mut rules = vec![(
        atom(level(1), ["x", "y"]),
        vec![atom("Base".into(), ["x", "y"])],
    )];
    for i in 1..n {
        let body = if (i + 1) % 10 == 0 {
            vec![
                atom(level(i), ["x", "y"]),
                atom("Base".into(), ["y", "z"]),
                atom("Base".into(), ["z", "w"]),
            ]
        } else {
            vec![atom(level(i), ["x", "y"]), atom("Base".into(), ["y", "z"])]
        };
        let head_end = if (i + 1) % 10 == 0 { "w" } else { "z" };
        rules.push((atom(level(i + 1), ["x", head_end]), body));
    }
    rules.push((atom(level(1), ["x", "y"]), vec![atom(level(n), ["x", "y"])]));
    rules
}

type Atom = (String, [&'static str; 2]);

fn render(atom: &Atom, lower: bool) -> String {
    let name = if lower {
        atom.0.to_lowercase()
    } else {
        atom.0.clone()
    };
    format!("{name}({}, {})", atom.1[0], atom.1[1])
}

fn render_rule(rule: &(Atom, Vec<Atom>), arrow: &str, lower: bool) -> String {
    let body: Vec<String> = rule.1.iter().map(|a| render(a, lower)).collect();
    format!(
        "    {} {arrow} {};\n",
        render(&rule.0, lower),
        body.join(", ")
    )
}

/// The program's source for `engine`, with a `main` that runs it on a chain of 50 edges.
fn source(engine: &str, n: usize) -> String {
    let rules = rules(n);
    let mut out = String::new();
    match engine {
        "dred" | "dred-baseline" => {
            out.push_str("dred::datalog! {\n    pub struct Chain;\n");
            out.push_str("    @input pub struct Base(pub u32, pub u32);\n");
            for i in 1..=n {
                let _ = writeln!(out, "    pub struct {}(pub u32, pub u32);", level(i));
            }
            for rule in &rules {
                out.push_str(&render_rule(rule, "<-", false));
            }
            out.push_str("}\n\nfn main() {\n");
            out.push_str("    let edges = (0..50).map(|i| Base(i, i + 1));\n");
            out.push_str(
                "    let (program, _) = Chain::materialize(dred::Batch::new().insert_all(edges));\n",
            );
            out.push_str("    println!(\"{}\", program.relation::<L1>().len());\n}\n");
        }
        "ascent" => {
            out.push_str("ascent::ascent! {\n    struct Chain;\n");
            out.push_str("    relation base(u32, u32);\n");
            for i in 1..=n {
                let _ = writeln!(out, "    relation {}(u32, u32);", level(i).to_lowercase());
            }
            for rule in &rules {
                out.push_str(&render_rule(rule, "<--", true));
            }
            out.push_str("}\n\nfn main() {\n    let mut program = Chain::default();\n");
            out.push_str("    program.base = (0..50).map(|i| (i, i + 1)).collect();\n");
            out.push_str("    program.run();\n    println!(\"{}\", program.l1.len());\n}\n");
        }
        "crepe" => {
            out.push_str("crepe::crepe! {\n    @input\n    struct Base(u32, u32);\n");
            for i in 1..=n {
                let output = if i == 1 { "    @output\n" } else { "" };
                let _ = writeln!(out, "{output}    struct {}(u32, u32);", level(i));
            }
            for rule in &rules {
                out.push_str(&render_rule(rule, "<-", false));
            }
            out.push_str("}\n\nfn main() {\n    let mut runtime = Crepe::new();\n");
            out.push_str("    runtime.extend((0..50).map(|i| Base(i, i + 1)));\n");
            out.push_str("    let (l1,) = runtime.run();\n    println!(\"{}\", l1.len());\n}\n");
        }
        _ => unreachable!("an engine of ENGINES"),
    }
    out
}

/// The scratch workspace: one crate per engine, sharing a target directory and the
/// repository's lock file (so that the peers' versions are the suite's).
fn workspace(root: &Path, repository: &Path, engines: &[(&str, PathBuf)]) -> std::io::Result<()> {
    std::fs::create_dir_all(root)?;
    let members: Vec<String> = engines.iter().map(|(e, _)| format!("\"{e}\"")).collect();
    std::fs::write(
        root.join("Cargo.toml"),
        format!(
            "[workspace]\nmembers = [{}]\nresolver = \"2\"\n",
            members.join(", ")
        ),
    )?;
    let lock = root.join("Cargo.lock");
    if !lock.exists() {
        std::fs::copy(repository.join("Cargo.lock"), lock)?;
    }
    for (engine, dred) in engines {
        let dependency = match *engine {
            "ascent" => "ascent = \"0.8\"".to_string(),
            "crepe" => "crepe = \"0.2\"".to_string(),
            _ => format!("dred = {{ path = {:?} }}", dred.display().to_string()),
        };
        std::fs::create_dir_all(root.join(engine).join("src"))?;
        std::fs::write(
            root.join(engine).join("Cargo.toml"),
            format!(
                "[package]\nname = \"bench-{engine}\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
                 publish = false\n\n[[bin]]\nname = \"{engine}-program\"\npath = \"src/main.rs\"\n\n\
                 [dependencies]\n{dependency}\n"
            ),
        )?;
    }
    Ok(())
}

/// One cold build of `engine`'s crate: wall seconds and rustc's peak resident memory in
/// KiB, or why it failed.
fn build(root: &Path, engine: &str, release: bool) -> Result<(f64, u64), String> {
    let measured = root.join("time.txt");
    let mut command = Command::new("/usr/bin/time");
    command
        .args(["-f", "%e %M", "-o"])
        .arg(&measured)
        .args(["cargo", "build", "--quiet", "-p"])
        .arg(format!("bench-{engine}"))
        .current_dir(root)
        .env("CARGO_INCREMENTAL", "0")
        .env_remove("RUSTFLAGS");
    if release {
        command.arg("--release");
    }
    let output = command
        .output()
        .map_err(|e| format!("could not run /usr/bin/time (apt-get install time): {e}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    let text = std::fs::read_to_string(&measured).map_err(|e| e.to_string())?;
    let fields: Vec<&str> = text.split_whitespace().collect();
    match fields.as_slice() {
        [.., seconds, kib] => Ok((
            seconds.parse().map_err(|_| text.clone())?,
            kib.parse().map_err(|_| text.clone())?,
        )),
        _ => Err(format!("unexpected output of GNU time: {text}")),
    }
}

/// Writes `engine`'s program of `n` rules, and marks it changed for cargo.
fn write_program(root: &Path, engine: &str, n: usize) -> std::io::Result<()> {
    std::fs::write(root.join(engine).join("src/main.rs"), source(engine, n))
}

fn main() {
    let sizes: String = env_or("DRED_COMPILE_SIZES", "10,100,300".to_string());
    let sizes: Vec<usize> = sizes
        .split(',')
        .map(|s| s.trim().parse().expect("DRED_COMPILE_SIZES: numbers"))
        .collect();
    let repository: PathBuf = std::env::current_dir().expect("a current directory");
    let baseline: String = env_or("DRED_COMPILE_BASELINE", String::new());
    let engines: Vec<(&str, PathBuf)> = ENGINES
        .iter()
        .filter(|&&e| e != "dred-baseline" || !baseline.is_empty())
        .map(|&e| {
            let dred = if e == "dred-baseline" {
                PathBuf::from(&baseline)
            } else {
                repository.clone()
            };
            (e, dred)
        })
        .collect();
    let root = repository.join("target/dred-bench/compile-time");
    workspace(&root, &repository, &engines).expect("the scratch workspace");

    let mut table = String::from(
        "| N | profile | dred | ascent | crepe | dred / ascent (time) | dred / ascent (memory) |",
    );
    if !baseline.is_empty() {
        table.push_str(" dred before the change |");
    }
    table.push_str("\n|---|---|---|---|---|---|---|");
    table.push_str(if baseline.is_empty() { "\n" } else { "---|\n" });
    for release in [false, true] {
        let profile = if release { "release" } else { "debug" };
        // The dependencies, built once per profile with the smallest program.
        for &(engine, _) in &engines {
            write_program(&root, engine, 1).expect("a program");
            if let Err(error) = build(&root, engine, release) {
                panic!("{engine} ({profile}) does not build:\n{error}");
            }
        }
        for &n in &sizes {
            let mut cells = Vec::new();
            for &(engine, _) in &engines {
                write_program(&root, engine, n).expect("a program");
                let (seconds, kib) = build(&root, engine, release)
                    .unwrap_or_else(|e| panic!("{engine}, N = {n} ({profile}):\n{e}"));
                eprintln!("{engine:>13} N = {n:>4} {profile:>7}: {seconds:>7.1} s, {kib} KiB");
                cells.push((seconds, kib));
            }
            let cell = |(s, kib): (f64, u64)| format!("{s:.1} s, {} MiB", kib / 1024);
            let _ = write!(
                table,
                "| {n} | {profile} | {} | {} | {} | {:.2}× | {:.2}× |",
                cell(cells[0]),
                cell(cells[1]),
                cell(cells[2]),
                cells[0].0 / cells[1].0,
                cells[0].1 as f64 / cells[1].1 as f64,
            );
            if let Some(&before) = cells.get(3) {
                let _ = write!(table, " {} |", cell(before));
            }
            table.push('\n');
        }
    }
    let out = repository.join("target/dred-bench/compile_time.md");
    std::fs::write(&out, &table).expect("target/dred-bench/compile_time.md");
    print!("{table}");
}
