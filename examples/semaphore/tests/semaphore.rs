//! The semaphore under mcsim, as its author tests it: the broken recipe is caught, the
//! fixed one holds under deaths and short pauses and is proved for two and three clients,
//! a pause past the TTL is a real violation, and a failure reruns from the line it prints.

use std::time::Duration;

use mcsim::prelude::*;
use semaphore::Semaphore;

#[test]
fn count_then_incr_lets_too_many_in() {
    let figures = check(Semaphore::CountThenIncr)
        .clients(3)
        .with(|p| p.permits = Count(1))
        .expect("semaphore.within_permits")
        .random(1_000);
    let failure = figures.failure.expect("two clients read the same count");
    assert_eq!(failure.clients, 2, "shrunk to the smallest race");
}

/// Pauses well inside the TTL: a slot set with TTL 2 lives more than 1 s (memcached's
/// whole-second clock), and a holder stays 100 ms plus at most two pauses of 200 ms.
#[test]
fn slots_hold_when_clients_die_and_pause_briefly() {
    let figures = check(Semaphore::Slots)
        .clients(4)
        .faults(
            FaultPlan::deaths()
                .and(FaultPlan::pauses(Duration::from_millis(200)))
                .probability(0.02),
        )
        .random(2_000);
    assert_eq!(figures.verdicts.get("pass"), Some(&2_000));
    // Deaths happened, holders among the dead: no false alarm from them.
    let deaths = &figures.faults["die"];
    assert!(deaths.injected > 100 && deaths.bit > 0, "{deaths:?}");
    assert!(figures.faults["pause"].injected > 100);
}

#[test]
fn a_pause_past_the_ttl_lets_a_slot_expire_under_its_holder() {
    let figures = check(Semaphore::Slots)
        .clients(3)
        .with(|p| p.permits = Count(1))
        .faults(FaultPlan::pauses(Duration::from_secs(3)).on_keys(&["sem_0"]))
        .expect("semaphore.within_permits")
        .random(2_000);
    let failure = figures.failure.expect("found");
    assert!(failure.execution.schedule.faults() >= 1);
}

#[test]
fn slots_are_proved_for_small_cases_with_a_death() {
    let figures = check(Semaphore::Slots)
        .clients(3)
        .with(|p| {
            p.permits = Count(2);
            p.rounds = Count(1);
        })
        .faults(FaultPlan::deaths())
        .max_faults(1)
        .max_phases(2)
        .dfs(Some(2));
    let proof = figures.proof.expect("no violation in any schedule");
    let sentence = proof.to_string();
    // One death is the plan's whole budget, so the fault bound cut nothing.
    assert!(
        sentence
            .starts_with("every schedule with the fault plan's budgets of faults (die), 3 clients"),
        "{sentence}"
    );
    assert!(proof.executions > 100, "{proof:?}");
}

#[test]
#[ignore = "fails on purpose: the replay-line test below runs it"]
fn count_then_incr_as_a_failing_test() {
    check(Semaphore::CountThenIncr)
        .clients(2)
        .with(|p| p.permits = Count(1))
        .random(1_000);
}

/// Runs a printed `cargo test …` line in a shell, with `cargo test` replaced by this test
/// binary and its arguments: what cargo runs once it has built it.
fn run_as_cargo_would(line: &str) -> (bool, String) {
    let exe = std::env::current_exe().unwrap();
    let (env, rest) = line.split_once("cargo test").expect("a cargo test line");
    let (_, args) = rest.split_once(" -- ").expect("test arguments");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{env}{} {args}", exe.display()))
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
fn a_failure_reruns_from_the_line_it_prints() {
    let (passed, text) = run_as_cargo_would(
        "cargo test -- --exact count_then_incr_as_a_failing_test --include-ignored",
    );
    assert!(!passed, "{text}");
    let line = text
        .lines()
        .find(|l| l.contains("MCSIM_REPLAY="))
        .unwrap_or_else(|| panic!("no replay line in {text}"))
        .trim();
    let (command, _) = line.split_once("   # ").unwrap();
    // The test target is named like the package: the command names it all the same.
    assert!(
        command.contains(
            "cargo test -p semaphore --test semaphore -- --exact count_then_incr_as_a_failing_test"
        ),
        "{command}"
    );
    // The token ends with the trace hash its replay checks.
    let token = command.split('\'').nth(1).unwrap();
    let hash = token.rsplit_once('#').unwrap().1;
    let (passed, again) = run_as_cargo_would(command);
    assert!(!passed, "{again}");
    assert!(
        again.contains("verdict: semaphore.within_permits"),
        "{again}"
    );
    let rerun = again
        .lines()
        .find(|l| l.contains("MCSIM_REPLAY="))
        .unwrap_or_else(|| panic!("no replay line in {again}"));
    assert!(rerun.contains(&format!("#{hash}'")), "{rerun} vs {hash}");
}
