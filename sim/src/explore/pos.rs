//! Partial order sampling (Yuan, Yang and Gu, CAV 2018).
//!
//! A random walk over interleavings ([`super::Random`]) is biased: with two clients, a
//! schedule where one client's call runs after all of the other's `k` calls has
//! probability `2^-k`, however little those calls have to do with each other.
//! POS samples the partial order of conflicting calls instead: every pending call gets a
//! random priority when it appears, the call with the highest priority runs, and after a
//! call runs, every pending call that conflicts with it (same key, not both reads: a
//! [`Footprint`] that does not commute) draws a fresh priority. Calls
//! on unrelated keys keep theirs, so their relative order stops weighing on the order
//! of the calls that race.
//!
//! Where it helps and where it does not (`reports/bench.md` §11): a race hidden among
//! calls on other keys (`table-as-written-instant`: a reader between the two writes of
//! an `add` while other clients write other members) fails 1.28× as often as under
//! `random`. Two reads do not race, so a call that lost to a read keeps its lower
//! priority and tends to lose again to the write that follows the read: a bug that
//! needs a read between another client's read and write (`lock-get-set`) fails 0.85× as
//! often. Over the suite's bugs without faults the two are even.
//!
//! A fault, or a step where a store may evict, conflicts with every call. The delay
//! inside the latency window and the faults are drawn as [`super::Random`] draws them,
//! from the plan's probabilities, and the tick phase from the seed alone: one seed
//! replays one execution.

use rand::RngExt;

use crate::explore::random::{Seeds, delay_in, maybe_fault};
use crate::explore::{CallOption, Choice, Footprint, Needs, Options, Strategy};

/// The POS strategy (see the module docs).
#[derive(Debug, Clone)]
pub struct Pos {
    seeds: Seeds,
    /// Each client's pending call's priority; `None` until it is drawn, which happens
    /// the first time the call is offered after it appeared or after a conflicting call
    /// ran.
    priorities: Vec<Option<u64>>,
}

impl Pos {
    /// POS whose first execution uses `seed`, the next `seed + 1`, and so on, as
    /// [`super::Random`] numbers them.
    pub fn new(seed: u64) -> Pos {
        Pos {
            seeds: Seeds::new(seed),
            priorities: Vec::new(),
        }
    }
}

impl Strategy for Pos {
    fn name(&self) -> &'static str {
        "pos"
    }

    fn begin(&mut self, execution: u64) {
        self.seeds.begin(execution);
        self.priorities.clear();
    }

    fn tick_phase(&mut self, free: bool) -> Option<std::time::Duration> {
        self.seeds.tick_phase(free)
    }

    fn needs(&self) -> Needs {
        Needs {
            footprints: true,
            ..Needs::NOTHING
        }
    }

    fn choose(&mut self, options: &Options<'_>) -> Option<Choice> {
        // The clients of an execution are all there from its first step.
        self.priorities.resize(options.clients, None);
        let rng = &mut self.seeds.rng;
        if let Some(fault) = maybe_fault(rng, options) {
            // A fault races with every call.
            self.priorities.fill(None);
            return Some(fault);
        }
        // Draw the missing priorities in client order, so that a seed fixes them; the
        // highest runs, the lowest-numbered client among equals.
        let mut best: Option<(u64, &CallOption)> = None;
        for call in options.calls {
            let p = *self.priorities[call.client].get_or_insert_with(|| rng.random());
            if best.is_none_or(|(q, _)| p > q) {
                best = Some((p, call));
            }
        }
        let (_, ran) = best.expect("at least one call may run");
        let client = ran.client;
        // The chosen client's next call is a new event; the pending calls that race
        // with this one draw again.
        self.priorities[client] = None;
        for other in options.calls {
            let races = !Footprint::independent(
                ran.footprint.as_ref(),
                other.footprint.as_ref(),
                options.eviction_possible,
            );
            if races {
                self.priorities[other.client] = None;
            }
        }
        let delay = delay_in(rng, ran);
        Some(Choice::Run { client, delay })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::VirtualTime;
    use crate::explore::random::drawn_phase;

    fn call(client: usize, key: u64, read_only: bool) -> CallOption {
        CallOption {
            client,
            earliest: VirtualTime::ZERO,
            latest: VirtualTime::ZERO,
            footprint: Some(Footprint {
                server: 0,
                keys: vec![key],
                read_only,
            }),
            edges: Vec::new(),
        }
    }

    fn options(calls: &[CallOption]) -> Options<'_> {
        Options {
            step: 0,
            clients: 3,
            calls,
            faults: &[],
            eviction_possible: false,
            state: None,
            ranks: None,
            summarized: false,
        }
    }

    #[test]
    fn only_calls_that_race_with_the_one_run_draw_again() {
        let mut pos = Pos::new(7);
        pos.begin(0);
        // c0 and c1 write key 1, c2 writes key 2.
        let calls = [call(0, 1, false), call(1, 1, false), call(2, 2, false)];
        let Some(Choice::Run { client, .. }) = pos.choose(&options(&calls)) else {
            panic!("no fault is offered");
        };
        let kept: Vec<usize> = (0..3).filter(|&c| pos.priorities[c].is_some()).collect();
        let expected: Vec<usize> = match client {
            // c0 or c1 ran: the other races with it, c2 keeps its priority.
            0 | 1 => vec![2],
            // c2 ran: c0 and c1 keep theirs.
            _ => vec![0, 1],
        };
        assert_eq!(kept, expected);
    }

    #[test]
    fn the_highest_priority_runs_and_equals_go_to_the_first_client() {
        let calls = [call(0, 1, false), call(1, 2, false), call(2, 3, false)];
        for (priorities, runs) in [
            ([1, 5, 3], 1),
            ([9, 5, 3], 0),
            ([1, 5, 7], 2),
            ([4, 4, 2], 0),
            ([1, 4, 4], 1),
        ] {
            let mut pos = Pos::new(0);
            pos.begin(0);
            pos.priorities = priorities.map(Some).to_vec();
            let choice = pos.choose(&options(&calls));
            assert!(
                matches!(choice, Some(Choice::Run { client, .. }) if client == runs),
                "{priorities:?}: {choice:?}"
            );
        }
    }

    #[test]
    fn an_execution_starts_afresh_from_its_own_seed() {
        let calls = [call(0, 1, false), call(1, 1, false), call(2, 2, false)];
        let mut pos = Pos::new(5);
        pos.begin(0);
        pos.choose(&options(&calls));
        pos.begin(3);
        // Nothing of the execution before is kept.
        assert!(pos.priorities.iter().all(Option::is_none));
        let mut fresh = Pos::new(8);
        fresh.begin(0);
        for _ in 0..10 {
            assert_eq!(pos.choose(&options(&calls)), fresh.choose(&options(&calls)));
        }
        // Its tick phase is the seed's, as every sampling strategy draws it, and only
        // where the scenario leaves the phase free.
        assert_eq!(pos.tick_phase(true), Some(drawn_phase(8)));
        assert_ne!(pos.tick_phase(true), Some(std::time::Duration::ZERO));
        assert_eq!(pos.tick_phase(false), None);
    }

    #[test]
    fn it_names_itself_and_asks_for_the_footprints_that_tell_races() {
        let pos = Pos::new(0);
        assert_eq!(pos.name(), "pos");
        // Without footprints every call would race with every other, and POS would be
        // a walk that redraws every priority at every step.
        assert!(pos.needs().footprints);
    }

    #[test]
    fn reads_of_one_key_do_not_race() {
        let mut pos = Pos::new(3);
        pos.begin(0);
        let calls = [call(0, 1, true), call(1, 1, true)];
        let Some(Choice::Run { client, .. }) = pos.choose(&options(&calls)) else {
            panic!("no fault is offered");
        };
        assert!(pos.priorities[client].is_none());
        assert!(pos.priorities[1 - client].is_some());
    }

    #[test]
    fn a_seed_gives_the_same_choices() {
        let calls = [call(0, 1, false), call(1, 1, false), call(2, 2, false)];
        let run = |seed| {
            let mut pos = Pos::new(seed);
            (0..20u64)
                .map(|e| {
                    pos.begin(e);
                    pos.choose(&options(&calls))
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(5), run(5));
        // Every client gets to run first in some execution.
        let firsts: std::collections::BTreeSet<usize> = run(5)
            .into_iter()
            .map(|c| match c {
                Some(Choice::Run { client, .. }) => client,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(firsts.len(), 3);
    }
}
