//! The memcached a shuttle user writes for a test: one server behind a
//! `shuttle::sync::Mutex`, a logical clock, and faults injected by a random choice in
//! the mock, the way shuttle's own examples inject them.
//!
//! The server behind the lock is mcsim's simulated memcached, so a bug ported to shuttle
//! meets the same commands, expiry and eviction semantics as under mcsim. A hand-written
//! map would be a little cheaper per call; the server's share of a shuttle execution is
//! measured in section 2 of the report (the "no checker" row).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use mcsim::memcache::{Key, Memcache, Transport};
use mcsim::protocol::{Reply, Request};
use mcsim::{Server, ServerConfig, VirtualTime};
use shuttle::rand::{Rng, thread_rng};

/// Virtual time one call takes.
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
}

impl ShuttleServer {
    /// A server with default settings booted at time zero, without faults.
    pub fn new() -> ShuttleServer {
        ShuttleServer::with_faults(MockFaults::default())
    }

    /// A server that injects `faults`.
    pub fn with_faults(faults: MockFaults) -> ShuttleServer {
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
        }
    }

    /// A client of this server (give each shuttle thread its own).
    pub fn client(&self) -> ShuttleClient {
        ShuttleClient {
            shared: self.clone(),
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
}

impl ShuttleClient {
    fn pause_maybe(&self) {
        let s = &self.shared;
        if draw(s.faults.pause, &s.left.pause) {
            s.advance_to(s.now() + s.faults.pause_for);
            shuttle::thread::yield_now();
        }
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
            let now = VirtualTime(
                s.clock
                    .fetch_add(TICK.as_micros() as u64, Ordering::Relaxed),
            ) + TICK;
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

    /// Sleeping moves the shared clock to this client's wake-up time (unless another
    /// client's is later) and lets the others run.
    async fn sleep(&self, duration: Duration) {
        let s = &self.shared;
        s.advance_to(s.now() + duration);
        self.pause_maybe();
        shuttle::thread::yield_now();
    }
}
