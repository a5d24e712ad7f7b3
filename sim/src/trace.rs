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
        let n = self.lines.len().max(other.lines.len());
        (0..n).find(|&i| self.lines.get(i) != other.lines.get(i))
    }
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
        self.write(crate::memcache::decimal_in(n, &mut [0; 20]));
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

fn show_bytes(data: &[u8]) -> String {
    const MAX: usize = 40;
    let text = String::from_utf8_lossy(&data[..data.len().min(MAX)]);
    if data.len() > MAX {
        format!("{text:?}…({} bytes)", data.len())
    } else {
        format!("{text:?}")
    }
}

/// A request in one short line, e.g. `add lock_x "1" T10`.
pub fn describe_request(r: &Request) -> String {
    let keys = r
        .keys()
        .iter()
        .map(|k| k.to_string())
        .collect::<Vec<_>>()
        .join(" ");
    match r {
        Request::Store {
            mode,
            flags,
            exptime,
            data,
            ..
        } => {
            let mut s = format!("{} {keys} {}", mode.name(), show_bytes(data));
            if let crate::protocol::StoreMode::Cas(c) = mode {
                let _ = write!(s, " cas={c}");
            }
            if exptime.0 != 0 {
                let _ = write!(s, " T{}", exptime.0);
            }
            if *flags != 0 {
                let _ = write!(s, " F{flags}");
            }
            s
        }
        Request::Arith { delta, .. } => format!("{} {keys} {delta}", r.name()),
        Request::Touch { exptime, .. } | Request::Gat { exptime, .. } => {
            format!("{} {keys} T{}", r.name(), exptime.0)
        }
        Request::FlushAll { delay, .. } => match delay {
            Some(d) => format!("flush_all {d}"),
            None => "flush_all".into(),
        },
        Request::Meta { flags, data, .. } => {
            let f = flags
                .iter()
                .map(|f| f.to_string())
                .collect::<Vec<_>>()
                .join(" ");
            match data {
                Some(d) => format!("{} {keys} {} {f}", r.name(), show_bytes(d)),
                None => format!("{} {keys} {f}", r.name()),
            }
        }
        _ if keys.is_empty() => r.name().to_string(),
        _ => format!("{} {keys}", r.name()),
    }
}

/// A reply in one short line, e.g. `STORED`, `HIT "5" cas=3`, `MISS`.
pub fn describe_reply(r: &Reply) -> String {
    match r {
        Reply::Values(v) if v.is_empty() => "MISS".into(),
        Reply::Values(v) => v
            .iter()
            .map(|e| {
                let mut s = format!("HIT {}", show_bytes(&e.data));
                if let Some(c) = e.cas {
                    let _ = write!(s, " cas={c}");
                }
                if v.len() > 1 {
                    s = format!("{}={s}", String::from_utf8_lossy(e.key.as_bytes()));
                }
                s
            })
            .collect::<Vec<_>>()
            .join(", "),
        Reply::Stored => "STORED".into(),
        Reply::NotStored => "NOT_STORED".into(),
        Reply::Exists => "EXISTS".into(),
        Reply::NotFound => "NOT_FOUND".into(),
        Reply::Deleted => "DELETED".into(),
        Reply::Touched => "TOUCHED".into(),
        Reply::Ok => "OK".into(),
        Reply::Reset => "RESET".into(),
        Reply::Number(n) => n.to_string(),
        Reply::Error => "ERROR".into(),
        Reply::ClientError(m) => format!("CLIENT_ERROR {m}"),
        Reply::ServerError(m) => format!("SERVER_ERROR {m}"),
        Reply::Version(v) => format!("VERSION {v}"),
        Reply::Stats(s) => format!("STATS ({} lines)", s.len()),
        Reply::Meta(m) => {
            let mut s = m.code.as_str().to_string();
            for f in &m.flags {
                let _ = write!(s, " {f}");
            }
            if let Some(v) = &m.value {
                let _ = write!(s, " {}", show_bytes(v));
            }
            s
        }
        Reply::Debug(line) => show_bytes(line),
        Reply::Silent => "(no reply)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
