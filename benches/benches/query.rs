//! Magic sets: maintaining one bound query (`R(0, _)`, linear closure) versus maintaining
//! the whole relation, on a forest where the query reaches one component in forty. Time
//! here; memory (facts held, peak resident set) in the report.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use dred::Batch;
use dred_benches::engines::dred_programs::linear::{FromZero, TcLinear, E};
use dred_benches::query_forest;

fn query_versus_full(c: &mut Criterion) {
    let edges = query_forest();
    // An edge of the queried component (ids below 60), deleted in the update benchmarks.
    let deleted = *edges
        .iter()
        .find(|(a, _)| *a < 60)
        .expect("an edge in component 0");
    let facts = || edges.iter().map(|&(a, b)| E(a, b));
    let mut group = c.benchmark_group("query/forest 40×(n=60 e=90)");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500));
    group.bench_function("full/scratch", |b| {
        b.iter(|| TcLinear::materialize(Batch::new().insert_all(facts())).0)
    });
    group.bench_function("query/scratch", |b| {
        b.iter(|| FromZero::materialize(Batch::new().insert_all(facts())).0)
    });
    let full = TcLinear::materialize(Batch::new().insert_all(facts())).0;
    let query = FromZero::materialize(Batch::new().insert_all(facts())).0;
    let edge = E(deleted.0, deleted.1);
    group.bench_function("full/delete-1", |b| {
        b.iter_batched(
            || full.clone(),
            |mut p| {
                p.update_with(Batch::new().delete(edge.clone()), dred::Trace::Counts);
                p
            },
            BatchSize::PerIteration,
        )
    });
    group.bench_function("query/delete-1", |b| {
        b.iter_batched(
            || query.clone(),
            |mut p| {
                p.update_with(Batch::new().delete(edge.clone()), dred::Trace::Counts);
                p
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, query_versus_full);
criterion_main!(benches);
