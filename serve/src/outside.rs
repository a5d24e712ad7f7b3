//! Commands that ran outside the lockstep schedule: those of connections that never named
//! themselves, sent while the participants were running. Their place among the
//! participants' commands is the threads' timing, not the schedule's, so a replay need not
//! put them there again; `mcsim test` names them so that the program can be fixed (the
//! connection named, or the command moved before or after the participants run).
//!
//! Only commands that read or change items count: `quit`, `version`, `stats`, a meta
//! no-op and a line answered with an error touch nothing a participant sees, wherever
//! they fall.

use mcsim::clock::VirtualTime;
use mcsim::protocol::Request;

/// The first command outside the schedule of one connection, and how many it sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unscheduled {
    /// The connection (`c3`).
    pub who: String,
    /// Its first such command, name and keys (`set counter`).
    pub command: String,
    /// The servers' virtual time when that command ran.
    pub at: VirtualTime,
    /// How many such commands it sent while the participants ran.
    pub count: usize,
    /// The trace lines of its commands (counted over the run), in order.
    lines: Vec<u64>,
}

/// What ran outside the schedule in one run.
#[derive(Default)]
pub(crate) struct Outside {
    /// The trace lines of the participants' first and last commands so far.
    span: Option<(u64, u64)>,
    /// By connection, in the order each first sent one.
    connections: Vec<Unscheduled>,
}

impl Outside {
    /// A participant's command ran at trace line `line`.
    pub fn in_turn(&mut self, line: u64) {
        let span = self.span.get_or_insert((line, line));
        span.1 = line;
    }

    /// Connection `who`, no participant, ran `request` at trace line `line`: noted when it
    /// touches items and the participants have begun.
    pub fn ran(&mut self, who: &str, request: &Request, at: VirtualTime, line: u64) {
        if self.span.is_none() || !touches_items(request) {
            return;
        }
        if let Some(known) = self.connections.iter_mut().find(|u| u.who == who) {
            known.lines.push(line);
            return;
        }
        let mut command = request.name().to_string();
        for key in request.keys() {
            command.push(' ');
            mcsim::trace::write_lossy(&mut command, key.as_bytes());
        }
        self.connections.push(Unscheduled {
            who: who.to_string(),
            command,
            at,
            count: 0,
            lines: vec![line],
        });
    }

    /// The connections that ran commands between the participants' first and last ones,
    /// each with the commands it sent in that span (later ones ran after the participants
    /// were through, as a final check does).
    pub fn unscheduled(&self) -> Vec<Unscheduled> {
        let Some((_, last)) = self.span else {
            return Vec::new();
        };
        (self.connections.iter())
            .filter(|u| u.lines[0] < last)
            .map(|u| Unscheduled {
                count: u.lines.iter().filter(|&&l| l < last).count(),
                lines: Vec::new(),
                ..u.clone()
            })
            .collect()
    }
}

/// True if `request` reads or changes items (or all of them, as `flush_all` does).
fn touches_items(request: &Request) -> bool {
    !request.keys().is_empty() || matches!(request, Request::FlushAll { .. })
}
