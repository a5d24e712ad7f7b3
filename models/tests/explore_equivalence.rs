//! The explorer's shortcuts change how much it runs, never what it finds. Over small
//! scenarios of several families (2 clients, a round or two, faults off or on):
//! - the visited-state cache reaches exactly the verdicts and the final states (servers
//!   and ghost state) that plain enumeration reaches;
//! - with the sleep-set reduction as well, exactly the same verdicts. Final states may be
//!   fewer: the reduction runs one order of steps that commute at the servers, and a
//!   harness's history records which order ran;
//! - random executions of the same scenario (any instant of each latency window) reach
//!   no verdict the search did not.

use std::path::Path;

use mcsim::exhaustive::{ExploreOptions, ExploreReport};
use mcsim::run::{self, RunOptions};
use mcsim::scenario::{Scenario, StrategyKind};
use mcsim_models::RECIPES;

const PLAIN_CAP: u64 = 8_000;

fn scenario(recipe: &str, variant: &str, params: &str, faults: &str) -> Scenario {
    let text = format!(
        "recipe = \"{recipe}\"\nvariant = \"{variant}\"\nclients = 2\n\
         [params]\n{params}\n[timing]\nlatency_us = [100, 100000]\n\
         [faults]\n{faults}\n[expect]\nverdict = \"pass\"\n"
    );
    Scenario::parse(Path::new("equivalence.toml"), &text, RECIPES).unwrap_or_else(|e| panic!("{e}"))
}

fn explore(s: &Scenario, reduce: bool, cache: bool) -> ExploreReport {
    let options = ExploreOptions {
        reduce,
        cache,
        keep_going: true,
        max_executions: Some(PLAIN_CAP),
        // The same classes for every search compared: without a cap, the classes a
        // search takes depend on what its executions cost.
        max_phases: Some(8),
        ..ExploreOptions::default()
    };
    mcsim::exhaustive::explore(s, &options, &mut |_| true)
}

#[test]
fn reduction_and_cache_reach_what_plain_enumeration_reaches() {
    let families: &[(&str, &[&str], &str)] = &[
        (
            "lock",
            &["add", "get-set", "token"],
            "rounds = 1\nhold_ms = 1\nbackoff_ms = 1\nattempts = 2",
        ),
        (
            "counter",
            &["incr-add", "get-set", "incr-set", "incr-add-db"],
            "increments = 1",
        ),
        ("set", &["as-written", "retry", "compact-set"], "ops = 1"),
        ("array2", &["as-written", "fixed"], "elements = 1"),
        ("table", &["as-written"], "members = 1"),
    ];
    let fault_plans = [
        "",
        "evict = { max = 1, probability = 0.1 }",
        "evict = { max = 2, probability = 0.1 }",
        "reply_lost = { max = 1, probability = 0.1 }",
        "reply_lost = { max = 1, probability = 0.1 }\nevict = { max = 1, probability = 0.1 }",
        "die = { max = 1, probability = 0.1 }",
    ];
    let (mut compared, mut cached) = (0, 0);
    for (recipe, variants, params) in families {
        for variant in *variants {
            for faults in fault_plans {
                // A death leaves the others waiting out a TTL: long executions, kept to
                // the two families whose waits are short.
                if faults.starts_with("die") && !["lock", "counter"].contains(recipe) {
                    continue;
                }
                let s = scenario(recipe, variant, params, faults);
                let plain = explore(&s, false, false);
                if !plain.stats.complete {
                    continue;
                }
                let what = format!("{recipe}/{variant} with faults {faults:?}");
                let cache = explore(&s, false, true);
                assert!(cache.stats.complete, "{what}");
                assert_eq!(cache.verdicts, plain.verdicts, "{what}");
                assert_eq!(cache.distinct_states, plain.distinct_states, "{what}");
                assert!(cache.stats.executions <= plain.stats.executions, "{what}");
                let both = explore(&s, true, true);
                assert!(both.stats.complete, "{what}");
                assert_eq!(both.verdicts, plain.verdicts, "{what}: with the reduction");
                assert!(both.stats.executions <= cache.stats.executions, "{what}");
                // Random executions, free to run calls at any instant of their windows,
                // find nothing the search missed.
                let sampled = run::run(
                    &s,
                    &RunOptions {
                        strategy: StrategyKind::Random,
                        seed: 0,
                        executions: 200,
                        keep_going: true,
                        shrink: false,
                        expect: mcsim::scenario::Expectation::default(),
                    },
                );
                for label in sampled.verdicts.keys() {
                    assert!(
                        plain.verdicts.contains(label),
                        "{what}: random found {label}"
                    );
                }
                compared += 1;
                cached += usize::from(cache.stats.revisits > 0);
            }
        }
    }
    assert!(compared >= 60, "only {compared} cases finished plainly");
    assert!(cached >= 5, "the cache cut only {cached} cases short");
}
