//! Failover to a gutter pool: the route as mcrouter configures it by default serves the
//! old version a primary cut off from the clients returns with; a write that also
//! reaches the primary before it is acknowledged serves none, under the primary cut off,
//! crashed, and replies lost; a primary that restarts empty is safe either way.

mod support;

use std::path::Path;

use mcsim::scenario::Scenario;
use mcsim::{Fault, FaultPlan};
use mcsim_models::RECIPES;
use support::{load, metric, quick, refused, run, violation};

/// The primary leaves the clients' list holding the version a reader filled; the
/// writer's sets go to the gutter; the primary rejoins, and a read after every write was
/// acknowledged gets the old version from it.
#[test]
fn the_default_route_serves_what_a_returning_primary_held() {
    let (_, report) = run("gutter-as-written");
    let v = violation(&report);
    assert_eq!(v.invariant, "gutter.fresh_after_write");
    assert!(
        v.failure.numbers["got"] < v.failure.numbers["acked"],
        "{:?}",
        v.failure.numbers
    );
    assert!(
        v.failure.message.contains("from the primary"),
        "{}",
        v.failure.message
    );
    assert!(
        v.faults
            .iter()
            .any(|(_, f)| matches!(f, Fault::Leave { server: 0 })),
        "{}",
        v.cause()
    );
    // Shrunk to one writer and one reader, the primary leaving once.
    let found = report.first_failure.expect("a failure");
    assert_eq!(found.clients, 2);
    assert_eq!(v.faults.len(), 1, "{}", v.cause());
}

/// Without faults the failover route never fails over, and a single writer's `set`
/// with readers' `add` fills is fresh: the broken variant's failure needs the primary
/// to go and come back.
#[test]
fn the_default_route_is_fresh_while_the_primary_answers_and_when_it_returns_empty() {
    let mut s = load("gutter-as-written");
    s.config.faults = FaultPlan::none();
    let report = quick(&s, 300, true);
    assert!(report.first_failure.is_none(), "{:?}", report.first_failure);
    for quiet in [
        "gutter.failovers",
        "gutter.writes_to_gutter",
        "gutter.write_retries",
    ] {
        assert_eq!(metric(&report, quiet).max, 0.0, "{quiet}");
    }
    // A primary that crashes restarts empty: nothing old comes back.
    let (_, report) = run("gutter-as-written-crash");
    assert!(report.first_failure.is_none(), "{:?}", report.first_failure);
    // Some writes went to the gutter (at most both of them), none was asked again.
    let to_gutter = metric(&report, "gutter.writes_to_gutter");
    assert!(
        to_gutter.max >= 1.0 && to_gutter.max <= 2.0,
        "{to_gutter:?}"
    );
    assert_eq!(metric(&report, "gutter.write_retries").max, 0.0);
}

/// Past the violation, every run counts its stale reads and how long the newer version
/// had been acknowledged: a read after the primary's return, within the run.
#[test]
fn every_broken_run_measures_how_stale_and_for_how_long() {
    let mut s = load("gutter-as-written");
    s.config.past_violation = true;
    let report = quick(&s, 300, true);
    // Two readers, eight reads each.
    let stale = metric(&report, "gutter.stale_reads");
    assert!(stale.max >= 1.0 && stale.max <= 16.0, "{stale:?}");
    assert_eq!(
        stale.min, 0.0,
        "the primary does not always leave at a harmful moment"
    );
    let ms = metric(&report, "gutter.stale_ms");
    // At least the first stale read's age (what the violation says), within the 2 s
    // run; none in a run without a stale read.
    let first = &report.at_violation["gutter.fresh_after_write.stale_ms"];
    assert!(ms.max >= first.max && ms.max < 2_000.0, "{ms:?} {first:?}");
    assert_eq!(ms.min, 0.0, "{ms:?}");
    let behind = metric(&report, "gutter.versions_behind");
    assert!(behind.max >= 1.0 && behind.max <= 2.0, "{behind:?}");
}

/// The write that waits for the primary: no stale read with the primary cut off,
/// crashed, or replies lost; each pass met its danger (the writes went to the gutter
/// and were retried, or a gutter copy lagged within its TTL).
#[test]
fn a_write_that_reaches_the_primary_before_its_acknowledgement_serves_no_old_version() {
    for scenario in [
        "gutter-replay",
        "gutter-replay-crash",
        "gutter-replay-reply-lost",
    ] {
        let (_, report) = run(scenario);
        assert!(
            report.first_failure.is_none(),
            "{scenario}: {:?}",
            report.first_failure.map(|f| f.execution.verdict)
        );
        assert_eq!(metric(&report, "gutter.stale_reads").max, 0.0, "{scenario}");
        // A write waited for the primary (two writes, each asked again every 100 ms
        // while the primary is away 400 ms, or once after a lost reply), and went to the
        // gutter meanwhile.
        let retries = metric(&report, "gutter.write_retries");
        assert!(
            retries.max >= 1.0 && retries.max <= 10.0,
            "{scenario}: {retries:?}"
        );
        let to_gutter = metric(&report, "gutter.writes_to_gutter");
        assert!(
            to_gutter.max >= 1.0 && to_gutter.max <= 2.0,
            "{scenario}: {to_gutter:?}"
        );
        let failovers = metric(&report, "gutter.failovers");
        assert!(
            failovers.max >= 1.0 && failovers.max <= 32.0,
            "{scenario}: {failovers:?}"
        );
    }
    // Lost replies: a reader fails over alone and may meet a copy the gutter kept from
    // an earlier failover, older than the last write, within the gutter's TTL.
    let (_, report) = run("gutter-replay-reply-lost");
    let lagging = metric(&report, "gutter.lagging_reads");
    assert!(lagging.max >= 1.0 && lagging.max <= 3.0, "{lagging:?}");
}

/// The family runs on two servers and needs a reader: anything else is a clear error
/// naming the field, not a run that addresses a server the scenario lacks.
#[test]
fn a_scenario_without_two_servers_or_a_reader_is_refused() {
    let text = std::fs::read_to_string(support::scenario_path("gutter-replay")).unwrap();
    let one = text.replace("count = 2", "count = 1");
    let e = refused(Scenario::parse(Path::new("one-server.toml"), &one, RECIPES));
    assert!(e.contains("servers") && e.contains("2 servers"), "{e}");
    let alone = text.replace("clients = 3", "clients = 1");
    let e = refused(Scenario::parse(Path::new("alone.toml"), &alone, RECIPES));
    assert!(e.contains("clients") && e.contains("reader"), "{e}");
}

/// The shrunk counterexample replays from its schedule to the same verdict and trace.
#[test]
fn the_shrunk_counterexample_replays() {
    support::assert_shrunk_counterexample_replays("gutter-as-written");
}
