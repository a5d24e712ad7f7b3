//! The text-protocol codec: algebraic round trips (quickcheck) and byte-level cases.
//!
//! - `write_request` then `read_request` gives back the same request, and no proper prefix
//!   of its bytes is taken for a complete request.
//! - `write_reply` then `read_reply` (for a request the reply can answer) gives back the
//!   same reply, and no proper prefix is complete.
//! - A `Session` answers a stream of requests the same however the bytes are split.
//! - MEMCACHED.md §8 cases 12 and 14, and the other malformed-input rules, byte for byte.

use mcsim::codec::{Session, read_reply, read_request, reply_bytes, request_bytes};
use mcsim::protocol::{
    ArithOp, MetaCode, MetaCommand, MetaFlag, MetaReply, Reply, Request, StoreMode, ValueEntry,
};
use mcsim::{Exptime, Key, Server, ServerConfig, VirtualTime};
use quickcheck::{Arbitrary, Gen, QuickCheck};

mod bytes;
mod generators;
mod properties;

#[allow(unused_imports)]
use bytes::*;
#[allow(unused_imports)]
use generators::*;
#[allow(unused_imports)]
use properties::*;
