//! `ma`: meta arithmetic.

use super::*;

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
    if item.data.is_empty() || item.is_chunked() {
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
    items.hit(if incr { Hit::Incr } else { Hit::Decr });
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
pub(super) fn arithmetic(
    server: &mut Server,
    key: &Key,
    flags: &[MetaFlag],
    now: VirtualTime,
) -> Reply {
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
