//! Helpers shared by the scenario tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use mcsim::Verdict;
use mcsim::run::{self, RunOptions, RunReport};
use mcsim::scenario::Scenario;
use mcsim_models::Recipes;

/// The path of a scenario file in the suite.
pub fn scenario_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(format!("{name}.toml"))
}

/// Loads a scenario of the suite.
pub fn load(name: &str) -> Scenario {
    let path = scenario_path(name);
    Scenario::load(&path, &Recipes).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs a scenario with its own budget.
pub fn run(name: &str) -> (Scenario, RunReport) {
    let s = load(name);
    let report = run::run(&s, &RunOptions::from_scenario(&s));
    (s, report)
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
