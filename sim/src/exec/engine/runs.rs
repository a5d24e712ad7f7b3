//! Many executions of one configuration: its settings applied to the thread's engine
//! once, not compared and copied again at every execution.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::exec::{ExecConfig, Execution, Sim};
use crate::explore::Strategy;

use super::Engine;

/// Executions of one [`ExecConfig`] on this thread, as a loop that runs many of them
/// (`mcsim check`, a search, a shrink) makes them. Each execution is exactly what
/// [`execute_into`](super::execute_into) makes of it; the difference is where the
/// configuration's settings (the fault plan, the servers, the latency window, the
/// budgets) are applied to the thread's engine. A lone `execute_into` compares the
/// configuration with the one the engine last ran and copies its settings at every
/// execution; `Runs` applies them at its first execution and then only checks that the
/// engine ran nothing else since.
///
/// The configuration is borrowed for as long as the `Runs` lives, so it cannot change
/// meanwhile. An execution of another configuration in between (a nested one, a replay
/// inside the loop, another `Runs` on the same thread) is noticed, and the settings are
/// applied again before the next execution here.
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
    /// The stamp the engine took when it last applied `config` for these runs (0 before
    /// the first): an engine holding another stamp has run something else since.
    applied: Cell<u64>,
    /// The engine between these runs' executions, taken from the thread's at the first
    /// and handed back to the thread when the runs are dropped: an execution in between
    /// that is not one of these (a replay, a shrink) finds the thread's slot empty and
    /// builds another engine once, which the thread then keeps.
    engine: Cell<Option<Box<Engine>>>,
}

impl Drop for Runs<'_> {
    fn drop(&mut self) {
        if let Some(engine) = self.engine.take() {
            engine.give_back();
        }
    }
}

/// Stamps for configurations applied to an engine: never 0, never the same twice in a
/// process, whichever thread takes one.
static STAMPS: AtomicU64 = AtomicU64::new(1);

impl<'c> Runs<'c> {
    /// Executions of `config`.
    pub fn new(config: &'c ExecConfig) -> Runs<'c> {
        Runs {
            config,
            applied: Cell::new(0),
            engine: Cell::new(None),
        }
    }

    /// The configuration these executions run.
    pub fn config(&self) -> &'c ExecConfig {
        self.config
    }

    /// Runs execution `index` of `config` into `out`, as
    /// [`execute_into`](super::execute_into) does.
    pub fn execute_into<S: Strategy + ?Sized>(
        &self,
        setup: &dyn Fn(&mut Sim),
        strategy: &mut S,
        index: u64,
        out: &mut Execution,
    ) {
        // Taken out for the execution: one nested in it (through these runs or not)
        // finds none here and takes the thread's.
        let mut engine = match self.engine.take() {
            Some(engine) => engine,
            None => Engine::take(self.config),
        };
        if engine.applied == 0 || engine.applied != self.applied.get() {
            engine.configure(self.config);
            engine.applied = STAMPS.fetch_add(1, Ordering::Relaxed);
            self.applied.set(engine.applied);
        }
        super::run_configured(&mut engine, self.config, setup, strategy, index, out);
        self.engine.set(Some(engine));
    }
}
