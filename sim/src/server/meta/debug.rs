//! `me`: meta debug, as memcached 1.6.18 answers it.
//!
//! `me key` or `me key b` (base64 key; `b` must be the token right after the key). A hit
//! is one line, `ME key exp=… la=… cas=… fetch=… cls=… size=…`, with the key re-encoded
//! when the item was stored under a base64 key. 1.6.18 prints `exp` as the server's time
//! minus the item's expiry (so an item with 100 s left shows `exp=-100`) and `-1` for
//! none. The lookup expires a dead item as a `get` would, but does not bump it.

use super::*;

pub(super) fn debug(server: &mut Server, key: &Key, flags: &[MetaFlag], now: VirtualTime) -> Reply {
    let key = if flags.first().is_some_and(|f| f.letter == b'b') {
        match base64_decode(key.as_bytes()).and_then(|k| Key::binary(k).ok()) {
            Some(k) => k,
            None => return Reply::ClientError(BAD_FORMAT.into()),
        }
    } else {
        key.clone()
    };
    // memcached counts `cmd_meta` for `me` alone, hit or miss.
    server.items.stats.cmd_meta += 1;
    let tick = server.tick(now);
    let Some(item) = server.items.find(&key, tick) else {
        return meta(MetaCode::Miss, vec![], None);
    };
    let mut line = b"ME ".to_vec();
    if item.key_binary {
        line.extend_from_slice(base64_encode(key.as_bytes()).as_bytes());
    } else {
        line.extend_from_slice(key.as_bytes());
    }
    let exp = if item.exptime == 0 {
        -1
    } else {
        tick.wrapping_sub(item.exptime) as i32
    };
    line.extend_from_slice(
        format!(
            " exp={exp} la={} cas={} fetch={} cls={} size={}",
            tick.wrapping_sub(item.time),
            item.cas,
            if item.fetched { "yes" } else { "no" },
            item.class_id(),
            item.total()
        )
        .as_bytes(),
    );
    Reply::Debug(line)
}
