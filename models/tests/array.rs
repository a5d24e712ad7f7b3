//! The read-mostly array (DS `MCArray1`): the lock variant loses an update when its lock
//! expires or is evicted while held, a retried change lands twice after a lost reply, and
//! both variants are exact without faults. The checkers are tested on histories by hand.

mod support;

use mcsim::Fault;
use mcsim::history::Entry;
use mcsim::lin;
use mcsim_models::array::{ArrayOp, ArraySpec, apply, decode, encode};
use support::{assert_passes, run, violation};

#[test]
fn lock_variant_is_exact_without_faults() {
    let report = assert_passes("array-lock");
    // Three writers: +c.0, then +c.1 -c.0: one element each at the end.
    assert_eq!(report.metrics["array.elements"].min, 3.0);
    assert_eq!(report.metrics["array.elements"].max, 3.0);
    assert_eq!(report.metrics["array.lost"].max, 0.0);
    assert_eq!(report.metrics["array.duplicated"].max, 0.0);
}

#[test]
fn cas_variant_is_exact_without_faults() {
    let report = assert_passes("array-cas");
    assert_eq!(report.metrics["array.elements"].min, 3.0);
    assert_eq!(report.metrics["array.lost"].max, 0.0);
}

#[test]
fn lock_variant_loses_an_update_when_the_lock_expires_under_a_slow_writer() {
    let (_, report) = run("array-lock-expire");
    let v = violation(&report);
    assert_eq!(v.invariant, "array.no_lost_updates");
    assert_eq!(v.failure.numbers["lost"], 1, "{}", v.failure.message);
    assert_eq!(v.failure.numbers["duplicated"], 0);
    assert!(
        v.faults.is_empty(),
        "the stall alone does it: {}",
        v.cause()
    );
    // The stalled change took longer than the 5 s lock timeout.
    assert!(report.metrics["array.longest_change_ms"].max > 5000.0);
}

#[test]
fn lock_variant_loses_an_update_when_the_lock_key_is_evicted_while_held() {
    let (_, report) = run("array-lock-evict");
    let v = violation(&report);
    assert_eq!(v.invariant, "array.no_lost_updates");
    let lost = v.failure.numbers["lost"] + v.failure.numbers["resurrected"];
    assert!(lost >= 1, "{}", v.failure.message);
    assert!(
        matches!(v.faults.as_slice(), [(_, Fault::Evict { key, .. })] if key == "lock_a"),
        "{}",
        v.cause()
    );
}

#[test]
fn a_change_retried_after_a_lost_reply_lands_twice() {
    let (_, report) = run("array-lock-reply-lost");
    let v = violation(&report);
    assert_eq!(v.invariant, "array.no_lost_updates");
    assert_eq!(v.failure.numbers["duplicated"], 1, "{}", v.failure.message);
    assert_eq!(v.failure.numbers["lost"], 0);
    assert!(
        matches!(v.faults.as_slice(), [(_, Fault::ReplyLost { .. })]),
        "{}",
        v.cause()
    );
}

#[test]
fn encoding_round_trips_and_change_filters_then_appends() {
    let a: Vec<String> = ["x", "y", "z"].map(String::from).to_vec();
    assert_eq!(decode(&encode(&a).data), a);
    assert_eq!(decode(b""), Vec::<String>::new());
    let changed = apply(a, &["w".into()], &["y".into()]);
    assert_eq!(changed, ["x", "z", "w"].map(String::from).to_vec());
}

fn e(
    client: usize,
    op: ArrayOp,
    ret: Option<Option<Vec<String>>>,
    call: u64,
    returned: u64,
) -> Entry<ArrayOp, Option<Vec<String>>> {
    Entry {
        client,
        object: "array".into(),
        op,
        ret,
        call,
        returned,
    }
}

fn change(add: &str) -> ArrayOp {
    ArrayOp::Change {
        add: vec![add.into()],
        delete: Vec::new(),
    }
}

fn items(v: &[&str]) -> Option<Option<Vec<String>>> {
    Some(Some(v.iter().map(|s| s.to_string()).collect()))
}

#[test]
fn the_array_checker_rejects_an_overwritten_change_and_accepts_either_order() {
    // Two concurrent changes: a final state with both, in either order, is fine.
    let both = |fin: &[&str]| {
        vec![
            e(0, change("a"), Some(None), 1, 4),
            e(1, change("b"), Some(None), 2, 3),
            e(9, ArrayOp::Fetch, items(fin), 5, 6),
        ]
    };
    assert!(lin::check(&ArraySpec, &both(&["a", "b"])).is_ok());
    assert!(lin::check(&ArraySpec, &both(&["b", "a"])).is_ok());
    // One of them overwritten: no order explains it.
    assert!(lin::check(&ArraySpec, &both(&["a"])).is_err());
    // Applied twice: neither.
    assert!(lin::check(&ArraySpec, &both(&["a", "b", "a"])).is_err());
    // A change whose outcome stayed unknown may be missing.
    let unknown = vec![
        e(0, change("a"), None, 1, u64::MAX),
        e(9, ArrayOp::Fetch, items(&[]), 5, 6),
    ];
    assert!(lin::check(&ArraySpec, &unknown).is_ok());
}

#[test]
fn the_snapshot_checker_rejects_a_fetch_of_a_state_no_prefix_produced() {
    let h = vec![
        e(0, change("a"), Some(None), 1, 2),
        e(0, change("b"), Some(None), 3, 4),
        // After both completed, a reader sees only b: not a prefix of a, b.
        e(1, ArrayOp::Fetch, items(&["b"]), 5, 6),
    ];
    assert!(lin::check(&ArraySpec, &h).is_err());
    let ok = vec![
        e(0, change("a"), Some(None), 1, 2),
        e(1, ArrayOp::Fetch, items(&["a"]), 3, 6),
        e(0, change("b"), Some(None), 4, 5),
    ];
    assert!(lin::check(&ArraySpec, &ok).is_ok());
}

#[test]
fn the_lock_lives_between_four_and_five_seconds_depending_on_the_second_it_was_taken() {
    let points = mcsim::scenario::load_points(
        &support::scenario_path("array-lock-expire-sweep"),
        mcsim_models::RECIPES,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let lost = |slow: u64, start: u64| {
        let s = points
            .iter()
            .find(|s| s.point == [format!("slow_ms={slow}"), format!("start_ms={start}")])
            .unwrap_or_else(|| {
                panic!(
                    "no point {slow}/{start}: {:?}",
                    points.iter().map(|p| &p.point).collect::<Vec<_>>()
                )
            });
        // Where in a second the lock was taken is counted from whole seconds: phase 0.
        let s = &support::at_phase_zero(s);
        let mut o = mcsim::run::RunOptions::from_scenario(s);
        o.shrink = false;
        mcsim::run::run(s, &o).metrics["array.lost"].max
    };
    // Taken right after a tick, the 5 s lock outlives a 4.6 s stall ...
    assert_eq!(lost(4600, 0), 0.0);
    // ... taken 0.9 s into a second it is gone after 4.1 s.
    assert_eq!(lost(4200, 900), 1.0);
    assert_eq!(lost(3900, 900), 0.0);
    assert_eq!(lost(5200, 0), 1.0);
}
