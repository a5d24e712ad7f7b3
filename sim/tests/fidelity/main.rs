//! The simulated server against what memcached 1.6.18 answers (MEMCACHED.md §8 and §1–§5).
//!
//! Each test drives [`Server::apply`] with [`Request`]s at chosen virtual instants and
//! checks the exact replies. Unless a test says otherwise the server boots at time zero
//! with phase 0, so its tick is `62 + whole seconds`. Cases that depend on how bytes are
//! parsed (12, 14, and the `delete k 5` line of 15) are checked through the codec in
//! `sim/tests/codec.rs`; here only their request-level part is.

use std::time::Duration;

use mcsim::clock::VirtualTime;
use mcsim::memcache::{Exptime, Key, KeyError};
use mcsim::protocol::{
    ArithOp, MetaCode, MetaCommand, MetaFlag, MetaReply, Reply, Request, StoreMode, ValueEntry,
};
use mcsim::server::{MIB, Server, ServerConfig};

// ---------------------------------------------------------------------------------------
// Helpers

pub(crate) fn key(s: &str) -> Key {
    Key::new(s).unwrap()
}

pub(crate) fn at(ms: u64) -> VirtualTime {
    VirtualTime::from_millis(ms)
}

pub(crate) fn secs(s: u64) -> VirtualTime {
    VirtualTime::from_secs(s)
}

pub(crate) fn store(mode: StoreMode, k: &str, flags: u32, exptime: i64, data: &[u8]) -> Request {
    Request::Store {
        mode,
        key: key(k),
        flags,
        exptime: Exptime(exptime),
        data: data.to_vec(),
        noreply: false,
    }
}

pub(crate) fn set(k: &str, flags: u32, exptime: i64, data: &[u8]) -> Request {
    store(StoreMode::Set, k, flags, exptime, data)
}

pub(crate) fn get(keys: &[&str]) -> Request {
    Request::Get {
        keys: keys.iter().map(|k| key(k)).collect(),
        with_cas: false,
    }
}

pub(crate) fn gets(k: &str) -> Request {
    Request::Get {
        keys: vec![key(k)],
        with_cas: true,
    }
}

pub(crate) fn arith(op: ArithOp, k: &str, delta: u64) -> Request {
    Request::Arith {
        op,
        key: key(k),
        delta,
        noreply: false,
    }
}

pub(crate) fn delete(k: &str) -> Request {
    Request::Delete {
        key: key(k),
        noreply: false,
    }
}

pub(crate) fn touch(k: &str, exptime: i64) -> Request {
    Request::Touch {
        key: key(k),
        exptime: Exptime(exptime),
        noreply: false,
    }
}

pub(crate) fn flush_all(delay: Option<i64>) -> Request {
    Request::FlushAll {
        delay,
        noreply: false,
    }
}

pub(crate) fn meta(command: MetaCommand, k: &str, flags: &str, data: Option<&[u8]>) -> Request {
    Request::Meta {
        command,
        key: Some(key(k)),
        flags: flags
            .split_whitespace()
            .map(|w| MetaFlag::parse(w.as_bytes()))
            .collect(),
        data: data.map(<[u8]>::to_vec),
    }
}

pub(crate) fn hit(k: &str, flags: u32, data: &[u8]) -> ValueEntry {
    ValueEntry {
        key: mcsim::Key::new(k).unwrap(),
        flags,
        data: data.to_vec(),
        cas: None,
    }
}

/// The value of a single-key `get`, or `None` on a miss.
pub(crate) fn value(server: &mut Server, k: &str, now: VirtualTime) -> Option<Vec<u8>> {
    match server.apply(get(&[k]), now) {
        Reply::Values(v) if v.is_empty() => None,
        Reply::Values(mut v) => Some(v.remove(0).data),
        other => panic!("get {k}: {other:?}"),
    }
}

/// The cas unique `gets` returns.
pub(crate) fn cas_of(server: &mut Server, k: &str, now: VirtualTime) -> u64 {
    match server.apply(gets(k), now) {
        Reply::Values(v) if v.len() == 1 => v[0].cas.unwrap(),
        other => panic!("gets {k}: {other:?}"),
    }
}

/// The remaining TTL `mg k t` reports (-1: never).
pub(crate) fn ttl_of(server: &mut Server, k: &str, now: VirtualTime) -> i64 {
    match server.apply(meta(MetaCommand::Get, k, "t", None), now) {
        Reply::Meta(m) => m.flag(b't').unwrap().parse().unwrap(),
        other => panic!("mg {k} t: {other:?}"),
    }
}

pub(crate) fn meta_reply(reply: Reply) -> MetaReply {
    match reply {
        Reply::Meta(m) => m,
        other => panic!("not a meta reply: {other:?}"),
    }
}

pub(crate) fn server() -> Server {
    Server::with_defaults()
}

mod cases;
mod clock;

#[allow(unused_imports)]
use cases::*;
#[allow(unused_imports)]
use clock::*;
