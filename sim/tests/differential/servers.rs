//! The two servers, and the test that drives both with the same bytes.

#[allow(unused_imports)]
use super::*;

pub(crate) struct Simulated {
    pub(crate) server: Server,
    pub(crate) session: Session,
    pub(crate) now: VirtualTime,
}

impl Simulated {
    pub(crate) fn new() -> Simulated {
        let config = ServerConfig::default()
            .memory_mb(64)
            .item_size_max(ITEM_MAX as u32);
        Simulated {
            server: Server::new(config, VirtualTime::ZERO),
            session: Session::new(),
            now: VirtualTime::from_secs(1),
        }
    }

    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Vec<u8> {
        self.session.feed(&mut self.server, bytes, self.now)
    }
}

/// memcached as both differential tests run it, `None` (after a SKIPPED line) without a
/// binary, except on CI, where `test` fails.
///
/// The background LRU threads and the slab mover briefly hold references to items, which
/// decides whether incr/decr rewrites a number in place (padded) or stores a new item:
/// they are switched off so the real server is deterministic. Neither changes what a
/// client sees while nothing is evicted.
pub(crate) fn start_memcached(test: &str) -> Option<MemcachedDaemon> {
    MemcachedDaemon::start_for_test(
        test,
        &[
            "-m",
            "64",
            "-I",
            "1m",
            "-o",
            "no_lru_crawler,no_lru_maintainer,no_slab_automove",
        ],
    )
}

/// True if the simulator answers meta commands (rather than `ERROR`).
pub(crate) fn simulator_has_meta() -> bool {
    let mut sim = Simulated::new();
    sim.feed(b"mg probe v\r\n") != b"ERROR\r\n"
}

#[test]
pub(crate) fn simulator_matches_real_memcached() {
    let Some(daemon) = start_memcached("differential") else {
        return;
    };
    // Not beside the tests that time their pieces: it would load the machine they read.
    let _serial = serial();
    let sequences = env_number("MCSIM_DIFF_SEQUENCES").map_or(DEFAULT_SEQUENCES, |n| n as usize);
    let seed = env_number("MCSIM_DIFF_SEED").unwrap_or(DEFAULT_SEED);
    let meta = match std::env::var("MCSIM_DIFF_META").as_deref() {
        Ok("0") => false,
        _ => simulator_has_meta(),
    };
    if !meta {
        eprintln!(
            "differential: meta commands left out (the simulator answers mg with ERROR, or MCSIM_DIFF_META=0)"
        );
    }

    let started = Instant::now();
    let mut generator = Generator::new(seed, meta);
    let mut sim = Simulated::new();
    let mut real = daemon.connect().expect("connect to memcached");
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut commands = 0usize;
    let mut batches = 0usize;
    let mut reconnects = 0usize;

    let mut scripts: Vec<Vec<Vec<u8>>> = scripts();
    if meta {
        scripts.extend(meta_scripts());
    }
    let total = scripts.len() + sequences;
    for sequence in 0..total {
        let script = scripts.get(sequence);
        let length = script.map_or_else(|| 5 + generator.below(26), Vec::len);
        let mut history: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for step in 0..=length {
            let batch = if step == 0 {
                Batch {
                    bytes: b"flush_all\r\n".to_vec(),
                    names: vec!["flush_all"],
                    keys: vec![],
                }
            } else if let Some(script) = script {
                Batch {
                    bytes: script[step - 1].clone(),
                    names: vec!["scripted"],
                    keys: vec![],
                }
            } else {
                generator.batch()
            };
            batches += 1;
            commands += batch.names.len();
            for n in &batch.names {
                *counts.entry(n).or_default() += 1;
            }
            let sim_out = sim.feed(&batch.bytes);
            let closed = sim.session.is_closed();
            let real_out = if closed {
                real.send_raw_until_close(&batch.bytes)
            } else {
                assert!(
                    sim.session.is_idle(),
                    "generator bug: batch leaves the connection mid-command: {}",
                    show(&batch.bytes)
                );
                let marker = sim.feed(b"mn\r\n");
                assert_eq!(marker, b"MN\r\n", "simulator did not answer mn");
                real.send_raw_at_least(&batch.bytes, sim_out.len())
            }
            .expect("talking to memcached");
            let expected_end = if closed {
                RawEnd::Closed
            } else {
                RawEnd::Marker
            };
            if real_out.bytes != sim_out || real_out.end != expected_end {
                eprintln!("MISMATCH in sequence {sequence}, step {step} (seed {seed:#x})");
                eprintln!("  earlier steps of this sequence (sent => both answered):");
                for (i, (sent, got)) in history.iter().enumerate() {
                    eprintln!("    {i:>2}: {} => {}", show_short(sent), show_short(got));
                }
                let same = real_out
                    .bytes
                    .iter()
                    .zip(&sim_out)
                    .take_while(|(a, b)| a == b)
                    .count();
                let from = same.saturating_sub(80);
                eprintln!("  commands:  {:?}", batch.names);
                eprintln!(
                    "  replies agree on {same} bytes; from byte {from}: memcached {} / simulator {}",
                    show_short(&real_out.bytes[from..]),
                    show_short(&sim_out[from.min(sim_out.len())..])
                );
                eprintln!("  sent:      {}", show(&batch.bytes));
                eprintln!(
                    "  memcached: {} [{:?}]",
                    show(&real_out.bytes),
                    real_out.end
                );
                eprintln!(
                    "  simulator: {} [{}]",
                    show(&sim_out),
                    if closed { "Closed" } else { "Marker" }
                );
                panic!(
                    "simulator and memcached disagree (sequence {sequence}, step {step}, seed {seed:#x}; rerun with MCSIM_DIFF_SEED={seed:#x})"
                );
            }
            generator.observe(&batch, &sim_out);
            history.push((batch.bytes.clone(), sim_out.clone()));
            if closed {
                reconnects += 1;
                sim.session = Session::new();
                real = daemon.connect().expect("reconnect to memcached");
            }
        }
    }

    let elapsed = started.elapsed();
    let per_command: Vec<String> = counts.iter().map(|(k, v)| format!("{k}={v}")).collect();
    eprintln!(
        "differential: {total} sequences ({} scripted), {batches} batches, {commands} commands, {reconnects} reconnects, meta {}, seed {seed:#x}, {:.1}s",
        scripts.len(),
        if meta { "on" } else { "off" },
        elapsed.as_secs_f64()
    );
    eprintln!("differential: per command: {}", per_command.join(" "));
    eprintln!("differential: left out on purpose: {LEFT_OUT}");
    let stats = sim.server.stats();
    eprintln!(
        "differential: simulator evictions {}, items {}",
        stats.evictions, stats.curr_items
    );
    assert_eq!(
        stats.evictions, 0,
        "the comparison assumes nothing is evicted (the servers' LRU modes differ)"
    );
}

#[test]
pub(crate) fn tcp_client_calls() {
    use mcsim::protocol::{Reply, Request, StoreMode};
    use mcsim::{Exptime, Key};
    let Ok(Some(daemon)) = MemcachedDaemon::start(&[]) else {
        eprintln!("SKIPPED: tcp client test needs a memcached binary");
        return;
    };
    let mut c: TcpClient = daemon.connect().expect("connect");
    let k = Key::new("tc").unwrap();
    let set = Request::Store {
        mode: StoreMode::Set,
        key: k.clone(),
        flags: 5,
        exptime: Exptime(0),
        data: b"10".to_vec(),
        noreply: false,
    };
    assert_eq!(c.call(&set).unwrap(), Reply::Stored);
    let quiet = Request::Store {
        mode: StoreMode::Set,
        key: Key::new("tc").unwrap(),
        flags: 5,
        exptime: Exptime(0),
        data: b"10".to_vec(),
        noreply: true,
    };
    assert_eq!(c.call(&quiet).unwrap(), Reply::Silent);
    let incr = Request::Arith {
        op: mcsim::protocol::ArithOp::Incr,
        key: k.clone(),
        delta: 5,
        noreply: false,
    };
    assert_eq!(c.call(&incr).unwrap(), Reply::Number(15));
    let get = Request::Get {
        keys: vec![k.clone(), k],
        with_cas: true,
    };
    match c.call(&get).unwrap() {
        Reply::Values(v) => {
            assert_eq!(v.len(), 2);
            assert_eq!(v[0].data, b"15");
            assert_eq!(v[0].flags, 5);
            assert!(v[0].cas.is_some());
        }
        other => panic!("{other:?}"),
    }
    match c.call(&Request::Version).unwrap() {
        Reply::Version(v) => assert!(v.starts_with("1.")),
        other => panic!("{other:?}"),
    }
    match c.call(&Request::Stats).unwrap() {
        Reply::Stats(s) => assert!(s.iter().any(|(k, _)| k == "curr_items")),
        other => panic!("{other:?}"),
    }
}
