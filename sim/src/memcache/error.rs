//! Errors a memcached call can return, keeping memcached's own distinctions.

/// A transport fault: the call may or may not have reached the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum Transport {
    /// No reply arrived in time. The server may have applied the command: the outcome is
    /// unknown to the client.
    #[error("timed out; the command may or may not have been applied")]
    TimedOut,
    /// The server is down or refused the connection; the command was not applied.
    #[error("server down")]
    ServerDown,
}

/// Why a memcached call did not succeed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, thiserror::Error)]
pub enum McError {
    /// `NOT_FOUND`: the key is missing (incr, decr, touch, cas, delete).
    #[error("not found")]
    NotFound,
    /// `NOT_STORED`: the condition of add/replace/append/prepend failed.
    #[error("not stored")]
    NotStored,
    /// `EXISTS`: the item changed since the cas unique was read.
    #[error("exists (cas mismatch)")]
    Exists,
    /// `CLIENT_ERROR …`
    #[error("client error: {0}")]
    Client(String),
    /// `SERVER_ERROR …` (e.g. object too large, out of memory).
    #[error("server error: {0}")]
    Server(String),
    /// `ERROR`: the server did not know the command.
    #[error("unknown command")]
    UnknownCommand,
    /// A reply this call cannot have: a protocol bug in the backend.
    #[error("unexpected reply: {0}")]
    Unexpected(String),
    /// The transport failed (timeout with unknown outcome, server down).
    #[error(transparent)]
    Transport(#[from] Transport),
}

impl McError {
    /// True if the command may have been applied although the caller saw an error.
    pub fn outcome_unknown(&self) -> bool {
        matches!(self, McError::Transport(Transport::TimedOut))
    }
}
