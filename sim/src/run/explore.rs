//! `mcsim explore`: every schedule of a scenario within bounds, by iterative deepening of
//! preemption and fault bounds, over the workload's draws and the servers' tick-phase
//! classes.

use crate::explore::DfsStats;
use crate::scenario::Scenario;

use super::at_phase::search_at_phase;
pub use super::exploration::{ExploreOptions, ExploreReport};
pub use super::phases::{DEFAULT_MAX_PHASES, PhaseCoverage};

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
            capped: false,
        };
        return r;
    }
    super::phase_search::search_phases(scenario, options, seek, progress)
}
