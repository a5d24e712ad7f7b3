//! The counter workload without mcsim's executor: once with no scheduler at all (the
//! work every checker repeats, a floor), once under a minimal scheduler (what scheduling
//! costs before latency windows, faults, invariant checks, panic catching and a replayable
//! schedule record are added). `compare` puts both rates beside mcsim's and shuttle's.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use mcsim::memcache::{McError, Memcache, Transport, Value};
use mcsim::protocol::{Reply, Request};
use mcsim::{Server, VirtualTime};
use mcsim_models::counter::{Counter, CounterVariant};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::TICK;

type Client<'a> = Pin<Box<dyn Future<Output = Result<(), McError>> + 'a>>;

/// One client incrementing the counter once with `mc`, boxed as every checker keeps it.
fn increment<'a>(variant: CounterVariant, mc: impl Memcache + 'a) -> Client<'a> {
    Box::pin(async move {
        let counter = Counter::new("views", variant, Rc::new(Cell::new(0)));
        counter.increment(&mc, 1).await
    })
}

/// True if the counter on `server` holds `clients` at `now`.
fn counted(variant: CounterVariant, clients: usize, server: &Server, now: VirtualTime) -> bool {
    let key = Counter::new("views", variant, Rc::default()).key().clone();
    let value = server
        .peek(&key, now)
        .map(|item| Value::new(item.data.as_slice()));
    value.and_then(|v| v.as_u64()) == Some(clients as u64)
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
            Ok(state.0.apply(request, now))
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
        match increment(variant, mc).as_mut().poll(&mut cx) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(e)) => panic!("a direct increment failed: {e}"),
            Poll::Pending => panic!("a direct call never waits"),
        }
    }
    let (server, now) = state.into_inner();
    counted(variant, clients, server, now)
}

/// What the minimal scheduler's clients share: the server, the clock, and each client's
/// parked request and delivered reply.
struct Parking<'s> {
    server: &'s mut Server,
    now: VirtualTime,
    requests: Vec<Option<Request>>,
    replies: Vec<Option<Reply>>,
}

/// A client of the minimal scheduler: a call parks its request and waits for the reply.
#[derive(Clone)]
struct Parked<'a, 's> {
    id: usize,
    shared: &'a RefCell<Parking<'s>>,
}

/// A call parked until the scheduler executes it.
struct ParkedCall<'a, 's> {
    client: Parked<'a, 's>,
    request: Option<Request>,
}

impl Future for ParkedCall<'_, '_> {
    type Output = Result<Reply, Transport>;

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let mut shared = this.client.shared.borrow_mut();
        let id = this.client.id;
        if let Some(request) = this.request.take() {
            shared.requests[id] = Some(request);
            return Poll::Pending;
        }
        match shared.replies[id].take() {
            Some(reply) => Poll::Ready(Ok(reply)),
            None => Poll::Pending,
        }
    }
}

impl Memcache for Parked<'_, '_> {
    fn call(&self, request: Request) -> impl Future<Output = Result<Reply, Transport>> {
        ParkedCall {
            client: self.clone(),
            request: Some(request),
        }
    }

    fn now(&self) -> VirtualTime {
        self.shared.borrow().now
    }

    async fn sleep(&self, duration: Duration) {
        self.shared.borrow_mut().now += duration;
    }
}

/// The counter workload under a minimal scheduler seeded with `seed`: at each step one
/// client with a parked call, picked uniformly (PCG, as mcsim's `random`), has it
/// executed a tick later and is polled with the reply. No latency windows, faults,
/// invariant checks, panic catching, livelock budget or schedule record, which mcsim's
/// executor adds. Returns true if the counter ends right.
pub fn counter_minimal(
    variant: CounterVariant,
    clients: usize,
    server: &mut Server,
    seed: u64,
) -> bool {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    server.reset(VirtualTime::ZERO);
    let shared = RefCell::new(Parking {
        server,
        now: VirtualTime::ZERO,
        requests: (0..clients).map(|_| None).collect(),
        replies: (0..clients).map(|_| None).collect(),
    });
    let mut cx = Context::from_waker(Waker::noop());
    let mut tasks: Vec<Option<Client<'_>>> = (0..clients)
        .map(|id| {
            let mc = Parked {
                id,
                shared: &shared,
            };
            Some(increment(variant, mc))
        })
        .collect();
    let mut poll = |tasks: &mut Vec<Option<Client<'_>>>, c: usize| {
        if let Some(task) = tasks[c].as_mut() {
            match task.as_mut().poll(&mut cx) {
                Poll::Ready(Ok(())) => tasks[c] = None,
                Poll::Ready(Err(e)) => panic!("an increment failed: {e}"),
                Poll::Pending => {}
            }
        }
    };
    for c in 0..clients {
        poll(&mut tasks, c);
    }
    let mut pending = Vec::with_capacity(clients);
    loop {
        pending.clear();
        pending.extend((0..clients).filter(|&c| shared.borrow().requests[c].is_some()));
        if pending.is_empty() {
            break;
        }
        let c = pending[rng.random_range(0..pending.len())];
        {
            let mut s = shared.borrow_mut();
            let request = s.requests[c].take().expect("picked a parked call");
            s.now += TICK;
            let now = s.now;
            let reply = s.server.apply(request, now);
            s.replies[c] = Some(reply);
        }
        poll(&mut tasks, c);
    }
    drop(tasks);
    let shared = shared.into_inner();
    counted(variant, clients, shared.server, shared.now)
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

    #[test]
    fn the_minimal_scheduler_interleaves_lost_updates_only_where_they_exist() {
        let mut server = Server::with_defaults();
        let lost = |variant, server: &mut Server| {
            (0..200)
                .filter(|&seed| !counter_minimal(variant, 3, server, seed))
                .count()
        };
        let get_set = lost(CounterVariant::GetSet, &mut server);
        // get/set loses an increment in most interleavings, but not in the sequential ones.
        assert!(get_set > 0 && get_set < 200, "{get_set} of 200 lost");
        assert_eq!(lost(CounterVariant::IncrAdd, &mut server), 0);
    }
}
