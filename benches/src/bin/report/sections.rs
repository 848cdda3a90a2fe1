//! The report's sections that read one result file each: compile time, the guard's pairs,
//! magic-set queries, and the rotations.

use super::*;

/// The build cost of generated code, from `target/dred-bench/compile_time.md`
/// (`src/bin/compile_time.rs`), if that ran.
pub(crate) fn compile_time_section(out: &mut String) {
    let Ok(table) = std::fs::read_to_string("target/dred-bench/compile_time.md") else {
        return;
    };
    let _ = writeln!(
        out,
        "\n## Compile time of generated code\n\n\
         The same program of N rules (`L1(x, y) <- Base(x, y)`; each `L(i+1)` extends `L(i)` by \
         one `Base` edge, every tenth by two; the last feeds `L1`) written for dred, ascent and \
         crepe, each binary built alone with its dependencies already built and incremental \
         compilation off; wall time, and rustc's peak resident memory (`src/bin/compile_time.rs`).\n"
    );
    out.push_str(&table);
}

/// The recompute guard's bound from `target/dred-bench/guard.jsonl` (`src/bin/guard.rs`).
pub(crate) fn guard_section(out: &mut String, verdicts: &mut Vec<Verdict>) {
    let Ok(text) = std::fs::read_to_string("target/dred-bench/guard.jsonl") else {
        return;
    };
    let rows: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let Some(pairs) = rows.first().and_then(|r| r["pairs"].as_u64()) else {
        return;
    };
    let _ = writeln!(out, "\n## The recompute guard, in pairs\n");
    let _ = writeln!(
        out,
        "{pairs} pairs per row of `Strategy::Auto` and `Strategy::Recompute` on the same \
         deletion batch, back to back, each on a fresh clone of the materialization (which \
         runs first alternates; `benches/src/bin/guard.rs`, `DRED_GUARD_PAIRS`). The bound is \
         Auto ≤ 1.2× a recompute. Rows where both recomputed outright (a large net deletion) \
         show what two measurements of the same work differ by on this machine.\n"
    );
    let _ = writeln!(
        out,
        "| workload | k | Auto recomputed | auto | recompute | auto ÷ recompute, median of pairs | worst pair |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    for row in &rows {
        let time = |key: &str| row[key].as_f64().map_or_else(|| "–".into(), seconds);
        let ratio = |key: &str| {
            row[key]
                .as_f64()
                .map_or_else(|| "–".into(), |r| format!("{r:.2}×"))
        };
        let k = row["k"].as_u64();
        verdicts.push(Verdict {
            target: if k == Some(1000) {
                Target::ThousandFacts
            } else {
                Target::Guard
            },
            workload: format!(
                "{} k = {}",
                row["workload"].as_str().unwrap_or_default(),
                row["k"]
            ),
            measured: format!(
                "{} against {} ({})",
                time("auto_s"),
                time("recompute_s"),
                ratio("ratio")
            ),
            met: row["ratio"].as_f64().map(|r| r <= 1.2),
        });
        let _ = writeln!(
            out,
            "| {} | {} | {} of {pairs} | {} | {} | {} | {} |",
            row["workload"].as_str().unwrap_or_default(),
            row["k"],
            row["auto_recomputed"],
            time("auto_s"),
            time("recompute_s"),
            ratio("ratio"),
            ratio("worst_ratio"),
        );
    }
}

/// Magic sets: one bound query against the whole relation, on a forest where the query
/// reaches one component in forty.
pub(crate) fn query_section(
    out: &mut String,
    median: &dyn Fn(&str, &str) -> Option<f64>,
    memory: &BTreeMap<(String, usize), Vec<u64>>,
) {
    use dred::runtime::FactSets;
    use dred_benches::engines::dred_programs::linear::{FromZero, TcLinear, E};
    let group = "query/forest 40×(n=60 e=90)";
    let edges = dred_benches::query_forest();
    let facts = || edges.iter().map(|&(a, b)| E(a, b));
    let full = TcLinear::materialize(dred::Batch::new().insert_all(facts()));
    let query = FromZero::materialize(dred::Batch::new().insert_all(facts()));
    let full = full.0.facts().derived_part().len();
    let query = query.0.facts().derived_part().len();
    let cell = |t: Option<f64>| t.map_or_else(|| "–".into(), seconds);
    let peak = |name: &str| {
        memory
            .get(&(name.to_string(), 0))
            .and_then(|v| v.first())
            .map_or_else(|| "–".into(), |kib| format!("{:.1}", *kib as f64 / 1024.0))
    };
    let _ = writeln!(
        out,
        "\n## Magic sets: one bound query versus the whole relation\n"
    );
    let _ = writeln!(
        out,
        "Linear closure on 40 disjoint random components (60 nodes, 90 edges each); the query \
         `R(0, _)` reaches one. The update deletes one edge of that component.\n"
    );
    let _ = writeln!(
        out,
        "| program | derived facts held | from scratch | 1-edge deletion | peak MiB |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|");
    let _ = writeln!(
        out,
        "| full relation | {full} | {} | {} | {} |",
        cell(median(group, "full/scratch")),
        cell(median(group, "full/delete-1")),
        peak("forest-full")
    );
    let _ = writeln!(
        out,
        "| query `R(0, _)` | {query} | {} | {} | {} |",
        cell(median(group, "query/scratch")),
        cell(median(group, "query/delete-1")),
        peak("forest-query")
    );
}

/// A JSON line's field `field`, in seconds, as a cell (`–` if missing).
pub(crate) fn time_field(line: &serde_json::Value, field: &str) -> String {
    line[field].as_f64().map_or_else(|| "–".into(), seconds)
}

/// A JSON line's ratio `field` as a cell (`–` if missing).
pub(crate) fn ratio_field(line: &serde_json::Value, field: &str) -> String {
    line[field]
        .as_f64()
        .map_or_else(|| "–".into(), |r| format!("{r:.2}×"))
}

/// From scratch with the engines in rotation (`src/bin/rotation.rs`), if it ran.
pub(crate) fn rotation_section(out: &mut String, rotation: &BTreeMap<String, serde_json::Value>) {
    if rotation.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## From scratch, engines in rotation\n");
    let _ = writeln!(
        out,
        "The same materializations as above, by `benches/src/bin/rotation.rs`: in each round \
         dred, ascent and datafrog run once, seconds apart, the first moving on each round; \
         a round's ratio is dred's time over the faster peer's in that round. The targets \
         are read from criterion's medians above, as #6 asks; a ratio here far from \
         criterion's says the host moved between criterion's measurements.\n"
    );
    let _ = writeln!(
        out,
        "| workload | rounds | dred | ascent | datafrog | dred / faster peer, median of rounds | least – greatest round |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    for workload in workloads() {
        let Some(value) = rotation.get(&workload.name) else {
            continue;
        };
        let workload = workload.name;
        let time = |field: &str| time_field(value, field);
        let ratio = |field: &str| ratio_field(value, field);
        let _ = writeln!(
            out,
            "| {workload} | {} | {} | {} | {} | {} | {} – {} |",
            value["rounds"].as_u64().unwrap_or(0),
            time("dred_s"),
            time("ascent_s"),
            time("datafrog_s"),
            ratio("ratio"),
            ratio("least"),
            ratio("greatest")
        );
    }
}

/// dred's updates in rotation with the peers' recompute of the same change
/// (`src/bin/recompute.rs`), if this run's recompute measured them.
pub(crate) fn updates_in_rotation_section(out: &mut String, rows: &[serde_json::Value]) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## Updates, in rotation with the peers' recompute\n");
    let _ = writeln!(
        out,
        "The changes above, by `benches/src/bin/recompute.rs`: in each repetition ascent and \
         datafrog materialize the inputs after the change and dred applies it \
         (`Strategy::Auto`, to a clone of the program before it, made outside the timing), \
         seconds apart, the first moving on each repetition. A repetition's speed-up is the \
         faster peer's time over dred's in that repetition. The targets are read from \
         criterion's medians above, as #6 asks; each update row there quotes this median too. \
         Here dred's update runs between two materializations of the peers, with the caches \
         and the allocator as they left them; criterion runs it many times in a row.\n"
    );
    let _ = writeln!(
        out,
        "| workload | change | k | dred | ascent | datafrog | faster peer ÷ dred, median | least – greatest |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|---:|---:|---:|");
    for row in rows {
        let time = |field: &str| time_field(row, field);
        let ratio = |field: &str| ratio_field(row, field);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} – {} |",
            row["workload"].as_str().unwrap_or("?"),
            row["change"].as_str().unwrap_or("?"),
            row["k"],
            time("dred"),
            time("ascent_s"),
            time("datafrog_s"),
            ratio("speedup"),
            ratio("least"),
            ratio("greatest")
        );
    }
}
