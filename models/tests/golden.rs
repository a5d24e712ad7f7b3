//! Every scenario of the suite: loads, is deterministic, and its trace is pinned.
//!
//! For a scenario that expects a violation the pinned trace is its counterexample; for one
//! that expects a pass, the trace of its first seed. A change in behaviour shows up as a
//! reviewable snapshot diff.

mod support;

use mcsim::run::{self, Determinism, RunOptions};
use mcsim::scenario::Scenario;
use mcsim_models::Recipes;
use support::all_scenarios;

#[test]
fn every_scenario_is_deterministic_for_its_first_seeds() {
    for path in all_scenarios() {
        let s = Scenario::load(&path, &Recipes).unwrap_or_else(|e| panic!("{e}"));
        for seed in s.seed..s.seed + 3 {
            match run::check_determinism(&s, s.strategy, seed) {
                Determinism::Same(_) => {}
                Determinism::Differs {
                    line,
                    first,
                    second,
                } => {
                    panic!(
                        "{}: seed {seed} differs at line {line}:\n{first}\n{second}",
                        s.name
                    )
                }
            }
        }
    }
}

#[test]
fn one_trace_per_scenario_is_pinned() {
    for path in all_scenarios() {
        let s = Scenario::load(&path, &Recipes).unwrap_or_else(|e| panic!("{e}"));
        let trace = if s.expect == "pass" {
            let e = run::run_seed(&s, s.strategy, s.seed);
            format!("verdict: {}\n{}", e.verdict, e.trace.render())
        } else {
            let report = run::run(&s, &RunOptions::from_scenario(&s));
            let f = report.first_failure.unwrap_or_else(|| {
                panic!(
                    "{}: expected {} but every execution passed",
                    s.name, s.expect
                )
            });
            format!(
                "seed: {}\nverdict: {}\n{}",
                f.seed.unwrap_or_default(),
                f.execution.verdict,
                f.execution.trace.render()
            )
        };
        insta::assert_snapshot!(s.name.clone(), trace);
    }
}
