//! Benchmarks of mcsim against loom and shuttle on the same memcached recipes.
//!
//! The library holds the [shuttle](https://docs.rs/shuttle) backend ([`ShuttleServer`],
//! [`ShuttleClient`]), the shuttle model of the counter workload, and that workload with no
//! checker at all ([`counter_direct`], the floor every checker pays) and under a minimal
//! scheduler ([`counter_minimal`], what scheduling alone costs); the `compare` binary
//! measures mcsim, loom and shuttle side by side and writes `reports/bench.md`.
//!
//! The shuttle backend models what `mcsim::loom` (built under `--cfg loom`) models under
//! loom: every call atomic at the server (a `shuttle::sync::Mutex` around one simulated
//! memcached and a logical clock advanced by a tick per call), sleeps that advance the
//! clock and yield, no latency windows and no faults.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcsim::memcache::{Memcache, Transport};
use mcsim::protocol::{Reply, Request};
use mcsim::{Server, ServerConfig, VirtualTime};
use mcsim_models::counter::{Counter, CounterVariant};

mod budget;
mod floor;

pub use budget::Budget;
pub use floor::{counter_direct, counter_minimal};

/// Virtual time one call takes.
pub const TICK: Duration = Duration::from_micros(100);

/// The server and its logical clock, behind one lock.
struct State {
    server: Server,
    now: VirtualTime,
}

/// One simulated memcached shared by the shuttle threads of a test. Create it inside the
/// function shuttle runs; clones share the server.
#[derive(Clone)]
pub struct ShuttleServer {
    state: Arc<shuttle::sync::Mutex<State>>,
}

impl ShuttleServer {
    /// A server with default settings booted at time zero.
    pub fn new() -> ShuttleServer {
        let state = State {
            server: Server::new(ServerConfig::default(), VirtualTime::ZERO),
            now: VirtualTime::ZERO,
        };
        ShuttleServer {
            state: Arc::new(shuttle::sync::Mutex::new(state)),
        }
    }

    /// A client of this server (give each shuttle thread its own).
    pub fn client(&self) -> ShuttleClient {
        ShuttleClient {
            shared: self.clone(),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        let mut state = self
            .state
            .lock()
            .expect("a client panicked holding the server");
        f(&mut state)
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

impl Memcache for ShuttleClient {
    async fn call(&self, request: Request) -> Result<Reply, Transport> {
        Ok(self.shared.with(|state| {
            state.now += TICK;
            state.server.apply_owned(request, state.now)
        }))
    }

    fn now(&self) -> VirtualTime {
        self.shared.with(|state| state.now)
    }

    async fn sleep(&self, duration: Duration) {
        self.shared.with(|state| state.now += duration);
        shuttle::thread::yield_now();
    }
}

/// The counter workload under shuttle: `clients` shuttle threads each increment once with
/// the recipe `variant`; after joining them, a value below the number of increments is a
/// lost increment and counts one in `violations` (no panic, so a run covers every
/// execution it was given).
pub fn counter_model(
    variant: CounterVariant,
    clients: usize,
    violations: Arc<AtomicUsize>,
) -> impl Fn() + Send + Sync + 'static {
    move || {
        let server = ShuttleServer::new();
        let handles: Vec<_> = (0..clients)
            .map(|_| {
                let mc = server.client();
                shuttle::thread::spawn(move || {
                    shuttle::future::block_on(async move {
                        let counter = Counter::new("views", variant, Rc::new(Cell::new(0)));
                        counter.increment(&mc, 1).await.expect("increment");
                    })
                })
            })
            .collect();
        for h in handles {
            h.join().expect("client thread");
        }
        let counter = Counter::new("views", variant, Rc::default());
        let value =
            shuttle::future::block_on(counter.value(&server.client())).expect("counter value");
        if value != clients as u64 {
            violations.fetch_add(1, Ordering::Relaxed);
        }
    }
}
