//! `ms`: meta set.

use super::*;

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
pub(super) fn set(
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
    items.count_set(&reservation);

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
                        items.hit(Hit::CasHit);
                        stored_cas = Some(items.link(key, item, reservation, tick));
                        MetaCode::Header
                    }
                    CasCheck::None | CasCheck::BadValue => {
                        items.hit(Hit::CasBadval);
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
