//! One client connection of `mcsim serve`: its reads go whole to a [`Session`], which
//! frames them as memcached does (pipelined, split and malformed input alike), and the
//! connection's [`Gate`] does the rest around each command: control commands, the
//! lockstep turn, faults, the clock and the trace.

use std::io::{Read, Write};

use socket2::SockRef;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use parking_lot::MutexGuard;

use crate::world::World;
use crate::{Shared, control, lock};
use mcsim::codec::Session;
use mcsim::codec::gate::{Admit, Control, Gate, Pending, Ran};
use mcsim::fault::FaultKind;
use mcsim::trace::{write_decimal, write_reply, write_request};

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
            if ls.is_live(member) && !ls.said_done(member) {
                ls.vanished.get_or_insert(at);
            }
            ls.leave(member);
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
            w = take_turn(shared, w, *member, name);
        }
        w.tick_refused();
        let (now, n) = (w.now(), w.commands);
        let who = adopted
            .as_ref()
            .map_or(self.label.as_str(), |(_, name)| name);
        let why = match w.faults.down[server] {
            Some(down) if down.kind == FaultKind::Crash => {
                format!("server {server} crashed and is down until {}", down.until)
            }
            Some(down) => format!("server {server} left and is away until {}", down.until),
            None => format!("server {server} is down"),
        };
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
        let mut w = take_turn(shared, w, id, &who);
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
        who: Option<&str>,
    ) -> MutexGuard<'a, World> {
        let who = who.unwrap_or(&self.label).to_string();
        match w.lockstep.as_ref().and_then(|ls| ls.id_of(&who)) {
            Some(id) if !self.stale(&w) => take_turn(shared, w, id, &who),
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
        take_turn(shared, w, member, &self.label)
    }

    /// Blocks until this connection may run a command: in lockstep, a participant's turn;
    /// anyone else's, once no participant has a command on its way.
    fn wait_turn<'a>(&mut self, shared: &'a Shared) -> MutexGuard<'a, World> {
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
        take_turn(shared, w, member, &self.label)
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
/// sleep: its turn in the order the chooser picks. Returns the world, locked.
fn take_turn<'a>(
    shared: &'a Shared,
    mut w: MutexGuard<'a, World>,
    id: u64,
    label: &str,
) -> MutexGuard<'a, World> {
    let ls = w.lockstep.as_mut().expect("lockstep is on");
    ls.arrive(id, label);
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

/// A connection's part around each command of its session: the world is locked from
/// [`admit`](Gate::admit) to [`ran`](Gate::ran), one command at a time.
pub(crate) struct ServeGate<'a> {
    conn: &'a mut Connection,
    shared: &'a Shared,
    world: Option<MutexGuard<'a, World>>,
    /// A fault broke the connection: nothing more of it runs, and it closes.
    pub(crate) broken: bool,
    /// The command running is unseen: an inert one ([`Gate::admit`]) of a connection
    /// outside a lockstep schedule (a setup client's `quit`, a `version`). It lands among
    /// the participants' commands wherever the threads' timing puts it, so it takes no
    /// instant of its own, draws and meets no fault and is not traced: a replay gives the
    /// same trace wherever it lands.
    unseen: bool,
}

impl<'a> ServeGate<'a> {
    /// The gate of `conn` for one read's commands.
    pub(crate) fn new(conn: &'a mut Connection, shared: &'a Shared) -> ServeGate<'a> {
        ServeGate {
            conn,
            shared,
            world: None,
            broken: false,
            unseen: false,
        }
    }

    /// A fault broke the connection of participant `member`: the participant is awaited
    /// on a new one, and this connection closes, a participant no more.
    fn cut(&mut self, w: &mut World, member: u64) {
        if let Some(ls) = &mut w.lockstep {
            ls.cut(member, self.conn.server);
        }
        self.conn.member = None;
        self.broken = true;
    }

    /// Lets the world go: other connections may run.
    fn release(&mut self) {
        self.world = None;
        self.shared.turn.notify_all();
    }
}

impl Gate for ServeGate<'_> {
    fn control(&mut self, line: &[u8]) -> Option<Control> {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line == b"mcsim next" {
            return Some(Control::Reply(self.conn.next(self.shared)));
        }
        if control::is_control(line) {
            let line = String::from_utf8_lossy(line);
            let mut w = lock(self.shared);
            if let Some(who) = control::in_turn(&line) {
                w = self.conn.step(self.shared, w, who);
            }
            let effect = control::run(&mut w, self.conn.server, &self.conn.label, &line);
            drop(w);
            self.shared.turn.notify_all();
            return Some(match effect {
                control::Effect::Reply(b) => Control::Reply(b),
                control::Effect::Name(name) => {
                    self.conn.name(self.shared, name);
                    Control::Reply(b"OK\r\n".to_vec())
                }
                control::Effect::Crashed => Control::Close,
                control::Effect::Sleep(who, by) => {
                    Control::Reply(self.conn.sleep(self.shared, who, by))
                }
            });
        }
        None
    }

    fn names(&mut self, key: &[u8]) -> bool {
        let Some(name) = self
            .shared
            .name_key
            .as_deref()
            .and_then(|prefix| key.strip_prefix(prefix.as_bytes()))
            .filter(|name| !name.is_empty())
        else {
            return false;
        };
        let name = String::from_utf8_lossy(name).into_owned();
        self.conn.name(self.shared, name);
        true
    }

    fn item_size_max(&mut self) -> u32 {
        self.conn.item_size_max
    }

    fn admit(&mut self, command: Pending<'_>) -> Admit<'_> {
        if self.broken {
            // The rest of what was sent with a command whose connection a fault broke.
            return Admit::Close;
        }
        let mut w = self.conn.wait_turn(self.shared);
        let server = self.conn.server;
        if self.conn.stale(&w) {
            // A connection of a run that is over: nothing of it enters this run's trace.
            drop(w);
            self.release();
            return Admit::Close;
        }
        let member = self.conn.member.filter(|_| w.lockstep.is_some());
        self.unseen =
            command.inert && member.is_none() && w.lockstep.is_some() && !self.conn.controller;
        if self.unseen {
            if self.conn.cut_off(&w) {
                // The server restarted or left: the connection closes, untraced too.
                drop(w);
                self.release();
                return Admit::Close;
            }
            let now = w.now();
            let w = self.world.insert(w);
            return Admit::Run(&mut w.servers[server], now);
        }
        if let Some(member) = member
            && let Some(by) = w.pause_due(&self.conn.label, &command)
        {
            w.faults.fired(FaultKind::Pause, server, None);
            w = self.conn.pause(self.shared, w, (member, by));
        }
        w.tick_command();
        let (now, n, who) = (w.now(), w.commands, &self.conn.label);
        if self.conn.cut_off(&w) {
            let why = match w.faults.down[server] {
                Some(down) if down.kind == FaultKind::Crash => format!(
                    "connection closed: server {server} crashed and is down until {}",
                    down.until
                ),
                Some(down) => format!(
                    "connection closed: server {server} left and is away until {}",
                    down.until
                ),
                None => "connection closed: the server restarted or left".to_string(),
            };
            w.record(format!("{n:>8} {now}  {who}  {why}"));
            w.faults.met(server, &command);
            // A participant's client sees the error and reconnects: it is awaited on its
            // new connection.
            if let Some(member) = member {
                self.cut(&mut w, member);
            }
            drop(w);
            self.release();
            return Admit::Close;
        }
        if w.armed[server].close_next > 0 {
            w.armed[server].close_next -= 1;
            w.record_fault(
                (n, now),
                who,
                "connection closed before its command".to_string(),
            );
            drop(w);
            self.release();
            return Admit::Close;
        }
        if let Some(member) = member {
            for kind in [FaultKind::Crash, FaultKind::Leave] {
                if !w.draw(kind, &command) {
                    continue;
                }
                let plan = &w.faults.policy.plan;
                let what = match kind {
                    FaultKind::Crash if plan.restart_after.is_zero() => {
                        "crashed before this command (restarted empty)".to_string()
                    }
                    FaultKind::Crash => format!(
                        "crashed before this command (restarts {} at {})",
                        if plan.warm_restart {
                            "with its items"
                        } else {
                            "empty"
                        },
                        now + plan.restart_after
                    ),
                    _ => format!(
                        "left before this command (back at {}, with its items)",
                        now + plan.rejoin_after
                    ),
                };
                w.record_fault(
                    (n, now),
                    who,
                    format!("server {server} {what}: its connections close"),
                );
                w.faults.fired(kind, server, None);
                w.take_down(server, kind, now);
                self.cut(&mut w, member);
                drop(w);
                self.release();
                return Admit::Close;
            }
            if w.draw(FaultKind::SkipSecond, &command) {
                w.servers[server].skip_second();
                w.record_fault(
                    (n, now),
                    "--",
                    format!("server {server}'s clock skipped a second"),
                );
                w.faults.fired(FaultKind::SkipSecond, server, None);
            }
            if w.draw(FaultKind::RequestLost, &command) {
                w.record_fault(
                    (n, now),
                    who,
                    "request lost: the server never sees it; the connection breaks".to_string(),
                );
                w.faults.fired(FaultKind::RequestLost, server, None);
                self.cut(&mut w, member);
                drop(w);
                self.release();
                return Admit::Close;
            }
        }
        let now = w.now();
        if w.draw(FaultKind::Evict, &command)
            && let Some(key) = w.evict_one(server)
        {
            w.record_fault((n, now), "--", format!("evict {key} from server {server}"));
            w.faults
                .fired(FaultKind::Evict, server, Some(key.as_bytes()));
        }
        w.faults.met(server, &command);
        let (read, written) = std::mem::take(&mut self.conn.uncounted);
        w.servers[server].count_bytes(read, written);
        let w = self.world.insert(w);
        Admit::Run(&mut w.servers[server], now)
    }

    fn ran(&mut self, what: Ran<'_>) -> bool {
        let Some(mut w) = self.world.take() else {
            return true;
        };
        if std::mem::take(&mut self.unseen) {
            drop(w);
            self.release();
            return true;
        }
        let server = self.conn.server;
        // Under lockstep a lost reply breaks the participant's connection: its client sees
        // the error at once, reconnects, and is awaited meanwhile (see `lockstep`). Only
        // participants' replies are lost by policy there: the others' commands (a test's
        // setup and final check) are not in the schedule.
        let member = self.conn.member.filter(|_| w.lockstep.is_some());
        let lost = if w.armed[server].lose_replies > 0 {
            w.armed[server].lose_replies -= 1;
            true
        } else if w.lockstep.is_none() || member.is_some() {
            let keys = match &what {
                Ran::Request(request, _) => request.keys(),
                Ran::Line(..) => &[],
            };
            let lost = w.draw(FaultKind::ReplyLost, &Pending::of(keys, false));
            if lost {
                w.faults.fired(FaultKind::ReplyLost, server, None);
            }
            lost
        } else {
            false
        };
        if member.is_some() && w.exchanges.len() < crate::world::ACCESSES_KEPT {
            let (mut request, mut reply) = (String::new(), String::new());
            exchange(&what, &mut request, &mut reply);
            let at_us = w.now().micros();
            w.exchanges.push(crate::world::Exchange {
                who: self.conn.label.clone(),
                at_us,
                server,
                request,
                reply,
                lost,
            });
        }
        if let (Some(_), Ran::Request(request, _)) = (member, &what) {
            let write = !request.is_read_only();
            for key in request.keys() {
                if w.accesses.len() < crate::world::ACCESSES_KEPT {
                    w.accesses.push(crate::world::Access {
                        who: self.conn.label.clone(),
                        server,
                        key: key.as_bytes().to_vec(),
                        write,
                    });
                }
            }
        }
        let (now, n, who) = (w.now(), w.commands, &self.conn.label);
        let at = w.lines();
        if let Some(ls) = &mut w.lockstep
            && !self.conn.controller
        {
            match (member, &what) {
                (Some(_), _) => ls.outside.in_turn(at),
                (None, Ran::Request(request, _)) => ls.outside.ran(who, request, now, at),
                (None, Ran::Line(..)) => {}
            }
        }
        w.record_with(|line| {
            write_decimal(line, n, 8);
            line.push(' ');
            let _ = now.write_to(line);
            line.push_str("  ");
            line.push_str(who);
            line.push_str("  ");
            describe(&what, line);
            if lost && member.is_some() {
                line.push_str(" (reply lost: FAULT; the connection breaks)");
            } else if lost {
                line.push_str(" (reply lost: FAULT)");
            }
        });
        if lost {
            w.fault_lines.push(at);
            w.marks.push(crate::world::FaultMark {
                at_us: now.micros(),
                text: format!("reply to {} lost", self.conn.label),
            });
        }
        if lost && let Some(member) = member {
            self.cut(&mut w, member);
        }
        drop(w);
        self.release();
        !lost
    }
}

/// One command and its reply for the trace, as the in-process timeline writes them,
/// written at the end of `out` (no string of its own per command).
fn describe(what: &Ran<'_>, out: &mut String) {
    write_command(what, out);
    out.push_str(" -> ");
    write_answer(what, out);
}

/// One command and its reply, each written at the end of its string.
fn exchange(what: &Ran<'_>, request: &mut String, reply: &mut String) {
    write_command(what, request);
    write_answer(what, reply);
}

/// The first line of `b` (at most 120 bytes), at the end of `out`.
fn first_line(out: &mut String, b: &[u8]) {
    let end = b
        .iter()
        .position(|&c| c == b'\r' || c == b'\n')
        .unwrap_or(b.len());
    mcsim::trace::write_lossy(out, &b[..end.min(120)]);
}

/// The command of `what`, at the end of `out`.
fn write_command(what: &Ran<'_>, out: &mut String) {
    match what {
        Ran::Request(request, _) => write_request(out, request),
        Ran::Line(line, _) => first_line(out, line),
    }
}

/// The answer of `what`, at the end of `out`.
fn write_answer(what: &Ran<'_>, out: &mut String) {
    match what {
        Ran::Request(_, reply) => write_reply(out, reply),
        Ran::Line(_, []) => out.push_str("(no reply)"),
        Ran::Line(_, answer) => first_line(out, answer),
    }
}
