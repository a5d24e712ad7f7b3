//! The simulated server against what memcached 1.6.18 answers (MEMCACHED.md §8 and §1–§5).
//!
//! Each test drives [`Server::apply`] with [`Request`]s at chosen virtual instants and
//! checks the exact replies. Unless a test says otherwise the server boots at time zero
//! with phase 0, so its tick is `62 + whole seconds`. Cases that depend on how bytes are
//! parsed (12, 14, and the `delete k 5` line of 15) are checked through the codec in
//! `sim/tests/codec.rs`; here only their request-level part is.

use std::time::Duration;

use mcsim::clock::VirtualTime;
use mcsim::memcache::{Exptime, Key, KeyError};
use mcsim::protocol::{
    ArithOp, MetaCode, MetaCommand, MetaFlag, MetaReply, Reply, Request, StoreMode, ValueEntry,
};
use mcsim::server::{MIB, Server, ServerConfig};

// ---------------------------------------------------------------------------------------
// Helpers

fn key(s: &str) -> Key {
    Key::new(s).unwrap()
}

fn at(ms: u64) -> VirtualTime {
    VirtualTime::from_millis(ms)
}

fn secs(s: u64) -> VirtualTime {
    VirtualTime::from_secs(s)
}

fn store(mode: StoreMode, k: &str, flags: u32, exptime: i64, data: &[u8]) -> Request {
    Request::Store {
        mode,
        key: key(k),
        flags,
        exptime: Exptime(exptime),
        data: data.to_vec(),
        noreply: false,
    }
}

fn set(k: &str, flags: u32, exptime: i64, data: &[u8]) -> Request {
    store(StoreMode::Set, k, flags, exptime, data)
}

fn get(keys: &[&str]) -> Request {
    Request::Get {
        keys: keys.iter().map(|k| key(k)).collect(),
        with_cas: false,
    }
}

fn gets(k: &str) -> Request {
    Request::Get {
        keys: vec![key(k)],
        with_cas: true,
    }
}

fn arith(op: ArithOp, k: &str, delta: u64) -> Request {
    Request::Arith {
        op,
        key: key(k),
        delta,
        noreply: false,
    }
}

fn delete(k: &str) -> Request {
    Request::Delete {
        key: key(k),
        noreply: false,
    }
}

fn touch(k: &str, exptime: i64) -> Request {
    Request::Touch {
        key: key(k),
        exptime: Exptime(exptime),
        noreply: false,
    }
}

fn flush_all(delay: Option<i64>) -> Request {
    Request::FlushAll {
        delay,
        noreply: false,
    }
}

fn meta(command: MetaCommand, k: &str, flags: &str, data: Option<&[u8]>) -> Request {
    Request::Meta {
        command,
        key: Some(key(k)),
        flags: flags
            .split_whitespace()
            .map(|w| MetaFlag::parse(w.as_bytes()))
            .collect(),
        data: data.map(<[u8]>::to_vec),
    }
}

fn hit(k: &str, flags: u32, data: &[u8]) -> ValueEntry {
    ValueEntry {
        key: k.as_bytes().to_vec(),
        flags,
        data: data.to_vec(),
        cas: None,
    }
}

/// The value of a single-key `get`, or `None` on a miss.
fn value(server: &mut Server, k: &str, now: VirtualTime) -> Option<Vec<u8>> {
    match server.apply(&get(&[k]), now) {
        Reply::Values(v) if v.is_empty() => None,
        Reply::Values(mut v) => Some(v.remove(0).data),
        other => panic!("get {k}: {other:?}"),
    }
}

/// The cas unique `gets` returns.
fn cas_of(server: &mut Server, k: &str, now: VirtualTime) -> u64 {
    match server.apply(&gets(k), now) {
        Reply::Values(v) if v.len() == 1 => v[0].cas.unwrap(),
        other => panic!("gets {k}: {other:?}"),
    }
}

/// The remaining TTL `mg k t` reports (-1: never).
fn ttl_of(server: &mut Server, k: &str, now: VirtualTime) -> i64 {
    match server.apply(&meta(MetaCommand::Get, k, "t", None), now) {
        Reply::Meta(m) => m.flag(b't').unwrap().parse().unwrap(),
        other => panic!("mg {k} t: {other:?}"),
    }
}

fn meta_reply(reply: Reply) -> MetaReply {
    match reply {
        Reply::Meta(m) => m,
        other => panic!("not a meta reply: {other:?}"),
    }
}

fn server() -> Server {
    Server::with_defaults()
}

// ---------------------------------------------------------------------------------------
// §8 fidelity cases

#[test]
fn case_01_ttl_10_stored_at_25_031_expires_at_35_000() {
    let mut s = server();
    assert_eq!(s.apply(&set("k", 0, 10, b"1"), at(25_031)), Reply::Stored);
    assert_eq!(value(&mut s, "k", at(34_999)), Some(b"1".to_vec()));
    assert_eq!(value(&mut s, "k", at(35_000)), None);
}

#[test]
fn case_02_negative_exptime_is_stored_but_invisible() {
    let mut s = server();
    assert_eq!(s.apply(&set("k", 0, -1, b"1"), secs(5)), Reply::Stored);
    assert_eq!(s.apply(&get(&["k"]), secs(5)), Reply::Values(vec![]));
}

#[test]
fn case_03_thirty_days_is_relative_one_more_is_absolute() {
    let mut s = server();
    assert_eq!(
        s.apply(&set("k", 0, 2_592_000, b"1"), secs(5)),
        Reply::Stored
    );
    assert_eq!(ttl_of(&mut s, "k", secs(5)), 2_592_000);
    assert_eq!(value(&mut s, "k", at(2_592_004_999)), Some(b"1".to_vec()));
    assert_eq!(value(&mut s, "k", secs(2_592_005)), None);
    // 2592001 is a unix time in 1970: long past.
    assert_eq!(
        s.apply(&set("j", 0, 2_592_001, b"1"), secs(5)),
        Reply::Stored
    );
    assert_eq!(value(&mut s, "j", secs(5)), None);
}

#[test]
fn case_04_add_replace_append_incr_touch_cas_on_live_and_missing_keys() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(&set("live", 0, 5, b"1"), t), Reply::Stored);
    assert_eq!(
        s.apply(&store(StoreMode::Add, "live", 0, 0, b"2"), t),
        Reply::NotStored
    );
    // After its TTL the expired item counts as absent.
    assert_eq!(
        s.apply(&store(StoreMode::Add, "live", 0, 0, b"2"), secs(6)),
        Reply::Stored
    );
    assert_eq!(value(&mut s, "live", secs(6)), Some(b"2".to_vec()));
    for mode in [StoreMode::Replace, StoreMode::Append, StoreMode::Prepend] {
        assert_eq!(
            s.apply(&store(mode, "nokey", 0, 0, b"x"), t),
            Reply::NotStored
        );
    }
    assert_eq!(
        s.apply(&arith(ArithOp::Incr, "nokey", 1), t),
        Reply::NotFound
    );
    assert_eq!(
        s.apply(&arith(ArithOp::Decr, "nokey", 1), t),
        Reply::NotFound
    );
    assert_eq!(s.apply(&touch("nokey", 10), t), Reply::NotFound);
    assert_eq!(
        s.apply(&store(StoreMode::Cas(1), "nokey", 0, 0, b"x"), t),
        Reply::NotFound
    );
    assert_eq!(value(&mut s, "nokey", t), None);
}

#[test]
fn case_05_append_prepend_keep_flags_and_ttl() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(&set("ap", 9, 100, b"mid"), t), Reply::Stored);
    assert_eq!(
        s.apply(&store(StoreMode::Append, "ap", 1, 0, b"_end"), t),
        Reply::Stored
    );
    assert_eq!(
        s.apply(&store(StoreMode::Prepend, "ap", 2, 5, b"start_"), t),
        Reply::Stored
    );
    assert_eq!(
        s.apply(&get(&["ap"]), t),
        Reply::Values(vec![hit("ap", 9, b"start_mid_end")])
    );
    assert_eq!(ttl_of(&mut s, "ap", t), 100);
}

#[test]
fn case_06_cas_exists_stored_exists_zero_and_missing() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(&set("c", 0, 0, b"v1"), t), Reply::Stored);
    let c = cas_of(&mut s, "c", t);
    let cas = |n: u64| store(StoreMode::Cas(n), "c", 0, 0, b"v2");
    assert_eq!(s.apply(&cas(c + 1), t), Reply::Exists);
    assert_eq!(s.apply(&cas(c), t), Reply::Stored);
    assert_eq!(s.apply(&cas(c), t), Reply::Exists);
    assert_eq!(s.apply(&cas(0), t), Reply::Exists);
    assert_eq!(value(&mut s, "c", t), Some(b"v2".to_vec()));
    assert_eq!(
        s.apply(&store(StoreMode::Cas(c), "missing", 0, 0, b"v"), t),
        Reply::NotFound
    );
}

#[test]
fn case_07_touch_and_gat_keep_cas_incr_append_replace_change_it() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(&set("n", 0, 0, b"1"), t), Reply::Stored);
    let c0 = cas_of(&mut s, "n", t);
    assert_eq!(s.apply(&touch("n", 100), t), Reply::Touched);
    assert_eq!(cas_of(&mut s, "n", t), c0);
    let gat = Request::Gat {
        exptime: Exptime(200),
        keys: vec![key("n")],
        with_cas: true,
    };
    match s.apply(&gat, t) {
        Reply::Values(v) => assert_eq!(v[0].cas, Some(c0)),
        other => panic!("{other:?}"),
    }
    assert_eq!(ttl_of(&mut s, "n", t), 200);
    assert_eq!(s.apply(&arith(ArithOp::Incr, "n", 1), t), Reply::Number(2));
    let c1 = cas_of(&mut s, "n", t);
    assert_ne!(c1, c0);
    assert_eq!(
        s.apply(&store(StoreMode::Append, "n", 0, 0, b"0"), t),
        Reply::Stored
    );
    let c2 = cas_of(&mut s, "n", t);
    assert_ne!(c2, c1);
    assert_eq!(
        s.apply(&store(StoreMode::Replace, "n", 0, 0, b"5"), t),
        Reply::Stored
    );
    assert_ne!(cas_of(&mut s, "n", t), c2);
}

#[test]
fn case_08_decr_in_place_keeps_flags_ttl_and_length() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(&set("n", 3, 50, b"10"), t), Reply::Stored);
    assert_eq!(s.apply(&arith(ArithOp::Decr, "n", 1), t), Reply::Number(9));
    assert_eq!(
        s.apply(&get(&["n"]), t),
        Reply::Values(vec![hit("n", 3, b"9 ")])
    );
    assert_eq!(ttl_of(&mut s, "n", t), 50);
    assert_eq!(
        s.apply(&arith(ArithOp::Decr, "n", 100), t),
        Reply::Number(0)
    );
}

#[test]
fn case_09_incr_grows_the_item_and_wraps_at_2_64() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(&set("n", 0, 0, b"99"), t), Reply::Stored);
    assert_eq!(
        s.apply(&arith(ArithOp::Incr, "n", 1), t),
        Reply::Number(100)
    );
    assert_eq!(value(&mut s, "n", t), Some(b"100".to_vec()));
    assert_eq!(
        s.apply(&set("m", 0, 0, b"18446744073709551615"), t),
        Reply::Stored
    );
    assert_eq!(s.apply(&arith(ArithOp::Incr, "m", 2), t), Reply::Number(1));
    let mut padded = b"1".to_vec();
    padded.resize(20, b' ');
    assert_eq!(value(&mut s, "m", t), Some(padded));
}

#[test]
fn case_10_incr_missing_and_non_numeric() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(
        s.apply(&arith(ArithOp::Incr, "nokey", 1), t),
        Reply::NotFound
    );
    assert_eq!(s.apply(&set("hi", 0, 0, b"hi"), t), Reply::Stored);
    assert_eq!(
        s.apply(&arith(ArithOp::Incr, "hi", 1), t),
        Reply::ClientError("cannot increment or decrement non-numeric value".into())
    );
    // `incr n -1` (invalid numeric delta) cannot be expressed as a request: the delta is
    // a u64. Its wire form is checked in sim/tests/codec.rs.
}

#[test]
fn case_11_multi_get_repeats_and_skips_misses() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(&set("a", 1, 0, b"A"), t), Reply::Stored);
    assert_eq!(s.apply(&set("b", 2, 0, b"B"), t), Reply::Stored);
    assert_eq!(
        s.apply(&get(&["a", "b", "nokey", "a"]), t),
        Reply::Values(vec![
            hit("a", 1, b"A"),
            hit("b", 2, b"B"),
            hit("a", 1, b"A")
        ])
    );
}

#[test]
fn case_12_key_of_251_bytes_cannot_be_built() {
    // The byte-level replies (CLIENT_ERROR, then ERROR for set) are in sim/tests/codec.rs.
    assert!(Key::new(vec![b'k'; 250]).is_ok());
    assert_eq!(Key::new(vec![b'k'; 251]), Err(KeyError::TooLong(251)));
}

#[test]
fn case_13_largest_value_and_too_large_deletes_the_old_one() {
    let mut s = server();
    let t = secs(1);
    let max = vec![b'x'; 1_048_516];
    assert_eq!(s.apply(&set("k", 0, 0, &max), t), Reply::Stored);
    assert_eq!(value(&mut s, "k", t).map(|v| v.len()), Some(1_048_516));
    let over = vec![b'x'; 1_048_517];
    assert_eq!(
        s.apply(&set("k", 0, 0, &over), t),
        Reply::ServerError("object too large for cache".into())
    );
    assert_eq!(value(&mut s, "k", t), None);
    // With client flags the header grows by 4 bytes.
    let flagged = vec![b'x'; 1_048_513];
    assert_eq!(
        s.apply(&set("k", 7, 0, &flagged), t),
        Reply::ServerError("object too large for cache".into())
    );
    assert_eq!(
        s.apply(&set("k", 7, 0, &flagged[..1_048_512]), t),
        Reply::Stored
    );
}

#[test]
fn case_14_bad_data_chunk_never_reaches_the_server() {
    // `set d 0 0 3\r\nabcde\r\n` is rejected by the parser (sim/tests/codec.rs); the
    // server sees no store, so `d` stays absent.
    let mut s = server();
    assert_eq!(value(&mut s, "d", secs(1)), None);
}

#[test]
fn case_15_delete_then_not_found() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(&set("n", 0, 0, b"1"), t), Reply::Stored);
    assert_eq!(s.apply(&delete("n"), t), Reply::Deleted);
    assert_eq!(s.apply(&delete("n"), t), Reply::NotFound);
    // `delete n 5` is a parse error: sim/tests/codec.rs.
}

#[test]
fn case_16_flush_all_hides_old_keys_not_new_ones() {
    let mut s = server();
    let t = at(1_500);
    assert_eq!(s.apply(&set("old", 0, 0, b"1"), t), Reply::Stored);
    assert_eq!(s.apply(&flush_all(None), t), Reply::Ok);
    assert_eq!(value(&mut s, "old", t), None);
    assert_eq!(s.apply(&set("new", 0, 0, b"2"), t), Reply::Stored);
    assert_eq!(value(&mut s, "new", t), Some(b"2".to_vec()));
}

#[test]
fn case_17_large_values_evict_only_large_values() {
    // -m 8: 70000 small items take 7 pages; the 100 KB class gets its one page (10 items).
    let mut s = Server::new(ServerConfig::default().memory_mb(8), VirtualTime::ZERO);
    let t = secs(1);
    for i in 0..70_000 {
        let k = format!("small{i}");
        assert_eq!(s.apply(&set(&k, 0, 0, b"xxxxxxxxxx"), t), Reply::Stored);
    }
    let big = vec![b'y'; 100 * 1024];
    for i in 0..40 {
        assert_eq!(
            s.apply(&set(&format!("big{i}"), 0, 0, &big), t),
            Reply::Stored
        );
    }
    let alive: Vec<u32> = (0..40)
        .filter(|i| value(&mut s, &format!("big{i}"), t).is_some())
        .collect();
    assert_eq!(alive, (30..40).collect::<Vec<_>>());
    let small_alive = (0..70_000)
        .filter(|i| value(&mut s, &format!("small{i}"), t).is_some())
        .count();
    assert_eq!(small_alive, 70_000);
    assert_eq!(s.stats().evictions, 30);
}

/// Stores `background` small keys, then ten keys read twice and ten read once, then
/// floods the class with 200000 new keys `flood_after` later. Returns which of the
/// twice-read and once-read keys survive.
fn read_twice_then_flood(background: u32, flood_after: Duration) -> (Vec<u32>, Vec<u32>) {
    let mut s = Server::new(ServerConfig::default().memory_mb(8), VirtualTime::ZERO);
    let t = secs(1);
    let quiet_set = |k: String| Request::Store {
        mode: StoreMode::Set,
        key: key(&k),
        flags: 0,
        exptime: Exptime::NEVER,
        data: b"xxxxxxxxxx".to_vec(),
        noreply: true,
    };
    for i in 0..background {
        assert_eq!(s.apply(&quiet_set(format!("bg{i}")), t), Reply::Silent);
    }
    for i in 0..10 {
        assert_eq!(s.apply(&quiet_set(format!("twice{i}")), t), Reply::Silent);
        assert_eq!(s.apply(&quiet_set(format!("once{i}")), t), Reply::Silent);
    }
    for i in 0..10 {
        value(&mut s, &format!("twice{i}"), t).unwrap();
        value(&mut s, &format!("twice{i}"), t).unwrap();
        value(&mut s, &format!("once{i}"), t).unwrap();
    }
    let flood = t + flood_after;
    for i in 0..200_000 {
        assert_eq!(
            s.apply(&quiet_set(format!("flood{i}")), flood),
            Reply::Silent
        );
    }
    assert_eq!(s.stats().curr_items, 8 * 10_922);
    let alive = |s: &mut Server, prefix: &str| -> Vec<u32> {
        (0..10)
            .filter(|i| s.peek(&key(&format!("{prefix}{i}")), flood).is_some())
            .collect()
    };
    (alive(&mut s, "twice"), alive(&mut s, "once"))
}

#[test]
fn case_17_items_read_twice_survive_a_flood_read_once_do_not() {
    // memcached 1.6.18 -m 8, 10000 keys already in the class, the flood right after the
    // reads: all ten twice-read keys survive, no once-read key does.
    let (twice, once) = read_twice_then_flood(10_000, Duration::ZERO);
    assert_eq!(twice, (0..10).collect::<Vec<_>>());
    assert_eq!(once, Vec::<u32>::new());
}

#[test]
fn case_17_protection_lapses_when_the_flood_comes_seconds_later() {
    // Protection is relative to the age of the COLD tail: when the flood comes 2 s after
    // the reads, fresh keys cycle through COLD, WARM keys idle for longer are demoted and
    // evicted. memcached 1.6.18 -m 8 behaves the same (no twice-read key survived in
    // repeated runs).
    let (twice, once) = read_twice_then_flood(10_000, Duration::from_secs(2));
    assert_eq!(twice, Vec::<u32>::new());
    assert_eq!(once, Vec::<u32>::new());
}

#[test]
fn case_18_mg_vivify_wins_then_z_then_ms_with_cas() {
    let mut s = server();
    let t = secs(1);
    let first = meta_reply(s.apply(&meta(MetaCommand::Get, "dp", "v c N30 t", None), t));
    assert_eq!(first.code, MetaCode::Value);
    assert_eq!(first.value.as_deref(), Some(&b""[..]));
    assert_eq!(first.flag(b't'), Some("30"));
    assert!(first.has(b'W') && !first.has(b'Z'));
    let cas: u64 = first.flag(b'c').unwrap().parse().unwrap();
    let second = meta_reply(s.apply(&meta(MetaCommand::Get, "dp", "v c N30 t", None), t));
    assert!(second.has(b'Z') && !second.has(b'W'));
    assert_eq!(
        second.flags,
        vec![
            MetaFlag::with(b'c', cas),
            MetaFlag::with(b't', 30),
            MetaFlag::bare(b'Z')
        ]
    );
    let set = meta(
        MetaCommand::Set,
        "dp",
        &format!("C{cas} T60"),
        Some(b"data"),
    );
    let stored = meta_reply(s.apply(&set, t));
    assert_eq!((stored.code, stored.flags), (MetaCode::Header, vec![]));
    assert_eq!(value(&mut s, "dp", t), Some(b"data".to_vec()));
    assert_eq!(ttl_of(&mut s, "dp", t), 60);
}

#[test]
fn case_19_ma_counter_with_auto_create() {
    let mut s = server();
    let t = secs(1);
    let ma = |flags: &str| meta(MetaCommand::Arithmetic, "cnt", flags, None);
    let nf = meta_reply(s.apply(&ma(""), t));
    assert_eq!(nf.code, MetaCode::NotFound);
    let va = |s: &mut Server, flags: &str| {
        let m = meta_reply(s.apply(&ma(flags), t));
        assert_eq!(m.code, MetaCode::Value);
        String::from_utf8(m.value.unwrap()).unwrap()
    };
    assert_eq!(va(&mut s, "N0 J10 v"), "10");
    assert_eq!(va(&mut s, "v"), "11");
    assert_eq!(va(&mut s, "MD D100 v"), "0");
}

// ---------------------------------------------------------------------------------------
// §1 time and expiry

/// Stores `k` with `ttl` at `stored_ms` and returns how long it stayed visible, probing
/// every millisecond.
fn lifetime_ms(ttl: i64, stored_ms: u64) -> u64 {
    let mut s = server();
    assert_eq!(
        s.apply(&set("k", 0, ttl, b"1"), at(stored_ms)),
        Reply::Stored
    );
    let mut t = stored_ms;
    while s.peek(&key("k"), at(t)).is_some() {
        t += 1;
    }
    // The probes agree with real reads.
    assert_eq!(value(&mut s, "k", at(t - 1)), Some(b"1".to_vec()));
    assert_eq!(value(&mut s, "k", at(t)), None);
    t - stored_ms
}

#[test]
fn ttl_2_lives_between_one_and_two_seconds() {
    assert_eq!(lifetime_ms(2, 10_050), 1_950);
    assert_eq!(lifetime_ms(2, 10_500), 1_500);
    assert_eq!(lifetime_ms(2, 10_950), 1_050);
}

#[test]
fn ttl_1_stored_late_in_a_tick_lives_50_ms() {
    assert_eq!(lifetime_ms(1, 10_950), 50);
}

#[test]
fn phase_shifts_the_tick_edges() {
    let config = ServerConfig::default().phase(Duration::from_millis(300));
    let mut s = Server::new(config, VirtualTime::ZERO);
    assert_eq!(s.tick(at(10_299)), 71);
    assert_eq!(s.tick(at(10_300)), 72);
    assert_eq!(s.apply(&set("k", 0, 1, b"1"), at(10_200)), Reply::Stored);
    assert_eq!(value(&mut s, "k", at(10_299)), Some(b"1".to_vec()));
    assert_eq!(value(&mut s, "k", at(10_300)), None);
}

#[test]
fn absolute_exptime_in_the_future_and_in_the_past() {
    let mut s = server();
    let t = secs(20);
    let unix_now = s.clock().unix_time(t);
    assert_eq!(
        s.apply(&set("f", 0, unix_now + 100, b"1"), t),
        Reply::Stored
    );
    assert_eq!(ttl_of(&mut s, "f", t), 100);
    assert_eq!(value(&mut s, "f", at(119_999)), Some(b"1".to_vec()));
    assert_eq!(value(&mut s, "f", secs(120)), None);
    assert_eq!(s.apply(&set("p", 0, unix_now - 10, b"1"), t), Reply::Stored);
    assert_eq!(value(&mut s, "p", t), None);
}

#[test]
fn exptime_from_2_pow_31_wraps_negative() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(&set("w", 0, 1 << 31, b"1"), t), Reply::Stored);
    assert_eq!(value(&mut s, "w", t), None);
    // 2^32 + 10 truncates to a relative 10 seconds.
    assert_eq!(
        s.apply(&set("r", 0, (1 << 32) + 10, b"1"), t),
        Reply::Stored
    );
    assert_eq!(ttl_of(&mut s, "r", t), 10);
}

#[test]
fn touch_sets_a_relative_ttl_and_zero_clears_it() {
    let mut s = server();
    assert_eq!(s.apply(&set("k", 0, 5, b"1"), secs(1)), Reply::Stored);
    assert_eq!(s.apply(&touch("k", 10), secs(4)), Reply::Touched);
    assert_eq!(value(&mut s, "k", at(13_999)), Some(b"1".to_vec()));
    assert_eq!(value(&mut s, "k", secs(14)), None);
    assert_eq!(s.apply(&set("z", 0, 5, b"1"), secs(1)), Reply::Stored);
    assert_eq!(s.apply(&touch("z", 0), secs(2)), Reply::Touched);
    assert_eq!(ttl_of(&mut s, "z", secs(1000)), -1);
}

// ---------------------------------------------------------------------------------------
// §2 flush_all with a delay

#[test]
fn flush_all_with_delay_lands_at_tick_d_minus_1() {
    let mut s = server();
    // Tick 72 at 10.5 s; `flush_all 5` lands at tick 76 (14.0 s).
    assert_eq!(s.apply(&set("old", 0, 0, b"1"), at(10_500)), Reply::Stored);
    assert_eq!(s.apply(&flush_all(Some(5)), at(10_500)), Reply::Ok);
    assert_eq!(value(&mut s, "old", at(13_999)), Some(b"1".to_vec()));
    assert_eq!(value(&mut s, "old", secs(14)), None);
    // During that tick even fresh stores are invisible…
    assert_eq!(
        s.apply(&set("fresh", 0, 0, b"2"), at(14_500)),
        Reply::Stored
    );
    assert_eq!(value(&mut s, "fresh", at(14_500)), None);
    // …and from the next one on stores are visible again.
    assert_eq!(s.apply(&set("later", 0, 0, b"3"), secs(15)), Reply::Stored);
    assert_eq!(value(&mut s, "later", secs(15)), Some(b"3".to_vec()));
}

// ---------------------------------------------------------------------------------------
// §3 -M: out of memory instead of eviction

#[test]
fn no_evict_mode_fails_the_store_and_deletes_the_old_value() {
    let config = ServerConfig::default().memory_mb(2).no_evict(true);
    let mut s = Server::new(config, VirtualTime::ZERO);
    let t = secs(1);
    let big = vec![b'v'; 100 * 1024];
    // Two pages of the 100 KB class: 20 items.
    for i in 0..20 {
        assert_eq!(
            s.apply(&set(&format!("v{i}"), 0, 0, &big), t),
            Reply::Stored
        );
    }
    let oom = Reply::ServerError("out of memory storing object".into());
    assert_eq!(s.apply(&set("v20", 0, 0, &big), t), oom);
    assert_eq!(s.apply(&set("v0", 0, 0, &big), t), oom);
    assert_eq!(value(&mut s, "v0", t), None);
    assert_eq!(value(&mut s, "v1", t), Some(big.clone()));
    assert_eq!(s.stats().evictions, 0);
    assert_eq!(s.stats().store_no_memory, 2);
}

// ---------------------------------------------------------------------------------------
// §4–§5 faults

#[test]
fn crash_loses_everything_and_the_clock_restarts_at_62() {
    let mut s = server();
    assert_eq!(s.apply(&set("k", 0, 0, b"1"), secs(30)), Reply::Stored);
    assert_eq!(s.tick(secs(30)), 92);
    s.crash();
    assert!(!s.is_up());
    s.restart(secs(40), false);
    assert!(s.is_up());
    assert_eq!(s.tick(secs(40)), 62);
    assert_eq!(value(&mut s, "k", secs(40)), None);
    assert_eq!(s.stats().curr_items, 0);
    // A fresh process hands out cas uniques from 1 again.
    assert_eq!(s.apply(&set("k", 0, 0, b"1"), secs(40)), Reply::Stored);
    assert_eq!(cas_of(&mut s, "k", secs(40)), 1);
}

#[test]
fn warm_restart_keeps_items_and_ttls_keep_counting() {
    let mut s = server();
    // Stored at 1 s with TTL 10: gone at 11 s, whatever happens in between.
    assert_eq!(s.apply(&set("k", 4, 10, b"kept"), secs(1)), Reply::Stored);
    assert_eq!(s.apply(&set("forever", 0, 0, b"f"), secs(1)), Reply::Stored);
    let cas = cas_of(&mut s, "k", secs(1));
    s.restart(secs(5), true);
    assert_eq!(s.tick(secs(5)), 62);
    assert_eq!(
        s.apply(&gets("k"), secs(5)),
        Reply::Values(vec![ValueEntry {
            cas: Some(cas),
            ..hit("k", 4, b"kept")
        }])
    );
    assert_eq!(ttl_of(&mut s, "k", secs(5)), 6);
    assert_eq!(value(&mut s, "k", at(10_999)), Some(b"kept".to_vec()));
    assert_eq!(value(&mut s, "k", secs(11)), None);
    assert_eq!(value(&mut s, "forever", secs(500)), Some(b"f".to_vec()));
}

#[test]
fn skip_second_shortens_a_ttl() {
    let mut s = server();
    assert_eq!(s.apply(&set("k", 0, 2, b"1"), secs(10)), Reply::Stored);
    assert_eq!(s.tick(secs(10)), 72);
    s.skip_second();
    assert_eq!(s.tick(secs(10)), 73);
    assert_eq!(value(&mut s, "k", at(10_999)), Some(b"1".to_vec()));
    assert_eq!(value(&mut s, "k", secs(11)), None);
}

#[test]
fn evict_fault_removes_one_key_and_counts_an_eviction() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(&set("a", 0, 0, b"1"), t), Reply::Stored);
    assert_eq!(s.apply(&set("b", 0, 0, b"2"), t), Reply::Stored);
    assert!(s.evict(&key("a")));
    assert!(!s.evict(&key("a")));
    assert!(!s.evict(&key("nokey")));
    assert_eq!(value(&mut s, "a", t), None);
    assert_eq!(value(&mut s, "b", t), Some(b"2".to_vec()));
    assert_eq!(s.stats().evictions, 1);
    assert_eq!(s.stats().curr_items, 1);
}

// ---------------------------------------------------------------------------------------
// §4 stats

#[test]
fn stats_after_a_small_workload() {
    // The same workload on memcached 1.6.18 gives these numbers.
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(&set("a", 0, 0, b"1"), t), Reply::Stored);
    assert_eq!(s.apply(&set("b", 0, 0, b"2"), t), Reply::Stored);
    s.apply(&get(&["a"]), t);
    s.apply(&get(&["c"]), t);
    s.apply(&get(&["a", "b", "c"]), t);
    assert_eq!(s.apply(&set("a", 0, 0, b"3"), t), Reply::Stored);
    assert_eq!(s.apply(&delete("b"), t), Reply::Deleted);
    s.apply(&meta(MetaCommand::Get, "a", "v", None), t);
    s.apply(&meta(MetaCommand::Get, "zz", "v", None), t);
    s.apply(&meta(MetaCommand::Get, "a", "T30", None), t);
    s.apply(&meta(MetaCommand::Set, "m", "", Some(b"1")), t);
    s.apply(&meta(MetaCommand::Arithmetic, "m", "", None), t);
    let st = s.stats();
    assert_eq!(
        (st.cmd_get, st.get_hits, st.get_misses),
        (7, 4, 3),
        "cmd_get, get_hits, get_misses"
    );
    assert_eq!((st.cmd_set, st.cmd_touch, st.touch_hits), (4, 1, 1));
    assert_eq!((st.delete_hits, st.incr_hits), (1, 1));
    assert_eq!((st.curr_items, st.total_items, st.evictions), (2, 4, 0));
    let Reply::Stats(lines) = s.apply(&Request::Stats, t) else {
        panic!("stats");
    };
    let stat = |name: &str| {
        lines
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    assert_eq!(stat("get_hits"), "4");
    assert_eq!(stat("get_misses"), "3");
    assert_eq!(stat("curr_items"), "2");
    assert_eq!(stat("total_items"), "4");
    assert_eq!(stat("evictions"), "0");
    assert_eq!(stat("cmd_get"), "7");
    assert_eq!(stat("cmd_set"), "4");
    assert_eq!(stat("limit_maxbytes"), (64 * MIB).to_string());
}
