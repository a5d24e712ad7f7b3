//! Lockstep mode: `mcsim serve --lockstep N` holds each command of N client connections
//! and releases one at a time, in an order drawn from the seed (under `mcsim test`, picked
//! by a strategy: [`Chooser`]), so that a multi-threaded client test interleaves the same
//! way every time it runs with that seed.
//!
//! The connections that take part are those that named themselves: `mcsim name X` on
//! the connection, or, from a client library that sends only memcached commands, a
//! read of the key PREFIX + X (in any form: `get`, `gets`, `gat`, `mg`, a binary GET or
//! GAT) when serve was started with `--name-key PREFIX` (answered as a miss). Others (a test's setup and its
//! final check, a control connection) run at once. A command is released only when at
//! least N participants have named themselves and every one still open has a command
//! waiting: then the order depends on the seed and the names alone, not on thread
//! timing. A participant that sends nothing for the wait limit is passed over, and the
//! trace says so.
//!
//! A participant may wait in virtual time (`mcsim sleep MS WHO`, sent while it is
//! between commands, so nothing is released meanwhile): it sleeps until the clock reaches
//! its wake time, and is not waited for. The clock moves one microsecond a command, and
//! when every participant is asleep it jumps to the first wake time: a sleep costs no
//! real time, and who wakes before which command depends on the schedule alone.
//!
//! The others' commands wait until every participant is quiet: its command held, or its
//! connection read to the end with nothing more arrived (neither bytes nor its close). A participant that sent
//! commands with `noreply` (or sent them and closed) does not wait for their replies, so
//! without this a final check from another connection could run before them in one run
//! and after them in the next.

use std::collections::{BTreeMap, BTreeSet};
use std::mem::MaybeUninit;
use std::net::TcpStream;
use std::time::Duration;

use socket2::SockRef;

use mcsim::clock::VirtualTime;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Picks which waiting participant runs next: `mcsim serve` draws from its seed, `mcsim
/// test` asks a strategy.
pub trait Chooser: Send {
    /// Picks one of `waiting` (the waiting participants' names, in name order, never
    /// empty) by its index.
    fn choose(&mut self, waiting: &[&str]) -> usize;
}

/// `mcsim serve`'s order: each pick drawn uniformly from the seed.
pub struct SeededOrder(ChaCha8Rng);

impl SeededOrder {
    /// The order of seed `seed`.
    pub fn new(seed: u64) -> SeededOrder {
        SeededOrder(ChaCha8Rng::seed_from_u64(seed ^ 0x10C5_7E90))
    }
}

impl Chooser for SeededOrder {
    fn choose(&mut self, waiting: &[&str]) -> usize {
        self.0.random_range(0..waiting.len())
    }
}

/// The scheduler's state.
pub(crate) struct Lockstep {
    clients: usize,
    /// Participants that have named themselves so far (closed ones included).
    joined: usize,
    /// Their names, in the order they named themselves, each once.
    named: Vec<String>,
    /// Participants still open, by id, with their name.
    live: BTreeMap<u64, String>,
    /// Those with a command waiting.
    waiting: BTreeMap<u64, String>,
    granted: Option<u64>,
    /// Participants blocked reading their connection with nothing left to run.
    reading: BTreeSet<u64>,
    /// A handle on each such participant's socket, to see whether more has arrived.
    sockets: BTreeMap<u64, TcpStream>,
    chooser: Box<dyn Chooser>,
    /// Participants asleep (`mcsim sleep`), by id, with their wake time.
    asleep: BTreeMap<u64, VirtualTime>,
    /// Participants woken whose sleep has not returned yet.
    woken: BTreeSet<u64>,
    /// How long a release waits for a participant that sends nothing.
    pub wait_limit: Duration,
}

impl Lockstep {
    pub fn new(clients: usize, chooser: Box<dyn Chooser>, wait_limit: Duration) -> Lockstep {
        Lockstep {
            clients: clients.max(1),
            joined: 0,
            named: Vec::new(),
            live: BTreeMap::new(),
            waiting: BTreeMap::new(),
            granted: None,
            reading: BTreeSet::new(),
            sockets: BTreeMap::new(),
            chooser,
            asleep: BTreeMap::new(),
            woken: BTreeSet::new(),
            wait_limit,
        }
    }

    /// The open participant named `name`.
    pub fn id_of(&self, name: &str) -> Option<u64> {
        self.live
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(id, _)| *id)
    }

    /// Participant `id` sleeps until `until`.
    pub fn sleep(&mut self, id: u64, until: VirtualTime) {
        self.woken.remove(&id);
        self.asleep.insert(id, until);
    }

    /// True once participant `id`'s sleep is over (or it left); its sleep returns.
    pub fn woke(&mut self, id: u64) -> bool {
        self.woken.remove(&id) || !self.asleep.contains_key(&id)
    }

    /// Wakes the sleepers whose time has come at `now`; if every participant is asleep
    /// (nothing else can happen), the clock first jumps to the earliest wake time. Returns
    /// the jump and the names woken, in name order.
    pub fn wake(&mut self, now: VirtualTime) -> (Duration, Vec<String>) {
        let all_asleep = self.granted.is_none()
            && self.waiting.is_empty()
            && self.joined >= self.clients
            && self.asleep.len() == self.live.len();
        let jump = match self.asleep.values().min() {
            Some(&first) if all_asleep && first > now => first - now,
            _ => Duration::ZERO,
        };
        let at = now + jump;
        let due: Vec<u64> = (self.asleep.iter())
            .filter(|(_, until)| **until <= at)
            .map(|(id, _)| *id)
            .collect();
        let mut names = Vec::new();
        for id in due {
            self.asleep.remove(&id);
            self.woken.insert(id);
            names.extend(self.live.get(&id).cloned());
        }
        names.sort();
        (jump, names)
    }

    /// Connection `id` named itself `label`: from now on its commands are held.
    pub fn join(&mut self, id: u64, label: &str) {
        if self.live.insert(id, label.to_string()).is_none() {
            self.joined += 1;
            if !self.named.iter().any(|n| n == label) {
                self.named.push(label.to_string());
            }
        }
    }

    /// The participants' names, in the order they named themselves, each once.
    pub fn named(&self) -> &[String] {
        &self.named
    }

    /// Connection `id` (named `label`) has a command ready.
    pub fn arrive(&mut self, id: u64, label: &str) {
        self.join(id, label);
        self.waiting.insert(id, label.to_string());
    }

    /// Connection `id` closed.
    pub fn leave(&mut self, id: u64) {
        self.live.remove(&id);
        self.reading.remove(&id);
        self.sockets.remove(&id);
        self.waiting.remove(&id);
        self.asleep.remove(&id);
        self.woken.remove(&id);
        if self.granted == Some(id) {
            self.granted = None;
        }
    }

    /// Participant `id` ran everything it was sent and waits for more on `socket`.
    pub fn reading(&mut self, id: u64, socket: &TcpStream) {
        if !self.live.contains_key(&id) {
            return;
        }
        if let std::collections::btree_map::Entry::Vacant(e) = self.sockets.entry(id) {
            match socket.try_clone() {
                Ok(s) => e.insert(s),
                // Without a handle it cannot be looked at: it counts as busy.
                Err(_) => return,
            };
        }
        self.reading.insert(id);
    }

    /// Participant `id` read more: it has commands to run.
    pub fn busy(&mut self, id: u64) {
        self.reading.remove(&id);
    }

    /// True if no participant has a command on its way: none is granted or about to be,
    /// and each has its command held or has run all it sent with nothing more arrived
    /// on its connection.
    pub fn quiet(&self) -> bool {
        // A command granted, or about to be (everyone here), is on its way.
        if self.granted.is_some() || (!self.waiting.is_empty() && self.all_here()) {
            return false;
        }
        self.live.keys().all(|id| {
            self.waiting.contains_key(id)
                || self.asleep.contains_key(id)
                || (self.reading.contains(id)
                    && self.sockets.get(id).is_some_and(|s| !has_unread(s)))
        })
    }

    /// True if every participant expected has come and every one still open has a
    /// command waiting or sleeps.
    fn all_here(&self) -> bool {
        self.joined >= self.clients && self.waiting.len() + self.asleep.len() == self.live.len()
    }

    /// True if `id` may run its command now (and takes the grant).
    pub fn take(&mut self, id: u64) -> bool {
        if self.granted == Some(id) {
            self.granted = None;
            self.waiting.remove(&id);
            return true;
        }
        false
    }

    /// Grants the next command if every participant is waiting; with `force`, among
    /// those waiting even if some are not (a participant passed over). Returns the
    /// labels passed over, if any.
    pub fn grant(&mut self, force: bool) -> Option<Vec<String>> {
        if self.granted.is_some() || self.waiting.is_empty() {
            return None;
        }
        if !self.all_here() && !force {
            return None;
        }
        let mut order: Vec<(&String, u64)> = self.waiting.iter().map(|(id, l)| (l, *id)).collect();
        order.sort();
        let names: Vec<&str> = order.iter().map(|(l, _)| l.as_str()).collect();
        let pick = order[self.chooser.choose(&names).min(order.len() - 1)].1;
        self.granted = Some(pick);
        let passed: Vec<String> = self
            .live
            .iter()
            .filter(|(id, _)| !self.waiting.contains_key(id) && !self.asleep.contains_key(id))
            .map(|(_, l)| l.clone())
            .collect();
        Some(passed)
    }
}

/// True if something arrived on `socket` that its connection has not taken yet: bytes,
/// or the client's close (its departure frees the others' held commands, so it too is on
/// its way). An error counts as nothing, so a broken connection never holds others up.
fn has_unread(socket: &TcpStream) -> bool {
    let mut byte = [MaybeUninit::<u8>::uninit(); 1];
    SockRef::from(socket)
        .recv_with_flags(&mut byte, libc::MSG_PEEK | libc::MSG_DONTWAIT)
        .is_ok()
}
