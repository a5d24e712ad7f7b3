//! The meta commands' request lines: `mg`, `md`, `ma` and the head of `ms`.

use super::*;

/// The shared pre-parse on the flag tokens. A `b` key is decoded by the server, which
/// runs the same pre-parse again with the key's decoding.
fn preparse(words: &[&[u8]]) -> Result<meta_flags::Preparsed, &'static str> {
    let flags = words.iter().filter_map(|w| w.split_first());
    meta_flags::preparse(flags.map(|(letter, arg)| (*letter, arg)), || true)
}

/// The flags of a meta command, as the model carries them.
fn meta_flags(words: &[&[u8]]) -> Vec<MetaFlag> {
    words.iter().map(|w| MetaFlag::parse(w)).collect()
}

/// `mg`, `md`, `ma`.
pub(super) fn meta(t: &Tokens<'_>, command: MetaCommand) -> Command {
    let n = t.count();
    if n < 3 {
        return error();
    }
    if t.word(1).len() > MAX_KEY_LEN {
        return client_error(BAD_FORMAT, false);
    }
    if n > META_MAX_TOKENS {
        let msg = if command == MetaCommand::Get {
            "options flags are too long"
        } else {
            "options flags too long"
        };
        return client_error(msg, false);
    }
    let words = &t.words[2..];
    let pre = match preparse(words) {
        Ok(p) => p,
        Err(msg) if command == MetaCommand::Get => return client_error(msg, false),
        Err(_) => return client_error("invalid or duplicate flag", false),
    };
    if command == MetaCommand::Arithmetic
        && !matches!(pre.mode, None | Some(b'I' | b'+' | b'D' | b'-'))
    {
        return client_error("invalid mode for ma M token", false);
    }
    // `mg` and `ma` find an over-long opaque token only while building the reply, after
    // their side effects: the server decides those. `md` checks it before the lookup.
    if pre.opaque_too_long && command == MetaCommand::Delete {
        return client_error("opaque token too long", false);
    }
    match key(t.word(1)) {
        Ok(key) => Command::Execute(Request::Meta {
            command,
            key: Some(key),
            flags: meta_flags(words),
            data: None,
        }),
        Err(c) => c,
    }
}

/// `ms key len flags…`: the head; the data block follows.
pub(super) fn meta_set(t: &Tokens<'_>) -> Command {
    let n = t.count();
    if n < 3 {
        return error();
    }
    if t.word(1).len() > MAX_KEY_LEN || n == 3 {
        return client_error(BAD_FORMAT, false);
    }
    if n > META_MAX_TOKENS {
        return client_error("options flags too long", false);
    }
    let len = match parse_i32(t.word(2)) {
        Some(len) if (0..=MAX_DATA_LEN).contains(&len) => len as usize,
        _ => return client_error(BAD_FORMAT, false),
    };
    let swallow = len + 2;
    let fail = |msg: &str| Command::Answer {
        bytes: reply_bytes(&Reply::ClientError(msg.to_string())),
        noreply: false,
        swallow,
    };
    let words = &t.words[3..];
    let pre = match preparse(words) {
        Ok(p) => p,
        Err(msg) => return fail(msg),
    };
    if !matches!(pre.mode, None | Some(b'E' | b'A' | b'P' | b'R' | b'S')) {
        return fail("invalid mode for ms M token");
    }
    if pre.opaque_too_long {
        return fail("opaque token too long");
    }
    let key = match Key::new(t.word(1)) {
        Ok(k) => k,
        Err(e) => {
            return Command::Unsupported {
                what: format!("key {:?}: {e}", lossy(t.word(1))),
                swallow,
            };
        }
    };
    Command::Store(StoreHead {
        target: StoreTarget::Meta {
            key,
            flags: meta_flags(words),
            client_flags: pre.client_flags,
        },
        len,
    })
}
