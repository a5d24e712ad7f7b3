//! Section 13: `mcsim serve` over a long run at memcached's default `-m 64`, against
//! memcached 1.6.18 in the same run (both started here on free ports, stopped by their
//! pids):
//!
//! - memory: ten rounds of `memcslap` (16 connections × 20,000 commands), then ten rounds
//!   of stores of mixed sizes (100 B to 500 KB, geometrically spread, over more keys than
//!   64 MB holds, so that items are evicted), the resident set read after each round;
//! - a framing soak: eight connections send valid and malformed commands cut at random
//!   places, for a while; the `serve` process must still answer `version` at the end, and
//!   if it exited, its status is said.

#[allow(unused_imports)]
use super::*;

use std::io::{Read as _, Write as _};

use rand::{RngExt, SeedableRng};

/// Item memory of both servers: memcached's default `-m`.
const MEMORY_MB: u32 = 64;

/// Rounds of each load.
const ROUNDS: usize = 10;

/// One memcslap round: 16 connections × 20,000 commands.
fn memcslap_round(t: &Target) -> Result<(), String> {
    let status = Command::new("memcslap")
        .arg(format!("--servers=127.0.0.1:{}", t.addr.port()))
        .args(["--concurrency=16", "--execute-number=20000"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("memcslap: {e} (apt-get install libmemcached-tools)"))?;
    status
        .success()
        .then_some(())
        .ok_or_else(|| format!("memcslap against {} failed: {status}", t.name))
}

/// The sizes of the mixed load: 100 B to 500 KB, geometrically spread over 64 steps.
fn mixed_sizes() -> Vec<usize> {
    (0..64)
        .map(|i| (100.0 * 5000f64.powf(f64::from(i) / 63.0)) as usize)
        .collect()
}

/// One round of the mixed load: 400 stores of the mixed sizes, keys from a pool of 3,000
/// shared by the rounds (about 23 MB a round, 230 MB in all: evictions from round 3 on),
/// pipelined 20 at a time.
fn mixed_round(t: &Target, round: usize) -> Result<(), String> {
    let sizes = mixed_sizes();
    let mut s = connect(t.addr);
    let mut batch = Vec::new();
    let mut reply = vec![0u8; 4096];
    for chunk in 0..20 {
        batch.clear();
        for j in 0..20 {
            let i = round * 400 + chunk * 20 + j;
            let size = sizes[(i * 7) % sizes.len()];
            write!(batch, "set mixed{} 0 0 {size}\r\n", i % 3000).unwrap();
            batch.resize(batch.len() + size, b'x');
            batch.extend_from_slice(b"\r\n");
        }
        s.write_all(&batch).map_err(|e| e.to_string())?;
        let mut got = Vec::new();
        while got.windows(8).filter(|w| *w == b"STORED\r\n").count() < 20 {
            let n = s.read(&mut reply).map_err(|e| e.to_string())?;
            if n == 0 {
                return Err(format!("{} closed the connection", t.name));
            }
            got.extend_from_slice(&reply[..n]);
            if got.starts_with(b"SERVER_ERROR") {
                return Err(format!(
                    "{} answered {:?}",
                    t.name,
                    String::from_utf8_lossy(&got[..got.len().min(80)])
                ));
            }
        }
    }
    Ok(())
}

/// The resident set and the item bytes held (`STAT bytes`, MiB) after each of [`ROUNDS`]
/// rounds of `round`.
fn rounds(
    t: &Target,
    round: impl Fn(&Target, usize) -> Result<(), String>,
) -> Result<(Vec<f64>, Vec<f64>), String> {
    let mut rss = Vec::new();
    let mut held = Vec::new();
    for r in 0..ROUNDS {
        round(t, r)?;
        rss.push(rss_mib(t.pid));
        held.push(item_bytes(t)? as f64 / (1024.0 * 1024.0));
    }
    Ok((rss, held))
}

/// `STAT bytes` of `t`: the bytes its items take.
fn item_bytes(t: &Target) -> Result<u64, String> {
    let mut s = connect(t.addr);
    s.write_all(b"stats\r\n").map_err(|e| e.to_string())?;
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    while !got.ends_with(b"END\r\n") {
        let n = s.read(&mut chunk).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err(format!("{} closed the connection during stats", t.name));
        }
        got.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8_lossy(&got)
        .lines()
        .find_map(|l| l.strip_prefix("STAT bytes "))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("{} gave no STAT bytes", t.name))
}

/// What is sent in the framing soak, whole or cut anywhere: valid commands, malformed
/// lines, lengths that lie, a binary packet, a value over the limit.
const PIECES: [&[u8]; 12] = [
    b"set a 0 0 5\r\nhello\r\n",
    b"get a b c\r\n",
    b"gets a\r\nincr n 1\r\n",
    b"add n 0 0 1 noreply\r\n1\r\n",
    b"mg a v t s\r\nms b 3 T10\r\nxyz\r\nmn\r\n",
    b"set a 0 0 3\r\ntoolong\r\n",
    b"get \r\n",
    b"set b 0 0 -1\r\n",
    b"\x80\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00a",
    b"gibberish \x00\xff\r\n",
    b"set big 0 0 2000000\r\n",
    b"delete a\r\nversion\r\n",
];

/// Eight connections send random cuts of [`PIECES`] for `seconds`, each reading what
/// comes back without waiting for it, and reconnecting now and then or when closed.
/// Returns the bytes sent.
fn framing_soak(t: &Target, seconds: u64) -> u64 {
    let until = Instant::now() + Duration::from_secs(seconds);
    let sent = std::sync::atomic::AtomicU64::new(0);
    std::thread::scope(|scope| {
        for worker in 0..8u64 {
            let sent = &sent;
            scope.spawn(move || {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(worker);
                let mut buf = vec![0u8; 64 * 1024];
                while Instant::now() < until {
                    let Ok(mut s) = std::net::TcpStream::connect(t.addr) else {
                        std::thread::sleep(Duration::from_millis(10));
                        continue;
                    };
                    let _ = s.set_read_timeout(Some(Duration::from_millis(1)));
                    for _ in 0..rng.random_range(1..200) {
                        let piece = PIECES[rng.random_range(0..PIECES.len())];
                        let cut = rng.random_range(0..=piece.len());
                        for part in [&piece[..cut], &piece[cut..]] {
                            if s.write_all(part).is_err() {
                                break;
                            }
                            sent.fetch_add(part.len() as u64, Ordering::Relaxed);
                        }
                        let _ = s.read(&mut buf);
                    }
                }
            });
        }
    });
    sent.into_inner()
}

/// `version` on a fresh connection, or why not.
fn answers(t: &Target) -> Result<(), String> {
    let mut s = std::net::TcpStream::connect(t.addr).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    s.write_all(b"version\r\n").map_err(|e| e.to_string())?;
    let mut buf = [0u8; 64];
    let n = s.read(&mut buf).map_err(|e| e.to_string())?;
    buf[..n]
        .starts_with(b"VERSION ")
        .then_some(())
        .ok_or_else(|| format!("answered {:?}", String::from_utf8_lossy(&buf[..n])))
}

/// Growth from round 4 to round 10, in percent.
fn growth(rss: &[f64]) -> f64 {
    (rss[ROUNDS - 1] / rss[3] - 1.0) * 100.0
}

/// Writes §13; true if `serve` met both marks on both loads (growth under 5% from round
/// 4 to 10, at most 1.3× memcached's resident set at the end) and survived the soak.
pub(crate) fn section_soak(md: &mut String, fuzz_seconds: u64) -> Result<bool, String> {
    let real = memcached_target(MEMORY_MB)?;
    let sim = serve_target(&[], MEMORY_MB)?;
    let (real_slap, _) = rounds(&real, |t, _| memcslap_round(t))?;
    let (sim_slap, _) = rounds(&sim, |t, _| memcslap_round(t))?;
    drop((real, sim));
    let real = memcached_target(MEMORY_MB)?;
    let sim = serve_target(&[], MEMORY_MB)?;
    let (real_mixed, real_held) = rounds(&real, mixed_round)?;
    let (sim_mixed, sim_held) = rounds(&sim, mixed_round)?;
    drop(real);
    writeln!(
        md,
        "\n## 13. Memory over a long run, and a framing soak\n\n\
         Both servers at `-m {MEMORY_MB}`, started afresh for each load. Resident set (MiB) \
         after each round: `memcslap` (16 connections × 20,000 commands) and stores of \
         mixed sizes (400 a round, 100 B to 500 KB, 3,000 keys, evicting), with the item \
         bytes each holds then (`STAT bytes`, MiB).\n\n\
         | round | memcslap: memcached | memcslap: serve | mixed: memcached | mixed: serve | \
         mixed: items held, memcached | mixed: items held, serve |\n\
         |---:|---:|---:|---:|---:|---:|---:|"
    )
    .unwrap();
    for r in 0..ROUNDS {
        writeln!(
            md,
            "| {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.1} | {:.1} |",
            r + 1,
            real_slap[r],
            sim_slap[r],
            real_mixed[r],
            sim_mixed[r],
            real_held[r],
            sim_held[r]
        )
        .unwrap();
    }
    let mut met = true;
    for (load, sim, real) in [
        ("memcslap", &sim_slap, &real_slap),
        ("mixed", &sim_mixed, &real_mixed),
    ] {
        let (g, ratio) = (growth(sim), sim[ROUNDS - 1] / real[ROUNDS - 1]);
        let ok = g < 5.0 && ratio <= 1.3;
        met &= ok;
        writeln!(
            md,
            "\n{load}: serve grew {g:+.1}% from round 4 to 10 (mark: under 5%) and ends at \
             {ratio:.2}× memcached's resident set (mark: at most 1.3×): {}",
            if ok { "met" } else { "NOT met" }
        )
        .unwrap();
    }
    // The mixed load's items fill up for longer: what they take grows on after round 4
    // in both servers, which the resident set of one that allocates item by item follows.
    writeln!(
        md,
        "\nmixed: the item bytes held grew {:+.1}% from round 4 to 10 in serve and {:+.1}% in \
         memcached.",
        growth(&sim_held),
        growth(&real_held)
    )
    .unwrap();
    drop(sim);
    let mut sim = serve_target(&[], MEMORY_MB)?;
    let sent = framing_soak(&sim, fuzz_seconds);
    let exited = sim.child.as_mut().and_then(|c| c.try_wait().ok().flatten());
    let alive = match (exited, answers(&sim)) {
        (Some(status), _) => format!("serve EXITED ({status})"),
        (None, Err(e)) => format!("serve is running but does not answer `version`: {e}"),
        (None, Ok(())) => "serve still answers `version`".to_string(),
    };
    met &= alive.starts_with("serve still");
    writeln!(
        md,
        "\nFraming soak: 8 connections sent {:.1} MB of whole and cut commands for \
         {fuzz_seconds} s; {alive}.",
        sent as f64 / 1e6
    )
    .unwrap();
    Ok(met)
}
