//! Differential test: the simulated server against a real memcached 1.6.18, byte for byte.
//!
//! The test starts its own `memcached -m 64 -I 1m` (background LRU and slab threads off,
//! see below), runs MEMCACHED.md's time-independent cases, then thousands of random command
//! sequences (seeded `ChaCha8Rng`) over one connection to it and over one [`Session`] to a
//! simulated [`Server`] with the same settings. Both see the identical byte stream from the
//! start, so their cas counters stay in step; each sequence starts with `flush_all`. Every
//! batch of bytes must produce identical reply bytes (and the same connection close).
//!
//! Time is kept out: TTLs are 0, negative, absolute past or long enough not to expire while
//! the test runs, and nothing reports a remaining TTL or the server's clock.
//!
//! Settings: `MCSIM_DIFF_SEQUENCES` (default 5000), `MCSIM_DIFF_SEED`, `MCSIM_DIFF_META`
//! (`0` leaves meta commands out; by default they are in when the simulator answers `mg`).
//! Without a memcached binary the test prints a SKIPPED line, unless `CI` is set.

use std::collections::BTreeMap;
use std::time::Instant;

use mcsim::codec::Session;
use mcsim::{Server, ServerConfig, VirtualTime};
use mcsim_real::{MemcachedDaemon, RawEnd, TcpClient};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Left out of the random commands on purpose:
///
/// - incr/decr/ma of a stored number of 2^63 or more, and of a value made only of spaces.
///   memcached 1.6.18 reads the number with C string functions on item memory that is not
///   NUL-terminated: it looks for a minus sign past the end of a huge number, and skips the
///   value's CR LF after leading whitespace and reads on. The answer depends on bytes left
///   in the slab chunk by earlier items, not on the byte stream. The simulator reads only
///   the value (a huge number is accepted, whitespace alone is non-numeric).
/// - incr/decr/ma pipelined after an `mg` hit whose reply is not yet written. That reply
///   holds a reference to the item, so memcached cannot rewrite the number in place and
///   stores it unpadded; the simulator does not track such references and pads in place.
pub(crate) const LEFT_OUT: &str = "incr/decr/ma of numbers >= 2^63 or of whitespace-only values; \
                        arithmetic pipelined after an mg hit";

pub(crate) const DEFAULT_SEQUENCES: usize = 5000;
pub(crate) const DEFAULT_SEED: u64 = 0x6d63_7369_6d00_0001;
/// `-I 1m`.
pub(crate) const ITEM_MAX: usize = 1024 * 1024;
/// Bytes of an item besides key and value (header with cas, key NUL, CRLF).
pub(crate) const ITEM_OVERHEAD: usize = 59;

pub(crate) fn env_number(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

/// Bytes shown readably in a report, cut when long.
pub(crate) fn show(bytes: &[u8]) -> String {
    let mut s = String::new();
    for &b in bytes.iter().take(600) {
        match b {
            b'\r' => s.push_str("\\r"),
            b'\n' => s.push_str("\\n"),
            b'\t' => s.push_str("\\t"),
            0x20..=0x7e => s.push(b as char),
            _ => s.push_str(&format!("\\x{b:02x}")),
        }
    }
    if bytes.len() > 600 {
        s.push_str(&format!("… ({} bytes)", bytes.len()));
    }
    s
}

/// [`show`], cut shorter.
pub(crate) fn show_short(bytes: &[u8]) -> String {
    let s = show(&bytes[..bytes.len().min(160)]);
    if bytes.len() > 160 {
        format!("{s}… ({} bytes)", bytes.len())
    } else {
        s
    }
}

mod binary;
mod framing;
mod generator;
mod malformed;
mod scripts;
mod servers;

#[allow(unused_imports)]
use binary::*;
#[allow(unused_imports)]
use framing::*;
#[allow(unused_imports)]
use generator::*;
#[allow(unused_imports)]
use malformed::*;
#[allow(unused_imports)]
use scripts::*;
#[allow(unused_imports)]
use servers::*;
