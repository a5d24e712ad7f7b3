//! Shrinking: counterexamples come out minimal and still replay.

mod support;

use mcsim::explore::Schedule;
use mcsim::run;
use support::run as run_scenario;

fn shrunk(name: &str) -> (mcsim::scenario::Scenario, run::Failure) {
    let (s, report) = run_scenario(name);
    (s, report.first_failure.expect("a failure"))
}

#[test]
fn an_evicted_lock_shrinks_to_two_clients_and_three_steps() {
    let (s, f) = shrunk("lock-add-evict");
    let before = f.original.expect("shrunk");
    let after = mcsim::shrink::size(&s.with_clients(f.clients).unwrap(), &f.execution);
    assert_eq!(f.clients, 2);
    assert_eq!((after.faults, after.steps, after.calls), (1, 3, 2));
    assert!(after < before, "{before} -> {after}");
    assert_eq!(f.execution.verdict.label(), "lock.exclusion");
}

#[test]
fn a_lost_increment_shrinks_to_two_clients_and_four_calls() {
    let (_, f) = shrunk("counter-get-set");
    assert_eq!(f.clients, 2);
    assert_eq!(f.execution.calls, 4);
    assert_eq!(f.execution.schedule.faults(), 0);
}

#[test]
fn a_shrunk_schedule_replays_like_any_other() {
    for name in [
        "lock-add-evict",
        "counter-get-set",
        "counter-incr-add-reply-lost",
        "lock-get-set",
    ] {
        let (s, f) = shrunk(name);
        let small = s.with_clients(f.clients).unwrap();
        let text = f.execution.schedule.to_string();
        let again = run::replay(&small, &Schedule::parse(&text).unwrap());
        assert_eq!(again.verdict, f.execution.verdict, "{name}");
        assert_eq!(again.trace.render(), f.execution.trace.render(), "{name}");
    }
}

#[test]
fn shrinking_keeps_the_fault_that_matters() {
    let (_, f) = shrunk("counter-incr-add-reply-lost");
    assert_eq!(f.execution.verdict.label(), "counter.no_extra_increments");
    assert_eq!(f.execution.schedule.faults(), 1);
    assert_eq!(f.clients, 1, "one client and one lost reply suffice");
}
