//! One memcached command, as a client sends it.

use crate::memcache::{Exptime, Key};
use crate::protocol::Reply;
use crate::protocol::meta::{MetaCommand, MetaFlag};

/// Which storage command a [`Request::Store`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreMode {
    /// `set`: store unconditionally.
    Set,
    /// `add`: store only if the key is absent.
    Add,
    /// `replace`: store only if the key is present.
    Replace,
    /// `append`: add the data after the existing value.
    Append,
    /// `prepend`: add the data before the existing value.
    Prepend,
    /// `cas`: store only if the item's cas unique still equals this one.
    Cas(u64),
}

impl StoreMode {
    /// The command's name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            StoreMode::Set => "set",
            StoreMode::Add => "add",
            StoreMode::Replace => "replace",
            StoreMode::Append => "append",
            StoreMode::Prepend => "prepend",
            StoreMode::Cas(_) => "cas",
        }
    }
}

/// `incr` or `decr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArithOp {
    /// Add, wrapping at 2^64.
    Incr,
    /// Subtract, stopping at 0.
    Decr,
}

/// A command to one memcached server.
///
/// This is the unit the executor schedules, the simulated server applies, and the codec
/// turns into bytes, so the same request can be sent to the simulator and to a real server.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Request {
    /// `get k…` (or `gets k…` when `with_cas`).
    Get {
        /// Keys in order; repeats are answered twice.
        keys: Vec<Key>,
        /// `gets`: return cas uniques.
        with_cas: bool,
    },
    /// `gat exptime k…` (or `gats`).
    Gat {
        /// The new exptime for every hit.
        exptime: Exptime,
        /// Keys in order.
        keys: Vec<Key>,
        /// `gats`: return cas uniques.
        with_cas: bool,
    },
    /// `set`/`add`/`replace`/`append`/`prepend`/`cas`.
    Store {
        /// Which command.
        mode: StoreMode,
        /// The key.
        key: Key,
        /// Opaque client flags stored with the value.
        flags: u32,
        /// Expiration.
        exptime: Exptime,
        /// The value.
        data: Vec<u8>,
        /// Suppress the reply.
        noreply: bool,
    },
    /// `incr k delta` / `decr k delta`.
    Arith {
        /// Which one.
        op: ArithOp,
        /// The key.
        key: Key,
        /// The amount.
        delta: u64,
        /// Suppress the reply.
        noreply: bool,
    },
    /// `delete k`.
    Delete {
        /// The key.
        key: Key,
        /// Suppress the reply.
        noreply: bool,
    },
    /// `touch k exptime`.
    Touch {
        /// The key.
        key: Key,
        /// The new exptime.
        exptime: Exptime,
        /// Suppress the reply.
        noreply: bool,
    },
    /// `flush_all [delay]`.
    FlushAll {
        /// Seconds until the flush takes effect (an exptime: relative or absolute).
        delay: Option<i64>,
        /// Suppress the reply.
        noreply: bool,
    },
    /// A meta command (`mg`, `ms`, `md`, `ma`, `mn`).
    Meta {
        /// Which one.
        command: MetaCommand,
        /// The key (`mn` has none).
        key: Option<Key>,
        /// Flags in the order sent.
        flags: Vec<MetaFlag>,
        /// The data block of `ms`.
        data: Option<Vec<u8>>,
    },
    /// `stats`.
    Stats,
    /// `stats items`, `stats slabs` or `stats settings`.
    StatsGroup(StatsGroup),
    /// `stats reset`: the counters back to zero (not the items, bytes or connections).
    StatsReset,
    /// `version`.
    Version,
    /// `verbosity n`.
    Verbosity {
        /// Level.
        level: u32,
        /// Suppress the reply.
        noreply: bool,
    },
}

impl Request {
    /// The keys this request reads or writes (empty for server-wide commands).
    pub fn keys(&self) -> &[Key] {
        match self {
            Request::Get { keys, .. } | Request::Gat { keys, .. } => keys,
            Request::Store { key, .. }
            | Request::Arith { key, .. }
            | Request::Delete { key, .. }
            | Request::Touch { key, .. } => std::slice::from_ref(key),
            Request::Meta { key: Some(key), .. } => std::slice::from_ref(key),
            _ => &[],
        }
    }

    /// The command's name as sent on the wire.
    pub fn name(&self) -> &'static str {
        match self {
            Request::Get {
                with_cas: false, ..
            } => "get",
            Request::Get { with_cas: true, .. } => "gets",
            Request::Gat {
                with_cas: false, ..
            } => "gat",
            Request::Gat { with_cas: true, .. } => "gats",
            Request::Store { mode, .. } => mode.name(),
            Request::Arith {
                op: ArithOp::Incr, ..
            } => "incr",
            Request::Arith {
                op: ArithOp::Decr, ..
            } => "decr",
            Request::Delete { .. } => "delete",
            Request::Touch { .. } => "touch",
            Request::FlushAll { .. } => "flush_all",
            Request::Meta { command, .. } => command.name(),
            Request::Stats | Request::StatsGroup(_) | Request::StatsReset => "stats",
            Request::Version => "version",
            Request::Verbosity { .. } => "verbosity",
        }
    }

    /// True if the request cannot change server state: it commutes with other reads.
    ///
    /// `get` still moves the item in the LRU, which matters only where the server can
    /// evict; the exploration strategies account for that separately.
    pub fn is_read_only(&self) -> bool {
        match self {
            Request::Get { .. }
            | Request::Stats
            | Request::StatsGroup(_)
            | Request::Version
            | Request::Meta {
                command: MetaCommand::Debug,
                ..
            } => true,
            Request::Meta {
                command: MetaCommand::Get,
                flags,
                ..
            } => !flags.iter().any(|f| matches!(f.letter, b'N' | b'T' | b'R')),
            _ => false,
        }
    }

    /// True if its outcome reads the server's clock whatever the items it touches: a
    /// meta command (its flags may ask for TTLs and ages) or `flush_all`.
    pub fn reads_clock(&self) -> bool {
        matches!(self, Request::FlushAll { .. } | Request::Meta { .. })
    }

    /// True if, answered `reply`, it set an expiry from the clock: a store, touch or `gat`
    /// with a relative TTL that stored or touched something (an `add` on a live key
    /// does not).
    pub fn set_expiry(&self, reply: &Reply) -> bool {
        match self {
            Request::Store { exptime, .. }
            | Request::Touch { exptime, .. }
            | Request::Gat { exptime, .. } => {
                exptime.wire() != 0
                    && matches!(reply, Reply::Stored | Reply::Touched | Reply::Values(_))
            }
            _ => false,
        }
    }

    /// True if the client asked for no reply.
    pub fn is_noreply(&self) -> bool {
        match self {
            Request::Store { noreply, .. }
            | Request::Arith { noreply, .. }
            | Request::Delete { noreply, .. }
            | Request::Touch { noreply, .. }
            | Request::FlushAll { noreply, .. }
            | Request::Verbosity { noreply, .. } => *noreply,
            Request::Meta { flags, .. } => flags.iter().any(|f| f.letter == b'q'),
            _ => false,
        }
    }
}

/// A group of `stats` answered apart from the general counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatsGroup {
    /// `stats items`: per slab class, its items and LRU queues.
    Items,
    /// `stats slabs`: per slab class, its chunks and pages.
    Slabs,
    /// `stats settings`: the start-up settings.
    Settings,
}

impl StatsGroup {
    /// The group's name after `stats`.
    pub fn name(self) -> &'static str {
        match self {
            StatsGroup::Items => "items",
            StatsGroup::Slabs => "slabs",
            StatsGroup::Settings => "settings",
        }
    }
}

/// A request handed over: [`crate::Server::apply`] moves a storage command's bytes into
/// the new item.
impl From<Request> for std::borrow::Cow<'_, Request> {
    fn from(request: Request) -> Self {
        std::borrow::Cow::Owned(request)
    }
}

/// A request lent: [`crate::Server::apply`] copies a storage command's bytes.
impl<'r> From<&'r Request> for std::borrow::Cow<'r, Request> {
    fn from(request: &'r Request) -> Self {
        std::borrow::Cow::Borrowed(request)
    }
}
