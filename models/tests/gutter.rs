//! Failover to a gutter pool: the route as mcrouter configures it by default serves the
//! old version a primary cut off from the clients returns with; a write that also
//! reaches the primary before it is acknowledged serves none, under the primary cut off,
//! crashed, and replies lost; a primary that restarts empty is safe either way.

mod support;

use std::path::Path;

use mcsim::scenario::Scenario;
use mcsim::{Fault, FaultPlan, Verdict};
use mcsim_models::RECIPES;
use support::{load, metric, quick, run, violation};

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
    assert_eq!(metric(&report, "gutter.failovers").max, 0.0);
    // A primary that crashes restarts empty: nothing old comes back.
    let (_, report) = run("gutter-as-written-crash");
    assert!(report.first_failure.is_none(), "{:?}", report.first_failure);
    assert!(metric(&report, "gutter.writes_to_gutter").max >= 1.0);
}

/// Past the violation, every run counts its stale reads and how long the newer version
/// had been acknowledged: a read after the primary's return, within the run.
#[test]
fn every_broken_run_measures_how_stale_and_for_how_long() {
    let mut s = load("gutter-as-written");
    s.config.past_violation = true;
    let report = quick(&s, 300, true);
    let stale = metric(&report, "gutter.stale_reads");
    assert!(stale.max >= 1.0, "{stale:?}");
    let ms = metric(&report, "gutter.stale_ms");
    // The primary is away 400 ms: a write acknowledged then is at least as old as the
    // rest of the outage when a read meets the returned primary, and the run is 2 s.
    assert!(ms.max > 0.0 && ms.max < 2_500.0, "{ms:?}");
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
        assert!(
            metric(&report, "gutter.write_retries").max >= 1.0,
            "{scenario}: no write ever waited for the primary"
        );
        assert!(metric(&report, "gutter.failovers").max >= 1.0, "{scenario}");
    }
    // Lost replies: a reader fails over alone and may meet a copy the gutter kept from
    // an earlier failover, older than the last write, within the gutter's TTL.
    let (_, report) = run("gutter-replay-reply-lost");
    assert!(metric(&report, "gutter.lagging_reads").max >= 1.0);
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

/// The error a scenario was refused with.
fn refused<T, E: std::fmt::Display>(loaded: Result<T, E>) -> String {
    match loaded {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

/// The shrunk counterexample replays from its schedule to the same verdict and trace.
#[test]
fn the_shrunk_counterexample_replays() {
    let (s, report) = run("gutter-as-written");
    let found = report.first_failure.expect("a failure");
    let shrunk = s.with_clients(found.clients).unwrap();
    let again = mcsim::run::replay(&shrunk, &found.execution.schedule);
    assert!(
        matches!(again.verdict, Verdict::Violation(_)),
        "{:?}",
        again.verdict
    );
    assert_eq!(again.trace.hash(), found.execution.trace.hash());
}
