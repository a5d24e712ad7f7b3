//! A [`Memcache`] backend for the [loom](https://docs.rs/loom) model checker: the same
//! recipe code that runs under mcsim's executor runs, unchanged, as loom threads.
//!
//! **What it is for.** Cross-checking mcsim: a recipe's verdict under loom's exhaustive
//! exploration of thread interleavings should match `mcsim explore`'s on the equivalent
//! scenario. Loom knows nothing about memcached; it explores the orders in which clients
//! reach the server, and this backend turns each of those orders into a sequence of
//! [`Server::apply`] calls on one simulated memcached.
//!
//! **What it models.** Every client is a loom thread driving its recipe future with
//! `loom::future::block_on`. Every call is atomic at the server: [`LoomClient::call`]
//! locks a `loom::sync::Mutex` holding the [`Server`] and a logical clock (virtual
//! microseconds), advances the clock by one tick, applies the request at that instant and
//! unlocks. Each lock acquisition is a point where loom may switch clients, so loom
//! explores every order of calls. A sleep yields (`loom::thread::yield_now`), so spin
//! loops that back off between attempts stay finite under loom's fair treatment of
//! yielding threads, and adds its duration to the shared logical clock at the client's
//! next call (it costs no scheduling point of its own); [`Memcache::now`] reads the clock
//! plus the client's own pending sleep.
//!
//! **What it does not model.** Latency windows (a call is applied the instant loom lets
//! its client take the lock; there is no interval in which it is in flight), faults (no
//! lost replies, timeouts, evictions on demand, crashes or clock jumps; a call never
//! returns a [`Transport`] error), and TTL timing beyond the logical clock: time moves
//! only by ticks and by sleeps, all clients share one clock (no skew), and a client's
//! sleep counts against everyone's clock once it makes its next call, whatever the
//! others did meanwhile. A sleeping client is not held back until its sleep is over:
//! loom may run it again at once, so loom explores orders a timed execution cannot reach.
//! Expiry happens only once the sum of ticks and sleeps passes a TTL. Use mcsim
//! itself for timing and faults.
//!
//! The server is shared through a `std::sync::Arc`, not loom's: loom's `Arc` models its
//! reference count, so every client dropping its handle would be a step loom permutes
//! (on the 3-client get/set counter, 116 319 executions instead of 7 847) with no bearing
//! on the recipe. The mutex, the only synchronization the recipes go through, is loom's.
//!
//! Compiled only with `--cfg loom`.

use std::cell::Cell;
use std::sync::Arc;
use std::time::Duration;

use loom::sync::Mutex;

use crate::clock::VirtualTime;
use crate::memcache::{Memcache, Transport};
use crate::protocol::{Reply, Request};
use crate::server::{Server, ServerConfig};

/// Virtual time one call takes by default: the shortest latency of mcsim's default window.
pub const DEFAULT_TICK: Duration = Duration::from_micros(100);

/// The server and its logical clock, behind one lock.
struct State {
    server: Server,
    now: VirtualTime,
}

/// One simulated memcached shared by the loom threads of a model, with its logical clock.
///
/// Create it inside the `loom::model` closure (loom primitives belong to one execution);
/// clones share the same server and clock.
#[derive(Clone)]
pub struct LoomServer {
    state: Arc<Mutex<State>>,
    tick: Duration,
}

impl LoomServer {
    /// A server with `config`, booted at time zero; each call advances the clock by `tick`.
    pub fn new(config: ServerConfig, tick: Duration) -> LoomServer {
        let state = State {
            server: Server::new(config, VirtualTime::ZERO),
            now: VirtualTime::ZERO,
        };
        LoomServer {
            state: Arc::new(Mutex::new(state)),
            tick,
        }
    }

    /// A server with default settings and [`DEFAULT_TICK`].
    pub fn with_defaults() -> LoomServer {
        LoomServer::new(ServerConfig::default(), DEFAULT_TICK)
    }

    /// A client of this server (give each loom thread its own).
    pub fn client(&self) -> LoomClient {
        LoomClient {
            shared: self.clone(),
            slept: Cell::new(Duration::ZERO),
        }
    }

    /// The logical clock.
    pub fn now(&self) -> VirtualTime {
        self.with(|state| state.now)
    }

    /// Runs `f` on the server at the current logical instant, holding its lock (for end
    /// checks after the clients are joined).
    pub fn inspect<R>(&self, f: impl FnOnce(&Server, VirtualTime) -> R) -> R {
        self.with(|state| f(&state.server, state.now))
    }

    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        let mut state = self
            .state
            .lock()
            .expect("a client panicked holding the server");
        f(&mut state)
    }
}

/// A client connection to a [`LoomServer`]: one call at a time, each atomic at the server.
#[derive(Clone)]
pub struct LoomClient {
    shared: LoomServer,
    /// Sleeps not yet added to the shared clock: they are added at the next call, so a
    /// sleep costs no scheduling point of its own.
    slept: Cell<Duration>,
}

impl Memcache for LoomClient {
    async fn call(&self, request: Request) -> Result<Reply, Transport> {
        let elapsed = self.slept.take() + self.shared.tick;
        Ok(self.shared.with(|state| {
            state.now += elapsed;
            state.server.apply(request, state.now)
        }))
    }

    fn now(&self) -> VirtualTime {
        self.shared.now() + self.slept.get()
    }

    async fn sleep(&self, duration: Duration) {
        self.slept.set(self.slept.get() + duration);
        loom::thread::yield_now();
    }
}

/// A [`Strategy`](crate::explore::Strategy) whose every choice loom makes: any
/// [`Model`](crate::Model) explored exhaustively by loom, through the same executor, with
/// no hand-written loom harness ([`crate::Check::loom`]).
///
/// Each step's options (every pending call at the earliest instant of its window, every
/// fault the plan still allows) are picked by races loom permutes: option `k` is taken
/// when loom lets the step's thread win the `k`-th two-thread race, so loom runs every
/// option of every step once, with no reduction of its own beyond that. Against
/// [`crate::exhaustive::Dfs`] this checks mcsim's partial-order reduction and bounds: both
/// walk the same tree, and a violation loom reaches that `mcsim explore` reports as
/// "no violation" is a hole in the reduction.
#[derive(Debug, Default)]
pub struct LoomChoices;

/// True if this thread wins a race against one other loom thread: loom runs both orders.
fn wins_race() -> bool {
    use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    let slot = Arc::new(AtomicUsize::new(0));
    let rival = slot.clone();
    let other = loom::thread::spawn(move || {
        let _ = rival.compare_exchange(0, 2, SeqCst, SeqCst);
    });
    let won = slot.compare_exchange(0, 1, SeqCst, SeqCst).is_ok();
    other.join().expect("the racing thread");
    won
}

impl crate::explore::Strategy for LoomChoices {
    fn name(&self) -> &'static str {
        "loom"
    }

    fn begin(&mut self, _execution: u64) {}

    fn choose(&mut self, options: &crate::explore::Options<'_>) -> Option<crate::explore::Choice> {
        let n = options.calls.len() + options.faults.len();
        let k = (0..n.saturating_sub(1))
            .find(|_| wins_race())
            .unwrap_or(n - 1);
        Some(match options.calls.get(k) {
            Some(call) => crate::explore::Choice::Run {
                client: call.client,
                delay: 0,
            },
            None => {
                crate::explore::Choice::Fault(options.faults[k - options.calls.len()].fault.clone())
            }
        })
    }
}
