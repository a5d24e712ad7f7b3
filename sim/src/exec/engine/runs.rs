//! Many executions of one configuration: its settings applied to the thread's engine
//! once, not compared and copied again at every execution.

use std::cell::Cell;

use crate::exec::{ExecConfig, Execution, Sim};
use crate::explore::Strategy;

use super::Engine;

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
    /// The engine between these runs' executions, `config` applied to it: taken from
    /// the thread's at the first and handed back to the thread when the runs are
    /// dropped. An execution in between that is not one of these (a replay, a shrink)
    /// finds the thread's slot empty and builds another engine once, which the thread
    /// then keeps.
    engine: Cell<Option<Box<Engine>>>,
}

impl Drop for Runs<'_> {
    fn drop(&mut self) {
        if let Some(engine) = self.engine.take() {
            engine.give_back();
        }
    }
}

impl<'c> Runs<'c> {
    /// Executions of `config`.
    pub fn new(config: &'c ExecConfig) -> Runs<'c> {
        Runs {
            config,
            engine: Cell::new(None),
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
        // Taken out for the execution: one nested in it (through these runs or not)
        // finds none here and takes the thread's, which may have run anything.
        let mut engine = match self.engine.take() {
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
        if let Some(nested) = self.engine.replace(Some(engine)) {
            nested.give_back();
        }
    }
}
