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
//! A participant may have a connection to each server (a client that spreads its keys
//! over servers), each named with the participant's name: its commands, on whichever
//! connection, are its steps. A second connection of that name to the same server is a
//! mistake of the program's.
//!
//! A participant may wait in virtual time (`mcsim sleep MS WHO`, sent while it is
//! between commands, so nothing is released meanwhile): it sleeps until the clock reaches
//! its wake time, and is not waited for. The clock moves a command's latency each command
//! (a microsecond, unless a scenario gives one), and when every participant is asleep it
//! jumps to the first wake time, or to a server's return if that comes first: a sleep
//! costs no real time, and who wakes before which command depends on the schedule alone.
//!
//! A fault that breaks a participant's connection (a lost request or reply, a crash, a
//! server leaving) leaves the participant awaited: nothing is released until a
//! connection that is no participant runs a command (or is refused by a server that is
//! down), and that connection takes the participant's place (a stock client reconnects
//! after an error on its own), or the participant runs a command on another of its
//! connections, or says it is done (`mcsim done WHO`). So where it returns is the same in
//! every run, whatever its reconnect costs in real time.
//!
//! The others' commands wait until every participant is quiet: its command held, or its
//! connection read to the end with nothing more arrived (neither bytes nor its close). A participant that sent
//! commands with `noreply` (or sent them and closed) does not wait for their replies, so
//! without this a final check from another connection could run before them in one run
//! and after them in the next.
//!
//! Where among the participants' commands another connection's command lands is still
//! the threads' timing. One that changes nothing a participant could see (a `quit`,
//! `version`, `stats`, a no-op: [`mcsim::codec::gate::inert`]) is therefore left out of
//! the run: it takes no instant, meets no fault and is not traced, so a setup client
//! that quits while the participants run leaves the trace the same wherever it lands.

use std::collections::{BTreeMap, BTreeSet};
use std::mem::MaybeUninit;
use std::net::TcpStream;
use std::time::Duration;

use socket2::SockRef;

use mcsim::clock::VirtualTime;
use mcsim::explore::Footprint;

use crate::outside::Outside;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A participant's step held for its turn, as a [`Chooser`] sees it.
pub struct Held<'a> {
    /// The participant's name.
    pub name: &'a str,
    /// What the step touches (a command its keys, a sleep its participant, a section step
    /// its section): steps whose footprints commute give the same outcome in either
    /// order, but for the virtual instants they run at.
    pub footprint: &'a Footprint,
}

/// Picks which waiting participant runs next: `mcsim serve` draws from its seed, `mcsim
/// test` asks a strategy.
pub trait Chooser: Send {
    /// Picks one of `waiting` (the waiting participants' steps, in name order, never
    /// empty) by its index.
    fn choose(&mut self, waiting: &[Held<'_>]) -> usize;

    /// A participant's connection closed before it said it was done: from the next
    /// choice on, the program may be ending, and who waits is no longer the order's to
    /// decide (an exit closes every connection at once, in no order).
    fn ending(&mut self) {}
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
    fn choose(&mut self, waiting: &[Held<'_>]) -> usize {
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
    /// Those with a step waiting: their name, and what the step touches.
    waiting: BTreeMap<u64, (String, Footprint)>,
    granted: Option<u64>,
    /// Participants blocked reading their connection with nothing left to run.
    reading: BTreeSet<u64>,
    /// A handle on each such participant's sockets, by server, to see whether more has
    /// arrived.
    sockets: BTreeMap<(u64, usize), TcpStream>,
    /// The servers each open participant has a connection to: one a server at most (a
    /// client that spreads its keys over servers has one connection to each).
    links: BTreeMap<u64, BTreeSet<usize>>,
    chooser: Box<dyn Chooser>,
    /// Participants asleep (`mcsim sleep`), by id, with their wake time.
    asleep: BTreeMap<u64, VirtualTime>,
    /// Participants woken whose sleep has not returned yet.
    woken: BTreeSet<u64>,
    /// Participants whose connection a fault broke, awaited on a new one: they stay
    /// participants (a sleep of theirs is taken in turn), but none has a command to wait
    /// for until a new connection takes their place ([`adopt`](Lockstep::adopt)).
    broken: BTreeSet<u64>,
    /// Participants that said they are done (`mcsim done`) while their connection was
    /// open: not waited for once they have nothing on their way ([`gone`](Lockstep::gone)).
    finished: BTreeSet<u64>,
    /// How long a release waits for a participant that sends nothing.
    pub wait_limit: Duration,
    /// Commands of connections that never named themselves, run while the participants
    /// ran.
    pub outside: Outside,
    /// Where the trace was (its lines so far) when a participant's connection first
    /// closed before the participant said it was done: from there on, the program may
    /// be ending (an exit closes every connection at once, in no order the schedule
    /// picks).
    vanished: Option<u64>,
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
            links: BTreeMap::new(),
            chooser,
            asleep: BTreeMap::new(),
            woken: BTreeSet::new(),
            broken: BTreeSet::new(),
            finished: BTreeSet::new(),
            wait_limit,
            outside: Outside::default(),
            vanished: None,
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
    /// (nothing else can happen), the clock first jumps to the earliest wake time, or to
    /// `event` if that comes first (a server coming back). Returns the jump and the names
    /// woken, in name order.
    pub fn wake(
        &mut self,
        now: VirtualTime,
        event: Option<VirtualTime>,
    ) -> (Duration, Vec<String>) {
        let all_asleep = self.granted.is_none()
            && self.waiting.is_empty()
            && self.joined >= self.clients
            && !self.asleep.is_empty()
            && self.live.keys().all(|&id| self.here(id));
        let first = match (self.asleep.values().min(), event.filter(|&e| e > now)) {
            (Some(&wake), Some(event)) => Some(wake.min(event)),
            (wake, _) => wake.copied(),
        };
        let jump = match first {
            Some(first) if all_asleep && first > now => first - now,
            _ => Duration::ZERO,
        };
        let at = now + jump;
        let mut due: Vec<u64> = (self.asleep.iter())
            .filter(|(_, until)| **until <= at)
            .map(|(id, _)| *id)
            .collect();
        // A participant awaited on a new connection wakes only when no other such is
        // awake: a stock client's new connection does not say whose it is, so one
        // participant at a time may be the one it belongs to. The first by name wakes;
        // the others when it has its new connection.
        let mut held: Vec<(&String, u64)> = (due.iter())
            .filter(|id| self.broken.contains(id))
            .filter_map(|id| Some((self.live.get(id)?, *id)))
            .collect();
        held.sort();
        if self.broken_awake().is_none() && !held.is_empty() {
            held.remove(0);
        }
        due.retain(|id| !held.iter().any(|(_, h)| h == id));
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

    /// The participants still taking part (not done), in name order.
    pub fn running(&self) -> Vec<String> {
        let mut names: Vec<String> = (self.live.iter())
            .filter(|(id, _)| !self.finished.contains(id))
            .map(|(_, n)| n.clone())
            .collect();
        names.sort();
        names
    }

    /// The participants' names, in the order they named themselves, each once.
    pub fn named(&self) -> &[String] {
        &self.named
    }

    /// Connection `id` (named `label`) has a step ready, touching `footprint`.
    pub fn arrive(&mut self, id: u64, label: &str, footprint: Footprint) {
        self.join(id, label);
        self.waiting.insert(id, (label.to_string(), footprint));
    }

    /// True if participant `id` takes part now (it named itself, and has not left or
    /// said it is done).
    pub fn is_live(&self, id: u64) -> bool {
        self.live.contains_key(&id)
    }

    /// Participant `id` has a connection to `server` too: false if it has one already.
    pub fn link(&mut self, id: u64, server: usize) -> bool {
        self.links.entry(id).or_default().insert(server)
    }

    /// Participant `id`'s connection to `server` closed: true if it was its last.
    pub fn unlink(&mut self, id: u64, server: usize) -> bool {
        self.sockets.remove(&(id, server));
        let Some(servers) = self.links.get_mut(&id) else {
            return true;
        };
        servers.remove(&server);
        let last = servers.is_empty();
        if last {
            self.links.remove(&id);
        }
        last
    }

    /// A fault broke participant `id`'s connection to `server`: it is awaited on a new
    /// one, unless it said it is done.
    pub fn cut(&mut self, id: u64, server: usize) {
        self.unlink(id, server);
        if self.finished.contains(&id) {
            // It said it is done (before its last command ran: a `quit` is sent without
            // waiting for its answer): nothing more of it is to come.
            self.leave(id);
        } else if self.live.contains_key(&id) {
            self.broken.insert(id);
            self.reading.remove(&id);
            self.waiting.remove(&id);
        }
    }

    /// True if participant `id` said it is done (`mcsim done`) and has not left.
    fn said_done(&self, id: u64) -> bool {
        self.finished.contains(&id)
    }

    /// True if participant `id` is awaited on a new connection.
    pub fn is_broken(&self, id: u64) -> bool {
        self.broken.contains(&id)
    }

    /// The participant awaited on a new connection that is awake (one at most: see
    /// [`wake`](Lockstep::wake)), the first by name if ever more, with its name. One
    /// asleep sends nothing until it wakes.
    fn broken_awake(&self) -> Option<(u64, &String)> {
        (self.broken.iter())
            .filter(|id| !self.asleep.contains_key(id))
            .filter_map(|id| Some((*id, self.live.get(id)?)))
            .min_by(|a, b| a.1.cmp(b.1))
    }

    /// A connection that is no participant runs a command while a participant is
    /// awaited on a new connection and awake: it takes that participant's place. The
    /// participant's id and name.
    pub fn adopt(&mut self) -> Option<(u64, String)> {
        let (id, name) = self.broken_awake().map(|(id, n)| (id, n.clone()))?;
        self.broken.remove(&id);
        Some((id, name))
    }

    /// A connection that named itself `id`'s name takes the place of participant `id`,
    /// awaited after a fault broke its connection.
    pub fn adopt_as(&mut self, id: u64) {
        self.broken.remove(&id);
    }

    /// Participant `name` is done (`mcsim done`): awaited after a fault broke its
    /// connection, it is not any more; with its connection open, it is not waited for
    /// once that connection has nothing on its way (what it sent before it said so still
    /// runs in its turn).
    pub fn done(&mut self, name: &str) {
        let Some(id) = self.id_of(name) else {
            return;
        };
        if self.broken.contains(&id) {
            self.leave(id);
        } else {
            self.finished.insert(id);
        }
    }

    /// True if participant `id` said it is done and has nothing on its way: it read all
    /// it was sent, and nothing more arrived.
    fn gone(&self, id: u64) -> bool {
        self.finished.contains(&id) && self.reading.contains(&id) && self.drained(id)
    }

    /// True if participant `id` has its next step held (a command, or a sleep), or
    /// said it is done and has nothing on its way.
    fn here(&self, id: u64) -> bool {
        self.waiting.contains_key(&id) || self.asleep.contains_key(&id) || self.gone(id)
    }

    /// Connection `id` closed.
    fn leave(&mut self, id: u64) {
        self.broken.remove(&id);
        self.finished.remove(&id);
        self.live.remove(&id);
        self.reading.remove(&id);
        self.sockets.retain(|(m, _), _| *m != id);
        self.links.remove(&id);
        self.waiting.remove(&id);
        self.asleep.remove(&id);
        self.woken.remove(&id);
        if self.granted == Some(id) {
            self.granted = None;
        }
    }

    /// Participant `id`'s last connection closed at trace line `at`. If it was open and
    /// had not said it was done, the program may be ending (the first such line is
    /// kept, and the chooser told).
    pub fn closed(&mut self, id: u64, at: u64) {
        if self.is_live(id) && !self.said_done(id) && self.vanished.is_none() {
            self.vanished = Some(at);
            self.chooser.ending();
        }
        self.leave(id);
    }

    /// Where the trace was when a participant's connection first closed before it said
    /// it was done ([`closed`](Lockstep::closed)).
    pub fn vanished(&self) -> Option<u64> {
        self.vanished
    }

    /// Participant `id` ran everything it was sent and waits for more on `socket`.
    pub fn reading(&mut self, id: u64, server: usize, socket: &TcpStream) {
        if !self.live.contains_key(&id) {
            return;
        }
        if let std::collections::btree_map::Entry::Vacant(e) = self.sockets.entry((id, server)) {
            match socket.try_clone() {
                Ok(s) => e.insert(s),
                // Without a handle it cannot be looked at: it counts as busy.
                Err(_) => return,
            };
        }
        self.reading.insert(id);
    }

    /// True if nothing arrived on any of participant `id`'s connections that it has not
    /// taken yet (and it has one to look at).
    fn drained(&self, id: u64) -> bool {
        let mut theirs = self.sockets.range((id, 0)..=(id, usize::MAX)).peekable();
        theirs.peek().is_some() && theirs.all(|(_, s)| !has_unread(s))
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
                || (self.reading.contains(id) && self.drained(*id))
        })
    }

    /// True if every participant expected has come and every one still open has a
    /// command waiting or sleeps.
    fn all_here(&self) -> bool {
        self.joined >= self.clients && self.live.keys().all(|&id| self.here(id))
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
        let mut order: Vec<(&String, u64, &Footprint)> = (self.waiting.iter())
            .map(|(id, (l, f))| (l, *id, f))
            .collect();
        order.sort_by_key(|&(l, id, _)| (l, id));
        let held: Vec<Held<'_>> = (order.iter())
            .map(|&(name, _, footprint)| Held { name, footprint })
            .collect();
        let pick = order[self.chooser.choose(&held).min(order.len() - 1)].1;
        self.granted = Some(pick);
        let mut passed: Vec<String> = self
            .live
            .iter()
            .filter(|(id, _)| !self.here(**id))
            .map(|(_, l)| l.clone())
            .collect();
        // In name order: connections are numbered in the order they came, which differs
        // from run to run.
        passed.sort();
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
