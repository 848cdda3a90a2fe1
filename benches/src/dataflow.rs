//! A dred program's generated dataflow on a timely worker, as the benches drive it: its
//! inputs, a probe, and the number of derived facts it holds.

use std::cell::Cell;
use std::rc::Rc;

use dred::runtime::dataflow::differential_dataflow::input::{Input as _, InputSession};
use dred::runtime::dataflow::{timely, Dataflow, Instruction, Time};
use dred::runtime::{FactSets, Program};
use timely::dataflow::operators::probe::Handle as Probe;

/// A fact of program `P`.
pub type Fact<P> = <<P as Program>::Facts as FactSets>::Fact;

/// `P`'s dataflow, built on one worker.
pub struct Session<P: Dataflow> {
    /// The input facts' instructions.
    pub input: InputSession<Time, (Fact<P>, Instruction), isize>,
    /// The collection that holds `()` once (fed by one worker only).
    pub unit: InputSession<Time, (), isize>,
    probe: Probe<Time>,
    derived: Rc<Cell<isize>>,
}

impl<P: Dataflow> Session<P> {
    /// Builds `P`'s dataflow on `worker`, counting the derived facts it outputs.
    pub fn new(worker: &mut timely::worker::Worker) -> Self {
        let probe = Probe::new();
        let derived = Rc::new(Cell::new(0isize));
        let (input, unit) = worker.dataflow::<Time, _, _>(|scope| {
            let (input, facts) = scope.new_collection();
            let (unit, units) = scope.new_collection();
            let counter = derived.clone();
            P::dataflow(facts, units)
                .inspect(move |(_, _, diff)| counter.set(counter.get() + diff))
                .probe_with(&probe);
            (input, unit)
        });
        Session {
            input,
            unit,
            probe,
            derived,
        }
    }

    /// Closes batch `time` and runs `worker` until the dataflow has done it.
    pub fn finish(&mut self, worker: &mut timely::worker::Worker, time: Time) {
        self.input.advance_to(time + 1);
        self.input.flush();
        self.unit.advance_to(time + 1);
        self.unit.flush();
        worker.step_while(|| self.probe.less_than(&(time + 1)));
    }

    /// This worker's share of the derived facts the dataflow holds.
    pub fn derived(&self) -> isize {
        self.derived.get()
    }
}
