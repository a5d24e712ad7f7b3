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
            "{} clients, {} steps, {} calls, {} context switches, {} faults",
            self.clients, self.steps, self.calls, self.preemptions, self.faults
        )
    }
}

impl Size {
    /// True if this is a real improvement on `other`: no measure a report shows
    /// (clients, steps, calls, preemptions, faults) is larger, and one of them, or the
    /// chosen delays, is smaller. Shrinking only ever moves to such a size, so what it
    /// returns is never larger than what it was given on any measure.
    pub fn improves_on(&self, other: &Size) -> bool {
        let shown = [
            (self.clients as u64, other.clients as u64),
            (self.steps as u64, other.steps as u64),
            (self.calls, other.calls),
            (self.preemptions as u64, other.preemptions as u64),
            (self.faults as u64, other.faults as u64),
        ];
        let no_larger = shown.iter().all(|(a, b)| a <= b);
        let smaller = shown.iter().any(|(a, b)| a < b);
        no_larger && (smaller || self.delay < other.delay)
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
    /// True if shrinking stopped at its step budget (a smaller one may exist).
    pub cut_short: bool,
}

struct Shrinker<'a> {
    label: String,
    scenario: &'a Scenario,
    best: Execution,
    best_size: Size,
    /// Steps spent so far, over every attempt and search.
    spent: &'a mut u64,
    /// Steps shrinking may spend in all.
    budget: u64,
}

impl Shrinker<'_> {
    fn exhausted(&self) -> bool {
        *self.spent >= self.budget
    }

    fn attempt(&mut self, choices: Vec<Choice>) -> bool {
        if self.exhausted() {
            return false;
        }
        let mut config = self.scenario.config.clone();
        config.trace = false;
        let phase = self.best.schedule.phase;
        let mut strategy = Replay::lenient(Schedule { phase, choices });
        let e = execute(&config, &*self.scenario.setup, &mut strategy, 0);
        *self.spent += e.steps;
        if e.verdict.label() != self.label {
            return false;
        }
        let s = size(self.scenario, &e);
        if s.improves_on(&self.best_size) {
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
        while i < self.best.schedule.choices.len() && !self.exhausted() {
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
            // Checked before each candidate is built: a candidate copies the schedule,
            // and a long one (a livelock's) copied at every position for nothing once
            // the budget is spent costs minutes.
            while start < self.best.schedule.len() && !self.exhausted() {
                let mut c = self.choices();
                let end = (start + chunk).min(c.len());
                c.drain(start..end);
                if self.attempt(c) {
                    progress = true;
                } else {
                    start += chunk;
                }
            }
            if chunk == 1 || self.exhausted() {
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
        while i < self.best.schedule.choices.len() && !self.exhausted() {
            let c = &self.best.schedule.choices;
            let prev = c[..i].iter().rev().find_map(|x| match x {
                Choice::Run { client, .. } => Some(*client),
                _ => None,
            });
            if let (Some(p), Choice::Run { client, delay }) = (prev, &c[i])
                && p != *client
            {
                // Copied only for a real candidate (a long schedule has few switches).
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
            if !progress || self.exhausted() {
                break;
            }
        }
    }
}

/// Shrinks a failing execution of `scenario`. `search` is how many random executions to
/// spend looking for the same violation with each smaller number of clients; `budget` is
/// how many steps shrinking may execute in all (replays of candidates and searches).
pub fn shrink(scenario: &Scenario, failing: &Execution, search: u64, budget: u64) -> Shrunk {
    let label = failing.verdict.label();
    let before = size(scenario, failing);
    let mut spent = 0;
    // Half the budget for the scenario as it is; the rest for fewer clients, which is
    // worth most when it works.
    let mut s = Shrinker {
        label: label.clone(),
        scenario,
        best: failing.clone(),
        best_size: before,
        spent: &mut spent,
        budget: budget / 2,
    };
    s.run();
    // Its half of the budget spent: this phase stopped early even if the next is cheap.
    let first_cut_short = s.exhausted();
    let mut best = (scenario.clone(), s.best.clone(), s.best_size);
    // Fewer clients: find the same violation in a smaller scenario, then shrink that; kept
    // only if it improves on every measure.
    for clients in 1..scenario.clients {
        if spent >= budget {
            break;
        }
        let Ok(smaller) = scenario.with_clients(clients) else {
            continue;
        };
        let mut strategy = smaller.strategy.make(smaller.seed);
        let mut config = smaller.config.clone();
        config.trace = false;
        let mut found = None;
        for i in 0..search {
            if spent >= budget {
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
            let mut s = Shrinker {
                label: label.clone(),
                scenario: &smaller,
                best_size: size(&smaller, &e),
                best: e,
                spent: &mut spent,
                budget,
            };
            s.run();
            let (e, size) = (s.best, s.best_size);
            if size.improves_on(&best.2) {
                best = (smaller, e, size);
            }
            break;
        }
    }
    let cut_short = first_cut_short || spent >= budget;
    let (scenario, execution, _) = best;
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
        cut_short,
    }
}
