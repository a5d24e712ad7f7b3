//! Requests as a client sends them.
//!
//! The bytes are what memcached's own clients send: `get a b\r\n`,
//! `set k 0 0 3\r\nabc\r\n`, `cas k 0 0 3 12\r\nabc\r\n`, `flush_all 10 noreply\r\n`,
//! `mg k v c N30\r\n`, `ms k 4 T60 C12\r\ndata\r\n`. A request the text protocol cannot
//! carry (a `get` without keys, a meta flag token holding a space) is written as it is and
//! the server decides what it means.

use crate::protocol::{MetaCommand, MetaFlag, Request, StoreMode};

/// Appends the bytes a client sends for `request`.
pub fn write_request(request: &Request, out: &mut Vec<u8>) {
    let word = |out: &mut Vec<u8>, w: &[u8]| {
        out.push(b' ');
        out.extend_from_slice(w);
    };
    let noreply = |out: &mut Vec<u8>, yes: bool| {
        if yes {
            out.extend_from_slice(b" noreply");
        }
    };
    out.extend_from_slice(request.name().as_bytes());
    match request {
        Request::Get { keys, .. } => {
            for k in keys {
                word(out, k.as_bytes());
            }
        }
        Request::Gat { exptime, keys, .. } => {
            word(out, exptime.to_string().as_bytes());
            for k in keys {
                word(out, k.as_bytes());
            }
        }
        Request::Store {
            mode,
            key,
            flags,
            exptime,
            data,
            noreply: nr,
        } => {
            word(out, key.as_bytes());
            out.extend_from_slice(format!(" {flags} {exptime} {}", data.len()).as_bytes());
            if let StoreMode::Cas(unique) = mode {
                out.extend_from_slice(format!(" {unique}").as_bytes());
            }
            noreply(out, *nr);
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(data);
        }
        Request::Arith {
            key,
            delta,
            noreply: nr,
            ..
        } => {
            word(out, key.as_bytes());
            out.extend_from_slice(format!(" {delta}").as_bytes());
            noreply(out, *nr);
        }
        Request::Delete { key, noreply: nr } => {
            word(out, key.as_bytes());
            noreply(out, *nr);
        }
        Request::Touch {
            key,
            exptime,
            noreply: nr,
        } => {
            word(out, key.as_bytes());
            out.extend_from_slice(format!(" {exptime}").as_bytes());
            noreply(out, *nr);
        }
        Request::FlushAll { delay, noreply: nr } => {
            if let Some(d) = delay {
                out.extend_from_slice(format!(" {d}").as_bytes());
            }
            noreply(out, *nr);
        }
        Request::Meta {
            command,
            key,
            flags,
            data,
        } => {
            if let Some(k) = key {
                word(out, k.as_bytes());
            }
            if *command == MetaCommand::Set {
                let len = data.as_ref().map_or(0, Vec::len);
                out.extend_from_slice(format!(" {len}").as_bytes());
            }
            write_flags(flags, out);
            if *command == MetaCommand::Set {
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(data.as_deref().unwrap_or(&[]));
            }
        }
        Request::Stats | Request::Version => {}
        Request::StatsReset => out.extend_from_slice(b" reset"),
        Request::StatsGroup(group) => {
            out.push(b' ');
            out.extend_from_slice(group.name().as_bytes());
        }
        Request::Verbosity { level, noreply: nr } => {
            out.extend_from_slice(format!(" {level}").as_bytes());
            noreply(out, *nr);
        }
    }
    out.extend_from_slice(b"\r\n");
}

fn write_flags(flags: &[MetaFlag], out: &mut Vec<u8>) {
    for f in flags {
        out.push(b' ');
        f.write_to(out);
    }
}

/// The bytes a client sends for `request`.
pub fn request_bytes(request: &Request) -> Vec<u8> {
    let mut out = Vec::new();
    write_request(request, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memcache::{Exptime, Key};

    fn k(s: &str) -> Key {
        Key::new(s).unwrap()
    }

    #[test]
    fn shapes() {
        let get = Request::Get {
            keys: vec![k("a"), k("b")],
            with_cas: false,
        };
        assert_eq!(request_bytes(&get), b"get a b\r\n");
        let cas = Request::Store {
            mode: StoreMode::Cas(12),
            key: k("k"),
            flags: 0,
            exptime: Exptime(0),
            data: b"abc".to_vec(),
            noreply: true,
        };
        assert_eq!(request_bytes(&cas), b"cas k 0 0 3 12 noreply\r\nabc\r\n");
        let ms = Request::Meta {
            command: MetaCommand::Set,
            key: Some(k("k")),
            flags: vec![MetaFlag::with(b'T', 60), MetaFlag::with(b'C', 12)],
            data: Some(b"data".to_vec()),
        };
        assert_eq!(request_bytes(&ms), b"ms k 4 T60 C12\r\ndata\r\n");
        let flush = Request::FlushAll {
            delay: Some(10),
            noreply: true,
        };
        assert_eq!(request_bytes(&flush), b"flush_all 10 noreply\r\n");
        let mn = Request::Meta {
            command: MetaCommand::Noop,
            key: None,
            flags: vec![],
            data: None,
        };
        assert_eq!(request_bytes(&mn), b"mn\r\n");
    }
}
