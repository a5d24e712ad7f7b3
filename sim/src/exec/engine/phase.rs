//! Where an execution's outcome could depend on the servers' tick phase.
//!
//! memcached reads its clock in whole seconds, so moving every tick edge by the same
//! amount changes an execution only where an edge passes an instant at which a call's
//! result reads the clock: a store, touch or `gat` with a relative TTL (its expiry is
//! the tick plus the TTL), or any call on an item within a second of expiring. Those
//! instants, as offsets into a second after their server's boot, cut the phases into
//! classes within which the execution is the same; `dfs` searches one phase per class.
//!
//! A client that ran a call just after a tick edge (a timing choice) is from then on
//! timed relative to the phase itself: its later instants move with the edges and cut no
//! class, so they are not recorded.

use crate::clock::VirtualTime;
use crate::cluster::Cluster;
use crate::protocol::{Reply, Request};

/// Where in a second the outcome could depend on the tick phase, recorded only when the
/// strategy explores timing ([`crate::exec::Execution::phase_points`]).
#[derive(Default)]
pub(super) struct PhasePoints {
    /// The points so far, when recorded (the result's buffer, taken for the execution).
    pub(super) points: Option<Vec<u32>>,
    /// The strategy repeats this step's choice ([`crate::explore::Decided::repeated`]):
    /// the execution that took it before recorded its phase points.
    pub(super) repeating: bool,
    /// By client: its timing follows a tick edge, so its later instants move with the
    /// phase and mark no phase point.
    edge_timed: Vec<bool>,
}

impl PhasePoints {
    /// Ready for an execution of `clients` clients.
    pub(super) fn begin(&mut self, clients: usize) {
        self.edge_timed.clear();
        self.edge_timed.resize(clients, false);
    }

    /// Before the server runs a call of `client` at `at` (issued at `issued`, its
    /// latency at least `latency_min` µs): whether its result could depend on the phase,
    /// as far as can be told before it runs (`None`: no point to record whatever it does;
    /// `Some(true)`: a point; `Some(false)`: a point if it stores an expiry). A step the
    /// strategy repeats ([`crate::explore::Decided::repeated`]) records none: the
    /// execution that took it before did, and a search adds up every execution's points.
    /// A client whose timing follows a tick edge records none either.
    pub(super) fn before(
        &mut self,
        client: usize,
        (request, pin): (&Request, Option<usize>),
        (issued, at): (VirtualTime, VirtualTime),
        cluster: &Cluster,
        latency_min: u64,
    ) -> Option<bool> {
        if self.edge_timed[client] {
            return None;
        }
        let server = &cluster.servers[cluster.route_to(request, pin)];
        let own_start = issued.plus_micros(latency_min);
        if at != own_start {
            // Later than its own earliest instant: at another call's instant (which that
            // call records) or just after a tick edge of its server.
            let before = VirtualTime(at.micros().saturating_sub(1));
            if server.tick(before) != server.tick(at) {
                self.edge_timed[client] = true;
            }
            return None;
        }
        if self.repeating {
            // Recorded by the execution that took this step before.
            return None;
        }
        let near = |key| server.near_expiry(key, at);
        Some(request.reads_clock() || request.keys().iter().any(near))
    }

    /// After the server ran the call (one [`PhasePoints::before`] answered `Some(read)`
    /// for): records its point if it read the clock. A store, touch or `gat` with a
    /// relative TTL reads it when it sets an expiry (the tick plus the TTL); one that
    /// stores nothing (an `add` on a live key) does not.
    pub(super) fn after(
        &mut self,
        read: bool,
        (request, pin): (&Request, Option<usize>),
        reply: Option<&Reply>,
        at: VirtualTime,
        cluster: &Cluster,
    ) {
        let sets_expiry = reply.is_some_and(|reply| request.set_expiry(reply));
        if !(read || sets_expiry) {
            return;
        }
        let server = &cluster.servers[cluster.route_to(request, pin)];
        if let Some(points) = &mut self.points {
            points.push(server.offset_in_second(at));
        }
    }
}
