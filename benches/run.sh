#!/usr/bin/env bash
# Runs the whole benchmark suite and regenerates BENCHMARKS.md:
#   bash benches/run.sh
# Steps (each engine measured on the same inputs in this one run):
#   1. criterion: from-scratch times of every engine, dred's update latencies;
#   2. differential-dataflow's from-scratch time and update latencies (deletions,
#      re-insertions and mixed batches; its own binary), the peers' recompute after each
#      deletion, mixed batch and re-insertion (ascent and datafrog on the changed inputs,
#      in rotation with dred's update on the same change), and
#      the recompute guard's bound in back-to-back pairs of Auto and Recompute, and the
#      from-scratch times again with dred, ascent and datafrog in rotation;
#   3. peak memory, one process per engine and workload;
#   4. the build cost of generated code: the same N-rule program for dred, ascent and
#      crepe, built alone in debug and release (GNU time: apt-get install time);
#   5. the report (BENCHMARKS.md) from the results of 1-4.
# Shorter runs: DRED_DD_SIZES=1,10 DRED_DD_REPS=3 DRED_SOAK=3 DRED_GUARD_PAIRS=3 bash benches/run.sh
# (differential-dataflow's batch sizes and repetitions, dred's memory soak, the guard's
# pairs, DRED_COMPILE_SIZES the compile-time benchmark's program sizes (10,100,300);
# DRED_RECOMPUTE_REPS sets the peers' recompute repetitions, DRED_ROTATIONS the
# rounds of the rotation); the report states the values used.
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/dred-bench
mkdir -p "$out"

cargo bench -p dred-benches --bench engines
cargo bench -p dred-benches --bench query
cargo build --release -p dred-benches --bins
./target/release/differential > "$out/differential.jsonl"
./target/release/recompute > "$out/recompute.jsonl"
./target/release/rotation > "$out/rotation.jsonl"
./target/release/guard > "$out/guard.jsonl"

workloads=$(./target/release/report --count-workloads)
: > "$out/memory.txt"
for index in $(seq 0 $((workloads - 1))); do
  for engine in baseline dred ascent crepe datafrog differential; do
    echo "$engine $index $(./target/release/peak_memory "$engine" "$index" "${DRED_SOAK:-20}")" >> "$out/memory.txt"
  done
  # The same soak with glibc's dynamic mmap threshold off: it shows how much of a peak's
  # growth after recomputes is the allocator keeping freed tables in its heap.
  echo "dred-fixed-mmap $index $(MALLOC_MMAP_THRESHOLD_=131072 ./target/release/peak_memory dred "$index" "${DRED_SOAK:-20}")" >> "$out/memory.txt"
done

for program in full query; do
  echo "forest-$program $(./target/release/peak_memory "forest-$program" 0 0)" >> "$out/memory.txt"
done

./target/release/compile_time > /dev/null
./target/release/report > BENCHMARKS.md
echo "BENCHMARKS.md regenerated"
