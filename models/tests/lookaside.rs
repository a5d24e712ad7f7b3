//! The look-aside cache: filled with `set` or `add`, a fill that lands after the writer's
//! delete keeps an old version cached, and a read after every write serves it; with a
//! lease (add+cas, or mg N and ms C) the late fill is refused, under evictions, lost
//! replies and a crash too, but not when the row's server leaves and returns with its
//! items.

mod support;

use mcsim::Fault;
use support::{load, metric, quick, run, violation};

/// A reader that read the row before the update fills after the delete: the read after
/// every write gets the old version, one behind, with no fault.
#[test]
fn a_fill_after_the_delete_is_a_stale_set_with_set_and_with_add() {
    for scenario in ["lookaside-as-written", "lookaside-add"] {
        let (_, report) = run(scenario);
        let v = violation(&report);
        assert_eq!(v.invariant, "lookaside.fresh_after_write", "{scenario}");
        assert_eq!(v.failure.numbers["behind"], 1, "{scenario}");
        assert_eq!(
            v.failure.numbers["latest"],
            v.failure.numbers["got"] + 1,
            "{scenario}"
        );
        assert!(v.faults.is_empty(), "{scenario}: {}", v.cause());
    }
}

/// Run on past the violation, each broken run counts its stale reads: one or two (two
/// readers each read once after the writes), each a version behind or two, and the old
/// version is still cached at the end.
#[test]
fn every_run_of_the_fill_with_set_counts_its_stale_reads() {
    let mut s = load("lookaside-as-written");
    s.config.past_violation = true;
    let report = quick(&s, 50, true);
    let stale = metric(&report, "lookaside.stale_reads");
    assert!(stale.min >= 0.0 && stale.max <= 2.0, "{stale:?}");
    assert!(stale.mean() > 0.0, "{stale:?}");
    let behind = metric(&report, "lookaside.versions_behind");
    assert!(behind.max <= 2.0 && behind.mean() > 0.0, "{behind:?}");
    // And the old version stays cached at the end.
    let cached = metric(&report, "lookaside.cached_behind");
    assert!(cached.max <= 2.0 && cached.mean() > 0.0, "{cached:?}");
}

/// The leases (with the parameters under which `set` and `add` store the old version,
/// and with a crash of the row's server, which restarts empty): every read begun after
/// the last write serves it, with and without evictions of the placeholder and lost
/// replies.
#[test]
fn a_lease_refuses_the_late_fill_under_evictions_lost_replies_and_a_crash() {
    for scenario in [
        "lookaside-lease-cas",
        "lookaside-lease-meta",
        "lookaside-lease-cas-evict",
        "lookaside-lease-meta-reply-lost",
        "lookaside-lease-cas-crash",
    ] {
        let (_, report) = run(scenario);
        assert!(
            report.first_failure.is_none(),
            "{scenario}: {:?}",
            report.first_failure.map(|f| f.execution.verdict)
        );
        assert_eq!(
            report.metrics["lookaside.stale_reads"].max, 0.0,
            "{scenario}"
        );
        assert_eq!(
            report.metrics["lookaside.cached_behind"].max, 0.0,
            "{scenario}"
        );
        // The lease met the stale set's window: a fill refused in every run without
        // faults, at most one a reader there (its first read's).
        if matches!(scenario, "lookaside-lease-cas" | "lookaside-lease-meta") {
            let refused = &report.metrics["lookaside.fills_refused"];
            assert!(
                refused.min >= 1.0 && refused.max <= 2.0,
                "{scenario}: {refused:?}"
            );
        }
        // A read queries the database at most once (a miss, or a hot miss), and once more
        // when the cache's reply to its fill was lost: two readers reading three times
        // each, at most two faults.
        let db_reads = &report.metrics["lookaside.db_reads"];
        assert!(
            db_reads.min >= 1.0 && db_reads.max <= 8.0,
            "{scenario}: {db_reads:?}"
        );
    }
}

/// The lease does not survive the row's server leaving the clients' list and rejoining
/// with what it held: the writer's deletes went where the key moved, and the old version
/// comes back with the server (a crash that restarts it empty passes, above).
#[test]
fn a_server_that_rejoins_with_its_items_brings_the_old_version_back_despite_the_lease() {
    let (_, report) = run("lookaside-lease-cas-node-leave");
    let v = violation(&report);
    assert_eq!(v.invariant, "lookaside.fresh_after_write");
    assert_eq!(v.failure.numbers["got"], 0);
    assert!(
        v.faults
            .iter()
            .any(|(_, f)| matches!(f, Fault::Leave { .. })),
        "{}",
        v.cause()
    );
}
