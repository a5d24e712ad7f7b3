//! Replies as memcached writes them on the wire.

use crate::protocol::{MetaCode, MetaReply, Reply, ValueEntry};

/// Appends the bytes memcached sends for `reply` ([`Reply::Silent`] sends nothing).
pub fn write_reply(reply: &Reply, out: &mut Vec<u8>) {
    let line = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(s.as_bytes());
        out.extend_from_slice(b"\r\n");
    };
    match reply {
        Reply::Stored => line(out, "STORED"),
        Reply::NotStored => line(out, "NOT_STORED"),
        Reply::Exists => line(out, "EXISTS"),
        Reply::NotFound => line(out, "NOT_FOUND"),
        Reply::Deleted => line(out, "DELETED"),
        Reply::Touched => line(out, "TOUCHED"),
        Reply::Ok => line(out, "OK"),
        Reply::Reset => line(out, "RESET"),
        Reply::Error => line(out, "ERROR"),
        Reply::Values(entries) => {
            for entry in entries {
                write_value(entry, out);
            }
            line(out, "END");
        }
        Reply::Number(n) => line(out, &n.to_string()),
        Reply::ClientError(msg) => with_message(out, "CLIENT_ERROR", msg),
        Reply::ServerError(msg) => with_message(out, "SERVER_ERROR", msg),
        Reply::Version(v) => line(out, &format!("VERSION {v}")),
        Reply::Stats(stats) => {
            for (name, value) in stats {
                line(out, &format!("STAT {name} {value}"));
            }
            line(out, "END");
        }
        Reply::Meta(meta) => write_meta(meta, out),
        Reply::Debug(bytes) => {
            out.extend_from_slice(bytes);
            out.extend_from_slice(b"\r\n");
        }
        Reply::Silent => {}
    }
}

/// The bytes memcached sends for `reply`.
pub fn reply_bytes(reply: &Reply) -> Vec<u8> {
    let mut out = Vec::new();
    write_reply(reply, &mut out);
    out
}

fn with_message(out: &mut Vec<u8>, word: &str, msg: &str) {
    out.extend_from_slice(word.as_bytes());
    if !msg.is_empty() {
        out.push(b' ');
        out.extend_from_slice(msg.as_bytes());
    }
    out.extend_from_slice(b"\r\n");
}

fn write_value(entry: &ValueEntry, out: &mut Vec<u8>) {
    out.extend_from_slice(b"VALUE ");
    out.extend_from_slice(entry.key.as_bytes());
    out.extend_from_slice(format!(" {} {}", entry.flags, entry.data.len()).as_bytes());
    if let Some(cas) = entry.cas {
        out.extend_from_slice(format!(" {cas}").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&entry.data);
    out.extend_from_slice(b"\r\n");
}

fn write_meta(meta: &MetaReply, out: &mut Vec<u8>) {
    out.extend_from_slice(meta.code.as_str().as_bytes());
    let value = match (&meta.code, &meta.value) {
        (MetaCode::Value, Some(v)) => Some(v.as_slice()),
        (MetaCode::Value, None) => Some(&[][..]),
        _ => None,
    };
    if let Some(v) = value {
        out.extend_from_slice(format!(" {}", v.len()).as_bytes());
    }
    for flag in &meta.flags {
        out.push(b' ');
        flag.write_to(out);
    }
    out.extend_from_slice(b"\r\n");
    if let Some(v) = value {
        out.extend_from_slice(v);
        out.extend_from_slice(b"\r\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::MetaFlag;

    #[test]
    fn shapes() {
        let values = Reply::Values(vec![ValueEntry {
            key: crate::memcache::Key::new("k").unwrap(),
            flags: 3,
            data: b"9 ".to_vec(),
            cas: Some(12),
        }]);
        assert_eq!(reply_bytes(&values), b"VALUE k 3 2 12\r\n9 \r\nEND\r\n");
        assert_eq!(reply_bytes(&Reply::Number(7)), b"7\r\n");
        assert_eq!(reply_bytes(&Reply::Silent), b"");
        let va = Reply::Meta(MetaReply {
            code: MetaCode::Value,
            flags: vec![MetaFlag::with(b'c', 5), MetaFlag::bare(b'W')],
            value: Some(b"ab".to_vec()),
        });
        assert_eq!(reply_bytes(&va), b"VA 2 c5 W\r\nab\r\n");
    }
}
