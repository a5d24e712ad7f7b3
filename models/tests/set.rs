//! The set with append and CAS compaction (SET): the encoding and its algebra, the race
//! that loses a modification as written, the retry that fixes it, and the compaction that
//! needs `cas`.

mod support;

use std::collections::BTreeSet;

use mcsim::Fault;
use mcsim_models::set::encoding::{
    CodecError, Sign, compact, decode, encode, escape, replay, unescape,
};
use quickcheck::{QuickCheck, TestResult};
use support::{run, violation};

#[test]
fn as_written_loses_a_modification_when_two_clients_create_the_index() {
    let (_, report) = run("set-as-written");
    let v = violation(&report);
    assert_eq!(v.invariant, "set.linearizable");
    assert!(
        v.failure.numbers["creation_races"] >= 1,
        "{}",
        v.failure.message
    );
    assert!(v.faults.is_empty(), "{}", v.cause());
    // By how much: the adds the recipe returned as done that never reached the index.
    let dropped = report.metrics["set.dropped"].max;
    assert!(dropped >= 1.0);
    // Each dropped add lost the race to create the index.
    assert!(
        dropped <= report.metrics["set.creation_races"].max,
        "{dropped}"
    );
    assert_eq!(report.metrics["set.phantoms"].max, 0.0);
}

#[test]
fn retry_is_linearizable_and_its_compactions_are_safe() {
    let (_, report) = run("set-retry");
    assert!(
        report.first_failure.is_none(),
        "{:?}",
        report.first_failure.map(|f| f.execution.verdict)
    );
    assert!(report.metrics["set.compactions"].min >= 1.0);
    assert!(
        report.metrics["set.creation_races"].max >= 1.0,
        "the race happened and was retried"
    );
    assert!(
        report.metrics["set.compactions_refused"].max >= 1.0,
        "cas refused some compactions"
    );
    assert_eq!(report.metrics["set.erased_by_compaction"].max, 0.0);
    assert_eq!(report.metrics["set.dropped"].max, 0.0, "every race retried");
}

#[test]
fn retry_survives_lost_replies() {
    let (_, report) = run("set-retry-reply-lost");
    assert!(
        report.first_failure.is_none(),
        "{:?}",
        report.first_failure.map(|f| f.execution.verdict)
    );
    assert_eq!(report.metrics["set.lost"].max, 0.0);
}

#[test]
fn compaction_by_plain_set_erases_concurrent_modifications() {
    let (_, report) = run("set-compact-set");
    let v = violation(&report);
    assert_eq!(v.invariant, "set.compaction_safe");
    assert!(v.failure.numbers["erased"] >= 1);
    assert!(
        v.faults
            .iter()
            .all(|(_, f)| !matches!(f, Fault::Evict { .. }))
    );
}

#[test]
fn the_articles_example_decodes() {
    let d = decode(b"+a +b +c -b -x ").unwrap();
    assert_eq!(d.members, ["a", "c"].map(String::from).into());
    assert_eq!(d.dirtiness, 2);
    assert_eq!(encode(Sign::Add, &["a", "b", "c"]).unwrap(), "+a +b +c ");
}

#[test]
fn members_with_spaces_or_signs_are_escaped_not_injected() {
    // Written naively, adding "a -b" would remove b.
    let naive = decode(b"+b +a -b ").unwrap();
    assert!(!naive.members.contains("b"));
    // Escaped, it is one member.
    let enc = encode(Sign::Add, &["b", "a -b"]).unwrap();
    assert_eq!(enc, "+b +a%20-b ");
    let d = decode(enc.as_bytes()).unwrap();
    assert_eq!(d.members, ["a -b", "b"].map(String::from).into());
    assert_eq!(d.dirtiness, 0);
    // A leading sign, a percent sign, tabs and newlines.
    assert_eq!(escape("-x"), "%2Dx");
    assert_eq!(escape("+x-y"), "%2Bx-y");
    assert_eq!(escape("50%\t\n"), "50%25%09%0A");
    for m in ["-x", "+", "%", "a\tb", "é ü", "x-"] {
        let enc = encode(Sign::Remove, &[m]).unwrap();
        assert_eq!(enc.matches(' ').count(), 1, "{enc:?}");
        assert_eq!(unescape(&escape(m)).unwrap(), m);
    }
}

#[test]
fn bad_input_is_rejected() {
    assert_eq!(encode(Sign::Add, &[""]), Err(CodecError::EmptyMember));
    assert_eq!(decode(b"+a x "), Err(CodecError::UnknownOp("x".into())));
    assert_eq!(decode(b"+a%2"), Err(CodecError::BadEscape("a%2".into())));
    assert_eq!(decode(b"+%zz "), Err(CodecError::BadEscape("%zz".into())));
    assert_eq!(decode(b"+ "), Err(CodecError::EmptyMember));
    assert_eq!(decode(b"").unwrap().members, BTreeSet::new());
}

fn member(s: String) -> String {
    if s.is_empty() { "_".into() } else { s }
}

fn ops_of(ops: Vec<(bool, String)>) -> Vec<(Sign, String)> {
    ops.into_iter()
        .map(|(add, m)| (if add { Sign::Add } else { Sign::Remove }, member(m)))
        .collect()
}

fn log_of(ops: &[(Sign, String)]) -> String {
    ops.iter().map(|(s, m)| encode(*s, &[m]).unwrap()).collect()
}

fn qc() -> QuickCheck {
    QuickCheck::new().tests(300)
}

#[test]
fn decoding_the_appended_log_replays_to_the_same_set() {
    fn prop(ops: Vec<(bool, String)>) -> bool {
        let ops = ops_of(ops);
        let d = decode(log_of(&ops).as_bytes()).unwrap();
        let removes = ops.iter().filter(|(s, _)| *s == Sign::Remove).count();
        d.members == replay(ops.iter().map(|(s, m)| (*s, m.as_str()))) && d.dirtiness == removes
    }
    qc().quickcheck(prop as fn(Vec<(bool, String)>) -> bool);
}

#[test]
fn compaction_preserves_membership_and_later_modifications() {
    fn prop(before: Vec<(bool, String)>, after: Vec<(bool, String)>) -> TestResult {
        let (before, after) = (ops_of(before), ops_of(after));
        let d = decode(log_of(&before).as_bytes()).unwrap();
        let compacted = compact(&d.members);
        let c = decode(compacted.as_bytes()).unwrap();
        if c.members != d.members || c.dirtiness != 0 {
            return TestResult::failed();
        }
        // Appending to the compacted form is the same as appending to the original.
        let all = before.iter().chain(&after).map(|(s, m)| (*s, m.as_str()));
        let resumed = decode((compacted + &log_of(&after)).as_bytes()).unwrap();
        TestResult::from_bool(resumed.members == replay(all))
    }
    qc().quickcheck(prop as fn(Vec<(bool, String)>, Vec<(bool, String)>) -> TestResult);
}

#[test]
fn escaping_round_trips_and_never_yields_a_separator_or_a_sign() {
    fn prop(m: String) -> TestResult {
        if m.is_empty() {
            return TestResult::discard();
        }
        let e = escape(&m);
        TestResult::from_bool(
            unescape(&e).as_deref() == Ok(m.as_str())
                && !e.bytes().any(|b| b <= b' ' || b == 0x7f)
                && !e.starts_with(['+', '-']),
        )
    }
    qc().quickcheck(prop as fn(String) -> TestResult);
}

#[test]
fn as_written_codec_corrupts_a_set_whose_members_hold_spaces_or_signs() {
    let (_, report) = run("set-as-written-encoding");
    let f = report.first_failure.as_ref().expect("a failure");
    let v = violation(&report);
    assert_eq!(v.invariant, "set.linearizable");
    // Not the creation race: one client alone reads back another set than it built.
    assert_eq!(
        v.failure.numbers["creation_races"], 0,
        "{}",
        v.failure.message
    );
    assert_eq!(f.clients, 1, "shrunk to one client");
    assert!(v.faults.is_empty(), "{}", v.cause());
    // By how much: readers were shown members nobody added (`m0` of `m0 -m0_0x`).
    assert!(report.metrics["set.phantoms"].max >= 1.0);
}

#[test]
fn escaped_codec_with_retry_keeps_the_same_hostile_members() {
    let (_, report) = run("set-retry-encoding");
    assert!(
        report.first_failure.is_none(),
        "{:?}",
        report.first_failure.map(|f| f.execution.verdict)
    );
    assert!(
        support::metric(&report, "set.bytes").max > 300.0,
        "long members were stored"
    );
    assert_eq!(report.metrics["set.phantoms"].max, 0.0);
    assert_eq!(report.metrics["set.dropped"].max, 0.0);
}
