//! The server side of the text protocol: what memcached 1.6.18 makes of the bytes a
//! client sends, including every malformed case a client can observe.
//!
//! [`parse_command`] looks at the start of the input and frames one command line. Lines
//! end in `\n`; one `\r` before it is dropped when the line has at least one other byte;
//! the line is cut at its first NUL byte. Tokens are split on spaces. A line that is not
//! complete after 2048 bytes closes the connection, unless it starts with `get ` or
//! `gets ` (after at most 100 spaces).
//!
//! The result is a [`Command`]: a [`Request`] to execute, the head of a storage command
//! whose data block follows ([`StoreHead`]), a retrieval that fails on an over-long key,
//! or an answer memcached gives without executing anything (argument errors, with the data block to discard when memcached
//! discards it). A storage command whose key or numbers are malformed is answered at once
//! and its data block is *not* discarded: the connection reads it as the next command
//! line, exactly as memcached does.
//!
//! [`read_request`] is the whole-request convenience on top: it waits for the data block
//! of a storage command and only returns well-formed requests.

use crate::codec::tokens::{Tokens, tokenize};
use crate::codec::write_reply::reply_bytes;
use crate::memcache::{Exptime, Key, MAX_KEY_LEN};
use crate::protocol::meta_flags::{self, BAD_FORMAT};
use crate::protocol::number::parse_i32;
use crate::protocol::{ArithOp, MetaCommand, MetaFlag, Reply, Request, StatsGroup, StoreMode};

mod commands;
mod meta;
#[cfg(test)]
mod tests;

use commands::{arith, delete, flush_all, retrieval, stats, touch, update, verbosity};
use meta::{meta, meta_set};

/// A line this long without a newline closes the connection (except for `get`/`gets`).
pub const MAX_PENDING_LINE: usize = 2048;

/// The largest data length a storage command may announce (`INT_MAX - 2`).
pub const MAX_DATA_LEN: i32 = i32::MAX - 2;

/// Meta commands accept at most this many tokens (counting memcached's terminal token).
const META_MAX_TOKENS: usize = 20;

/// What the start of the input holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// No complete line yet: wait for more bytes.
    Incomplete,
    /// More than 2048 bytes without a newline: memcached drops the connection.
    Close,
    /// One command line.
    Line {
        /// Bytes of the line, its line end included.
        consumed: usize,
        /// What the line asks for.
        command: Command,
    },
}

/// What one command line asks of the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// A request without a data block.
    Execute(Request),
    /// A storage command (`set` … `cas`, `ms`): `len` data bytes and `\r\n` follow.
    Store(StoreHead),
    /// A retrieval with a key over 250 bytes: memcached still fetches (or touches) the keys
    /// before it, then discards every reply of the connection not yet written, this
    /// command's included, and answers `answer`.
    FailedRetrieval {
        /// The keys before the bad one, if any: they run for their side effects.
        request: Option<Request>,
        /// What the client sees.
        answer: Vec<u8>,
    },
    /// memcached answers without executing anything.
    Answer {
        /// The reply line(s).
        bytes: Vec<u8>,
        /// The command asked for no reply: memcached suppresses even its errors.
        noreply: bool,
        /// Bytes memcached then reads and discards (a rejected `ms` data block).
        swallow: usize,
    },
    /// `quit`: close the connection after writing what is pending.
    Quit,
    /// The connection is closed at once (an HTTP request line).
    Close,
    /// Valid memcached syntax this model does not cover (e.g. `stats slabs`, `lru_crawler`,
    /// a key holding a carriage return).
    Unsupported {
        /// What it was.
        what: String,
        /// Bytes to discard after the line (a data block).
        swallow: usize,
    },
}

/// The head of a storage command, read before its data block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreHead {
    /// Which command.
    pub target: StoreTarget,
    /// The data length the command announced (the block is this plus `\r\n`).
    pub len: usize,
}

/// A classic storage command or a meta set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreTarget {
    /// `set`/`add`/`replace`/`append`/`prepend`/`cas`.
    Classic {
        /// Which one.
        mode: StoreMode,
        /// The key.
        key: Key,
        /// Client flags.
        flags: u32,
        /// Exptime as sent.
        exptime: Exptime,
        /// `noreply` was given.
        noreply: bool,
    },
    /// `ms key len flags…`.
    Meta {
        /// The key.
        key: Key,
        /// The flags in order.
        flags: Vec<MetaFlag>,
        /// The client flags its `F` flag sets.
        client_flags: u32,
    },
}

impl StoreHead {
    /// The key.
    pub fn key(&self) -> &Key {
        match &self.target {
            StoreTarget::Classic { key, .. } | StoreTarget::Meta { key, .. } => key,
        }
    }

    /// The client flags the new item would carry (they count towards its size).
    pub fn client_flags(&self) -> u32 {
        match &self.target {
            StoreTarget::Classic { flags, .. } => *flags,
            StoreTarget::Meta { client_flags, .. } => *client_flags,
        }
    }

    /// True if memcached would suppress error replies (classic `noreply`; a meta set
    /// always reports its errors).
    pub fn noreply(&self) -> bool {
        matches!(self.target, StoreTarget::Classic { noreply: true, .. })
    }

    /// True if a failed allocation removes the key's old value (`set`, every `ms`).
    pub fn unlinks_on_failure(&self) -> bool {
        match &self.target {
            StoreTarget::Classic { mode, .. } => *mode == StoreMode::Set,
            StoreTarget::Meta { .. } => true,
        }
    }

    /// The request, given the data block without its `\r\n`.
    pub fn into_request(self, data: Vec<u8>) -> Request {
        match self.target {
            StoreTarget::Classic {
                mode,
                key,
                flags,
                exptime,
                noreply,
            } => Request::Store {
                mode,
                key,
                flags,
                exptime,
                data,
                noreply,
            },
            StoreTarget::Meta { key, flags, .. } => Request::Meta {
                command: MetaCommand::Set,
                key: Some(key),
                flags,
                data: Some(data),
            },
        }
    }
}

/// Frames and parses the command line at the start of `buf`.
pub fn parse_command(buf: &[u8]) -> Parsed {
    let Some(newline) = buf.iter().position(|&b| b == b'\n') else {
        if buf.len() > MAX_PENDING_LINE {
            let spaces = buf.iter().take_while(|&&b| b == b' ').count();
            let start = &buf[spaces..];
            if spaces > 100 || !(start.starts_with(b"get ") || start.starts_with(b"gets ")) {
                return Parsed::Close;
            }
        }
        return Parsed::Incomplete;
    };
    let mut end = newline;
    if newline > 1 && buf[newline - 1] == b'\r' {
        end -= 1;
    }
    let mut line = &buf[..end];
    if let Some(nul) = line.iter().position(|&b| b == 0) {
        line = &line[..nul];
    }
    Parsed::Line {
        consumed: newline + 1,
        command: parse_line(line),
    }
}

/// Why [`read_request`] found no well-formed request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    /// memcached would answer these bytes instead of executing a request.
    #[error("rejected: {}", String::from_utf8_lossy(.0).trim_end())]
    Rejected(Vec<u8>),
    /// The data block did not end in `\r\n`.
    #[error("bad data chunk")]
    BadDataChunk,
    /// The connection would be closed (`quit`, an overlong line, an HTTP request).
    #[error("the connection closes")]
    Closed,
    /// A command outside the model.
    #[error("unsupported: {0}")]
    Unsupported(String),
}

/// Reads one whole, well-formed request from the start of `buf`: `Ok(None)` until all its
/// bytes (a storage command's data block included) are there, then the request and the
/// number of bytes it used.
pub fn read_request(buf: &[u8]) -> Result<Option<(Request, usize)>, RequestError> {
    let (consumed, command) = match parse_command(buf) {
        Parsed::Incomplete => return Ok(None),
        Parsed::Close => return Err(RequestError::Closed),
        Parsed::Line { consumed, command } => (consumed, command),
    };
    match command {
        Command::Execute(request) => Ok(Some((request, consumed))),
        Command::Store(head) => {
            let need = head.len + 2;
            let Some(block) = buf.get(consumed..consumed + need) else {
                return Ok(None);
            };
            if !block.ends_with(b"\r\n") {
                return Err(RequestError::BadDataChunk);
            }
            let data = block[..head.len].to_vec();
            Ok(Some((head.into_request(data), consumed + need)))
        }
        Command::FailedRetrieval { answer, .. } | Command::Answer { bytes: answer, .. } => {
            Err(RequestError::Rejected(answer))
        }
        Command::Quit | Command::Close => Err(RequestError::Closed),
        Command::Unsupported { what, .. } => Err(RequestError::Unsupported(what)),
    }
}

fn answer(reply: Reply, noreply: bool) -> Command {
    Command::Answer {
        bytes: reply_bytes(&reply),
        noreply,
        swallow: 0,
    }
}

fn error() -> Command {
    answer(Reply::Error, false)
}

fn client_error(msg: &str, noreply: bool) -> Command {
    answer(Reply::ClientError(msg.to_string()), noreply)
}

fn unsupported(what: impl Into<String>) -> Command {
    Command::Unsupported {
        what: what.into(),
        swallow: 0,
    }
}

/// A key the model can hold, or the command that stands for one it cannot.
fn key(word: &[u8]) -> Result<Key, Command> {
    Key::new(word).map_err(|e| unsupported(format!("key {:?}: {e}", lossy(word))))
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Parses one command line (line end and anything after a NUL already removed).
pub fn parse_line(line: &[u8]) -> Command {
    let t = tokenize(line);
    let n = t.count();
    if n < 2 || t.word(0).len() < 2 {
        return error();
    }
    let cmd = t.word(0);
    if cmd[0] == b'm' && cmd.len() == 2 {
        return match cmd[1] {
            b'g' => meta(&t, MetaCommand::Get),
            b's' => meta_set(&t),
            b'd' => meta(&t, MetaCommand::Delete),
            b'a' => meta(&t, MetaCommand::Arithmetic),
            b'n' => Command::Execute(Request::Meta {
                command: MetaCommand::Noop,
                key: None,
                flags: vec![],
                data: None,
            }),
            b'e' => {
                if n < 3 || t.word(1).len() > MAX_KEY_LEN {
                    return client_error(BAD_FORMAT, false);
                }
                // memcached looks only at the token right after the key, and only for `b`.
                let flags = if n >= 4 && t.word(2) == b"b" {
                    vec![MetaFlag::bare(b'b')]
                } else {
                    vec![]
                };
                match key(t.word(1)) {
                    Ok(key) => Command::Execute(Request::Meta {
                        command: MetaCommand::Debug,
                        key: Some(key),
                        flags,
                        data: None,
                    }),
                    Err(c) => c,
                }
            }
            _ => error(),
        };
    }
    let want = |ok: bool, then: &dyn Fn() -> Command| if ok { then() } else { error() };
    match cmd[0] {
        b'g' => {
            if n < 3 {
                return error();
            }
            match cmd {
                b"get" => retrieval(&t, false, false),
                b"gets" => retrieval(&t, true, false),
                b"gat" => retrieval(&t, false, true),
                b"gats" => retrieval(&t, true, true),
                _ => error(),
            }
        }
        b's' => match cmd {
            b"set" => want(n == 6 || n == 7, &|| update(&t, StoreMode::Set, false)),
            b"stats" => stats(&t),
            b"shutdown" => Command::Answer {
                bytes: b"ERROR: shutdown not enabled\r\n".to_vec(),
                noreply: false,
                swallow: 0,
            },
            b"slabs" => unsupported("slabs"),
            _ => error(),
        },
        b'a' => match cmd {
            b"add" => want(n == 6 || n == 7, &|| update(&t, StoreMode::Add, false)),
            b"append" => want(n == 6 || n == 7, &|| update(&t, StoreMode::Append, false)),
            _ => error(),
        },
        b'c' => match cmd {
            b"cas" => want(n == 7 || n == 8, &|| update(&t, StoreMode::Cas(0), true)),
            b"cache_memlimit" => want(n == 3 || n == 4, &|| unsupported("cache_memlimit")),
            _ => error(),
        },
        b'i' => match cmd {
            b"incr" => want(n == 4 || n == 5, &|| arith(&t, ArithOp::Incr)),
            _ => error(),
        },
        b'd' => match cmd {
            b"delete" => want((3..=5).contains(&n), &|| delete(&t)),
            b"decr" => want(n == 4 || n == 5, &|| arith(&t, ArithOp::Decr)),
            _ => error(),
        },
        b't' => match cmd {
            b"touch" => want(n == 4 || n == 5, &|| touch(&t)),
            _ => error(),
        },
        _ => match cmd {
            b"replace" => want(n == 6 || n == 7, &|| update(&t, StoreMode::Replace, false)),
            b"prepend" => want(n == 6 || n == 7, &|| update(&t, StoreMode::Prepend, false)),
            b"bget" => want(n >= 3, &|| retrieval(&t, false, false)),
            b"flush_all" => want((2..=4).contains(&n), &|| flush_all(&t)),
            b"version" => Command::Execute(Request::Version),
            b"quit" => Command::Quit,
            b"lru_crawler" | b"watch" => unsupported(lossy(cmd)),
            b"verbosity" => want(n == 3 || n == 4, &|| verbosity(&t)),
            b"lru" => want(n >= 3, &|| unsupported("lru")),
            _ if t.last().starts_with(b"HTTP/") => Command::Close,
            _ => error(),
        },
    }
}
