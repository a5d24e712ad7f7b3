//! Benchmarks of mcsim against loom and shuttle on the same memcached recipes.
//!
//! The library holds the [shuttle](https://docs.rs/shuttle) backend ([`ShuttleServer`],
//! [`ShuttleClient`]), the shuttle model of the counter workload, and that workload with no
//! checker at all ([`counter_direct`], the floor every checker pays) and under a minimal
//! scheduler ([`counter_minimal`], what scheduling alone costs), and the measure of the
//! code one execution runs ([`footprint`], under callgrind); the `compare` binary
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

use mcsim_models::counter::{Counter, CounterVariant};

mod budget;
pub mod corpus;
mod floor;
pub mod footprint;
mod shuttle_server;

pub use budget::Budget;
pub use floor::{counter_direct, counter_minimal};
pub use shuttle_server::{Clock, MockFaults, ShuttleClient, ShuttleServer, TICK};

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
