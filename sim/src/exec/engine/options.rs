//! What may happen at a step: the calls that may run now with their latency windows,
//! their footprints for the reduction, and whether a store may evict.

use crate::clock::VirtualTime;
use crate::exec::core::{Core, Wait};
use crate::explore::{CallOption, Footprint};
use crate::trace::fnv1a;

use super::Engine;
use super::observer::Observer;

impl<O: Observer> Engine<O> {
    /// Calls that may execute now, with their windows, the next timer deadline and the
    /// horizon no call may run past ([`Engine::window`]). The
    /// calls are the first `n` entries of `calls`, whose entries are overwritten where
    /// they are: the engine reuses one buffer for every step, and entries past `n` stay
    /// for a later step instead of being dropped and built again.
    #[inline(always)]
    pub(super) fn options(
        &self,
        core: &Core,
        calls: &mut Vec<CallOption>,
        footprints: bool,
        timing: bool,
    ) -> (usize, Option<VirtualTime>, VirtualTime) {
        let now = core.now;
        let max = self.limits.latency.1;
        // One look at every mailbox for the bounds: the earliest timer or sleeper, and the
        // earliest pending call (the window that closes first is its: every window has the
        // same width).
        let (mut timed, mut next_timer) = if self.timers.is_empty() {
            (false, VirtualTime(u64::MAX))
        } else {
            (true, self.next_timer_due())
        };
        let (mut pending, mut first_issued) = (false, VirtualTime(u64::MAX));
        for m in &core.mailboxes {
            match &m.wait {
                Wait::Sleep { until } => {
                    timed = true;
                    next_timer = next_timer.min(*until);
                }
                Wait::Call { issued } => {
                    pending = true;
                    first_issued = first_issued.min(*issued);
                }
                _ => {}
            }
        }
        let next_timer = timed.then_some(next_timer);
        if !pending {
            return (0, next_timer, now);
        }
        let latest = first_issued.plus_micros(max);
        let horizon = next_timer.map_or(latest, |t| t.min(latest));
        let mut n = 0;
        for (client, m) in core.mailboxes.iter().enumerate() {
            let Wait::Call { issued } = &m.wait else {
                continue;
            };
            let Some((earliest, latest)) = self.window(*issued, now, horizon) else {
                continue;
            };
            // The buffer's entries are overwritten where they are: an option built aside
            // and moved in is read back right after it is written in other pieces, which
            // stalls the processor.
            match calls.get_mut(n) {
                Some(option) => {
                    option.client = client;
                    option.earliest = earliest;
                    option.latest = latest;
                    // Neither is read by a strategy that asked for neither: left as
                    // they are (the step loop empties them once when such a strategy
                    // follows one that asked, `Engine::empty_extras`).
                    if footprints || timing {
                        // Kept for `add_footprints` to overwrite in place.
                        if !footprints {
                            option.footprint = None;
                        }
                        option.edges.clear();
                    }
                }
                None => add_option(calls, client, earliest, latest),
            }
            n += 1;
        }
        (n, next_timer, horizon)
    }

    /// The window of a call issued at `issued`, at `now`, with no call or wake allowed
    /// past `horizon`: from its latency's start (or now, if later) to its latency's end
    /// (or the horizon, if sooner). `None` if it opens after the horizon. The options
    /// offer it, and the step that runs the call checks the strategy's delay against it
    /// (found from the client's mailbox, not by searching the options).
    #[inline(always)]
    pub(super) fn window(
        &self,
        issued: VirtualTime,
        now: VirtualTime,
        horizon: VirtualTime,
    ) -> Option<(VirtualTime, VirtualTime)> {
        let (min, max) = self.limits.latency;
        let start = issued.plus_micros(min);
        if start > horizon {
            return None;
        }
        let earliest = start.max(now);
        Some((earliest, issued.plus_micros(max).min(horizon).max(earliest)))
    }

    /// The earliest world timer's deadline (some is pending).
    fn next_timer_due(&self) -> VirtualTime {
        self.timers
            .iter()
            .map(|t| t.0)
            .min()
            .unwrap_or(VirtualTime(u64::MAX))
    }

    pub(super) fn add_footprints(&self, calls: &mut [CallOption]) {
        let core = self.sim.core.borrow();
        for call in calls {
            let mailbox = &core.mailboxes[call.client];
            if let Some(request) = mailbox.pending() {
                let footprint = call.footprint.get_or_insert_with(|| Footprint {
                    server: 0,
                    keys: Vec::new(),
                    read_only: false,
                });
                footprint.server = self.cluster.route_to(request, mailbox.server);
                footprint.keys.clear();
                footprint
                    .keys
                    .extend(request.keys().iter().map(|k| fnv1a(k.as_bytes())));
                footprint.read_only = request.is_read_only();
            } else {
                call.footprint = None;
            }
        }
    }

    /// True if some server is close enough to its memory limit that a store may evict.
    pub(super) fn eviction_possible(&self) -> bool {
        self.cluster.servers.iter().any(|s| {
            let limit = s.config().memory_limit;
            s.items().malloced() + 2 * crate::server::PAGE_SIZE > limit
        })
    }
}

/// A new option at the end of the buffer, the first time a step has this many (the
/// buffer keeps its entries from then on).
fn add_option(
    calls: &mut Vec<CallOption>,
    client: usize,
    earliest: VirtualTime,
    latest: VirtualTime,
) {
    calls.push(CallOption {
        client,
        earliest,
        latest,
        footprint: None,
        edges: Vec::new(),
    });
}

/// Empties the footprints and edges a strategy that asked for them left in the
/// options buffer, before a strategy that asks for neither uses it (the options
/// then leave them as they are).
pub(super) fn empty_extras(calls: &mut [CallOption]) {
    for call in calls {
        call.footprint = None;
        call.edges.clear();
    }
}
