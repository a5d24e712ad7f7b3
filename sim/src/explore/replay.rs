//! The replay strategy: follows a recorded [`Schedule`] choice by choice.
//!
//! The engine checks each replayed choice against what is possible at that step; a choice
//! that is not possible means the code under test changed, and the execution ends with a
//! divergence verdict naming the step.

use crate::explore::{Choice, Options, Schedule, Strategy};

/// Replays a schedule.
#[derive(Debug, Clone)]
pub struct Replay {
    schedule: Schedule,
    next: usize,
    lenient: bool,
}

impl Replay {
    /// Replays `schedule` exactly.
    pub fn new(schedule: Schedule) -> Replay {
        Replay {
            schedule,
            next: 0,
            lenient: false,
        }
    }

    /// Follows `schedule` where it can: a choice that is not possible at its step is
    /// skipped and a delay beyond the call's window is clamped. The shrinker uses this to
    /// try schedules with choices removed or changed.
    pub fn lenient(schedule: Schedule) -> Replay {
        Replay {
            schedule,
            next: 0,
            lenient: true,
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
                    return c;
                }
            }
        }
        let choice = self.schedule.choices.get(self.next).cloned();
        self.next += 1;
        // Past the end of the schedule the execution continues deterministically: the
        // lowest client runs at the earliest time. A shrunk schedule relies on this.
        choice.unwrap_or(Choice::Run {
            client: options.calls[0].client,
            delay: 0,
        })
    }
}
