//! The timing alternatives of a pending call: where in its latency window running it can
//! change what happens.
//!
//! memcached reads time in whole seconds (its `current_time` tick): two instants inside
//! the same second of the server's clock give the same expiry decisions and the same
//! stored times. A client reads its own (skewed) clock, and recipes derive keys and
//! windows from it in whole seconds too. So a call's outcome can change only where its
//! window crosses a second of the server it goes to or of its client's clock; every
//! other instant is equivalent to the earliest one. The explorer tries the earliest
//! instant and the first microsecond after each such edge: the distinct orders of calls
//! against ticks and expiry instants, not every microsecond.

use crate::clock::VirtualTime;
use crate::explore::CallOption;

use super::Engine;
use super::observer::Observer;

/// At most this many edges per call (a window of over a few seconds is cut here, and
/// the cut is part of the stated bounds).
pub const MAX_EDGES: usize = 4;

const SECOND: u64 = 1_000_000;

impl<O: Observer> Engine<O> {
    pub(super) fn add_edges(&self, calls: &mut [CallOption]) {
        let core = self.sim.core.borrow();
        for call in calls {
            call.edges.clear();
            if call.latest <= call.earliest {
                continue;
            }
            let mailbox = &core.mailboxes[call.client];
            let Some(request) = mailbox.pending() else {
                continue;
            };
            let server = &self.cluster.servers[self.cluster.route_to(request, mailbox.server)];
            let (first, last) = (server.tick(call.earliest), server.tick(call.latest));
            for tick in first.saturating_add(1)..=last {
                let at = server.clock().time_of_tick(tick);
                if at > call.earliest && at <= call.latest {
                    call.edges.push(at);
                }
                if call.edges.len() >= MAX_EDGES {
                    break;
                }
            }
            // The client's clock: the instants its skewed reading reaches a whole second.
            let skew = core.mailboxes[call.client].skew;
            let seen = |t: VirtualTime| t.skewed(skew).0 / SECOND;
            let mut second = seen(call.earliest);
            while second < seen(call.latest) && call.edges.len() < 2 * MAX_EDGES {
                second += 1;
                // The first true instant at which the client's clock shows `second`.
                let at = VirtualTime((second * SECOND).saturating_add_signed(-skew.0));
                if at > call.earliest && at <= call.latest {
                    call.edges.push(at);
                }
            }
            call.edges.sort_unstable();
            call.edges.dedup();
            call.edges.truncate(MAX_EDGES);
        }
    }
}
