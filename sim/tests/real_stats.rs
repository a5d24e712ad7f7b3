//! `stats items`, `stats slabs`, `stats settings` and meta debug (`me`) against a real
//! memcached 1.6.18 started by the test with its default settings, and once with 2 MB of
//! memory so that items are evicted.
//!
//! The same commands go to the real server and to a simulated one whose clock reads what
//! the real one's does: each phase starts right after a tick edge of the real server
//! (its `time` stat changes), and the simulator runs it at the virtual time whose tick is
//! the real server's (`uptime` + 60, memcached's `current_time`). Between phases the test
//! waits two seconds: memcached's LRU maintainer moves new items from HOT to COLD and
//! read items to WARM on its own thread, up to a second later; the simulator does it at
//! once, so `stats items` is compared after the real one has caught up.
//!
//! Without a memcached binary the test prints a SKIPPED line, unless `CI` is set.

use std::time::{Duration, Instant};

use mcsim::codec::read_request;
use mcsim::protocol::{Reply, Request};
use mcsim::{Server, ServerConfig, VirtualTime};
use mcsim_real::{MemcachedDaemon, TcpClient};

fn daemon(args: &[&str]) -> Option<MemcachedDaemon> {
    MemcachedDaemon::start_for_test("stats", args)
}

fn request(text: &str) -> Request {
    let line = if text.ends_with("\r\n") {
        text.to_string()
    } else {
        format!("{text}\r\n")
    };
    match read_request(line.as_bytes()) {
        Ok(Some((request, _))) => request,
        other => panic!("test bug: {text:?} does not parse: {other:?}"),
    }
}

fn stat(conn: &mut TcpClient, name: &str) -> u64 {
    let stats = conn.call(&Request::Stats).expect("stats");
    stats
        .stat(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} stat in {stats:?}"))
}

/// Both servers, their clocks read alike.
struct Both {
    real: TcpClient,
    watch: TcpClient,
    sim: Server,
}

impl Both {
    fn new(daemon: &MemcachedDaemon, config: ServerConfig) -> Both {
        let config = ServerConfig {
            tcp_port: daemon.addr().port(),
            ..config
        };
        Both {
            real: daemon.connect().unwrap(),
            watch: daemon.connect().unwrap(),
            sim: Server::new(config, VirtualTime::ZERO),
        }
    }

    /// Waits for the real server's next tick edge; the virtual time of the same tick.
    fn next_edge(&mut self) -> VirtualTime {
        let before = stat(&mut self.watch, "time");
        let deadline = Instant::now() + Duration::from_secs(3);
        while stat(&mut self.watch, "time") == before {
            assert!(Instant::now() < deadline, "the real clock did not tick");
            std::thread::sleep(Duration::from_millis(2));
        }
        let uptime = stat(&mut self.watch, "uptime");
        // memcached's current_time is uptime + 60; the simulator's tick at virtual time
        // t (phase 0) is 62 + whole seconds of t.
        VirtualTime::from_secs(uptime - 2) + Duration::from_millis(1)
    }

    /// Runs `lines` on both within one tick of the real server; every reply must match.
    fn phase(&mut self, lines: &[String]) {
        let now = self.next_edge();
        let started = Instant::now();
        let mut replies = Vec::new();
        for line in lines {
            let r = request(line);
            replies.push((line, self.real.call(&r).unwrap(), self.sim.apply(&r, now)));
        }
        assert!(
            started.elapsed() < Duration::from_millis(700),
            "a phase took {:?}: too slow to stay within one tick of the real server",
            started.elapsed()
        );
        for (line, real, sim) in replies {
            let short: String = line.chars().take(60).collect();
            if line.starts_with("stats items") {
                same_items(&sim, &real);
            } else if line.as_str() == "stats" {
                same_counters(&sim, &real);
            } else {
                assert_eq!(sim, real, "{short:?}: simulator against memcached");
            }
        }
    }
}

/// Fields of `stats items` that follow memcached's LRU maintainer thread, which moves
/// items between the queues on its own time: compared by their sums. `lrutail_reflocked`
/// counts the times that thread met an item another thread was holding a reference to.
const MAINTAINER: [&str; 14] = [
    "lrutail_reflocked",
    "number_hot",
    "number_warm",
    "number_cold",
    "age_hot",
    "age_warm",
    "age",
    "moves_to_cold",
    "moves_to_warm",
    "moves_within_lru",
    "direct_reclaims",
    "hits_to_hot",
    "hits_to_warm",
    "hits_to_cold",
];

fn lines(reply: &Reply) -> &[(String, String)] {
    match reply {
        Reply::Stats(lines) => lines,
        other => panic!("stats answered {other:?}"),
    }
}

/// `stats items` of both servers: the same classes and fields in the same order, every
/// field equal but those of [`MAINTAINER`], and for those the queues' items adding up to
/// `number` on both and the same hits over the queues.
fn same_items(sim: &Reply, real: &Reply) {
    let (sim, real) = (lines(sim), lines(real));
    let names = |l: &[(String, String)]| l.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    assert_eq!(names(sim), names(real), "stats items: fields");
    let field = |name: &str| name.rsplit(':').next().unwrap().to_string();
    for ((k, s), (_, r)) in sim.iter().zip(real) {
        if !MAINTAINER.contains(&field(k).as_str()) {
            assert_eq!(s, r, "stats items: {k}");
        }
    }
    let sum = |l: &[(String, String)], class: &str, fields: &[&str]| -> u64 {
        l.iter()
            .filter(|(k, _)| k.starts_with(class) && fields.contains(&field(k).as_str()))
            .map(|(_, v)| v.parse::<u64>().unwrap())
            .sum()
    };
    let classes: Vec<String> = sim
        .iter()
        .filter(|(k, _)| k.ends_with(":number"))
        .map(|(k, _)| k.trim_end_matches("number").to_string())
        .collect();
    for class in classes {
        for fields in [
            &["number_hot", "number_warm", "number_cold"][..],
            &["hits_to_hot", "hits_to_warm", "hits_to_cold"],
        ] {
            assert_eq!(
                sum(sim, &class, fields),
                sum(real, &class, fields),
                "stats items: {class} {fields:?}"
            );
        }
    }
}

/// Fields of plain `stats` that describe the process, its connections and its
/// background threads, not the items: the simulated server reports its own (an
/// in-process one has no pid, no CPU time, no sockets), and the LRU maintainer's moves
/// follow its thread's timing ([`MAINTAINER`]).
const OWN: [&str; 20] = [
    "pid",
    "uptime",
    "time",
    "rusage_user",
    "rusage_system",
    "curr_connections",
    "total_connections",
    "connection_structures",
    "response_obj_count",
    "response_obj_bytes",
    "read_buf_count",
    "read_buf_bytes",
    "read_buf_bytes_free",
    "bytes_read",
    "bytes_written",
    "lru_crawler_starts",
    "lru_maintainer_juggles",
    "lrutail_reflocked",
    "moves_to_cold",
    "moves_to_warm",
];

/// Plain `stats` of both servers: memcached 1.6.18's every field, in its order, and
/// every field the simulation determines equal (all but [`OWN`] and the maintainer's).
fn same_counters(sim: &Reply, real: &Reply) {
    let (sim, real) = (lines(sim), lines(real));
    let names = |l: &[(String, String)]| l.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    assert_eq!(names(sim), names(real), "stats: fields");
    for ((name, s), (_, r)) in sim.iter().zip(real) {
        if !OWN.contains(&name.as_str()) && !MAINTAINER.contains(&name.as_str()) {
            assert_eq!(s, r, "stats: {name}");
        }
    }
}

fn set(key: &str, ttl: u32, len: usize) -> String {
    format!("set {key} 0 {ttl} {len}\r\n{}\r\n", "v".repeat(len))
}

#[test]
fn stats_groups_and_meta_debug_match_memcached() {
    let Some(d) = daemon(&[]) else { return };
    let mut both = Both::new(&d, ServerConfig::default());
    // Items of several classes: small, medium, a chunked one, base64 keys, a counter.
    let mut stores = vec![
        set("a", 0, 5),
        set("bb", 100, 700),
        set("big", 0, 600 * 1024),
        set("n", 0, 2).replace("vv", "10"),
        set("c", 0, 1),
        set("t", 10, 1),
        "ms AAEC 1 b T100\r\nz\r\n".to_string(),
        "ms YSBi 3 b\r\nxyz\r\n".to_string(),
        "me AAEC b".to_string(),
        "stats slabs".to_string(),
    ];
    for i in 0..40 {
        stores.push(set(&format!("k{i}"), 50, 30 + i * 40));
    }
    both.phase(&stores);
    std::thread::sleep(Duration::from_millis(1200));
    both.phase(&[
        "get a".into(),
        "get a".into(),
        "gets bb".into(),
        "incr n 5".into(),
        "decr n 1".into(),
        "touch t 200".into(),
        "cas c 0 0 1 999\r\ny".into(),
        "delete zz".into(),
        "delete c".into(),
        "mg YSBi b k v".into(),
        "get k3 k7 k11".into(),
        "me bb".into(),
        "me t".into(),
        "me AAEC b".into(),
        "me big".into(),
        "me n".into(),
        "me zz".into(),
        "me a b".into(),
        "verbosity 7".into(),
        "flush_all 100".into(),
        "stats settings".into(),
    ]);
    std::thread::sleep(Duration::from_millis(1200));
    both.phase(&[
        "stats items".into(),
        "stats slabs".into(),
        "stats settings".into(),
        "stats".into(),
        // Counters back to zero; items, bytes and the LRU queues stay.
        "stats reset".into(),
        "get bb".into(),
        "stats".into(),
        "stats slabs".into(),
        "stats items".into(),
    ]);
}

#[test]
fn stats_groups_match_memcached_under_evictions() {
    let Some(d) = daemon(&["-m", "2"]) else {
        return;
    };
    let mut both = Both::new(&d, ServerConfig::default().memory_mb(2));
    // 3 MB of 1 KB items in one class, a few read (fetched) and some with a TTL: the
    // class's COLD tail is evicted.
    let mut lines = Vec::new();
    for i in 0..3000 {
        let ttl = if i % 3 == 0 { 0 } else { 500 };
        lines.push(set(&format!("e{i}"), ttl, 1000));
        if i % 100 == 0 {
            lines.push(format!("get e{i}"));
        }
    }
    both.phase(&lines);
    std::thread::sleep(Duration::from_millis(1200));
    both.phase(&[
        "stats items".into(),
        "stats slabs".into(),
        "me e2999".into(),
        "me e0".into(),
    ]);
}
