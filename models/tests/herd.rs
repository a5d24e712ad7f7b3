//! The herd an error keeps going: clients that take a database error for an invalid
//! value delete the key the good repairs stored, and the herd outlives its cause; a
//! repair that leaves the key alone and backs off ends it with the first value stored,
//! lost replies or not, unless it takes a cache that does not answer for a miss; with
//! room for every client no query fails at all.

mod support;

use std::path::Path;

use mcsim::scenario::Scenario;
use mcsim_models::RECIPES;
use support::{load, metric, quick, run, violation};

/// No fault: the database's room alone (two queries for eight clients) keeps the herd
/// going past a second, its failed repairs deleting what the others stored.
#[test]
fn an_error_taken_for_an_invalid_value_keeps_the_herd_going() {
    let (_, report) = run("herd-as-written");
    let v = violation(&report);
    assert_eq!(v.invariant, "herd.dies_out");
    assert!(v.faults.is_empty(), "{}", v.cause());
    assert!(
        v.failure.numbers["at_ms"] >= 1000,
        "{:?}",
        v.failure.numbers
    );
    assert!(
        v.failure.numbers["db_errors"] >= 2,
        "{:?}",
        v.failure.numbers
    );
}

/// Run to the end, every run of the repair as written fails reads to its last ones:
/// the herd never dies out within the 1.5 s of reads, and the database fails query
/// after query.
#[test]
fn the_herd_as_written_lasts_as_long_as_the_reads() {
    let mut s = load("herd-as-written");
    s.config.past_violation = true;
    let report = quick(&s, 20, true);
    let last = metric(&report, "herd.last_failure_ms");
    assert!(last.min >= 1_000.0, "{last:?}");
    let errors = metric(&report, "herd.db_errors");
    assert!(errors.min >= 10.0, "{errors:?}");
    // Eight clients, sixty reads each.
    let late = metric(&report, "herd.late_failures");
    assert!(late.min >= 1.0 && late.max <= 8.0 * 60.0, "{late:?}");
    let failed = metric(&report, "herd.failed_reads");
    assert!(
        failed.min >= late.min && failed.max <= 8.0 * 60.0,
        "{failed:?}"
    );
}

/// Backing off: the first round's failed queries are the only ones, the first repair
/// ends the herd, and a lost reply changes nothing of that: a read the cache did not
/// answer fails without a query.
#[test]
fn backing_off_ends_the_herd_with_the_first_repair() {
    for scenario in ["herd-backoff", "herd-backoff-reply-lost"] {
        let (_, report) = run(scenario);
        assert!(
            report.first_failure.is_none(),
            "{scenario}: {:?}",
            report.first_failure.map(|f| f.execution.verdict)
        );
        // It met the danger: queries failed, the database being full.
        assert!(metric(&report, "herd.db_errors").min >= 1.0, "{scenario}");
        let last = metric(&report, "herd.last_failure_ms");
        assert!(last.max < 500.0, "{scenario}: {last:?}");
        assert_eq!(metric(&report, "herd.late_failures").max, 0.0, "{scenario}");
    }
    // Without lost replies: each client queries once, two of them repair it, and every
    // read the cache answers.
    let (_, report) = run("herd-backoff");
    assert_eq!(metric(&report, "herd.db_queries").max, 8.0);
    assert_eq!(metric(&report, "herd.db_errors").max, 6.0);
    assert_eq!(metric(&report, "herd.cache_failures").max, 0.0);
    // With them, at most three reads fail for the cache, none queries for it: a
    // database with room for one, eight clients, one query each.
    let (_, report) = run("herd-backoff-reply-lost");
    let cache = metric(&report, "herd.cache_failures");
    assert!(cache.max >= 1.0 && cache.max <= 3.0, "{cache:?}");
    assert!(metric(&report, "herd.db_queries").max <= 8.0 + 3.0);
}

/// On a slow database that refuses at once what it has no room for, the backoff keeps
/// the refusals few: each refused client waits 100, then 200 ms, and finds the repair
/// stored (12 refusals); with no wait it queries at every read and is refused 60 times.
/// Its reads fail meanwhile, for want of the database: the price of the waits.
#[test]
fn the_backoff_keeps_the_refusals_few_on_a_database_that_fails_fast() {
    let (s, report) = run("herd-backoff-fail-fast");
    assert!(report.first_failure.is_none(), "{:?}", report.first_failure);
    let errors = metric(&report, "herd.db_errors");
    assert_eq!((errors.min, errors.max), (12.0, 12.0), "{errors:?}");
    let failed = metric(&report, "herd.failed_reads");
    assert!(failed.max >= 12.0 && failed.max <= 8.0 * 60.0, "{failed:?}");
    let eager = s
        .with_set(&["params.backoff_ms=0".to_string()])
        .unwrap_or_else(|e| panic!("{e}"));
    let report = quick(&eager, 20, false);
    assert!(metric(&report, "herd.db_errors").min >= 40.0);
}

/// Backing off on database errors but taking a cache that does not answer for a miss:
/// two reads whose cache replies are lost together, long after the herd died out, both
/// query a database with room for one, and a read fails for want of it again.
#[test]
fn a_cache_error_taken_for_a_miss_starts_the_herd_again() {
    let (_, report) = run("herd-backoff-miss-on-error-reply-lost");
    let v = violation(&report);
    assert_eq!(v.invariant, "herd.dies_out");
    assert!(
        v.failure.numbers["at_ms"] >= 1000,
        "{:?}",
        v.failure.numbers
    );
    let lost = v
        .faults
        .iter()
        .filter(|(_, f)| matches!(f, mcsim::Fault::ReplyLost { .. }))
        .count();
    assert!(lost >= 2, "{}", v.cause());
}

/// With room for every client, no query fails and the repair as written is fine: the
/// database's room decides, as the sweep shows.
#[test]
fn with_room_for_every_client_the_repair_as_written_is_fine() {
    let s = load("herd-as-written")
        .with_set(&["params.db_capacity=8".to_string()])
        .unwrap_or_else(|e| panic!("{e}"));
    let report = quick(&s, 50, false);
    assert!(report.first_failure.is_none(), "{:?}", report.first_failure);
    assert_eq!(metric(&report, "herd.db_errors").max, 0.0);
    let points = support::points("herd-as-written-sweep");
    assert_eq!(points.len(), 20);
}

/// A herd that must die out after the reads end judges nothing: refused, naming the
/// field.
#[test]
fn a_recovery_after_the_last_read_is_refused() {
    let text = std::fs::read_to_string(support::scenario_path("herd-backoff")).unwrap();
    let late = text.replace("[explore]", "[params]\nrecover_ms = 5000\n\n[explore]");
    match Scenario::parse(Path::new("late.toml"), &late, RECIPES) {
        Ok(_) => panic!("accepted"),
        Err(e) => {
            let e = e.to_string();
            assert!(
                e.contains("params.recover_ms") && e.contains("1500 ms"),
                "{e}"
            );
        }
    }
}
