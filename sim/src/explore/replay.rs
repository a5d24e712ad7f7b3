//! The replay strategy: follows a recorded [`Schedule`] choice by choice.
//!
//! The engine checks each replayed choice against what is possible at that step; a choice
//! that is not possible means the code under test changed, and the execution ends with a
//! divergence verdict naming the step.
//!
//! A replay also notes where the schedule preempted ([`Replay::preempted`]): what the
//! shrinker minimizes, and what a counterexample's size reports; and which calls each
//! step offered ([`Replay::offered`]), so the shrinker can tell, without running it,
//! that a candidate schedule would replay to the execution it has
//! ([`Offered::leads_to`]).

use crate::explore::{CallOption, Choice, Options, Schedule, Strategy};
use crate::fault::Fault;

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
    /// The calls each step offered.
    offered: Offered,
}

/// The calls each step of a replay offered: which clients had a call that could run, and
/// how wide its window was (what a lenient replay needs to know to take or skip a choice
/// that runs a call).
#[derive(Debug, Clone, Default)]
pub struct Offered {
    /// Every step's call options, step after step: (client, window width in µs).
    calls: Vec<(u32, u64)>,
    /// Where each step's options begin in `calls`.
    starts: Vec<u32>,
}

impl Offered {
    fn clear(&mut self) {
        self.calls.clear();
        self.starts.clear();
    }

    fn note(&mut self, options: &Options<'_>) {
        self.starts.push(self.calls.len() as u32);
        self.calls
            .extend(options.calls.iter().map(|c| (c.client as u32, c.width())));
    }

    /// The call options of step `k`.
    fn step(&self, k: usize) -> Option<&[(u32, u64)]> {
        let start = *self.starts.get(k)? as usize;
        let end = self
            .starts
            .get(k + 1)
            .map_or(self.calls.len(), |&e| e as usize);
        Some(&self.calls[start..end])
    }

    /// What a replay chooses by itself at step `k` once its schedule has run out: the
    /// lowest client offered, at the earliest instant of its window.
    fn default_at(&self, k: usize) -> Option<Choice> {
        let &(client, _) = self.step(k)?.first()?;
        Some(Choice::Run {
            client: client as usize,
            delay: 0,
        })
    }

    /// How many of `executed`'s first choices a replay needs, `executed` being the
    /// execution these options were offered in: the choices after them are each what a
    /// replay makes by itself past a schedule's end ([`Replay`]'s default), so the
    /// shorter schedule replays to the same execution.
    pub fn needed(&self, executed: &[Choice]) -> usize {
        let mut n = executed.len();
        while n > 0 && self.default_at(n - 1).as_ref() == Some(&executed[n - 1]) {
            n -= 1;
        }
        n
    }

    /// True if a lenient replay of `candidate` would make exactly the choices of the
    /// execution these options were offered in, whose schedule is `executed` (whole, or
    /// cut to what a replay needs, [`Offered::needed`]): at each step it would take the
    /// same choice, so (the engine being deterministic) it would reach the same state,
    /// see the same options, and end the same way. Decided without running anything;
    /// false also where it cannot tell (a fault choice the execution did not make at
    /// that step, whose possibility there it does not know).
    pub fn leads_to(&self, candidate: &[Choice], executed: &[Choice]) -> bool {
        let mut next = 0;
        for k in 0..executed.len().max(self.starts.len()) {
            let Some(calls) = self.step(k) else {
                return false;
            };
            // What a replay chooses here once its schedule has run out: past a cut
            // schedule's end, what the execution made; past the candidate's, what it makes.
            let default = self.default_at(k);
            let Some(made) = executed.get(k).or(default.as_ref()) else {
                return false;
            };
            let window = |client: usize| {
                calls
                    .iter()
                    .find(|(c, _)| *c as usize == client)
                    .map(|&(_, width)| width)
            };
            let picked = loop {
                let Some(choice) = candidate.get(next) else {
                    match &default {
                        Some(d) => break d.clone(),
                        None => return false,
                    }
                };
                next += 1;
                if choice == made {
                    break made.clone();
                }
                if matches!(choice, Choice::Fault(_)) {
                    return false;
                }
                if let Some(c) = taken(choice, window, |_| false) {
                    break c;
                }
            };
            if picked != *made {
                return false;
            }
        }
        true
    }
}

/// `choice` as a lenient replay takes it at a step where `window(client)` is the width of
/// a client's call window (`None`: no call of it may run) and `fault_possible` says
/// whether a fault may fire: a run clamped to its window, a possible fault, or `None`.
fn taken(
    choice: &Choice,
    window: impl Fn(usize) -> Option<u64>,
    fault_possible: impl Fn(&Fault) -> bool,
) -> Option<Choice> {
    match choice {
        Choice::Run { client, delay } => window(*client).map(|width| Choice::Run {
            client: *client,
            delay: (*delay).min(width),
        }),
        Choice::Fault(f) => fault_possible(f).then(|| choice.clone()),
    }
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
            offered: Offered::default(),
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
        taken(
            choice,
            |client| options.call_of(client).map(CallOption::width),
            |f| options.faults.iter().any(|o| &o.fault == f),
        )
    }

    /// The calls each step of the last execution offered.
    pub fn offered(&self) -> &Offered {
        &self.offered
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
        self.offered.clear();
    }

    fn tick_phase(&mut self, _free: bool) -> Option<std::time::Duration> {
        self.schedule
            .phase
            .map(|p| std::time::Duration::from_micros(u64::from(p)))
    }

    fn choose(&mut self, options: &Options<'_>) -> Option<Choice> {
        self.offered.note(options);
        if self.lenient {
            while let Some(choice) = self.schedule.choices.get(self.next) {
                self.next += 1;
                if let Some(c) = Self::possible(options, choice) {
                    return Some(self.hand_out(options, c));
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
        Some(self.hand_out(options, choice))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Steps each offering the calls of `clients`, every window `width` µs wide.
    fn offered(steps: &[&[usize]], width: u64) -> Offered {
        let mut o = Offered::default();
        for clients in steps {
            o.starts.push(o.calls.len() as u32);
            o.calls.extend(clients.iter().map(|&c| (c as u32, width)));
        }
        o
    }

    fn run(client: usize, delay: u64) -> Choice {
        Choice::Run { client, delay }
    }

    #[test]
    fn a_choice_skipped_where_it_cannot_run_leaves_the_same_course() {
        // One client may run at each step, as when the others sleep.
        let o = offered(&[&[0], &[1], &[0]], 0);
        let executed = [run(0, 0), run(1, 0), run(0, 0)];
        // The first dropped: c1 is skipped at step 0, c0 runs; then past the end the
        // lowest client runs, as the execution did.
        assert!(o.leads_to(&[run(1, 0), run(0, 0)], &executed));
        assert!(o.leads_to(&[], &executed));
        assert!(o.leads_to(&executed, &executed));
    }

    #[test]
    fn another_choice_that_could_run_changes_the_course() {
        let o = offered(&[&[0, 1], &[0, 1], &[0]], 0);
        let executed = [run(1, 0), run(1, 0), run(0, 0)];
        assert!(!o.leads_to(&[run(0, 0)], &executed), "c0 could run first");
        // Past the end the lowest client runs: c0, not the c1 the execution ran.
        assert!(!o.leads_to(&[], &executed));
    }

    #[test]
    fn a_delay_is_clamped_to_the_window_as_a_lenient_replay_clamps_it() {
        let o = offered(&[&[0]], 300);
        assert!(o.leads_to(&[run(0, 900)], &[run(0, 300)]));
        assert!(!o.leads_to(&[run(0, 200)], &[run(0, 300)]));
    }

    #[test]
    fn the_choices_a_replay_makes_by_itself_at_the_end_are_not_needed() {
        let o = offered(&[&[0, 1], &[0, 1], &[1], &[0, 1]], 300);
        // c1 at step 2 is the only client offered: a default choice, like step 3's c0.
        let executed = [run(1, 0), run(0, 0), run(1, 0), run(0, 0)];
        assert_eq!(o.needed(&executed), 1);
        assert!(o.leads_to(&executed[..1], &executed[..1]));
        assert!(o.leads_to(&[run(1, 0)], &executed));
        // A late call is not a default: it stays.
        assert_eq!(o.needed(&[run(1, 0), run(0, 0), run(1, 0), run(0, 9)]), 4);
        // A candidate that goes on differently past the cut does not lead there.
        assert!(!o.leads_to(&[run(1, 0), run(1, 0)], &executed[..1]));
    }

    #[test]
    fn a_fault_the_execution_did_not_make_there_is_not_guessed() {
        let o = offered(&[&[0], &[0]], 0);
        let fault = Choice::Fault(Fault::Crash { server: 0 });
        let executed = [run(0, 0), fault.clone(), run(0, 0)];
        let o3 = offered(&[&[0], &[0], &[0]], 0);
        assert!(
            o3.leads_to(&executed, &executed),
            "made there: possible there"
        );
        // The fault one step early: whether it could fire there is not known.
        assert!(!o.leads_to(&[fault, run(0, 0)], &[run(0, 0), run(0, 0)]));
    }
}
