//! Fidelity at the settings people run, against a real memcached 1.6 started by the test:
//! arithmetic on padded values, `curr_connections`, settings memcached refuses, and the
//! server clock ticking once a second. Without a memcached binary each test prints a
//! SKIPPED line (under `CI` it fails instead).

use std::path::Path;
use std::time::{Duration, Instant};

use mcsim::codec::Session;
use mcsim::protocol::{Reply, Request, StoreMode};
use mcsim::{Exptime, Key, Server, ServerConfig, VirtualTime};
use mcsim_real::{MemcachedDaemon, TcpClient};

fn daemon(args: &[&str]) -> Option<MemcachedDaemon> {
    MemcachedDaemon::start_for_test("settings", args)
}

#[test]
fn arithmetic_on_padded_values_matches() {
    let Some(d) = daemon(&[]) else { return };
    let mut real = d.connect().unwrap();
    let mut server = Server::new(ServerConfig::default(), VirtualTime::ZERO);
    let mut session = Session::new();
    for bytes in [
        &b"set n 0 0 4\r\n  12\r\nincr n 1\r\nget n\r\n"[..],
        b"set m 0 0 4\r\n12  \r\nincr m 1\r\nget m\r\n",
        b"set p 0 0 5\r\n 0012\r\nincr p 1\r\ndecr p 5\r\nget p\r\n",
        b"set t 0 0 3\r\n\t12\r\nincr t 1\r\n",
        b"set w 0 0 2\r\n99\r\nincr w 1\r\nget w\r\ndecr w 91\r\nget w\r\n",
        b"set z 0 0 3\r\n1 2\r\nincr z 1\r\n",
    ] {
        let sim = session.feed(&mut server, bytes, VirtualTime::ZERO);
        let got = real.send_raw_at_least(bytes, sim.len()).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&got.bytes),
            String::from_utf8_lossy(&sim),
            "for {:?}",
            String::from_utf8_lossy(bytes)
        );
    }
}

fn curr_connections(reply: Reply) -> u64 {
    reply
        .stat("curr_connections")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no curr_connections in {reply:?}"))
}

#[test]
fn curr_connections_counts_the_clients() {
    let Some(d) = daemon(&[]) else { return };
    let mut first: TcpClient = d.connect().unwrap();
    let _second = d.connect().unwrap();
    let _third = d.connect().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let real = curr_connections(first.call(&Request::Stats).unwrap());
    // Three virtual clients in an execution: three connections.
    let mut server = Server::new(ServerConfig::default(), VirtualTime::ZERO);
    server.set_connections(3);
    let sim = curr_connections(server.apply(&Request::Stats, VirtualTime::ZERO));
    assert_eq!((real, sim), (3, 3));
}

/// What memcached 1.6.18 does at start-up with `args`: `Ok` if it is still running after
/// a second (then stopped by its process id), or its exit status and what it printed.
fn memcached_start_up(binary: &Path, args: &[String]) -> Result<(), (i32, String)> {
    let mut command = std::process::Command::new(binary);
    command
        .args(["-l", "127.0.0.1", "-p", "0", "-U", "0"])
        .args(args);
    if running_as_root() {
        command.args(["-u", "root"]);
    }
    let mut child = command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn memcached");
    let deadline = Instant::now() + Duration::from_secs(1);
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut text).unwrap();
            return Err((status.code().unwrap_or(-1), text.trim().to_string()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    Ok(())
}

fn running_as_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

#[test]
fn settings_memcached_refuses_are_refused_in_its_words() {
    let Some(binary) = MemcachedDaemon::find_binary() else {
        assert!(std::env::var_os("CI").is_none(), "needs memcached on CI");
        eprintln!("SKIPPED: needs a memcached binary");
        return;
    };
    // (-m MiB, -I bytes, slab_chunk_max bytes)
    let cases: [(u64, u32, u32); 14] = [
        (64, 1024 * 1024, 512 * 1024),
        (64, 100, 512 * 1024),
        (1, 1024 * 1024, 512 * 1024),
        (0, 1024 * 1024, 512 * 1024),
        (64, 1500, 512 * 1024),
        (64, 16384, 512 * 1024),
        (64, 16384, 16384),
        (64, 1024, 1024),
        (64, 2_000_000, 512 * 1024),
        (64, 3 * 1024 * 1024, 512 * 1024),
        (64, 1024 * 1024, 100_000),
        (64, 1024 * 1024, 1024 * 1024),
        (4096, 1536 * 1024 * 1024, 512 * 1024),
        (64, 2 * 1024 * 1024, 512 * 1024),
    ];
    for (m, i, chunk) in cases {
        let args = [
            "-m".to_string(),
            m.to_string(),
            "-I".to_string(),
            i.to_string(),
            "-o".to_string(),
            format!("slab_chunk_max={chunk}"),
        ];
        let real = memcached_start_up(&binary, &args);
        let config = ServerConfig::default()
            .memory_mb(m)
            .item_size_max(i)
            .slab_chunk_max(chunk);
        let simulated = config.refusal().map_or(Ok(()), |why| Err((64, why)));
        assert_eq!(simulated, real, "-m {m} -I {i} -o slab_chunk_max={chunk}");
    }
    // Accepted by memcached, not modelled: refused, and saying so.
    let config = ServerConfig::default().slab_chunk_max(512);
    assert!(
        config.refusal().unwrap().contains("not modelled"),
        "{:?}",
        config.refusal()
    );
    assert_eq!(
        memcached_start_up(&binary, &["-o".to_string(), "slab_chunk_max=512".into()]),
        Ok(())
    );
    // A scenario file with such settings is refused on the field's line.
    let text = "recipe = \"lock\"\nvariant = \"add\"\nclients = 2\n\n[servers]\nmemory_mb = 1\n\
                item_size_max = 1048576\n\n[expect]\nverdict = \"pass\"\n";
    let families = [mcsim::model::family::<Idle>()];
    let e = mcsim::scenario::Scenario::parse(Path::new("s.toml"), text, &families).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("servers.item_size_max"), "{e}");
    assert!(
        e.message
            .contains("Cannot set item size limit higher than 1/2 of memory max."),
        "{e}"
    );
}

/// A family with one variant and no clients, for reading a scenario without the shipped
/// recipes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Idle;

impl mcsim::model::Model for Idle {
    const NAME: &'static str = "lock";
    const VARIANTS: &'static [(&'static str, Idle)] = &[("add", Idle)];
    const INVARIANTS: &'static [&'static str] = &[];
    type Params = ();

    fn setup(&self, _: &(), _: &mcsim::model::Context, _: &mut mcsim::Sim) {}
}

/// Polls `key` until it misses; returns when, since `from`.
fn miss_after(c: &mut TcpClient, key: &Key, from: Instant) -> Duration {
    let get = Request::Get {
        keys: vec![key.clone()],
        with_cas: false,
    };
    loop {
        if c.call(&get).unwrap() == Reply::Values(vec![]) {
            return from.elapsed();
        }
        std::thread::sleep(Duration::from_millis(5));
        assert!(from.elapsed() < Duration::from_secs(5), "never expired");
    }
}

#[test]
fn the_server_clock_ticks_once_a_second_as_simulated() {
    let Some(d) = daemon(&[]) else { return };
    let mut c = d.connect().unwrap();
    let set = |key: &Key, ttl: i64| Request::Store {
        mode: StoreMode::Set,
        key: key.clone(),
        flags: 0,
        exptime: Exptime(ttl),
        data: b"1".to_vec(),
        noreply: false,
    };
    // Find a tick: an item with TTL 1 disappears at the server's next tick but one.
    let probe = Key::new("probe").unwrap();
    c.call(&set(&probe, 1)).unwrap();
    let start = Instant::now();
    miss_after(&mut c, &probe, start);
    let tick = Instant::now();
    // 300 ms after a tick, store with TTL 2: memcached expires it when its clock reaches
    // the store's tick + 2, i.e. 1.7 s later, as the simulator with phase 0 does.
    std::thread::sleep(Duration::from_millis(300));
    let key = Key::new("k").unwrap();
    c.call(&set(&key, 2)).unwrap();
    let real = miss_after(&mut c, &key, tick);
    let mut server = Server::new(ServerConfig::default(), VirtualTime::ZERO);
    let at = VirtualTime::ZERO + Duration::from_millis(300);
    server.apply(set(&key, 2), at);
    let mut t = at;
    while server.peek(&key, t).is_some() {
        t += Duration::from_millis(5);
    }
    let sim = t.since(VirtualTime::ZERO);
    eprintln!("expired {real:?} after a tick on memcached, {sim:?} in the simulator");
    let diff = real.as_millis().abs_diff(sim.as_millis());
    assert!(diff < 150, "memcached {real:?}, simulator {sim:?}");
}
