//! Updates that fail part-way: a column type whose `Clone`, `Hash`, `Eq`, `Ord` or `Debug` panics
//! on one chosen value, at its k-th call during an update, for every k the update reaches,
//! under every strategy. After the panic is caught, the program is either exactly as before
//! (and verifies) or poisoned: then every query and update panics saying so, `recover()`
//! gives back exactly the model from before the update, and the same batch applied again
//! gives the oracle's model. A backtrace taken at each panic names the phase it hit, so the
//! test also shows that the panics reached over-deletion, rederivation, insertion, the
//! alternative-proof checks and recomputes.

mod common;

use std::backtrace::Backtrace;
use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::panic::{catch_unwind, AssertUnwindSafe};

use common::{ground_set, oracle_derived, split_model};
use dred::runtime::poison::{Operation, Unfinished};
use dred::runtime::Program;
use dred::{Batch, Strategy, Trace};

/// The method of [`Touchy`] that panics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    Clone,
    Hash,
    Eq,
    Ord,
    Debug,
}

const METHODS: [Method; 5] = [
    Method::Clone,
    Method::Hash,
    Method::Eq,
    Method::Ord,
    Method::Debug,
];

/// The value whose methods panic when armed.
const CHOSEN: u32 = 3;

/// What panics carry, so that the hook below keeps them quiet.
const FUSE: &str = "fuse blown";

/// The fuse of this thread (each test runs on its own, and the engine on the caller's).
#[derive(Default)]
struct Fuse {
    /// The method that counts its calls on [`CHOSEN`].
    armed: Cell<Option<Method>>,
    calls: Cell<u64>,
    /// The call that panics (0: none).
    blow_at: Cell<u64>,
    /// The backtrace of the last panic.
    trace: RefCell<String>,
}

thread_local! {
    static THE_FUSE: Fuse = Fuse::default();
}

fn touch(method: Method, values: &[u32]) {
    THE_FUSE.with(|fuse| {
        if fuse.armed.get() != Some(method) || !values.contains(&CHOSEN) {
            return;
        }
        fuse.calls.set(fuse.calls.get() + 1);
        if fuse.calls.get() == fuse.blow_at.get() {
            *fuse.trace.borrow_mut() = Backtrace::force_capture().to_string();
            fuse.armed.set(None);
            std::panic::panic_any(FUSE);
        }
    });
}

/// Arms `method` to panic at its `blow_at`-th call on [`CHOSEN`] (never, for 0), runs
/// `run`, disarms, and returns how many calls it counted.
fn with_fuse<R>(method: Method, blow_at: u64, run: impl FnOnce() -> R) -> (R, u64) {
    THE_FUSE.with(|fuse| {
        fuse.armed.set(Some(method));
        fuse.calls.set(0);
        fuse.blow_at.set(blow_at);
    });
    let result = run();
    let calls = THE_FUSE.with(|fuse| {
        fuse.armed.set(None);
        fuse.calls.get()
    });
    (result, calls)
}

/// A node whose `Clone`, `Hash`, `Eq`, `Ord` and `Debug` may panic.
pub struct Touchy(u32);

impl std::fmt::Debug for Touchy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        touch(Method::Debug, &[self.0]);
        write!(f, "{}", self.0)
    }
}

impl Clone for Touchy {
    fn clone(&self) -> Self {
        touch(Method::Clone, &[self.0]);
        Touchy(self.0)
    }
}

impl Hash for Touchy {
    fn hash<H: Hasher>(&self, state: &mut H) {
        touch(Method::Hash, &[self.0]);
        self.0.hash(state);
    }
}

impl PartialEq for Touchy {
    fn eq(&self, other: &Self) -> bool {
        touch(Method::Eq, &[self.0, other.0]);
        self.0 == other.0
    }
}

impl Eq for Touchy {}

impl PartialOrd for Touchy {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Touchy {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        touch(Method::Ord, &[self.0, other.0]);
        self.0.cmp(&other.0)
    }
}

dred::datalog! {
    pub struct Net;
    @input pub struct Link(pub Touchy, pub Touchy);
    pub struct Reach(pub Touchy, pub Touchy);
    Reach(x, y) <- Link(x, y);
    Reach(x, z) <- Reach(x, y), Link(y, z);
}

/// A cycle 1 → 2 → 3 → 5 → 1 reached from 0 two ways, and a tail 3 → 6.
const LINKS: [(u32, u32); 8] = [
    (0, 1),
    (1, 2),
    (2, 3),
    (0, 2),
    (0, 4),
    (4, 3),
    (3, 5),
    (5, 1),
];

fn linked(links: &[(u32, u32)]) -> Vec<Link> {
    links
        .iter()
        .map(|&(a, b)| Link(Touchy(a), Touchy(b)))
        .collect()
}

fn network() -> Net {
    let links = linked(&LINKS).into_iter().chain(linked(&[(3, 6)]));
    Net::materialize(Batch::new().insert_all(links)).0
}

/// Cuts the cycle and one way from 0 (over-deletes most of it; rederives what 0 still
/// reaches through 2 and 4), and adds links through the chosen node and to a new one.
fn batch() -> Batch<NetFacts> {
    Batch::new()
        .delete_all(linked(&[(1, 2), (0, 4)]))
        .insert_all(linked(&[(6, 1), (3, 7)]))
}

const STRATEGIES: [Strategy; 5] = [
    Strategy::DRed,
    Strategy::AltProof,
    Strategy::BackwardForward,
    Strategy::Recompute,
    Strategy::Auto,
];

/// The maintainer's phases a panic's backtrace may name.
const PHASES: [&str; 9] = [
    "overdelete_phase",
    "rederive_phase",
    "insert_phase",
    "alt_proof",
    "unsupport_phase",
    "unprovable_phase",
    "prove",
    "recompute",
    "retain_held",
];

fn message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text.to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "?".to_string()
    }
}

/// Keeps the fuse's panics out of the test's output.
fn quiet_fuses() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let blown = info.payload().downcast_ref::<&str>() == Some(&FUSE);
        let poisoned = message(info.payload()).contains("poisoned");
        if !blown && !poisoned {
            default(info);
        }
    }));
}

/// Asserts that `call` panics saying the program is poisoned.
fn refuses<R>(what: &str, call: impl FnOnce() -> R) {
    let payload = catch_unwind(AssertUnwindSafe(call))
        .err()
        .unwrap_or_else(|| panic!("{what} answered from a poisoned program"));
    let text = message(&*payload);
    assert!(
        text.starts_with("the program is poisoned: an update (strategy "),
        "{what}: {text}"
    );
}

fn assert_refuses_everything(net: &mut Net) {
    refuses("contains", || net.contains(&Reach(Touchy(0), Touchy(1))));
    refuses("relation", || net.relation::<Reach>().len());
    refuses("facts", || net.facts());
    refuses("explain", || {
        net.explain(Reach(Touchy(0), Touchy(1))).is_ok()
    });
    refuses("verify", || net.verify().is_ok());
    refuses("write_tsv", || dred::runtime::io::write_tsv(&*net, "Reach"));
    refuses("update", || net.update(Batch::new()));
}

#[test]
fn an_update_that_panics_part_way_leaves_its_program_as_before_or_poisoned_and_recoverable() {
    quiet_fuses();
    let before = ground_set(&network().facts());
    let after = {
        let mut net = network();
        net.update(batch());
        let (inputs, derived) = split_model(&net);
        assert_eq!(derived, oracle_derived::<Net>(&inputs));
        ground_set(&net.facts())
    };
    for strategy in STRATEGIES {
        let mut phases: BTreeSet<&str> = BTreeSet::new();
        let (mut unchanged, mut poisoned) = (0, 0);
        let mut reached = Vec::new();
        for method in METHODS {
            let mut net = network();
            let pending = batch();
            let (_, calls) = with_fuse(method, 0, || {
                net.update_using(pending, strategy, Trace::Rounds)
            });
            reached.push((method, calls));
            // Values are formatted only when a report is printed, not during an update.
            assert_eq!(
                calls == 0,
                method == Method::Debug,
                "{strategy}, {method:?}"
            );
            for blow_at in 1..=calls {
                let mut net = network();
                let pending = batch();
                let (outcome, _) = with_fuse(method, blow_at, || {
                    catch_unwind(AssertUnwindSafe(|| {
                        net.update_using(pending, strategy, Trace::Rounds)
                    }))
                });
                let case = format!("{strategy}, {method:?} call {blow_at} of {calls}");
                let payload = outcome.err().unwrap_or_else(|| panic!("{case}: no panic"));
                assert_eq!(message(&*payload), FUSE, "{case}");
                let trace = THE_FUSE.with(|fuse| fuse.trace.take());
                phases.extend(PHASES.iter().copied().filter(|phase| {
                    trace.contains(&format!("maintain::phases::{phase}"))
                        || trace.contains(&format!("maintain::{phase}"))
                        || trace.contains(&format!("::{phase}\n"))
                }));
                match net.poisoned() {
                    None => {
                        unchanged += 1;
                        assert_eq!(ground_set(&net.facts()), before, "{case}");
                        assert_eq!(net.verify(), Ok(()), "{case}");
                    }
                    Some(poisoning) => {
                        poisoned += 1;
                        assert_eq!(poisoning.operation, Operation::Update(strategy), "{case}");
                        assert_refuses_everything(&mut net);
                        assert_eq!(net.recover(), Ok(Some(poisoning)), "{case}");
                        assert_eq!(net.poisoned(), None, "{case}");
                        assert_eq!(ground_set(&net.facts()), before, "{case}: recovered");
                        assert_eq!(net.verify(), Ok(()), "{case}: recovered");
                    }
                }
                net.update_using(batch(), strategy, Trace::Rounds);
                assert_eq!(ground_set(&net.facts()), after, "{case}: batch again");
            }
        }
        eprintln!(
            "{strategy}: calls reached {reached:?}; {unchanged} unchanged, {poisoned} \
             poisoned; phases hit {phases:?}"
        );
        assert!(poisoned > 0 && unchanged > 0, "{strategy}");
        let expected: &[&str] = match strategy {
            Strategy::DRed => &["overdelete_phase", "rederive_phase", "insert_phase"],
            Strategy::AltProof => &["alt_proof", "unsupport_phase", "insert_phase"],
            Strategy::BackwardForward => &["unprovable_phase", "prove", "insert_phase"],
            Strategy::Recompute | Strategy::Auto => &["recompute", "insert_phase"],
        };
        for phase in expected.iter().chain(&["retain_held"]) {
            assert!(phases.contains(phase), "{strategy}: no panic in {phase}");
        }
    }
}

#[test]
fn a_program_not_poisoned_recovers_to_itself() {
    let mut net = network();
    let before = ground_set(&net.facts());
    assert_eq!(net.poisoned(), None);
    assert_eq!(net.recover(), Ok(None));
    assert_eq!(ground_set(&net.facts()), before);
}

#[test]
fn a_recovery_refuses_input_relations_that_lost_facts() {
    quiet_fuses();
    let mut net = network();
    // A mark that says one more input fact held before the update than the relations
    // give back, as a table that dropped a fact while it rehashed would.
    let inputs_before = net.relation::<Link>().len() + 1;
    net.bookkeeping_mut().unfinished = Some(Unfinished {
        operation: Operation::Update(Strategy::DRed),
        deletions: NetFacts::default(),
        insertions: NetFacts::default(),
        inputs_before,
        rebuilding: None,
    });
    let refused = net.recover().unwrap_err();
    assert_eq!((refused.expected, refused.found), (10, 9));
    assert_eq!(
        refused.to_string(),
        "cannot recover: an update (strategy DRed) and its input relations are damaged (10 \
         input facts held before it, 9 left); rebuild the program from a copy of its inputs"
    );
    assert!(net.poisoned().is_some());
    assert_refuses_everything(&mut net);
}

#[test]
fn a_materialization_that_panics_returns_no_program_and_the_next_one_is_whole() {
    quiet_fuses();
    let links = || Batch::new().insert_all(linked(&LINKS));
    for method in METHODS {
        let pending = links();
        let (_, calls) = with_fuse(method, 0, || Net::materialize(pending));
        // Values are formatted only when a report or an error is printed, never while
        // facts are being derived.
        if method == Method::Debug {
            assert_eq!(calls, 0);
            continue;
        }
        assert!(calls > 0, "{method:?}");
        for blow_at in [1, calls / 2 + 1, calls] {
            let pending = links();
            let (outcome, _) = with_fuse(method, blow_at, || {
                catch_unwind(AssertUnwindSafe(|| Net::materialize(pending)))
            });
            assert!(outcome.is_err(), "{method:?} call {blow_at}");
            let (net, _) = Net::materialize(links());
            let (inputs, derived) = split_model(&net);
            assert_eq!(derived, oracle_derived::<Net>(&inputs));
        }
    }
}
