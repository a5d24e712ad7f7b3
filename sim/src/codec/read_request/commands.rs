//! The text protocol's classic commands: retrieval, storage heads, arithmetic, touch,
//! delete, flush_all, verbosity, stats.

use super::*;
use crate::codec::tokens::all_words_after;
use crate::protocol::number::{parse_i64, parse_u32, parse_u64};

/// `get`/`gets`/`gat`/`gats`/`bget`.
pub(super) fn retrieval(t: &Tokens<'_>, with_cas: bool, touch: bool) -> Command {
    let mut skip = 1;
    let mut exptime = Exptime::NEVER;
    if touch {
        match parse_i64(t.word(1)) {
            Some(e) => exptime = Exptime(e),
            None => return client_error("invalid exptime argument", false),
        }
        skip = 2;
    }
    let mut keys = Vec::new();
    let mut too_long = false;
    for word in all_words_after(t, skip) {
        if word.len() > MAX_KEY_LEN {
            too_long = true;
            break;
        }
        match key(&word) {
            Ok(k) => keys.push(k),
            Err(c) => return c,
        }
    }
    let request = if touch {
        Request::Gat {
            exptime,
            keys,
            with_cas,
        }
    } else {
        Request::Get { keys, with_cas }
    };
    if !too_long {
        return Command::Execute(request);
    }
    Command::FailedRetrieval {
        request: (!request.keys().is_empty()).then_some(request),
        answer: reply_bytes(&Reply::ClientError(BAD_FORMAT.into())),
    }
}

/// `set`/`add`/`replace`/`append`/`prepend`/`cas`: the head; the data block follows.
pub(super) fn update(t: &Tokens<'_>, mode: StoreMode, with_cas: bool) -> Command {
    let noreply = t.last() == b"noreply";
    if t.word(1).len() > MAX_KEY_LEN {
        return client_error(BAD_FORMAT, noreply);
    }
    let (Some(flags), Some(exptime), Some(len)) = (
        parse_u32(t.word(2)),
        parse_i64(t.word(3)),
        parse_i32(t.word(4)),
    ) else {
        return client_error(BAD_FORMAT, noreply);
    };
    let mode = if with_cas {
        match parse_u64(t.word(5)) {
            Some(unique) => StoreMode::Cas(unique),
            None => return client_error(BAD_FORMAT, noreply),
        }
    } else {
        mode
    };
    if !(0..=MAX_DATA_LEN).contains(&len) {
        return client_error(BAD_FORMAT, noreply);
    }
    let key = match key(t.word(1)) {
        Ok(k) => k,
        Err(Command::Unsupported { what, .. }) => {
            return Command::Unsupported {
                what,
                swallow: len as usize + 2,
            };
        }
        Err(other) => return other,
    };
    Command::Store(StoreHead {
        target: StoreTarget::Classic {
            mode,
            key,
            flags,
            exptime: Exptime(exptime),
            noreply,
        },
        len: len as usize,
    })
}

/// `incr`/`decr`.
pub(super) fn arith(t: &Tokens<'_>, op: ArithOp) -> Command {
    let noreply = t.last() == b"noreply";
    if t.word(1).len() > MAX_KEY_LEN {
        return client_error(BAD_FORMAT, noreply);
    }
    let Some(delta) = parse_u64(t.word(2)) else {
        return client_error("invalid numeric delta argument", noreply);
    };
    match key(t.word(1)) {
        Ok(key) => Command::Execute(Request::Arith {
            op,
            key,
            delta,
            noreply,
        }),
        Err(c) => c,
    }
}

/// `touch key exptime`.
pub(super) fn touch(t: &Tokens<'_>) -> Command {
    let noreply = t.last() == b"noreply";
    if t.word(1).len() > MAX_KEY_LEN {
        return client_error(BAD_FORMAT, noreply);
    }
    let Some(exptime) = parse_i64(t.word(2)) else {
        return client_error("invalid exptime argument", noreply);
    };
    match key(t.word(1)) {
        Ok(key) => Command::Execute(Request::Touch {
            key,
            exptime: Exptime(exptime),
            noreply,
        }),
        Err(c) => c,
    }
}

/// `delete key [0] [noreply]`.
pub(super) fn delete(t: &Tokens<'_>) -> Command {
    let n = t.count();
    let mut noreply = false;
    if n > 3 {
        let hold_is_zero = t.word(2) == b"0";
        noreply = t.last() == b"noreply";
        let valid = (n == 4 && (hold_is_zero || noreply)) || (n == 5 && hold_is_zero && noreply);
        if !valid {
            return client_error(
                "bad command line format.  Usage: delete <key> [noreply]",
                noreply,
            );
        }
    }
    if t.word(1).len() > MAX_KEY_LEN {
        return client_error(BAD_FORMAT, noreply);
    }
    match key(t.word(1)) {
        Ok(key) => Command::Execute(Request::Delete { key, noreply }),
        Err(c) => c,
    }
}

/// `flush_all [delay] [noreply]`.
pub(super) fn flush_all(t: &Tokens<'_>) -> Command {
    let noreply = t.last() == b"noreply";
    let mut delay = None;
    if t.count() != if noreply { 3 } else { 2 } {
        match parse_i64(t.word(1)) {
            Some(d) => delay = Some(d),
            None => return client_error("invalid exptime argument", noreply),
        }
    }
    Command::Execute(Request::FlushAll { delay, noreply })
}

/// `verbosity level [noreply]`.
pub(super) fn verbosity(t: &Tokens<'_>) -> Command {
    let noreply = t.last() == b"noreply";
    match parse_u32(t.word(1)) {
        Some(level) => Command::Execute(Request::Verbosity { level, noreply }),
        None => client_error(BAD_FORMAT, noreply),
    }
}

/// `stats [sub]`: the plain form, the `items`, `slabs` and `settings` groups and `reset`
/// are modelled (tokens after the group are ignored, as memcached does); `detail on|off`
/// is answered.
pub(super) fn stats(t: &Tokens<'_>) -> Command {
    if t.count() == 2 {
        return Command::Execute(Request::Stats);
    }
    let usage = "usage: stats detail on|off|dump";
    match t.word(1) {
        b"detail" => {
            if t.count() < 4 {
                return client_error(usage, false);
            }
            match t.word(2) {
                b"on" | b"off" => answer(Reply::Ok, false),
                b"dump" => unsupported("stats detail dump"),
                _ => client_error(usage, false),
            }
        }
        b"items" => Command::Execute(Request::StatsGroup(StatsGroup::Items)),
        b"slabs" => Command::Execute(Request::StatsGroup(StatsGroup::Slabs)),
        b"settings" => Command::Execute(Request::StatsGroup(StatsGroup::Settings)),
        b"reset" => Command::Execute(Request::StatsReset),
        b"cachedump" | b"conns" | b"extstore" | b"proxy" | b"sizes" | b"sizes_enable"
        | b"sizes_disable" => unsupported(format!("stats {}", lossy(t.word(1)))),
        _ => error(),
    }
}
