//! An exhaustive search over tick-phase classes shares a batch's phases over a pool of
//! threads when it has several jobs: the report is the one a single thread gives, to the figures
//! (the phases searched, the states and executions, the verdict and the counterexample).

use std::path::Path;

use mcsim::exhaustive::{ExploreOptions, ExploreReport};
use mcsim::scenario::Scenario;
use mcsim_models::RECIPES;

fn scenario(name: &str, clients: usize) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(format!("{name}.toml"));
    Scenario::load(&path, RECIPES)
        .unwrap()
        .with_clients(clients)
        .unwrap()
}

fn search(s: &Scenario, jobs: usize) -> ExploreReport {
    let options = ExploreOptions {
        jobs,
        ..ExploreOptions::for_scenario(s)
    };
    let seek = (s.expect != "pass").then_some(s.expect.as_str());
    mcsim::exhaustive::explore_seeking(s, &options, seek, &mut |_| true)
}

/// Everything a report says but the wall time.
fn figures(r: &ExploreReport) -> String {
    let failure = r.failure.as_ref().map(|f| {
        format!(
            "{} {:?} {:?} {:x}",
            f.execution.verdict.label(),
            f.original,
            f.execution.schedule,
            f.execution.trace.hash()
        )
    });
    format!(
        "{:?} {} {:?} {:?} {:?} {} {}",
        r.phases, r.distinct_states, r.stats, r.verdicts, failure, r.calls, r.interrupted
    )
}

#[test]
fn two_jobs_search_the_same_phases_to_the_same_figures_as_one() {
    // Passing searches over several classes (up to the cap of 8), with the cache on.
    for (name, clients) in [
        ("tags-counter", 3),
        ("cache-add-lock", 3),
        ("lock-token", 3),
    ] {
        let s = scenario(name, clients);
        let one = search(&s, 1);
        assert!(one.failure.is_none(), "{name}: {}", figures(&one));
        assert!(one.phases.searched.len() > 2, "{name}: {:?}", one.phases);
        // Two jobs, and three: more threads than cores, a batch's phases taken in turn.
        for jobs in [2, 3] {
            assert_eq!(
                figures(&one),
                figures(&search(&s, jobs)),
                "{name} on {jobs}"
            );
        }
    }
}

#[test]
fn a_violation_only_a_later_phase_shows_is_the_one_two_jobs_report() {
    // The aligned visitor counter is exact when the ticks fall on whole seconds (phase
    // 0) and breaks at other phases: the search finds it in its second phase, the first
    // of the first batch, and the batch's later searches are dropped. (The file is a sweep
    // over pinned phases; read as one scenario, it leaves the phase free.)
    let s = scenario("visitor-aligned-phase", 3);
    assert!(s.config.phase_free, "the phase is left to the search");
    let one = search(&s, 1);
    assert_eq!(
        one.failure.as_ref().map(|f| f.execution.verdict.label()),
        Some("visitor.window_exact".to_string())
    );
    assert_eq!(one.phases.searched.len(), 2, "{:?}", one.phases);
    assert_eq!(one.phases.searched[0], 0);
    for jobs in [2, 3] {
        assert_eq!(figures(&one), figures(&search(&s, jobs)), "on {jobs}");
    }
}
