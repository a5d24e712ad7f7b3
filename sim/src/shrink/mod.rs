//! Shrinking: a failing execution made as small as possible while the same invariant
//! still breaks, so the counterexample a person reads is short.
//!
//! The shrinker works on the schedule, replayed leniently (a choice that is no longer
//! possible is skipped, and past the end the lowest client runs at the earliest instant):
//! it drops faults, drops chunks of choices (delta debugging), zeroes delays (all, or one
//! by one), and removes preemptions by letting the client a preemption switched away
//! from run on. Then it tries fewer clients: it searches the smaller scenario with the
//! random strategy for the same violation and shrinks what it finds. A candidate is kept
//! only if the verdict's label is the same and it improves on the best so far
//! ([`Size::improves_on`]).
//!
//! A counterexample of never finishing (`stuck`, `livelock`) runs on past the choices
//! that got it there, until a budget runs out or its spin or cycle is told; its schedule
//! is cut to the choices a replay needs (the rest are what a replay makes by itself past
//! a schedule's end, [`Offered::needed`]), its steps and preemptions are counted on
//! what is left, and its calls are shown but not kept down: running every call at the
//! earliest instant fits more calls into the time budget, and is still the smaller
//! counterexample.
//!
//! Preemptions are counted the way `explore`'s bound on them counts them: a switch away
//! from a client that was asleep or done is forced, not a preemption, so a recipe whose
//! clients sleep between calls shows the few switches that made its interleaving, not one
//! per call.
//!
//! Most candidates need no replay. One built before is answered from what its replay
//! gave; one that a lenient replay would follow choice for choice back to the
//! best counterexample (dropping a choice that only a sleeping client's turn forced,
//! say) is known to be the best itself, from the calls each of the best's steps offered
//! ([`Offered::leads_to`]). Both are charged to the step budget as if replayed, so the
//! counterexample a shrink ends with is what replaying every candidate gives; on the
//! scenario suite's gate they spare three replays in four.

mod tried;

use std::fmt;

use crate::plural::plural;

use crate::exec::{Execution, Runs, execute};
use crate::explore::replay::Offered;
use crate::explore::{Choice, Replay, Schedule};
use crate::scenario::Scenario;
use tried::{Outcome, Tried};

/// How big a counterexample is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Size {
    /// Faults injected.
    pub faults: usize,
    /// Clients in the scenario.
    pub clients: usize,
    /// Preemptions: switches away from a client that could have run on
    /// ([`Replay::preempted`]).
    pub preemptions: usize,
    /// Late calls: calls run later than the earliest instant of their latency window.
    /// Each is a choice off the default path, as a preemption is.
    pub late: usize,
    /// Choices in the schedule.
    pub steps: usize,
    /// Calls the servers executed.
    pub calls: u64,
    /// The verdict is one of never finishing ([`crate::Verdict::never_finishes`]): the steps
    /// are the choices a replay needs, and the calls are not kept down.
    pub never_finishes: bool,
    /// Microseconds of delay chosen inside latency windows (last tie-breaker).
    pub delay: u64,
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Late calls are named only when there are any.
        let late = (self.late > 0).then_some((self.late as u64, "late call"));
        let counts = [
            Some((self.clients as u64, "client")),
            Some((self.steps as u64, "step")),
            Some((self.calls, "call")),
            Some((self.preemptions as u64, "preemption")),
            late,
            Some((self.faults as u64, "fault")),
        ];
        for (i, (n, noun)) in counts.into_iter().flatten().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{n} {noun}{}", plural(n))?;
        }
        Ok(())
    }
}

impl Size {
    /// True if this is a real improvement on `other`: no measure shrinking keeps down
    /// ([`Size::no_larger_than`]) is larger, and one of them, or the chosen delays, is
    /// smaller. Shrinking moves only to such a size (or to fewer clients no larger than
    /// what it was given), so what it returns is never larger than what it was given on
    /// any of those measures.
    pub fn improves_on(&self, other: &Size) -> bool {
        self.no_larger_than(other) && (self.kept() != other.kept() || self.delay < other.delay)
    }

    /// True if no measure shrinking keeps down is larger than `other`'s: clients, steps,
    /// calls, faults, and the choices off the default path (preemptions and late calls
    /// together, so that a late call may give way to a preemption: a timeline at round
    /// instants, with the switch that breaks the recipe, reads more easily than one of
    /// odd delays that avoid it).
    pub fn no_larger_than(&self, other: &Size) -> bool {
        self.kept().iter().zip(other.kept()).all(|(&a, b)| a <= b)
    }

    /// The measures shrinking keeps down.
    fn kept(&self) -> [u64; 5] {
        [
            self.clients as u64,
            self.steps as u64,
            if self.never_finishes { 0 } else { self.calls },
            (self.preemptions + self.late) as u64,
            self.faults as u64,
        ]
    }
}

/// The size of an execution of a scenario (replayed once to find its preemptions, and
/// for a verdict of never finishing, the choices a replay needs).
pub fn size(scenario: &Scenario, e: &Execution) -> Size {
    let r = recorded(scenario, &e.schedule);
    measured(scenario, &r.execution, r.preempted.len())
}

/// The size of `e`, which preempted `preemptions` times.
fn measured(scenario: &Scenario, e: &Execution, preemptions: usize) -> Size {
    let delays = e.schedule.choices.iter().filter_map(|c| match c {
        Choice::Run { delay, .. } => Some(*delay),
        Choice::Fault(_) => None,
    });
    let (delay, late) = delays.fold((0, 0), |(sum, late), d| {
        (sum + d, late + usize::from(d > 0))
    });
    Size {
        faults: e.schedule.faults(),
        clients: scenario.clients,
        preemptions,
        late,
        steps: e.schedule.len(),
        calls: e.calls,
        never_finishes: e.verdict.never_finishes(),
        delay,
    }
}

/// An execution the shrinker replayed, with where it preempted ([`Replay::preempted`])
/// and the calls each of its steps offered ([`Replay::offered`]).
struct Replayed {
    execution: Execution,
    preempted: Vec<u32>,
    offered: Offered,
}

impl Replayed {
    /// `schedule` replayed on `scenario` (leniently if `lenient`; with its timeline if
    /// `trace`), its schedule cut to the choices a replay needs when it never finishes.
    fn new(scenario: &Scenario, schedule: Schedule, lenient: bool, trace: bool) -> Replayed {
        let mut config = scenario.config.clone();
        config.trace = trace;
        let mut strategy = if lenient {
            Replay::lenient(schedule)
        } else {
            Replay::new(schedule)
        };
        let mut execution = execute(&config, &*scenario.setup, &mut strategy, 0);
        let mut preempted = strategy.preempted().to_vec();
        let offered = strategy.offered().clone();
        if execution.verdict.never_finishes() {
            let needed = offered.needed(&execution.schedule.choices);
            execution.schedule.choices.truncate(needed);
            preempted.retain(|&i| (i as usize) < needed);
        }
        Replayed {
            execution,
            preempted,
            offered,
        }
    }
}

/// `schedule` replayed on `scenario` (leniently if `lenient`), untraced.
fn replayed(scenario: &Scenario, schedule: Schedule, lenient: bool) -> Replayed {
    Replayed::new(scenario, schedule, lenient, false)
}

/// `schedule` replayed exactly on `scenario`.
fn recorded(scenario: &Scenario, schedule: &Schedule) -> Replayed {
    replayed(scenario, schedule.clone(), false)
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
    /// Where the best so far preempted.
    best_preempted: Vec<u32>,
    /// The calls each step of the best so far offered.
    best_offered: Offered,
    best_size: Size,
    /// Steps spent so far, over every attempt and search.
    spent: &'a mut u64,
    /// Steps shrinking may spend in all.
    budget: u64,
    /// The candidates replayed so far, with what each gave.
    tried: Tried,
}

impl Shrinker<'_> {
    fn exhausted(&self) -> bool {
        *self.spent >= self.budget
    }

    fn attempt(&mut self, choices: Vec<Choice>) -> bool {
        if self.exhausted() {
            return false;
        }
        let phase = self.best.schedule.phase;
        // A candidate that did not improve on an earlier best cannot improve on a
        // smaller one; should one, it is replayed for its execution.
        if let Some(known) = self.tried.get(phase, &choices)
            && !known.size.is_some_and(|s| s.improves_on(&self.best_size))
        {
            // Charged as if replayed again, so that where the budget stops shrinking,
            // and so the counterexample it ends with, do not depend on what was
            // remembered.
            *self.spent += known.steps;
            return false;
        }
        // A candidate whose every choice, taken as a lenient replay takes it, is the
        // best's own replays to the best: no step of it needs running.
        if self
            .best_offered
            .leads_to(&choices, &self.best.schedule.choices)
        {
            *self.spent += self.best.steps;
            let outcome = Outcome {
                steps: self.best.steps,
                size: Some(self.best_size),
            };
            self.tried.note(phase, choices, outcome);
            return false;
        }
        let candidate = choices.clone();
        let r = replayed(self.scenario, Schedule { phase, choices }, true);
        let e = r.execution;
        *self.spent += e.steps;
        let same = e.verdict.label() == self.label;
        let s = same.then(|| measured(self.scenario, &e, r.preempted.len()));
        let outcome = Outcome {
            steps: e.steps,
            size: s,
        };
        self.tried.note(phase, candidate, outcome);
        let Some(s) = s else {
            return false;
        };
        if s.improves_on(&self.best_size) {
            self.best = e;
            self.best_preempted = r.preempted;
            self.best_offered = r.offered;
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

    /// Runs every call at the earliest instant of its window, or failing that, each late
    /// call in turn.
    fn zero_delays(&mut self) -> bool {
        let zeroed = |c: &Choice| match c {
            Choice::Run { client, .. } => Choice::Run {
                client: *client,
                delay: 0,
            },
            other => other.clone(),
        };
        let all: Vec<Choice> = self.best.schedule.choices.iter().map(zeroed).collect();
        if all == self.best.schedule.choices {
            return false;
        }
        if self.attempt(all) {
            return true;
        }
        let mut progress = false;
        let mut i = 0;
        while i < self.best.schedule.choices.len() && !self.exhausted() {
            if let Choice::Run { client, delay } = self.best.schedule.choices[i]
                && delay > 0
            {
                let mut candidate = self.choices();
                candidate[i] = Choice::Run { client, delay: 0 };
                progress |= self.attempt(candidate);
            }
            i += 1;
        }
        progress
    }

    /// Lets the client a preemption switched away from run on instead, at each
    /// preemption in turn. Forced switches (away from a client that was asleep, done or
    /// had nothing to run) are not tried: running that client there is not possible.
    fn fewer_preemptions(&mut self) -> bool {
        let mut progress = false;
        // The first preemption not tried yet, by position in the best schedule.
        let mut from = 0;
        while !self.exhausted() {
            let best = &self.best;
            let Some(&at) = self.best_preempted.iter().find(|&&i| i as usize >= from) else {
                break;
            };
            let i = at as usize;
            from = i + 1;
            let prev = best.schedule.choices[..i]
                .iter()
                .rev()
                .find_map(|x| match x {
                    Choice::Run { client, .. } => Some(*client),
                    Choice::Fault(_) => None,
                });
            if let (Some(p), Choice::Run { delay, .. }) = (prev, &best.schedule.choices[i]) {
                let mut candidate = best.schedule.choices.clone();
                candidate[i] = Choice::Run {
                    client: p,
                    delay: *delay,
                };
                progress |= self.attempt(candidate);
            }
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
    // Replayed to find where it preempted (the search that found it did not note it).
    let r = recorded(scenario, &failing.schedule);
    let before = measured(scenario, &r.execution, r.preempted.len());
    let mut spent = 0;
    // Half the budget for the scenario as it is; the rest for fewer clients, which is
    // worth most when it works.
    let mut s = Shrinker {
        label: label.clone(),
        scenario,
        best: r.execution,
        best_preempted: r.preempted,
        best_offered: r.offered,
        best_size: before,
        spent: &mut spent,
        budget: budget / 2,
        tried: Tried::default(),
    };
    s.run();
    // Its half of the budget spent: this phase stopped early even if the next is cheap.
    let first_cut_short = s.exhausted();
    let mut best = (scenario.clone(), s.best.clone(), s.best_size);
    // Fewer clients: find the same violation in a smaller scenario, then shrink that.
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
        // One result, its buffers reused, and the loop compiled for the strategy.
        let mut e = Execution::default();
        let runs = Runs::new(&config);
        for i in 0..search {
            if spent >= budget {
                break;
            }
            runs.execute_into(&*smaller.setup, &mut *strategy, i, &mut e);
            spent += e.steps;
            if e.verdict.label() == label {
                found = Some(std::mem::take(&mut e));
                break;
            }
        }
        if let Some(e) = found {
            let r = recorded(&smaller, &e.schedule);
            let mut s = Shrinker {
                label: label.clone(),
                scenario: &smaller,
                best_size: measured(&smaller, &r.execution, r.preempted.len()),
                best: r.execution,
                best_preempted: r.preempted,
                best_offered: r.offered,
                spent: &mut spent,
                budget,
                tried: Tried::default(),
            };
            s.run();
            let (e, size) = (s.best, s.best_size);
            // Fewer clients is worth more than a few steps or preemptions: kept if it
            // improves on the shrunk scenario, or if it has fewer clients and is no larger
            // than what was found on any measure.
            let fewer = size.clients < best.2.clients && size.no_larger_than(&before);
            if size.improves_on(&best.2) || fewer {
                best = (smaller, e, size);
            }
            break;
        }
    }
    let cut_short = first_cut_short || spent >= budget;
    let (scenario, execution, _) = best;
    let r = Replayed::new(&scenario, execution.schedule, false, true);
    let after = measured(&scenario, &r.execution, r.preempted.len());
    let execution = r.execution;
    Shrunk {
        scenario,
        execution,
        before,
        after,
        cut_short,
    }
}
