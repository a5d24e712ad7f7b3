//! The engine's scenarios as a [`Subject`]: each candidate an execution of the scenario,
//! with as many clients as the shrinker asks for.

use std::convert::Infallible;

use crate::exec::{Execution, Runs, execute};
use crate::explore::{Replay, Schedule};
use crate::scenario::Scenario;

use super::{Budget, Outcome, Replayed, Shrunk, Size, Subject, shrink_subject};

impl Outcome for Execution {
    fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    fn schedule_mut(&mut self) -> &mut Schedule {
        &mut self.schedule
    }

    fn label(&self) -> String {
        self.verdict.label()
    }

    /// The steps it executed.
    fn cost(&self) -> u64 {
        self.steps
    }

    fn calls(&self) -> u64 {
        self.calls
    }

    fn never_finishes(&self) -> bool {
        self.verdict.never_finishes()
    }
}

/// A scenario as given, and the same with fewer clients when the shrinker asks for them.
#[derive(Debug, Clone)]
pub struct Scenarios<'a> {
    given: &'a Scenario,
    fewer: Option<Scenario>,
}

impl<'a> Scenarios<'a> {
    /// `scenario`, with its own clients.
    pub fn new(scenario: &'a Scenario) -> Self {
        Scenarios {
            given: scenario,
            fewer: None,
        }
    }

    /// The scenario with the clients set now.
    pub fn scenario(&self) -> &Scenario {
        self.fewer.as_ref().unwrap_or(self.given)
    }
}

impl Subject for Scenarios<'_> {
    type Run = Execution;
    type Error = Infallible;

    fn clients(&self) -> usize {
        self.scenario().clients
    }

    fn set_clients(&mut self, clients: usize) -> bool {
        if clients == self.given.clients {
            self.fewer = None;
            return true;
        }
        match self.given.with_clients(clients) {
            Ok(s) => {
                self.fewer = Some(s);
                true
            }
            Err(_) => false,
        }
    }

    fn run(&mut self, replay: &mut Replay, trace: bool) -> Result<Execution, Infallible> {
        let scenario = self.scenario();
        let mut config = scenario.config.clone();
        config.trace = trace;
        Ok(execute(&config, &*scenario.setup, replay, 0))
    }

    /// Executions of the scenario's own strategy and seed.
    fn search(
        &mut self,
        label: &str,
        tries: u64,
        budget: &mut Budget,
    ) -> Result<Option<Execution>, Infallible> {
        let scenario = self.scenario();
        let mut strategy = scenario.strategy.make(scenario.seed);
        let mut config = scenario.config.clone();
        config.trace = false;
        // One result, its buffers reused, and the loop compiled for the strategy.
        let mut e = Execution::default();
        let runs = Runs::new(&config);
        for i in 0..tries {
            if budget.exhausted() {
                break;
            }
            runs.execute_into(&*scenario.setup, &mut *strategy, i, &mut e);
            budget.ran(e.steps);
            if e.verdict.label() == label {
                return Ok(Some(e));
            }
        }
        Ok(None)
    }
}

/// The size of an execution of a scenario (replayed once to find its preemptions, and
/// for a verdict of never finishing, the choices a replay needs).
pub fn size(scenario: &Scenario, e: &Execution) -> Size {
    let mut subject = Scenarios::new(scenario);
    let Ok(r) = Replayed::new(&mut subject, e.schedule.clone(), false, false);
    r.size(scenario.clients)
}

/// Shrinks a failing execution of `scenario`. `search` is how many random executions to
/// spend looking for the same violation with each smaller number of clients; `budget` is
/// how many steps shrinking may execute in all (replays of candidates and searches).
pub fn shrink<'a>(
    scenario: &'a Scenario,
    failing: &Execution,
    search: u64,
    budget: u64,
) -> Shrunk<Scenarios<'a>> {
    let Ok(shrunk) = shrink_subject(Scenarios::new(scenario), failing, search, budget);
    shrunk
}
