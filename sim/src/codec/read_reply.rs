//! The client side of the text protocol: a server's reply bytes back into a [`Reply`].
//!
//! A reply's shape depends on the request it answers (`VALUE … END` for a retrieval, a bare
//! number for `incr`, `STAT … END`, meta codes), so [`read_reply`] takes the request.
//! It works on whatever has arrived so far: `Ok(None)` means the reply is not complete yet.
//! `ERROR`, `CLIENT_ERROR …` and `SERVER_ERROR …` are accepted as the answer to any
//! request. A classic request sent with `noreply` gets [`Reply::Silent`] without reading
//! anything; a meta request's `q` flag only hides some replies, so meta replies are always
//! read.

use crate::memcache::{Key, McError};
use crate::protocol::{MetaCode, MetaCommand, MetaFlag, MetaReply, Reply, Request, ValueEntry};

/// Reads the reply to `request` from the start of `buf`: `Ok(None)` until it is complete,
/// then the reply and the number of bytes it used.
pub fn read_reply(buf: &[u8], request: &Request) -> Result<Option<(Reply, usize)>, McError> {
    if request.is_noreply() && !matches!(request, Request::Meta { .. }) {
        return Ok(Some((Reply::Silent, 0)));
    }
    let Some((first, pos)) = next_line(buf, 0) else {
        return Ok(None);
    };
    if let Some(reply) = error_line(first) {
        return Ok(Some((reply, pos)));
    }
    match request {
        Request::Get { .. } | Request::Gat { .. } => read_values(buf),
        Request::Stats | Request::StatsGroup(_) => read_stats(buf),
        Request::Meta {
            command: MetaCommand::Debug,
            ..
        } if first.starts_with(b"ME ") => Ok(Some((Reply::Debug(first.to_vec()), pos))),
        Request::Meta { .. } => read_meta(first, buf, pos),
        Request::Arith { .. } if !first.is_empty() && first.iter().all(u8::is_ascii_digit) => {
            let n = std::str::from_utf8(first)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| unexpected(first))?;
            Ok(Some((Reply::Number(n), pos)))
        }
        _ => simple_line(first)
            .map(|r| Some((r, pos)))
            .ok_or_else(|| unexpected(first)),
    }
}

/// The line starting at `from`, without its line end, and the offset after it.
fn next_line(buf: &[u8], from: usize) -> Option<(&[u8], usize)> {
    let rest = buf.get(from..)?;
    let nl = rest.iter().position(|&b| b == b'\n')?;
    let line = &rest[..nl];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    Some((line, from + nl + 1))
}

fn unexpected(line: &[u8]) -> McError {
    McError::Unexpected(format!("reply line {:?}", String::from_utf8_lossy(line)))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `ERROR`, `CLIENT_ERROR msg`, `SERVER_ERROR msg`.
fn error_line(line: &[u8]) -> Option<Reply> {
    if line == b"ERROR" {
        return Some(Reply::Error);
    }
    let message = |prefix: &[u8]| -> Option<String> {
        let rest = line.strip_prefix(prefix)?;
        match rest.split_first() {
            None => Some(String::new()),
            Some((b' ', msg)) => Some(text(msg)),
            Some(_) => None,
        }
    };
    if let Some(m) = message(b"CLIENT_ERROR") {
        return Some(Reply::ClientError(m));
    }
    message(b"SERVER_ERROR").map(Reply::ServerError)
}

/// The one-line replies.
fn simple_line(line: &[u8]) -> Option<Reply> {
    Some(match line {
        b"STORED" => Reply::Stored,
        b"NOT_STORED" => Reply::NotStored,
        b"EXISTS" => Reply::Exists,
        b"NOT_FOUND" => Reply::NotFound,
        b"DELETED" => Reply::Deleted,
        b"TOUCHED" => Reply::Touched,
        b"OK" => Reply::Ok,
        b"RESET" => Reply::Reset,
        _ => {
            return line
                .strip_prefix(b"VERSION ")
                .map(|v| Reply::Version(text(v)));
        }
    })
}

fn number<T: std::str::FromStr>(word: &[u8]) -> Option<T> {
    std::str::from_utf8(word).ok()?.parse().ok()
}

/// `VALUE key flags bytes [cas]` blocks, then `END`.
fn read_values(buf: &[u8]) -> Result<Option<(Reply, usize)>, McError> {
    let mut entries = Vec::new();
    let mut pos = 0;
    loop {
        let Some((line, after)) = next_line(buf, pos) else {
            return Ok(None);
        };
        if line == b"END" {
            return Ok(Some((Reply::Values(entries), after)));
        }
        let words: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
        let (key, flags, len, cas) = match words.as_slice() {
            [b"VALUE", key, flags, len] => (key, number(flags), number::<usize>(len), None),
            [b"VALUE", key, flags, len, cas] => (
                key,
                number(flags),
                number::<usize>(len),
                Some(number(cas).ok_or_else(|| unexpected(line))?),
            ),
            _ => return Err(unexpected(line)),
        };
        let (Some(flags), Some(len)) = (flags, len) else {
            return Err(unexpected(line));
        };
        let Some(block) = buf.get(after..after + len + 2) else {
            return Ok(None);
        };
        if !block.ends_with(b"\r\n") {
            return Err(McError::Unexpected("value not followed by CRLF".into()));
        }
        entries.push(ValueEntry {
            key: Key::new(key).map_err(|e| McError::Unexpected(format!("VALUE line: {e}")))?,
            flags,
            data: block[..len].to_vec(),
            cas,
        });
        pos = after + len + 2;
    }
}

/// `STAT name value` lines, then `END`.
fn read_stats(buf: &[u8]) -> Result<Option<(Reply, usize)>, McError> {
    let mut stats = Vec::new();
    let mut pos = 0;
    loop {
        let Some((line, after)) = next_line(buf, pos) else {
            return Ok(None);
        };
        if line == b"END" {
            return Ok(Some((Reply::Stats(stats), after)));
        }
        let rest = line
            .strip_prefix(b"STAT ")
            .ok_or_else(|| unexpected(line))?;
        let space = rest.iter().position(|&b| b == b' ');
        let (name, value) = match space {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &[][..]),
        };
        stats.push((text(name), text(value)));
        pos = after;
    }
}

/// A meta reply: a code, return flags, and for `VA` a data block.
fn read_meta(first: &[u8], buf: &[u8], after: usize) -> Result<Option<(Reply, usize)>, McError> {
    let mut words = first.split(|&b| b == b' ').filter(|w| !w.is_empty());
    let code = words
        .next()
        .and_then(MetaCode::parse)
        .ok_or_else(|| unexpected(first))?;
    let mut value = None;
    let mut end = after;
    if code == MetaCode::Value {
        let len: usize = words
            .next()
            .and_then(number)
            .ok_or_else(|| unexpected(first))?;
        let Some(block) = buf.get(after..after + len + 2) else {
            return Ok(None);
        };
        if !block.ends_with(b"\r\n") {
            return Err(McError::Unexpected("value not followed by CRLF".into()));
        }
        value = Some(block[..len].to_vec());
        end = after + len + 2;
    }
    let flags = words.map(MetaFlag::parse).collect();
    Ok(Some((Reply::Meta(MetaReply { code, flags, value }), end)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memcache::Key;

    fn get() -> Request {
        Request::Get {
            keys: vec![Key::new("a").unwrap()],
            with_cas: true,
        }
    }

    #[test]
    fn partial_values() {
        let bytes = b"VALUE a 0 3 7\r\nabc\r\nEND\r\n";
        for cut in 0..bytes.len() {
            assert_eq!(
                read_reply(&bytes[..cut], &get()).unwrap(),
                None,
                "cut {cut}"
            );
        }
        let (reply, used) = read_reply(bytes, &get()).unwrap().unwrap();
        assert_eq!(used, bytes.len());
        assert_eq!(
            reply,
            Reply::Values(vec![ValueEntry {
                key: Key::new("a").unwrap(),
                flags: 0,
                data: b"abc".to_vec(),
                cas: Some(7)
            }])
        );
        let err = read_reply(b"CLIENT_ERROR bad command line format\r\n", &get());
        assert_eq!(
            err.unwrap().unwrap().0,
            Reply::ClientError("bad command line format".into())
        );
    }
}
