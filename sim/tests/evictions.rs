//! The simulator against a real memcached 1.6 under memory pressure, with the packaged
//! memcached's default LRU settings (segmented LRU, background LRU maintainer and slab
//! mover on): hundreds of evictions, then what a client can observe compared. Which keys
//! survive, every reply, and the `stats` counters a recipe could read.
//!
//! The real server's LRU maintainer is a background thread: exactly which cold item goes
//! first depends on when it ran, so single keys at the edge of the eviction window may
//! differ. What a recipe can rely on must agree exactly and is asserted exactly:
//! small items are never evicted by large values (eviction stays in the slab class that
//! needs space), items read twice survive a flood that evicts items read once, the newest
//! items of a flood survive and the oldest do not. The key-by-key agreement over every key
//! is printed and must stay above 95%.

use std::collections::BTreeSet;
use std::time::Duration;

use mcsim::protocol::{Reply, Request, StoreMode};
use mcsim::{Exptime, Key, Server, ServerConfig, VirtualTime};
use mcsim_real::MemcachedDaemon;

/// Both servers, fed the same requests.
struct Pair {
    real: mcsim_real::TcpClient,
    sim: Server,
    now: VirtualTime,
}

impl Pair {
    /// Sends one request to both; the replies must be equal.
    fn both(&mut self, request: &Request) -> Reply {
        let real = self.real.call(request).expect("memcached answers");
        let sim = self.sim.apply(request, self.now);
        assert_eq!(real, sim, "replies differ for {}", request.name());
        real
    }

    fn set(&mut self, key: &str, len: usize) {
        let request = Request::Store {
            mode: StoreMode::Set,
            key: Key::new(key).unwrap(),
            flags: 0,
            exptime: Exptime::NEVER,
            data: vec![b'v'; len],
            noreply: false,
        };
        assert_eq!(self.both(&request), Reply::Stored, "set {key}");
    }

    /// Reads a key on both without comparing (survival is compared in bulk).
    fn touch_read(&mut self, key: &str) {
        let request = Request::Get {
            keys: vec![Key::new(key).unwrap()],
            with_cas: false,
        };
        self.real.call(&request).expect("memcached answers");
        self.sim.apply(&request, self.now);
    }

    /// Which of `keys` each server still holds (multi-gets of 100 keys).
    fn surviving(&mut self, keys: &[String]) -> (BTreeSet<String>, BTreeSet<String>) {
        let (mut real, mut sim) = (BTreeSet::new(), BTreeSet::new());
        for chunk in keys.chunks(100) {
            let request = Request::Get {
                keys: chunk
                    .iter()
                    .map(|k| Key::new(k.as_str()).unwrap())
                    .collect(),
                with_cas: false,
            };
            for (reply, out) in [
                (
                    self.real.call(&request).expect("memcached answers"),
                    &mut real,
                ),
                (self.sim.apply(&request, self.now), &mut sim),
            ] {
                if let Reply::Values(v) = reply {
                    out.extend(v.into_iter().map(|e| e.key.to_string()));
                }
            }
        }
        (real, sim)
    }

    fn stat(&mut self, name: &str) -> (u64, u64) {
        let get = |reply: Reply| match &reply {
            Reply::Stats(_) => reply
                .stat(name)
                .and_then(|v| v.parse().ok())
                .unwrap_or(u64::MAX),
            other => panic!("{other:?}"),
        };
        let real = get(self.real.call(&Request::Stats).unwrap());
        let sim = get(self.sim.apply(&Request::Stats, self.now));
        (real, sim)
    }
}

fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

/// A pause that lets the real server's LRU maintainer catch up between phases.
fn settle() {
    std::thread::sleep(Duration::from_millis(300));
}

#[test]
fn evictions_match_a_real_memcached() {
    let Some(daemon) = MemcachedDaemon::start_for_test("eviction", &["-m", "4", "-I", "1m"]) else {
        return;
    };
    let config = ServerConfig::default()
        .memory_mb(4)
        .item_size_max(1024 * 1024);
    let mut p = Pair {
        real: daemon.connect().expect("connect"),
        sim: Server::new(config, VirtualTime::ZERO),
        now: VirtualTime::ZERO,
    };

    // Small items in one class, some of them read twice (protected).
    let small = names("small", 3000);
    for k in &small {
        p.set(k, 10);
    }
    settle();
    let protected: Vec<String> = small[..200].to_vec();
    for _ in 0..2 {
        for k in &protected {
            p.touch_read(k);
        }
    }
    settle();
    // A flood of items of one bigger class, far beyond memory.
    let flood = names("flood", 40_000);
    for (i, k) in flood.iter().enumerate() {
        p.set(k, 150);
        if i % 5000 == 4999 {
            settle();
        }
    }
    settle();
    // Values above half a page: chunked items.
    let large = names("large", 12);
    for k in &large {
        p.set(k, 600 * 1024);
        settle();
    }
    settle();

    let mut all = small.clone();
    all.extend(flood.iter().cloned());
    all.extend(large.iter().cloned());
    let (real, sim) = p.surviving(&all);
    let (ev_real, ev_sim) = p.stat("evictions");
    let (items_real, items_sim) = p.stat("curr_items");
    let agree = all
        .iter()
        .filter(|k| real.contains(*k) == sim.contains(*k))
        .count();
    let share = agree as f64 / all.len() as f64;
    eprintln!(
        "evictions: memcached {ev_real}, simulator {ev_sim}; items: memcached {items_real}, \
         simulator {items_sim}; keys surviving alike: {agree} of {} ({:.1}%)",
        all.len(),
        share * 100.0
    );
    for (name, keys) in [("small", &small), ("flood", &flood), ("large", &large)] {
        let r = keys.iter().filter(|k| real.contains(*k)).count();
        let s = keys.iter().filter(|k| sim.contains(*k)).count();
        eprintln!(
            "  {name}: memcached keeps {r}, simulator {s} of {}",
            keys.len()
        );
    }
    assert!(
        ev_real > 100 && ev_sim > 100,
        "too few evictions to compare"
    );
    // What a recipe can rely on, exactly.
    for k in &protected {
        assert!(real.contains(k) && sim.contains(k), "protected {k} evicted");
    }
    let last_flood = &flood[flood.len() - 500..];
    for k in last_flood {
        assert!(real.contains(k) && sim.contains(k), "newest {k} evicted");
    }
    for k in &flood[..500] {
        assert!(!real.contains(k) && !sim.contains(k), "oldest {k} kept");
    }
    assert!(
        share > 0.95,
        "only {:.1}% of keys survive alike",
        share * 100.0
    );
}
