//! What the exhaustive search remembers of a state it expanded: enough to tell whether
//! a later visit has anything left to explore.

use crate::explore::Choice;

/// How a state was explored the first time: a later visit with at least this much
/// already ruled out (the same previous client, no more preemptions left, a sleep set
/// holding this one) has nothing left to explore.
#[derive(Debug, Clone)]
pub(super) struct Visit {
    /// The client that ran last, when switching away from it would be a preemption.
    pub(super) prev_client: Option<usize>,
    /// Preemptions the bound still allowed (`u32::MAX`: unbounded).
    pub(super) left: u32,
    /// Faults the bound still allowed (`u32::MAX`: only the plan's budgets).
    pub(super) faults_left: u32,
    /// What slept there: explored elsewhere.
    pub(super) sleep: Vec<Choice>,
}

impl Visit {
    /// True if this visit explored at least what `other` would.
    pub(super) fn covers(&self, other: &Visit) -> bool {
        self.prev_client == other.prev_client
            && self.left >= other.left
            && self.faults_left >= other.faults_left
            && self.sleep.iter().all(|c| other.sleep.contains(c))
    }

    /// True if this visit should be kept in place of `old`, what was kept of the same
    /// state (if anything): it explored strictly more. Of two visits that each explored
    /// something the other did not, the first is kept.
    pub(super) fn replaces(&self, old: Option<&Visit>) -> bool {
        old.is_none_or(|old| self.covers(old) && !old.covers(self))
    }
}
