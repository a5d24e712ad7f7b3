//! One call: the server executes a client's pending request, and the outcome goes back
//! to the client (or is lost, as the fault says).

use std::rc::Rc;

use crate::clock::VirtualTime;
use crate::exec::Event;
use crate::exec::core::Wait;
use crate::exec::spin::{changes_state, request_hash};
use crate::fault::Fault;
use crate::memcache::Transport;
use crate::protocol::{Reply, Request, StoreMode};
use crate::trace::{Actor, describe_reply, describe_request};

use super::{Engine, Stop};

impl Engine {
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
        let request: &mut Request = &mut mailbox.request;
        // What only some executions do before a call: a traced one watches its keys, a
        // timing search marks phase points, faults aimed at keys remember them, a fault
        // waiting to bite looks at it.
        let phase_point = if self.call_extras() {
            self.before_call(client, request, issued, at, fault)
        } else {
            None
        };
        let read_only = request.is_read_only();
        let hash = self.spin.tracking_next().then(|| request_hash(request));
        // Taken before the server takes the request's bytes (only when tracing).
        let traced = self.timeline.recording.then(|| Traced {
            servers: self.cluster.servers_for(request),
            what: describe_request(request),
            request: request.clone(),
        });
        let lost_request = matches!(fault, Some(Fault::RequestLost { .. }));
        let outcome = match fault {
            None => self.cluster.call_in_place(request, at),
            Some(fault) => self.faulty_outcome(fault, request, at),
        };
        if outcome.is_ok() && !lost_request {
            self.progress.calls += 1;
        }
        if let (Some(read), false) = (phase_point, lost_request) {
            self.phase_point_after(read, request, outcome.as_ref().ok(), at);
        }
        core.mailboxes[client].end_call(Wait::Running);
        // Read while the core is at hand: neither the server nor the timeline reads a
        // clock of the clients'.
        let clock_reads = core.clock_reads;
        if let Some(traced) = traced {
            // The timeline reads the core: let go of it meanwhile.
            drop(core);
            self.trace_call(client, traced, issued, at, &outcome, fault);
            core = core_cell.borrow_mut();
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
        Ok(())
    }

    /// True if a call needs more than the server and the spin watch: the execution is
    /// traced, records phase points or remembers keys for aimed faults, or a fault waits
    /// to bite.
    fn call_extras(&self) -> bool {
        self.timeline.recording
            || self.phase.points.is_some()
            || self.faults.last_keys.is_some()
            || !self.faults.bites_pending.is_empty()
    }

    /// What a call does first when [`Engine::call_extras`]: its keys watched (traced),
    /// whether it may mark a phase point, its keys remembered, the faults it makes bite
    /// counted. Returns what [`Engine::phase_point_before`] answered.
    fn before_call(
        &mut self,
        client: usize,
        request: &Request,
        issued: VirtualTime,
        at: VirtualTime,
        fault: Option<&Fault>,
    ) -> Option<bool> {
        self.watch_call(request);
        let phase_point = if self.marks_phase_points(client) {
            self.phase_point_before(client, request, issued, at)
        } else {
            None
        };
        if self.faults.last_keys.is_some() {
            self.remember_keys(client, request);
        }
        if !matches!(fault, Some(Fault::RequestLost { .. })) {
            self.note_bites(request);
        }
        phase_point
    }

    /// What a call the strategy put a fault on gets back: a timeout for a lost request,
    /// a too-large store rejected, otherwise the server's reply (a lost reply is lost
    /// after it ran).
    fn faulty_outcome(
        &mut self,
        fault: &Fault,
        request: &mut Request,
        at: VirtualTime,
    ) -> Result<Reply, Transport> {
        match (fault, &*request) {
            (Fault::RequestLost { .. }, _) => Err(Transport::TimedOut),
            (Fault::TooLarge { .. }, Request::Store { mode, key, .. }) => {
                let target = self.cluster.route(request);
                let server = &mut self.cluster.servers[target];
                if server.is_up() {
                    Ok(server.reject_too_large(key, *mode == StoreMode::Set, at))
                } else {
                    Err(Transport::ServerDown)
                }
            }
            _ => self.cluster.call_in_place(request, at),
        }
    }

    /// Records a traced call: its event and its line on the timeline.
    fn trace_call(
        &mut self,
        client: usize,
        traced: Traced,
        issued: VirtualTime,
        at: VirtualTime,
        outcome: &Result<Reply, Transport>,
        fault: Option<&Fault>,
    ) {
        let Traced {
            servers,
            what,
            request,
        } = traced;
        // The server of its first key comes first.
        let server = servers[0];
        self.timeline.events.push(Event::Call {
            step: self.progress.step,
            time: at,
            issued,
            client,
            server,
            request,
            outcome: outcome.clone(),
            fault: fault.cloned(),
        });
        let server_note = if self.cluster.servers.len() > 1 {
            let names: Vec<String> = servers.iter().map(|s| format!("s{s}")).collect();
            format!(" @{}", names.join(","))
        } else {
            String::new()
        };
        self.log(Actor::Client(client), || match (outcome, fault) {
            (_, Some(Fault::RequestLost { .. })) => {
                format!("{what}{server_note} -> (request lost: FAULT)")
            }
            (Ok(r), Some(Fault::TooLarge { .. })) => format!(
                "{what}{server_note} -> {} (value over the item size limit: FAULT)",
                describe_reply(r)
            ),
            (Ok(r), Some(_)) => format!(
                "{what}{server_note} -> {} (reply lost: FAULT)",
                describe_reply(r)
            ),
            (Ok(r), None) => format!("{what}{server_note} -> {}", describe_reply(r)),
            (Err(t), _) => format!("{what}{server_note} -> {t}"),
        });
    }
}

/// What a traced call records of its request, taken before the server takes its bytes.
struct Traced {
    /// The servers it went to, its first key's first ([`crate::cluster::Cluster::servers_for`]).
    servers: Vec<usize>,
    /// The request described.
    what: String,
    request: Request,
}
