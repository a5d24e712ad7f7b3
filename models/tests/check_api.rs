//! `mcsim::check`, the one-expression check a `#[test]` writes, on shipped families.

use std::panic::{AssertUnwindSafe, catch_unwind};

use mcsim::prelude::*;
use mcsim_models::counter::CounterVariant;
use mcsim_models::lock::LockVariant;

fn panic_text(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("the check must fail");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn a_fixed_recipe_passes_and_returns_its_figures() {
    let figures = check(CounterVariant::IncrAdd)
        .clients(3)
        .with(|p| p.increments = Count(3))
        .random(300);
    assert_eq!(figures.executions, 300);
    assert_eq!(figures.verdicts.get("pass"), Some(&300));
    assert_eq!(figures.metric("counter.lost").max, 0.0);
    assert_eq!(figures.metric("counter.completed").min, 9.0);
}

#[test]
fn a_broken_recipe_is_caught_when_expected() {
    let figures = check(LockVariant::GetSet)
        .clients(2)
        .expect("lock.exclusion")
        .random(500);
    let failure = figures.failure.expect("the violation found");
    assert_eq!(failure.execution.verdict.label(), "lock.exclusion");
}

#[test]
fn a_failing_check_panics_with_the_timeline_and_a_replay_line_that_replays() {
    let text = panic_text(|| {
        check(LockVariant::GetSet).clients(2).random(500);
    });
    assert!(text.contains("expected pass, got lock.exclusion"), "{text}");
    assert!(text.contains("timeline"), "{text}");
    let line = text
        .lines()
        .find(|l| l.contains("MCSIM_REPLAY="))
        .unwrap_or_else(|| panic!("no replay line in {text}"));
    let token = line
        .split("MCSIM_REPLAY=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap()
        .trim_matches('\'');
    assert!(token.starts_with("lock/get-set:"), "{token}");
    // The token ends with the trace hash it checks.
    let hash = token.rsplit_once('#').unwrap().1.to_string();
    let replayed = check(LockVariant::GetSet)
        .clients(2)
        .expect("lock.exclusion")
        .replay(token);
    let failure = replayed.failure.expect("the replay fails the same way");
    assert_eq!(format!("{:016x}", failure.execution.trace.hash()), hash);
    // The same token without the expectation fails the test again.
    let again = panic_text(|| {
        check(LockVariant::GetSet).clients(2).replay(token);
    });
    assert!(again.contains("got lock.exclusion"), "{again}");
    // A token whose hash is not its execution's fails loudly instead of showing another.
    let (body, _) = token.rsplit_once('#').unwrap();
    let wrong = format!("{body}#0123456789abcdef");
    let stale = panic_text(|| {
        check(LockVariant::GetSet)
            .clients(2)
            .expect("lock.exclusion")
            .replay(&wrong);
    });
    assert!(
        stale.contains(&format!("trace hash is {hash}, not the 0123456789abcdef")),
        "{stale}"
    );
    // The rerun command names the test's target.
    assert!(line.contains("--test check_api"), "{line}");
}

#[test]
fn an_expected_violation_that_is_not_found_fails_the_check() {
    let text = panic_text(|| {
        check(LockVariant::Add)
            .clients(2)
            .expect("lock.exclusion")
            .random(50);
    });
    assert!(text.contains("expected lock.exclusion, got pass"), "{text}");
}

#[test]
fn a_verdict_sought_past_another_says_how_to_select() {
    // The get+set lock breaks exclusion long before anything could be stuck: the
    // failure says how to look past it.
    let text = panic_text(|| {
        check(LockVariant::GetSet)
            .clients(2)
            .expect("stuck")
            .random(200);
    });
    assert!(
        text.contains("expected stuck, got lock.exclusion"),
        "{text}"
    );
    assert!(
        text.contains("lock.exclusion broke first and ended the search: to seek stuck past it, check only what it needs with `.only(&[])`"),
        "{text}"
    );
}

#[test]
fn an_unknown_verdict_or_metric_is_named() {
    let text = panic_text(|| {
        check(LockVariant::Add).expect("lock.exclsion");
    });
    assert!(text.contains("did you mean \"lock.exclusion\""), "{text}");
    let figures = check(CounterVariant::IncrAdd).random(5);
    let text = panic_text(|| {
        figures.metric("counter.lots");
    });
    assert!(text.contains("counter.lost"), "{text}");
}

#[test]
fn dfs_proves_a_small_fixed_case_and_finds_the_broken_one() {
    let proved = check(LockVariant::Add)
        .clients(2)
        .with(|p| p.rounds = Count(1))
        .dfs(Some(2));
    assert!(proved.exhaustive);
    assert!(proved.executions > 1);
    // Verdict counts are executions per verdict, as a sampling run's are.
    assert_eq!(proved.verdicts.get("pass"), Some(&proved.executions));
    // The proof says what it covered, the tick phases included.
    let proof = proved.proof.clone().expect("a proof").to_string();
    assert!(proof.starts_with("every schedule, 2 clients"), "{proof}");
    assert!(proof.contains("tick-phase class"), "{proof}");
    assert!(
        proof.contains(&format!("visited {} executions", proved.executions)),
        "{proof}"
    );
    // Sampling counts each invariant's evaluations.
    let sampled = check(LockVariant::Add)
        .clients(2)
        .with(|p| p.rounds = Count(1))
        .random(20);
    assert!(
        sampled
            .checks
            .get("lock.exclusion")
            .is_some_and(|&n| n >= 20),
        "{:?}",
        sampled.checks
    );
    let found = check(LockVariant::GetSet)
        .clients(2)
        .with(|p| p.rounds = Count(1))
        .expect("lock.exclusion")
        .dfs(Some(2));
    assert!(found.failure.is_some());
    assert_eq!(found.verdicts.get("lock.exclusion"), Some(&1));
    assert_eq!(found.verdicts.values().sum::<u64>(), found.executions);
}

#[test]
fn bad_parameters_name_the_field() {
    let text = panic_text(|| {
        check(mcsim_models::cluster::ClusterVariant::Rehash)
            .servers(2)
            .with(|p| p.leave_server = 5)
            .random(1);
    });
    assert!(text.contains("params.leave_server"), "{text}");
}

#[test]
fn every_violated_invariant_is_reported_and_a_check_can_select_some() {
    let all = check(CounterVariant::GetSet)
        .clients(2)
        .with(|p| p.reads = Count(2))
        .expect("counter.no_lost_increments")
        .random(500);
    let failure = all.failure.expect("a lost increment");
    // A lost increment is also a history no sequential counter gives.
    assert_eq!(
        failure.execution.violated,
        vec!["counter.no_lost_increments", "counter.linearizable"]
    );
    assert!(
        all.found.contains_key("counter.linearizable"),
        "{:?}",
        all.found
    );
    let text = panic_text(|| {
        check(CounterVariant::GetSet)
            .clients(2)
            .with(|p| p.reads = Count(2))
            .random(500);
    });
    assert!(text.contains("also         counter.linearizable"), "{text}");

    let one = check(CounterVariant::GetSet)
        .clients(2)
        .with(|p| p.reads = Count(2))
        .only(&["counter.linearizable"])
        .expect("counter.linearizable")
        .random(500);
    assert_eq!(
        one.checks.keys().collect::<Vec<_>>(),
        vec!["counter.linearizable"]
    );
    assert_eq!(
        one.found.keys().collect::<Vec<_>>(),
        vec!["counter.linearizable"]
    );

    let text = panic_text(|| {
        check(CounterVariant::GetSet).only(&["counter.lost"]);
    });
    assert!(
        text.contains("declared: counter.no_lost_increments, counter.no_extra_increments, counter.linearizable"),
        "{text}"
    );
    let text = panic_text(|| {
        check(CounterVariant::GetSet)
            .only(&["counter.linearizable"])
            .expect("counter.no_lost_increments")
            .random(1);
    });
    assert!(text.contains("checks only counter.linearizable"), "{text}");
}

#[test]
fn parameters_built_in_code_are_range_checked_as_in_a_file() {
    let text = panic_text(|| {
        check(LockVariant::Add)
            .with(|p| p.rounds = Count(200_000))
            .random(1);
    });
    assert!(text.contains("field `params.rounds`"), "{text}");
    assert!(text.contains("out of range"), "{text}");
}

#[test]
fn a_proof_under_faults_names_its_fault_bound_kinds_and_phases() {
    let proved = check(LockVariant::Add)
        .clients(2)
        .with(|p| p.rounds = Count(1))
        .faults(
            FaultPlan::lost_replies()
                .and(FaultPlan::lost_requests())
                .max(1),
        )
        .max_faults(1)
        .max_phases(2)
        .dfs(Some(1));
    let proof = proved.proof.expect("the add lock holds under one fault");
    assert_eq!(proof.clients, 2);
    assert_eq!(proof.faults, Some(1));
    assert_eq!(
        proof.fault_kinds,
        vec![FaultKind::ReplyLost, FaultKind::RequestLost]
    );
    assert!(proof.phases.searched.len() <= 2, "{proof}");
    assert!(proof.states > 0 && proof.executions > 1, "{proof:?}");
    let sentence = proof.to_string();
    assert!(
        sentence.contains("at most 1 preemption and at most 1 fault (reply_lost, request_lost)"),
        "{sentence}"
    );
    assert!(!sentence.contains('\n'), "one sentence: {sentence}");
}

#[test]
fn a_rate_is_measured_in_one_call_without_a_verdict() {
    // The get+set counter loses increments: how often, under the plan's probabilities,
    // in one call that neither stops at the first loss nor panics.
    let figures = check(CounterVariant::GetSet).clients(3).measure(200);
    assert_eq!(figures.executions, 200);
    let lost = figures.rate("counter.no_lost_increments");
    assert!(lost > 0.0 && lost <= 1.0, "{:?}", figures.verdicts);
    assert!(
        figures.rate("pass") <= 1.0 - lost + 1e-9,
        "{:?}",
        figures.verdicts
    );
    assert_eq!(figures.verdicts.values().sum::<u64>(), 200);
}
