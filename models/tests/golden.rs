//! Every scenario of the suite: loads, is deterministic, and its trace is pinned.
//!
//! For a scenario that expects a violation the pinned trace is its counterexample; for one
//! that expects a pass, the trace of its first seed. A change in behaviour shows up as a
//! reviewable snapshot diff.

mod support;

use mcsim::run::{self, Determinism, RunOptions};
use mcsim::scenario::Scenario;
use mcsim_models::RECIPES;
use support::all_scenarios;

#[test]
fn every_scenario_is_deterministic_for_its_first_seeds() {
    for path in all_scenarios() {
        let s = Scenario::load(&path, RECIPES).unwrap_or_else(|e| panic!("{e}"));
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

/// The verdict, the whole trace's size and hash, and its first lines: the hash pins every
/// byte, the lines make a change reviewable.
fn pinned(header: String, trace: &mcsim::trace::Trace) -> String {
    const SHOWN: usize = 150;
    let text = trace.render();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = format!(
        "{header}\ntrace: {} lines, hash {:016x}\n",
        lines.len(),
        trace.hash()
    );
    for l in lines.iter().take(SHOWN) {
        out.push_str(l);
        out.push('\n');
    }
    if lines.len() > SHOWN {
        out.push_str(&format!("… {} more lines\n", lines.len() - SHOWN));
    }
    out
}

#[test]
fn one_trace_per_scenario_is_pinned() {
    for path in all_scenarios() {
        let points = mcsim::scenario::load_points(&path, RECIPES).unwrap_or_else(|e| panic!("{e}"));
        let first = &points[0];
        let name = first
            .name
            .split('[')
            .next()
            .unwrap_or(&first.name)
            .to_string();
        let snapshot = if first.expect == "pass" {
            let e = run::run_seed(first, first.strategy, first.seed);
            pinned(
                format!(
                    "point: {}\nseed: {}\nverdict: {}",
                    first.name, first.seed, e.verdict
                ),
                &e.trace,
            )
        } else {
            // The first point (of a sweep) that shows the expected violation.
            let found = points.iter().find_map(|s| {
                let f = run::run(s, &RunOptions::from_scenario(s)).first_failure?;
                (f.execution.verdict.label() == s.expect).then_some((s, f))
            });
            let (s, f) = found.unwrap_or_else(|| panic!("{name}: no point shows {}", first.expect));
            let header = format!(
                "point: {}\nfound with seed: {:?}\nclients after shrinking: {}\nschedule: {}\nverdict: {}",
                s.name, f.seed, f.clients, f.execution.schedule, f.execution.verdict
            );
            pinned(header, &f.execution.trace)
        };
        insta::assert_snapshot!(name, snapshot);
    }
}
