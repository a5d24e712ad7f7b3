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
    // Passing searches over several classes (within the budget), with the cache on.
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

#[test]
fn a_cheap_proof_covers_every_phase_class_and_a_capped_one_says_what_it_found() {
    // tags-counter has 23 classes, cheap to search: the default search covers all of
    // them (it used to stop at 8, the old cap).
    let s = scenario("tags-counter", 3);
    let proof = search(&s, 1);
    assert!(proof.failure.is_none());
    let said = proof.phases.describe();
    assert!(proof.phases.all, "{said}");
    assert!(proof.phases.searched.len() > 8, "{said}");
    assert!(said.starts_with(&format!("all {} tick-phase classes", proof.phases.classes)));
    // With a cap the classes are a lower bound: more may show in classes not searched.
    let capped = mcsim::exhaustive::explore_seeking(
        &s,
        &ExploreOptions {
            max_phases: Some(2),
            ..ExploreOptions::for_scenario(&s)
        },
        None,
        &mut |_| true,
    );
    let said = capped.phases.describe();
    assert_eq!(capped.phases.searched.len(), 2, "{said}");
    assert!(said.starts_with("2 of at least "), "{said}");
    assert!(said.ends_with("; the cap of 2 classes)"), "{said}");
}

#[test]
fn a_costly_phase_search_stops_at_the_budget_past_the_floor_and_says_so() {
    // lock-add-holder-dies: its first classes take the budget, so it stops at the floor.
    let s = scenario("lock-add-holder-dies", 3);
    let r = search(&s, 1);
    let said = r.phases.describe();
    assert_eq!(
        r.phases.searched.len(),
        mcsim::exhaustive::PHASE_FLOOR,
        "{said}"
    );
    assert!(r.stats.work() >= mcsim::exhaustive::PHASE_BUDGET, "{said}");
    assert!(said.contains("of at least"), "{said}");
    assert!(
        said.ends_with("; the budget of 20000 executions)"),
        "{said}"
    );
}
