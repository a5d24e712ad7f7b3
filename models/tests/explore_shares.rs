//! An exhaustive search shared over threads (`mcsim explore --jobs N`) reaches the
//! verdict and the first counterexample one thread reaches: the same violation, found in
//! the same execution (the same size before shrinking, the same schedule after), and on a
//! passing scenario every order one thread covers.

use std::path::Path;

use mcsim::exhaustive::{ExploreOptions, ExploreReport};
use mcsim::scenario::Scenario;
use mcsim_models::RECIPES;

fn scenario(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(format!("{name}.toml"));
    let s = Scenario::load(&path, RECIPES).unwrap();
    s.with_clients(s.bounds.clients).unwrap()
}

fn search(s: &Scenario, jobs: usize, cache: bool) -> ExploreReport {
    let options = ExploreOptions {
        cache,
        jobs,
        ..ExploreOptions::for_scenario(s)
    };
    let seek = (s.expect != "pass").then_some(s.expect.as_str());
    mcsim::exhaustive::explore_seeking(s, &options, seek, &mut |_| true)
}

/// What must agree: the verdict, and the counterexample as found and as shrunk.
fn outcome(r: &ExploreReport) -> (String, Option<String>, Option<String>, bool) {
    let verdict = r
        .failure
        .as_ref()
        .map_or("pass".to_string(), |f| f.execution.verdict.label());
    let found = r.failure.as_ref().map(|f| format!("{:?}", f.original));
    let shrunk = r
        .failure
        .as_ref()
        .map(|f| format!("{:?} {:x}", f.execution.schedule, f.execution.trace.hash()));
    (verdict, found, shrunk, r.interrupted)
}

#[test]
fn two_threads_find_the_first_counterexample_one_thread_finds() {
    for name in [
        "counter-get-set",
        "lock-get-set",
        "lock-add-holder-pause",
        "counter-incr-add-reply-lost",
        "counter-incr-add-evict",
        "array-lock-reply-lost",
        "array-lock-evict",
        "cache-add-lock-evict",
        "online-add-sparse",
        "visitor-as-written",
        "set-as-written",
    ] {
        let s = scenario(name);
        // With the cache, threads share a search only once it gave up; without it, at
        // once.
        for cache in [true, false] {
            let one = search(&s, 1, cache);
            assert!(one.failure.is_some(), "{name}: one thread found nothing");
            for jobs in [2, 3] {
                let many = search(&s, jobs, cache);
                assert_eq!(
                    outcome(&one),
                    outcome(&many),
                    "{name} on {jobs} threads, cache {cache}"
                );
            }
        }
    }
}

#[test]
fn two_threads_cover_what_one_thread_covers() {
    for name in ["counter-incr-add", "lock-add", "array2-fixed", "array-cas"] {
        let s = scenario(name);
        let one = search(&s, 1, true);
        let two = search(&s, 2, true);
        assert_eq!(outcome(&one), outcome(&two), "{name}");
        assert!(
            two.stats.complete,
            "{name}: two threads left the tree unfinished"
        );
        assert_eq!(one.distinct_states, two.distinct_states, "{name}");
        assert_eq!(one.verdicts, two.verdicts, "{name}");
        // A thread's cache holds only its own states, and reaches them in another order,
        // so the executions the caches cut differ a little.
        let (a, b) = (one.stats.executions as f64, two.stats.executions as f64);
        assert!(
            (a - b).abs() <= 0.1 * a,
            "{name}: {b} executions on two threads, {a} on one"
        );
    }
}

#[test]
fn without_the_cache_two_threads_run_every_execution_one_thread_runs() {
    for name in ["counter-incr-add", "array2-fixed"] {
        let s = scenario(name);
        let options = |jobs| ExploreOptions {
            max_preemptions: s.bounds.preemptions,
            max_faults: s.bounds.faults,
            cache: false,
            jobs,
            ..ExploreOptions::default()
        };
        let one = mcsim::exhaustive::explore(&s, &options(1), &mut |_| true);
        let two = mcsim::exhaustive::explore(&s, &options(2), &mut |_| true);
        assert!(one.stats.complete && two.stats.complete, "{name}");
        // At the node where the threads part, neither knows what the preemption bound
        // cut in the other's subtrees, so none of those sleeps in its own (in one
        // thread, a subtree the bound cut nothing in lets its first step sleep in the
        // next): two threads run a little more, and where they run another order of
        // steps that commute, the final states may record that order.
        let near = |a: u64, b: u64| a.abs_diff(b) <= a / 100 + 1;
        let (a, b) = (one.stats.executions, two.stats.executions);
        assert!(
            a <= b && near(a, b),
            "{name}: {b} executions on two threads, {a} on one"
        );
        assert!(one.calls <= two.calls, "{name}");
        assert!(
            near(one.distinct_states as u64, two.distinct_states as u64),
            "{name}"
        );
    }
}

#[test]
fn counting_every_failure_counts_the_same_on_two_threads() {
    // Without the cache both searches run exactly the same executions, each once.
    let s = scenario("counter-get-set");
    let options = |jobs| ExploreOptions {
        keep_going: true,
        cache: false,
        jobs,
        ..ExploreOptions::default()
    };
    let one = mcsim::exhaustive::explore(&s, &options(1), &mut |_| true);
    let two = mcsim::exhaustive::explore(&s, &options(2), &mut |_| true);
    assert_eq!(one.stats.executions, two.stats.executions);
    assert_eq!(one.failures, two.failures);
    assert_eq!(one.verdicts, two.verdicts);
    assert_eq!(one.distinct_states, two.distinct_states);
}

#[test]
fn threads_search_with_the_settings_the_caller_changed() {
    // A caller may change a scenario's settings after reading it: every thread of a
    // shared search runs with them, not with the file's. Here the latency window shrinks
    // to one instant, which leaves fewer timing choices than the file's window.
    let mut s = scenario("counter-incr-add");
    let file = mcsim::exhaustive::explore(
        &s,
        &ExploreOptions {
            cache: false,
            ..ExploreOptions::default()
        },
        &mut |_| true,
    );
    s.config.latency_max = s.config.latency_min;
    let options = |jobs| ExploreOptions {
        cache: false,
        jobs,
        ..ExploreOptions::default()
    };
    let one = mcsim::exhaustive::explore(&s, &options(1), &mut |_| true);
    assert_ne!(
        one.stats.executions, file.stats.executions,
        "the change matters"
    );
    for jobs in [2, 3] {
        let many = mcsim::exhaustive::explore(&s, &options(jobs), &mut |_| true);
        assert_eq!(
            one.stats.executions, many.stats.executions,
            "{jobs} threads"
        );
        assert_eq!(one.calls, many.calls, "{jobs} threads");
        assert_eq!(one.distinct_states, many.distinct_states, "{jobs} threads");
    }
}
