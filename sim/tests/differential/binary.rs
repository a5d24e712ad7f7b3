//! The binary protocol, `mcsim serve` against a real memcached 1.6.18 over TCP: seeded
//! streams of request packets, well-formed and not (every opcode memcached knows but
//! `STAT`, whose figures differ by nature, quiet forms, cas matches and mismatches,
//! counters created from their initial value, values over the item size limit, wrong
//! extras and key lengths, keys over 250 bytes, unknown opcodes, a wrong magic), sent
//! whole or split with pauses; the client then closes its side and reads until the
//! server closes. Both must answer the same bytes, cas uniques renamed by their order.
//!
//! Unknown opcodes are sent without key or extras. With them, memcached skips the body
//! counting from after the key, so it eats as many bytes of the next packet and usually
//! closes on a bad magic; whether it writes the pending replies first depends on whether
//! the rest arrived before it read again, which no byte stream decides. `mcsim serve`
//! skips the same bytes and writes them with its next write.
//!
//! Settings: `MCSIM_BINARY_STREAMS` (default 3,000), `MCSIM_BINARY_SEED`, and
//! `MCSIM_BINARY_DUMP=FILE` to write a differing stream's bytes there (to replay it by
//! hand).

#[allow(unused_imports)]
use super::*;

pub(crate) const DEFAULT_BINARY_STREAMS: usize = 3000;

/// One request packet's bytes.
fn packet(opcode: u8, extras: &[u8], key: &[u8], value: &[u8], cas: u64, opaque: u32) -> Vec<u8> {
    let mut p = vec![0x80, opcode];
    p.extend_from_slice(&(key.len() as u16).to_be_bytes());
    p.push(extras.len() as u8);
    p.extend_from_slice(&[0, 0, 0]);
    p.extend_from_slice(&((extras.len() + key.len() + value.len()) as u32).to_be_bytes());
    p.extend_from_slice(&opaque.to_be_bytes());
    p.extend_from_slice(&cas.to_be_bytes());
    p.extend_from_slice(extras);
    p.extend_from_slice(key);
    p.extend_from_slice(value);
    p
}

struct BinaryGenerator {
    rng: ChaCha8Rng,
    /// cas uniques seen in responses so far (from the simulator's side: both agree).
    opaque: u32,
}

impl BinaryGenerator {
    fn below(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }

    fn key(&mut self) -> Vec<u8> {
        match self.below(20) {
            0 => vec![b'L'; 250],
            1 => vec![b'k'; 251],
            _ => [&b"a"[..], b"b", b"num", b"c:1"][self.below(4)].to_vec(),
        }
    }

    fn value(&mut self) -> Vec<u8> {
        match self.below(20) {
            0..=5 => (self.below(1000) as u64).to_string().into_bytes(),
            // Numbers of 2^63 and more are left out, as in the text test (`LEFT_OUT`).
            6 => b"9223372036854775807".to_vec(),
            7 => vec![b'v'; 1024 * 1024 + self.below(100)],
            8 => vec![b'w'; 20_000 + self.below(20_000)],
            _ => {
                let n = self.below(40);
                (0..n).map(|i| b'a' + (i % 26) as u8).collect()
            }
        }
    }

    fn cas(&mut self) -> u64 {
        match self.below(6) {
            0 | 1 => 0,
            2 => 1 + self.below(40) as u64,
            3 => u64::MAX,
            _ => 0,
        }
    }

    fn exptime(&mut self) -> u32 {
        [0, 0, 3600, 86_400, u32::MAX][self.below(5)]
    }

    fn next_packet(&mut self) -> Vec<u8> {
        self.opaque = self.opaque.wrapping_add(1);
        let opaque = self.opaque;
        let key = self.key();
        match self.below(30) {
            // set, add, replace and their quiet forms
            0..=7 => {
                let opcode = [0x01, 0x02, 0x03, 0x11, 0x12, 0x13][self.below(6)];
                let mut extras = (self.below(3) as u32 * 7).to_be_bytes().to_vec();
                extras.extend_from_slice(&self.exptime().to_be_bytes());
                let (value, cas) = (self.value(), self.cas());
                packet(opcode, &extras, &key, &value, cas, opaque)
            }
            8..=12 => {
                let opcode = [0x00, 0x09, 0x0c, 0x0d][self.below(4)];
                packet(opcode, &[], &key, &[], 0, opaque)
            }
            13..=15 => {
                let opcode = [0x05, 0x06, 0x15, 0x16][self.below(4)];
                let mut extras = (self.below(50) as u64).to_be_bytes().to_vec();
                extras.extend_from_slice(&(self.below(100) as u64).to_be_bytes());
                let exp = [0u32, u32::MAX, 3600][self.below(3)];
                extras.extend_from_slice(&exp.to_be_bytes());
                let cas = self.cas();
                packet(opcode, &extras, &key, &[], cas, opaque)
            }
            16..=17 => {
                let opcode = [0x0e, 0x0f, 0x19, 0x1a][self.below(4)];
                let (value, cas) = (self.value(), self.cas());
                packet(opcode, &[], &key, &value, cas, opaque)
            }
            18..=19 => {
                let opcode = [0x04, 0x14][self.below(2)];
                let cas = self.cas();
                packet(opcode, &[], &key, &[], cas, opaque)
            }
            20..=21 => {
                let opcode = [0x1c, 0x1d, 0x1e, 0x23, 0x24][self.below(5)];
                let exp = self.exptime().to_be_bytes();
                packet(opcode, &exp, &key, &[], 0, opaque)
            }
            22 => packet([0x0a, 0x0b][self.below(2)], &[], &[], &[], 0, opaque),
            23 => packet([0x08, 0x18][self.below(2)], &[], &[], &[], 0, opaque),
            // wrong extras or key lengths for the opcode
            24 => packet(0x01, &[0, 0, 0, 0], &key, b"x", 0, opaque),
            25 => packet(0x00, &[0, 0, 0, 0], &key, &[], 0, opaque),
            26 => packet(0x05, &[0; 8], &key, &[], 0, opaque),
            27 => packet(0x0a, &[], b"k", &[], 0, opaque),
            // unknown opcodes (without key or extras: see the module docs)
            28 => packet(
                [0x1b, 0x30, 0x44, 0xfe][self.below(4)],
                &[],
                &[],
                b"zz",
                0,
                opaque,
            ),
            _ => {
                let mut p = packet(0x0a, &[], &[], &[], 0, opaque);
                p[0] = [0x81, 0x00, b'g'][self.below(3)];
                p
            }
        }
    }
}

/// `bytes` (response packets) with each non-zero cas replaced by its rank of first
/// appearance; a trailing partial packet is kept as it is.
fn normalize_binary_cas(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let mut seen: Vec<u64> = Vec::new();
    let mut pos = 0;
    while pos + 24 <= out.len() {
        let body = u32::from_be_bytes(out[pos + 8..pos + 12].try_into().unwrap()) as usize;
        let cas = u64::from_be_bytes(out[pos + 16..pos + 24].try_into().unwrap());
        if cas != 0 {
            let rank = match seen.iter().position(|&c| c == cas) {
                Some(i) => i,
                None => {
                    seen.push(cas);
                    seen.len() - 1
                }
            };
            out[pos + 16..pos + 24].copy_from_slice(&(rank as u64 + 1).to_be_bytes());
        }
        pos += 24 + body;
    }
    out
}

#[test]
fn serve_speaks_the_binary_protocol_as_memcached_does() {
    let Some(daemon) = start_memcached("binary protocol") else {
        return;
    };
    let streams = env_number("MCSIM_BINARY_STREAMS").map_or(DEFAULT_BINARY_STREAMS, |n| n as usize);
    let seed = env_number("MCSIM_BINARY_SEED").unwrap_or(DEFAULT_SEED);
    let serve = start_serve();
    let mut g = BinaryGenerator {
        rng: ChaCha8Rng::seed_from_u64(seed),
        opaque: 0,
    };
    let _serial = serial();
    let started = Instant::now();
    let (mut packets, mut retried) = (0, 0);
    for i in 0..streams {
        let mut bytes = packet(0x08, &[], &[], &[], 0, 0);
        let n = 1 + g.below(10);
        packets += n;
        for _ in 0..n {
            bytes.extend(g.next_packet());
        }
        let mut splits: Vec<usize> = if g.below(2) == 0 {
            (0..1 + g.below(3))
                .map(|_| 1 + g.below(bytes.len() - 1))
                .collect()
        } else {
            Vec::new()
        };
        splits.sort_unstable();
        splits.dedup();
        let (real, sim) = exchange_both(
            [daemon.addr(), serve],
            &bytes,
            &splits,
            normalize_binary_cas,
            &mut retried,
        );
        if real != sim {
            if let Some(path) = std::env::var_os("MCSIM_BINARY_DUMP") {
                let _ = std::fs::write(path, &bytes);
            }
            let same = real.iter().zip(&sim).take_while(|(a, b)| a == b).count();
            panic!(
                "binary stream {i} of seed {seed:#x} differs (rerun: MCSIM_BINARY_SEED={seed:#x} \
                 MCSIM_BINARY_STREAMS={}):\n  sent ({} bytes in pieces ending at {splits:?}): {}\n  replies agree on {same} bytes\n  \
                 memcached:   {}\n  mcsim serve: {}",
                i + 1,
                bytes.len(),
                show(&bytes),
                show(&real[same.saturating_sub(24)..]),
                show(&sim[same.saturating_sub(24).min(sim.len())..]),
            );
        }
    }
    eprintln!(
        "binary: {streams} streams, {packets} packets, 0 differences ({retried} streams sent \
         twice), seed {seed:#x}, {:.1}s",
        started.elapsed().as_secs_f64()
    );
}
