//! `md`: meta delete.

use super::*;

/// `md`.
pub(super) fn delete(
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
        items.hit(Hit::Delete);
        items.unlink(key);
    }
    if of.no_reply {
        return Reply::Silent;
    }
    meta(MetaCode::Header, out, None)
}
