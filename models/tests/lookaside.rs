//! The look-aside cache: filled with `set` or `add`, a fill that lands after the writer's
//! delete keeps an old version cached, and a read after every write serves it; with a
//! lease (add+cas, or mg N and ms C) the late fill is refused, under evictions and lost
//! replies too.

mod support;

use support::{run, violation};

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

/// The leases, with the parameters under which `set` and `add` store the old version:
/// every read begun after the last write serves it, with and without evictions of the
/// placeholder and lost replies.
#[test]
fn a_lease_refuses_the_late_fill_under_evictions_and_lost_replies() {
    for scenario in [
        "lookaside-lease-cas",
        "lookaside-lease-meta",
        "lookaside-lease-cas-evict",
        "lookaside-lease-meta-reply-lost",
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
        // The stale set's window was there to close: the writer's delete met a reader
        // between its database read and its fill in some runs (more database reads
        // than readers' misses alone would make).
        assert!(
            report.metrics["lookaside.db_reads"].max >= 2.0,
            "{scenario}"
        );
    }
}
