//! The append-mostly array (DS `MCArray2`): as written it never stores anything; the fixed
//! recipe loses nothing (an append retried after a lost reply lands twice) and spins for
//! ever at the item size limit.

mod support;

use mcsim::Verdict;
use mcsim::run::{self, RunOptions};
use mcsim_models::array2::{decode_ints, encode_int};
use support::{load, run, violation};

#[test]
fn as_written_drops_every_element_and_never_creates_the_key() {
    let (_, report) = run("array2-as-written");
    let v = violation(&report);
    assert_eq!(v.invariant, "array.no_lost_elements");
    let n = &v.failure.numbers;
    assert!(n["completed"] >= 1);
    // Seen by the clients themselves: a fetch after their appends finds none of them.
    assert_eq!(n["lost"], n["completed"], "{}", v.failure.message);
    assert_eq!(n["fetched"], 0, "{}", v.failure.message);
    assert!(v.faults.is_empty(), "{}", v.cause());
    // Every execution: all 9 appends reported done, none stored.
    assert_eq!(report.metrics["array2.lost"].min, 9.0);
}

#[test]
fn fixed_loses_nothing_when_clients_race_to_create_the_key() {
    let (_, report) = run("array2-fixed");
    assert!(
        report.first_failure.is_none(),
        "{:?}",
        report.first_failure.map(|f| f.execution.verdict)
    );
    assert_eq!(report.metrics["array2.elements"].min, 9.0);
    assert_eq!(report.metrics["array2.elements"].max, 9.0);
}

#[test]
fn fixed_duplicates_an_append_retried_after_its_reply_was_lost() {
    let (_, report) = run("array2-fixed-reply-lost");
    assert!(
        report.first_failure.is_none(),
        "{:?}",
        report.first_failure.map(|f| f.execution.verdict)
    );
    assert_eq!(report.metrics["array2.lost"].max, 0.0);
    assert_eq!(report.metrics["array2.duplicated"].max, 1.0);
    assert!(report.metrics["array2.duplicated"].mean() > 0.0);
}

#[test]
fn fixed_spins_for_ever_at_the_item_size_limit() {
    let s = load("array2-fixed-full");
    let options = RunOptions {
        shrink: false,
        expect: mcsim::scenario::Expectation::default(),
        ..RunOptions::from_scenario(&s)
    };
    let report = run::run(&s, &options);
    let failure = report.first_failure.expect("a livelock");
    match &failure.execution.verdict {
        Verdict::Livelock {
            waiting, repeated, ..
        } => {
            assert!(
                waiting.iter().any(|w| w.contains("array_log")),
                "{waiting:?}"
            );
            // Found as a spin, at the default step budget, long before it.
            assert!(*repeated >= 10_000, "{repeated}");
            assert!(
                failure.execution.steps < 20_000,
                "{}",
                failure.execution.steps
            );
        }
        other => panic!("expected a livelock, got {other}"),
    }
}

#[test]
fn ints_round_trip() {
    let data: String = [0, 7, 1_000_042].map(encode_int).concat();
    assert_eq!(data, "0 7 1000042 ");
    assert_eq!(decode_ints(data.as_bytes()), vec![0, 7, 1_000_042]);
    assert_eq!(decode_ints(b""), Vec::<u64>::new());
}

#[test]
fn a_client_without_retries_gives_up_the_append_and_duplicates_nothing() {
    let s = load("array2-fixed-reply-lost")
        .with_set(&["params.retries=0".into()])
        .unwrap();
    let report = support::quick(&s, 0, true);
    assert!(report.first_failure.is_none(), "{:?}", report.verdicts);
    // A timed-out append is not retried: it may still have landed, never twice.
    assert_eq!(report.metrics["array2.duplicated"].max, 0.0);
    assert!(report.metrics["array2.completed"].min < 9.0);
}

#[test]
fn a_client_retries_as_often_as_it_is_told() {
    // One client, one element, its first two requests lost: with two retries the third
    // attempt lands.
    let s = load("array2-fixed-reply-lost")
        .with_set(&[
            "clients=1".into(),
            "params.elements=1".into(),
            "params.retries=2".into(),
            "faults.reply_lost={ max = 0, probability = 0.0 }".into(),
            "faults.request_lost={ max = 2, probability = 1.0 }".into(),
        ])
        .unwrap();
    let report = support::quick(&s, 5, true);
    assert!(report.first_failure.is_none(), "{:?}", report.verdicts);
    assert_eq!(report.metrics["array2.completed"].min, 1.0);
    assert_eq!(report.metrics["array2.elements"].min, 1.0);
}
