//! The replay strategy: follows a recorded [`Schedule`] choice by choice.
//!
//! The engine checks each replayed choice against what is possible at that step; a choice
//! that is not possible means the code under test changed, and the execution ends with a
//! divergence verdict naming the step.
//!
//! A replay also notes where the schedule preempted ([`Replay::preempted`]): what the
//! shrinker minimizes, and what a counterexample's size reports.

use crate::explore::{Choice, Options, Schedule, Strategy};

/// Replays a schedule.
#[derive(Debug, Clone)]
pub struct Replay {
    schedule: Schedule,
    next: usize,
    lenient: bool,
    /// Choices handed to the engine in this execution.
    chosen: u32,
    /// The client of the last call run (`usize::MAX` before the first).
    last_run: usize,
    /// Where, among the choices handed out, a preemption was.
    preempted: Vec<u32>,
}

impl Replay {
    /// Replays `schedule` exactly.
    pub fn new(schedule: Schedule) -> Replay {
        Replay {
            schedule,
            next: 0,
            lenient: false,
            chosen: 0,
            last_run: usize::MAX,
            preempted: Vec::new(),
        }
    }

    /// Follows `schedule` where it can: a choice that is not possible at its step is
    /// skipped and a delay beyond the call's window is clamped. The shrinker uses this to
    /// try schedules with choices removed or changed.
    pub fn lenient(schedule: Schedule) -> Replay {
        Replay {
            lenient: true,
            ..Replay::new(schedule)
        }
    }

    fn possible(options: &Options<'_>, choice: &Choice) -> Option<Choice> {
        match choice {
            Choice::Run { client, delay } => options.call_of(*client).map(|c| {
                let width = c.latest.micros() - c.earliest.micros();
                Choice::Run {
                    client: *client,
                    delay: (*delay).min(width),
                }
            }),
            Choice::Fault(f) => options
                .faults
                .iter()
                .any(|o| &o.fault == f)
                .then(|| choice.clone()),
        }
    }

    /// The positions in the executed schedule of the preemptions of the last execution:
    /// choices that ran a client other than the last one to run while that one had a call
    /// it could have run. A switch away from a client that was asleep, done or had
    /// nothing to run yet is forced and not counted (the switches a bound on preemptions
    /// counts, as `dfs` counts them).
    pub fn preempted(&self) -> &[u32] {
        &self.preempted
    }

    /// Hands `choice` to the engine, noting whether it preempts.
    fn hand_out(&mut self, options: &Options<'_>, choice: Choice) -> Choice {
        if let Choice::Run { client, .. } = choice {
            let last = self.last_run;
            if last != client && options.call_of(last).is_some() {
                self.preempted.push(self.chosen);
            }
            self.last_run = client;
        }
        self.chosen += 1;
        choice
    }

    /// True once every recorded choice has been used.
    pub fn exhausted(&self) -> bool {
        self.next >= self.schedule.choices.len()
    }
}

impl Strategy for Replay {
    fn name(&self) -> &'static str {
        "replay"
    }

    fn begin(&mut self, _execution: u64) {
        self.next = 0;
        (self.chosen, self.last_run) = (0, usize::MAX);
        self.preempted.clear();
    }

    fn tick_phase(&mut self, _free: bool) -> Option<std::time::Duration> {
        self.schedule
            .phase
            .map(|p| std::time::Duration::from_micros(u64::from(p)))
    }

    fn choose(&mut self, options: &Options<'_>) -> Choice {
        if self.lenient {
            while let Some(choice) = self.schedule.choices.get(self.next) {
                self.next += 1;
                if let Some(c) = Self::possible(options, choice) {
                    return self.hand_out(options, c);
                }
            }
        }
        let choice = self.schedule.choices.get(self.next).cloned();
        self.next += 1;
        // Past the end of the schedule the execution continues deterministically: the
        // lowest client runs at the earliest time. A shrunk schedule relies on this.
        let choice = choice.unwrap_or(Choice::Run {
            client: options.calls[0].client,
            delay: 0,
        });
        self.hand_out(options, choice)
    }
}
