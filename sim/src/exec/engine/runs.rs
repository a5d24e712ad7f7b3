//! Many executions of one configuration: its settings applied to the thread's engine
//! once, not compared and copied again at every execution.

use std::cell::Cell;

use crate::exec::{ExecConfig, Execution, Sim};
use crate::explore::{Needs, Strategy};

use super::Engine;
use super::lifecycle::Kept;
use super::observer::{Observed, Unobserved};

/// Executions of one [`ExecConfig`] on this thread, as a loop that runs many of them
/// (`mcsim check`, a search, a shrink) makes them. Each execution is exactly what
/// [`execute`](super::execute) makes of it; the difference is where the
/// configuration's settings (the fault plan, the servers, the latency window, the
/// budgets) are applied to the thread's engine, and which result's buffers are filled.
/// A lone `execute` compares the
/// configuration with the one the engine last ran and copies its settings at every
/// execution; `Runs` applies them to the engine it takes at its first execution and
/// keeps that engine for the next ones.
///
/// The configuration is borrowed for as long as the `Runs` lives, so it cannot change
/// meanwhile, and the engine it keeps runs nothing else. An execution nested in one of
/// these (through these runs or not) finds no engine kept, takes the thread's and applies
/// the settings to it as a first execution does.
///
/// ```
/// use mcsim::exec::Runs;
/// use mcsim::explore::Random;
/// use mcsim::{ExecConfig, Execution};
///
/// let config = ExecConfig::default();
/// let setup = |_: &mut mcsim::Sim| {};
/// let runs = Runs::new(&config);
/// let (mut strategy, mut e) = (Random::new(7), Execution::default());
/// for i in 0..3 {
///     runs.execute_into(&setup, &mut strategy, i, &mut e);
///     assert!(e.verdict.is_pass());
/// }
/// ```
pub struct Runs<'c> {
    config: &'c ExecConfig,
    /// Every execution of `config` records its timeline, whatever the strategy.
    traced: bool,
    /// The engines between these runs' executions, `config` applied to them, one that
    /// records nothing and one that records what an execution asks for
    /// ([`super::observer`]): taken from the thread's at the first execution of each
    /// kind and handed back to the thread when the runs are dropped. An execution in
    /// between that is not one of these (a replay, a shrink) finds the thread's slot
    /// empty and builds another engine once, which the thread then keeps.
    unobserved: Cell<Option<Box<Engine<Unobserved>>>>,
    observed: Cell<Option<Box<Engine<Observed>>>>,
}

impl Drop for Runs<'_> {
    fn drop(&mut self) {
        if let Some(engine) = self.unobserved.take() {
            engine.give_back();
        }
        if let Some(engine) = self.observed.take() {
            engine.give_back();
        }
    }
}

impl<'c> Runs<'c> {
    /// Executions of `config`.
    pub fn new(config: &'c ExecConfig) -> Runs<'c> {
        Runs {
            config,
            traced: config.trace,
            unobserved: Cell::new(None),
            observed: Cell::new(None),
        }
    }

    /// Runs execution `index` of `config` into `out`, as [`execute`](super::execute)
    /// does, reusing `out`'s buffers (the schedule, the checks, the timeline): everything
    /// it held before is replaced. The step loop is compiled for `S`: with a concrete
    /// strategy type the strategy's answers are inlined into it; a `dyn Strategy` (what
    /// [`crate::scenario::StrategyKind::make`] returns) is asked through its vtable.
    pub fn execute_into<S: Strategy + ?Sized>(
        &self,
        setup: &dyn Fn(&mut Sim),
        strategy: &mut S,
        index: u64,
        out: &mut Execution,
    ) {
        strategy.begin(index);
        let needs = strategy.needs();
        let strategy = (strategy, needs);
        if self.traced || (needs.timing && self.config.phase_free) {
            self.execute_on(&self.observed, setup, strategy, index, out);
        } else {
            self.execute_on(&self.unobserved, setup, strategy, index, out);
        }
    }

    /// One execution on the engine kept in `slot`.
    fn execute_on<O: Kept, S: Strategy + ?Sized>(
        &self,
        slot: &Cell<Option<Box<Engine<O>>>>,
        setup: &dyn Fn(&mut Sim),
        strategy: (&mut S, Needs),
        index: u64,
        out: &mut Execution,
    ) {
        // Taken out for the execution: one nested in it (through these runs or not)
        // finds none here and takes the thread's, which may have run anything.
        let mut engine = match slot.take() {
            Some(engine) => engine,
            None => {
                let mut engine = Engine::take(self.config);
                engine.configure(self.config);
                engine
            }
        };
        super::run_configured(&mut engine, self.config, setup, strategy, index, out);
        // An engine a nested execution through these runs kept meanwhile goes back to
        // the thread.
        if let Some(nested) = slot.replace(Some(engine)) {
            nested.give_back();
        }
    }
}
