//! Telling a recipe that goes round a cycle of states from one that gets somewhere.
//!
//! A spin ([`super::spin`]) changes nothing; a recipe can also change the servers for
//! ever without getting anywhere: a semaphore client that takes a permit with `incr`,
//! finds itself over the limit, gives it back with `decr` and tries again, the count
//! going 2 → 3 → 2 while the holders never return. Every call writes, so no spin is
//! seen, and the run used to end at the step budget as `stuck`.
//!
//! Once [`CYCLE_CALLS`] calls have run with no world event (no client finishing or
//! marking progress, no fault, no timer), each call is keyed by its client, its request,
//! its reply and the state it left: every server's live items (key, value, flags) and
//! the model's ghost state. Cas uniques, the servers' clocks and counters are left out,
//! so a count that goes 2 → 3 → 2 is back where it was. When [`super::spin::REPEATS_FOR_SPIN`]
//! calls in a row each repeat a key seen before, every busy client took part, and
//! nothing scheduled (an expiry, a timer, a clock read) can change that, the execution is
//! a `livelock` and the last turn of its cycle (the calls since the last call's key was
//! last seen) is shown.
//!
//! What this assumes: a client's next call depends on what it was told, not on a count
//! of its own (a loop that gives up after 20,000 turns would be judged too early), and
//! replies carrying cas uniques never repeat, so a `gets`/`cas` loop is not told apart
//! this way (it ends as `stuck`).

use std::collections::{BTreeMap, VecDeque};

/// Calls with no world event before calls are keyed.
pub const CYCLE_CALLS: u64 = 1_000;

/// Calls of a turn shown in the verdict; a longer cycle is shown by its last calls.
pub const SHOWN: usize = 8;

/// Distinct keys kept before they are forgotten (and counting repeats starts again): a
/// cycle longer than this is not told.
const KEPT: usize = 1 << 16;

/// What the watch keeps for one execution.
#[derive(Debug, Default)]
pub(crate) struct CycleWatch {
    /// Calls since the last world event.
    since_event: u64,
    /// Keyed calls so far, in this run of calls without a world event.
    index: u64,
    /// Each key seen, with the index of its last sighting.
    seen: BTreeMap<u64, u64>,
    /// Consecutive keyed calls that repeated a key.
    repeats: u64,
    /// How many calls the last repeat came round after its key's last sighting.
    period: u64,
    /// The last [`SHOWN`] calls, described.
    recent: VecDeque<String>,
    /// Clients that made a keyed call.
    took_part: Vec<bool>,
    /// The clients' clock reads when keying began.
    clock_reads_then: u64,
}

/// A cycle found: how many calls repeated and one turn of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle {
    /// Consecutive calls that came round to a call, reply and state seen before.
    pub repeated: u64,
    /// Calls in the last turn.
    pub period: u64,
    /// The last turn's calls (its last eight when longer), oldest first.
    pub turn: Vec<String>,
}

impl CycleWatch {
    /// Empty, for `clients` clients.
    pub fn reset(&mut self, clients: usize) {
        self.event();
        self.took_part.clear();
        self.took_part.resize(clients, false);
    }

    /// A world event: a client finished or marked progress, a fault fired, a timer.
    pub fn event(&mut self) {
        if self.index > 0 {
            self.forget();
        }
        self.since_event = 0;
    }

    /// Forgets every key (out of the path of the executions that key none).
    fn forget(&mut self) {
        self.index = 0;
        self.seen.clear();
        self.repeats = 0;
        self.period = 0;
        self.recent.clear();
        self.took_part.iter_mut().for_each(|t| *t = false);
    }

    /// True if the next call should be keyed ([`CycleWatch::keyed`]); else it is only
    /// counted ([`CycleWatch::counted`]).
    pub fn keying(&self) -> bool {
        self.since_event >= CYCLE_CALLS
    }

    /// A call that is not keyed.
    pub fn counted(&mut self) {
        self.since_event += 1;
    }

    /// A keyed call by `client`, described as `shown` (built only when keying): `key`
    /// hashes its request, its reply and the state it left. Returns true when a cycle
    /// should be checked for (every [`super::spin::REPEATS_FOR_SPIN`] repeats).
    pub fn keyed(&mut self, client: usize, key: u64, shown: String, clock_reads: u64) -> bool {
        if self.index == 0 {
            self.clock_reads_then = clock_reads;
        }
        if self.seen.len() >= KEPT {
            self.forget();
        }
        self.since_event += 1;
        self.index += 1;
        self.took_part[client] = true;
        if self.recent.len() == SHOWN {
            self.recent.pop_front();
        }
        self.recent.push_back(shown);
        match self.seen.insert(key, self.index) {
            Some(last) => {
                self.repeats += 1;
                self.period = self.index - last;
                self.repeats.is_multiple_of(super::spin::REPEATS_FOR_SPIN)
            }
            None => {
                self.repeats = 0;
                false
            }
        }
    }

    /// True if every one of `busy` made a keyed call: a client asleep the whole time
    /// may wake and change things.
    pub fn all_took_part(&self, mut busy: impl Iterator<Item = usize>) -> bool {
        busy.all(|c| self.took_part[c])
    }

    /// True if no client read its clock since keying began.
    pub fn clock_untouched(&self, clock_reads: u64) -> bool {
        clock_reads == self.clock_reads_then
    }

    /// The cycle as it stands.
    pub fn cycle(&self) -> Cycle {
        let shown = (self.period as usize).min(self.recent.len());
        Cycle {
            repeated: self.repeats,
            period: self.period,
            turn: self
                .recent
                .iter()
                .skip(self.recent.len() - shown)
                .cloned()
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_keyed_only_after_a_quiet_stretch_and_a_cycle_is_its_last_turn() {
        let mut w = CycleWatch::default();
        w.reset(2);
        for _ in 0..CYCLE_CALLS {
            assert!(!w.keying());
            w.counted();
        }
        assert!(w.keying());
        // Two calls round and round: 1, 2, 1, 2, …
        let mut due = 0;
        for n in 0..2 * super::super::spin::REPEATS_FOR_SPIN {
            let key = n % 2;
            due += u64::from(w.keyed(0, key, format!("call {key}"), 7));
        }
        assert_eq!(due, 1);
        let cycle = w.cycle();
        assert_eq!(cycle.period, 2);
        assert_eq!(cycle.turn, ["call 0", "call 1"]);
        assert!(w.all_took_part([0].into_iter()));
        assert!(!w.all_took_part([0, 1].into_iter()));
        assert!(w.clock_untouched(7) && !w.clock_untouched(8));
        // A world event forgets it all and waits for another quiet stretch.
        w.event();
        assert!(!w.keying());
        assert_eq!(w.cycle().repeated, 0);
    }
}
