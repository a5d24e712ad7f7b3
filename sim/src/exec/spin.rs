//! Telling a spinning recipe from a waiting one, at a flat cost per step.
//!
//! A recipe **spins** (a livelock) when nothing can ever change: for a long stretch of
//! calls no server state changed, every call repeated one its client had already made
//! with the same reply, every unfinished client took part (none sat asleep the whole
//! time, about to wake), no client read its clock, no world timer (restart, rejoin,
//! scripted fault) is pending and no live item has an expiry ahead. Such an execution is
//! stopped at once with a `livelock` verdict instead of running to the step budget.
//! Sleeping for no time in a loop is a spin too: the sleeper is due again at the instant
//! it woke, so no call runs and virtual time cannot move on; past
//! [`REPEATS_FOR_SPIN`] wakes at one instant with no call between, the execution is a
//! `livelock` (its `wakes` count them).
//!
//! A recipe that changes the servers for ever, round a cycle of states, is told by
//! [`super::cycle`], whose watch this one keeps.
//!
//! A recipe that **waits** (on a TTL, a restart, its own deadline) is not a spin: if it
//! is still busy when the budget runs out, the verdict is `stuck`, with how long its
//! clients went without progress and the earliest expiry that could release them.
//!
//! A call changes state unless it is a read or its reply says nothing was done
//! (`NOT_STORED`, `EXISTS`, `NOT_FOUND`, errors, a miss). Tracking (one hash and one set
//! lookup per call) starts only after [`QUIET_CALLS`] calls without a change.

use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};

use super::cycle::CycleWatch;
use crate::clock::VirtualTime;
use crate::protocol::{Reply, Request};

/// Calls without a state change before repetitions are tracked.
pub const QUIET_CALLS: u64 = 64;

/// Consecutive repeated calls that make a spin (checked again every as many more), and
/// consecutive wakes at one instant with no call between.
pub const REPEATS_FOR_SPIN: u64 = 10_000;

/// What the watch keeps for one execution.
#[derive(Debug, Default)]
pub(crate) struct SpinWatch {
    /// Calls since the last change.
    quiet: u64,
    /// Consecutive calls that repeated an earlier one.
    repeats: u64,
    /// The clients' clock reads when tracking began.
    clock_reads_then: u64,
    /// What the watch keeps per client, by client.
    clients: Vec<Watched>,
    /// True once the model marked progress of its own ([`crate::Client::progress`]):
    /// the liveness figures then count its marks, not server writes.
    marking: bool,
    /// The step and instant of the last sleeper's wake, and how many wakes in a row came
    /// at them ([`SpinWatch::woke`]).
    wakes: ((u64, VirtualTime), u64),
    /// The watch for a cycle of states, which the calls that change state are kept for.
    pub cycle: CycleWatch,
}

/// What the watch keeps for one client (one record per client, so that an execution
/// starts by resetting one vector).
#[derive(Debug, Default)]
struct Watched {
    /// Hashes of the (request, reply) pairs it made since tracking began.
    seen: BTreeSet<u64>,
    /// The virtual time of its last progress.
    last_progress: VirtualTime,
    /// The gaps between its changes of server state (or start, or finish): the liveness
    /// figures.
    changes: Gap,
    /// The gaps between its marks (or start, or finish).
    marks: Gap,
    /// A pause or death fault hit it: its own waits are not the others' waits.
    faulted: bool,
}

/// When a client last moved (or started), and the longest it went without moving.
#[derive(Debug, Default, Clone, Copy)]
struct Gap {
    last: VirtualTime,
    /// In microseconds: a `Duration` would be built and compared at every change.
    longest: u64,
}

impl Gap {
    /// Moved at `now`.
    fn moved(&mut self, now: VirtualTime) {
        self.longest = self
            .longest
            .max(now.micros().saturating_sub(self.last.micros()));
        self.last = now;
    }
}

impl SpinWatch {
    /// Empty, for `clients` clients.
    pub fn reset(&mut self, clients: usize) {
        self.quiet = 0;
        self.repeats = 0;
        self.clock_reads_then = 0;
        self.marking = false;
        self.wakes = ((0, VirtualTime::ZERO), 0);
        self.cycle.reset(clients);
        if self.clients.len() > clients {
            self.drop_clients(clients);
        }
        for c in &mut self.clients {
            // Most executions never track repetitions: an empty set is left as it is
            // (clearing one still drops a tree), and one that is not is emptied out of
            // line.
            if !c.seen.is_empty() {
                empty_set(&mut c.seen);
            }
            c.last_progress = VirtualTime::ZERO;
            c.changes = Gap::default();
            c.marks = Gap::default();
            c.faulted = false;
        }
        self.clients.resize_with(clients, Watched::default);
    }

    /// Keeps the first `clients` clients' watches (out of the path of an execution with
    /// as many clients as the last).
    fn drop_clients(&mut self, clients: usize) {
        self.clients.truncate(clients);
    }

    /// A sleeper woke at step `step` and instant `now`: one more in the run of wakes
    /// there, or the first of a new run. Past [`REPEATS_FOR_SPIN`] wakes with no call
    /// between, clients are sleeping for no time in a loop (virtual time cannot move on)
    /// and the run's length is returned: the execution is a livelock.
    pub fn woke(&mut self, step: u64, now: VirtualTime) -> Option<u64> {
        let (at, wakes) = &mut self.wakes;
        if *at == (step, now) {
            *wakes += 1;
        } else {
            (*at, *wakes) = ((step, now), 1);
        }
        (*wakes > REPEATS_FOR_SPIN).then_some(*wakes)
    }

    /// `client` finished at `now`: progress by either count.
    pub fn finished(&mut self, client: usize, now: VirtualTime) {
        let c = &mut self.clients[client];
        c.last_progress = now;
        c.changes.moved(now);
        c.marks.moved(now);
    }

    /// The model marked progress of `client` at `now`.
    pub fn marked(&mut self, client: usize, now: VirtualTime) {
        self.marking = true;
        self.clients[client].marks.moved(now);
        self.changed();
        self.clients[client].last_progress = now;
    }

    /// A pause or death fault hit the client.
    pub fn faulted(&mut self, client: usize) {
        self.clients[client].faulted = true;
    }

    /// The liveness figures at `now`: the longest any client the faults did not hit went
    /// without progress (its marks, when the model marks any; else changing server state)
    /// or finishing, counting the wait still open for the unfinished, and how many such
    /// clients are unfinished.
    pub fn liveness(&self, unfinished: &[bool], now: VirtualTime) -> (std::time::Duration, usize) {
        let mut longest = std::time::Duration::ZERO;
        let mut stuck = 0;
        for (c, &open) in self.clients.iter().zip(unfinished) {
            if c.faulted {
                continue;
            }
            let gap = if self.marking { c.marks } else { c.changes };
            longest = longest.max(std::time::Duration::from_micros(gap.longest));
            if open {
                stuck += 1;
                longest = longest.max(now.since(gap.last));
            }
        }
        (longest, stuck)
    }

    /// True if the next call's (request, reply) should be hashed.
    pub fn tracking_next(&self) -> bool {
        self.quiet + 1 >= QUIET_CALLS
    }

    /// Something changed the world (a fault, a timer, a client finishing).
    #[inline(always)]
    pub fn changed(&mut self) {
        self.cycle.event();
        self.calm();
    }

    /// A call changed server state: no spin, though perhaps a cycle.
    fn calm(&mut self) {
        if self.quiet >= QUIET_CALLS {
            self.forget_repeats();
        }
        self.quiet = 0;
        self.repeats = 0;
    }

    /// Forgets every call each client was seen to repeat.
    fn forget_repeats(&mut self) {
        self.clients.iter_mut().for_each(|c| c.seen.clear());
    }

    /// Records a call. `request_hash` is `Some` when [`SpinWatch::tracking_next`] said
    /// so; `changed` tells whether the call changed server state. Returns true when a
    /// spin should be checked for (every [`REPEATS_FOR_SPIN`] repeats).
    #[inline(always)]
    pub fn call(
        &mut self,
        client: usize,
        request_hash: Option<u64>,
        reply: Option<&Reply>,
        changed: bool,
        now: VirtualTime,
        clock_reads: u64,
    ) -> bool {
        if changed {
            self.calm();
            let c = &mut self.clients[client];
            c.last_progress = now;
            c.changes.moved(now);
            return false;
        }
        self.quiet += 1;
        if self.quiet < QUIET_CALLS {
            self.clients[client].last_progress = now;
            return false;
        }
        self.quiet_call(client, request_hash, reply, now, clock_reads)
    }

    /// [`SpinWatch::call`] for a call that changed nothing after [`QUIET_CALLS`] that
    /// changed nothing either: repetitions are tracked.
    fn quiet_call(
        &mut self,
        client: usize,
        request_hash: Option<u64>,
        reply: Option<&Reply>,
        now: VirtualTime,
        clock_reads: u64,
    ) -> bool {
        if self.quiet == QUIET_CALLS {
            self.clock_reads_then = clock_reads;
        }
        let Some(request_hash) = request_hash else {
            return false;
        };
        let mut h = crate::exec::ghost::Fingerprint::default();
        request_hash.hash(&mut h);
        reply.hash(&mut h);
        let c = &mut self.clients[client];
        if c.seen.insert(h.finish()) {
            self.repeats = 0;
            c.last_progress = now;
            false
        } else {
            self.repeats += 1;
            self.repeats.is_multiple_of(REPEATS_FOR_SPIN)
        }
    }

    /// Consecutive repeated calls so far.
    pub fn repeats(&self) -> u64 {
        self.repeats
    }

    /// True if every one of `busy` made a call since tracking began: a client asleep the
    /// whole time (a lock holder in its critical section, say) may wake and change
    /// things, so the others' repetitions are no spin yet.
    pub fn all_took_part(&self, mut busy: impl Iterator<Item = usize>) -> bool {
        busy.all(|c| !self.clients[c].seen.is_empty())
    }

    /// True if no client read its clock since tracking began.
    pub fn clock_untouched(&self, clock_reads: u64) -> bool {
        clock_reads == self.clock_reads_then
    }

    /// The longest any of `busy` went without progress, at `now`, and who.
    pub fn longest_wait(
        &self,
        busy: impl Iterator<Item = usize>,
        now: VirtualTime,
    ) -> Option<(usize, std::time::Duration)> {
        let last = |c: usize| {
            let w = &self.clients[c];
            if self.marking {
                w.marks.last
            } else {
                w.last_progress
            }
        };
        busy.map(|c| (c, now.since(last(c))))
            .max_by_key(|(c, d)| (*d, std::cmp::Reverse(*c)))
    }
}

/// The hash of a request, for [`SpinWatch::call`]: foldhash with a fixed seed, which
/// hashes a long value several words at a time (a recipe that spins on an `append` of
/// kilobytes hashes each of its calls). Only told apart within one execution, so it
/// need not be the fingerprints' stable hash.
pub(crate) fn request_hash(request: &Request) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0).hash_one(request)
}

/// True unless the call was a read or its reply says the server did nothing.
pub(crate) fn changes_state(read_only: bool, reply: &Reply) -> bool {
    if read_only {
        return false;
    }
    match reply {
        Reply::NotStored
        | Reply::Exists
        | Reply::NotFound
        | Reply::Error
        | Reply::ClientError(_)
        | Reply::ServerError(_) => false,
        Reply::Values(v) => !v.is_empty(),
        Reply::Meta(m) => !matches!(m.code.as_str(), "NS" | "EX" | "NF" | "EN"),
        _ => true,
    }
}

/// Empties a set of repetitions (out of the path of an execution that tracked none).
fn empty_set(seen: &mut BTreeSet<u64>) {
    seen.clear();
}
