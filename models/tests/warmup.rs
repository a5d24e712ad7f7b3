//! Cold cluster warmup: a cold cluster invalidated with a plain delete copies an old
//! version from the warm one and keeps it; a delete with a hold-off keeps none while the
//! warm cluster's invalidation comes within the hold-off, and keeps one when it comes
//! later.

mod support;

use std::path::Path;

use mcsim::scenario::Scenario;
use mcsim_models::RECIPES;
use support::{load, metric, quick, refused, run, violation};

/// A reader misses in the cold cluster after the write's delete reached it, finds the old
/// version in the warm cluster (its delete still on its way), and adds it to the cold
/// cluster, where the read after every write finds it.
#[test]
fn a_plain_delete_lets_a_reader_copy_the_old_version_into_the_cold_cluster() {
    let (_, report) = run("warmup-as-written");
    let v = violation(&report);
    assert_eq!(v.invariant, "warmup.fresh_after_write");
    assert!(
        v.failure.numbers["got"] < v.failure.numbers["latest"],
        "{:?}",
        v.failure.numbers
    );
    assert!(
        v.failure.message.contains("from the cold cluster"),
        "{}",
        v.failure.message
    );
    assert!(v.faults.is_empty(), "{}", v.cause());
    // The writer, the warm cluster's reader and one reader of the cold cluster.
    assert_eq!(report.first_failure.expect("a failure").clients, 3);
}

/// Past the violation, every run counts its stale reads: at most the two readers' last
/// reads, each one or two versions behind.
#[test]
fn every_broken_run_measures_how_stale() {
    let mut s = load("warmup-as-written");
    s.config.past_violation = true;
    let report = quick(&s, 200, true);
    let stale = metric(&report, "warmup.stale_reads");
    assert!(stale.max >= 1.0 && stale.max <= 2.0, "{stale:?}");
    // The copy is the version the warm cluster held while the last write's delete was on
    // its way: one behind.
    let behind = metric(&report, "warmup.versions_behind");
    assert_eq!(behind.max, 1.0, "{behind:?}");
    // The old versions came from the warm cluster.
    assert!(metric(&report, "warmup.from_warm").max >= 1.0);
}

/// With the hold-off, a reader that copies the old version meets the tombstone: its add
/// is refused and it reads the database. Nothing stale stays while the warm cluster's
/// delete comes within the hold-off.
#[test]
fn a_hold_off_keeps_no_old_version_while_the_delete_stream_keeps_up() {
    let (_, report) = run("warmup-hold-off");
    assert!(report.first_failure.is_none(), "{:?}", report.first_failure);
    assert_eq!(metric(&report, "warmup.stale_reads").max, 0.0);
    // One reader of the cold cluster, 21 reads: most of those within a hold-off are
    // refused, and the warm cluster serves only the first fill after the start and after
    // each hold-off.
    let refused = metric(&report, "warmup.fills_refused");
    assert!(refused.min >= 5.0 && refused.max <= 21.0, "{refused:?}");
    let from_warm = metric(&report, "warmup.from_warm");
    assert!(
        from_warm.min >= 1.0 && from_warm.max <= 4.0,
        "{from_warm:?}"
    );
}

/// A delete stream slower than the hold-off: the tombstone is gone before the warm
/// cluster's copy, and a reader copies it.
#[test]
fn a_hold_off_shorter_than_the_delete_streams_lag_keeps_the_old_version() {
    let (_, report) = run("warmup-hold-off-late");
    let v = violation(&report);
    assert_eq!(v.invariant, "warmup.fresh_after_write");
    assert!(v.faults.is_empty(), "{}", v.cause());
}

/// The family runs on two servers and needs a reader: anything else is a clear error
/// naming the field.
#[test]
fn a_scenario_without_two_servers_or_a_reader_is_refused() {
    let text = std::fs::read_to_string(support::scenario_path("warmup-hold-off")).unwrap();
    let one = text.replace("count = 2", "count = 1");
    let e = refused(Scenario::parse(Path::new("one-server.toml"), &one, RECIPES));
    assert!(e.contains("servers") && e.contains("2 servers"), "{e}");
    let alone = text.replace("clients = 3", "clients = 2");
    let e = refused(Scenario::parse(Path::new("alone.toml"), &alone, RECIPES));
    assert!(e.contains("clients") && e.contains("reader"), "{e}");
}

/// The shrunk counterexample replays from its schedule to the same verdict and trace.
#[test]
fn the_shrunk_counterexample_replays() {
    support::assert_shrunk_counterexample_replays("warmup-as-written");
}
