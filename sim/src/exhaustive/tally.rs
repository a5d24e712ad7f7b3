//! What the executions of a search add up to, one thread's or one share's.

use super::dfs::DfsStats;
use crate::exec::Execution;

use super::exploration::{ExploreOptions, ExploreReport};
use super::phases::PhaseCoverage;
use crate::run::Finding;

/// What the executions of one search add up to: one thread's, or one share's of a search
/// shared over threads.
#[derive(Default)]
pub(super) struct Tally {
    states: std::collections::BTreeSet<u64>,
    verdicts: std::collections::BTreeSet<String>,
    phase_points: std::collections::BTreeSet<u32>,
    calls: u64,
    /// Steps of every execution run, cut short ones included: what finding cost.
    pub(super) steps: u64,
    pub(super) failures: u64,
}

impl Tally {
    /// Counts execution `e`, which is this tally's when `owned` (a shared search runs
    /// some executions on every thread and counts them on one). Where it could depend on
    /// the tick phase always counts: it decides which phases are searched next. Returns
    /// true if it ran to the end and failed.
    pub(super) fn add(&mut self, e: &Execution, owned: bool) -> bool {
        self.phase_points.extend(e.phase_points.iter().copied());
        self.steps += e.steps;
        if !owned {
            return false;
        }
        self.calls += e.calls;
        if e.pruned {
            return false;
        }
        if let Some(hash) = e.state_hash {
            self.states.insert(hash);
        }
        self.verdicts.insert(e.verdict.label());
        let failed = !e.verdict.is_pass();
        self.failures += u64::from(failed);
        failed
    }

    /// Takes in another tally (a share's).
    pub(super) fn absorb(&mut self, other: Tally) {
        self.states.extend(other.states);
        self.verdicts.extend(other.verdicts);
        self.phase_points.extend(other.phase_points);
        self.calls += other.calls;
        self.steps += other.steps;
        self.failures += other.failures;
    }

    /// The report of a search within `options`' bounds that ended with `stats`.
    pub(super) fn report(
        self,
        options: &ExploreOptions,
        stats: DfsStats,
        failure: Option<Finding>,
        interrupted: bool,
    ) -> ExploreReport {
        ExploreReport {
            stats,
            distinct_states: self.states.len(),
            verdicts: self.verdicts,
            preemptions_searched: options.max_preemptions,
            faults_searched: options.max_faults,
            draws_searched: 1,
            failure,
            failures: self.failures,
            calls: self.calls,
            interrupted,
            phases: PhaseCoverage::default(),
            phase_points: self.phase_points,
        }
    }
}
