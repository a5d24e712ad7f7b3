//! The memcached a shuttle user writes for a test: one server behind a
//! `shuttle::sync::Mutex`, a logical clock, and faults injected by a random choice in
//! the mock, the way shuttle's own examples inject them.
//!
//! Shuttle has no notion of time (time models are an open proposal, awslabs/shuttle#217),
//! so the mock keeps the clock. Two ways, as a user would write them:
//!
//! - [`Clock::Shared`]: one logical clock; a sleep moves it to the sleeper's wake-up
//!   (unless it is later) and yields. Cheap, and enough for a bug of interleavings or
//!   faults. But a client's time then moves with every other client's sleep: between
//!   reading the clock and making its call, a client may see seconds pass, which no
//!   client of a server does.
//! - [`Clock::Ordered`]: time in order, as a discrete-event simulation keeps it. A sleep
//!   returns only once no other client is running and no other sleeper wakes earlier;
//!   the clock then moves to its wake-up. A waiting sleeper yields in a loop, so shuttle's
//!   schedulers spend steps on it: the price of keeping time on top of a scheduler that has
//!   none. Needed for a bug of time (a tick edge crossed in one call's flight).
//!
//! The server behind the lock is mcsim's simulated memcached, so a bug ported to shuttle
//! meets the same commands, expiry and eviction semantics as under mcsim. A hand-written
//! map would be a little cheaper per call; the server's share of a shuttle execution is
//! measured in section 2 of the report (the "no checker" row).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcsim::memcache::{Key, Memcache, Transport};
use mcsim::protocol::{Reply, Request};
use mcsim::{Server, ServerConfig, VirtualTime};
use shuttle::rand::{Rng, thread_rng};

/// Virtual time one call takes, unless the server is given another
/// ([`ShuttleServer::with_call_time`]).
pub const TICK: Duration = Duration::from_micros(100);

/// Faults the mock injects, each with a probability per opportunity and a budget per
/// execution (as a scenario file's `{ max, probability }`).
#[derive(Debug, Clone, Default)]
pub struct MockFaults {
    /// A reply lost after the server applied the call (`Transport::TimedOut`).
    pub reply_lost: Option<(u32, f64)>,
    /// The call's key evicted just before the call, only for `evict_key`.
    pub evict: Option<(u32, f64)>,
    /// The key evictions aim at.
    pub evict_key: Option<Key>,
    /// The client stops for `pause` before a call or during a sleep.
    pub pause: Option<(u32, f64)>,
    /// How long a pause lasts.
    pub pause_for: Duration,
}

/// How the mock keeps time (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    /// One clock every sleep moves.
    #[default]
    Shared,
    /// Time in order: a sleeper wakes once no client runs and none wakes earlier.
    Ordered,
}

/// Where each client of an ordered clock is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Running,
    /// Asleep until this instant (microseconds).
    Sleeping(u64),
    /// Its handle dropped: it makes no more calls.
    Done,
}

/// The clients of an ordered clock. A plain mutex, not a shuttle one: reading who sleeps
/// is bookkeeping of the mock, not a synchronization of the program under test.
#[derive(Debug, Default)]
struct Timeline {
    states: Mutex<Vec<State>>,
}

impl Timeline {
    fn join(&self) -> usize {
        let mut states = self.states.lock().expect("timeline");
        states.push(State::Running);
        states.len() - 1
    }

    fn set(&self, client: usize, state: State) {
        self.states.lock().expect("timeline")[client] = state;
    }

    /// Whether `client`, asleep until `wake`, is next: no other client running, none
    /// waking earlier (ties go to the lower index).
    fn is_next(&self, client: usize, wake: u64) -> bool {
        let states = self.states.lock().expect("timeline");
        states.iter().enumerate().all(|(i, s)| match *s {
            _ if i == client => true,
            State::Running => false,
            State::Sleeping(w) => (w, i) > (wake, client),
            State::Done => true,
        })
    }
}

/// A client's place on an ordered clock; dropping the last handle of the client marks it
/// done, so sleepers stop waiting for it.
struct Slot {
    index: usize,
    timeline: Arc<Timeline>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.timeline.set(self.index, State::Done);
    }
}

/// What is left of each fault budget in the current execution.
struct Budgets {
    reply_lost: AtomicU32,
    evict: AtomicU32,
    pause: AtomicU32,
}

/// Draws one fault of budget `left` with probability `p`: a shuttle random choice, so
/// the scheduler's seed decides it and a failing schedule replays it.
fn draw(rule: Option<(u32, f64)>, left: &AtomicU32) -> bool {
    let Some((_, p)) = rule else { return false };
    if left.load(Ordering::Relaxed) == 0 || !thread_rng().gen_bool(p) {
        return false;
    }
    left.fetch_sub(1, Ordering::Relaxed);
    true
}

/// One simulated memcached shared by the shuttle threads of a test. Create it inside the
/// function shuttle runs; clones share the server.
#[derive(Clone)]
pub struct ShuttleServer {
    server: Arc<shuttle::sync::Mutex<Server>>,
    /// The logical clock, microseconds. A plain atomic, not a shuttle one: reading the
    /// clock is not a scheduling point, as reading a real clock is not a synchronization.
    clock: Arc<AtomicU64>,
    faults: Arc<MockFaults>,
    left: Arc<Budgets>,
    /// The clients, when time is ordered.
    timeline: Option<Arc<Timeline>>,
    /// Virtual time one call takes.
    call_time: Duration,
}

impl ShuttleServer {
    /// A server with default settings booted at time zero, without faults.
    pub fn new() -> ShuttleServer {
        ShuttleServer::with_faults(MockFaults::default())
    }

    /// A server that injects `faults`, its clock shared.
    pub fn with_faults(faults: MockFaults) -> ShuttleServer {
        ShuttleServer::with_clock(faults, Clock::Shared)
    }

    /// A server that injects `faults` and keeps time as `clock` says.
    pub fn with_clock(faults: MockFaults, clock: Clock) -> ShuttleServer {
        let budget = |r: Option<(u32, f64)>| AtomicU32::new(r.map_or(0, |(max, _)| max));
        ShuttleServer {
            server: Arc::new(shuttle::sync::Mutex::new(Server::new(
                ServerConfig::default(),
                VirtualTime::ZERO,
            ))),
            clock: Arc::new(AtomicU64::new(0)),
            left: Arc::new(Budgets {
                reply_lost: budget(faults.reply_lost),
                evict: budget(faults.evict),
                pause: budget(faults.pause),
            }),
            faults: Arc::new(faults),
            timeline: (clock == Clock::Ordered).then(Arc::default),
            call_time: TICK,
        }
    }

    /// The same server with calls that take `call_time` each.
    pub fn with_call_time(self, call_time: Duration) -> ShuttleServer {
        ShuttleServer { call_time, ..self }
    }

    /// A client of this server (give each shuttle thread its own, made before the thread
    /// is spawned: on an ordered clock it counts as running until it sleeps or is dropped).
    pub fn client(&self) -> ShuttleClient {
        ShuttleClient {
            shared: self.clone(),
            slot: self.timeline.as_ref().map(|t| {
                Arc::new(Slot {
                    index: t.join(),
                    timeline: t.clone(),
                })
            }),
        }
    }

    /// The logical clock.
    pub fn now(&self) -> VirtualTime {
        VirtualTime(self.clock.load(Ordering::Relaxed))
    }

    /// Moves the clock to `t` unless it is already later.
    pub fn advance_to(&self, t: VirtualTime) {
        self.clock.fetch_max(t.micros(), Ordering::Relaxed);
    }

    /// The value under `key` now, read outside any client (for end checks).
    pub fn peek_u64(&self, key: &Key) -> Option<u64> {
        let server = self
            .server
            .lock()
            .expect("a client panicked holding the server");
        let item = server.peek(key, self.now())?;
        std::str::from_utf8(&item.data).ok()?.parse().ok()
    }
}

impl Default for ShuttleServer {
    fn default() -> ShuttleServer {
        ShuttleServer::new()
    }
}

/// A client connection to a [`ShuttleServer`]: one call at a time, each atomic at the
/// server.
#[derive(Clone)]
pub struct ShuttleClient {
    shared: ShuttleServer,
    /// Its place on an ordered clock.
    slot: Option<Arc<Slot>>,
}

impl ShuttleClient {
    fn pause_maybe(&self) {
        let s = &self.shared;
        if draw(s.faults.pause, &s.left.pause) {
            match &self.slot {
                Some(slot) => slot.wait(s, s.faults.pause_for),
                None => {
                    s.advance_to(s.now() + s.faults.pause_for);
                    shuttle::thread::yield_now();
                }
            }
        }
    }
}

impl Slot {
    /// Waits until this client is the next to wake after `duration`, then moves the
    /// clock there.
    fn wait(&self, server: &ShuttleServer, duration: Duration) {
        let wake = server.now() + duration;
        self.timeline
            .set(self.index, State::Sleeping(wake.micros()));
        while !self.timeline.is_next(self.index, wake.micros()) {
            shuttle::thread::yield_now();
        }
        self.timeline.set(self.index, State::Running);
        server.advance_to(wake);
    }
}

impl Memcache for ShuttleClient {
    async fn call(&self, request: Request) -> Result<Reply, Transport> {
        self.pause_maybe();
        let s = &self.shared;
        let evict = s
            .faults
            .evict_key
            .as_ref()
            .filter(|k| request.keys().contains(k));
        let evict = evict.filter(|_| draw(s.faults.evict, &s.left.evict));
        let reply = {
            let mut server = s
                .server
                .lock()
                .expect("a client panicked holding the server");
            let call = s.call_time.as_micros() as u64;
            let now = VirtualTime(s.clock.fetch_add(call, Ordering::Relaxed)) + s.call_time;
            if let Some(key) = evict {
                server.evict(key, now);
            }
            server.apply(request, now)
        };
        if draw(s.faults.reply_lost, &s.left.reply_lost) {
            return Err(Transport::TimedOut);
        }
        Ok(reply)
    }

    fn now(&self) -> VirtualTime {
        self.shared.now()
    }

    /// Sleeping lets the others run: on a shared clock it moves the clock to this
    /// client's wake-up (unless another client's is later); on an ordered one it waits
    /// until this client is the next to wake.
    async fn sleep(&self, duration: Duration) {
        let s = &self.shared;
        match &self.slot {
            Some(slot) => {
                slot.wait(s, duration);
                self.pause_maybe();
            }
            None => {
                s.advance_to(s.now() + duration);
                self.pause_maybe();
                shuttle::thread::yield_now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shuttle::future::block_on;
    use shuttle::scheduler::RandomScheduler;
    use shuttle::{Config, Runner};

    /// On an ordered clock, clients wake in the order of their wake-up times whatever the
    /// schedule, each seeing the clock at its own; on a shared one, a sleep moves everyone.
    #[test]
    fn an_ordered_clock_wakes_sleepers_in_time_order() {
        let order: Arc<Mutex<Vec<(u64, u64)>>> = Arc::default();
        let seen = order.clone();
        Runner::new(RandomScheduler::new_from_seed(3, 300), Config::default()).run(move || {
            seen.lock().unwrap().clear();
            let server = ShuttleServer::with_clock(MockFaults::default(), Clock::Ordered);
            let threads: Vec<_> = [30u64, 10, 20]
                .into_iter()
                .map(|ms| {
                    let (mc, seen) = (server.client(), seen.clone());
                    shuttle::thread::spawn(move || {
                        block_on(async move {
                            mc.sleep(Duration::from_millis(ms)).await;
                            seen.lock().unwrap().push((ms, mc.now().micros()));
                        })
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
            let woke = seen.lock().unwrap().clone();
            assert_eq!(woke, vec![(10, 10_000), (20, 20_000), (30, 30_000)]);
        });
        assert_eq!(order.lock().unwrap().len(), 3);
    }
}
