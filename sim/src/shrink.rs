//! Shrinking: a failing execution made as small as possible while the same invariant
//! still breaks, so the counterexample a person reads is short.
//!
//! The shrinker works on the schedule, replayed leniently (a choice that is no longer
//! possible is skipped, and past the end the lowest client runs at the earliest instant):
//! it drops faults, drops chunks of choices (delta debugging), zeroes delays, and removes
//! preemptions by letting the previous client continue. Then it tries fewer clients: it
//! searches the smaller scenario with the random strategy for the same violation and
//! shrinks what it finds. A candidate is kept only if the verdict's label is the same and
//! its size is smaller in this order: faults, clients, preemptions, steps, calls, delays.

use std::fmt;

use crate::exec::{Execution, execute};
use crate::explore::{Choice, Replay, Schedule};
use crate::scenario::Scenario;

/// How big a counterexample is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Size {
    /// Faults injected.
    pub faults: usize,
    /// Clients in the scenario.
    pub clients: usize,
    /// Switches from one client to another.
    pub preemptions: usize,
    /// Choices in the schedule.
    pub steps: usize,
    /// Calls the servers executed.
    pub calls: u64,
    /// Microseconds of delay chosen inside latency windows (last tie-breaker).
    pub delay: u64,
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} clients, {} steps, {} calls, {} preemptions, {} faults",
            self.clients, self.steps, self.calls, self.preemptions, self.faults
        )
    }
}

/// The size of an execution of a scenario.
pub fn size(scenario: &Scenario, e: &Execution) -> Size {
    let mut preemptions = 0;
    let mut last = None;
    let mut total_delay = 0;
    for c in &e.schedule.choices {
        if let Choice::Run { client, delay } = c {
            total_delay += delay;
            if last.is_some_and(|l| l != *client) {
                preemptions += 1;
            }
            last = Some(*client);
        }
    }
    Size {
        faults: e.schedule.faults(),
        clients: scenario.clients,
        preemptions,
        steps: e.schedule.len(),
        calls: e.calls,
        delay: total_delay,
    }
}

/// A shrunk counterexample.
#[derive(Debug, Clone)]
pub struct Shrunk {
    /// The scenario it fails in (fewer clients than the original, perhaps).
    pub scenario: Scenario,
    /// The execution, replayable from `execution.schedule` on `scenario`.
    pub execution: Execution,
    /// Size before shrinking.
    pub before: Size,
    /// Size after.
    pub after: Size,
}

struct Shrinker<'a> {
    label: String,
    scenario: &'a Scenario,
    best: Execution,
    best_size: Size,
    tries: u32,
    budget: u32,
    /// Steps spent on attempts; shrinking stops past [`STEP_BUDGET`].
    spent: u64,
}

/// Steps the shrinker may spend replaying candidates, per scenario size it tries.
const STEP_BUDGET: u64 = 300_000;

impl Shrinker<'_> {
    fn attempt(&mut self, choices: Vec<Choice>) -> bool {
        if self.tries >= self.budget || self.spent >= STEP_BUDGET {
            return false;
        }
        self.tries += 1;
        let mut config = self.scenario.config.clone();
        config.trace = false;
        let mut strategy = Replay::lenient(Schedule { choices });
        let e = execute(&config, &*self.scenario.setup, &mut strategy, 0);
        self.spent += e.steps;
        if e.verdict.label() != self.label {
            return false;
        }
        let s = size(self.scenario, &e);
        if s < self.best_size {
            self.best = e;
            self.best_size = s;
            return true;
        }
        false
    }

    fn choices(&self) -> Vec<Choice> {
        self.best.schedule.choices.clone()
    }

    fn drop_faults(&mut self) -> bool {
        let mut progress = false;
        let mut i = 0;
        while i < self.best.schedule.choices.len() {
            if matches!(self.best.schedule.choices[i], Choice::Fault(_)) {
                let mut c = self.choices();
                c.remove(i);
                if self.attempt(c) {
                    progress = true;
                    continue;
                }
            }
            i += 1;
        }
        progress
    }

    fn drop_chunks(&mut self) -> bool {
        let mut progress = false;
        let mut chunk = (self.best.schedule.len() / 2).max(1);
        loop {
            let mut start = 0;
            while start < self.best.schedule.len() {
                let mut c = self.choices();
                let end = (start + chunk).min(c.len());
                c.drain(start..end);
                if self.attempt(c) {
                    progress = true;
                } else {
                    start += chunk;
                }
            }
            if chunk == 1 {
                return progress;
            }
            chunk /= 2;
        }
    }

    fn zero_delays(&mut self) -> bool {
        let zeroed = |c: &Choice| match c {
            Choice::Run { client, .. } => Choice::Run {
                client: *client,
                delay: 0,
            },
            other => other.clone(),
        };
        let all: Vec<Choice> = self.best.schedule.choices.iter().map(zeroed).collect();
        if all != self.best.schedule.choices && self.attempt(all) {
            return true;
        }
        false
    }

    fn fewer_preemptions(&mut self) -> bool {
        let mut progress = false;
        let mut i = 1;
        while i < self.best.schedule.choices.len() {
            let c = self.choices();
            let prev = c[..i].iter().rev().find_map(|x| match x {
                Choice::Run { client, .. } => Some(*client),
                _ => None,
            });
            if let (Some(p), Choice::Run { client, delay }) = (prev, &c[i])
                && p != *client
            {
                let mut candidate = c.clone();
                candidate[i] = Choice::Run {
                    client: p,
                    delay: *delay,
                };
                if self.attempt(candidate) {
                    progress = true;
                }
            }
            i += 1;
        }
        progress
    }

    fn run(&mut self) {
        loop {
            let mut progress = self.drop_faults();
            progress |= self.drop_chunks();
            progress |= self.zero_delays();
            progress |= self.fewer_preemptions();
            if !progress || self.tries >= self.budget || self.spent >= STEP_BUDGET {
                break;
            }
        }
    }
}

/// Shrinks a failing execution of `scenario`. `search` is how many random executions to
/// spend looking for the same violation with each smaller number of clients.
pub fn shrink(scenario: &Scenario, failing: &Execution, search: u64) -> Shrunk {
    let label = failing.verdict.label();
    let before = size(scenario, failing);
    let mut current = scenario.clone();
    let mut s = Shrinker {
        label: label.clone(),
        scenario: &current,
        best: failing.clone(),
        best_size: before,
        tries: 0,
        budget: 2000,
        spent: 0,
    };
    s.run();
    let mut best = (current.clone(), s.best.clone());
    // Fewer clients: find the same violation in a smaller scenario, then shrink that.
    for clients in 1..scenario.clients {
        let Ok(smaller) = scenario.with_clients(clients) else {
            continue;
        };
        let mut strategy = smaller.strategy.make(smaller.seed);
        let mut config = smaller.config.clone();
        config.trace = false;
        let mut spent = 0;
        let mut found = None;
        for i in 0..search {
            if spent >= STEP_BUDGET {
                break;
            }
            let e = execute(&config, &*smaller.setup, strategy.as_mut(), i);
            spent += e.steps;
            if e.verdict.label() == label {
                found = Some(e);
                break;
            }
        }
        if let Some(e) = found {
            current = smaller;
            let mut s = Shrinker {
                label: label.clone(),
                scenario: &current,
                best_size: size(&current, &e),
                best: e,
                tries: 0,
                budget: 2000,
                spent: 0,
            };
            s.run();
            if s.best_size < size(&best.0, &best.1) {
                best = (current.clone(), s.best);
            }
            break;
        }
    }
    let (scenario, execution) = best;
    let mut config = scenario.config.clone();
    config.trace = true;
    let execution = execute(
        &config,
        &*scenario.setup,
        &mut Replay::new(execution.schedule),
        0,
    );
    let after = size(&scenario, &execution);
    Shrunk {
        scenario,
        execution,
        before,
        after,
    }
}
