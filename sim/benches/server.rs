//! Simulated memcached throughput: commands per second on one core.
//!
//! A seeded get/set/incr mix (50% get, 30% set, 20% incr over 1,000 keys) is generated up
//! front and applied through [`Server::apply`] with virtual time advancing 10 µs per
//! command. Variants: small values in the default 64 MB; ~8 KB values in 64 MB (nothing
//! evicted); the same ~8 KB values in 2 MB, where most stores evict.
//!
//! `cargo bench -p mcsim --bench server -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcsim::clock::VirtualTime;
use mcsim::memcache::{Exptime, Key};
use mcsim::protocol::{ArithOp, Request, StoreMode};
use mcsim::server::{Server, ServerConfig};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Distinct keys.
const KEYS: usize = 1_000;
/// Commands per measured iteration.
const BATCH: usize = 10_000;
/// Virtual time between two commands.
const STEP: Duration = Duration::from_micros(10);

/// A numeric value (so `incr` finds a number) padded with spaces to `len` bytes.
fn numeric_value(rng: &mut ChaCha8Rng, len: usize) -> Vec<u8> {
    let mut data = rng.random_range(0..1_000_000u64).to_string().into_bytes();
    data.resize(len.max(data.len()), b' ');
    data
}

/// The command mix, with value lengths drawn from `value_len`.
fn workload(seed: u64, value_len: std::ops::RangeInclusive<usize>) -> Vec<Request> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let keys: Vec<Key> = (0..KEYS)
        .map(|i| Key::new(format!("key:{i:04}")).expect("valid key"))
        .collect();
    (0..BATCH)
        .map(|_| {
            let key = keys[rng.random_range(0..KEYS)].clone();
            match rng.random_range(0..100u32) {
                0..50 => Request::Get {
                    keys: vec![key],
                    with_cas: false,
                },
                50..80 => {
                    let len = rng.random_range(value_len.clone());
                    // Most values never expire; a fifth live 5 to 60 seconds.
                    let exptime = if rng.random_range(0..5u32) == 0 {
                        Exptime::secs(rng.random_range(5..=60u32))
                    } else {
                        Exptime::NEVER
                    };
                    Request::Store {
                        mode: StoreMode::Set,
                        key,
                        flags: 0,
                        exptime,
                        data: numeric_value(&mut rng, len),
                        noreply: false,
                    }
                }
                _ => Request::Arith {
                    op: ArithOp::Incr,
                    key,
                    delta: rng.random_range(1..100u64),
                    noreply: false,
                },
            }
        })
        .collect()
}

/// A server with every key stored once, and the time after that.
fn warmed(
    config: ServerConfig,
    value_len: std::ops::RangeInclusive<usize>,
) -> (Server, VirtualTime) {
    let mut server = Server::new(config, VirtualTime::ZERO);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut now = VirtualTime::ZERO;
    for i in 0..KEYS {
        let len = rng.random_range(value_len.clone());
        let request = Request::Store {
            mode: StoreMode::Set,
            key: Key::new(format!("key:{i:04}")).expect("valid key"),
            flags: 0,
            exptime: Exptime::NEVER,
            data: numeric_value(&mut rng, len),
            noreply: false,
        };
        now += STEP;
        server.apply(&request, now);
    }
    (server, now)
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("server");
    group.throughput(Throughput::Elements(BATCH as u64));
    let variants = [
        ("get_set_incr/64MB/values_1-32B", 64, 1..=32),
        ("get_set_incr/64MB/values_6-10KB", 64, 6_000..=10_000),
        ("get_set_incr/2MB_evicting/values_6-10KB", 2, 6_000..=10_000),
    ];
    for (name, memory_mb, value_len) in variants {
        let requests = workload(42, value_len.clone());
        let (mut server, mut now) = warmed(ServerConfig::default().memory_mb(memory_mb), value_len);
        group.bench_function(name, |b| {
            b.iter(|| {
                for request in &requests {
                    now += STEP;
                    black_box(server.apply(black_box(request), now));
                }
            })
        });
        let stats = server.stats();
        println!(
            "{name}: {} items, {} evictions, {} get hits / {} gets",
            stats.curr_items, stats.evictions, stats.get_hits, stats.cmd_get
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
