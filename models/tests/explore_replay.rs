//! A search following its path back to where it branches ([`Strategy::decided`]) skips
//! the state fingerprint, footprints and edges of those steps: the same search with
//! every step decided afresh explores exactly the same executions.

mod support;

use mcsim::exec::execute;
use mcsim::exhaustive::{Dfs, DfsStats};
use mcsim::explore::{Choice, Needs, Options, Strategy};

/// The search itself, but never telling the engine that a choice is already made.
struct Deciding(Dfs);

impl Strategy for Deciding {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn begin(&mut self, execution: u64) {
        self.0.begin(execution)
    }
    fn choose(&mut self, options: &Options<'_>) -> Option<Choice> {
        self.0.choose(options)
    }
    fn needs(&self) -> Needs {
        self.0.needs()
    }
    fn tick_phase(&mut self, free: bool) -> Option<std::time::Duration> {
        self.0.tick_phase(free)
    }
    fn end(&mut self, failed: bool) -> bool {
        self.0.end(failed)
    }
}

/// The executions of one search of `name` at `clients`, in order (verdict, final state,
/// steps), and their steps in all.
fn search(name: &str, clients: usize, strategy: &mut dyn Strategy) -> (Vec<String>, u64) {
    let s = support::load(name).with_clients(clients).unwrap();
    let mut config = s.config.clone();
    config.trace = false;
    let mut seen = Vec::new();
    let mut steps = 0;
    // The first executions of each search (all of the small ones): enough to follow
    // paths back many times, at a cost a debug build runs in seconds.
    for i in 0..1_500 {
        let e = execute(&config, &*s.setup, strategy, i);
        steps += e.steps;
        seen.push(format!(
            "{} {:?} {}",
            e.verdict.label(),
            e.state_hash,
            e.steps
        ));
        if !strategy.end(!e.verdict.is_pass()) {
            break;
        }
    }
    (seen, steps)
}

fn dfs() -> Dfs {
    Dfs::new(Some(2), true)
        .with_cache(true)
        .with_timing(true)
        .with_symmetry(true)
}

#[test]
fn skipping_the_replayed_steps_changes_no_execution() {
    for (name, clients) in [
        ("counter-incr-add", 3),
        ("lock-add", 3),
        ("tags-time", 4),
        ("cache-mg-vivify", 4),
        ("lock-add-holder-pause", 2),
    ] {
        let mut replaying = dfs();
        let (fast, fast_steps) = search(name, clients, &mut replaying);
        let mut deciding = Deciding(dfs());
        let (slow, slow_steps) = search(name, clients, &mut deciding);
        assert!(fast.len() > 1, "{name}: one execution only");
        let first_apart = fast.iter().zip(&slow).position(|(a, b)| a != b);
        assert_eq!(first_apart, None, "{name}: executions differ");
        assert_eq!(fast.len(), slow.len(), "{name}");
        assert_eq!(fast_steps, slow_steps, "{name}");
        let (a, b): (DfsStats, DfsStats) = (replaying.stats(), deciding.0.stats());
        assert_eq!(a, b, "{name}");
        assert!(a.states > 0, "{name}: the cache held nothing");
    }
}
