//! The server clock, flush_all, no-evict mode, faults and stats.

#[allow(unused_imports)]
use super::*;

// ---------------------------------------------------------------------------------------
// §1 time and expiry

/// Stores `k` with `ttl` at `stored_ms` and returns how long it stayed visible, probing
/// every millisecond.
pub(crate) fn lifetime_ms(ttl: i64, stored_ms: u64) -> u64 {
    let mut s = server();
    assert_eq!(
        s.apply(set("k", 0, ttl, b"1"), at(stored_ms)),
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
pub(crate) fn ttl_2_lives_between_one_and_two_seconds() {
    assert_eq!(lifetime_ms(2, 10_050), 1_950);
    assert_eq!(lifetime_ms(2, 10_500), 1_500);
    assert_eq!(lifetime_ms(2, 10_950), 1_050);
}

#[test]
pub(crate) fn ttl_1_stored_late_in_a_tick_lives_50_ms() {
    assert_eq!(lifetime_ms(1, 10_950), 50);
}

#[test]
pub(crate) fn phase_shifts_the_tick_edges() {
    let config = ServerConfig::default().phase(Duration::from_millis(300));
    let mut s = Server::new(config, VirtualTime::ZERO);
    // The first tick lasts the phase; every later one a second.
    assert_eq!(s.tick(at(299)), 62);
    assert_eq!(s.tick(at(300)), 63);
    assert_eq!(s.tick(at(10_299)), 72);
    assert_eq!(s.tick(at(10_300)), 73);
    assert_eq!(s.apply(set("k", 0, 1, b"1"), at(10_200)), Reply::Stored);
    assert_eq!(value(&mut s, "k", at(10_299)), Some(b"1".to_vec()));
    assert_eq!(value(&mut s, "k", at(10_300)), None);
}

#[test]
pub(crate) fn absolute_exptime_in_the_future_and_in_the_past() {
    let mut s = server();
    let t = secs(20);
    let unix_now = s.clock().unix_time(t);
    assert_eq!(s.apply(set("f", 0, unix_now + 100, b"1"), t), Reply::Stored);
    assert_eq!(ttl_of(&mut s, "f", t), 100);
    assert_eq!(value(&mut s, "f", at(119_999)), Some(b"1".to_vec()));
    assert_eq!(value(&mut s, "f", secs(120)), None);
    assert_eq!(s.apply(set("p", 0, unix_now - 10, b"1"), t), Reply::Stored);
    assert_eq!(value(&mut s, "p", t), None);
}

#[test]
pub(crate) fn exptime_from_2_pow_31_wraps_negative() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(set("w", 0, 1 << 31, b"1"), t), Reply::Stored);
    assert_eq!(value(&mut s, "w", t), None);
    // 2^32 + 10 truncates to a relative 10 seconds.
    assert_eq!(s.apply(set("r", 0, (1 << 32) + 10, b"1"), t), Reply::Stored);
    assert_eq!(ttl_of(&mut s, "r", t), 10);
}

#[test]
pub(crate) fn touch_sets_a_relative_ttl_and_zero_clears_it() {
    let mut s = server();
    assert_eq!(s.apply(set("k", 0, 5, b"1"), secs(1)), Reply::Stored);
    assert_eq!(s.apply(touch("k", 10), secs(4)), Reply::Touched);
    assert_eq!(value(&mut s, "k", at(13_999)), Some(b"1".to_vec()));
    assert_eq!(value(&mut s, "k", secs(14)), None);
    assert_eq!(s.apply(set("z", 0, 5, b"1"), secs(1)), Reply::Stored);
    assert_eq!(s.apply(touch("z", 0), secs(2)), Reply::Touched);
    assert_eq!(ttl_of(&mut s, "z", secs(1000)), -1);
}

// ---------------------------------------------------------------------------------------
// §2 flush_all with a delay

#[test]
pub(crate) fn flush_all_with_delay_lands_at_tick_d_minus_1() {
    let mut s = server();
    // Tick 72 at 10.5 s; `flush_all 5` lands at tick 76 (14.0 s).
    assert_eq!(s.apply(set("old", 0, 0, b"1"), at(10_500)), Reply::Stored);
    assert_eq!(s.apply(flush_all(Some(5)), at(10_500)), Reply::Ok);
    assert_eq!(value(&mut s, "old", at(13_999)), Some(b"1".to_vec()));
    assert_eq!(value(&mut s, "old", secs(14)), None);
    // During that tick even fresh stores are invisible…
    assert_eq!(s.apply(set("fresh", 0, 0, b"2"), at(14_500)), Reply::Stored);
    assert_eq!(value(&mut s, "fresh", at(14_500)), None);
    // …and from the next one on stores are visible again.
    assert_eq!(s.apply(set("later", 0, 0, b"3"), secs(15)), Reply::Stored);
    assert_eq!(value(&mut s, "later", secs(15)), Some(b"3".to_vec()));
}

// ---------------------------------------------------------------------------------------
// §3 -M: out of memory instead of eviction

#[test]
pub(crate) fn no_evict_mode_fails_the_store_and_deletes_the_old_value() {
    let config = ServerConfig::default().memory_mb(2).no_evict(true);
    let mut s = Server::new(config, VirtualTime::ZERO);
    let t = secs(1);
    let big = vec![b'v'; 100 * 1024];
    // Two pages of the 100 KB class: 20 items.
    for i in 0..20 {
        assert_eq!(s.apply(set(&format!("v{i}"), 0, 0, &big), t), Reply::Stored);
    }
    let oom = Reply::ServerError("out of memory storing object".into());
    assert_eq!(s.apply(set("v20", 0, 0, &big), t), oom);
    assert_eq!(s.apply(set("v0", 0, 0, &big), t), oom);
    assert_eq!(value(&mut s, "v0", t), None);
    assert_eq!(value(&mut s, "v1", t), Some(big.clone()));
    assert_eq!(s.stats().evictions, 0);
    assert_eq!(s.stats().store_no_memory, 2);
}

// ---------------------------------------------------------------------------------------
// §4–§5 faults

#[test]
pub(crate) fn crash_loses_everything_and_the_clock_restarts_at_62() {
    let mut s = server();
    assert_eq!(s.apply(set("k", 0, 0, b"1"), secs(30)), Reply::Stored);
    assert_eq!(s.tick(secs(30)), 92);
    s.crash();
    assert!(!s.is_up());
    s.restart(secs(40), false);
    assert!(s.is_up());
    assert_eq!(s.tick(secs(40)), 62);
    assert_eq!(value(&mut s, "k", secs(40)), None);
    assert_eq!(s.stats().curr_items, 0);
    // A fresh process hands out cas uniques from 1 again.
    assert_eq!(s.apply(set("k", 0, 0, b"1"), secs(40)), Reply::Stored);
    assert_eq!(cas_of(&mut s, "k", secs(40)), 1);
}

#[test]
pub(crate) fn warm_restart_keeps_items_and_ttls_keep_counting() {
    let mut s = server();
    // Stored at 1 s with TTL 10: gone at 11 s, whatever happens in between.
    assert_eq!(s.apply(set("k", 4, 10, b"kept"), secs(1)), Reply::Stored);
    assert_eq!(s.apply(set("forever", 0, 0, b"f"), secs(1)), Reply::Stored);
    let cas = cas_of(&mut s, "k", secs(1));
    s.restart(secs(5), true);
    assert_eq!(s.tick(secs(5)), 62);
    assert_eq!(
        s.apply(gets("k"), secs(5)),
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
pub(crate) fn skip_second_shortens_a_ttl() {
    let mut s = server();
    assert_eq!(s.apply(set("k", 0, 2, b"1"), secs(10)), Reply::Stored);
    assert_eq!(s.tick(secs(10)), 72);
    s.skip_second();
    assert_eq!(s.tick(secs(10)), 73);
    assert_eq!(value(&mut s, "k", at(10_999)), Some(b"1".to_vec()));
    assert_eq!(value(&mut s, "k", secs(11)), None);
}

#[test]
pub(crate) fn evict_fault_removes_one_key_and_counts_an_eviction() {
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(set("a", 0, 0, b"1"), t), Reply::Stored);
    assert_eq!(s.apply(set("b", 0, 0, b"2"), t), Reply::Stored);
    assert!(s.evict(&key("a"), t));
    assert!(!s.evict(&key("a"), t));
    assert!(!s.evict(&key("nokey"), t));
    assert_eq!(value(&mut s, "a", t), None);
    assert_eq!(value(&mut s, "b", t), Some(b"2".to_vec()));
    assert_eq!(s.stats().evictions, 1);
    assert_eq!(s.stats().curr_items, 1);
}

// ---------------------------------------------------------------------------------------
// §4 stats

#[test]
pub(crate) fn stats_after_a_small_workload() {
    // The same workload on memcached 1.6.18 gives these numbers.
    let mut s = server();
    let t = secs(1);
    assert_eq!(s.apply(set("a", 0, 0, b"1"), t), Reply::Stored);
    assert_eq!(s.apply(set("b", 0, 0, b"2"), t), Reply::Stored);
    s.apply(get(&["a"]), t);
    s.apply(get(&["c"]), t);
    s.apply(get(&["a", "b", "c"]), t);
    assert_eq!(s.apply(set("a", 0, 0, b"3"), t), Reply::Stored);
    assert_eq!(s.apply(delete("b"), t), Reply::Deleted);
    s.apply(meta(MetaCommand::Get, "a", "v", None), t);
    s.apply(meta(MetaCommand::Get, "zz", "v", None), t);
    s.apply(meta(MetaCommand::Get, "a", "T30", None), t);
    s.apply(meta(MetaCommand::Set, "m", "", Some(b"1")), t);
    s.apply(meta(MetaCommand::Arithmetic, "m", "", None), t);
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
