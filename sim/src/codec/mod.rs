//! The memcached text protocol, both directions.
//!
//! Client side: [`write_request`] turns a [`Request`](crate::protocol::Request) into the
//! bytes a client sends, [`read_reply`] reads the server's answer back into a
//! [`Reply`](crate::protocol::Reply), incrementally. Server side: [`parse_command`] reads
//! what a client sent the way memcached 1.6.18 does, malformed input included,
//! [`write_reply`] writes replies byte for byte as memcached does, and [`Session`] ties
//! them to a simulated [`Server`](crate::server::Server) as one connection.

pub mod binary;
pub mod gate;
mod read_reply;
mod read_request;
mod session;
pub mod tokens;
mod write_reply;
mod write_request;

pub use read_reply::read_reply;
pub use read_request::{
    Command, MAX_DATA_LEN, MAX_PENDING_LINE, Parsed, RequestError, StoreHead, StoreTarget,
    parse_command, parse_line, read_request,
};
pub use session::{Session, UNSUPPORTED};
pub use write_reply::{reply_bytes, write_reply};
pub use write_request::{request_bytes, write_request};
