//! The handle recipe code holds: a [`Memcache`] whose every call and sleep hands control
//! back to the engine.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::clock::VirtualTime;
use crate::exec::core::{Core, Note, Wait};
use crate::memcache::{Memcache, Transport};
use crate::protocol::{Reply, Request};

/// One virtual client's connection to the simulated cluster.
///
/// Cloning gives another handle for the same client (same mailbox, same clock).
#[derive(Clone)]
pub struct Client {
    id: usize,
    core: Rc<RefCell<Core>>,
    /// The server every call goes to; `None` for the server the key distribution picks.
    server: Option<usize>,
}

impl Client {
    pub(crate) fn new(id: usize, core: Rc<RefCell<Core>>) -> Client {
        Client {
            id,
            core,
            server: None,
        }
    }

    /// The same client with every call addressed to server `server` (0-based, as the
    /// scenario's `[servers]` counts them), whatever server the key distribution picks:
    /// a recipe that addresses pools of its own (a primary and a gutter pool, a replica)
    /// holds one handle per pool.
    ///
    /// The handle shares the client's clock, mailbox and identity: it is the same
    /// client, talking to another server. A server that left the clients' list refuses
    /// the call, and one that crashed fails it, both with [`Transport::ServerDown`]. A
    /// server the scenario does not have stops the run with a panic verdict naming it.
    pub fn on_server(&self, server: usize) -> Client {
        Client {
            server: Some(server),
            ..self.clone()
        }
    }

    /// The server this handle addresses ([`Client::on_server`]), if any.
    pub fn server(&self) -> Option<usize> {
        self.server
    }

    /// This client's number (0-based).
    pub fn id(&self) -> usize {
        self.id
    }

    /// Global virtual time (not skewed): for harness bookkeeping, not for recipes.
    pub fn global_now(&self) -> VirtualTime {
        self.core.borrow().now
    }

    /// Writes a line into the run's trace under this client's name.
    ///
    /// Only a traced execution keeps it: a failure replayed for its timeline, `mcsim
    /// replay`, a report. The text is written out only then, so
    /// `mc.note(format_args!("holds permit {slot}"))` costs nothing in the untraced
    /// executions a search or a sampling run makes.
    pub fn note(&self, text: impl std::fmt::Display) {
        let mut core = self.core.borrow_mut();
        if !core.tracing {
            return;
        }
        let time = core.now;
        core.notes.push(Note {
            time,
            client: self.id,
            text: text.to_string(),
        });
    }
}

impl Client {
    /// Marks progress the recipe's user would see: a lock taken, an operation completed.
    ///
    /// Without marks, a client progresses whenever it changes server state or finishes,
    /// so a retry loop that keeps writing (a heartbeat, a `set` before a `cas` that
    /// fails) counts as moving. Once a model marks progress in an execution, the
    /// liveness figures (`liveness.longest_wait_s`) and a `stuck` verdict's longest wait
    /// count only its marks and clients finishing.
    pub fn progress(&self) {
        self.core.borrow_mut().marks.push(self.id);
    }

    /// Adds `value` to what this client remembers: a value its code acts on later that
    /// mcsim did not see it observe, because it came from the harness's ghost state
    /// rather than from a reply or the clock (the number of changes a query sees,
    /// read from a ghost database, and returned after the query's sleep).
    ///
    /// The exhaustive search's visited-state cache tells a client's states apart by what
    /// it observed; a value read from ghost state and kept across an `.await` is part of
    /// the client's state too, and without this call two clients that hold different
    /// such values look alike. Costs nothing outside the search.
    pub fn remember(&self, value: impl std::hash::Hash) {
        self.core.borrow_mut().observe(self.id, value);
    }

    /// Declares that this client's code, from here on, depends on nothing it observed
    /// before except `keep`: its next calls and sleeps, the values it writes, and what
    /// it tells the harness that a ghost fingerprint or an invariant reads, are a
    /// function of `keep` and of what it observes (or [`Client::remember`]s) after this
    /// call.
    ///
    /// mcsim cannot see inside a client's future, so the exhaustive search's
    /// visited-state cache tells two states of a client apart by everything the client
    /// observed (every reply, every clock reading): two clients that served the same
    /// pages in another order, or saw a hit where the other saw a miss, are different
    /// states for ever after, though the code that runs next is the same. A workload
    /// loop that starts each operation afresh says so at its top, with the loop index
    /// (`mc.remember_only(page)`), with any value it read from ghost state for the
    /// operation, and the search merges what differs only in the past.
    /// On `cache-mg-vivify` (5 clients) this, with a ghost fingerprint that keeps only
    /// what decides verdicts and clients declared interchangeable, took the proof from
    /// beyond 30 s to about 2 s; `online-add` (4 clients), with this alone, from 27 s to
    /// 11 ms.
    ///
    /// Only the exhaustive search reads it, and only where it fingerprints states; a
    /// sampling run pays nothing. Break the promise (keep a value from before in a local
    /// variable and act on it later) and the search may merge states whose futures
    /// differ, and miss a violation: test the model with and without (`mcsim explore
    /// --whole-memory`) on a broken variant.
    pub fn remember_only(&self, keep: impl std::hash::Hash) {
        self.core.borrow_mut().summarize(self.id, keep);
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "c{}", self.id)
    }
}

impl Memcache for Client {
    fn call(&self, request: Request) -> impl Future<Output = Result<Reply, Transport>> {
        CallFuture {
            client: self.clone(),
            request,
            sent: false,
        }
    }

    fn now(&self) -> VirtualTime {
        let mut core = self.core.borrow_mut();
        core.clock_reads += 1;
        let now = core.now.skewed(core.mailboxes[self.id].skew);
        core.observe(self.id, now);
        now
    }

    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> {
        SleepFuture {
            client: self.clone(),
            duration: Some(duration),
        }
    }
}

/// A call waiting for the engine to execute it.
struct CallFuture {
    client: Client,
    /// The request until it is sent, then the mailbox's placeholder.
    request: Request,
    sent: bool,
}

impl Future for CallFuture {
    type Output = Result<Reply, Transport>;

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let id = this.client.id;
        let mut core = this.client.core.borrow_mut();
        if !this.sent {
            this.sent = true;
            let issued = core.now;
            let mailbox = &mut core.mailboxes[id];
            mailbox.reply = None;
            mailbox.server = this.client.server;
            // The mailbox's placeholder comes back in its place.
            std::mem::swap(&mut mailbox.request, &mut this.request);
            mailbox.wait = Wait::Call { issued };
            return Poll::Pending;
        }
        match core.mailboxes[id].reply.take() {
            Some(reply) => Poll::Ready(reply),
            None => Poll::Pending,
        }
    }
}

/// A sleep waiting for virtual time to reach its deadline.
struct SleepFuture {
    client: Client,
    duration: Option<Duration>,
}

impl Future for SleepFuture {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        let id = this.client.id;
        let mut core = this.client.core.borrow_mut();
        if let Some(d) = this.duration.take() {
            core.mailboxes[id].woken = false;
            core.sleep_until(id, d);
            return Poll::Pending;
        }
        if std::mem::take(&mut core.mailboxes[id].woken) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}
