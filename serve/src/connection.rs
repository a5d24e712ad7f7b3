//! One client connection of `mcsim serve`: its reads go whole to a [`Session`], which
//! frames them as memcached does (pipelined, split and malformed input alike), and the
//! connection's [`ServeGate`] does the rest around each command: control commands, the
//! lockstep turn, faults, the clock and the trace.

use std::io::{Read, Write};

use socket2::SockRef;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use parking_lot::MutexGuard;

use crate::world::World;
use crate::{Shared, footprint, lock};
use mcsim::codec::Session;
use mcsim::codec::gate::Pending;
use mcsim::explore::Footprint;

mod gate;

pub(crate) use gate::ServeGate;

/// Bytes read from the socket at a time (memcached reads 16 KiB; the session models its
/// read buffer whatever arrives at once).
pub(crate) const READ_CHUNK: usize = 64 * 1024;

/// One client connection.
pub(crate) struct Connection {
    id: u64,
    server: usize,
    label: String,
    epoch: u64,
    /// The participant it is, by its id in lockstep, once it named itself (or took the
    /// place of one whose connection a fault broke): its commands are held and released
    /// in turn.
    member: Option<u64>,
    /// The server's `-I` (fixed for the run).
    item_size_max: u32,
    /// It asked for an execution (`mcsim next`): it drives the program's executions and
    /// outlives each of them.
    controller: bool,
    /// Its identity in lockstep, unique over every run (`id` counts from 1 each run).
    serial: u64,
    /// The run it was opened in ([`World::runs`]): a connection of an earlier run takes
    /// no part in this one.
    run: u64,
    /// Bytes read and bytes of replies made since the server last counted them
    /// (`bytes_read`, `bytes_written`): counted as the next command is admitted, under
    /// the lock it takes anyway.
    uncounted: (u64, u64),
}

impl Connection {
    pub(crate) fn new(id: u64, server: usize, shared: &Shared) -> Connection {
        let mut w = lock(shared);
        w.connections[server] += 1;
        let open = w.connections[server];
        w.servers[server].set_connections(open);
        Connection {
            id,
            server,
            label: format!("c{id}"),
            epoch: w.epochs[server],
            member: None,
            item_size_max: w.servers[server].config().item_size_max,
            controller: false,
            serial: w.serial(),
            run: w.runs,
            uncounted: (0, 0),
        }
    }

    /// Bytes read from the socket, counted by the server before the commands in them
    /// run (a `stats` counts itself read, as memcached's does).
    pub(crate) fn read(&mut self, bytes: usize) {
        self.uncounted.0 += bytes as u64;
    }

    /// Bytes of replies made, counted by the server as written before the next command
    /// runs (a `stats` does not count its own reply, as memcached's does not).
    pub(crate) fn made(&mut self, bytes: usize) {
        self.uncounted.1 += bytes as u64;
    }

    /// True if the connection was opened in an earlier run than the world's.
    fn stale(&self, w: &World) -> bool {
        self.run != w.runs
    }

    /// True if its server left, or crashed and restarted, since the connection opened:
    /// its next command closes it instead of running.
    fn cut_off(&self, w: &World) -> bool {
        w.is_down(self.server) || w.epochs[self.server] != self.epoch
    }

    pub(crate) fn close(&mut self, shared: &Shared) {
        let mut w = lock(shared);
        w.connections[self.server] = w.connections[self.server].saturating_sub(1);
        let open = w.connections[self.server];
        w.servers[self.server].set_connections(open);
        if self.controller {
            w.controllers = w.controllers.saturating_sub(1);
        }
        let at = w.lines();
        if let (Some(ls), Some(member)) = (&mut w.lockstep, self.member)
            && ls.unlink(member, self.server)
        {
            // Its last connection: the participant leaves.
            ls.closed(member, at);
        }
        drop(w);
        shared.turn.notify_all();
    }

    pub(crate) fn run(&mut self, shared: &Shared, mut stream: TcpStream) {
        let _ = stream.set_nodelay(true);
        let mut session = Session::new();
        let mut buf = vec![0u8; READ_CHUNK];
        let mut out = Vec::new();
        loop {
            // A lockstep participant says it is reading (one look at the world).
            let participant = self.member.filter(|&m| match &mut lock(shared).lockstep {
                Some(ls) => {
                    ls.reading(m, self.server, &stream);
                    true
                }
                None => false,
            });
            if let Some(member) = participant {
                shared.turn.notify_all();
                // Waits for bytes without taking them, so that from the moment they arrive
                // until this connection counts as busy, lockstep sees them unread.
                let _ = stream.peek(&mut buf[..1]);
                if let Some(ls) = &mut lock(shared).lockstep {
                    ls.busy(member);
                }
            }
            let n = match stream.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            self.read(n);
            let mut gate = ServeGate::new(self, shared);
            out.clear();
            session.feed_into(&buf[..n], &mut gate, &mut out);
            let broken = gate.broken;
            drop(gate);
            self.made(out.len());
            if !out.is_empty() {
                if !shared.delay.is_zero() {
                    std::thread::sleep(shared.delay);
                }
                if stream.write_all(&out).is_err() {
                    return;
                }
            }
            if session.is_closed() || broken {
                return;
            }
        }
    }

    /// The connection was made to a server that is down (it crashed and has not
    /// restarted, or it left): it is reset at once, which its client meets as a refused
    /// connection. Under lockstep the attempt is a step of the participant awaited on a
    /// new connection, if one is (a stock client reconnects after an error), taken in its
    /// turn; that participant stays awaited. Each attempt takes [`World::tick_refused`]
    /// of virtual time, so a client that keeps trying meets the server's return.
    pub(crate) fn refuse(&mut self, shared: &Shared, stream: TcpStream) {
        let mut w = lock(shared);
        let server = self.server;
        let stale = self.stale(&w);
        let adopted = match &mut w.lockstep {
            Some(ls) if !stale => ls.adopt(),
            _ => None,
        };
        if let Some((member, name)) = &adopted {
            w = take_turn(shared, w, (*member, name), footprint::server(server));
        }
        w.tick_refused();
        let (now, n) = (w.now(), w.commands);
        let who = adopted
            .as_ref()
            .map_or(self.label.as_str(), |(_, name)| name);
        let why = (w.why_down(server)).unwrap_or_else(|| format!("server {server} is down"));
        w.record(format!("{n:>8} {now}  {who}  connection refused: {why}"));
        w.faults.met(server, &Pending::of(&[], false));
        if let (Some(ls), Some((member, _))) = (&mut w.lockstep, adopted) {
            ls.cut(member, server);
        }
        drop(w);
        shared.turn.notify_all();
        // Closed with a reset, as a port nobody listens on answers.
        let _ = SockRef::from(&stream).set_linger(Some(Duration::ZERO));
        drop(stream);
    }

    /// The connection names itself: in lockstep it takes part from now on, as a new
    /// participant or in the place of one whose connection a fault broke.
    fn name(&mut self, shared: &Shared, name: String) {
        let mut w = lock(shared);
        if self.stale(&w) {
            return;
        }
        if let Some(ls) = &mut w.lockstep {
            match ls.id_of(&name) {
                // Named so already (after it took a broken participant's place, too).
                Some(other) if Some(other) == self.member => return,
                Some(other) if ls.is_broken(other) => {
                    ls.adopt_as(other);
                    self.take_place(&mut w, other, name);
                    return;
                }
                // Its connection to another server: the same participant.
                Some(other) if ls.link(other, self.server) => {
                    self.label = name;
                    self.member = Some(other);
                    return;
                }
                Some(_) => {
                    let message = format!(
                        "the participant name {name} is taken twice (connection c{} named itself {name} while another connection of that name to the same server was open; a participant has one connection to each server)",
                        self.id
                    );
                    w.declared.misuse.push(message);
                }
                None => {
                    ls.join(self.serial, &name);
                    ls.link(self.serial, self.server);
                }
            }
        }
        self.label = name;
        self.member = Some(self.serial);
    }

    /// Under lockstep, a connection that is no participant takes the place of the one
    /// awaited after a fault broke its connection (its client reconnected), if any: a
    /// line of the trace says so.
    fn adopt(&mut self, w: &mut World) {
        if let Some((member, name)) = w.lockstep.as_mut().and_then(|ls| ls.adopt()) {
            self.take_place(w, member, name);
        }
    }

    /// This connection takes the place of participant `member` (named `name`), whose
    /// connection a fault broke: a line of the trace says so.
    fn take_place(&mut self, w: &mut World, member: u64, name: String) {
        if let Some(ls) = &mut w.lockstep {
            ls.link(member, self.server);
        }
        let (now, n) = (w.now(), w.commands);
        w.record(format!(
            "{n:>8} {now}  {name}  reconnected: connection c{} takes its place",
            self.id
        ));
        self.label = name;
        self.member = Some(member);
    }

    /// `mcsim next`: asks whoever runs the executions ([`crate::Running::executions`])
    /// for the next one and waits for the answer.
    fn next(&mut self, shared: &Shared) -> Vec<u8> {
        let Some(executions) = shared.executions.lock().clone() else {
            return b"CLIENT_ERROR mcsim next: executions are given only under mcsim test\r\n"
                .to_vec();
        };
        if !self.controller {
            self.controller = true;
            lock(shared).controllers += 1;
        }
        let (reply, answer) = std::sync::mpsc::channel();
        let detail = match executions.send(crate::NextRequest { reply }) {
            Ok(()) => answer.recv().unwrap_or_else(|_| "done".into()),
            Err(_) => "done".into(),
        };
        format!("OK {detail}\r\n").into_bytes()
    }

    /// `mcsim sleep`: `who` (this connection if `None`) waits `by` in virtual time. A
    /// lockstep participant sleeps until the clock gets there ([`crate::lockstep`]);
    /// without lockstep the clock moves ahead (and real time passes, on a real clock).
    fn sleep(&mut self, shared: &Shared, who: Option<String>, by: Duration) -> Vec<u8> {
        let who = who.unwrap_or_else(|| self.label.clone());
        let mut w = lock(shared);
        let (now, n) = (w.now(), w.commands);
        let Some(ls) = &mut w.lockstep else {
            w.record(format!("{n:>8} {now}  {who}  sleep {} ms", by.as_millis()));
            if w.real_clock() {
                drop(w);
                std::thread::sleep(by);
            } else {
                w.advance(by);
            }
            return b"OK\r\n".to_vec();
        };
        let Some(id) = ls.id_of(&who) else {
            if ls.named().contains(&who) {
                // A participant whose connection closed (its thread closed its client, or
                // the program is ending) takes no more part: its sleep returns at once.
                w.record(format!(
                    "{n:>8} {now}  {who}  sleep {} ms (its connection has closed: returns at once)",
                    by.as_millis()
                ));
                return b"OK\r\n".to_vec();
            }
            let message =
                format!("mcsim sleep: {who} is not a participant (name its connection first)");
            let reply = format!("CLIENT_ERROR {message}\r\n").into_bytes();
            w.declared.misuse.push(message);
            return reply;
        };
        // A sleep is a step of the participant's, taken in its turn like a command: two
        // participants that sleep at once do so in the schedule's order.
        let mut w = take_turn(shared, w, (id, &who), footprint::private(&who));
        let (now, n) = (w.now(), w.commands);
        let ls = w.lockstep.as_mut().expect("lockstep is on");
        ls.sleep(id, now + by);
        w.record(format!("{n:>8} {now}  {who}  sleep {} ms", by.as_millis()));
        let w = sleep_through(shared, w, id);
        drop(w);
        shared.turn.notify_all();
        b"OK\r\n".to_vec()
    }

    /// Under lockstep, waits for the turn of participant `who` (this connection if
    /// `None`) before a control command that is one of its steps (entering or leaving a
    /// section): two participants that enter or leave at once do so in the schedule's
    /// order, so a section's verdict is the schedule's. Returns the world, locked.
    fn step<'a>(
        &mut self,
        shared: &'a Shared,
        w: MutexGuard<'a, World>,
        (who, footprint): (Option<&str>, Footprint),
    ) -> MutexGuard<'a, World> {
        let who = who.unwrap_or(&self.label).to_string();
        match w.lockstep.as_ref().and_then(|ls| ls.id_of(&who)) {
            Some(id) if !self.stale(&w) => take_turn(shared, w, (id, &who), footprint),
            _ => w,
        }
    }

    /// A pause of this participant before its command (a GC pause, a slow disk): under
    /// lockstep it sleeps `by` in virtual time while the others go on, then takes its
    /// turn again; without lockstep the clock moves ahead. Returns the world, locked,
    /// with its turn taken.
    fn pause<'a>(
        &mut self,
        shared: &'a Shared,
        mut w: MutexGuard<'a, World>,
        (member, by): (u64, Duration),
        footprint: Footprint,
    ) -> MutexGuard<'a, World> {
        let (now, n, who) = (w.now(), w.commands, self.label.clone());
        let ms = by.as_millis();
        let Some(ls) = &mut w.lockstep else {
            w.advance(by);
            w.record_fault((n, now), &who, format!("pause {who} for {ms} ms"));
            return w;
        };
        ls.sleep(member, now + by);
        w.record_fault(
            (n, now),
            &who,
            format!(
                "pause {who} for {ms} ms (its command waits until {}; the others go on)",
                now + by
            ),
        );
        let w = sleep_through(shared, w, member);
        if w.lockstep.is_none() {
            return w;
        }
        take_turn(shared, w, (member, &self.label), footprint)
    }

    /// Blocks until this connection may run a command: in lockstep, a participant's turn;
    /// anyone else's, once no participant has a command on its way.
    fn wait_turn<'a>(
        &mut self,
        shared: &'a Shared,
        command: &Pending<'_>,
    ) -> MutexGuard<'a, World> {
        let mut w = lock(shared);
        if self.stale(&w) {
            // Its run is over: it is closed at its command, outside the schedule.
            self.member = None;
            return w;
        }
        // A participant that said it is done takes no more part.
        if let (Some(ls), Some(member)) = (&w.lockstep, self.member)
            && !ls.is_live(member)
        {
            self.member = None;
        }
        if self.member.is_none() && !self.controller {
            self.adopt(&mut w);
        }
        let Some(member) = self.member else {
            let since = Instant::now();
            while let Some(ls) = &w.lockstep
                && !ls.quiet()
                && since.elapsed() < ls.wait_limit
            {
                shared.turn.wait_for(&mut w, Duration::from_millis(1));
            }
            return w;
        };
        let Some(ls) = &mut w.lockstep else {
            return w;
        };
        // Awaited on a new connection after a fault closed one of its connections, it
        // came back on another of them: it is awaited no more.
        ls.adopt_as(member);
        let footprint = footprint::command(self.server, command, &self.label);
        take_turn(shared, w, (member, &self.label), footprint)
    }
}

/// Blocks until participant `id`, put to sleep, has woken (or left). Returns the world,
/// locked.
fn sleep_through<'a>(
    shared: &'a Shared,
    mut w: MutexGuard<'a, World>,
    id: u64,
) -> MutexGuard<'a, World> {
    shared.turn.notify_all();
    loop {
        w.wake_sleepers();
        if w.lockstep.as_mut().is_none_or(|ls| ls.woke(id)) {
            return w;
        }
        shared.turn.wait_for(&mut w, Duration::from_millis(20));
    }
}

/// Blocks until participant `id` (named `label`) may run its next step, a command or a
/// sleep, touching `footprint`: its turn in the order the chooser picks. Returns the
/// world, locked.
fn take_turn<'a>(
    shared: &'a Shared,
    mut w: MutexGuard<'a, World>,
    (id, label): (u64, &str),
    footprint: Footprint,
) -> MutexGuard<'a, World> {
    let ls = w.lockstep.as_mut().expect("lockstep is on");
    ls.arrive(id, label, footprint);
    let limit = ls.wait_limit;
    let mut since = Instant::now();
    loop {
        let ls = w.lockstep.as_mut().expect("lockstep is on");
        if ls.take(id) {
            return w;
        }
        let force = since.elapsed() >= limit;
        w.wake_sleepers();
        let ls = w.lockstep.as_mut().expect("lockstep is on");
        if let Some(passed) = ls.grant(force) {
            if force && !passed.is_empty() {
                let at = w.now();
                let n = w.commands;
                w.record(format!(
                    "{n:>8} {at}  --  lockstep: released without {} (nothing sent for {limit:?})",
                    passed.join(", ")
                ));
            }
            since = Instant::now();
            shared.turn.notify_all();
            continue;
        }
        shared.turn.wait_for(&mut w, Duration::from_millis(20));
    }
}
