//! Tagged cache invalidation: integer tag versions go wrong when a tag key is lost, time
//! versions survive that but not a lagging clock when HL routes rebuilds by tag age.

mod support;

use mcsim::run::{self, RunOptions, RunReport};
use mcsim::scenario::{Scenario, load_points};
use mcsim_models::RECIPES;
use support::{assert_passes, metric, run, scenario_path, violation};

#[test]
fn counter_versions_pass_while_no_tag_is_lost() {
    let report = assert_passes("tags-counter");
    assert_eq!(metric(&report, "tags.invalidations").min, 3.0);
    assert!(metric(&report, "tags.hits").min > 0.0);
}

#[test]
fn counter_versions_restart_after_a_tag_eviction_and_revive_an_old_entry() {
    let (_, report) = run("tags-counter-evict");
    let v = violation(&report);
    assert_eq!(v.invariant, "tags.no_stale_after_invalidate");
    assert!(v.cause().contains("evict tag_"), "{}", v.cause());
    // One change missed, served until the next invalidation of the entry's tags.
    assert_eq!(v.failure.numbers["behind"], 1);
    assert!(v.failure.numbers["stale_reads"] >= 1);
    assert!(v.failure.numbers["stale_ms"] > 0);
    let trace = report.first_failure.unwrap().execution.trace.render();
    // The invalidation found the tag gone and created it at 1 again.
    assert!(trace.contains("incr tag_"), "{trace}");
    assert!(trace.contains("-> NOT_FOUND"), "{trace}");
}

#[test]
fn time_versions_pass_with_agreeing_clocks() {
    assert_passes("tags-time");
}

#[test]
fn time_versions_survive_tag_evictions() {
    let report = assert_passes("tags-time-evict");
    assert_eq!(metric(&report, "tags.stale_reads").max, 0.0);
}

#[test]
fn a_lagging_writer_sends_rebuilds_to_a_stale_replica() {
    let (_, report) = run("tags-time-skew");
    let v = violation(&report);
    assert_eq!(v.invariant, "tags.no_stale_after_invalidate");
    assert!(v.faults.is_empty(), "{}", v.cause());
    assert!(metric(&report, "tags.replica_reads").max > 0.0);
    // The stale rows stay until the next invalidation (500 ms later) or longer.
    assert!(
        v.failure.numbers["stale_ms"] >= 400,
        "{:?}",
        v.failure.numbers
    );
}

#[test]
fn a_lagging_writer_can_write_the_version_the_tag_already_has() {
    let (_, report) = run("tags-time-skew-same-version");
    let v = violation(&report);
    assert_eq!(v.invariant, "tags.no_stale_after_invalidate");
    assert!(v.faults.is_empty());
    assert_eq!(v.failure.numbers["behind"], 1);
    // The 'new' version written by the lagging writer is the tag's old one.
    let trace = report.first_failure.unwrap().execution.trace.render();
    assert!(trace.contains("set tag_0 \"10000\""), "{trace}");
    assert!(trace.contains("tag_0=HIT \"10000\""), "{trace}");
}

/// A sweep point's report, with a small budget.
fn point(file: &str, label: &str) -> RunReport {
    let points: Vec<Scenario> =
        load_points(&scenario_path(file), RECIPES).unwrap_or_else(|e| panic!("{e}"));
    let s = points
        .iter()
        .find(|s| s.point.join(",") == label)
        .unwrap_or_else(|| panic!("no point {label} in {file}"));
    let mut options = RunOptions::from_scenario(s);
    options.executions = 3;
    options.keep_going = true;
    // Only the metrics matter here.
    options.shrink = false;
    run::run(s, &options)
}

#[test]
fn staleness_grows_with_the_writers_lag_only_beyond_the_routing_margin() {
    let stale =
        |label: &str| metric(&point("tags-time-skew-sweep", label), "tags.stale_reads").mean();
    // Replica 200 ms behind, master window 300 ms, rebuilds within 100 ms of the change:
    // a lag of 200 ms is absorbed, 300 ms is not.
    assert_eq!(stale("replica_lag_ms=200,skews_ms=[0, 0, 0, 0]"), 0.0);
    assert_eq!(stale("replica_lag_ms=200,skews_ms=[-200, 0, 0, 0]"), 0.0);
    assert!(stale("replica_lag_ms=200,skews_ms=[-300, 0, 0, 0]") > 0.0);
    // A reader running ahead is as bad as a writer running behind.
    assert!(stale("replica_lag_ms=200,skews_ms=[0, 300, 300, 300]") > 0.0);
    // Without a replica, a lag that matches no earlier version breaks nothing.
    assert_eq!(stale("replica_lag_ms=0,skews_ms=[-1000, 0, 0, 0]"), 0.0);
}
