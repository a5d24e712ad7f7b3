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
use mcsim::real::{MemcachedDaemon, RawEnd, TcpClient};
use mcsim::{Server, ServerConfig, VirtualTime};
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
const LEFT_OUT: &str = "incr/decr/ma of numbers >= 2^63 or of whitespace-only values; \
                        arithmetic pipelined after an mg hit";

const DEFAULT_SEQUENCES: usize = 5000;
const DEFAULT_SEED: u64 = 0x6d63_7369_6d00_0001;
/// `-I 1m`.
const ITEM_MAX: usize = 1024 * 1024;
/// Bytes of an item besides key and value (header with cas, key NUL, CRLF).
const ITEM_OVERHEAD: usize = 59;

fn env_number(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

/// Bytes shown readably in a report, cut when long.
fn show(bytes: &[u8]) -> String {
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
fn show_short(bytes: &[u8]) -> String {
    let s = show(&bytes[..bytes.len().min(160)]);
    if bytes.len() > 160 {
        format!("{s}… ({} bytes)", bytes.len())
    } else {
        s
    }
}

// ---------------------------------------------------------------------------------------
// The generator.

/// One batch of bytes sent at once, and the command names it holds.
struct Batch {
    bytes: Vec<u8>,
    names: Vec<&'static str>,
    /// The keys it addresses, for remembering cas uniques from its reply.
    keys: Vec<Vec<u8>>,
}

struct Generator {
    rng: ChaCha8Rng,
    meta: bool,
    keys: Vec<Vec<u8>>,
    /// Last cas unique seen per key, and every one seen.
    cas_by_key: BTreeMap<Vec<u8>, u64>,
    cas_seen: Vec<u64>,
}

/// Relative, absolute or wrapping exptimes whose outcome cannot change during the test.
const SAFE_EXPTIMES: &[&str] = &[
    "0",
    "0",
    "0",
    "3600",
    "86400",
    "2592000",
    "-1",
    "-100",
    "2592001",
    "1000000000",
    "2000000000",
    "4294967295",
    "2147483648",
    "4294967296",
    "-2147483649",
];

const NUMERIC_VALUES: &[&str] = &[
    "0",
    "1",
    "9",
    "10",
    "007",
    "  7",
    "12 ",
    " 42 ",
    "99",
    "100",
    "999999999999999999",
    "18446744073709551616",
    "-1",
    "-0",
    "+5",
    "",
    "12abc",
    "hi",
    "4294967296",
    "9999999999",
];

const FLAGS: &[&str] = &[
    "0",
    "0",
    "0",
    "1",
    "42",
    "65535",
    "4294967295",
    "4294967296",
    "-0",
];

impl Generator {
    fn new(seed: u64, meta: bool) -> Generator {
        let keys = vec![
            b"a".to_vec(),
            b"b".to_vec(),
            b"cnt".to_vec(),
            b"k\tt".to_vec(),
            b"x:1".to_vec(),
            vec![b'L'; 250],
        ];
        Generator {
            rng: ChaCha8Rng::seed_from_u64(seed),
            meta,
            keys,
            cas_by_key: BTreeMap::new(),
            cas_seen: Vec::new(),
        }
    }

    fn below(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }

    fn percent(&mut self, p: usize) -> bool {
        self.below(100) < p
    }

    fn choose<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn key(&mut self) -> Vec<u8> {
        // The long key is rarer.
        let i = if self.percent(5) {
            self.keys.len() - 1
        } else {
            self.below(self.keys.len() - 1)
        };
        self.keys[i].clone()
    }

    fn long_key(&mut self) -> Vec<u8> {
        vec![b'k'; 251 + self.below(3)]
    }

    fn text(&mut self, len: usize, alphabet: &[u8]) -> Vec<u8> {
        (0..len).map(|_| *self.choose(alphabet)).collect()
    }

    fn value(&mut self, key_len: usize, flags: &str) -> Vec<u8> {
        let mut v = self.any_value(key_len, flags);
        // Only whitespace is left out (see `LEFT_OUT`).
        if !v.is_empty() && v.iter().all(|&b| b == b' ') {
            v[0] = b'a';
        }
        v
    }

    fn any_value(&mut self, key_len: usize, flags: &str) -> Vec<u8> {
        const ALPHA: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789 -_";
        match self.below(1000) {
            0..=399 => {
                let n = self.below(21);
                self.text(n, ALPHA)
            }
            400..=649 => self.choose(NUMERIC_VALUES).as_bytes().to_vec(),
            650..=919 => {
                let n = 21 + self.below(300);
                self.text(n, ALPHA)
            }
            920..=989 => {
                let n = 1000 + self.below(20_000);
                self.text(n, ALPHA)
            }
            990..=997 => {
                // Around the size limit.
                let suffix = if flags
                    .trim_start_matches('-')
                    .trim_start_matches('0')
                    .is_empty()
                    || flags == "4294967296"
                {
                    0
                } else {
                    4
                };
                let max = ITEM_MAX - key_len - ITEM_OVERHEAD - suffix;
                let n = max - 2 + self.below(4);
                vec![b'v'; n]
            }
            _ => vec![b'w'; 1_100_000 + self.below(1_000_000)],
        }
    }

    fn exptime(&mut self) -> &'static str {
        SAFE_EXPTIMES[self.below(SAFE_EXPTIMES.len())]
    }

    fn noreply(&mut self) -> &'static str {
        if self.percent(12) { " noreply" } else { "" }
    }

    fn cas_token(&mut self, key: &[u8]) -> String {
        let last = self.cas_by_key.get(key).copied();
        match self.below(10) {
            0..=4 => last.unwrap_or(1).to_string(),
            5 => last.map_or(2, |c| c + 1).to_string(),
            6 => "0".into(),
            7 if !self.cas_seen.is_empty() => {
                let i = self.below(self.cas_seen.len());
                self.cas_seen[i].to_string()
            }
            8 => "18446744073709551615".into(),
            _ => (1 + self.below(5000)).to_string(),
        }
    }

    /// A sacrificial line read as a command after a rejected storage line: it can never
    /// be a valid command, so it answers `ERROR`.
    fn junk_line(&mut self) -> Vec<u8> {
        let n = self.below(12);
        let mut l = self.text(n, b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        l.extend_from_slice(b"\r\n");
        l
    }

    /// One whole command (possibly malformed), as bytes.
    fn command(&mut self, batch: &mut Batch) {
        let out = &mut batch.bytes;
        let roll = self.below(1000);
        let meta_share = if self.meta { 120 } else { 0 };
        if roll < meta_share {
            return self.meta_command(batch);
        }
        let roll = self.below(1000);
        match roll {
            // Retrievals.
            0..=179 => {
                let name = *self.choose(&["get", "get", "get", "gets", "gets", "bget"]);
                batch.names.push(name);
                let n = if self.percent(3) {
                    200 + self.below(200)
                } else {
                    1 + self.below(4)
                };
                let mut line = name.as_bytes().to_vec();
                for i in 0..n {
                    let k = if i > 0 && self.percent(1) {
                        self.long_key()
                    } else {
                        self.key()
                    };
                    if n < 10 {
                        batch.keys.push(k.clone());
                    }
                    line.push(b' ');
                    line.extend_from_slice(&k);
                }
                out.extend_from_slice(&line);
                out.extend_from_slice(b"\r\n");
            }
            // Storage commands.
            180..=519 => {
                let mode = *self.choose(&[
                    "set", "set", "set", "set", "add", "replace", "append", "prepend", "cas", "cas",
                ]);
                batch.names.push(mode);
                let key = self.key();
                let flags = *self.choose(FLAGS);
                let exptime = self.exptime();
                let value = self.value(key.len(), flags);
                let mut line = format!("{mode} ").into_bytes();
                line.extend_from_slice(&key);
                line.extend_from_slice(format!(" {flags} {exptime} {}", value.len()).as_bytes());
                if mode == "cas" {
                    let c = self.cas_token(&key);
                    line.extend_from_slice(format!(" {c}").as_bytes());
                }
                line.extend_from_slice(self.noreply().as_bytes());
                out.extend_from_slice(&line);
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(&value);
                out.extend_from_slice(b"\r\n");
                batch.keys.push(key);
            }
            // Arithmetic (not after an `mg` in the same batch: see `LEFT_OUT`).
            520..=629 if batch.names.contains(&"mg") => {
                batch.names.push("get");
                let key = self.key();
                batch.bytes.extend_from_slice(b"get ");
                batch.bytes.extend_from_slice(&key);
                batch.bytes.extend_from_slice(b"\r\n");
            }
            520..=629 => {
                let name = *self.choose(&["incr", "decr"]);
                batch.names.push(name);
                let key = if self.percent(50) {
                    b"cnt".to_vec()
                } else {
                    self.key()
                };
                // A stored number of 2^63 or more is left out (see `LEFT_OUT`): only
                // decr may use the largest deltas.
                let delta = match self.below(12) {
                    0 => "0".to_string(),
                    1..=4 => "1".to_string(),
                    5 => "100".to_string(),
                    6 if name == "decr" => "18446744073709551615".to_string(),
                    6 => "4294967296".to_string(),
                    7 => (self.rng.random::<u64>() >> 24).to_string(),
                    8 => "-1".to_string(),
                    9 => "abc".to_string(),
                    10 => "18446744073709551616".to_string(),
                    _ => (*self.choose(&["+3", "007", "-0", "5x"])).to_string(),
                };
                let mut line = format!("{name} ").into_bytes();
                line.extend_from_slice(&key);
                line.extend_from_slice(format!(" {delta}").as_bytes());
                line.extend_from_slice(self.noreply().as_bytes());
                out.extend_from_slice(&line);
                out.extend_from_slice(b"\r\n");
            }
            // Delete.
            630..=699 => {
                batch.names.push("delete");
                let key = self.key();
                let tail = *self.choose(&[
                    "",
                    "",
                    "",
                    " 0",
                    " noreply",
                    " 0 noreply",
                    " 5",
                    " 5 noreply",
                    " 0 0",
                    " x",
                ]);
                out.extend_from_slice(b"delete ");
                out.extend_from_slice(&key);
                out.extend_from_slice(tail.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            // Touch and get-and-touch.
            700..=779 => {
                let key = self.key();
                if self.percent(50) {
                    batch.names.push("touch");
                    let e = if self.percent(5) { "x" } else { self.exptime() };
                    out.extend_from_slice(b"touch ");
                    out.extend_from_slice(&key);
                    out.extend_from_slice(format!(" {e}").as_bytes());
                    out.extend_from_slice(self.noreply().as_bytes());
                } else {
                    let name = *self.choose(&["gat", "gats"]);
                    batch.names.push(name);
                    let e = if self.percent(5) { "x" } else { self.exptime() };
                    out.extend_from_slice(format!("{name} {e} ").as_bytes());
                    out.extend_from_slice(&key);
                    if self.percent(30) {
                        let other = self.key();
                        out.push(b' ');
                        out.extend_from_slice(&other);
                    }
                }
                out.extend_from_slice(b"\r\n");
                batch.keys.push(key);
            }
            // Server-wide and housekeeping commands.
            780..=839 => {
                let (name, line): (&'static str, &str) = *self.choose(&[
                    ("flush_all", "flush_all"),
                    ("flush_all", "flush_all 0"),
                    ("flush_all", "flush_all -1"),
                    ("flush_all", "flush_all noreply"),
                    ("flush_all", "flush_all 0 noreply"),
                    ("flush_all", "flush_all x"),
                    ("mn", "mn"),
                    ("mn", "mn"),
                    ("version", "version"),
                    ("verbosity", "verbosity 0"),
                    ("verbosity", "verbosity 0 noreply"),
                    ("verbosity", "verbosity x"),
                    ("verbosity", "verbosity"),
                ]);
                batch.names.push(name);
                out.extend_from_slice(line.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            // Malformed lines.
            _ => self.malformed(batch),
        }
    }

    fn malformed(&mut self, batch: &mut Batch) {
        let key = self.key();
        let long = self.long_key();
        let junk = self.junk_line();
        let out = &mut batch.bytes;
        batch.names.push("malformed");
        let cat = |out: &mut Vec<u8>, parts: &[&[u8]]| {
            for p in parts {
                out.extend_from_slice(p);
            }
        };
        match self.below(22) {
            0 => cat(out, &[b"GET ", &key, b"\r\n"]),
            1 => cat(out, &[b"Set ", &key, b" 0 0 1\r\nx\r\n"]),
            2 => cat(out, &[b"foo bar\r\n"]),
            3 => cat(out, &[b"getx ", &key, b"\r\n"]),
            4 => cat(out, &[b"\r\n"]),
            5 => cat(out, &[b"get\r\n"]),
            6 => cat(out, &[b"get ", &long, b"\r\n"]),
            7 => cat(out, &[b"set ", &long, b" 0 0 3\r\nABC\r\n"]),
            8 => cat(out, &[b"set ", &long, b" 0 0 3 noreply\r\nABC\r\n"]),
            9 => cat(out, &[b"incr ", &long, b" 1\r\n"]),
            10 => cat(out, &[b"delete ", &long, b"\r\n"]),
            11 => cat(out, &[b"touch ", &long, b" 10\r\n"]),
            12 => {
                let bad = *self.choose(&[
                    "x 0 1",
                    "0 x 1",
                    "0 0 x",
                    "-1 0 1",
                    "0 0 -1",
                    "0 0 2147483646",
                    "0 0",
                    "0 0 1 2 3",
                    "0 99999999999999999999 1",
                ]);
                let nr = self.noreply();
                cat(
                    out,
                    &[
                        b"set ",
                        &key,
                        b" ",
                        bad.as_bytes(),
                        nr.as_bytes(),
                        b"\r\n",
                        &junk,
                    ],
                );
            }
            13 => {
                let bad = *self.choose(&["x", "-1", "", "1 2"]);
                cat(
                    out,
                    &[b"cas ", &key, b" 0 0 1 ", bad.as_bytes(), b"\r\nQ\r\n"],
                );
            }
            14 => {
                // A data block longer than announced: bad data chunk, then the rest of
                // the block is a command line.
                let n = self.below(5);
                let mut block = self.text(n + 2, b"abcdef");
                if self.percent(50) {
                    block[n + 1] = b'\r';
                }
                let nr = self.noreply();
                cat(
                    out,
                    &[
                        b"set ",
                        &key,
                        format!(" 0 0 {n}{nr}\r\n").as_bytes(),
                        &block,
                        b"\r\n",
                    ],
                );
            }
            15 => {
                let n = self.below(4);
                cat(
                    out,
                    &[
                        b"append ",
                        &key,
                        format!(" 0 0 {n}\r\n").as_bytes(),
                        &vec![b'z'; n + 2],
                        b"get ",
                        &key,
                        b"\r\n",
                    ],
                );
            }
            16 => cat(out, &[b"incr ", &key, b"\r\n"]),
            17 => cat(out, &[b"incr ", &key, b" 1 2 3\r\n"]),
            18 => cat(out, &[b"  get  ", &key, b"   a \n"]),
            19 => cat(out, &[b"get ", &key, b"\0junk\r\n"]),
            20 => {
                // Too large and not even a valid chunk: only the size counts.
                let n = ITEM_MAX + self.below(1000);
                cat(
                    out,
                    &[
                        b"set ",
                        &key,
                        format!(" 0 0 {n}\r\n").as_bytes(),
                        &vec![b'q'; n + 2],
                    ],
                );
            }
            _ => cat(out, &[b"touch ", &key, b"\r\n"]),
        }
    }

    fn meta_command(&mut self, batch: &mut Batch) {
        let key = self.key();
        let out = &mut batch.bytes;
        let mut flags: Vec<String> = Vec::new();
        let pick_flags = |g: &mut Generator, options: &[&str], flags: &mut Vec<String>| {
            for o in options {
                if g.percent(30) {
                    flags.push((*o).to_string());
                }
            }
        };
        match self.below(14) {
            0..=3 => {
                batch.names.push("mg");
                pick_flags(self, &["v", "c", "f", "s", "k", "q", "Oop1"], &mut flags);
                if self.percent(20) {
                    flags.push("N3600".into());
                }
                if self.percent(15) {
                    flags.push(format!("T{}", self.exptime()));
                }
                if self.percent(10) {
                    flags.push((*self.choose(&["R30", "R86400"])).into());
                }
            }
            4..=6 => {
                batch.names.push("ms");
                pick_flags(self, &["c", "k", "q", "I", "Oop2"], &mut flags);
                if self.percent(40) {
                    flags.push(format!("T{}", self.exptime()));
                }
                if self.percent(30) {
                    flags.push(format!("F{}", self.choose(FLAGS)));
                }
                if self.percent(30) {
                    let c = self.cas_token(&key);
                    flags.push(format!("C{c}"));
                }
                if self.percent(40) {
                    flags.push(format!("M{}", self.choose(&["E", "A", "P", "R", "S"])));
                }
                let value = if self.percent(70) {
                    let n = self.below(12);
                    self.text(n, b"abc123")
                } else {
                    self.choose(NUMERIC_VALUES).as_bytes().to_vec()
                };
                let out = &mut batch.bytes;
                out.extend_from_slice(b"ms ");
                out.extend_from_slice(&key);
                out.extend_from_slice(format!(" {}", value.len()).as_bytes());
                for f in &flags {
                    out.extend_from_slice(format!(" {f}").as_bytes());
                }
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(&value);
                out.extend_from_slice(b"\r\n");
                batch.keys.push(key);
                return;
            }
            7..=8 => {
                batch.names.push("md");
                pick_flags(self, &["q", "I", "k", "Oop3"], &mut flags);
                if self.percent(20) {
                    flags.push(format!("T{}", self.exptime()));
                }
                if self.percent(30) {
                    let c = self.cas_token(&key);
                    flags.push(format!("C{c}"));
                }
            }
            9..=11 if batch.names.contains(&"mg") => {
                batch.names.push("mn");
                out.extend_from_slice(b"mn\r\n");
                return;
            }
            9..=11 => {
                batch.names.push("ma");
                pick_flags(self, &["v", "c", "q", "k"], &mut flags);
                if self.percent(30) {
                    flags.push("N3600".into());
                }
                if self.percent(30) {
                    flags.push(format!("J{}", self.choose(&["0", "10", "4294967296"])));
                }
                if self.percent(30) {
                    flags.push(format!(
                        "D{}",
                        self.choose(&["0", "1", "100", "4294967296"])
                    ));
                }
                if self.percent(30) {
                    flags.push(format!("M{}", self.choose(&["I", "D", "+", "-"])));
                }
                if self.percent(10) {
                    let c = self.cas_token(&key);
                    flags.push(format!("C{c}"));
                }
            }
            _ => {
                batch.names.push("meta-malformed");
                let line: &[u8] = match self.below(9) {
                    0 => b"mg a v v",
                    1 => b"mg a Z",
                    2 => b"mg a T",
                    3 => b"md a Z",
                    4 => b"ma a MX",
                    5 => b"mg",
                    6 => b"ms a",
                    7 => b"ms a 2 MX\r\nxx",
                    _ => b"ms a x\r\nXX",
                };
                out.extend_from_slice(line);
                out.extend_from_slice(b"\r\n");
                return;
            }
        }
        let name = *batch.names.last().unwrap_or(&"mg");
        out.extend_from_slice(name.as_bytes());
        out.push(b' ');
        out.extend_from_slice(&key);
        for f in &flags {
            out.extend_from_slice(format!(" {f}").as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        batch.keys.push(key);
    }

    /// The next batch: usually one command, sometimes a pipeline of several, rarely one
    /// that makes the server close the connection.
    fn batch(&mut self) -> Batch {
        let mut batch = Batch {
            bytes: Vec::new(),
            names: Vec::new(),
            keys: Vec::new(),
        };
        match self.below(1000) {
            0 => {
                batch.names.push("quit");
                if self.percent(50) {
                    batch.bytes.extend_from_slice(b"get a\r\n");
                }
                batch.bytes.extend_from_slice(b"quit\r\n");
            }
            1 => {
                batch.names.push("overlong-line");
                batch.bytes = vec![b'x'; 2049 + self.below(500)];
            }
            2 => {
                batch.names.push("http");
                batch.bytes.extend_from_slice(b"GET / HTTP/1.1\r\n");
            }
            3..=139 => {
                for _ in 0..2 + self.below(3) {
                    self.command(&mut batch);
                }
            }
            _ => self.command(&mut batch),
        }
        batch
    }

    /// Remembers the cas uniques a reply shows.
    fn observe(&mut self, batch: &Batch, reply: &[u8]) {
        let mut pos = 0;
        while let Some(nl) = reply[pos..].iter().position(|&b| b == b'\n') {
            let line = &reply[pos..pos + nl];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            pos += nl + 1;
            let words: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
            if words.first() == Some(&&b"VALUE"[..]) && words.len() >= 4 {
                let len: usize = std::str::from_utf8(words[3])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                if let Some(cas) = words
                    .get(4)
                    .and_then(|w| std::str::from_utf8(w).ok())
                    .and_then(|s| s.parse().ok())
                {
                    self.cas_by_key.insert(words[1].to_vec(), cas);
                    self.cas_seen.push(cas);
                }
                pos += len + 2;
            } else if matches!(words.first(), Some(&b"VA") | Some(&b"HD")) {
                let len: usize = if words[0] == b"VA" {
                    std::str::from_utf8(words.get(1).copied().unwrap_or(b"0"))
                        .ok()
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(0)
                } else {
                    0
                };
                for w in &words[1..] {
                    if let Some(c) = w.strip_prefix(b"c")
                        && let Some(cas) = std::str::from_utf8(c).ok().and_then(|s| s.parse().ok())
                    {
                        self.cas_seen.push(cas);
                        if batch.keys.len() == 1 {
                            self.cas_by_key.insert(batch.keys[0].clone(), cas);
                        }
                    }
                }
                if words[0] == b"VA" {
                    pos += len + 2;
                }
            }
            if pos > reply.len() {
                break;
            }
        }
        if self.cas_seen.len() > 1000 {
            self.cas_seen.drain(..500);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Scripted sequences: MEMCACHED.md §8 cases that do not depend on time, and edges the
// random generator reaches rarely. Each batch is sent on its own.

fn batches(parts: &[&[u8]]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.to_vec()).collect()
}

/// `set key 0 0 n` with `n` bytes of `fill`.
fn set_of(key: &str, n: usize, fill: u8) -> Vec<u8> {
    let mut v = format!("set {key} 0 0 {n}\r\n").into_bytes();
    v.resize(v.len() + n, fill);
    v.extend_from_slice(b"\r\n");
    v
}

fn scripts() -> Vec<Vec<Vec<u8>>> {
    let long = "k".repeat(251);
    let limit = ITEM_MAX - 3 - ITEM_OVERHEAD; // largest value for a 3-byte key
    vec![
        // 2, 3: negative and 30-day boundaries.
        batches(&[b"set k 0 -1 1\r\nx\r\n", b"get k\r\n"]),
        batches(&[
            b"set k 0 2592000 1\r\nx\r\n",
            b"set j 0 2592001 1\r\ny\r\n",
            b"get k j\r\n",
        ]),
        // 4: conditions on live and missing keys.
        batches(&[
            b"set live 0 0 1\r\nx\r\n",
            b"add live 0 0 1\r\ny\r\n",
            b"replace nokey 0 0 1\r\ny\r\n",
            b"append nokey 0 0 1\r\ny\r\n",
            b"incr nokey 1\r\n",
            b"touch nokey 10\r\n",
            b"cas nokey 0 0 1 1\r\ny\r\n",
        ]),
        // 5: append/prepend keep flags and exptime.
        batches(&[
            b"set ap 9 100 3\r\nmid\r\n",
            b"append ap 1 0 4\r\n_end\r\n",
            b"prepend ap 2 5 6\r\nstart_\r\n",
            b"get ap\r\n",
        ]),
        // 7, 8: padding in place, flags and TTL kept, floor at 0.
        batches(&[
            b"set n 3 50 2\r\n10\r\n",
            b"gets n\r\n",
            b"touch n 100\r\n",
            b"gats 200 n\r\n",
            b"decr n 1\r\n",
            b"gets n\r\n",
            b"decr n 100\r\n",
            b"get n\r\n",
        ]),
        // 9, 10: growing, errors.
        batches(&[
            b"set n 0 0 2\r\n99\r\n",
            b"incr n 1\r\n",
            b"get n\r\n",
            b"set hi 0 0 2\r\nhi\r\n",
            b"incr hi 1\r\n",
            b"incr n -1\r\n",
            b"set e 0 0 0\r\n\r\n",
            b"incr e 1\r\n",
            b"set sp 0 0 3\r\n  7\r\n",
            b"incr sp 1\r\n",
            b"get sp\r\n",
        ]),
        // 11: repeated keys.
        batches(&[
            b"set a 0 0 1\r\n1\r\n",
            b"set b 0 0 1\r\n2\r\n",
            b"get a b nokey a\r\n",
        ]),
        // 12: over-long keys.
        vec![
            format!("get {long}\r\n").into_bytes(),
            format!("set {long} 0 0 1\r\nx\r\n").into_bytes(),
            format!("get a {long} b\r\n").into_bytes(),
            format!("incr a 1\r\nget {long}\r\n").into_bytes(),
        ],
        // 13: the size limit; a too-large set drops the old value; append past the limit.
        vec![
            set_of("big", limit, b'v'),
            b"get big\r\n".to_vec(),
            b"append big 0 0 1\r\nx\r\n".to_vec(),
            set_of("big", limit + 1, b'w'),
            b"get big\r\n".to_vec(),
            set_of("big", 20_000, b'u'),
            b"append big 0 0 1\r\nx\r\n".to_vec(),
        ],
        // 14, 15.
        batches(&[
            b"set d 0 0 3\r\nabcde\r\n",
            b"set n 0 0 1\r\n1\r\n",
            b"delete n\r\n",
            b"delete n\r\n",
            b"delete n 5\r\n",
            b"delete n 0\r\n",
        ]),
        // 16: flush.
        batches(&[
            b"set old 0 0 1\r\nx\r\n",
            b"flush_all\r\n",
            b"get old\r\n",
            b"set new 0 0 1\r\ny\r\n",
            b"get old new\r\n",
        ]),
        // Replies discarded by a failing multi-get (unwritten ones only).
        vec![
            b"set a 0 0 1\r\n1\r\nincr a 1\r\ndecr a 1\r\n".to_vec(),
            format!("set a 0 0 1\r\n1\r\nincr a 1\r\nget {long}\r\n").into_bytes(),
            {
                let mut v = set_of("a", 20_000, b'x');
                v.extend_from_slice(format!("get {long}\r\n").as_bytes());
                v
            },
            format!("{}get {long}\r\n", "incr a 1\r\n".repeat(25)).into_bytes(),
        ],
    ]
}

fn meta_scripts() -> Vec<Vec<Vec<u8>>> {
    vec![
        // 18 without the TTL flag, 19.
        batches(&[
            b"mg dp v c N3600\r\n",
            b"mg dp v c N3600\r\n",
            b"ma cnt\r\n",
            b"ma cnt N0 J10 v\r\n",
            b"ma cnt v\r\n",
            b"ma cnt MD D100 v\r\n",
            b"md dp I T3600\r\n",
            b"mg dp v c\r\n",
            b"mg dp v c\r\n",
        ]),
    ]
}

// ---------------------------------------------------------------------------------------
// The two servers.

struct Simulated {
    server: Server,
    session: Session,
    now: VirtualTime,
}

impl Simulated {
    fn new() -> Simulated {
        let config = ServerConfig::default()
            .memory_mb(64)
            .item_size_max(ITEM_MAX as u32);
        Simulated {
            server: Server::new(config, VirtualTime::ZERO),
            session: Session::new(),
            now: VirtualTime::from_secs(1),
        }
    }

    fn feed(&mut self, bytes: &[u8]) -> Vec<u8> {
        self.session.feed(&mut self.server, bytes, self.now)
    }
}

/// True if the simulator answers meta commands (rather than `ERROR`).
fn simulator_has_meta() -> bool {
    let mut sim = Simulated::new();
    sim.feed(b"mg probe v\r\n") != b"ERROR\r\n"
}

#[test]
fn simulator_matches_real_memcached() {
    // The background LRU threads and the slab mover briefly hold references to items,
    // which decides whether incr/decr rewrites a number in place (padded) or stores a new
    // item: they are switched off so the real server is deterministic. Neither changes
    // what a client sees while nothing is evicted (checked at the end).
    let daemon = match MemcachedDaemon::start(&[
        "-m",
        "64",
        "-I",
        "1m",
        "-o",
        "no_lru_crawler,no_lru_maintainer,no_slab_automove",
    ]) {
        Ok(Some(d)) => d,
        Ok(None) => {
            if std::env::var_os("CI").is_some() {
                panic!("the differential test needs a memcached binary on CI");
            }
            eprintln!(
                "SKIPPED: differential test needs a memcached binary (apt-get install -y memcached)"
            );
            return;
        }
        Err(e) => panic!("cannot start memcached: {e}"),
    };
    let sequences = env_number("MCSIM_DIFF_SEQUENCES").map_or(DEFAULT_SEQUENCES, |n| n as usize);
    let seed = env_number("MCSIM_DIFF_SEED").unwrap_or(DEFAULT_SEED);
    let meta = match std::env::var("MCSIM_DIFF_META").as_deref() {
        Ok("0") => false,
        _ => simulator_has_meta(),
    };
    if !meta {
        eprintln!(
            "differential: meta commands left out (the simulator answers mg with ERROR, or MCSIM_DIFF_META=0)"
        );
    }

    let started = Instant::now();
    let mut generator = Generator::new(seed, meta);
    let mut sim = Simulated::new();
    let mut real = daemon.connect().expect("connect to memcached");
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut commands = 0usize;
    let mut batches = 0usize;
    let mut reconnects = 0usize;

    let mut scripts: Vec<Vec<Vec<u8>>> = scripts();
    if meta {
        scripts.extend(meta_scripts());
    }
    let total = scripts.len() + sequences;
    for sequence in 0..total {
        let script = scripts.get(sequence);
        let length = script.map_or_else(|| 5 + generator.below(26), Vec::len);
        let mut history: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for step in 0..=length {
            let batch = if step == 0 {
                Batch {
                    bytes: b"flush_all\r\n".to_vec(),
                    names: vec!["flush_all"],
                    keys: vec![],
                }
            } else if let Some(script) = script {
                Batch {
                    bytes: script[step - 1].clone(),
                    names: vec!["scripted"],
                    keys: vec![],
                }
            } else {
                generator.batch()
            };
            batches += 1;
            commands += batch.names.len();
            for n in &batch.names {
                *counts.entry(n).or_default() += 1;
            }
            let sim_out = sim.feed(&batch.bytes);
            let closed = sim.session.is_closed();
            let real_out = if closed {
                real.send_raw_until_close(&batch.bytes)
            } else {
                assert!(
                    sim.session.is_idle(),
                    "generator bug: batch leaves the connection mid-command: {}",
                    show(&batch.bytes)
                );
                let marker = sim.feed(b"mn\r\n");
                assert_eq!(marker, b"MN\r\n", "simulator did not answer mn");
                real.send_raw_at_least(&batch.bytes, sim_out.len())
            }
            .expect("talking to memcached");
            let expected_end = if closed {
                RawEnd::Closed
            } else {
                RawEnd::Marker
            };
            if real_out.bytes != sim_out || real_out.end != expected_end {
                eprintln!("MISMATCH in sequence {sequence}, step {step} (seed {seed:#x})");
                eprintln!("  earlier steps of this sequence (sent => both answered):");
                for (i, (sent, got)) in history.iter().enumerate() {
                    eprintln!("    {i:>2}: {} => {}", show_short(sent), show_short(got));
                }
                let same = real_out
                    .bytes
                    .iter()
                    .zip(&sim_out)
                    .take_while(|(a, b)| a == b)
                    .count();
                let from = same.saturating_sub(80);
                eprintln!("  commands:  {:?}", batch.names);
                eprintln!(
                    "  replies agree on {same} bytes; from byte {from}: memcached {} / simulator {}",
                    show_short(&real_out.bytes[from..]),
                    show_short(&sim_out[from.min(sim_out.len())..])
                );
                eprintln!("  sent:      {}", show(&batch.bytes));
                eprintln!(
                    "  memcached: {} [{:?}]",
                    show(&real_out.bytes),
                    real_out.end
                );
                eprintln!(
                    "  simulator: {} [{}]",
                    show(&sim_out),
                    if closed { "Closed" } else { "Marker" }
                );
                panic!(
                    "simulator and memcached disagree (sequence {sequence}, step {step}, seed {seed:#x}; rerun with MCSIM_DIFF_SEED={seed:#x})"
                );
            }
            generator.observe(&batch, &sim_out);
            history.push((batch.bytes.clone(), sim_out.clone()));
            if closed {
                reconnects += 1;
                sim.session = Session::new();
                real = daemon.connect().expect("reconnect to memcached");
            }
        }
    }

    let elapsed = started.elapsed();
    let per_command: Vec<String> = counts.iter().map(|(k, v)| format!("{k}={v}")).collect();
    eprintln!(
        "differential: {total} sequences ({} scripted), {batches} batches, {commands} commands, {reconnects} reconnects, meta {}, seed {seed:#x}, {:.1}s",
        scripts.len(),
        if meta { "on" } else { "off" },
        elapsed.as_secs_f64()
    );
    eprintln!("differential: per command: {}", per_command.join(" "));
    eprintln!("differential: left out on purpose: {LEFT_OUT}");
    let stats = sim.server.stats();
    eprintln!(
        "differential: simulator evictions {}, items {}",
        stats.evictions, stats.curr_items
    );
    assert_eq!(
        stats.evictions, 0,
        "the comparison assumes nothing is evicted (the servers' LRU modes differ)"
    );
}

#[test]
fn tcp_client_calls() {
    use mcsim::protocol::{Reply, Request, StoreMode};
    use mcsim::{Exptime, Key};
    let Ok(Some(daemon)) = MemcachedDaemon::start(&[]) else {
        eprintln!("SKIPPED: tcp client test needs a memcached binary");
        return;
    };
    let mut c: TcpClient = daemon.connect().expect("connect");
    let k = Key::new("tc").unwrap();
    let set = Request::Store {
        mode: StoreMode::Set,
        key: k.clone(),
        flags: 5,
        exptime: Exptime(0),
        data: b"10".to_vec(),
        noreply: false,
    };
    assert_eq!(c.call(&set).unwrap(), Reply::Stored);
    let quiet = Request::Store {
        mode: StoreMode::Set,
        key: Key::new("tc").unwrap(),
        flags: 5,
        exptime: Exptime(0),
        data: b"10".to_vec(),
        noreply: true,
    };
    assert_eq!(c.call(&quiet).unwrap(), Reply::Silent);
    let incr = Request::Arith {
        op: mcsim::protocol::ArithOp::Incr,
        key: k.clone(),
        delta: 5,
        noreply: false,
    };
    assert_eq!(c.call(&incr).unwrap(), Reply::Number(15));
    let get = Request::Get {
        keys: vec![k.clone(), k],
        with_cas: true,
    };
    match c.call(&get).unwrap() {
        Reply::Values(v) => {
            assert_eq!(v.len(), 2);
            assert_eq!(v[0].data, b"15");
            assert_eq!(v[0].flags, 5);
            assert!(v[0].cas.is_some());
        }
        other => panic!("{other:?}"),
    }
    match c.call(&Request::Version).unwrap() {
        Reply::Version(v) => assert!(v.starts_with("1.")),
        other => panic!("{other:?}"),
    }
    match c.call(&Request::Stats).unwrap() {
        Reply::Stats(s) => assert!(s.iter().any(|(k, _)| k == "curr_items")),
        other => panic!("{other:?}"),
    }
}
