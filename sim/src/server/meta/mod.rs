//! Meta commands (`mg`, `ms`, `md`, `ma`, `mn`) as memcached 1.6.18 answers them.
//!
//! Every command first checks its flags the way 1.6.18 does: at most 17 flags (16 for
//! `ms`, whose data length takes a token), each letter once, only known letters, numeric
//! tokens read like C's `strtol`/`strtoull`. Then it runs against the item table and
//! writes its return flags in the order the request named them; `mg` appends `Z`, `X`
//! and `W` after them. The `q` flag hides only the nominal outcome: an `mg` miss (`EN`),
//! a stored `ms`, a deleting or invalidating `md`, and an `ma` that changed an existing
//! counter. Everything else, errors included, is answered; a hidden reply is
//! [`Reply::Silent`].
//!
//! A base64 key (`b`) may decode to any bytes, spaces and NULs included
//! ([`Key::binary`]); the item remembers it, and `me` and the `k` flag encode it again.
//! Known limits: an `ma` whose result grows the number re-allocates the item, and the
//! `T` of that request then changes only the old copy (as in 1.6.18); `ma` rewrites in
//! place whenever the digits fit, because no other reply holds a reference to the item
//! here (a pipelined read on the real server can force the re-allocation path).

use crate::clock::VirtualTime;
use crate::memcache::{Exptime, Key};
use crate::protocol::meta_flags::{self, BAD_FORMAT, MAX_OPAQUE_LEN as MAX_OPAQUE};
use crate::protocol::number::{parse_i32, parse_u64};
use crate::protocol::{MetaCode, MetaCommand, MetaFlag, MetaReply, Reply};
use crate::server::arith;
use crate::server::items::Item;
use crate::server::{AllocError, Hit, NON_NUMERIC, Server};

mod base64;
mod debug;
mod ma;
mod md;
mod mg;
mod ms;
#[cfg(test)]
mod tests;

use base64::{base64_decode, base64_encode};
use debug::debug;
use ma::arithmetic;
use md::delete;
use mg::get;
use ms::set;

/// memcached's limit on tokens in a meta command line (command, key, flags and the empty
/// terminal token).
const MAX_TOKENS: usize = 20;

/// Executes one meta command.
pub(super) fn execute(
    server: &mut Server,
    command: MetaCommand,
    key: Option<&Key>,
    flags: &[MetaFlag],
    data: Option<&[u8]>,
    now: VirtualTime,
) -> Reply {
    let key = match (command, key) {
        (MetaCommand::Noop, _) => return meta(MetaCode::Noop, vec![], None),
        (_, Some(key)) => key,
        // memcached wants at least a key token after the command.
        (_, None) => return Reply::Error,
    };
    match command {
        MetaCommand::Get => get(server, key, flags, now),
        MetaCommand::Set => set(server, key, flags, data, now),
        MetaCommand::Delete => delete(server, key, flags, now),
        MetaCommand::Arithmetic => arithmetic(server, key, flags, now),
        MetaCommand::Noop => meta(MetaCode::Noop, vec![], None),
        MetaCommand::Debug => debug(server, key, flags, now),
    }
}

fn meta(code: MetaCode, flags: Vec<MetaFlag>, value: Option<Vec<u8>>) -> Reply {
    Reply::Meta(MetaReply { code, flags, value })
}

fn client_error(message: &str) -> Reply {
    Reply::ClientError(message.to_string())
}

/// What the flags of one meta command ask for, after 1.6.18's flag pre-pass.
#[derive(Debug)]
struct Options {
    /// The key to act on: decoded when `b` was given.
    key: Key,
    key_binary: bool,
    no_update: bool,
    /// The read must not bump the item before the reply is built (`N T R l h`).
    locked: bool,
    vivify: bool,
    value: bool,
    set_stale: bool,
    no_reply: bool,
    has_cas: bool,
    new_ttl: bool,
    mode: Option<u8>,
    exptime: u32,
    autoviv_exptime: u32,
    recache_time: u32,
    client_flags: u32,
    req_cas: u64,
    delta: u64,
    initial: u64,
}

/// A flag's argument, empty when it has none.
fn token(f: &MetaFlag) -> &[u8] {
    f.token_bytes()
}

/// memcached's `_meta_flag_preparse`: the shared checks
/// ([`crate::protocol::meta_flags::preparse`]), then what the flags ask for. On failure,
/// the `CLIENT_ERROR` text it would report (`mg` and `ms` show it; `md` and `ma` replace
/// it with their own).
fn preparse(
    server: &Server,
    key: &Key,
    flags: &[MetaFlag],
    now: VirtualTime,
) -> Result<Options, &'static str> {
    // A decoded key the simulator cannot represent is refused like one that does not
    // decode.
    let decoded = || base64_decode(key.as_bytes()).and_then(|k| Key::binary(k).ok());
    let checked = meta_flags::preparse(flags.iter().map(|f| (f.letter, token(f))), || {
        decoded().is_some()
    })?;
    let mut of = Options {
        key: key.clone(),
        key_binary: false,
        no_update: false,
        locked: false,
        vivify: false,
        value: false,
        set_stale: false,
        no_reply: false,
        has_cas: false,
        new_ttl: false,
        mode: checked.mode,
        exptime: 0,
        autoviv_exptime: 0,
        recache_time: 0,
        client_flags: checked.client_flags,
        req_cas: 0,
        delta: 1,
        initial: 0,
    };
    // Every argument below passed the checks: the defaults are never taken.
    let ttl = |f: &MetaFlag| {
        let t = parse_i32(token(f)).unwrap_or_default();
        server.expiry_tick(Exptime(i64::from(t)), now)
    };
    let number = |f: &MetaFlag| parse_u64(token(f)).unwrap_or_default();
    for f in flags {
        match f.letter {
            b'b' => {
                of.key = decoded().unwrap_or_else(|| key.clone());
                of.key_binary = true;
            }
            b'N' => {
                of.locked = true;
                of.vivify = true;
                of.autoviv_exptime = ttl(f);
            }
            b'T' => {
                of.locked = true;
                of.exptime = ttl(f);
                of.new_ttl = true;
            }
            b'R' => {
                of.locked = true;
                of.recache_time = ttl(f);
            }
            b'l' | b'h' => of.locked = true,
            b'v' => of.value = true,
            b'u' => of.no_update = true,
            b'q' => of.no_reply = true,
            b'C' => {
                of.req_cas = number(f);
                of.has_cas = true;
            }
            b'J' => of.initial = number(f),
            b'D' => of.delta = number(f),
            b'I' => of.set_stale = true,
            _ => {}
        }
    }
    Ok(of)
}

/// True if an `O` flag is longer than memcached copies back.
fn opaque_too_long(flag: &MetaFlag) -> bool {
    1 + flag.token_bytes().len() > MAX_OPAQUE
}

/// The `k` return flag, and `b` after it for a binary key.
fn push_key(out: &mut Vec<MetaFlag>, key: &Key, binary: bool) {
    if binary {
        out.push(MetaFlag::with(b'k', base64_encode(key.as_bytes())));
        out.push(MetaFlag::bare(b'b'));
    } else {
        out.push(MetaFlag::with_bytes(b'k', key.as_bytes()));
    }
}

/// The `t` return flag: seconds left, `-1` for never (unsigned arithmetic, as memcached).
fn ttl_flag(exptime: u32, tick: u32) -> MetaFlag {
    if exptime == 0 {
        MetaFlag::with(b't', "-1")
    } else {
        MetaFlag::with(b't', exptime.wrapping_sub(tick))
    }
}

/// The `O` and `k` flags of a reply without an item, in request order.
fn opaque_and_key(flags: &[MetaFlag], of: &Options) -> Result<Vec<MetaFlag>, Reply> {
    let mut out = Vec::new();
    for f in flags {
        match f.letter {
            b'O' if opaque_too_long(f) => return Err(client_error("opaque token too long")),
            b'O' => out.push(f.clone()),
            b'k' => push_key(&mut out, &of.key, of.key_binary),
            _ => {}
        }
    }
    Ok(out)
}
