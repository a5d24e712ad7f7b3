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
//! Known limits: a base64 key (`b`) whose decoded bytes hold a space, CR, LF or NUL cannot
//! be represented by [`Key`] and is answered `CLIENT_ERROR error decoding key`; 1.6.18
//! would store it. An `ma` whose result grows the number re-allocates the item, and the
//! `T` of that request then changes only the old copy (as in 1.6.18); `ma` rewrites in
//! place whenever the digits fit, because no other reply holds a reference to the item
//! here (a pipelined read on the real server can force the re-allocation path).

use crate::clock::VirtualTime;
use crate::memcache::{Exptime, Key};
use crate::protocol::number::{is_c_space, scan};
use crate::protocol::{MetaCode, MetaCommand, MetaFlag, MetaReply, Reply};
use crate::server::arith;
use crate::server::items::Item;
use crate::server::slab::{PAGE_SIZE, item_total};
use crate::server::{AllocError, NON_NUMERIC, Server};

/// memcached's limit on tokens in a meta command line (command, key, flags and the empty
/// terminal token).
const MAX_TOKENS: usize = 20;

/// Longest opaque token, its `O` included.
const MAX_OPAQUE: usize = 32;

/// `CLIENT_ERROR` text when a flag token is not understood and no better text applies.
const BAD_FORMAT: &str = "bad command line format";

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

/// memcached's `_meta_flag_preparse`. On failure, the `CLIENT_ERROR` text it would
/// report (`mg` and `ms` show it; `md` and `ma` replace it with their own).
fn preparse(
    server: &Server,
    key: &Key,
    flags: &[MetaFlag],
    now: VirtualTime,
) -> Result<Options, &'static str> {
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
        mode: None,
        exptime: 0,
        autoviv_exptime: 0,
        recache_time: 0,
        client_flags: 0,
        req_cas: 0,
        delta: 1,
        initial: 0,
    };
    let mut seen = [false; 127];
    let mut error: Option<&'static str> = None;
    let mut failed = false;
    let ttl = |token: &[u8]| -> Option<u32> {
        let t = strtol_i32(token)?;
        Some(server.expiry_tick(Exptime(i64::from(t)), now))
    };
    for flag in flags {
        let letter = flag.letter;
        if letter >= 127 || seen[usize::from(letter)] {
            return Err("duplicate flag");
        }
        seen[usize::from(letter)] = true;
        let token = flag.token.as_deref().unwrap_or("").as_bytes();
        let mut bad = |message: Option<&'static str>| {
            failed = true;
            if message.is_some() {
                error = message;
            }
        };
        match letter {
            b'b' => match base64_decode(key.as_bytes()).map(Key::new) {
                Some(Ok(decoded)) => {
                    of.key = decoded;
                    of.key_binary = true;
                }
                // A decoded key the simulator cannot represent is refused like one
                // that does not decode.
                _ => bad(Some("error decoding key")),
            },
            b'N' => {
                of.locked = true;
                of.vivify = true;
                match ttl(token) {
                    Some(e) => of.autoviv_exptime = e,
                    None => bad(Some("bad token in command line format")),
                }
            }
            b'T' => {
                of.locked = true;
                match ttl(token) {
                    Some(e) => {
                        of.exptime = e;
                        of.new_ttl = true;
                    }
                    None => bad(Some("bad token in command line format")),
                }
            }
            b'R' => {
                of.locked = true;
                match ttl(token) {
                    Some(e) => of.recache_time = e,
                    None => bad(Some("bad token in command line format")),
                }
            }
            b'l' | b'h' => of.locked = true,
            b'O' | b'P' | b'L' | b'k' | b's' | b't' | b'c' | b'f' => {}
            b'v' => of.value = true,
            b'u' => of.no_update = true,
            b'q' => of.no_reply = true,
            b'F' => match strtoul_u32(token) {
                Some(f) => of.client_flags = f,
                None => bad(None),
            },
            b'C' => match strtoull(token) {
                Some(c) => {
                    of.req_cas = c;
                    of.has_cas = true;
                }
                None => bad(Some("bad token in command line format")),
            },
            b'M' => {
                if token.len() != 1 {
                    bad(Some("incorrect length for M token"));
                } else {
                    of.mode = Some(token[0]);
                }
            }
            b'J' => match strtoull(token) {
                Some(j) => of.initial = j,
                None => bad(Some("invalid numeric initial value")),
            },
            b'D' => match strtoull(token) {
                Some(d) => of.delta = d,
                None => bad(Some("invalid numeric delta value")),
            },
            b'I' => of.set_stale = true,
            _ => return Err("invalid flag"),
        }
    }
    if failed {
        return Err(error.unwrap_or(BAD_FORMAT));
    }
    Ok(of)
}

/// True if an `O` flag is longer than memcached copies back.
fn opaque_too_long(flag: &MetaFlag) -> bool {
    1 + flag.token.as_deref().map_or(0, str::len) > MAX_OPAQUE
}

/// The `k` return flag, and `b` after it for a binary key.
fn push_key(out: &mut Vec<MetaFlag>, key: &Key, binary: bool) {
    if binary {
        out.push(MetaFlag::with(b'k', base64_encode(key.as_bytes())));
        out.push(MetaFlag::bare(b'b'));
    } else {
        out.push(MetaFlag::with(
            b'k',
            String::from_utf8_lossy(key.as_bytes()),
        ));
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

/// `mg`.
fn get(server: &mut Server, key: &Key, flags: &[MetaFlag], now: VirtualTime) -> Reply {
    if flags.len() + 3 > MAX_TOKENS {
        return client_error("options flags are too long");
    }
    let of = match preparse(server, key, flags, now) {
        Ok(of) => of,
        Err(message) => return client_error(message),
    };
    let tick = server.tick(now);
    let items = &mut server.items;
    let key = &of.key;
    let mut found = items.find(key, tick).is_some();
    // Without N, T, R, l or h the read bumps the item as it finds it; otherwise the bump
    // waits until the reply has read the item's history.
    let bump_first = !of.locked && !of.no_update;
    if found && bump_first {
        items.bump(key, tick);
    }
    let mut created = false;
    if !found
        && of.vivify
        && let Ok(r) = items.reserve(key.len(), 0, 0, tick)
    {
        items.link(key, Item::new(Vec::new(), 0, 0), r, tick);
        created = true;
        found = true;
    }
    if !found {
        items.stats.get_misses += 1;
        items.stats.cmd_get += 1;
        let out = match opaque_and_key(flags, &of) {
            Ok(out) => out,
            Err(e) => return e,
        };
        if of.no_reply {
            return Reply::Silent;
        }
        return meta(MetaCode::Miss, out, None);
    }

    let item = items.linked_mut(key).expect("the item was just found");
    let mut out = Vec::new();
    let mut won = false;
    let mut ttl_set = false;
    for f in flags {
        match f.letter {
            b'T' => {
                ttl_set = true;
                item.exptime = of.exptime;
            }
            b'N' if created => {
                item.exptime = of.autoviv_exptime;
                won = true;
            }
            // Recache: win when the remaining TTL is below the token, unless a win
            // was already handed out.
            b'R' if !item.token_sent
                && !created
                && item.exptime != 0
                && item.exptime < of.recache_time =>
            {
                won = true;
            }
            b's' => out.push(MetaFlag::with(b's', item.data.len())),
            b't' => out.push(ttl_flag(item.exptime, tick)),
            b'c' => out.push(MetaFlag::with(b'c', item.cas)),
            b'f' => out.push(MetaFlag::with(b'f', item.flags)),
            b'l' => out.push(MetaFlag::with(b'l', tick.wrapping_sub(item.time))),
            b'h' => out.push(MetaFlag::with(b'h', u8::from(item.fetched))),
            b'O' if opaque_too_long(f) => return client_error("opaque token too long"),
            b'O' => out.push(f.clone()),
            b'k' => push_key(&mut out, key, item.key_binary),
            _ => {}
        }
    }
    if item.token_sent {
        out.push(MetaFlag::bare(b'Z'));
    }
    if item.stale {
        out.push(MetaFlag::bare(b'X'));
        if !item.token_sent {
            won = true;
        }
    }
    if won {
        out.push(MetaFlag::bare(b'W'));
        item.token_sent = true;
    }
    let (code, value) = if of.value {
        (MetaCode::Value, Some(item.data.clone()))
    } else {
        (MetaCode::Header, None)
    };
    if of.locked && !of.no_update {
        items.bump(key, tick);
    }
    if ttl_set {
        items.stats.cmd_touch += 1;
        items.stats.touch_hits += 1;
    } else {
        items.stats.get_hits += 1;
        items.stats.cmd_get += 1;
    }
    meta(code, out, value)
}

/// Which store an `ms` performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StoreOp {
    Set,
    Add,
    Replace,
    Append,
    Prepend,
    Cas,
}

/// How a supplied cas compares with the stored item's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CasCheck {
    None,
    Match,
    Stale,
    BadValue,
}

/// `ms`.
fn set(
    server: &mut Server,
    key: &Key,
    flags: &[MetaFlag],
    data: Option<&[u8]>,
    now: VirtualTime,
) -> Reply {
    let Some(data) = data else {
        // `ms <key>` without a data length.
        return client_error(BAD_FORMAT);
    };
    if flags.len() + 4 > MAX_TOKENS {
        return client_error("options flags too long");
    }
    let of = match preparse(server, key, flags, now) {
        Ok(of) => of,
        Err(message) => return client_error(message),
    };
    let opaque_error = flags.iter().any(|f| f.letter == b'O' && opaque_too_long(f));
    let mut op = match of.mode {
        None | Some(b'S') => StoreOp::Set,
        Some(b'E') => StoreOp::Add,
        Some(b'A') => StoreOp::Append,
        Some(b'P') => StoreOp::Prepend,
        Some(b'R') => StoreOp::Replace,
        Some(_) => return client_error("invalid mode for ms M token"),
    };
    // A cas turns set and replace into a compare-and-swap.
    if of.has_cas && matches!(op, StoreOp::Set | StoreOp::Replace) {
        op = StoreOp::Cas;
    }
    if opaque_error {
        return client_error("opaque token too long");
    }
    let tick = server.tick(now);
    let key = &of.key;
    let items = &mut server.items;
    let reservation = match items.reserve(key.len(), of.client_flags, data.len(), tick) {
        Ok(r) => r,
        Err(e) => {
            // The failed allocation takes the key's old value with it, whatever the mode.
            if items.find(key, tick).is_some() {
                items.unlink(key);
            }
            return match e {
                AllocError::TooLarge => {
                    items.stats.store_too_large += 1;
                    Reply::ServerError("object too large for cache".into())
                }
                AllocError::OutOfMemory => {
                    items.stats.store_no_memory += 1;
                    Reply::ServerError("out of memory storing object".into())
                }
            };
        }
    };
    items.stats.cmd_set += 1;

    let mut item = Item::new(data.to_vec(), of.client_flags, of.exptime);
    item.key_binary = of.key_binary;
    let old = items
        .find(key, tick)
        .map(|i| (i.cas, i.flags, i.exptime, i.token_sent, i.data.clone()));
    let mut stored_cas = None;
    let code = match old {
        Some((old_cas, old_flags, old_exptime, old_token, old_data)) => {
            let check = if of.req_cas == 0 {
                CasCheck::None
            } else if of.req_cas == old_cas {
                CasCheck::Match
            } else if of.set_stale && op == StoreOp::Cas && of.req_cas < old_cas {
                CasCheck::Stale
            } else {
                CasCheck::BadValue
            };
            match op {
                StoreOp::Add => {
                    items.touch_time(key, tick);
                    MetaCode::NotStored
                }
                StoreOp::Cas => match check {
                    CasCheck::Match | CasCheck::Stale => {
                        if check == CasCheck::Stale {
                            // Accepted as stale: the old TTL and token state stay.
                            item.exptime = old_exptime;
                            item.stale = true;
                            item.token_sent = old_token;
                        }
                        items.stats.cas_hits += 1;
                        stored_cas = Some(items.link(key, item, reservation, tick));
                        MetaCode::Header
                    }
                    CasCheck::None | CasCheck::BadValue => {
                        items.stats.cas_badval += 1;
                        MetaCode::Exists
                    }
                },
                StoreOp::Append | StoreOp::Prepend => {
                    if !matches!(check, CasCheck::None | CasCheck::Match) {
                        MetaCode::Exists
                    } else {
                        let mut joined = Vec::with_capacity(old_data.len() + data.len());
                        if op == StoreOp::Append {
                            joined.extend_from_slice(&old_data);
                            joined.extend_from_slice(data);
                        } else {
                            joined.extend_from_slice(data);
                            joined.extend_from_slice(&old_data);
                        }
                        match items.reserve(key.len(), old_flags, joined.len(), tick) {
                            Ok(r) => {
                                let joined = Item::new(joined, old_flags, old_exptime);
                                stored_cas = Some(items.link(key, joined, r, tick));
                                MetaCode::Header
                            }
                            Err(_) => MetaCode::NotStored,
                        }
                    }
                }
                StoreOp::Set | StoreOp::Replace => {
                    stored_cas = Some(items.link(key, item, reservation, tick));
                    MetaCode::Header
                }
            }
        }
        None => match op {
            StoreOp::Add | StoreOp::Set => {
                stored_cas = Some(items.link(key, item, reservation, tick));
                MetaCode::Header
            }
            StoreOp::Cas => {
                items.stats.cas_misses += 1;
                MetaCode::NotFound
            }
            StoreOp::Replace | StoreOp::Append | StoreOp::Prepend => MetaCode::NotStored,
        },
    };
    if !(stored_cas.is_some()
        && matches!(
            op,
            StoreOp::Set | StoreOp::Add | StoreOp::Replace | StoreOp::Cas
        ))
    {
        // Append and prepend link a joined copy; a store that failed links nothing.
        items.release(reservation);
    }
    if code == MetaCode::Header && of.no_reply {
        return Reply::Silent;
    }
    let mut out = Vec::new();
    for f in flags {
        match f.letter {
            b'O' => out.push(f.clone()),
            b'k' => push_key(&mut out, key, of.key_binary),
            b'c' => out.push(MetaFlag::with(b'c', stored_cas.unwrap_or(0))),
            _ => {}
        }
    }
    meta(code, out, None)
}

/// `md`.
fn delete(server: &mut Server, key: &Key, flags: &[MetaFlag], now: VirtualTime) -> Reply {
    if flags.len() + 3 > MAX_TOKENS {
        return client_error("options flags too long");
    }
    let Ok(of) = preparse(server, key, flags, now) else {
        return client_error("invalid or duplicate flag");
    };
    let out = match opaque_and_key(flags, &of) {
        Ok(out) => out,
        Err(e) => return e,
    };
    let tick = server.tick(now);
    let key = &of.key;
    let items = &mut server.items;
    let Some(cas) = items.find(key, tick).map(|i| i.cas) else {
        items.stats.delete_misses += 1;
        return meta(MetaCode::NotFound, out, None);
    };
    if of.has_cas && cas != of.req_cas {
        items.stats.delete_misses += 1;
        return meta(MetaCode::Exists, out, None);
    }
    if of.set_stale {
        // Invalidate: keep the value, mark it stale, let the next reader win.
        let cas = items.next_cas();
        let item = items.linked_mut(key).expect("the item was just found");
        if of.new_ttl {
            item.exptime = of.exptime;
        }
        item.stale = true;
        item.token_sent = false;
        item.cas = cas;
    } else {
        items.stats.delete_hits += 1;
        items.unlink(key);
    }
    if of.no_reply {
        return Reply::Silent;
    }
    meta(MetaCode::Header, out, None)
}

/// The item an `ma` reply describes.
enum Counter {
    /// The linked item (changed in place, or just created).
    Linked,
    /// The copy that a grown number replaced: changes to it are lost.
    Replaced { cas: u64, exptime: u32 },
}

/// What applying the delta did.
enum Delta {
    Done(Counter),
    NonNumeric,
    OutOfMemory,
    NotFound,
    CasMismatch,
}

/// memcached's `do_add_delta` for `ma`: the new number in `digits` on success.
fn add_delta(
    server: &mut Server,
    key: &Key,
    incr: bool,
    delta: u64,
    req_cas: u64,
    tick: u32,
    digits: &mut String,
) -> Delta {
    let items = &mut server.items;
    let Some(item) = items.find(key, tick) else {
        return Delta::NotFound;
    };
    let chunked = item_total(key.len(), item.flags, item.data.len()) > PAGE_SIZE / 2;
    if item.data.is_empty() || chunked {
        return Delta::NonNumeric;
    }
    if req_cas != 0 && item.cas != req_cas {
        return Delta::CasMismatch;
    }
    let Some(value) = arith::parse_u64(&item.data) else {
        return Delta::NonNumeric;
    };
    let value = arith::apply(incr, value, delta);
    let (flags, exptime, old_len) = (item.flags, item.exptime, item.data.len());
    if incr {
        items.stats.incr_hits += 1;
    } else {
        items.stats.decr_hits += 1;
    }
    *digits = value.to_string();
    if let Some(bytes) = arith::in_place(old_len, value) {
        let cas = items.next_cas();
        let item = items.linked_mut(key).expect("the item was just found");
        item.data = bytes;
        item.cas = cas;
        items.touch_time(key, tick);
        return Delta::Done(Counter::Linked);
    }
    match items.reserve(key.len(), flags, digits.len(), tick) {
        Ok(r) => {
            let item = Item::new(digits.clone().into_bytes(), flags, exptime);
            let cas = items.link(key, item, r, tick);
            Delta::Done(Counter::Replaced { cas, exptime })
        }
        Err(_) => Delta::OutOfMemory,
    }
}

/// `ma`.
fn arithmetic(server: &mut Server, key: &Key, flags: &[MetaFlag], now: VirtualTime) -> Reply {
    if flags.len() + 3 > MAX_TOKENS {
        return client_error("options flags too long");
    }
    let Ok(of) = preparse(server, key, flags, now) else {
        return client_error("invalid or duplicate flag");
    };
    let incr = match of.mode {
        None | Some(b'I' | b'+') => true,
        Some(b'D' | b'-') => false,
        Some(_) => return client_error("invalid mode for ma M token"),
    };
    let tick = server.tick(now);
    let key = &of.key;
    let mut digits = String::new();
    let mut silent = false;
    let mut created = false;
    let mut code = MetaCode::Header;
    let counter = match add_delta(server, key, incr, of.delta, of.req_cas, tick, &mut digits) {
        Delta::Done(counter) => {
            silent = of.no_reply;
            Some(counter)
        }
        Delta::NonNumeric => return client_error(NON_NUMERIC),
        Delta::OutOfMemory => return Reply::ServerError("out of memory".into()),
        Delta::NotFound if of.vivify => {
            digits = of.initial.to_string();
            let items = &mut server.items;
            match items.reserve(key.len(), 0, digits.len(), tick) {
                Ok(r) => {
                    items.link(key, Item::new(digits.clone().into_bytes(), 0, 0), r, tick);
                    created = true;
                    Some(Counter::Linked)
                }
                Err(_) => {
                    return Reply::ServerError("Out of memory allocating new item".into());
                }
            }
        }
        Delta::NotFound => {
            if incr {
                server.items.stats.incr_misses += 1;
            } else {
                server.items.stats.decr_misses += 1;
            }
            code = MetaCode::NotFound;
            None
        }
        Delta::CasMismatch => {
            code = MetaCode::Exists;
            None
        }
    };
    let Some(mut counter) = counter else {
        return match opaque_and_key(flags, &of) {
            Ok(out) => meta(code, out, None),
            Err(e) => e,
        };
    };
    let mut out = Vec::new();
    for f in flags {
        // The fields of the item this reply describes, and where changes to them go.
        let (cas, exptime) = match &mut counter {
            Counter::Linked => {
                let item = server.items.linked_mut(key).expect("the counter is linked");
                (item.cas, item.exptime)
            }
            Counter::Replaced { cas, exptime } => (*cas, *exptime),
        };
        let new_exptime = match f.letter {
            b'c' => {
                out.push(MetaFlag::with(b'c', cas));
                None
            }
            b't' => {
                out.push(ttl_flag(exptime, tick));
                None
            }
            b'T' => Some(of.exptime),
            b'N' if created => Some(of.autoviv_exptime),
            b'O' if opaque_too_long(f) => return client_error("opaque token too long"),
            b'O' => {
                out.push(f.clone());
                None
            }
            b'k' => {
                push_key(&mut out, key, of.key_binary);
                None
            }
            _ => None,
        };
        if let Some(e) = new_exptime {
            match &mut counter {
                Counter::Linked => {
                    if let Some(item) = server.items.linked_mut(key) {
                        item.exptime = e;
                    }
                }
                Counter::Replaced { exptime, .. } => *exptime = e,
            }
        }
    }
    if silent {
        return Reply::Silent;
    }
    if of.value {
        meta(MetaCode::Value, out, Some(digits.into_bytes()))
    } else {
        meta(MetaCode::Header, out, None)
    }
}

/// What C's `strto*` functions read from a token: whether a minus sign came first, the
/// magnitude (`None` if it overflows 64 bits), and the bytes after the number.
fn scan_number(s: &[u8]) -> Option<(bool, Option<u64>, &[u8])> {
    scan(s).map(|n| (n.negative, n.magnitude, n.rest))
}

/// True if the bytes after a number end it the way memcached's `safe_strto*` accept.
fn ends_well(rest: &[u8]) -> bool {
    rest.first().is_none_or(|&b| is_c_space(b))
}

/// memcached's `safe_strtol`: a C `long` truncated to 32 bits (so 2^31 wraps negative).
fn strtol_i32(s: &[u8]) -> Option<i32> {
    let (negative, magnitude, rest) = scan_number(s)?;
    let magnitude = magnitude?;
    let value = if negative {
        if magnitude > 1 << 63 {
            return None;
        }
        (magnitude as i64).wrapping_neg()
    } else {
        i64::try_from(magnitude).ok()?
    };
    ends_well(rest).then_some(value as i32)
}

/// memcached's `safe_strtoull`: an unsigned 64-bit number; a minus sign is refused when
/// the result reads as negative.
fn strtoull(s: &[u8]) -> Option<u64> {
    let Some((negative, magnitude, rest)) = scan_number(s) else {
        // No digits: the end pointer is the token's start, accepted if that is a space.
        return s.first().is_some_and(|&b| is_c_space(b)).then_some(0);
    };
    let magnitude = magnitude?;
    let value = if negative {
        magnitude.wrapping_neg()
    } else {
        magnitude
    };
    if !ends_well(rest) {
        return None;
    }
    if (value as i64) < 0 && s.contains(&b'-') {
        return None;
    }
    Some(value)
}

/// memcached's `safe_strtoul`: like [`strtoull`] but truncated to 32 bits.
fn strtoul_u32(s: &[u8]) -> Option<u32> {
    scan_number(s)?;
    strtoull(s).map(|v| v as u32)
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(BASE64[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The value of a base64 character; `=` counts as a zero digit. `None` for bytes the
/// decoder skips.
fn base64_value(b: u8) -> Option<u8> {
    match b {
        b'A'..=b'Z' => Some(b - b'A'),
        b'a'..=b'z' => Some(b - b'a' + 26),
        b'0'..=b'9' => Some(b - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        b'=' => Some(0),
        _ => None,
    }
}

/// memcached's lenient base64 decoder: bytes outside the alphabet are skipped, the rest
/// must come in groups of four, and decoding stops after the first padded group. `None`
/// when it would return nothing.
fn base64_decode(text: &[u8]) -> Option<Vec<u8>> {
    let count = text.iter().filter(|&&b| base64_value(b).is_some()).count();
    if count == 0 || count % 4 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(count / 4 * 3);
    let mut block = [0u8; 4];
    let mut filled = 0;
    let mut pad = 0;
    for &b in text {
        let Some(v) = base64_value(b) else {
            continue;
        };
        if b == b'=' {
            pad += 1;
        }
        block[filled] = v;
        filled += 1;
        if filled == 4 {
            out.push((block[0] << 2) | (block[1] >> 4));
            out.push((block[1] << 4) | (block[2] >> 2));
            out.push((block[2] << 6) | block[3]);
            filled = 0;
            if pad > 0 {
                match pad {
                    1 => out.truncate(out.len() - 1),
                    2 => out.truncate(out.len() - 2),
                    _ => return None,
                }
                break;
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Request;

    fn key(s: &str) -> Key {
        Key::new(s).unwrap()
    }

    fn flags(text: &str) -> Vec<MetaFlag> {
        text.split_whitespace()
            .map(|w| MetaFlag::parse(w.as_bytes()))
            .collect()
    }

    fn run(
        server: &mut Server,
        command: MetaCommand,
        k: &str,
        f: &str,
        data: Option<&[u8]>,
        now: VirtualTime,
    ) -> Reply {
        let request = Request::Meta {
            command,
            key: Some(key(k)),
            flags: flags(f),
            data: data.map(<[u8]>::to_vec),
        };
        server.apply(&request, now)
    }

    fn mg(server: &mut Server, k: &str, f: &str, now: VirtualTime) -> Reply {
        run(server, MetaCommand::Get, k, f, None, now)
    }

    fn ms(server: &mut Server, k: &str, data: &[u8], f: &str, now: VirtualTime) -> Reply {
        run(server, MetaCommand::Set, k, f, Some(data), now)
    }

    fn md(server: &mut Server, k: &str, f: &str, now: VirtualTime) -> Reply {
        run(server, MetaCommand::Delete, k, f, None, now)
    }

    fn ma(server: &mut Server, k: &str, f: &str, now: VirtualTime) -> Reply {
        run(server, MetaCommand::Arithmetic, k, f, None, now)
    }

    /// The reply as it would read on the wire (status line only, value after `/`).
    fn line(reply: &Reply) -> String {
        match reply {
            Reply::Meta(m) => {
                let mut s = m.code.as_str().to_string();
                if let Some(v) = &m.value {
                    s.push_str(&format!(" {}", v.len()));
                }
                for f in &m.flags {
                    s.push_str(&format!(" {f}"));
                }
                if let Some(v) = &m.value {
                    s.push_str(&format!(" / {}", String::from_utf8_lossy(v)));
                }
                s
            }
            other => format!("{other:?}"),
        }
    }

    const T0: VirtualTime = VirtualTime(10_000_000);

    #[test]
    fn case_18_dog_pile_vivify_win_then_z() {
        let mut s = Server::with_defaults();
        assert_eq!(line(&mg(&mut s, "dp", "v c N30 t", T0)), "VA 0 c1 t30 W / ");
        assert_eq!(line(&mg(&mut s, "dp", "v c N30 t", T0)), "VA 0 c1 t30 Z / ");
        assert_eq!(line(&ms(&mut s, "dp", b"abcd", "C1 T60", T0)), "HD");
        assert_eq!(line(&mg(&mut s, "dp", "v c t", T0)), "VA 4 c2 t60 / abcd");
    }

    #[test]
    fn case_19_counter_auto_create() {
        let mut s = Server::with_defaults();
        assert_eq!(line(&ma(&mut s, "cnt", "", T0)), "NF");
        assert_eq!(line(&ma(&mut s, "cnt", "N0 J10 v", T0)), "VA 2 / 10");
        assert_eq!(line(&ma(&mut s, "cnt", "v", T0)), "VA 2 / 11");
        assert_eq!(line(&ma(&mut s, "cnt", "MD D100 v", T0)), "VA 1 / 0");
        // Decrementing in place pads the stored number.
        assert_eq!(line(&mg(&mut s, "cnt", "v", T0)), "VA 2 / 0 ");
    }

    #[test]
    fn stale_while_revalidate() {
        let mut s = Server::with_defaults();
        assert_eq!(line(&ms(&mut s, "s", b"old", "T100", T0)), "HD");
        assert_eq!(line(&md(&mut s, "s", "I T30", T0)), "HD");
        // First reader after the invalidation wins the rebuild and still gets the value.
        assert_eq!(line(&mg(&mut s, "s", "v c t", T0)), "VA 3 c2 t30 X W / old");
        assert_eq!(line(&mg(&mut s, "s", "v c t", T0)), "VA 3 c2 t30 Z X / old");
        // A cas older than the item's is refused without I, accepted as stale with it.
        assert_eq!(line(&ms(&mut s, "s", b"new", "C1 c", T0)), "EX c0");
        assert_eq!(line(&ms(&mut s, "s", b"nw2", "C1 I c", T0)), "HD c3");
        assert_eq!(line(&mg(&mut s, "s", "v c t", T0)), "VA 3 c3 t30 Z X / nw2");
        // The winner stores with the current cas: fresh again.
        assert_eq!(line(&ms(&mut s, "s", b"new", "C3 T60", T0)), "HD");
        assert_eq!(line(&mg(&mut s, "s", "v t", T0)), "VA 3 t60 / new");
        // Invalidating without a value reply: HD with X W, then Z X.
        assert_eq!(line(&md(&mut s, "s", "I", T0)), "HD");
        assert_eq!(line(&mg(&mut s, "s", "c", T0)), "HD c5 X W");
        assert_eq!(line(&mg(&mut s, "s", "c", T0)), "HD c5 Z X");
    }

    #[test]
    fn quiet_mode_hides_only_nominal_replies() {
        let mut s = Server::with_defaults();
        assert_eq!(mg(&mut s, "nokey", "v q", T0), Reply::Silent);
        assert_eq!(ms(&mut s, "a", b"hi", "q", T0), Reply::Silent);
        assert_eq!(line(&mg(&mut s, "a", "q", T0)), "HD");
        assert_eq!(line(&ms(&mut s, "a", b"hi", "ME q c", T0)), "NS c0");
        assert_eq!(line(&ma(&mut s, "n", "q", T0)), "NF");
        assert_eq!(line(&ma(&mut s, "n", "N0 J5 q v", T0)), "VA 1 / 5");
        assert_eq!(ma(&mut s, "n", "q v", T0), Reply::Silent);
        assert_eq!(line(&ma(&mut s, "n", "v", T0)), "VA 1 / 7");
        assert_eq!(md(&mut s, "n", "q", T0), Reply::Silent);
        assert_eq!(line(&md(&mut s, "n", "q", T0)), "NF");
    }

    #[test]
    fn flag_errors_as_1_6_18() {
        let mut s = Server::with_defaults();
        let e = |m: &str| format!("{:?}", Reply::ClientError(m.into()));
        assert_eq!(line(&mg(&mut s, "a", "v v", T0)), e("duplicate flag"));
        assert_eq!(line(&mg(&mut s, "a", "E5", T0)), e("invalid flag"));
        assert_eq!(
            line(&mg(&mut s, "a", "Nx", T0)),
            e("bad token in command line format")
        );
        assert_eq!(
            line(&mg(&mut s, "a", "Fx", T0)),
            e("bad command line format")
        );
        assert_eq!(
            line(&mg(&mut s, "a", "MEE", T0)),
            e("incorrect length for M token")
        );
        assert_eq!(
            line(&mg(&mut s, "a", "O12345678901234567890123456789012", T0)),
            e("opaque token too long")
        );
        assert_eq!(
            line(&mg(&mut s, "a", "a b c d e f g h i j k l m n o p q r", T0)),
            e("options flags are too long")
        );
        assert_eq!(
            line(&md(&mut s, "a", "x", T0)),
            e("invalid or duplicate flag")
        );
        assert_eq!(
            line(&ma(&mut s, "a", "MX", T0)),
            e("invalid mode for ma M token")
        );
        assert_eq!(
            line(&ms(&mut s, "a", b"hi", "MX", T0)),
            e("invalid mode for ms M token")
        );
        assert_eq!(
            line(&ms(
                &mut s,
                "a",
                b"hi",
                "a b c d e f g h i j k l m n o p q",
                T0
            )),
            e("options flags too long")
        );
        assert_eq!(
            line(&mg(&mut s, "Zm9!!", "b v", T0)),
            e("error decoding key")
        );
        let no_key = Request::Meta {
            command: MetaCommand::Get,
            key: None,
            flags: vec![],
            data: None,
        };
        assert_eq!(s.apply(&no_key, T0), Reply::Error);
    }

    #[test]
    fn base64_keys_round_trip() {
        let mut s = Server::with_defaults();
        assert_eq!(
            line(&ms(&mut s, "Zm9v", b"hi", "b k c", T0)),
            "HD kZm9v b c1"
        );
        assert_eq!(line(&mg(&mut s, "foo", "v k", T0)), "VA 2 kZm9v b / hi");
        assert_eq!(
            line(&mg(&mut s, "Zm9vYmFy", "b v k O1", T0)),
            "EN kZm9vYmFy b O1"
        );
        assert_eq!(md(&mut s, "Zm9v", "b q", T0), Reply::Silent);
        assert_eq!(base64_encode(b"f"), "Zg==");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
        assert_eq!(base64_decode(b"Zg=="), Some(b"f".to_vec()));
        assert_eq!(base64_decode(b"Zm8="), Some(b"fo".to_vec()));
        assert_eq!(base64_decode(b"Zm9"), None);
    }

    #[test]
    fn numbers_parse_like_c() {
        assert_eq!(strtol_i32(b"30"), Some(30));
        assert_eq!(strtol_i32(b"-1"), Some(-1));
        assert_eq!(strtol_i32(b"2147483648"), Some(i32::MIN));
        assert_eq!(strtol_i32(b""), None);
        assert_eq!(strtol_i32(b"3x"), None);
        assert_eq!(strtoull(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(strtoull(b"18446744073709551616"), None);
        assert_eq!(strtoull(b"-1"), None);
        assert_eq!(strtoull(b"-0"), Some(0));
        assert_eq!(strtoull(b""), None);
        assert_eq!(strtoul_u32(b"4294967296"), Some(0));
        assert_eq!(strtoul_u32(b"-1"), None);
    }

    #[test]
    fn recache_and_ttl_flags() {
        let mut s = Server::with_defaults();
        assert_eq!(line(&ms(&mut s, "n", b"99", "T100", T0)), "HD");
        // A grown number re-allocates: the T of that request is lost, as in 1.6.18.
        assert_eq!(line(&ma(&mut s, "n", "T500 t v", T0)), "VA 3 t500 / 100");
        assert_eq!(line(&mg(&mut s, "n", "t", T0)), "HD t100");
        assert_eq!(line(&ma(&mut s, "n", "T500 t v", T0)), "VA 3 t500 / 101");
        assert_eq!(line(&mg(&mut s, "n", "t", T0)), "HD t500");
        assert_eq!(line(&mg(&mut s, "n", "R600 t", T0)), "HD t500 W");
        assert_eq!(line(&mg(&mut s, "n", "R600 t", T0)), "HD t500 Z");
        assert_eq!(line(&mg(&mut s, "n", "h l s f", T0)), "HD h1 l0 s3 f0 Z");
    }
}
