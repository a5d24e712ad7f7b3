//! Chunked items against a real memcached 1.6: values around every chunk boundary take
//! the same chunks in the same slab classes, and under memory pressure the same keys
//! survive.
//!
//! The boundaries: an item of exactly half a page (the last one not chunked) and one byte
//! more; a value that fills its first chunk exactly (524,240 bytes with its CRLF) and one
//! byte more; a last chunk that just fits the 96-byte class and one byte more (and the
//! same at the 120-byte class); two full chunks; a key whose chunked header just fits the
//! 120-byte class and one byte longer; client flags (4 more header bytes).
//!
//! Each size runs on a fresh server of each kind. Without a memcached binary the test
//! prints a SKIPPED line, unless `CI` is set.

use std::collections::BTreeMap;

use mcsim::codec::read_request;
use mcsim::protocol::{Reply, Request};
use mcsim::{Server, ServerConfig, VirtualTime};
use mcsim_real::MemcachedDaemon;

/// Value bytes of a full chunk (a 512 KiB chunk less its 48-byte header), CRLF included.
const FULL: usize = 524_288 - 48;

/// (key, flags, value bytes without CRLF) at each boundary.
fn cases() -> Vec<(String, u32, usize)> {
    let k = |n: usize| "k".repeat(n);
    let mut v = Vec::new();
    for value in [
        // Item of 512 KiB with a 1-byte key: the last unchunked size, and one more.
        524_228,
        524_229,
        // The first chunk exactly full, and one byte over.
        FULL - 2,
        FULL - 1,
        // A last chunk of 48 bytes (96-byte class) and of 49 (120-byte class).
        FULL - 2 + 48,
        FULL - 2 + 49,
        // A last chunk at the 120/152 boundary.
        FULL - 2 + 72,
        FULL - 2 + 73,
        // 600 KB, and two full chunks, and one byte more.
        600_000,
        2 * FULL - 2,
        2 * FULL - 1,
    ] {
        v.push((k(1), 0, value));
    }
    // The chunked header (key, NUL, item, item_chunk, cas) at 120 bytes, and 121.
    v.push((k(15), 0, 600_000));
    v.push((k(16), 0, 600_000));
    v.push((k(12), 7, 600_000));
    v.push((k(11), 7, 600_000));
    v
}

fn set_line(key: &str, flags: u32, value: usize) -> Vec<u8> {
    let mut b = format!("set {key} {flags} 0 {value}\r\n").into_bytes();
    b.extend(std::iter::repeat_n(b'x', value));
    b.extend_from_slice(b"\r\n");
    b
}

fn request(bytes: &[u8]) -> Request {
    match read_request(bytes) {
        Ok(Some((r, _))) => r,
        other => panic!("test bug: {other:?}"),
    }
}

fn daemon(args: &[&str]) -> Option<MemcachedDaemon> {
    MemcachedDaemon::start_for_test("chunk", args)
}

/// `stats slabs` of a real server: per class in use, (chunk size, pages, used chunks).
fn real_usage(d: &MemcachedDaemon) -> Vec<(u64, u64, u64)> {
    let mut conn = d.connect().expect("connect");
    let raw = conn.send_raw(b"stats slabs\r\n").expect("stats slabs");
    let text = String::from_utf8_lossy(&raw.bytes).into_owned();
    let mut by_class: BTreeMap<u32, BTreeMap<String, u64>> = BTreeMap::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let (Some("STAT"), Some(name), Some(value)) = (words.next(), words.next(), words.next())
        else {
            continue;
        };
        let Some((class, field)) = name.split_once(':') else {
            continue;
        };
        let (Ok(class), Ok(value)) = (class.parse(), value.parse()) else {
            continue;
        };
        by_class
            .entry(class)
            .or_default()
            .insert(field.to_string(), value);
    }
    by_class
        .values()
        .filter(|f| f.get("total_pages").copied().unwrap_or(0) > 0)
        .map(|f| (f["chunk_size"], f["total_pages"], f["used_chunks"]))
        .collect()
}

const SETTINGS: [&str; 4] = [
    "-I",
    "1m",
    "-o",
    "no_lru_crawler,no_lru_maintainer,no_slab_automove",
];

#[test]
fn chunked_items_take_the_same_chunks_as_on_memcached() {
    for (key, flags, value) in cases() {
        let Some(d) = daemon(&[&SETTINGS[..], &["-m", "64"]].concat()) else {
            return;
        };
        let bytes = set_line(&key, flags, value);
        let mut conn = d.connect().expect("connect");
        assert_eq!(conn.call(&request(&bytes)).expect("set"), Reply::Stored);
        let real = real_usage(&d);
        let mut sim = Server::new(ServerConfig::default().memory_mb(64), VirtualTime::ZERO);
        assert_eq!(sim.apply(request(&bytes), VirtualTime::ZERO), Reply::Stored);
        let simulated = sim.items().slab_usage();
        assert_eq!(
            simulated,
            real,
            "key of {} bytes, flags {flags}, value of {value} bytes: (chunk size, pages, used chunks) per class",
            key.len()
        );
    }
}

#[test]
fn under_memory_pressure_the_same_chunked_items_survive() {
    for (key, flags, value) in cases() {
        // 4 MiB: each class takes its first page freely, then pages run out and the
        // largest class evicts.
        let Some(d) = daemon(&[&SETTINGS[..], &["-m", "4"]].concat()) else {
            return;
        };
        let mut conn = d.connect().expect("connect");
        let mut sim = Server::new(ServerConfig::default().memory_mb(4), VirtualTime::ZERO);
        let keys: Vec<String> = (0..8).map(|i| format!("{key}{i}")).collect();
        for k in &keys {
            let bytes = set_line(k, flags, value);
            let r = conn.call(&request(&bytes)).expect("set");
            let s = sim.apply(request(&bytes), VirtualTime::ZERO);
            assert_eq!(s, r, "set {k} of {value} bytes");
        }
        let survivors = |hit: &dyn Fn(&str) -> bool| -> Vec<String> {
            keys.iter().filter(|k| hit(k)).cloned().collect()
        };
        let real = survivors(&|k| {
            let mut c = d.connect().expect("connect");
            let raw = c.send_raw(format!("mg {k}\r\n").as_bytes()).expect("mg");
            raw.bytes.starts_with(b"HD")
        });
        let simulated = survivors(&|k| {
            sim.peek(
                &mcsim::memcache::Key::new(k.as_bytes()).unwrap(),
                VirtualTime::ZERO,
            )
            .is_some()
        });
        assert_eq!(
            simulated,
            real,
            "value of {value} bytes, key {}: survivors",
            key.len()
        );
        assert_eq!(
            sim.items().slab_usage(),
            real_usage(&d),
            "value of {value} bytes: slabs"
        );
    }
}
