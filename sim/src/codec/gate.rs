//! What a connection's owner does around each command of a [`Session`](super::Session):
//! `mcsim serve` takes the world lock and its lockstep turn before a command, injects
//! faults, and writes the trace after it, while the session alone decides where commands
//! begin and end, what it swallows and when replies are written, as memcached does.

use crate::clock::VirtualTime;
use crate::memcache::Key;
use crate::protocol::{MetaCommand, Reply, Request};
use crate::server::Server;

/// Whether the next command may run.
pub enum Admit<'a> {
    /// Run it on this server at this time.
    Run(&'a mut Server, VirtualTime),
    /// Close the connection instead (the command does not run).
    Close,
}

/// What a command was, once it ran.
pub enum Ran<'a> {
    /// A request the server executed, and its reply ([`Reply::Silent`] sends nothing).
    /// Its bytes are written after the gate has seen it, so a large reply is copied out
    /// without the gate's owner waiting.
    Request(&'a Request, &'a Reply),
    /// A line answered without executing a request (an error, an unsupported command,
    /// `quit`, a retrieval failed on a long key), or a data block rejected: what was sent,
    /// and the bytes of the answer.
    Line(&'a [u8], &'a [u8]),
}

/// What a control line asks of the connection.
pub enum Control {
    /// Write these bytes (with the other pending replies).
    Reply(Vec<u8>),
    /// Close the connection.
    Close,
}

/// A command about to run, as its gate sees it: the keys it names and whether it could
/// change what another connection observes.
#[derive(Debug, Clone, Copy)]
pub struct Pending<'a> {
    keys: Named<'a>,
    /// The command changes nothing another connection could observe ([`inert`]; `quit`;
    /// a binary QUIT, QUITQ, NOOP or VERSION).
    pub inert: bool,
    /// It cannot change what a later command observes
    /// ([`Request::is_read_only`](crate::protocol::Request::is_read_only)): it commutes
    /// with other such commands.
    pub read_only: bool,
}

/// The keys of a [`Pending`] command, as the session has them.
#[derive(Debug, Clone, Copy)]
enum Named<'a> {
    Keys(&'a [Key]),
    Bytes(&'a [u8]),
}

impl<'a> Pending<'a> {
    /// A command naming `keys` (none for a server-wide one).
    pub fn of(keys: &'a [Key], inert: bool) -> Pending<'a> {
        Pending {
            keys: Named::Keys(keys),
            inert,
            read_only: false,
        }
    }

    /// A command naming one key given as bytes (a binary packet's; empty: none).
    pub fn of_bytes(key: &'a [u8], inert: bool) -> Pending<'a> {
        Pending {
            keys: Named::Bytes(key),
            inert,
            read_only: false,
        }
    }

    /// The same command, said to change nothing a later command observes when
    /// `read_only`.
    pub fn read_only(self, read_only: bool) -> Pending<'a> {
        Pending { read_only, ..self }
    }

    /// The keys it names, in order.
    pub fn keys(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        let (keys, bytes): (&'a [Key], Option<&'a [u8]>) = match self.keys {
            Named::Keys(keys) => (keys, None),
            Named::Bytes(b) => (&[], Some(b).filter(|b| !b.is_empty())),
        };
        keys.iter().map(Key::as_bytes).chain(bytes)
    }
}

/// The owner's part in each command of a session.
pub trait Gate {
    /// A whole command line, before it is parsed: `Some` if the owner takes it as one of
    /// its own (a control command), which the server never sees.
    fn control(&mut self, _line: &[u8]) -> Option<Control> {
        None
    }

    /// A read of one key, in whatever form the client sent it (`get`, `gets`, `gat`,
    /// `gats`, `mg`, a binary GET or GAT of any kind), before it runs: `true` if the owner
    /// takes the key as the connection's name (`mcsim serve --name-key`). The server never
    /// sees that read; the session answers it as a read of a key that is not there, in
    /// the form the client asked for (`END`, `EN`, a binary miss, nothing for a quiet one).
    fn names(&mut self, _key: &[u8]) -> bool {
        false
    }

    /// The largest item the server stores (`-I`): a storage command whose item cannot
    /// fit is answered at once and its data block discarded unread.
    fn item_size_max(&mut self) -> u32;

    /// Right before `command` runs: the server and the time to run it at. Every `Run` is
    /// followed by one [`ran`](Gate::ran).
    fn admit(&mut self, command: Pending<'_>) -> Admit<'_>;

    /// Right after: what ran and what it answered. `false` drops the answer (the command
    /// stays applied).
    fn ran(&mut self, what: Ran<'_>) -> bool;
}

/// The gate of an in-process session: one server, one instant, every reply kept.
pub(crate) struct Fixed<'a> {
    pub(crate) server: &'a mut Server,
    pub(crate) now: VirtualTime,
}

impl Gate for Fixed<'_> {
    fn item_size_max(&mut self) -> u32 {
        self.server.config().item_size_max
    }

    fn admit(&mut self, _command: Pending<'_>) -> Admit<'_> {
        Admit::Run(self.server, self.now)
    }

    fn ran(&mut self, _what: Ran<'_>) -> bool {
        true
    }
}

/// True if `request` changes nothing another connection could observe: `version`,
/// `stats` (of any group), `verbosity`, a meta no-op. (`stats reset` changes what a later
/// `stats` says; `quit` is no request, and is inert too.)
pub fn inert(request: &Request) -> bool {
    matches!(
        request,
        Request::Version
            | Request::Stats
            | Request::StatsGroup(_)
            | Request::Verbosity { .. }
            | Request::Meta {
                command: MetaCommand::Noop,
                ..
            }
    )
}
