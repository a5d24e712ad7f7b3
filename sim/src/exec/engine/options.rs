//! What may happen at a step: the calls that may run now with their latency windows,
//! their footprints for the reduction, and whether a store may evict.

use crate::clock::VirtualTime;
use crate::exec::core::Wait;
use crate::explore::{CallOption, Footprint};
use crate::trace::fnv1a;

use super::Engine;

impl Engine {
    /// Calls that may execute now, with their windows, and the next timer deadline. The
    /// calls are the first `n` entries of `calls`, whose entries are overwritten where
    /// they are: the engine reuses one buffer for every step, and entries past `n` stay
    /// for a later step instead of being dropped and built again.
    pub(super) fn options(
        &self,
        calls: &mut Vec<CallOption>,
        footprints: bool,
    ) -> (usize, Option<VirtualTime>) {
        let core = self.sim.core.borrow();
        let now = core.now;
        let (min, max) = self.latency;
        let mut next_timer: Option<VirtualTime> = self.timers.iter().map(|t| t.0).min();
        let mut latest_pending: Option<VirtualTime> = None;
        for m in &core.mailboxes {
            match &m.wait {
                Wait::Sleep { until } => {
                    next_timer = Some(next_timer.map_or(*until, |t| t.min(*until)));
                }
                Wait::Call { issued, .. } => {
                    let end = issued.plus_micros(max);
                    latest_pending = Some(latest_pending.map_or(end, |t| t.min(end)));
                }
                _ => {}
            }
        }
        let Some(latest) = latest_pending else {
            return (0, next_timer);
        };
        let horizon = next_timer.map_or(latest, |t| t.min(latest));
        let mut n = 0;
        for (client, m) in core.mailboxes.iter().enumerate() {
            if let Wait::Call { issued, .. } = &m.wait {
                let (start, end) = (issued.plus_micros(min), issued.plus_micros(max));
                if start <= horizon {
                    let earliest = start.max(now);
                    let latest = end.min(horizon).max(earliest);
                    // The buffer's entries are overwritten where they are: an option
                    // built aside and moved in is read back right after it is written in
                    // other pieces, which stalls the processor.
                    match calls.get_mut(n) {
                        Some(option) => {
                            option.client = client;
                            option.earliest = earliest;
                            option.latest = latest;
                            // Kept for `add_footprints` to overwrite in place.
                            if !footprints {
                                option.footprint = None;
                            }
                            option.edges.clear();
                        }
                        None => calls.push(CallOption {
                            client,
                            earliest,
                            latest,
                            footprint: None,
                            edges: Vec::new(),
                        }),
                    }
                    n += 1;
                }
            }
        }
        (n, next_timer)
    }

    #[inline(never)]
    pub(super) fn add_footprints(&self, calls: &mut [CallOption]) {
        let core = self.sim.core.borrow();
        for call in calls {
            if let Wait::Call { request, .. } = &core.mailboxes[call.client].wait {
                let footprint = call.footprint.get_or_insert_with(|| Footprint {
                    server: 0,
                    keys: Vec::new(),
                    read_only: false,
                });
                footprint.server = self.cluster.route(request);
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
    #[inline(never)]
    pub(super) fn eviction_possible(&self) -> bool {
        self.cluster.servers.iter().any(|s| {
            let limit = s.config().memory_limit;
            s.items().malloced() + 2 * crate::server::PAGE_SIZE > limit
        })
    }
}
