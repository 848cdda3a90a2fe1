//! Every engine computes the same number of derived facts on small instances of every
//! workload, before and after an update with every strategy (so the suite compares equal
//! work).

use dred_benches::engines::*;
use dred_benches::*;

fn small_workloads() -> Vec<Workload> {
    let graph = |rules, edges| Workload {
        name: String::new(),
        rules,
        inputs: vec![("E", edges)],
    };
    vec![
        graph(Rules::TcNonlinear, random_sparse(60, 90, 1)),
        graph(Rules::TcLinear, random_sparse(60, 120, 2)),
        graph(Rules::TcNonlinear, chain_with_shortcuts(50, 40, 3)),
        graph(Rules::TcLinear, cycle_with_chords(50, 10, 4)),
        Workload {
            name: String::new(),
            rules: Rules::SameGeneration,
            inputs: vec![("Par", binary_tree(5))],
        },
        Workload {
            name: String::new(),
            rules: Rules::Andersen,
            inputs: andersen(60, 150, 5),
        },
    ]
}

#[test]
fn all_engines_derive_the_same_facts() {
    for workload in small_workloads() {
        let (mut dred, expected) = DredProgram::from_scratch(&workload);
        assert!(expected > 0, "{:?}", workload.rules);
        assert_eq!(
            ascent_scratch(&workload),
            expected,
            "ascent {:?}",
            workload.rules
        );
        assert_eq!(
            ascent::ascent_par_scratch(&workload, &ascent::pool(2)),
            expected,
            "ascent_par {:?}",
            workload.rules
        );
        assert_eq!(
            crepe_scratch(&workload),
            expected,
            "crepe {:?}",
            workload.rules
        );
        assert_eq!(
            datafrog_scratch(&workload),
            expected,
            "datafrog {:?}",
            workload.rules
        );

        let batch = update_facts(&workload, 5, 9);
        let changed = apply(&workload, &batch.0, &batch.1);
        let recomputed = ascent_scratch(&changed);
        for strategy in [dred::Strategy::AltProof, dred::Strategy::Auto] {
            let mut other = dred.clone();
            other.update_using(&batch.0, &batch.1, strategy);
            assert_eq!(
                recomputed,
                other.derived_len(),
                "{strategy:?} {:?}",
                workload.rules
            );
        }
        dred.update(&batch.0, &batch.1);
        assert_eq!(
            recomputed,
            dred.derived_len(),
            "after update {:?}",
            workload.rules
        );
        let (_, latencies, count) = differential_session(&workload, &[batch]);
        assert_eq!(latencies.len(), 1);
        assert_eq!(
            count,
            dred.derived_len(),
            "differential {:?}",
            workload.rules
        );
    }
}
