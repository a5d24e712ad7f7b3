//! The tagged cache, the dog-pile cache and the online counter let the search merge more
//! states: each operation of their workloads starts afresh (`Client::remember_only`),
//! and the caches' ghost fingerprints keep only what decides the future and the verdict
//! and their clients are interchangeable (`Sim::symmetric`, readers apart from writers).
//! None of that may change what the search finds: over the scenario files of the three
//! families, made small enough for the plain
//! search to finish, the search with those reductions reaches exactly the verdicts of
//! the search without them (no symmetry, every client's whole memory), in fewer
//! executions.

use std::path::Path;

use mcsim::exhaustive::{ExploreOptions, ExploreReport};
use mcsim::scenario::Scenario;
use mcsim_models::RECIPES;

/// `file`, with 3 clients and `sets` making its workload short.
fn small(file: &str, sets: &[&str]) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(format!("{file}.toml"));
    let s = Scenario::load(&path, RECIPES).unwrap_or_else(|e| panic!("{e}"));
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    s.with_set(&sets)
        .and_then(|s| s.with_clients(3))
        .unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn explore(s: &Scenario, reduced: bool) -> ExploreReport {
    let options = ExploreOptions {
        symmetry: reduced,
        summaries: reduced,
        keep_going: true,
        max_executions: Some(300_000),
        max_phases: Some(2),
        max_preemptions: Some(2),
        max_faults: Some(1),
        ..ExploreOptions::default()
    };
    mcsim::exhaustive::explore(s, &options, &mut |_| true)
}

/// Compares the two searches on each of `files` made small by `sets`: the same verdicts,
/// at least `violating` of the files breaking an invariant, and the reduced search running
/// fewer executions on at least `fewer` of them.
fn compare(files: &[&str], sets: &[&str], violating: usize, fewer: usize) {
    let (mut violated, mut cheaper) = (0, 0);
    for file in files {
        let s = small(file, sets);
        let reduced = explore(&s, true);
        assert!(
            reduced.stats.complete,
            "{file}: reduced search not complete"
        );
        assert!(
            reduced.stats.summarized || reduced.stats.states == 0,
            "{file}: no summary used"
        );
        let plain = explore(&s, false);
        assert!(plain.stats.complete, "{file}: plain search not complete");
        assert!(!plain.stats.summarized && !plain.stats.symmetric, "{file}");
        assert_eq!(reduced.verdicts, plain.verdicts, "{file}");
        assert!(
            reduced.stats.executions <= plain.stats.executions,
            "{file}: {} executions reduced, {} plain",
            reduced.stats.executions,
            plain.stats.executions
        );
        eprintln!(
            "{file}: {:?}; {} executions and {} states reduced, {} and {} plain",
            reduced.verdicts,
            reduced.stats.executions,
            reduced.stats.states,
            plain.stats.executions,
            plain.stats.states
        );
        violated += usize::from(reduced.verdicts.iter().any(|v| v != "pass"));
        cheaper += usize::from(reduced.stats.executions < plain.stats.executions);
    }
    assert!(
        violated >= violating,
        "only {violated} searches found a violation"
    );
    assert!(
        cheaper >= fewer,
        "fewer executions in only {cheaper} of {}",
        files.len()
    );
}

#[test]
fn the_tagged_cache_reductions_find_what_the_plain_search_finds() {
    let files = [
        "tags-time",
        "tags-counter",
        "tags-time-evict",
        "tags-counter-evict",
        "tags-time-skew",
        "tags-time-skew-same-version",
    ];
    compare(&files, &["params.reads=12"], 2, 4);
}

#[test]
fn the_dog_pile_cache_reductions_find_what_the_plain_search_finds() {
    let files = [
        "cache-naive",
        "cache-add-lock",
        "cache-get-set-lock",
        "cache-add-lock-evict",
        "cache-add-lock-serve-stale",
        "cache-mg-vivify",
        "cache-mg-vivify-evict",
        "cache-mg-vivify-recache",
    ];
    compare(&files, &["params.requests=6"], 3, 5);
}

#[test]
fn the_online_counter_reductions_find_what_the_plain_search_finds() {
    let files = [
        "online-add",
        "online-set",
        "online-add-skew",
        "online-add-sparse",
        "online-spare-key",
    ];
    compare(&files, &["params.keys=3", "params.minutes=2"], 2, 1);
}

#[test]
fn the_proof_says_the_clients_pasts_were_summarized() {
    let s = small("cache-mg-vivify", &["params.requests=4"]);
    let r = explore(&s, true);
    assert!(
        r.covered(&s).contains("summary its code declares"),
        "{}",
        r.covered(&s)
    );
    let r = explore(&s, false);
    assert!(!r.covered(&s).contains("summary"), "{}", r.covered(&s));
}
