//! Shrinking: counterexamples come out minimal and still replay.

mod support;

use mcsim::explore::Schedule;
use mcsim::run;
use support::run as run_scenario;

fn shrunk(name: &str) -> (mcsim::scenario::Scenario, run::Finding) {
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
        "lock-add-reply-lost",
    ] {
        let (s, f) = shrunk(name);
        let small = s.with_clients(f.clients).unwrap();
        let text = f.execution.schedule.to_string();
        let again = run::replay(&small, &Schedule::parse(&text).unwrap());
        assert_eq!(again.verdict, f.execution.verdict, "{name}");
        assert_eq!(again.trace.render(), f.execution.trace.render(), "{name}");
    }
}

/// A lock whose holder lost the reply to its `add` is stuck until the time budget runs
/// out: the counterexample is the lost reply, not the 2,000 retries after it. Before
/// the choices a replay makes by itself were cut, its replay line held hundreds of late
/// retries (running them at once fitted more retries into the budget, which was kept
/// down as if it were the counterexample's length).
#[test]
fn a_stuck_lock_shrinks_to_the_reply_it_lost() {
    let (s, f) = shrunk("lock-add-reply-lost");
    assert_eq!(f.execution.verdict.label(), "stuck");
    assert_eq!(f.clients, 1);
    let choices = &f.execution.schedule.choices;
    assert_eq!(choices.len(), 1, "{}", f.execution.schedule);
    assert_eq!(f.execution.schedule.faults(), 1);
    let size = mcsim::shrink::size(&s.with_clients(f.clients).unwrap(), &f.execution);
    assert_eq!((size.steps, size.late, size.preemptions), (1, 0, 0));
    assert!(
        f.execution.calls > 2000,
        "the run still goes on to its budget"
    );
}

#[test]
fn shrinking_keeps_the_fault_that_matters() {
    let (_, f) = shrunk("counter-incr-add-reply-lost");
    assert_eq!(f.execution.verdict.label(), "counter.no_extra_increments");
    assert_eq!(f.execution.schedule.faults(), 1);
    assert_eq!(f.clients, 1, "one client and one lost reply suffice");
}

/// Shrinking never returns something larger than it was given on any measure it keeps
/// down (a late call may give way to a preemption), for every failure of the suite (the
/// visitor counterexample of 130 steps once came back with 139 and one client fewer).
#[test]
fn a_shrunk_counterexample_is_never_larger_on_any_measure() {
    for path in support::all_scenarios() {
        let s = mcsim::scenario::Scenario::load(&path, mcsim_models::RECIPES).unwrap();
        if s.expect == "pass" {
            continue;
        }
        let report = run::run(&s, &run::RunOptions::from_scenario(&s));
        let Some(f) = report.first_failure else {
            continue;
        };
        let Some(before) = f.original else { continue };
        let after = mcsim::shrink::size(&s.with_clients(f.clients).unwrap(), &f.execution);
        let pairs = [
            ("clients", after.clients as u64, before.clients as u64),
            ("steps", after.steps as u64, before.steps as u64),
            ("calls", after.calls, before.calls),
            (
                "preemptions and late calls",
                (after.preemptions + after.late) as u64,
                (before.preemptions + before.late) as u64,
            ),
            ("faults", after.faults as u64, before.faults as u64),
        ];
        for (what, a, b) in pairs {
            assert!(
                a <= b,
                "{}: {what} grew from {b} to {a} ({before} -> {after})",
                s.name
            );
        }
        assert_eq!(f.execution.verdict.label(), s.expect, "{}", s.name);
    }
}

#[test]
fn shrinking_costs_little_beside_finding() {
    // One execution of 168 calls found it; shrinking stays within its step budget.
    let (_, f) = shrunk("eventlog-as-written");
    let before = f.original.expect("shrunk");
    assert!(f.execution.steps <= before.steps as u64);
    assert_eq!(run::shrink_budget(before.steps as u64), 100_000);
}

#[test]
fn a_one_client_shrink_stopped_at_its_budget_says_so() {
    // One client: no fewer-clients phase; the 856-step counterexample exhausts its
    // half of the budget.
    let s = support::load("eventlog-as-written-large")
        .with_clients(1)
        .unwrap();
    let report = run::run(&s, &run::RunOptions::from_scenario(&s));
    let f = report.first_failure.expect("a failure");
    assert!(f.cut_short, "{:?}", f.original);
}

#[test]
fn a_size_counts_preemptions_not_switches_a_sleep_forces() {
    // cache-naive breaks by timing alone: its clients sleep between calls, so the
    // counterexample switches clients often and never preempts one that could run on.
    let (s, f) = shrunk("cache-naive");
    let after = mcsim::shrink::size(&s.with_clients(f.clients).unwrap(), &f.execution);
    let runs: Vec<usize> = f
        .execution
        .schedule
        .choices
        .iter()
        .filter_map(|c| match c {
            mcsim::explore::Choice::Run { client, .. } => Some(*client),
            mcsim::explore::Choice::Fault(_) => None,
        })
        .collect();
    let switches = runs.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(switches > 10, "{switches} switches");
    assert_eq!(after.preemptions, 0, "{after}");
}

#[test]
fn a_finding_shrunk_to_one_client_reports_no_preemption() {
    // Its size is measured on the scenario it was shrunk to: one client cannot be
    // preempted (measured on the three-client scenario, its schedule would replay as
    // another execution).
    let (s, f) = shrunk("counter-incr-add-evict");
    assert_eq!(f.clients, 1);
    let size = f.size(&s);
    assert_eq!((size.clients, size.preemptions), (1, 0), "{size}");
}

/// The shrinker skips running a candidate schedule it can tell replays to the execution
/// it already has ([`mcsim::explore::replay::Offered::leads_to`]). Checked against real
/// replays: every candidate said to lead there does, choice for choice and verdict for
/// verdict, over single choices dropped, pairs dropped and delays zeroed in the found and
/// the shrunk counterexamples of scenarios broken by interleaving, timing and faults.
#[test]
fn a_candidate_said_to_replay_to_the_execution_does() {
    use mcsim::exec::{ExecConfig, execute};
    use mcsim::explore::{Choice, Replay};

    let replay = |s: &mcsim::scenario::Scenario, schedule: Schedule, lenient: bool| {
        let config = ExecConfig {
            trace: false,
            ..s.config.clone()
        };
        let mut r = if lenient {
            Replay::lenient(schedule)
        } else {
            Replay::new(schedule)
        };
        let e = execute(&config, &*s.setup, &mut r, 0);
        (e, r)
    };
    let (mut said, mut not_said) = (0, 0);
    for name in [
        "counter-get-set",
        "lock-add-evict",
        "lock-add-holder-pause",
        "cache-naive",
        "visitor-as-written",
        "counter-incr-add-reply-lost",
        "eventlog-as-written",
    ] {
        let (s, f) = shrunk(name);
        let small = s.with_clients(f.clients).unwrap();
        let mut cases = vec![(small, f.execution.schedule.clone())];
        if let Some(seed) = f.seed {
            cases.push((s.clone(), run::run_seed(&s, s.strategy, seed).schedule));
        }
        for (scenario, schedule) in cases {
            let (e, r) = replay(&scenario, schedule, false);
            let executed = &e.schedule.choices;
            let n = executed.len();
            let mut candidates: Vec<Vec<Choice>> = Vec::new();
            for i in 0..n {
                let mut c = executed.clone();
                c.remove(i);
                candidates.push(c);
                let mut c = executed.clone();
                c.drain(i..(i + 2).min(n));
                candidates.push(c);
                if let Choice::Run { client, delay } = executed[i]
                    && delay > 0
                {
                    let mut c = executed.clone();
                    c[i] = Choice::Run { client, delay: 0 };
                    candidates.push(c);
                }
            }
            for candidate in candidates {
                let predicted = r.offered().leads_to(&candidate, executed);
                let schedule = Schedule {
                    phase: e.schedule.phase,
                    choices: candidate,
                };
                let (again, _) = replay(&scenario, schedule, true);
                let same = again.schedule.choices == *executed;
                if predicted {
                    said += 1;
                    assert!(same, "{name}: said to lead to the execution, did not");
                    assert_eq!(again.verdict, e.verdict, "{name}");
                    assert_eq!(again.steps, e.steps, "{name}");
                } else if !same {
                    not_said += 1;
                }
            }
        }
    }
    // Neither answer is vacuous.
    assert!(
        said > 100,
        "{said} candidates said to lead to their execution"
    );
    assert!(not_said > 100, "{not_said} led elsewhere");
}
