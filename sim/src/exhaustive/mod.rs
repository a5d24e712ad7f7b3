//! The exhaustive search, all of it (`mcsim explore`): every schedule of a scenario within
//! bounds, by iterative deepening of preemption and fault bounds, over the workload's draws
//! and the servers' tick-phase classes.
//!
//! It owns, from the bottom up:
//! - [`dfs`]: the depth-first strategy, with sleep-set reduction, its visited-state cache
//!   and the split of its tree into shares;
//! - `at_phase`: one search at one tick phase, the bounds deepened one by one;
//! - `shares`: one search on several threads;
//! - `phases` and `phase_search`: the tick-phase classes and the search over them;
//! - `tally` and `exploration`: what the executions add up to, what a search is asked
//!   ([`ExploreOptions`]) and what it reports ([`ExploreReport`]).
//!
//! It runs executions only through [`crate::exec::Runs`] and judges them only through
//! [`crate::run`]'s failure packaging (shrinking, the replayed timeline); it never reads
//! the wall clock except for the elapsed time it reports.

mod at_phase;
pub mod dfs;
mod exploration;
mod phase_search;
mod phases;
mod shares;
mod tally;

use crate::scenario::Scenario;

use at_phase::search_at_phase;
pub use dfs::{Dfs, DfsStats};
pub use exploration::{ExploreOptions, ExploreReport};
pub use phases::{PHASE_BUDGET, PHASE_FLOOR, PhaseClasses, PhaseCoverage, PhaseLimit};

/// Explores every schedule of a scenario within bounds, stopping at the first failure.
/// `progress` is called after each execution; returning false stops the exploration.
pub fn explore(
    scenario: &Scenario,
    options: &ExploreOptions,
    progress: &mut dyn FnMut(&DfsStats) -> bool,
) -> ExploreReport {
    explore_seeking(scenario, options, None, progress)
}

/// [`explore`], looking for the violation `seek` (a scenario's expected verdict): other
/// violations found on the way are counted in the report's verdicts and the search goes
/// on; it stops at the first `seek`. Without one, the first other violation is reported.
///
/// When the scenario leaves the tick phase free, the search runs once per tick-phase
/// class ([`PhaseCoverage`]), two classes at a time on two jobs, with the report one job
/// gives; otherwise at the pinned phase.
pub fn explore_seeking(
    scenario: &Scenario,
    options: &ExploreOptions,
    seek: Option<&str>,
    progress: &mut dyn FnMut(&DfsStats) -> bool,
) -> ExploreReport {
    if !scenario.config.phase_free {
        let mut r = search_at_phase(scenario, options, seek, None, progress);
        let pinned = scenario
            .config
            .servers
            .first()
            .map_or(0, |c| c.phase.as_micros() as u32);
        r.phases = PhaseCoverage {
            pinned: Some(pinned),
            searched: vec![pinned],
            classes: 1,
            all: true,
            stopped: None,
        };
        return r;
    }
    phase_search::search_phases(scenario, options, seek, progress)
}
