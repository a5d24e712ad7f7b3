//! One call: the server executes a client's pending request, and the outcome goes back
//! to the client (or is lost, as the fault says).

use std::rc::Rc;

use crate::clock::VirtualTime;
use crate::exec::core::Wait;
use crate::exec::spin::{changes_state, request_hash};
use crate::fault::Fault;
use crate::memcache::Transport;
use crate::protocol::{Reply, Request, StoreMode};
use crate::trace::{describe_reply, describe_request};

use super::observer::Observer;
use super::timeline::Traced;
use super::{Engine, Stop};

impl<O: Observer> Engine<O> {
    /// The server executes a client's pending call at `at`; the reply goes back to the
    /// client.
    pub(super) fn execute_call(&mut self, client: usize, at: VirtualTime) -> Result<(), Stop> {
        self.call(client, at, None)
    }

    /// [`Engine::call`] under a fault the strategy put on the call.
    pub(super) fn execute_faulty_call(
        &mut self,
        client: usize,
        at: VirtualTime,
        fault: &Fault,
    ) -> Result<(), Stop> {
        self.call(client, at, Some(fault))
    }

    /// The server executes a client's pending call at `at` (unless the fault says the
    /// request is lost); the reply goes back to the client (unless it is lost).
    fn call(&mut self, client: usize, at: VirtualTime, fault: Option<&Fault>) -> Result<(), Stop> {
        // The request stays in the client's mailbox while the server executes it (the
        // server takes only a storage command's bytes).
        let core_cell = Rc::clone(&self.sim.core);
        let mut core = core_cell.borrow_mut();
        core.now = at;
        let mailbox = &mut core.mailboxes[client];
        let Wait::Call { issued } = mailbox.wait else {
            drop(core);
            return Err(self.stop(self.diverged(format!("c{client} is not waiting on a call"))));
        };
        let pin = mailbox.server;
        if let Some(server) = pin.filter(|&s| s >= self.cluster.servers.len()) {
            let servers = self.cluster.servers.len();
            drop(core);
            let message = format!(
                "called server {server}, but the scenario has {servers} server{} (0-based)",
                if servers == 1 { "" } else { "s" }
            );
            let step = self.progress.step;
            return Err(self.stop(crate::invariant::Verdict::Panic {
                client,
                message,
                step,
            }));
        }
        let request: &mut Request = &mut core.mailboxes[client].request;
        // What only some executions do before a call: a traced one watches its keys, a
        // timing search marks phase points, faults aimed at keys remember them, a fault
        // waiting to bite looks at it.
        let phase_point = if self.call_extras() {
            self.before_call(client, (request, pin), issued, at, fault)
        } else {
            None
        };
        let read_only = request.is_read_only();
        let keying = self.spin.cycle.keying();
        let hash = (self.spin.tracking_next() || keying).then(|| request_hash(request));
        let asked = keying.then(|| describe_request(request));
        // Taken before the server takes the request's bytes (only when tracing).
        let traced = self.observer.timeline().is_some().then(|| Traced {
            servers: self.cluster.servers_to(request, pin),
            owners: (self.cluster.spread(request))
                .filter(|_| pin.is_none())
                .map_or(Vec::new(), |s| s.owners().to_vec()),
            what: describe_request(request),
            request: request.clone(),
        });
        let lost_request = matches!(fault, Some(Fault::RequestLost { .. }));
        let outcome = match fault {
            None => self.cluster.call_to(request, pin, at),
            Some(fault) => self.faulty_outcome(fault, (request, pin), at),
        };
        if outcome.is_ok() && !lost_request {
            self.progress.calls += 1;
        }
        if let (Some(read), false) = (phase_point, lost_request)
            && let Some(phase) = self.observer.phase_points()
        {
            phase.after(
                read,
                (request, pin),
                outcome.as_ref().ok(),
                at,
                &self.cluster,
            );
        }
        core.mailboxes[client].end_call(Wait::Running);
        // Read while the core is at hand: neither the server nor the timeline reads a
        // clock of the clients'.
        let clock_reads = core.clock_reads;
        if let Some(traced) = traced
            && let Some(timeline) = self.observer.timeline()
        {
            let servers = self.cluster.servers.len();
            let step = self.progress.step;
            timeline.call(step, client, traced, issued, at, &outcome, fault, servers);
        }
        let changed = match &outcome {
            Ok(reply) if !lost_request => changes_state(read_only, reply),
            _ => false,
        };
        self.per_client[client].wrote_last = changed;
        let spin_due = self.spin.call(
            client,
            hash,
            outcome.as_ref().ok(),
            changed,
            at,
            clock_reads,
        );
        let cycle_due = if let Some(asked) = asked {
            self.cycle_key(client, (hash, asked), &outcome, (at, clock_reads))
        } else {
            self.spin.cycle.counted();
            false
        };
        // The outcome goes to the client on the core still held since the call began.
        if matches!(
            fault,
            Some(Fault::ReplyLost { .. } | Fault::RequestLost { .. })
        ) {
            core.sleep_until(client, self.faults.plan.timeout);
            drop(core);
            self.per_client[client].deferred = Some(Transport::TimedOut);
        } else {
            core.observe(client, &outcome);
            core.mailboxes[client].reply = Some(outcome);
            drop(core);
            self.poll(client)?;
        }
        if spin_due {
            self.check_spin()?;
        }
        if cycle_due {
            self.check_cycle()?;
        }
        Ok(())
    }

    /// Keys a call for the cycle watch by its client, request (its hash and how it
    /// reads), outcome and the state it left at `at` (every server's live items and the
    /// ghost state), and describes it. Returns true when a cycle should be checked for.
    fn cycle_key(
        &mut self,
        client: usize,
        (request_hash, asked): (Option<u64>, String),
        outcome: &Result<Reply, Transport>,
        (at, clock_reads): (VirtualTime, u64),
    ) -> bool {
        use std::hash::{Hash, Hasher};
        let mut h = crate::exec::Fingerprint::default();
        (client, request_hash, outcome, self.fingerprint_at(at)).hash(&mut h);
        let shown = match outcome {
            Ok(reply) => format!("c{client} {asked} -> {}", describe_reply(reply)),
            Err(e) => format!("c{client} {asked} -> {e}"),
        };
        self.spin
            .cycle
            .keyed(client, h.finish(), shown, clock_reads)
    }

    /// True if a call needs more than the server and the spin watch: the execution is
    /// traced, records phase points or remembers keys for aimed faults, or a fault waits
    /// to bite.
    fn call_extras(&self) -> bool {
        self.observer.watches_calls()
            || self.faults.last_keys.is_some()
            || !self.faults.bites_pending.is_empty()
    }

    /// What a call does first when [`Engine::call_extras`]: its keys watched (traced),
    /// whether it may mark a phase point, its keys remembered, the faults it makes bite
    /// counted. Returns what [`super::phase::PhasePoints::before`] answered.
    fn before_call(
        &mut self,
        client: usize,
        (request, pin): (&Request, Option<usize>),
        issued: VirtualTime,
        at: VirtualTime,
        fault: Option<&Fault>,
    ) -> Option<bool> {
        if let Some(timeline) = self.observer.timeline() {
            timeline.watch_call(request, pin, &self.cluster);
        }
        let latency_min = self.limits.latency.0;
        let phase_point = self.observer.phase_points().and_then(|phase| {
            phase.before(
                client,
                (request, pin),
                (issued, at),
                &self.cluster,
                latency_min,
            )
        });
        self.faults.called(client, request.keys());
        if !matches!(fault, Some(Fault::RequestLost { .. }))
            && !self.faults.bites_pending.is_empty()
        {
            let server = self.cluster.route_to(request, pin);
            self.faults.note_bites(request, server);
        }
        phase_point
    }

    /// What a call the strategy put a fault on gets back: a timeout for a lost request,
    /// a too-large store rejected, otherwise the server's reply (a lost reply is lost
    /// after it ran).
    fn faulty_outcome(
        &mut self,
        fault: &Fault,
        (request, pin): (&mut Request, Option<usize>),
        at: VirtualTime,
    ) -> Result<Reply, Transport> {
        match (fault, &*request) {
            (Fault::RequestLost { .. }, _) => Err(Transport::TimedOut),
            (Fault::TooLarge { .. }, Request::Store { mode, key, .. }) => {
                let target = self.cluster.route_to(request, pin);
                let listed = self.cluster.is_listed(target);
                let server = &mut self.cluster.servers[target];
                if server.is_up() && listed {
                    Ok(server.reject_too_large(key, *mode == StoreMode::Set, at))
                } else {
                    Err(Transport::ServerDown)
                }
            }
            _ => self.cluster.call_to(request, pin, at),
        }
    }
}
