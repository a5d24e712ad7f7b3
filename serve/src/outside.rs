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
}

/// What one connection that is no participant sent once the participants had begun.
struct Sent {
    who: String,
    /// Its first command, name and keys, and when it ran.
    command: String,
    at: VirtualTime,
    /// The trace lines of its commands (counted over the run), in order.
    lines: Vec<u64>,
}

/// What ran outside the schedule in one run.
#[derive(Default)]
pub(crate) struct Outside {
    /// The trace line of the participants' last command so far (`None`: they have not
    /// begun).
    last_in_turn: Option<u64>,
    /// By connection, in the order each first sent one.
    connections: Vec<Sent>,
}

impl Outside {
    /// A participant's command ran at trace line `line`.
    pub fn in_turn(&mut self, line: u64) {
        self.last_in_turn = Some(line);
    }

    /// Connection `who`, no participant, ran `request` at trace line `line`: noted when it
    /// touches items and the participants have begun.
    pub fn ran(&mut self, who: &str, request: &Request, at: VirtualTime, line: u64) {
        if self.last_in_turn.is_none() || !touches_items(request) {
            return;
        }
        if let Some(known) = self.connections.iter_mut().find(|s| s.who == who) {
            known.lines.push(line);
            return;
        }
        let mut command = request.name().to_string();
        for key in request.keys() {
            command.push(' ');
            mcsim::trace::write_lossy(&mut command, key.as_bytes());
        }
        self.connections.push(Sent {
            who: who.to_string(),
            command,
            at,
            lines: vec![line],
        });
    }

    /// The connections that ran commands between the participants' first and last ones,
    /// each with the commands it sent in that span (later ones ran after the participants
    /// were through, as a final check does).
    pub fn unscheduled(&self) -> Vec<Unscheduled> {
        let Some(last) = self.last_in_turn else {
            return Vec::new();
        };
        (self.connections.iter())
            .filter(|s| s.lines[0] < last)
            .map(|s| Unscheduled {
                who: s.who.clone(),
                command: s.command.clone(),
                at: s.at,
                count: s.lines.iter().filter(|&&l| l < last).count(),
            })
            .collect()
    }
}

/// True if `request` reads or changes items (or all of them, as `flush_all` does).
fn touches_items(request: &Request) -> bool {
    !request.keys().is_empty() || matches!(request, Request::FlushAll { .. })
}
