//! Exhaustive exploration: counts, verdicts, and soundness of the reduction and the
//! visited-state cache (they reach the same final states and verdicts as plain
//! enumeration).

mod support;

use std::path::Path;

use mcsim::exhaustive::ExploreOptions;
use mcsim::run;
use mcsim::scenario::Scenario;
use mcsim_models::RECIPES;

fn counter(variant: &str, clients: usize) -> Scenario {
    let source = format!(
        "recipe = \"counter\"\nvariant = \"{variant}\"\nclients = {clients}\n\
         [params]\nincrements = 1\n[timing]\nlatency_us = [100, 100000]\n\
         [expect]\nverdict = \"pass\"\n"
    );
    Scenario::parse(Path::new("counter.toml"), &source, RECIPES).unwrap()
}

fn exhaust(s: &Scenario, reduce: bool) -> mcsim::exhaustive::ExploreReport {
    exhaust_with(s, reduce, false)
}

fn exhaust_with(s: &Scenario, reduce: bool, cache: bool) -> mcsim::exhaustive::ExploreReport {
    let options = ExploreOptions {
        reduce,
        keep_going: true,
        cache,
        ..ExploreOptions::default()
    };
    mcsim::exhaustive::explore(s, &options, &mut |_| true)
}

#[test]
fn the_three_client_get_set_counter_has_90_interleavings() {
    let s = counter("get-set", 3);
    let plain = exhaust(&s, false);
    assert!(plain.stats.complete);
    assert_eq!(plain.stats.executions, 90);
    // Only the 3! serial orders keep every increment.
    assert_eq!(plain.failures, 84);
    let reduced = exhaust(&s, true);
    assert!(reduced.stats.complete);
    assert!(reduced.stats.executions < 90, "{:?}", reduced.stats);
    assert!(reduced.failures > 0);
    assert_eq!(reduced.distinct_states, plain.distinct_states);
}

#[test]
fn reduction_reaches_the_same_final_states() {
    for (variant, clients) in [
        ("get-set", 2),
        ("incr-add", 3),
        ("incr-set", 2),
        ("incr-add-db", 2),
    ] {
        let s = counter(variant, clients);
        let plain = exhaust(&s, false);
        let reduced = exhaust(&s, true);
        assert!(plain.stats.complete && reduced.stats.complete);
        assert_eq!(reduced.distinct_states, plain.distinct_states, "{variant}");
        assert_eq!(reduced.failures > 0, plain.failures > 0, "{variant}");
        assert!(
            reduced.stats.executions <= plain.stats.executions,
            "{variant}"
        );
    }
}

#[test]
fn the_cache_reaches_the_same_final_states_and_verdicts_in_fewer_executions() {
    for (variant, clients) in [
        ("get-set", 2),
        ("get-set", 3),
        ("incr-add", 3),
        ("incr-set", 2),
        ("incr-add-db", 3),
    ] {
        let s = counter(variant, clients);
        let plain = exhaust_with(&s, false, false);
        for reduce in [false, true] {
            let cached = exhaust_with(&s, reduce, true);
            let what = format!("{variant} at {clients} clients, reduction {reduce}");
            assert!(cached.stats.complete, "{what}");
            assert!(cached.stats.states > 0, "{what}: the cache is on");
            assert_eq!(cached.distinct_states, plain.distinct_states, "{what}");
            assert_eq!(cached.failures > 0, plain.failures > 0, "{what}");
            assert!(cached.stats.executions <= plain.stats.executions, "{what}");
        }
    }
}

#[test]
fn the_incr_add_counter_has_no_violation_within_bounds() {
    let report = exhaust(&counter("incr-add", 3), true);
    assert!(report.stats.complete);
    assert_eq!(report.failures, 0);
    assert!(report.failure.is_none());
}

#[test]
fn explore_stops_at_the_first_counterexample_and_it_replays() {
    let s = counter("get-set", 2);
    let report = mcsim::exhaustive::explore(&s, &ExploreOptions::default(), &mut |_| true);
    let f = report.failure.expect("a counterexample");
    assert_eq!(f.execution.verdict.label(), "counter.no_lost_increments");
    let again = run::replay(&s, &f.execution.schedule);
    assert_eq!(again.trace.render(), f.execution.trace.render());
}

#[test]
fn a_preemption_bound_shrinks_the_tree() {
    let s = counter("get-set", 3);
    let options = ExploreOptions {
        max_preemptions: Some(0),
        reduce: false,
        keep_going: true,
        ..ExploreOptions::default()
    };
    let report = mcsim::exhaustive::explore(&s, &options, &mut |_| true);
    assert!(report.stats.complete);
    // Without preemptions every client runs its get and set back to back: 3! orders.
    assert_eq!(report.stats.executions, 6);
    assert_eq!(report.failures, 0);
}

#[test]
fn iterative_bounding_finds_the_fewest_preemptions_first_and_then_covers_everything() {
    let iterative = ExploreOptions {
        iterative: true,
        ..ExploreOptions::default()
    };
    // Two clients' get-then-set interleaved: one preemption is needed, and enough.
    let broken = mcsim::exhaustive::explore(&counter("get-set", 2), &iterative, &mut |_| true);
    assert!(broken.failure.is_some());
    assert_eq!(broken.preemptions_searched, Some(1));
    // A fixed counter: every bound passes, and the last search covers every schedule.
    let fixed = mcsim::exhaustive::explore(&counter("incr-add", 3), &iterative, &mut |_| true);
    assert!(fixed.failure.is_none() && fixed.stats.complete);
    assert_eq!(fixed.preemptions_searched, None);
    assert_eq!(fixed.stats.cut_by_bound, 0);
}

fn with_faults(recipe: &str, variant: &str, params: &str, faults: &str) -> Scenario {
    let source = format!(
        "recipe = \"{recipe}\"\nvariant = \"{variant}\"\nclients = 2\n\
         [params]\n{params}\n[timing]\nlatency_us = [100, 100000]\n\
         [faults]\n{faults}\n[expect]\nverdict = \"pass\"\n"
    );
    Scenario::parse(Path::new("faults.toml"), &source, RECIPES).unwrap()
}

#[test]
fn faults_with_footprints_commute_with_steps_on_other_keys() {
    // Evicting the table's marker or list key commutes with the other client's calls on
    // its own keys: the reduction runs fewer executions and reaches the same verdicts.
    let s = with_faults(
        "table",
        "as-written",
        "members = 1",
        "evict = { max = 1, probability = 0.1 }",
    );
    let plain = exhaust(&s, false);
    let reduced = exhaust(&s, true);
    assert!(plain.stats.complete && reduced.stats.complete);
    assert_eq!(reduced.verdicts, plain.verdicts);
    assert!(reduced.verdicts.contains("table.consistent"));
    assert!(
        reduced.stats.executions * 2 < plain.stats.executions,
        "{} reduced vs {} plain",
        reduced.stats.executions,
        plain.stats.executions
    );
}

#[test]
fn iterative_bounding_finds_the_fewest_faults_first_and_says_which_bounds_it_covered() {
    // The lock with add survives any interleaving; one eviction of the lock key breaks it.
    let s = with_faults(
        "lock",
        "add",
        "rounds = 1\nhold_ms = 5\nbackoff_ms = 1",
        "evict = { max = 3, probability = 0.1, keys = [\"lock_x\"] }",
    );
    let options = ExploreOptions {
        iterative: true,
        max_preemptions: Some(2),
        max_faults: Some(2),
        ..ExploreOptions::default()
    };
    let r = mcsim::exhaustive::explore(&s, &options, &mut |_| true);
    let f = r.failure.expect("an eviction breaks exclusion");
    assert_eq!(f.execution.verdict.label(), "lock.exclusion");
    assert_eq!(f.execution.schedule.faults(), 1);
    assert_eq!(r.faults_searched, Some(1));
    // Without faults, no violation: every schedule within the bounds, and it says so (the
    // search of every schedule is cheap here, so it covers any number of preemptions).
    let none = ExploreOptions {
        max_faults: Some(0),
        ..options
    };
    let r = mcsim::exhaustive::explore(&s, &none, &mut |_| true);
    assert!(r.failure.is_none() && r.stats.complete);
    assert!(r.stats.cut_by_bound > 0, "the fault bound cut the faults");
    assert_eq!((r.preemptions_searched, r.faults_searched), (None, Some(0)));
}

#[test]
fn a_second_draw_of_the_workload_finds_what_the_first_hides() {
    // The online counter with add, sparse hits, cut to 3 clients: the sessions and
    // arrival times a client draws are seeded by when it starts. Every schedule of the
    // first draw passes, with or without the timing alternatives; the second draw (each
    // client's first call later in its window) breaks the window.
    // At phase 0 (other phases break it in the first draw already).
    let s = Scenario::load(Path::new("../scenarios/online-add-sparse.toml"), RECIPES)
        .unwrap()
        .with_set(&["servers.phase_ms=0".to_string()])
        .unwrap()
        .with_clients(3)
        .unwrap();
    let fixed = ExploreOptions {
        timing: false,
        ..ExploreOptions::default()
    };
    let r = mcsim::exhaustive::explore(&s, &fixed, &mut |_| true);
    assert!(r.failure.is_none() && r.stats.complete);
    let r = mcsim::exhaustive::explore(&s, &ExploreOptions::default(), &mut |_| true);
    assert!(
        r.failure.is_none() && r.stats.complete,
        "one draw of the workload"
    );
    let two = ExploreOptions {
        draws: 2,
        ..ExploreOptions::default()
    };
    let r = mcsim::exhaustive::explore(&s, &two, &mut |_| true);
    let f = r
        .failure
        .expect("another draw of the sessions breaks the window");
    assert_eq!(r.draws_searched, 2);
    assert_eq!(f.execution.verdict.label(), "online.window_exact");
    // The shrunk schedule replays on the scenario it was shrunk to (maybe fewer clients).
    let shrunk = s.with_clients(f.clients).unwrap();
    let again = run::replay(&shrunk, &f.execution.schedule);
    assert_eq!(again.verdict.label(), "online.window_exact");
}

#[test]
fn a_search_for_the_expected_violation_goes_past_another_one() {
    // The event log as written with a small item limit breaks two invariants: retention
    // (found first) and the stuck put over the limit (the one its scenario is about).
    let s = Scenario::load(
        Path::new("../scenarios/eventlog-as-written-large.toml"),
        RECIPES,
    )
    .unwrap();
    let options = ExploreOptions {
        iterative: true,
        max_preemptions: Some(0),
        max_faults: Some(0),
        draws: 4,
        ..ExploreOptions::default()
    };
    let first = mcsim::exhaustive::explore(&s, &options, &mut |_| true);
    let first = first.failure.expect("a violation");
    assert_eq!(first.execution.verdict.label(), "eventlog.capacity");
    let r = mcsim::exhaustive::explore_seeking(&s, &options, Some("eventlog.bytes"), &mut |_| true);
    let f = r.failure.expect("the sought violation");
    assert_eq!(f.execution.verdict.label(), "eventlog.bytes");
    assert!(r.verdicts.contains("eventlog.capacity"), "{:?}", r.verdicts);
    // The counterexample is shrunk, perhaps to fewer clients: replayed with as many.
    let shrunk = s.with_clients(f.clients).unwrap();
    let again = run::replay(&shrunk, &f.execution.schedule);
    assert_eq!(again.verdict.label(), "eventlog.bytes");
}

#[test]
fn families_that_watch_a_ghost_record_get_the_visited_state_cache() {
    // The table registers its ghost record through `ghost::watch`: without it, no state
    // could be fingerprinted and the cache would stay off.
    let s = with_faults("table", "as-written", "members = 1", "");
    let r = exhaust_with(&s, true, true);
    assert!(r.stats.states > 0, "{:?}", r.stats);
}
