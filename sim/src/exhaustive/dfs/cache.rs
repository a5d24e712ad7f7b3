//! The visited-state cache of the exhaustive search: a state expanded once is not
//! expanded again unless reached with more left to explore.

use crate::explore::{Choice, Options};

use super::{Dfs, Node};

impl Dfs {
    /// States the cache keeps before it judges whether it pays: if none of them cut an
    /// execution short, it turns itself off ([`DfsStats::cache_given_up`](super::DfsStats::cache_given_up)).
    pub const CACHE_TRIAL: u64 = 1_000;

    /// If a state already explored covers this node (then it is cut short): whether the
    /// preemption bound cut anything below it there (true while that is not known yet). Otherwise
    /// the node's state is kept, as [`Node::state`] says.
    pub(super) fn seen_before(&mut self, options: &Options<'_>, node: &mut Node) -> Option<bool> {
        if self.stats.states >= Self::CACHE_TRIAL && self.stats.revisits == 0 {
            self.stats.cache_given_up = true;
        }
        let state = options
            .state
            .filter(|_| self.cache && !self.stats.cache_given_up)?;
        // A state before the clients' first calls looks the same in every draw, and its
        // future does not: the draw is part of it.
        let state = state ^ u64::from(self.draw.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // Under symmetry the state was taken with its clients in canonical order: what
        // is kept about clients is kept by their places in it.
        let rename = |c: usize| options.ranks.map_or(c, |r| r[c]);
        self.stats.symmetric |= options.ranks.is_some();
        self.stats.summarized |= options.summarized;
        let visit = Visit {
            // Who ran last matters only to the preemption bound, and only while it can
            // run on (switching away from it is then a preemption).
            prev_client: self
                .max_preemptions
                .and(self.prev_client)
                .filter(|&p| options.call_of(p).is_some())
                .map(&rename),
            left: self
                .max_preemptions
                .map_or(u32::MAX, |max| max.saturating_sub(self.preemptions)),
            faults_left: self
                .max_faults
                .map_or(u32::MAX, |max| max.saturating_sub(self.faults)),
            sleep: node
                .sleep
                .iter()
                .map(|a| a.choice.relabeled(rename))
                .collect(),
            cut: None,
        };
        let old = self.visited.get(&state);
        if let Some(old) = old.filter(|old| old.covers(&visit)) {
            return Some(old.cut.unwrap_or(true));
        }
        // A share explores the nodes at and above its split only in part.
        if visit.replaces(old) && self.whole(&node.place) {
            node.state = Some(state);
            if self.visited.insert(state, visit).is_none() {
                self.stats.states += 1;
            }
        }
        None
    }

    /// The subtree of `node`, explored, had something cut by the preemption bound (`cut`): kept
    /// with its state, for the visits that will be cut short there.
    pub(super) fn cut_state(&mut self, node: &Node, cut: bool) {
        if let Some(visit) = node.state.and_then(|s| self.visited.get_mut(&s))
            && visit.cut.is_none()
        {
            visit.cut = Some(cut);
        }
    }

    /// Turns the cache off as if its trial had failed (a search started again on several
    /// threads, after the cache gave up on one).
    pub fn give_up_cache(&mut self) {
        self.stats.cache_given_up = true;
    }
}

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
    /// Whether the preemption bound cut anything in the subtree explored from there (`None` until
    /// it has been explored).
    pub(super) cut: Option<bool>,
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
