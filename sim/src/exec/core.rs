//! The state clients and the engine share during one execution: virtual time and each
//! client's mailbox (what it waits for, the reply handed back to it).

use std::time::Duration;

use crate::clock::{Skew, VirtualTime};
use crate::memcache::Transport;
use crate::protocol::{Reply, Request};

/// What a client is blocked on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Not blocked: being polled, or not started.
    Running,
    /// A memcached call issued at `issued`, its request in [`Mailbox::request`].
    Call { issued: VirtualTime },
    /// A sleep (or a timeout) until the deadline.
    Sleep { until: VirtualTime },
    /// Finished.
    Done,
}

/// One client's mailbox.
#[derive(Debug)]
pub(crate) struct Mailbox {
    /// Kept apart from the request, so that a look at what every client waits for (made
    /// at every step) reads a small tag, not a request's.
    pub wait: Wait,
    /// The request of the pending call while `wait` is [`Wait::Call`]; a placeholder
    /// (`Request::Version`) otherwise ([`Mailbox::pending`] reads it).
    pub request: Request,
    /// The server the pending call is addressed to ([`crate::Client::on_server`]);
    /// `None` for the server the client's key distribution picks.
    pub server: Option<usize>,
    /// The outcome handed to the client's pending call.
    pub reply: Option<Result<Reply, Transport>>,
    /// Set when a sleep's deadline passed.
    pub woken: bool,
    pub skew: Skew,
    /// A fingerprint of everything the client observed so far (replies, timeouts, clock
    /// readings): with its wait, what its future does next.
    pub seen: u64,
}

impl Mailbox {
    /// The pending call's request, if the client waits on a call.
    pub fn pending(&self) -> Option<&Request> {
        match self.wait {
            Wait::Call { .. } => Some(&self.request),
            _ => None,
        }
    }

    /// The call is over (executed, or its client died): the request goes, the client
    /// waits on `next`.
    pub fn end_call(&mut self, next: Wait) {
        self.wait = next;
        self.request = Request::Version;
        self.server = None;
    }

    /// Hashes what the client waits for, the request of a pending call included, as
    /// one value (the state fingerprint): the wait's variant, then its fields.
    pub fn hash_wait<H: std::hash::Hasher>(&self, h: &mut H) {
        use std::hash::Hash;
        match self.wait {
            Wait::Running => 0isize.hash(h),
            Wait::Call { issued } => {
                1isize.hash(h);
                self.request.hash(h);
                self.server.hash(h);
                issued.hash(h);
            }
            Wait::Sleep { until } => {
                2isize.hash(h);
                until.hash(h);
            }
            Wait::Done => 3isize.hash(h),
        }
    }
}

/// Notes recipe code writes into the trace (e.g. "enters critical section").
#[derive(Debug, Clone)]
pub(crate) struct Note {
    pub time: VirtualTime,
    pub client: usize,
    pub text: String,
}

/// Shared by the engine and every client handle of one execution.
#[derive(Debug)]
pub(crate) struct Core {
    pub now: VirtualTime,
    pub mailboxes: Vec<Mailbox>,
    pub notes: Vec<Note>,
    /// Clients that marked progress of their own ([`crate::Client::progress`]) since the
    /// engine last looked.
    pub marks: Vec<usize>,
    /// How often clients read their clocks (a spin is only proven while none does).
    pub clock_reads: u64,
    /// Keep each client's [`Mailbox::seen`]: only when the strategy fingerprints states,
    /// so sampling runs pay no hash per call.
    pub observing: bool,
    /// Let a client replace its [`Mailbox::seen`] with a summary it declares
    /// ([`crate::Client::remember_only`]); off, every observation is kept apart.
    pub summaries: bool,
    /// A client summarized its memory in this execution.
    pub summarized: bool,
    /// No sleeping client's deadline is earlier than this: a lower bound, lowered by
    /// every [`Core::sleep_until`] and made exact whenever the engine scans the sleepers,
    /// so a step with no sleeper due does not look at every mailbox to learn so.
    pub next_wake: VirtualTime,
    /// Keep the notes clients write: only when the execution is traced, so an untraced
    /// one formats none ([`crate::Client::note`]).
    pub tracing: bool,
}

impl Core {
    pub fn new() -> Core {
        Core {
            now: VirtualTime::ZERO,
            mailboxes: Vec::new(),
            notes: Vec::new(),
            marks: Vec::new(),
            clock_reads: 0,
            observing: false,
            summaries: false,
            summarized: false,
            tracing: false,
            next_wake: VirtualTime(u64::MAX),
        }
    }

    /// Back to the state [`Core::new`] gives, keeping the buffers' capacity.
    pub fn reset(&mut self) {
        self.now = VirtualTime::ZERO;
        self.mailboxes.clear();
        self.notes.clear();
        self.marks.clear();
        self.clock_reads = 0;
        self.observing = false;
        self.summaries = false;
        self.summarized = false;
        self.tracing = false;
        self.next_wake = VirtualTime(u64::MAX);
    }

    /// Adds what `client` observed (a reply, a timeout, a clock reading) to its
    /// [`Mailbox::seen`], when states are being fingerprinted.
    pub fn observe(&mut self, client: usize, x: impl std::hash::Hash) {
        if self.observing {
            self.observe_now(client, x);
        }
    }

    /// [`Core::observe`] when states are being fingerprinted.
    fn observe_now(&mut self, client: usize, x: impl std::hash::Hash) {
        let m = &mut self.mailboxes[client];
        let mut h = crate::exec::Fingerprint::resume(m.seen);
        x.hash(&mut h);
        m.seen = std::hash::Hasher::finish(&h);
    }

    /// Replaces what `client` observed so far with `summary`
    /// ([`crate::Client::remember_only`]), when states are being fingerprinted and
    /// summaries are honoured.
    pub fn summarize(&mut self, client: usize, summary: impl std::hash::Hash) {
        if !(self.observing && self.summaries) {
            return;
        }
        // What a client with no memory observes first.
        let fresh = crate::exec::Fingerprint::default();
        self.mailboxes[client].seen = std::hash::Hasher::finish(&fresh);
        self.observe(client, summary);
        self.summarized = true;
    }

    pub fn add_client(&mut self, skew: Skew) -> usize {
        // Built where it is kept: a mailbox built aside and pushed is copied in whole.
        let id = self.mailboxes.len();
        self.mailboxes.resize_with(id + 1, || Mailbox {
            wait: Wait::Running,
            request: Request::Version,
            server: None,
            reply: None,
            woken: false,
            skew,
            seen: 0,
        });
        id
    }

    pub fn sleep_until(&mut self, client: usize, d: Duration) {
        let until = self.now + d;
        self.next_wake = self.next_wake.min(until);
        self.mailboxes[client].wait = Wait::Sleep { until };
    }
}
