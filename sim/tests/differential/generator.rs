//! The random generator of command sequences: commands, their arguments and batches.

#[allow(unused_imports)]
use super::*;

/// One batch of bytes sent at once, and the command names it holds.
pub(crate) struct Batch {
    pub(crate) bytes: Vec<u8>,
    pub(crate) names: Vec<&'static str>,
    /// The keys it addresses, for remembering cas uniques from its reply.
    pub(crate) keys: Vec<Vec<u8>>,
}

pub(crate) struct Generator {
    pub(crate) rng: ChaCha8Rng,
    pub(crate) meta: bool,
    pub(crate) keys: Vec<Vec<u8>>,
    /// Last cas unique seen per key, and every one seen.
    pub(crate) cas_by_key: BTreeMap<Vec<u8>, u64>,
    pub(crate) cas_seen: Vec<u64>,
}

/// Relative, absolute or wrapping exptimes whose outcome cannot change during the test.
pub(crate) const SAFE_EXPTIMES: &[&str] = &[
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

pub(crate) const NUMERIC_VALUES: &[&str] = &[
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

pub(crate) const FLAGS: &[&str] = &[
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
    pub(crate) fn new(seed: u64, meta: bool) -> Generator {
        let keys = vec![
            b"a".to_vec(),
            b"b".to_vec(),
            b"cnt".to_vec(),
            b"k\tt".to_vec(),
            b"x:1".to_vec(),
            // Control bytes and bytes that are not UTF-8: memcached takes any byte but
            // space, CR, LF and NUL in a text key, and echoes it back as sent.
            b"c\x01\x1b\x7f".to_vec(),
            b"\xff\xfe".to_vec(),
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

    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }

    pub(crate) fn percent(&mut self, p: usize) -> bool {
        self.below(100) < p
    }

    pub(crate) fn choose<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub(crate) fn key(&mut self) -> Vec<u8> {
        // The long key is rarer.
        let i = if self.percent(5) {
            self.keys.len() - 1
        } else {
            self.below(self.keys.len() - 1)
        };
        self.keys[i].clone()
    }

    pub(crate) fn long_key(&mut self) -> Vec<u8> {
        vec![b'k'; 251 + self.below(3)]
    }

    pub(crate) fn text(&mut self, len: usize, alphabet: &[u8]) -> Vec<u8> {
        (0..len).map(|_| *self.choose(alphabet)).collect()
    }

    pub(crate) fn value(&mut self, key_len: usize, flags: &str) -> Vec<u8> {
        let mut v = self.any_value(key_len, flags);
        // Only whitespace is left out (see `LEFT_OUT`).
        if !v.is_empty() && v.iter().all(|&b| b == b' ') {
            v[0] = b'a';
        }
        v
    }

    pub(crate) fn any_value(&mut self, key_len: usize, flags: &str) -> Vec<u8> {
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

    pub(crate) fn exptime(&mut self) -> &'static str {
        SAFE_EXPTIMES[self.below(SAFE_EXPTIMES.len())]
    }

    pub(crate) fn noreply(&mut self) -> &'static str {
        if self.percent(12) { " noreply" } else { "" }
    }

    pub(crate) fn cas_token(&mut self, key: &[u8]) -> String {
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
    pub(crate) fn junk_line(&mut self) -> Vec<u8> {
        let n = self.below(12);
        let mut l = self.text(n, b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        l.extend_from_slice(b"\r\n");
        l
    }

    /// One whole command (possibly malformed), as bytes.
    pub(crate) fn command(&mut self, batch: &mut Batch) {
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
}

impl Generator {
    /// The next batch: usually one command, sometimes a pipeline of several, rarely one
    /// that makes the server close the connection.
    pub(crate) fn batch(&mut self) -> Batch {
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
    pub(crate) fn observe(&mut self, batch: &Batch, reply: &[u8]) {
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
