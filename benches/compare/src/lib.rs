//! Benchmarks of mcsim against loom and shuttle on the same memcached recipes.
//!
//! The library holds the [shuttle](https://docs.rs/shuttle) backend ([`ShuttleServer`],
//! [`ShuttleClient`]), the shuttle model of the counter workload, and that workload with no
//! checker at all ([`counter_direct`], the floor every checker pays); the `compare` binary
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

/// The shared work of the counter workload with no checker at all: `clients` clients
/// increment once, one after another, each call executed by the server the moment it is
/// made, on `server` reset to time zero. Returns true if the counter ends right.
///
/// Every checker that runs this workload runs the same recipe code and makes the same
/// server calls (at least as many: a sequential run of incr/add takes the fewest), and
/// keeps each client's future on the heap while others run. So the rate of this loop
/// bounds from above the executions per second any scheduler, mcsim's included, can
/// reach on the workload.
pub fn counter_direct(variant: CounterVariant, clients: usize, server: &mut Server) -> bool {
    use std::cell::RefCell;
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};

    /// A connection whose calls complete at once, a tick apart.
    #[derive(Clone)]
    struct Direct<'a, 's> {
        state: &'a RefCell<(&'s mut Server, VirtualTime)>,
    }

    impl Memcache for Direct<'_, '_> {
        async fn call(&self, request: Request) -> Result<Reply, Transport> {
            let mut state = self.state.borrow_mut();
            state.1 += TICK;
            let now = state.1;
            Ok(state.0.apply_owned(request, now))
        }

        fn now(&self) -> VirtualTime {
            self.state.borrow().1
        }

        async fn sleep(&self, duration: Duration) {
            self.state.borrow_mut().1 += duration;
        }
    }

    server.reset(VirtualTime::ZERO);
    let state = RefCell::new((server, VirtualTime::ZERO));
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..clients {
        let mc = Direct { state: &state };
        let mut client: Pin<Box<dyn Future<Output = _> + '_>> = Box::pin(async move {
            let counter = Counter::new("views", variant, Rc::new(Cell::new(0)));
            counter.increment(&mc, 1).await
        });
        match client.as_mut().poll(&mut cx) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(e)) => panic!("a direct increment failed: {e}"),
            Poll::Pending => panic!("a direct call never waits"),
        }
    }
    let (server, now) = state.into_inner();
    let key = Counter::new("views", variant, Rc::default()).key().clone();
    let value = server.peek(&key, now).map(|item| item.data.clone());
    value.and_then(|v| std::str::from_utf8(&v).ok()?.trim().parse::<u64>().ok())
        == Some(clients as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_direct_run_counts_every_increment_and_starts_afresh_each_time() {
        let mut server = Server::with_defaults();
        for variant in [CounterVariant::GetSet, CounterVariant::IncrAdd] {
            // A second run on the same server would count 6 if the reset kept items.
            assert!(counter_direct(variant, 3, &mut server));
            assert!(counter_direct(variant, 3, &mut server));
        }
    }
}
