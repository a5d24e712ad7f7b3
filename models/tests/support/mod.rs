//! Helpers shared by the scenario tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use mcsim::Verdict;
use mcsim::exec::execute;
use mcsim::explore::Strategy;
use mcsim::run::{self, RunOptions, RunReport};
use mcsim::scenario::Scenario;
use mcsim::scenario::load_points;
use mcsim_models::RECIPES;

/// The path of a scenario file in the suite.
pub fn scenario_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(format!("{name}.toml"))
}

/// Loads a scenario of the suite.
pub fn load(name: &str) -> Scenario {
    let path = scenario_path(name);
    Scenario::load(&path, RECIPES).unwrap_or_else(|e| panic!("{e}"))
}

/// Asserts that a sampling strategy replays from a seed alone: for the first `n`
/// executions, execution `i` of the strategy `make(first)` has the schedule and the
/// trace of execution 0 of `make(first + i)`.
pub fn assert_replays_from_seed_alone<S: Strategy>(
    s: &Scenario,
    first: u64,
    n: u64,
    make: impl Fn(u64) -> S,
) {
    let mut run = make(first);
    for i in 0..n {
        let a = execute(&s.config, &*s.setup, &mut run, i);
        let b = execute(&s.config, &*s.setup, &mut make(first + i), 0);
        assert_eq!(a.schedule, b.schedule, "execution {i}");
        assert_eq!(a.trace.hash(), b.trace.hash(), "execution {i}");
    }
}

/// Runs a scenario with its own budget.
pub fn run(name: &str) -> (Scenario, RunReport) {
    let s = load(name);
    let report = run::run(&s, &RunOptions::from_scenario(&s));
    (s, report)
}

/// The scenario with its servers' ticks pinned to the clients' whole seconds (phase 0),
/// for a test that states what happens at that phase.
pub fn at_phase_zero(s: &Scenario) -> Scenario {
    s.with_set(&["servers.phase_ms=0".to_string()])
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The violation a run found, or a panic naming what it found instead.
pub fn violation(report: &RunReport) -> mcsim::Violation {
    match report.first_failure.as_ref().map(|f| &f.execution.verdict) {
        Some(Verdict::Violation(v)) => v.clone(),
        other => panic!("expected a violation, got {other:?}"),
    }
}

/// Every scenario file of the suite, sorted.
pub fn all_scenarios() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("scenarios directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    v
}

/// A metric of a run, or a panic naming the metrics it has.
pub fn metric(report: &RunReport, name: &str) -> mcsim::run::Summary {
    report
        .metrics
        .get(name)
        .unwrap_or_else(|| panic!("no metric {name}: {:?}", report.metrics.keys()))
        .clone()
}

/// Runs a scenario of the suite and asserts that every execution passes.
pub fn assert_passes(name: &str) -> RunReport {
    let (_, report) = run(name);
    assert!(
        report.first_failure.is_none(),
        "{name}: {:?}",
        report.first_failure.map(|f| f.execution.verdict)
    );
    report
}

/// Every point of a scenario file of the suite.
pub fn points(name: &str) -> Vec<Scenario> {
    load_points(&scenario_path(name), RECIPES).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs a scenario without shrinking; `executions` 0 keeps its budget.
pub fn quick(s: &Scenario, executions: u64, keep_going: bool) -> RunReport {
    let mut o = RunOptions::from_scenario(s);
    o.shrink = false;
    o.keep_going = keep_going;
    if executions > 0 {
        o.executions = executions;
    }
    run::run(s, &o)
}

/// The error a scenario was refused with, or a panic if it was accepted.
pub fn refused<T, E: std::fmt::Display>(loaded: Result<T, E>) -> String {
    match loaded {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

/// Runs the suite's scenario `name` and asserts that its shrunk counterexample replays
/// from its schedule to a violation with the same trace.
pub fn assert_shrunk_counterexample_replays(name: &str) {
    let (s, report) = run(name);
    let found = report.first_failure.expect("a failure");
    let shrunk = s.with_clients(found.clients).unwrap();
    let again = mcsim::run::replay(&shrunk, &found.execution.schedule);
    assert!(
        matches!(again.verdict, mcsim::Verdict::Violation(_)),
        "{:?}",
        again.verdict
    );
    assert_eq!(again.trace.hash(), found.execution.trace.hash());
}
