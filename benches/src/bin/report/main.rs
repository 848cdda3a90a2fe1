//! Writes BENCHMARKS.md (to stdout) from one run of the suite: criterion's medians
//! (`target/criterion`), differential-dataflow's session (`target/dred-bench/differential.jsonl`),
//! the peers' recompute after each change, in rotation with dred's update
//! (`target/dred-bench/recompute.jsonl`), the guard's pairs (`target/dred-bench/guard.jsonl`)
//! and the peak-memory processes (`target/dred-bench/memory.txt`). Run by `benches/run.sh`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use dred::Strategy;
use dred_benches::engines::DredProgram;
mod sections;
mod targets;

use sections::*;
use targets::*;

use dred_benches::{
    mixed_batch, update_facts, update_sizes, workloads, ALT_PROOF_MAX_BATCH, UPDATE_SIZES,
};

/// A criterion median in seconds, with the bounds of its 95% confidence interval.
#[derive(Clone, Copy)]
struct Estimate {
    median: f64,
    low: f64,
    high: f64,
}

/// criterion's medians, by (group, function).
fn criterion_medians(root: &Path) -> BTreeMap<(String, String), Estimate> {
    let mut medians = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.ends_with("new/benchmark.json") {
                let read = |p: &Path| -> Option<serde_json::Value> {
                    serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()
                };
                let (Some(bench), Some(estimates)) =
                    (read(&path), read(&path.with_file_name("estimates.json")))
                else {
                    continue;
                };
                let group = bench["group_id"].as_str().unwrap_or_default().to_string();
                let function = bench["function_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                let median = &estimates["median"];
                let interval = &median["confidence_interval"];
                let seconds = |ns: &serde_json::Value| Some(ns.as_f64()? / 1e9);
                if let (Some(median), Some(low), Some(high)) = (
                    seconds(&median["point_estimate"]),
                    seconds(&interval["lower_bound"]),
                    seconds(&interval["upper_bound"]),
                ) {
                    medians.insert((group, function), Estimate { median, low, high });
                }
            }
        }
    }
    medians
}

/// The JSON objects of a `.jsonl` file with one line per workload, by workload.
fn by_workload(path: &str) -> BTreeMap<String, serde_json::Value> {
    let mut lines = BTreeMap::new();
    if let Ok(text) = std::fs::read_to_string(path) {
        for line in text.lines() {
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(line) {
                lines.insert(
                    value["workload"].as_str().unwrap_or_default().to_string(),
                    value,
                );
            }
        }
    }
    lines
}

fn seconds(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{:.0} µs", s * 1e6)
    }
}

fn machine_note() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|m| m.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or_else(|| "?".into(), |kib| format!("{} GiB", kib / (1 << 20)));
    format!("{cpu}, {cores} cores, {memory}; a shared machine, so ratios (measured in one run) mean more than absolute times")
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("--count-workloads") {
        println!("{}", workloads().len());
        return;
    }
    let medians = criterion_medians(Path::new("target/criterion"));
    let estimate = |group: &str, function: &str| {
        medians
            .get(&(group.to_string(), function.to_string()))
            .copied()
    };
    let median = |group: &str, function: &str| estimate(group, function).map(|e| e.median);

    let differential = by_workload("target/dred-bench/differential.jsonl");
    let rotation = by_workload("target/dred-bench/rotation.jsonl");
    // The peers' recompute after each change, by (workload, change, k) with `change`
    // `delete`, `mixed` or `reinsert`: the fastest peer, its time and the facts it derived,
    // and dred's median speed-up on the same change in rotation with them, if measured
    // (`src/bin/recompute.rs`).
    let mut recomputes: BTreeMap<(String, String, u64), (String, f64, u64)> = BTreeMap::new();
    let mut speedups: BTreeMap<(String, String, u64), f64> = BTreeMap::new();
    // The lines with dred's update, in their order, for their own section.
    let mut rotated_updates: Vec<serde_json::Value> = Vec::new();
    if let Ok(text) = std::fs::read_to_string("target/dred-bench/recompute.jsonl") {
        for line in text.lines() {
            let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            // Each peer's time is a field `<peer>_s`.
            let fastest = value
                .as_object()
                .into_iter()
                .flatten()
                .filter_map(|(field, time)| {
                    Some((field.strip_suffix("_s")?.to_string(), time.as_f64()?))
                })
                .min_by(|a, b| a.1.total_cmp(&b.1));
            if let (Some(workload), Some(k), Some((peer, time)), Some(derived)) = (
                value["workload"].as_str(),
                value["k"].as_u64(),
                fastest,
                value["derived"].as_u64(),
            ) {
                let change = value["change"].as_str().unwrap_or("delete").to_string();
                let key = (workload.to_string(), change, k);
                if let Some(speedup) = value["speedup"].as_f64() {
                    speedups.insert(key.clone(), speedup);
                    rotated_updates.push(value.clone());
                }
                recomputes.insert(key, (peer, time, derived));
            }
        }
    }
    let in_rotation = |workload: &str, change: &str, k: usize| {
        speedups
            .get(&(workload.to_string(), change.to_string(), k as u64))
            .copied()
    };
    let mut memory: BTreeMap<(String, usize), Vec<u64>> = BTreeMap::new();
    if let Ok(text) = std::fs::read_to_string("target/dred-bench/memory.txt") {
        for line in text.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields.as_slice() {
                [engine, value] => {
                    memory.insert((engine.to_string(), 0), value.parse().into_iter().collect());
                }
                [engine, index, values @ ..] => {
                    let values = values.iter().filter_map(|v| v.parse().ok()).collect();
                    memory.insert((engine.to_string(), index.parse().unwrap_or(0)), values);
                }
                _ => {}
            }
        }
    }
    let mib = |kib: u64| format!("{:.0}", kib as f64 / 1024.0);

    let mut out = String::new();
    let _ = writeln!(out, "# dred benchmarks\n");
    let _ = writeln!(
        out,
        "Regenerate with `bash benches/run.sh` (criterion medians; differential-dataflow by \
         `benches/src/bin/differential.rs` and the peers' recompute after a change by \
         `benches/src/bin/recompute.rs`, medians of their repetitions; peak memory by one \
         process per engine and workload). Machine: {}.\n",
        machine_note()
    );
    let setting =
        |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.into());
    let _ = writeln!(
        out,
        "Settings of this run: differential-dataflow batch sizes `{}`, repetitions {}; peers' recompute repetitions {}; dred memory soak {} batch pairs; guard pairs {}; rotation rounds {}.\n",
        setting("DRED_DD_SIZES", "the suite's"),
        setting("DRED_DD_REPS", "11"),
        setting("DRED_RECOMPUTE_REPS", "3"),
        setting("DRED_SOAK", "20"),
        setting("DRED_GUARD_PAIRS", "9"),
        setting("DRED_ROTATIONS", "7")
    );
    let peers = ["ascent", "crepe", "datafrog"];
    let targets_at = out.len();
    let mut verdicts: Vec<Verdict> = Vec::new();
    // The fastest peer from scratch, by workload: the recompute after a re-insertion, which
    // gives back the workload's own inputs.
    let mut scratch_fastest: BTreeMap<String, (String, f64)> = BTreeMap::new();

    let _ = writeln!(out, "## From scratch\n");
    let baselines: Vec<u64> = (0..workloads().len())
        .filter_map(|index| {
            memory
                .get(&("baseline".to_string(), index))?
                .first()
                .copied()
        })
        .collect();
    if let (Some(low), Some(high)) = (baselines.iter().min(), baselines.iter().max()) {
        let (low, high) = (mib(*low), mib(*high));
        let range = if low == high {
            low
        } else {
            format!("{low}–{high}")
        };
        let _ = writeln!(
            out,
            "Every peak includes the process itself: with a workload's inputs generated and \
             no engine run, it peaks at {range} MiB.\n"
        );
    }
    let _ = writeln!(
        out,
        "Criterion measures the engines one after another, so a host that slows down for a \
         minute moves one engine's median and not another's. Beside each ratio is the lowest \
         and highest one allowed by the 95% confidence intervals of the two medians: where \
         that range spans 1.0×, this run alone does not decide the target.\n"
    );
    let _ = writeln!(
        out,
        "| workload | derived facts | dred | ascent | crepe | datafrog | differential | dred / fastest peer | peak MiB dred / ascent / crepe / datafrog / differential |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---|");
    for (index, workload) in workloads().iter().enumerate() {
        let group = format!("scratch/{}", workload.name);
        let dred_estimate = estimate(&group, "dred");
        let dred = dred_estimate.map(|e| e.median);
        let peer_times: Vec<Option<f64>> = peers.iter().map(|p| median(&group, p)).collect();
        let dd = differential
            .get(&workload.name)
            .and_then(|v| v["scratch_s"].as_f64());
        let fastest = peer_times
            .iter()
            .flatten()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let fastest_at = peer_times.iter().position(|t| *t == Some(fastest));
        if let Some(at) = fastest_at {
            scratch_fastest.insert(workload.name.clone(), (peers[at].to_string(), fastest));
        }
        // The lowest and highest ratio the two medians' confidence intervals allow.
        let interval = dred_estimate
            .zip(fastest_at.and_then(|at| estimate(&group, peers[at])))
            .map(|(dred, peer)| {
                format!("{:.2}–{:.2}×", dred.low / peer.high, dred.high / peer.low)
            });
        let derived = differential
            .get(&workload.name)
            .and_then(|v| v["facts"].as_u64())
            .map_or_else(|| "?".into(), |f| f.to_string());
        let cell = |t: Option<f64>| t.map_or_else(|| "–".into(), seconds);
        let ratio = dred.map_or_else(
            || "–".into(),
            |d| match &interval {
                Some(interval) => format!("{:.2}× ({interval})", d / fastest),
                None => format!("{:.2}×", d / fastest),
            },
        );
        let peak_kib = |engine: &str| {
            memory
                .get(&(engine.to_string(), index))
                .and_then(|v| v.first().copied())
        };
        let engines = ["dred", "ascent", "crepe", "datafrog", "differential"];
        let peaks: Vec<String> = engines
            .iter()
            .map(|e| peak_kib(e).map_or_else(|| "–".into(), mib))
            .collect();
        verdicts.push(Verdict {
            target: Target::Scratch,
            workload: workload.name.clone(),
            measured: dred.map_or_else(
                || "–".into(),
                |d| {
                    let mut within = interval
                        .as_ref()
                        .map_or_else(String::new, |i| format!("; 95% interval {i}"));
                    if let Some(ratio) = rotation
                        .get(&workload.name)
                        .and_then(|v| v["ratio"].as_f64())
                    {
                        let _ = write!(within, "; in rotation {ratio:.2}×");
                    }
                    format!(
                        "{} against {} ({:.2}×{within})",
                        seconds(d),
                        seconds(fastest),
                        d / fastest
                    )
                },
            ),
            met: dred.filter(|_| fastest.is_finite()).map(|d| d <= fastest),
        });
        let smallest_peer = engines[1..].iter().filter_map(|e| peak_kib(e)).min();
        let peak_ratio = peak_kib("dred")
            .zip(smallest_peer)
            .map(|(dred, peer)| dred as f64 / peer as f64);
        verdicts.push(Verdict {
            target: Target::PeakMemory,
            workload: workload.name.clone(),
            measured: match (peak_kib("dred"), smallest_peer, peak_ratio) {
                (Some(dred), Some(peer), Some(r)) => {
                    format!("{} against {} MiB ({r:.2}×)", mib(dred), mib(peer))
                }
                _ => "–".into(),
            },
            met: peak_ratio.map(|r| r <= 1.25),
        });
        let _ = writeln!(
            out,
            "| {} | {derived} | {} | {} | {} | {} | {} | {ratio} | {} |",
            workload.name,
            cell(dred),
            cell(peer_times[0]),
            cell(peer_times[1]),
            cell(peer_times[2]),
            cell(dd),
            peaks.join(" / ")
        );
    }
    rotation_section(&mut out, &rotation);

    let _ = writeln!(out, "\n## Deletions, by strategy\n");
    let _ = writeln!(
        out,
        "Each row deletes the same k input facts (chosen at random) from the materialized \
         workload. `fastest recompute` is the faster of ascent and datafrog materializing \
         from scratch the inputs left after the same deletion (median of \
         `DRED_RECOMPUTE_REPS`, `benches/src/bin/recompute.rs`; crepe, the slowest from \
         scratch on every workload, is not run again), with its engine. An `auto` that \
         recomputes also frees the old model's tables, which the peers' recompute, starting \
         from nothing, does not pay: where a deletion leaves little to derive (the \
         1000-fact rows) that is much of its time. The recompute guard's bound, Auto ≤ 1.2× a \
         recompute, is measured against dred's own recompute in the next section. Counts: D⁻ (the net deletion), the true derived change, what DRed \
         over-deleted and rederived, and what the alternative-proof strategy found unreachable \
         (closure facts, by reachability over the graph), checked, kept by raising its stamp, \
         found unsupported (the unreachable ones included) and rederived. Where closures are \
         kept by reachability, `alt-proof` also gives in brackets the time of alternative \
         proofs checking the closure's facts by stamps instead (the strategy before \
         reachability). `auto` names the strategy it chose (`dred`, `alt` \
         or `recompute`) in one run outside the measurement: near its guard's time budget the \
         choice can differ between runs, and the median mixes both. DRed runs only where it is not hopeless (see `update_sizes`), and \
         alternative proofs alone only on batches of at most {ALT_PROOF_MAX_BATCH} facts.\n"
    );
    let _ = writeln!(
        out,
        "| workload | k | D⁻ | derived change | DRed | over-deleted / rederived | alt-proof | unreachable / checked / restamped / unsupported / rederived | auto | differential | fastest recompute | auto ÷ recompute | recompute ÷ auto | differential ÷ auto |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    let cell = |t: Option<f64>| t.map_or_else(|| "–".into(), seconds);
    // A peer's recompute time, with the peer's name.
    let peer_cell = |recompute: Option<(&String, f64)>| {
        recompute.map_or_else(
            || "–".into(),
            |(peer, time)| format!("{} ({peer})", seconds(time)),
        )
    };
    let mut mixed_rows = String::new();
    for workload in workloads() {
        let group = format!("update/{}", workload.name);
        let base = DredProgram::materialize(&workload);
        let dred_sizes = update_sizes(&workload);
        for k in UPDATE_SIZES {
            let (deletions, _) = update_facts(&workload, k, 7);
            let run = |strategy| {
                let mut program = base.clone();
                let counts = program.update_using(&deletions, &[], strategy);
                (counts, program.derived_len())
            };
            let (auto, after) = run(Strategy::Auto);
            let derived_change = base.derived_len() - after;
            // Alternative proofs' counts where they ran: always on small batches, and
            // wherever Auto chose them.
            let alt = if k <= ALT_PROOF_MAX_BATCH {
                Some(run(Strategy::AltProof).0)
            } else {
                (auto.strategy == Strategy::AltProof).then_some(auto)
            };
            let alt_counts = alt.map_or_else(
                || "–".into(),
                |c| {
                    format!(
                        "{} / {} / {} / {} / {}",
                        c.unreachable, c.checked, c.restamped, c.overdeleted, c.rederived
                    )
                },
            );
            let dred_counts = dred_sizes
                .contains(&k)
                .then(|| run(Strategy::DRed).0)
                .map_or_else(
                    || "–".into(),
                    |c| format!("{} / {}", c.overdeleted, c.rederived),
                );
            let auto_time = median(&group, &format!("auto/delete-{k}"));
            // Only rows this suite measures: criterion keeps results of rows a former
            // version ran, and they must not pass for this run's.
            let measured = |strategy: &str, row: &str| {
                let runs = match strategy {
                    "dred" => dred_sizes.contains(&k),
                    "altproof" => k <= ALT_PROOF_MAX_BATCH,
                    "stamps" => k <= ALT_PROOF_MAX_BATCH && base.reachability(),
                    _ => true,
                };
                runs.then(|| median(&group, &format!("{strategy}/{row}-{k}")))
                    .flatten()
            };
            let dd = differential
                .get(&workload.name)
                .and_then(|v| v["delete_s"][k.to_string()].as_f64());
            let recompute = recomputes.get(&(workload.name.clone(), "delete".into(), k as u64));
            if let Some((_, _, derived)) = recompute {
                assert_eq!(
                    *derived, after as u64,
                    "the peers' recompute and dred's update disagree on {} after deleting {k}",
                    workload.name
                );
            }
            let fastest = recompute.map(|(_, time, _)| *time);
            let ratio = |num: Option<f64>, den: Option<f64>| match (num, den) {
                (Some(n), Some(d)) if n.is_finite() && d > 0.0 => format!("{:.2}×", n / d),
                _ => "–".into(),
            };
            let chose = match auto.strategy {
                Strategy::Recompute => "recompute",
                Strategy::DRed => "dred",
                _ => "alt",
            };
            if let Some(verdict) = Verdict::of_update(
                &workload.name,
                Change::Delete,
                k,
                auto_time.map(|t| (t, format!("auto {} ({chose})", seconds(t)))),
                fastest,
                in_rotation(&workload.name, "delete", k),
                dd,
            ) {
                verdicts.push(verdict);
            }
            let _ = writeln!(
                out,
                "| {} | {k} | {} | {derived_change} | {} | {dred_counts} | {} | {alt_counts} | {} ({chose}) | {} | {} | {} | {} | {} |",
                workload.name,
                auto.net_delete,
                cell(measured("dred", "delete")),
                match measured("stamps", "delete") {
                    Some(stamps) => format!(
                        "{} ({} by stamps)",
                        cell(measured("altproof", "delete")),
                        seconds(stamps)
                    ),
                    None => cell(measured("altproof", "delete")),
                },
                cell(auto_time),
                cell(dd),
                peer_cell(recompute.map(|(peer, time, _)| (peer, *time))),
                ratio(auto_time, fastest),
                ratio(fastest, auto_time),
                ratio(dd, auto_time),
            );
            // A re-insertion gives back the workload's inputs: the peers' recompute is their
            // from-scratch time. A mixed batch's recompute is measured like a deletion's.
            let reinsert_time = measured("any", "reinsert");
            let dd_of = |field: &str| {
                differential
                    .get(&workload.name)
                    .and_then(|v| v[field][k.to_string()].as_f64())
            };
            let (dd_reinsert, dd_mixed) = (dd_of("insert_s"), dd_of("mixed_s"));
            let scratch = scratch_fastest.get(&workload.name);
            let mixed = recomputes.get(&(workload.name.clone(), "mixed".into(), k as u64));
            if let Some((_, _, derived)) = mixed {
                let (mixed_del, mixed_ins) = mixed_batch(&workload, k);
                let mut program = base.clone();
                program.update_using(&mixed_del, &mixed_ins, Strategy::Auto);
                assert_eq!(
                    *derived,
                    program.derived_len() as u64,
                    "the peers' recompute and dred's update disagree on {} after the mixed batch of {k}",
                    workload.name
                );
            }
            let auto_mixed = measured("auto", "mixed");
            verdicts.extend(Verdict::of_update(
                &workload.name,
                Change::Reinsert,
                k,
                reinsert_time.map(|t| (t, format!("re-insert {}", seconds(t)))),
                scratch.map(|(_, time)| *time),
                in_rotation(&workload.name, "reinsert", k),
                dd_reinsert,
            ));
            verdicts.extend(Verdict::of_update(
                &workload.name,
                Change::Mixed,
                k,
                auto_mixed.map(|t| (t, format!("auto {}", seconds(t)))),
                mixed.map(|(_, time, _)| *time),
                in_rotation(&workload.name, "mixed", k),
                dd_mixed,
            ));
            let _ = writeln!(
                mixed_rows,
                "| {} | {k} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                workload.name,
                cell(reinsert_time),
                cell(dd_reinsert),
                peer_cell(scratch.map(|(peer, time)| (peer, *time))),
                ratio(scratch.map(|(_, time)| *time), reinsert_time),
                ratio(dd_reinsert, reinsert_time),
                cell(measured("dred", "mixed")),
                cell(measured("altproof", "mixed")),
                cell(auto_mixed),
                cell(dd_mixed),
                peer_cell(mixed.map(|(peer, time, _)| (peer, *time))),
                ratio(mixed.map(|(_, time, _)| *time), auto_mixed),
                ratio(dd_mixed, auto_mixed),
            );
        }
    }
    guard_section(&mut out, &mut verdicts);
    let _ = writeln!(out, "\n## Re-insertions and mixed batches\n");
    let _ = writeln!(
        out,
        "Re-inserting the k deleted facts (semi-naive insertion, the same under every \
         strategy), and mixed batches (the ⌈k/2⌉ first of those deletions with ⌊k/2⌋ new \
         facts) by strategy, each beside differential-dataflow's update on the same batch and \
         the fastest peer's recompute: after a re-insertion the inputs are the workload's own, \
         so that is its from-scratch time (the table above); after a mixed batch, ascent and \
         datafrog on the changed inputs (`benches/src/bin/recompute.rs`).\n"
    );
    let _ = writeln!(
        out,
        "| workload | k | re-insert | differential | fastest recompute | recompute ÷ re-insert | differential ÷ re-insert | DRed mixed | alt-proof mixed | auto mixed | differential | fastest recompute | recompute ÷ auto | differential ÷ auto |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    out.push_str(&mixed_rows);
    updates_in_rotation_section(&mut out, &rotated_updates);

    let _ = writeln!(out, "\n## Memory while updating\n");
    let _ = writeln!(
        out,
        "dred's peak resident set after materializing, and after the soak's batch pairs (each a \
         1-fact deletion then its re-insertion, with `Strategy::Auto`). The last column repeats \
         the soak with glibc's dynamic mmap threshold off (`MALLOC_MMAP_THRESHOLD_=131072`): \
         glibc raises that threshold when a large block is freed, so after a recompute has \
         dropped the old tables the new, growing ones are served from its heap, whose freed \
         holes count in the resident set. The last two columns are what the program's \
         relations keep allocated (`heap_bytes()`: fact tables, index rows, retired facts, \
         spare capacity), allocator aside: after materializing, and after the soak.\n"
    );
    let _ = writeln!(
        out,
        "| workload | peak after scratch (MiB) | peak after updates (MiB) | ratio | ratio, mmap threshold fixed | tables after scratch (MiB) | tables after updates |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    let ratio = |before: u64, after: u64| format!("{:.2}×", after as f64 / before as f64);
    for (index, workload) in workloads().iter().enumerate() {
        let Some([scratch, soak, tables @ ..]) = memory
            .get(&("dred".to_string(), index))
            .map(|v| v.as_slice())
        else {
            continue;
        };
        let fixed = match memory.get(&("dred-fixed-mmap".to_string(), index)) {
            Some(v) if v.len() >= 2 => ratio(v[0], v[1]),
            _ => "–".into(),
        };
        let (tables_scratch, tables_soak) = match tables {
            [materialized, updated, ..] => (
                format!("{:.1}", *materialized as f64 / (1 << 20) as f64),
                ratio(*materialized, *updated),
            ),
            _ => ("–".into(), "–".into()),
        };
        verdicts.push(Verdict {
            target: Target::MemoryWhileUpdating,
            workload: workload.name.clone(),
            measured: format!(
                "{} → {} MiB ({})",
                mib(*scratch),
                mib(*soak),
                ratio(*scratch, *soak)
            ),
            met: Some(*soak as f64 <= 1.25 * *scratch as f64),
        });
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {fixed} | {tables_scratch} | {tables_soak} |",
            workload.name,
            mib(*scratch),
            mib(*soak),
            ratio(*scratch, *soak),
        );
    }
    query_section(&mut out, &median, &memory);
    compile_time_section(&mut out);
    verdicts.sort_by_key(|v| v.target);
    out.insert_str(targets_at, &targets_section(&verdicts));
    print!("{out}");
}
