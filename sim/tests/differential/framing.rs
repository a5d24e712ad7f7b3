//! `mcsim serve` against a real memcached 1.6.18 over TCP, on whole streams: the
//! generator's batches pipelined into one stream (after a `flush_all`), sometimes cut
//! short in the middle of a line or a data block, sent whole or split at random points
//! with pauses between the pieces (so each server reads them apart), then the client
//! closes its side and reads everything until the server closes. Both servers must send
//! the same bytes; only cas uniques are renamed, by their order of appearance.
//!
//! Settings: `MCSIM_FRAMING_STREAMS` (default 10,000), `MCSIM_FRAMING_SEED`.

#[allow(unused_imports)]
use super::*;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

use mcsim_serve::{ClockMode, FaultPolicy, ServeConfig, serve};

pub(crate) const DEFAULT_STREAMS: usize = 10_000;

/// One stream and how it is sent.
pub(crate) struct Stream {
    pub(crate) bytes: Vec<u8>,
    /// Offsets where a piece ends and the client pauses before the next.
    pub(crate) splits: Vec<usize>,
    pub(crate) truncated: bool,
}

impl Generator {
    pub(crate) fn stream(&mut self) -> Stream {
        let mut bytes = b"flush_all\r\n".to_vec();
        for _ in 0..1 + self.below(12) {
            bytes.extend_from_slice(&self.batch().bytes);
        }
        let truncated = self.percent(20);
        if truncated {
            let cut = 11 + self.below(bytes.len() - 11);
            bytes.truncate(cut);
        }
        let mut splits: Vec<usize> = if self.percent(50) {
            (0..1 + self.below(4))
                .map(|_| 1 + self.below(bytes.len().max(2) - 1))
                .collect()
        } else {
            Vec::new()
        };
        splits.sort_unstable();
        splits.dedup();
        Stream {
            bytes,
            splits,
            truncated,
        }
    }
}

/// Every byte a server sends back for `bytes`, sent in pieces ending at `splits` with a
/// `pause` between them, the client closing its side after the last: until it closes.
pub(crate) fn exchange(
    addr: SocketAddr,
    bytes: &[u8],
    splits: &[usize],
    pause: Duration,
) -> Vec<u8> {
    // A send buffer that takes the whole stream in one write: with the kernel's default
    // (16 KiB to start with), a long stream goes out in parts as the buffer drains, and a
    // server quick to read sees a stream "sent whole" in two reads, framed otherwise
    // (`mcsim serve` did so in about one try in 15 on a 35 KiB stream; memcached, slower
    // to wake, in none of 300).
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        None,
    )
    .expect("socket");
    socket.set_send_buffer_size(4 << 20).expect("send buffer");
    socket.connect(&addr.into()).expect("connect");
    let mut conn: TcpStream = socket.into();
    conn.set_nodelay(true).expect("nodelay");
    conn.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let mut reading = conn.try_clone().expect("clone");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        // A reset (the server closed with input unread) ends the reply like a close.
        let _ = reading.read_to_end(&mut out);
        out
    });
    let mut from = 0;
    for &to in splits.iter().chain(std::iter::once(&bytes.len())) {
        if conn.write_all(&bytes[from..to]).is_err() {
            break; // closed by the server
        }
        from = to;
        if to < bytes.len() {
            std::thread::sleep(pause);
        }
    }
    let _ = conn.shutdown(Shutdown::Write);
    reader.join().expect("reader")
}

/// What memcached (`servers[0]`) and `mcsim serve` (`servers[1]`) answer to `bytes` sent
/// in pieces ending at `splits`, each through `normalize`. Where a server's reads end
/// depends on scheduling too (pieces sent apart may be read as one, and a stream sent
/// whole may be read in parts on a loaded machine, and a reset after a server closes
/// with input unread may discard replies the client had not read yet): a stream that
/// differs is sent again, up to twice more (counted in `retried`), with longer pauses
/// between its pieces ([`PAUSES`]), so it fails only if it differs three times.
pub(crate) fn exchange_both(
    servers: [SocketAddr; 2],
    bytes: &[u8],
    splits: &[usize],
    normalize: fn(&[u8]) -> Vec<u8>,
    retried: &mut usize,
) -> (Vec<u8>, Vec<u8>) {
    let both = |pause: Duration| {
        (
            normalize(&exchange(servers[0], bytes, splits, pause)),
            normalize(&exchange(servers[1], bytes, splits, pause)),
        )
    };
    let mut answers = both(PAUSES[0]);
    for &pause in &PAUSES[1..] {
        if answers.0 == answers.1 {
            break;
        }
        *retried += 1;
        answers = both(pause);
    }
    answers
}

/// The pause between a stream's pieces at each try: a server on a loaded machine (two
/// cores, other tests running) may not read a piece before the next arrives after 2 ms,
/// and then frames the two as one read, as memcached would have too had it read them so.
const PAUSES: [Duration; 3] = [
    Duration::from_millis(2),
    Duration::from_millis(25),
    Duration::from_millis(150),
];

/// `bytes` with every cas unique replaced by its rank of first appearance (in `VALUE`
/// lines of `gets`/`gats` and in meta replies' `c` flags).
pub(crate) fn normalize_cas(bytes: &[u8]) -> Vec<u8> {
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut rank = |token: &[u8]| -> Vec<u8> {
        let i = match seen.iter().position(|t| t == token) {
            Some(i) => i,
            None => {
                seen.push(token.to_vec());
                seen.len() - 1
            }
        };
        format!("#{i}").into_bytes()
    };
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    // Data blocks are copied as they are: only reply lines are looked at.
    let mut skip = 0usize;
    while !rest.is_empty() {
        if skip > 0 {
            let n = skip.min(rest.len());
            out.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            skip -= n;
            continue;
        }
        let end = rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(rest.len(), |i| i + 1);
        let line = &rest[..end];
        rest = &rest[end..];
        let words: Vec<&[u8]> = line
            .strip_suffix(b"\r\n")
            .unwrap_or(line)
            .split(|&b| b == b' ')
            .collect();
        let numeric = |w: &[u8]| !w.is_empty() && w.iter().all(u8::is_ascii_digit);
        let mut new: Vec<Vec<u8>> = words.iter().map(|w| w.to_vec()).collect();
        match words.first().copied() {
            Some(b"VALUE") if words.len() == 5 && numeric(words[4]) => {
                new[4] = rank(words[4]);
                skip = std::str::from_utf8(words[3])
                    .ok()
                    .and_then(|n| n.parse().ok())
                    .map_or(0, |n: usize| n + 2);
            }
            Some(b"VA" | b"HD" | b"EN" | b"NF" | b"NS" | b"EX" | b"OK") => {
                if words.first() == Some(&&b"VA"[..]) {
                    skip = std::str::from_utf8(words.get(1).copied().unwrap_or(b""))
                        .ok()
                        .and_then(|n| n.parse().ok())
                        .map_or(0, |n: usize| n + 2);
                }
                for (i, w) in words.iter().enumerate().skip(1) {
                    if w.first() == Some(&b'c') && numeric(&w[1..]) {
                        let mut t = b"c".to_vec();
                        t.extend(rank(&w[1..]));
                        new[i] = t;
                    }
                }
            }
            _ => {}
        }
        out.extend_from_slice(&new.join(&b' '));
        if line.ends_with(b"\r\n") {
            out.extend_from_slice(b"\r\n");
        } else if line.ends_with(b"\n") {
            out.push(b'\n');
        }
    }
    out
}

/// Held by each test that times pieces of a stream, so that they do not slow each other
/// down (a server under load reads pieces sent apart as one).
pub(crate) fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts `mcsim serve` in this process on a free port with memcached's settings.
pub(crate) fn start_serve() -> SocketAddr {
    let config = ServeConfig {
        port: 0,
        servers: 1,
        server: ServerConfig::default()
            .memory_mb(64)
            .item_size_max(ITEM_MAX as u32),
        clock: ClockMode::Real,
        faults: FaultPolicy::default(),
        latency: mcsim_serve::COMMAND_TIME,
        seed: 0,
        lockstep: None,
        lockstep_wait: Duration::from_secs(2),
        trace: None,
        trace_window: 0,
        name_key: None,
        threads: mcsim_serve::DEFAULT_THREADS,
    };
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = serve(&config, |addrs| {
            let _ = tx.send(addrs[0]);
        });
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("mcsim serve listening")
}

#[test]
fn serve_frames_streams_as_memcached_does() {
    let Some(daemon) = start_memcached("framing") else {
        return;
    };
    let streams = env_number("MCSIM_FRAMING_STREAMS").map_or(DEFAULT_STREAMS, |n| n as usize);
    let seed = env_number("MCSIM_FRAMING_SEED").unwrap_or(DEFAULT_SEED);
    let serve = start_serve();
    let mut generator = Generator::new(seed, simulator_has_meta());
    let _serial = serial();
    let started = Instant::now();
    let (mut split, mut truncated, mut bytes, mut retried) = (0usize, 0usize, 0usize, 0usize);
    for i in 0..streams {
        let stream = generator.stream();
        split += usize::from(!stream.splits.is_empty());
        truncated += usize::from(stream.truncated);
        bytes += stream.bytes.len();
        let (real, sim) = exchange_both(
            [daemon.addr(), serve],
            &stream.bytes,
            &stream.splits,
            normalize_cas,
            &mut retried,
        );
        if real != sim {
            let same = real.iter().zip(&sim).take_while(|(a, b)| a == b).count();
            let from = same.saturating_sub(80);
            panic!(
                "stream {i} of seed {seed:#x} differs (rerun: MCSIM_FRAMING_SEED={seed:#x} \
                 MCSIM_FRAMING_STREAMS={}):\n  sent ({} bytes, pieces ending at {:?}{}): {}\n  \
                 replies agree on {same} bytes; from byte {from}:\n  memcached: {}\n  \
                 mcsim serve: {}",
                i + 1,
                stream.bytes.len(),
                stream.splits,
                if stream.truncated { ", cut short" } else { "" },
                show(&stream.bytes),
                show(&real[from..]),
                show(&sim[from.min(sim.len())..]),
            );
        }
    }
    eprintln!(
        "framing: {streams} streams ({split} split, {truncated} cut short, {} KiB), 0 \
         differences ({retried} streams sent twice), seed {seed:#x}, {:.1}s",
        bytes / 1024,
        started.elapsed().as_secs_f64()
    );
}

#[test]
fn cas_uniques_are_renamed_by_their_order() {
    let a = normalize_cas(b"VALUE k 0 1 17\r\nx\r\nVALUE j 0 1 9\r\ny\r\nHD c17\r\nEND\r\n");
    assert_eq!(
        a,
        b"VALUE k 0 1 #0\r\nx\r\nVALUE j 0 1 #1\r\ny\r\nHD c#0\r\nEND\r\n"
    );
}
