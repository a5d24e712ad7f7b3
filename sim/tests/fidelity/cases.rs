//! MEMCACHED.md §8's numbered cases, one test each.

#[allow(unused_imports)]
use super::*;

// ---------------------------------------------------------------------------------------
// §8 fidelity cases

#[test]
pub(crate) fn case_01_ttl_10_stored_at_25_031_expires_at_35_000() {
    let mut s = server();
    assert_eq!(s.apply(set("k", 0, 10, b"1"), at(25_031)), Reply::Stored);
    assert_eq!(value(&mut s, "k", at(34_999)), Some(b"1".to_vec()));
    assert_eq!(value(&mut s, "k", at(35_000)), None);
}

#[test]
pub(crate) fn case_02_negative_exptime_is_stored_but_invisible() {
    let mut s = server();
    assert_eq!(s.apply(set("k", 0, -1, b"1"), secs(5)), Reply::Stored);
    assert_eq!(s.apply(get(&["k"]), secs(5)), Reply::Values(vec![]));
}

#[test]
pub(crate) fn case_03_thirty_days_is_relative_one_more_is_absolute() {
    let mut s = server();
    assert_eq!(
        s.apply(set("k", 0, 2_592_000, b"1"), secs(5)),
        Reply::Stored
    );
    assert_eq!(ttl_of(&mut s, "k", secs(5)), 2_592_000);
    assert_eq!(value(&mut s, "k", at(2_592_004_999)), Some(b"1".to_vec()));
    assert_eq!(value(&mut s, "k", secs(2_592_005)), None);
    // 2592001 is a unix time in 1970: long past.
    assert_eq!(
        s.apply(set("j", 0, 2_592_001, b"1"), secs(5)),
        Reply::Stored
    );
    assert_eq!(value(&mut s, "j", secs(5)), None);
}

#[test]
pub(crate) fn case_04_add_replace_append_incr_touch_cas_on_live_and_missing_keys() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(set("live", 0, 5, b"1"), t), Reply::Stored);
    assert_eq!(
        s.apply(store(StoreMode::Add, "live", 0, 0, b"2"), t),
        Reply::NotStored
    );
    // After its TTL the expired item counts as absent.
    assert_eq!(
        s.apply(store(StoreMode::Add, "live", 0, 0, b"2"), secs(6)),
        Reply::Stored
    );
    assert_eq!(value(&mut s, "live", secs(6)), Some(b"2".to_vec()));
    for mode in [StoreMode::Replace, StoreMode::Append, StoreMode::Prepend] {
        assert_eq!(
            s.apply(store(mode, "nokey", 0, 0, b"x"), t),
            Reply::NotStored
        );
    }
    assert_eq!(
        s.apply(arith(ArithOp::Incr, "nokey", 1), t),
        Reply::NotFound
    );
    assert_eq!(
        s.apply(arith(ArithOp::Decr, "nokey", 1), t),
        Reply::NotFound
    );
    assert_eq!(s.apply(touch("nokey", 10), t), Reply::NotFound);
    assert_eq!(
        s.apply(store(StoreMode::Cas(1), "nokey", 0, 0, b"x"), t),
        Reply::NotFound
    );
    assert_eq!(value(&mut s, "nokey", t), None);
}

#[test]
pub(crate) fn case_05_append_prepend_keep_flags_and_ttl() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(set("ap", 9, 100, b"mid"), t), Reply::Stored);
    assert_eq!(
        s.apply(store(StoreMode::Append, "ap", 1, 0, b"_end"), t),
        Reply::Stored
    );
    assert_eq!(
        s.apply(store(StoreMode::Prepend, "ap", 2, 5, b"start_"), t),
        Reply::Stored
    );
    assert_eq!(
        s.apply(get(&["ap"]), t),
        Reply::Values(vec![hit("ap", 9, b"start_mid_end")])
    );
    assert_eq!(ttl_of(&mut s, "ap", t), 100);
}

#[test]
pub(crate) fn case_06_cas_exists_stored_exists_zero_and_missing() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(set("c", 0, 0, b"v1"), t), Reply::Stored);
    let c = cas_of(&mut s, "c", t);
    let cas = |n: u64| store(StoreMode::Cas(n), "c", 0, 0, b"v2");
    assert_eq!(s.apply(cas(c + 1), t), Reply::Exists);
    assert_eq!(s.apply(cas(c), t), Reply::Stored);
    assert_eq!(s.apply(cas(c), t), Reply::Exists);
    assert_eq!(s.apply(cas(0), t), Reply::Exists);
    assert_eq!(value(&mut s, "c", t), Some(b"v2".to_vec()));
    assert_eq!(
        s.apply(store(StoreMode::Cas(c), "missing", 0, 0, b"v"), t),
        Reply::NotFound
    );
}

#[test]
pub(crate) fn case_07_touch_and_gat_keep_cas_incr_append_replace_change_it() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(set("n", 0, 0, b"1"), t), Reply::Stored);
    let c0 = cas_of(&mut s, "n", t);
    assert_eq!(s.apply(touch("n", 100), t), Reply::Touched);
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
    assert_eq!(s.apply(arith(ArithOp::Incr, "n", 1), t), Reply::Number(2));
    let c1 = cas_of(&mut s, "n", t);
    assert_ne!(c1, c0);
    assert_eq!(
        s.apply(store(StoreMode::Append, "n", 0, 0, b"0"), t),
        Reply::Stored
    );
    let c2 = cas_of(&mut s, "n", t);
    assert_ne!(c2, c1);
    assert_eq!(
        s.apply(store(StoreMode::Replace, "n", 0, 0, b"5"), t),
        Reply::Stored
    );
    assert_ne!(cas_of(&mut s, "n", t), c2);
}

#[test]
pub(crate) fn case_08_decr_in_place_keeps_flags_ttl_and_length() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(set("n", 3, 50, b"10"), t), Reply::Stored);
    assert_eq!(s.apply(arith(ArithOp::Decr, "n", 1), t), Reply::Number(9));
    assert_eq!(
        s.apply(get(&["n"]), t),
        Reply::Values(vec![hit("n", 3, b"9 ")])
    );
    assert_eq!(ttl_of(&mut s, "n", t), 50);
    assert_eq!(s.apply(arith(ArithOp::Decr, "n", 100), t), Reply::Number(0));
}

#[test]
pub(crate) fn case_09_incr_grows_the_item_and_wraps_at_2_64() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(set("n", 0, 0, b"99"), t), Reply::Stored);
    assert_eq!(s.apply(arith(ArithOp::Incr, "n", 1), t), Reply::Number(100));
    assert_eq!(value(&mut s, "n", t), Some(b"100".to_vec()));
    assert_eq!(
        s.apply(set("m", 0, 0, b"18446744073709551615"), t),
        Reply::Stored
    );
    assert_eq!(s.apply(arith(ArithOp::Incr, "m", 2), t), Reply::Number(1));
    let mut padded = b"1".to_vec();
    padded.resize(20, b' ');
    assert_eq!(value(&mut s, "m", t), Some(padded));
}

#[test]
pub(crate) fn case_10_incr_missing_and_non_numeric() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(
        s.apply(arith(ArithOp::Incr, "nokey", 1), t),
        Reply::NotFound
    );
    assert_eq!(s.apply(set("hi", 0, 0, b"hi"), t), Reply::Stored);
    assert_eq!(
        s.apply(arith(ArithOp::Incr, "hi", 1), t),
        Reply::ClientError("cannot increment or decrement non-numeric value".into())
    );
    // `incr n -1` (invalid numeric delta) cannot be expressed as a request: the delta is
    // a u64. Its wire form is checked in sim/tests/codec.rs.
}

#[test]
pub(crate) fn case_11_multi_get_repeats_and_skips_misses() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(set("a", 1, 0, b"A"), t), Reply::Stored);
    assert_eq!(s.apply(set("b", 2, 0, b"B"), t), Reply::Stored);
    assert_eq!(
        s.apply(get(&["a", "b", "nokey", "a"]), t),
        Reply::Values(vec![
            hit("a", 1, b"A"),
            hit("b", 2, b"B"),
            hit("a", 1, b"A")
        ])
    );
}

#[test]
pub(crate) fn case_12_key_of_251_bytes_cannot_be_built() {
    // The byte-level replies (CLIENT_ERROR, then ERROR for set) are in sim/tests/codec.rs.
    assert!(Key::new(vec![b'k'; 250]).is_ok());
    assert_eq!(Key::new(vec![b'k'; 251]), Err(KeyError::TooLong(251)));
}

#[test]
pub(crate) fn case_13_largest_value_and_too_large_deletes_the_old_one() {
    let mut s = server();
    let t = secs(1);
    let max = vec![b'x'; 1_048_516];
    assert_eq!(s.apply(set("k", 0, 0, &max), t), Reply::Stored);
    assert_eq!(value(&mut s, "k", t).map(|v| v.len()), Some(1_048_516));
    let over = vec![b'x'; 1_048_517];
    assert_eq!(
        s.apply(set("k", 0, 0, &over), t),
        Reply::ServerError("object too large for cache".into())
    );
    assert_eq!(value(&mut s, "k", t), None);
    // With client flags the header grows by 4 bytes.
    let flagged = vec![b'x'; 1_048_513];
    assert_eq!(
        s.apply(set("k", 7, 0, &flagged), t),
        Reply::ServerError("object too large for cache".into())
    );
    assert_eq!(
        s.apply(set("k", 7, 0, &flagged[..1_048_512]), t),
        Reply::Stored
    );
}

#[test]
pub(crate) fn case_14_bad_data_chunk_never_reaches_the_server() {
    // `set d 0 0 3\r\nabcde\r\n` is rejected by the parser (sim/tests/codec.rs); the
    // server sees no store, so `d` stays absent.
    let mut s = server();
    assert_eq!(value(&mut s, "d", secs(1)), None);
}

#[test]
pub(crate) fn case_15_delete_then_not_found() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(set("n", 0, 0, b"1"), t), Reply::Stored);
    assert_eq!(s.apply(delete("n"), t), Reply::Deleted);
    assert_eq!(s.apply(delete("n"), t), Reply::NotFound);
    // `delete n 5` is a parse error: sim/tests/codec.rs.
}

#[test]
pub(crate) fn case_16_flush_all_hides_old_keys_not_new_ones() {
    let mut s = server();
    let t = at(1_500);
    assert_eq!(s.apply(set("old", 0, 0, b"1"), t), Reply::Stored);
    assert_eq!(s.apply(flush_all(None), t), Reply::Ok);
    assert_eq!(value(&mut s, "old", t), None);
    assert_eq!(s.apply(set("new", 0, 0, b"2"), t), Reply::Stored);
    assert_eq!(value(&mut s, "new", t), Some(b"2".to_vec()));
}

#[test]
pub(crate) fn case_17_large_values_evict_only_large_values() {
    // -m 8: 70000 small items take 7 pages; the 100 KB class gets its one page (10 items).
    let mut s = Server::new(ServerConfig::default().memory_mb(8), VirtualTime::ZERO);
    let t = secs(1);
    for i in 0..70_000 {
        let k = format!("small{i}");
        assert_eq!(s.apply(set(&k, 0, 0, b"xxxxxxxxxx"), t), Reply::Stored);
    }
    let big = vec![b'y'; 100 * 1024];
    for i in 0..40 {
        assert_eq!(
            s.apply(set(&format!("big{i}"), 0, 0, &big), t),
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
pub(crate) fn read_twice_then_flood(
    background: u32,
    flood_after: Duration,
) -> (Vec<u32>, Vec<u32>) {
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
        assert_eq!(s.apply(quiet_set(format!("bg{i}")), t), Reply::Silent);
    }
    for i in 0..10 {
        assert_eq!(s.apply(quiet_set(format!("twice{i}")), t), Reply::Silent);
        assert_eq!(s.apply(quiet_set(format!("once{i}")), t), Reply::Silent);
    }
    for i in 0..10 {
        value(&mut s, &format!("twice{i}"), t).unwrap();
        value(&mut s, &format!("twice{i}"), t).unwrap();
        value(&mut s, &format!("once{i}"), t).unwrap();
    }
    let flood = t + flood_after;
    for i in 0..200_000 {
        assert_eq!(
            s.apply(quiet_set(format!("flood{i}")), flood),
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
pub(crate) fn case_17_items_read_twice_survive_a_flood_read_once_do_not() {
    // memcached 1.6.18 -m 8, 10000 keys already in the class, the flood right after the
    // reads: all ten twice-read keys survive, no once-read key does.
    let (twice, once) = read_twice_then_flood(10_000, Duration::ZERO);
    assert_eq!(twice, (0..10).collect::<Vec<_>>());
    assert_eq!(once, Vec::<u32>::new());
}

#[test]
pub(crate) fn case_17_protection_lapses_when_the_flood_comes_seconds_later() {
    // Protection is relative to the age of the COLD tail: when the flood comes 2 s after
    // the reads, fresh keys cycle through COLD, WARM keys idle for longer are demoted and
    // evicted. memcached 1.6.18 -m 8 behaves the same (no twice-read key survived in
    // repeated runs).
    let (twice, once) = read_twice_then_flood(10_000, Duration::from_secs(2));
    assert_eq!(twice, Vec::<u32>::new());
    assert_eq!(once, Vec::<u32>::new());
}

#[test]
pub(crate) fn case_18_mg_vivify_wins_then_z_then_ms_with_cas() {
    let mut s = server();
    let t = secs(1);
    let first = meta_reply(s.apply(meta(MetaCommand::Get, "dp", "v c N30 t", None), t));
    assert_eq!(first.code, MetaCode::Value);
    assert_eq!(first.value.as_deref(), Some(&b""[..]));
    assert_eq!(first.flag(b't'), Some("30"));
    assert!(first.has(b'W') && !first.has(b'Z'));
    let cas: u64 = first.flag(b'c').unwrap().parse().unwrap();
    let second = meta_reply(s.apply(meta(MetaCommand::Get, "dp", "v c N30 t", None), t));
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
pub(crate) fn case_19_ma_counter_with_auto_create() {
    let mut s = server();
    let t = secs(1);
    let ma = |flags: &str| meta(MetaCommand::Arithmetic, "cnt", flags, None);
    let nf = meta_reply(s.apply(ma(""), t));
    assert_eq!(nf.code, MetaCode::NotFound);
    let va = |s: &mut Server, flags: &str| {
        let m = meta_reply(s.apply(ma(flags), t));
        assert_eq!(m.code, MetaCode::Value);
        String::from_utf8(m.value.unwrap()).unwrap()
    };
    assert_eq!(va(&mut s, "N0 J10 v"), "10");
    assert_eq!(va(&mut s, "v"), "11");
    assert_eq!(va(&mut s, "MD D100 v"), "0");
}
