//! Section 5: the simulated server alone, commands per second on one core.

#[allow(unused_imports)]
use super::*;

use mcsim::memcache::{Exptime, Key};
use mcsim::protocol::{ArithOp, Request, StoreMode};
use mcsim::{ServerConfig, VirtualTime};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Commands generated for one measured batch.
const BATCH: usize = 200_000;

/// A command mix: its name, keys, and how it draws commands.
struct Mix {
    name: &'static str,
    describe: &'static str,
    keys: usize,
    memory_mb: u64,
    draw: fn(&mut ChaCha8Rng, &[Key]) -> Request,
}

/// A key index drawn with a skew: a few keys take most of the traffic (each key's
/// weight falls as 1/rank, a Zipf(1) law, by inverse transform over its harmonic sum).
fn skewed(rng: &mut ChaCha8Rng, n: usize) -> usize {
    let u: f64 = rng.random_range(0.0..1.0);
    // H(n) ≈ ln n + γ; rank = e^(u·H) − 1, rounded down, within range.
    let h = (n as f64).ln() + 0.577_215_7;
    (((u * h).exp() - 1.0) as usize).min(n - 1)
}

fn value(rng: &mut ChaCha8Rng, len: usize) -> Vec<u8> {
    let mut data = rng.random_range(0..1_000_000u64).to_string().into_bytes();
    data.resize(len.max(data.len()), b' ');
    data
}

fn store(key: Key, exptime: Exptime, data: Vec<u8>) -> Request {
    Request::Store {
        mode: StoreMode::Set,
        key,
        flags: 0,
        exptime,
        data,
        noreply: false,
    }
}

/// A cache in front of a database: 80% `get`, 12% `set`, 4% `incr`, 2% `delete`,
/// 2% `add`; Zipf-skewed keys; values mostly small (70% 10–100 B, 25% 100 B–2 KB, 5%
/// 2–10 KB); a quarter of stores expire within a minute.
fn realistic(rng: &mut ChaCha8Rng, keys: &[Key]) -> Request {
    let key = keys[skewed(rng, keys.len())].clone();
    let len = match rng.random_range(0..100u32) {
        0..70 => rng.random_range(10..=100),
        70..95 => rng.random_range(100..=2_000),
        _ => rng.random_range(2_000..=10_000),
    };
    let exptime = if rng.random_range(0..4u32) == 0 {
        Exptime::secs(rng.random_range(5..=60u32))
    } else {
        Exptime::NEVER
    };
    match rng.random_range(0..100u32) {
        0..80 => Request::Get {
            keys: vec![key],
            with_cas: false,
        },
        80..92 => store(key, exptime, value(rng, len)),
        92..96 => Request::Arith {
            op: ArithOp::Incr,
            key,
            delta: 1,
            noreply: false,
        },
        96..98 => Request::Delete {
            key,
            noreply: false,
        },
        _ => Request::Store {
            mode: StoreMode::Add,
            key,
            flags: 0,
            exptime,
            data: value(rng, len),
            noreply: false,
        },
    }
}

/// The criterion bench's mix: 50% get, 30% set, 20% incr, uniform keys, 1–32 B values.
fn small(rng: &mut ChaCha8Rng, keys: &[Key]) -> Request {
    let key = keys[rng.random_range(0..keys.len())].clone();
    match rng.random_range(0..100u32) {
        0..50 => Request::Get {
            keys: vec![key],
            with_cas: false,
        },
        50..80 => {
            let len = rng.random_range(1..=32);
            store(key, Exptime::NEVER, value(rng, len))
        }
        _ => Request::Arith {
            op: ArithOp::Incr,
            key,
            delta: 1,
            noreply: false,
        },
    }
}

const MIXES: [Mix; 3] = [
    Mix {
        name: "realistic",
        describe: "80% get, 12% set, 4% incr, 2% delete, 2% add; Zipf keys over 10,000; values 70% 10–100 B, 25% to 2 KB, 5% to 10 KB; 64 MB",
        keys: 10_000,
        memory_mb: 64,
        draw: realistic,
    },
    Mix {
        name: "small values",
        describe: "50% get, 30% set, 20% incr; uniform keys over 1,000; values 1–32 B; 64 MB",
        keys: 1_000,
        memory_mb: 64,
        draw: small,
    },
    Mix {
        name: "realistic, evicting",
        describe: "the realistic mix in a 2 MB server (`-m 2`)",
        keys: 10_000,
        memory_mb: 2,
        draw: realistic,
    },
];

/// Commands per second of `mix` on one server: batches of pre-generated commands moved
/// into [`Server::apply`] (what the executor does), virtual time 10 µs apart, after
/// one warm-up batch. Generation is not timed.
fn commands_per_sec(mix: &Mix) -> (f64, u64) {
    let keys: Vec<Key> = (0..mix.keys)
        .map(|i| Key::new(format!("user:{i:05}:profile")).expect("a valid key"))
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let mut server = Server::new(
        ServerConfig::default().memory_mb(mix.memory_mb),
        VirtualTime::ZERO,
    );
    let mut now = VirtualTime::ZERO;
    let step = Duration::from_micros(10);
    let mut timed = Duration::ZERO;
    let mut done = 0u64;
    let mut batch = 0;
    while timed < RATE_TARGET || batch < 3 {
        let requests: Vec<Request> = (0..BATCH).map(|_| (mix.draw)(&mut rng, &keys)).collect();
        let t = Instant::now();
        for r in requests {
            now += step;
            std::hint::black_box(server.apply(r, now));
        }
        if batch > 0 {
            timed += t.elapsed();
            done += BATCH as u64;
        }
        batch += 1;
    }
    (done as f64 / timed.as_secs_f64(), server.stats().evictions)
}

/// The simulated server's commands per second on each mix; returns the realistic mix's.
pub(crate) fn section_server(md: &mut String) -> f64 {
    writeln!(
        md,
        "\n## 5. The simulated server alone\n\n\
         Commands per second on one core, each mix generated up front (ChaCha8, seed 42) \
         and moved into `Server::apply` as the executor does, virtual time 10 µs \
         apart, about {} s per mix after a warm-up batch. `cargo bench -p mcsim --bench \
         server` measures the same server under criterion.\n\n\
         | mix | what | commands/s | evictions |\n|---|---|---:|---:|",
        RATE_TARGET.as_secs()
    )
    .unwrap();
    let mut realistic = 0.0;
    for mix in &MIXES {
        eprintln!("server: {}", mix.name);
        let (rate, evictions) = commands_per_sec(mix);
        if mix.name == "realistic" {
            realistic = rate;
        }
        writeln!(
            md,
            "| {} | {} | {:.2} M | {evictions} |",
            mix.name,
            mix.describe,
            rate / 1e6
        )
        .unwrap();
    }
    realistic
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skewed_keys_favour_the_first_ranks_and_stay_in_range() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let draws: Vec<usize> = (0..10_000).map(|_| skewed(&mut rng, 1_000)).collect();
        assert!(draws.iter().all(|&k| k < 1_000));
        let top = draws.iter().filter(|&&k| k < 10).count();
        assert!(top > 2_000, "the 10 hottest keys take {top} of 10,000");
    }
}
