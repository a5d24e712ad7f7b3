//! A connection's part around each command of its session ([`ServeGate`]): the lockstep
//! turn, the faults drawn by policy, the clock, and the command's lines of the trace and
//! records of the run (its exchange, the faults it met).

use parking_lot::MutexGuard;

use super::Connection;
use crate::world::{Exchange, World};
use crate::{Shared, control, footprint, lock};
use mcsim::Key;
use mcsim::codec::gate::{Admit, Control, Gate, Pending, Ran};
use mcsim::fault::FaultKind;
use mcsim::trace::{write_decimal, write_reply, write_request};

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
    /// The command running touches an item within a second of expiring: what it finds
    /// depends on where the tick edges fall.
    near_expiry: bool,
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
            near_expiry: false,
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
            if self.conn.stale(&w) && !self.conn.controller {
                // A line its run left unread (its program was ending as the run did):
                // nothing of it reaches the run under way (no sleep, failure or figure
                // of another run's), and the connection closes, as at a data command.
                return Some(Control::Close);
            }
            if let Some((section, who)) = control::in_turn(&line) {
                w = self
                    .conn
                    .step(self.shared, w, (who, footprint::section(section)));
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
        let mut w = self.conn.wait_turn(self.shared, &command);
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
            let footprint = footprint::command(server, &command, &self.conn.label);
            w = self.conn.pause(self.shared, w, (member, by), footprint);
        }
        w.tick_command();
        let (now, n, who) = (w.now(), w.commands, &self.conn.label);
        if self.conn.cut_off(&w) {
            let why = (w.why_down(server)).unwrap_or_else(|| "the server restarted or left".into());
            w.record(format!("{n:>8} {now}  {who}  connection closed: {why}"));
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
        // Phase points are recorded for `mcsim test`, whose runs are under lockstep.
        self.near_expiry = w.lockstep.is_some()
            && (command.keys().filter_map(|k| Key::new(k).ok()))
                .any(|key| w.servers[server].near_expiry(&key, now));
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
        if let Ran::Request(request, reply) = &what
            && w.lockstep.is_some()
            && (self.near_expiry || request.reads_clock() || request.set_expiry(reply))
        {
            let point = w.servers[server].offset_in_second(w.now());
            w.phase_points.insert(point);
        }
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
        if member.is_some() && w.exchanges.len() < crate::world::EXCHANGES_KEPT {
            let at_us = w.now().micros();
            w.exchanges
                .push(exchange(&what, &self.conn.label, (at_us, server), lost));
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
            w.mark_fault(at, now, format!("reply to {} lost", self.conn.label));
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

/// One command of participant `who` and its reply, run at `at_us` on `server`.
fn exchange(what: &Ran<'_>, who: &str, (at_us, server): (u64, usize), lost: bool) -> Exchange {
    let (mut request, mut reply) = (String::new(), String::new());
    write_command(what, &mut request);
    write_answer(what, &mut reply);
    let (keys, write) = match what {
        Ran::Request(r, _) => (r.keys(), !r.is_read_only()),
        Ran::Line(..) => (&[][..], false),
    };
    Exchange {
        who: who.to_string(),
        at_us,
        server,
        keys: keys.iter().map(|k| k.as_bytes().to_vec()).collect(),
        write,
        request,
        reply,
        lost,
    }
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
