//! What a memcached server answers.

use crate::memcache::Key;
use crate::protocol::meta::{MetaCode, MetaFlag};

/// One `VALUE` line of a retrieval reply.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ValueEntry {
    /// The key as stored.
    pub key: Key,
    /// Client flags.
    pub flags: u32,
    /// The value's bytes.
    pub data: Vec<u8>,
    /// The cas unique (`gets`/`gats` only).
    pub cas: Option<u64>,
}

/// A meta command's reply: a two-letter code, return flags, and for `VA` a value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MetaReply {
    /// `VA`, `HD`, `EN`, `NS`, `EX`, `NF` or `MN`.
    pub code: MetaCode,
    /// Return flags in the order the server wrote them.
    pub flags: Vec<MetaFlag>,
    /// The value (`VA` only).
    pub value: Option<Vec<u8>>,
}

impl MetaReply {
    /// The token of the first return flag with this letter, if the flag is present and
    /// its token is text.
    pub fn flag(&self, letter: u8) -> Option<&str> {
        self.flags
            .iter()
            .find(|f| f.letter == letter)
            .and_then(|f| std::str::from_utf8(f.token_bytes()).ok())
    }

    /// True if the reply carries this flag (e.g. `W`, `Z`, `X`).
    pub fn has(&self, letter: u8) -> bool {
        self.flags.iter().any(|f| f.letter == letter)
    }
}

/// A server's answer to one command.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Reply {
    /// `STORED`
    Stored,
    /// `NOT_STORED`
    NotStored,
    /// `EXISTS`
    Exists,
    /// `NOT_FOUND`
    NotFound,
    /// `DELETED`
    Deleted,
    /// `TOUCHED`
    Touched,
    /// `OK`
    Ok,
    /// `RESET` (after `stats reset`).
    Reset,
    /// `VALUE …` lines then `END`; hits only, in request order.
    Values(Vec<ValueEntry>),
    /// The new value after `incr`/`decr`.
    Number(u64),
    /// `ERROR`: unknown command.
    Error,
    /// `CLIENT_ERROR message`
    ClientError(String),
    /// `SERVER_ERROR message`
    ServerError(String),
    /// `VERSION x`
    Version(String),
    /// `STAT name value` lines then `END`.
    Stats(Vec<(String, String)>),
    /// A meta command's reply.
    Meta(MetaReply),
    /// The `ME key exp=… la=… cas=… fetch=… cls=… size=…` line of a meta debug hit,
    /// without its line end (a miss is [`MetaCode::Miss`]).
    Debug(Vec<u8>),
    /// Nothing: the request asked for no reply.
    Silent,
}

impl Reply {
    /// The value of one `STAT name value` line of a `stats` reply; `None` for another
    /// reply or a name it does not hold.
    pub fn stat(&self, name: &str) -> Option<&str> {
        match self {
            Reply::Stats(lines) => lines
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str()),
            _ => None,
        }
    }
}
