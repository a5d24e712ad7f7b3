//! The timeline of a traced execution: its lines, its structured events, and what the keys
//! held over time (the strip under the lanes of the HTML timeline). Only the
//! [`super::observer::Observed`] engine keeps one; it never decides anything.
//!
//! Every key a call names is watched on the server it maps to. After each step the engine
//! looks at the watched keys and records a [`KeyState`] where the key's state changed
//! (stored, changed, deleted, evicted, lost in a crash). Expiry is lazy in memcached, so
//! a state carries its expiry instant and the strip ends it there.
//!
//! A look covers only the servers the step could have changed: those its call went to,
//! every server after a fault, a timed event or a command without keys (`flush_all`),
//! and a server whose watched item expires, or whose delayed `flush_all` comes due, by
//! then. Nothing else changes a server's items, so a key of any other server holds what
//! it held at the last look.

use crate::clock::VirtualTime;
use crate::cluster::Cluster;
use crate::exec::Event;
use crate::fault::Fault;
use crate::memcache::{Key, Transport};
use crate::protocol::{Reply, Request};
use crate::trace::{Actor, Trace, describe_reply};

/// The timeline of a traced execution, its buffers kept across executions.
#[derive(Default)]
pub(super) struct Timeline {
    pub(super) trace: Trace,
    /// Every call and fault, structured.
    pub(super) events: Vec<Event>,
    /// Keys whose state the timeline shows, with their servers.
    key_watch: KeyWatch,
    /// Their states over time.
    pub(super) key_states: Vec<KeyState>,
}

/// The longest value preview a [`KeyState`] keeps, in bytes.
const PREVIEW: usize = 24;

/// One key's state on one server from a step on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyState {
    /// The step after which the key holds this.
    pub step: u64,
    /// When.
    pub time: VirtualTime,
    /// The server.
    pub server: usize,
    /// The key.
    pub key: String,
    /// What it holds: `None` when absent.
    pub stored: Option<Stored>,
}

/// A live item, as the timeline shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    /// The value's first bytes, lossily as text, with `…` when cut.
    pub preview: String,
    /// The value's length in bytes.
    pub len: usize,
    /// When it expires (`None`: never).
    pub expires: Option<VirtualTime>,
}

/// A value's first bytes as text.
fn preview(data: &[u8]) -> String {
    let cut = data.len().min(PREVIEW);
    let mut s = String::from_utf8_lossy(&data[..cut]).into_owned();
    if cut < data.len() {
        s.push('…');
    }
    s
}

/// A key the timeline shows, with the state last recorded for it.
struct Watched {
    server: usize,
    key: Key,
    last: Option<Stored>,
    /// What the state last recorded was made from, compared at every look before a
    /// [`Stored`] (with its preview text) is built.
    seen: Option<Raw>,
}

/// The keys the timeline shows, and which servers need a look after a step: most steps
/// change one server's keys, and a look at every watched key of every server after each
/// of them made a traced execution cost its steps times its keys.
#[derive(Default)]
struct KeyWatch {
    keys: Vec<Watched>,
    /// Per server: a call went to it, or a key of it began to be watched, since the
    /// last look.
    touched: Vec<bool>,
    /// Every server needs a look: a fault or a timed event (a crash, a restart, a clock
    /// jump) may have changed any of them.
    everywhere: bool,
    /// Per server: the earliest instant at which time alone changes what a watched key
    /// of it shows (its item expires, a delayed `flush_all` comes due).
    due: Vec<VirtualTime>,
}

impl KeyWatch {
    /// Empty, as a new execution starts.
    fn clear(&mut self) {
        self.keys.clear();
        self.touched.clear();
        self.due.clear();
        self.everywhere = false;
    }

    fn touch(&mut self, server: usize) {
        if self.touched.len() <= server {
            self.touched.resize(server + 1, false);
        }
        self.touched[server] = true;
    }
}

/// What a [`Stored`] is made from, held without allocating: the value's first bytes,
/// its length and its expiry. Equal raw states give equal [`Stored`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Raw {
    head: [u8; PREVIEW],
    len: usize,
    expires: Option<VirtualTime>,
}

impl Raw {
    fn of(data: &[u8], expires: Option<VirtualTime>) -> Raw {
        let cut = data.len().min(PREVIEW);
        let mut head = [0; PREVIEW];
        head[..cut].copy_from_slice(&data[..cut]);
        Raw {
            head,
            len: data.len(),
            expires,
        }
    }
}

impl Timeline {
    /// Empty, as a new execution starts (the buffers handed over already are).
    pub(super) fn clear(&mut self) {
        self.key_watch.clear();
    }

    /// Writes a line.
    pub(super) fn line(&mut self, step: u64, now: VirtualTime, actor: Actor, text: String) {
        self.trace.push(step, now, actor, text);
    }

    /// Records a call: its event and its line. `what` describes the request, taken
    /// before the server took its bytes, with the servers it went to (its first key's
    /// first).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn call(
        &mut self,
        step: u64,
        client: usize,
        traced: Traced,
        issued: VirtualTime,
        at: VirtualTime,
        outcome: &Result<Reply, Transport>,
        fault: Option<&Fault>,
        cluster_size: usize,
    ) {
        let Traced {
            servers,
            owners,
            what,
            request,
        } = traced;
        // The server of its first key comes first.
        let server = servers[0];
        self.events.push(Event::Call {
            step,
            time: at,
            issued,
            client,
            server,
            owners,
            request,
            outcome: outcome.clone(),
            fault: fault.cloned(),
        });
        let server_note = if cluster_size > 1 {
            let names: Vec<String> = servers.iter().map(|s| format!("s{s}")).collect();
            format!(" @{}", names.join(","))
        } else {
            String::new()
        };
        let text = match (outcome, fault) {
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
        };
        self.line(step, at, Actor::Client(client), text);
    }

    /// Watches `key` on `server` from now on (an eviction's target, a call's key).
    pub(super) fn watch_key(&mut self, server: usize, key: &Key) {
        // The call about to run goes to this server: it needs a look after the step.
        self.key_watch.touch(server);
        if !self
            .key_watch
            .keys
            .iter()
            .any(|w| w.server == server && w.key == *key)
        {
            self.key_watch.keys.push(Watched {
                server,
                key: key.clone(),
                last: None,
                seen: None,
            });
        }
    }

    /// Watches the keys of the call about to run, on the server it is addressed to or
    /// their own.
    pub(super) fn watch_call(&mut self, request: &Request, pin: Option<usize>, cluster: &Cluster) {
        // A command without keys (`flush_all`) may change every server.
        if request.keys().is_empty() {
            self.key_watch.everywhere = true;
        }
        for key in request.keys() {
            self.watch_key(pin.unwrap_or_else(|| cluster.server_for(key)), key);
        }
    }

    /// A fault or a timed event happened: every server's keys need a look after the step.
    pub(super) fn keys_may_change_everywhere(&mut self) {
        self.key_watch.everywhere = true;
    }

    /// Records every watched key whose state after step `step`, at `now`, differs from
    /// the last one recorded.
    pub(super) fn record_keys(&mut self, step: u64, now: VirtualTime, cluster: &Cluster) {
        let servers = cluster.servers.len();
        let watch = &mut self.key_watch;
        // A server seen for the first time needs a look.
        watch.touched.resize(servers, true);
        watch.due.resize(servers, VirtualTime::ZERO);
        let look: Vec<bool> = (0..servers)
            .map(|s| watch.everywhere || watch.touched[s] || now >= watch.due[s])
            .collect();
        if !look.contains(&true) {
            return;
        }
        for (s, server) in cluster.servers.iter().enumerate() {
            if !look[s] {
                continue;
            }
            // A `flush_all` with a delay hides items when its tick comes.
            let (_, oldest_live, _) = server.items().flush_marks();
            watch.due[s] = if oldest_live > server.tick(now) {
                server.clock().time_of_tick(oldest_live)
            } else {
                VirtualTime(u64::MAX)
            };
            watch.touched[s] = false;
        }
        watch.everywhere = false;
        for w in &mut watch.keys {
            if !look[w.server] {
                continue;
            }
            let s = &cluster.servers[w.server];
            let item = s.peek(&w.key, now);
            let expires = |exptime: u32| (exptime != 0).then(|| s.clock().time_of_tick(exptime));
            let raw = item.map(|item| Raw::of(&item.data, expires(item.exptime)));
            if let Some(at) = raw.and_then(|r| r.expires) {
                watch.due[w.server] = watch.due[w.server].min(at);
            }
            // The same bytes, length and expiry as last time: the same state, nothing
            // to build or record.
            if raw == w.seen {
                continue;
            }
            w.seen = raw;
            let stored = item.zip(raw).map(|(item, raw)| Stored {
                preview: preview(&item.data),
                len: raw.len,
                expires: raw.expires,
            });
            if stored != w.last {
                w.last = stored.clone();
                self.key_states.push(KeyState {
                    step,
                    time: now,
                    server: w.server,
                    key: String::from_utf8_lossy(w.key.as_bytes()).into_owned(),
                    stored,
                });
            }
        }
    }
}

/// What a traced call records of its request, taken before the server takes its bytes.
pub(super) struct Traced {
    /// The servers it went to, its first key's first ([`Cluster::servers_for`]).
    pub(super) servers: Vec<usize>,
    /// Each key's server, for a read spread over several ([`Event::Call::owners`]).
    pub(super) owners: Vec<usize>,
    /// The request described.
    pub(super) what: String,
    pub(super) request: Request,
}
