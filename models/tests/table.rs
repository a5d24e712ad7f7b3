//! The table (DS `MCTable`): consistent at quiescence without faults, inconsistent at an
//! instant between the two writes of `add`, and broken by evicting a marker (false
//! negative), the list (members silently dropped) or the lock under a stalled writer.

mod support;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use mcsim::{ExecConfig, Fault, Random, Sim, execute};
use mcsim_models::table::{Table, decode_list, encode_list};
use support::{run, violation};

#[test]
fn consistent_at_quiescence_without_faults() {
    let (_, report) = run("table-as-written");
    assert!(
        report.first_failure.is_none(),
        "{:?}",
        report.first_failure.map(|f| f.execution.verdict)
    );
    // Three writers add two members each and delete one.
    assert_eq!(report.metrics["table.members"].min, 3.0);
    assert_eq!(report.metrics["table.false_negatives"].max, 0.0);
    assert_eq!(report.metrics["table.false_positives"].max, 0.0);
}

#[test]
fn a_reader_sees_has_true_and_a_list_without_the_member_between_the_two_writes() {
    let (_, report) = run("table-as-written-instant");
    let v = violation(&report);
    assert_eq!(v.invariant, "table.instant_consistent");
    assert!(v.failure.numbers["observations"] >= 1);
    assert!(v.faults.is_empty(), "{}", v.cause());
    // ... while at quiescence everything agreed.
    assert_eq!(report.metrics["table.lost"].max, 0.0);
    assert_eq!(report.metrics["table.false_negatives"].max, 0.0);
    assert_eq!(report.metrics["table.false_positives"].max, 0.0);
}

#[test]
fn an_evicted_marker_is_a_false_negative() {
    let (_, report) = run("table-as-written-evict-marker");
    let v = violation(&report);
    assert_eq!(v.invariant, "table.consistent");
    assert_eq!(v.failure.numbers["false_negatives"], 1);
    assert_eq!(v.failure.numbers["false_positives"], 0);
    assert!(
        matches!(v.faults.as_slice(), [(_, Fault::Evict { key, .. })] if key.starts_with("table_t_v_")),
        "{}",
        v.cause()
    );
}

#[test]
fn an_evicted_list_is_rebuilt_from_empty_and_members_drop_out() {
    let (_, report) = run("table-as-written-evict-list");
    let v = violation(&report);
    assert_eq!(v.invariant, "table.no_lost_members");
    let n = &v.failure.numbers;
    assert!(
        n["lost"] >= 1 && n["lost"] <= n["expected"],
        "{}",
        v.failure.message
    );
    assert!(
        matches!(v.faults.as_slice(), [(_, Fault::Evict { key, .. })] if key == "table_t_keys"),
        "{}",
        v.cause()
    );
}

#[test]
fn a_stalled_writer_whose_lock_expired_drops_the_next_writers_member() {
    let (_, report) = run("table-as-written-expire");
    let v = violation(&report);
    assert_eq!(v.invariant, "table.no_lost_members");
    assert_eq!(v.failure.numbers["lost"], 1);
    assert!(v.faults.is_empty(), "{}", v.cause());
}

#[test]
fn fetch_on_a_missing_list_returns_nothing_at_all() {
    let got: Rc<RefCell<Vec<String>>> = Rc::default();
    let g = got.clone();
    let setup = move |sim: &mut Sim| {
        let g = g.clone();
        sim.client(Default::default(), move |mc| async move {
            let t = Table::new("t", 5, Duration::from_millis(1), 0);
            let mut out = Vec::new();
            out.push(format!("{:?}", t.fetch(&mc).await?));
            out.push(format!("{}", t.has(&mc, "a").await?));
            t.add(&mc, "a", Duration::ZERO).await?;
            out.push(format!("{:?}", t.fetch(&mc).await?));
            out.push(format!("{}", t.has(&mc, "a").await?));
            t.delete(&mc, "a", Duration::ZERO).await?;
            out.push(format!("{:?}", t.fetch(&mc).await?));
            out.push(format!("{}", t.has(&mc, "a").await?));
            let refused = t.add(&mc, "a b", Duration::ZERO).await.is_err();
            out.push(format!("{refused:?}"));
            *g.borrow_mut() = out;
            Ok(())
        });
    };
    let e = execute(&ExecConfig::default(), &setup, &mut Random::new(0), 0);
    assert!(e.verdict.is_pass(), "{}", e.verdict);
    assert_eq!(
        *got.borrow(),
        [
            "None",
            "false",
            "Some([\"a\"])",
            "true",
            "Some([])",
            "false",
            "true"
        ]
    );
}

#[test]
fn the_member_list_round_trips() {
    let l: Vec<String> = ["u0_0", "u1_1"].map(String::from).to_vec();
    assert_eq!(decode_list(&encode_list(&l).data), l);
    assert!(decode_list(b"").is_empty());
}
