//! The dog-pile-safe cache recipes: the naive cache and the get/set lock let several
//! frontends rebuild at once, HL's add lock does not (unless its lock key expires or is
//! evicted mid-rebuild), and the meta-command recipe does not either; the metrics say how
//! many backend queries each expiry costs.

mod support;

use mcsim::Verdict;
use mcsim::run::{self, RunOptions};
use mcsim::scenario::{Scenario, load_points};
use mcsim_models::RECIPES;
use support::{assert_passes, load, metric, quick, run, scenario_path, violation};

#[test]
fn naive_cache_dog_piles_at_expiry() {
    let (s, report) = run("cache-naive");
    let v = violation(&report);
    assert_eq!(v.invariant, "cache.single_rebuild");
    assert!(v.faults.is_empty(), "no fault is needed: {}", v.cause());
    // Every frontend of the (shrunk) counterexample misses together and queries the
    // backend, at every expiry.
    let n = report.first_failure.as_ref().unwrap().clients;
    assert!(n >= 2);
    assert_eq!(v.failure.numbers["concurrent"], n as i64);
    let (queries, expiries) = (v.failure.numbers["queries"], v.failure.numbers["expiries"]);
    assert_eq!(queries, expiries * n as i64);
    // The strip is in the message: misses, then writes, then hits.
    let pile = format!("{}{}H", "M".repeat(n), "W".repeat(n));
    assert!(v.failure.message.contains(&pile), "{}", v.failure.message);
    // Metrics of the executions as run (all five frontends), recorded although they failed.
    let per_expiry = metric(&report, "cache.queries_per_expiry").max;
    assert_eq!(per_expiry, s.clients as f64);
    assert_eq!(
        metric(&report, "cache.strip.M").max,
        metric(&report, "cache.backend_queries").max
    );
}

#[test]
fn get_set_lock_lets_two_frontends_rebuild() {
    let (_, report) = run("cache-get-set-lock");
    let v = violation(&report);
    assert_eq!(v.invariant, "cache.single_rebuild");
    assert!(v.faults.is_empty());
    assert!(v.failure.numbers["concurrent"] >= 2);
    assert!(v.failure.numbers["queries"] > v.failure.numbers["expiries"]);
}

#[test]
fn add_lock_rebuilds_once_per_expiry_and_writes_the_strip() {
    let report = assert_passes("cache-add-lock");
    assert_eq!(metric(&report, "cache.max_concurrent_rebuilds").max, 1.0);
    assert_eq!(metric(&report, "cache.queries_per_expiry").max, 1.0);
    // Every write is followed by an unlock; losers wait less than one rebuild plus a poll.
    assert_eq!(
        metric(&report, "cache.strip.W").sum,
        metric(&report, "cache.strip.U").sum
    );
    assert!(metric(&report, "cache.longest_wait_ms").max < 300.0 + 100.0 + 50.0);
    assert_eq!(metric(&report, "cache.empty_served").max, 0.0);

    // The strip goes into the trace letter by letter and whole at the end.
    let s = support::load("cache-add-lock");
    let e = run::run_seed(&s, s.strategy, 0);
    assert!(e.verdict.is_pass(), "{}", e.verdict);
    let trace = e.trace.render();
    assert!(trace.contains("strip cache_0 += L"), "{trace}");
    let end = trace
        .lines()
        .find(|l| l.contains("strips at the end"))
        .expect("final strip");
    assert!(end.contains("cache_0: ML"), "{end}");
    assert!(end.contains("WU"), "{end}");
}

#[test]
fn add_lock_outlasted_by_its_rebuild_lets_a_second_one_in() {
    let (_, report) = run("cache-add-lock-slow-rebuild");
    let v = violation(&report);
    assert_eq!(v.invariant, "cache.single_rebuild");
    assert!(v.faults.is_empty());
    assert_eq!(v.failure.numbers["concurrent"], 2);
    // The lock (TTL 2 s) went while the 3 s rebuild ran: the overlap starts 1–2 s in.
    let at = v.failure.message.split("(t=").nth(1).expect("overlap time");
    let secs: f64 = at.split(')').next().unwrap().parse().unwrap();
    assert!((1.0..=2.1).contains(&secs), "overlap at {secs}");
}

#[test]
fn add_lock_key_evicted_mid_rebuild_lets_a_second_one_in() {
    let (_, report) = run("cache-add-lock-evict");
    let v = violation(&report);
    assert_eq!(v.invariant, "cache.single_rebuild");
    assert_eq!(v.faults.len(), 1);
    assert!(v.cause().contains("evict cache_0_lock"), "{}", v.cause());
}

#[test]
fn mg_vivify_rebuilds_once_per_expiry() {
    let report = assert_passes("cache-mg-vivify");
    assert_eq!(metric(&report, "cache.max_concurrent_rebuilds").max, 1.0);
    assert_eq!(metric(&report, "cache.queries_per_expiry").max, 1.0);
}

#[test]
fn add_lock_serving_stale_trades_freshness_for_waiting() {
    let report = assert_passes("cache-add-lock-serve-stale");
    assert!(metric(&report, "cache.stale_served").min > 0.0);
    assert_eq!(metric(&report, "cache.queries_per_expiry").max, 1.0);
    // Stale rows outlive their 2 s lifetime by up to one rebuild (300 ms).
    let oldest = metric(&report, "cache.oldest_value_ms").max;
    assert!((2300.0..2700.0).contains(&oldest), "{oldest}");
}

#[test]
fn mg_vivify_placeholder_evicted_lets_a_second_rebuild_in() {
    let (_, report) = run("cache-mg-vivify-evict");
    let v = violation(&report);
    assert_eq!(v.invariant, "cache.single_rebuild");
    assert!(v.cause().contains("evict cache_0"), "{}", v.cause());
    let trace = report.first_failure.unwrap().execution.trace.render();
    // Two win tokens for one expiry: the second after the placeholder was evicted.
    let before_store = trace.split(" ms cache_0 ").next().unwrap();
    assert_eq!(before_store.matches(" W \"\"").count(), 2, "{trace}");
}

#[test]
fn mg_recache_hands_out_one_early_win_token_per_expiry() {
    let (s, report) = run("cache-mg-vivify-recache");
    assert!(report.first_failure.is_none());
    assert_eq!(metric(&report, "cache.queries_per_expiry").max, 1.0);
    // Everyone misses the first build; afterwards only the token holder sees an expiry.
    let expiries = metric(&report, "cache.expiries").max;
    assert!(expiries >= 2.0);
    assert_eq!(
        metric(&report, "cache.strip.M").max,
        s.clients as f64 + expiries - 1.0
    );
}

/// Mean of a metric at one point of a sweep file.
fn at_point(file: &str, point: &str, name: &str) -> f64 {
    let points: Vec<Scenario> =
        load_points(&scenario_path(file), RECIPES).unwrap_or_else(|e| panic!("{e}"));
    let s = points
        .iter()
        .find(|s| s.point.join(",") == point)
        .unwrap_or_else(|| panic!("no point {point} in {file}"));
    let mut options = RunOptions::from_scenario(s);
    options.executions = 3;
    options.keep_going = true;
    // Only the metrics matter here.
    options.shrink = false;
    metric(&run::run(s, &options), name).mean()
}

#[test]
fn queries_per_expiry_grow_with_frontends_and_rebuild_time_unless_locked() {
    let q = |file, point| at_point(file, point, "cache.queries_per_expiry");
    // Ten frontends spread over a second: a 50 ms rebuild is overlapped by a few, a 3 s
    // rebuild by all of them.
    let short = q("cache-naive-sweep", "clients=10,rebuild_ms=50");
    let long = q("cache-naive-sweep", "clients=10,rebuild_ms=3000");
    assert!((1.0..4.0).contains(&short), "{short}");
    assert_eq!(long, 10.0);
    assert_eq!(q("cache-naive-sweep", "clients=1,rebuild_ms=3000"), 1.0);
    assert_eq!(q("cache-add-lock-sweep", "clients=10,rebuild_ms=3000"), 1.0);
    // A rebuild longer than the 2.5 s the losers wait: they serve the stale value.
    let stale = at_point(
        "cache-add-lock-sweep",
        "clients=10,rebuild_ms=3000",
        "cache.stale_served",
    );
    assert!(stale > 0.0);
}

#[test]
fn a_strip_of_a_failed_run_replays_identically() {
    let (s, report) = run("cache-get-set-lock");
    let failure = report.first_failure.expect("a failure");
    let s = s.with_clients(failure.clients).unwrap();
    let again = run::replay(&s, &failure.execution.schedule);
    assert_eq!(again.trace.render(), failure.execution.trace.render());
    match again.verdict {
        Verdict::Violation(v) => assert!(v.failure.message.contains("strip cache_0: ML")),
        other => panic!("{other}"),
    }
}

#[test]
fn a_value_over_the_item_limit_is_an_error_the_add_lock_cache_does_not_handle() {
    let (_, report) = support::run("cache-add-lock-too-large");
    let f = report.first_failure.expect("a failure");
    match &f.execution.verdict {
        mcsim::Verdict::ClientError { error, .. } => {
            assert!(error.contains("object too large"), "{error}")
        }
        other => panic!("{other}"),
    }
    assert!(
        f.execution
            .trace
            .render()
            .contains("item size limit: FAULT")
    );
}

/// XFetch as commonly written, its item's memcached TTL its value's expiry: memcached's
/// whole-second clock drops the item up to a second before the early recomputes XFetch
/// counts on, and the readers miss together: two or more rebuild at once, no fault.
#[test]
fn xfetch_with_its_expiry_as_the_ttl_dog_piles_when_memcached_drops_the_item() {
    let (_, report) = run("cache-xfetch");
    let v = violation(&report);
    assert_eq!(v.invariant, "cache.single_rebuild");
    assert!(v.failure.numbers["concurrent"] >= 2);
    assert!(v.faults.is_empty(), "{}", v.cause());
}

/// On the same warm workload, over the same 300 executions: the naive cache rebuilds 5
/// at once at every expiry; XFetch fewer; XFetch with the TTL beyond its expiry fewer
/// still, about two queries per expiry, yet two readers still recompute at once in most
/// runs (five readers every 100 ms, a recompute of 300 ms).
#[test]
fn xfetch_with_a_ttl_margin_recomputes_early_and_less_but_not_alone() {
    let mean = |name: &str, metric_name: &str| {
        let s = load(name);
        metric(&quick(&s, 300, true), metric_name).mean()
    };
    let per_expiry = |name: &str| mean(name, "cache.queries_per_expiry");
    let (naive, xfetch, margin) = (
        per_expiry("cache-naive-warm"),
        per_expiry("cache-xfetch"),
        per_expiry("cache-xfetch-margin"),
    );
    assert_eq!(naive, 5.0);
    assert!(
        margin < xfetch && xfetch < naive,
        "{margin} {xfetch} {naive}"
    );
    assert!(margin < 2.5, "{margin}");
    let concurrent = mean("cache-xfetch-margin", "cache.max_concurrent_rebuilds");
    assert!((2.0..5.0).contains(&concurrent), "{concurrent}");
}
