//! `mg`: meta get.

use super::*;

/// `mg`.
pub(super) fn get(server: &mut Server, key: &Key, flags: &[MetaFlag], now: VirtualTime) -> Reply {
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
        items.hit(Hit::Touch);
    } else {
        items.hit(Hit::Get);
        items.stats.cmd_get += 1;
    }
    meta(code, out, value)
}
