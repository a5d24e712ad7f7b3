//! The timeline of one execution: one line per step, readable, and hashed for
//! determinism checks.

use std::fmt::Write as _;

use crate::clock::VirtualTime;
use crate::protocol::{Reply, Request};

/// Who a trace line is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Actor {
    /// A client.
    Client(usize),
    /// The environment: faults, restarts, timers.
    World,
}

/// One line of the timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceLine {
    /// Step number (choices made before this line).
    pub step: u64,
    /// Virtual time.
    pub time: VirtualTime,
    /// Who.
    pub actor: Actor,
    /// What happened.
    pub text: String,
}

/// The timeline of an execution.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    /// The lines, in order.
    pub lines: Vec<TraceLine>,
}

impl Trace {
    /// Appends a line.
    pub fn push(&mut self, step: u64, time: VirtualTime, actor: Actor, text: String) {
        self.lines.push(TraceLine {
            step,
            time,
            actor,
            text,
        });
    }

    /// The timeline as text, one line per event.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for l in &self.lines {
            let who = match l.actor {
                Actor::Client(c) => format!("c{c}"),
                Actor::World => "--".to_string(),
            };
            let _ = writeln!(
                out,
                "{:>5}  {:>14}  {:<4} {}",
                l.step,
                l.time.to_string(),
                who,
                l.text
            );
        }
        out
    }

    /// A stable 64-bit hash (FNV-1a) of the rendered timeline.
    pub fn hash(&self) -> u64 {
        fnv1a(self.render().as_bytes())
    }

    /// The index of the first line where two traces differ.
    pub fn first_divergence(&self, other: &Trace) -> Option<usize> {
        first_difference(&self.lines, &other.lines)
    }
}

/// The index of the first line where two timelines differ (one ending early differs
/// where it ended): an in-process trace's lines, or the lines `mcsim serve` traced.
pub fn first_difference<T: PartialEq>(a: &[T], b: &[T]) -> Option<usize> {
    (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i))
}

/// FNV-1a, 64 bits: stable across platforms and Rust versions.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h = Fnv1a::new();
    h.write(bytes);
    h.finish()
}

/// Streaming [`fnv1a`]: the same hash of the concatenation of every write, without
/// collecting the bytes (`write!` works on it too).
#[derive(Debug, Clone, Copy)]
pub struct Fnv1a(u64);

impl Fnv1a {
    /// The hash of nothing yet.
    pub fn new() -> Fnv1a {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }

    /// Hashes more bytes.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// Hashes `n` written in decimal (the bytes `write!(h, "{n}")` would hash).
    pub fn write_decimal(&mut self, n: u64) {
        self.write(crate::decimal::decimal_in(n, &mut [0; 20]));
    }

    /// The hash so far.
    pub fn finish(self) -> u64 {
        self.0
    }
}

impl Default for Fnv1a {
    fn default() -> Fnv1a {
        Fnv1a::new()
    }
}

impl std::fmt::Write for Fnv1a {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.write(s.as_bytes());
        Ok(())
    }
}

/// `data` as a quoted string, cut at 40 bytes with its length after the cut.
fn write_bytes(out: &mut String, data: &[u8]) {
    const MAX: usize = 40;
    let shown = &data[..data.len().min(MAX)];
    // ASCII is escaped here as `{:?}` escapes it, without a formatter (a server describes
    // every value it stores); anything else goes through the formatter.
    match std::str::from_utf8(shown) {
        Ok(text) if text.is_ascii() => write_ascii_quoted(out, text),
        _ => {
            let _ = write!(out, "{:?}", String::from_utf8_lossy(shown));
        }
    }
    if data.len() > MAX {
        out.push_str("…(");
        write_decimal(out, data.len() as u64, 0);
        out.push_str(" bytes)");
    }
}

/// ASCII `text` quoted and escaped as `{:?}` writes a `str`: runs of printable
/// characters other than a quote or a backslash as they are.
fn write_ascii_quoted(out: &mut String, text: &str) {
    out.push('"');
    let mut from = 0;
    for (i, b) in text.bytes().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\t' => "\\t",
            b'\r' => "\\r",
            b'\n' => "\\n",
            b'\0' => "\\0",
            b' '..=b'~' => continue,
            // Other control characters: `\u{1b}`, as `{:?}` writes them.
            _ => "",
        };
        out.push_str(&text[from..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{{{b:x}}}");
        } else {
            out.push_str(escape);
        }
        from = i + 1;
    }
    out.push_str(&text[from..]);
    out.push('"');
}

/// `n` in decimal, right-aligned in `width` characters, at the end of `out` (as
/// `{n:>width$}` writes it, without a formatter).
pub fn write_decimal(out: &mut String, n: u64, width: usize) {
    let mut buf = [0; 20];
    let digits = crate::decimal::decimal_in(n, &mut buf);
    for _ in digits.len()..width {
        out.push(' ');
    }
    // Decimal digits are ASCII.
    out.extend(digits.iter().map(|&d| char::from(d)));
}

/// A key as the timeline shows it, at the end of `out`.
fn write_key(out: &mut String, key: &crate::memcache::Key) {
    write_lossy(out, key.as_bytes());
}

/// `bytes` as text, invalid UTF-8 replaced as [`String::from_utf8_lossy`] replaces it
/// (valid text, the usual case, checked and copied without it).
pub fn write_lossy(out: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(text) => out.push_str(text),
        Err(_) => out.push_str(&String::from_utf8_lossy(bytes)),
    }
}

/// Each of `items` written by `write`, a space between two.
fn write_spaced<T>(out: &mut String, items: &[T], write: impl Fn(&mut String, &T)) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        write(out, item);
    }
}

/// A request in one short line, e.g. `add lock_x "1" T10`.
pub fn describe_request(r: &Request) -> String {
    let mut s = String::new();
    write_request(&mut s, r);
    s
}

/// [`describe_request`], written at the end of `out` (no string of its own: the server
/// describes every command it serves).
pub fn write_request(out: &mut String, r: &Request) {
    let keys = |out: &mut String| write_spaced(out, r.keys(), write_key);
    out.push_str(r.name());
    match r {
        Request::Store {
            mode,
            flags,
            exptime,
            data,
            ..
        } => {
            out.push(' ');
            keys(out);
            out.push(' ');
            write_bytes(out, data);
            if let crate::protocol::StoreMode::Cas(c) = mode {
                let _ = write!(out, " cas={c}");
            }
            if exptime.0 != 0 {
                let _ = write!(out, " T{}", exptime.0);
            }
            if *flags != 0 {
                let _ = write!(out, " F{flags}");
            }
        }
        Request::Arith { delta, .. } => {
            out.push(' ');
            keys(out);
            let _ = write!(out, " {delta}");
        }
        Request::Touch { exptime, .. } | Request::Gat { exptime, .. } => {
            out.push(' ');
            keys(out);
            let _ = write!(out, " T{}", exptime.0);
        }
        Request::FlushAll { delay, .. } => {
            if let Some(d) = delay {
                let _ = write!(out, " {d}");
            }
        }
        Request::Meta { flags, data, .. } => {
            out.push(' ');
            keys(out);
            if let Some(d) = data {
                out.push(' ');
                write_bytes(out, d);
            }
            out.push(' ');
            write_spaced(out, flags, |o, f| _ = write!(o, "{f}"));
        }
        Request::StatsGroup(group) => {
            out.push(' ');
            out.push_str(group.name());
        }
        Request::StatsReset => out.push_str(" reset"),
        _ if r.keys().is_empty() => {}
        _ => {
            out.push(' ');
            keys(out);
        }
    }
}

/// A reply in one short line, e.g. `STORED`, `HIT "5" cas=3`, `MISS`.
pub fn describe_reply(r: &Reply) -> String {
    let mut s = String::new();
    write_reply(&mut s, r);
    s
}

/// [`describe_reply`], written at the end of `out`.
pub fn write_reply(out: &mut String, r: &Reply) {
    let word = match r {
        Reply::Values(v) if v.is_empty() => "MISS",
        Reply::Values(v) => {
            for (i, e) in v.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if v.len() > 1 {
                    write_key(out, &e.key);
                    out.push('=');
                }
                out.push_str("HIT ");
                write_bytes(out, &e.data);
                if let Some(c) = e.cas {
                    let _ = write!(out, " cas={c}");
                }
            }
            return;
        }
        Reply::Stored => "STORED",
        Reply::NotStored => "NOT_STORED",
        Reply::Exists => "EXISTS",
        Reply::NotFound => "NOT_FOUND",
        Reply::Deleted => "DELETED",
        Reply::Touched => "TOUCHED",
        Reply::Ok => "OK",
        Reply::Reset => "RESET",
        Reply::Number(n) => {
            write_decimal(out, *n, 0);
            return;
        }
        Reply::Error => "ERROR",
        Reply::ClientError(m) => {
            let _ = write!(out, "CLIENT_ERROR {m}");
            return;
        }
        Reply::ServerError(m) => {
            let _ = write!(out, "SERVER_ERROR {m}");
            return;
        }
        Reply::Version(v) => {
            let _ = write!(out, "VERSION {v}");
            return;
        }
        Reply::Stats(s) => {
            let _ = write!(out, "STATS ({} lines)", s.len());
            return;
        }
        Reply::Meta(m) => {
            out.push_str(m.code.as_str());
            for f in &m.flags {
                let _ = write!(out, " {f}");
            }
            if let Some(v) = &m.value {
                out.push(' ');
                write_bytes(out, v);
            }
            return;
        }
        Reply::Debug(line) => {
            write_bytes(out, line);
            return;
        }
        Reply::Silent => "(no reply)",
    };
    out.push_str(word);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(wire: &[u8]) -> Request {
        crate::codec::read_request(wire).unwrap().unwrap().0
    }

    #[test]
    fn a_value_is_escaped_as_the_formatter_escapes_it() {
        let formatter = |data: &[u8]| format!("{:?}", String::from_utf8_lossy(data));
        let mine = |data: &[u8]| {
            let mut out = String::new();
            write_bytes(&mut out, data);
            out
        };
        // Every byte alone, ASCII or not, and runs that mix escapes with plain text.
        for b in 0..=255u8 {
            assert_eq!(mine(&[b]), formatter(&[b]), "byte {b:#x}");
        }
        let mixed: [&[u8]; 6] = [
            b"plain text",
            b"a \"quoted\" \\ path\t\r\n\0end",
            b"\x01\x1b[0m\x7f",
            b"",
            "caf\u{e9} \u{301}".as_bytes(),
            b"\xff\xfe half",
        ];
        for data in mixed {
            assert_eq!(mine(data), formatter(data), "{data:?}");
        }
        let mut key = String::new();
        write_lossy(&mut key, b"k\xffey");
        assert_eq!(key, String::from_utf8_lossy(b"k\xffey"));
    }

    #[test]
    fn a_stats_group_is_traced_by_its_name() {
        use crate::protocol::StatsGroup;
        assert_eq!(describe_request(&Request::Stats), "stats");
        for (group, line) in [
            (StatsGroup::Settings, "stats settings"),
            (StatsGroup::Items, "stats items"),
            (StatsGroup::Slabs, "stats slabs"),
        ] {
            assert_eq!(describe_request(&Request::StatsGroup(group)), line);
        }
        assert_eq!(describe_request(&Request::StatsReset), "stats reset");
    }

    #[test]
    fn requests_and_replies_in_one_line() {
        let cases: [(&[u8], &str); 6] = [
            (b"cas k 1 2 3 99\r\nabc\r\n", "cas k \"abc\" cas=99 T2 F1"),
            (
                b"add k 0 0 50\r\n01234567890123456789012345678901234567890123456789\r\n",
                "add k \"0123456789012345678901234567890123456789\"…(50 bytes)",
            ),
            (b"gat 10 a b\r\n", "gat a b T10"),
            (b"flush_all 5\r\n", "flush_all 5"),
            (b"ms k 2 T5\r\nab\r\n", "ms k \"ab\" T5"),
            (b"version\r\n", "version"),
        ];
        for (wire, line) in cases {
            assert_eq!(describe_request(&request(wire)), line);
        }
        let gets = request(b"gets a b\r\n");
        let values = b"VALUE a 0 1 5\r\nx\r\nVALUE b 3 2\r\nyy\r\nEND\r\n";
        let reply = crate::codec::read_reply(values, &gets).unwrap().unwrap().0;
        assert_eq!(describe_reply(&reply), "a=HIT \"x\" cas=5, b=HIT \"yy\"");
        assert_eq!(describe_reply(&Reply::Number(12)), "12");
        assert_eq!(describe_reply(&Reply::Values(Vec::new())), "MISS");
    }

    #[test]
    fn decimals_and_times_as_formatted() {
        for n in [0, 7, 10, 65_535, 123_456_789, u64::MAX] {
            for width in [0, 1, 8, 25] {
                let mut s = String::new();
                write_decimal(&mut s, n, width);
                assert_eq!(s, format!("{n:>width$}"));
            }
        }
        let times = [
            (0, "0.000000"),
            (1, "0.000001"),
            (999_999, "0.999999"),
            (1_000_000, "1.000000"),
            (12_000_345, "12.000345"),
            (u64::MAX, "18446744073709.551615"),
        ];
        for (us, text) in times {
            let mut s = String::new();
            VirtualTime(us).write_to(&mut s).unwrap();
            assert_eq!(s, text);
            assert_eq!(VirtualTime(us).to_string(), text);
        }
        for data in [
            &b"plain text 1"[..],
            b"a \"quote\"",
            b"back\\slash",
            b"\xff\x00",
            b"tab\there",
            b"\xc3\xa9t\xc3\xa9",
        ] {
            let mut s = String::new();
            write_bytes(&mut s, data);
            assert_eq!(s, format!("{:?}", String::from_utf8_lossy(data)));
        }
    }

    #[test]
    fn decimal_hashes_like_formatting() {
        for n in [0, 7, 10, 65_535, u64::MAX] {
            let mut direct = Fnv1a::new();
            direct.write_decimal(n);
            let mut formatted = Fnv1a::new();
            write!(formatted, "{n}").unwrap();
            assert_eq!(direct.finish(), formatted.finish());
        }
    }
}
