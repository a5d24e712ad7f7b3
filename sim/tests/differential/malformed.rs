//! Malformed commands and meta commands, as the generator writes them.

#[allow(unused_imports)]
use super::*;

impl Generator {
    pub(crate) fn malformed(&mut self, batch: &mut Batch) {
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

    pub(crate) fn meta_command(&mut self, batch: &mut Batch) {
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
}
