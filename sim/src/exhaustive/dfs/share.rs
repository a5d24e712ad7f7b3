//! One share of a parallel exhaustive search.
//!
//! Every share runs the same depth-first search over the part of the tree above its
//! **split**: the `split`-th node, along each path, where more than one alternative is
//! open. At a split node a share takes only the alternatives it owns (by a hash of the
//! path to them, so that every share agrees without talking to the others) and leaves
//! the rest to the others; below it, it explores everything. Together the shares take
//! every alternative of every split node once, so they cover the tree the single search
//! covers.
//!
//! What the single search would have explored before an alternative still counts as
//! explored there: an alternative left to another share goes into the node's explored
//! list when a later one is taken, so the sleep sets below are the single search's (a
//! call then sleeps past a fault only where this share saw the fault enabled after it,
//! which may keep a little more awake). A node at or above the split is explored only in
//! part, so the visited-state cache never records one; it may still skip one whose state
//! a share explored whole below its split.
//!
//! Depth-first order is the order of [`Dfs::position`]s, so the first counterexample of
//! the single search is the least failing position over the shares: a share may stop once
//! the path it is on comes after a failure another share found.

use std::hash::{Hash, Hasher};

use crate::exec::Fingerprint;

use super::{Dfs, DfsStats, Node};

/// Share `worker` of `workers`, split at the `split`-th branching node of each path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// Which share (from 0).
    pub worker: u32,
    /// How many shares.
    pub workers: u32,
    /// The branching node, counted from the root (from 0), where the shares part.
    pub split: u32,
}

/// Where a node sits in the tree: branching nodes above it, its own branching, and a
/// hash of the path to it.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Place {
    /// Nodes above it with more than one alternative open.
    branchings: u32,
    /// Its alternatives open when it was reached.
    fan: u32,
    /// The alternatives taken on the way to it.
    key: u64,
}

impl Dfs {
    /// The same search restricted to one share of a parallel search (see the module
    /// docs); `None`: the whole tree.
    pub fn with_share(mut self, share: Option<Share>) -> Dfs {
        self.share = share;
        self
    }

    /// The path of the current execution: the alternative taken at each choice point.
    /// Depth-first order is the order of positions.
    pub fn position(&self) -> Vec<usize> {
        self.path[..self.pos.min(self.path.len())]
            .iter()
            .map(|n| n.taken)
            .collect()
    }

    /// Where the search will go next (the path up to the choice point it backtracked to):
    /// every later execution of this search comes at or after it in depth-first order.
    pub fn frontier(&self) -> Vec<usize> {
        self.path.iter().map(|n| n.taken).collect()
    }

    /// Takes in what a share explored: its visited states (each a fact about a state
    /// explored whole) and its counts.
    pub fn absorb(&mut self, share: &Dfs) {
        for (state, visit) in &share.visited {
            if visit.replaces(self.visited.get(state)) {
                self.visited.insert(*state, visit.clone());
            }
        }
        let (a, b) = (&mut self.stats, share.stats);
        *a = DfsStats {
            executions: a.executions + b.executions,
            pruned: a.pruned + b.pruned,
            max_depth: a.max_depth.max(b.max_depth),
            complete: a.complete && b.complete,
            states: self.visited.len() as u64,
            revisits: a.revisits + b.revisits,
            cache_given_up: a.cache_given_up || b.cache_given_up,
            cut_by_bound: a.cut_by_bound + b.cut_by_bound,
            symmetric: a.symmetric || b.symmetric,
            summarized: a.summarized || b.summarized,
        };
    }

    /// Share `share` of this search, from where it stands (its visited states kept),
    /// with its own counts from zero.
    pub fn share_of(&self, share: Share) -> Dfs {
        let mut d = self.clone().with_share(Some(share));
        d.path.clear();
        d.stats = DfsStats {
            max_depth: self.stats.max_depth,
            states: self.stats.states,
            cache_given_up: self.stats.cache_given_up,
            symmetric: self.stats.symmetric,
            ..DfsStats::default()
        };
        d
    }

    /// Readies the search for its shares' counts ([`Dfs::absorb`]): the executions, cuts
    /// and completeness of this search are theirs; the revisits of earlier searches stay.
    pub fn start_shares(&mut self) {
        self.stats.executions = 0;
        self.stats.pruned = 0;
        self.stats.cut_by_bound = 0;
        self.stats.complete = true;
        self.path.clear();
    }

    /// True if the execution that just ran is this share's to count: it passed a split
    /// node (whose share it then is), or it is share 0's (an execution that ends before
    /// its path reaches the split is run by every share and counted once); not if it
    /// stopped at a split node whose open alternatives are all other shares'.
    pub fn owns_execution(&self) -> bool {
        match self.share {
            None => true,
            Some(_) if self.parted => false,
            Some(s) => {
                s.worker == 0
                    || self.path[..self.pos.min(self.path.len())]
                        .iter()
                        .any(|n| n.place.branchings == s.split && n.place.fan > 1)
            }
        }
    }

    /// True if `node` is a split node with alternatives open, none of them this share's.
    pub(super) fn parted_at(&self, node: &Node) -> bool {
        self.splits_at(node).is_some()
            && (0..node.alternatives.len()).any(|i| self.open(node, i) && !self.owns(node, i))
    }

    pub(super) fn place_of(&self, node: &Node) -> Place {
        let fan = (0..node.alternatives.len())
            .filter(|&i| self.open(node, i))
            .count() as u32;
        match self.path.last() {
            None => Place {
                branchings: 0,
                fan,
                key: Fingerprint::default().finish(),
            },
            Some(parent) => {
                let mut h = Fingerprint::resume(parent.place.key);
                parent.taken.hash(&mut h);
                Place {
                    branchings: parent.place.branchings + u32::from(parent.place.fan > 1),
                    fan,
                    key: h.finish(),
                }
            }
        }
    }

    /// True if this search explores the node whole: no share, or a node below the split.
    pub(super) fn whole(&self, place: &Place) -> bool {
        self.share.is_none_or(|s| place.branchings > s.split)
    }

    fn splits_at(&self, node: &Node) -> Option<Share> {
        self.share
            .filter(|s| node.place.branchings == s.split && node.place.fan > 1)
    }

    /// True if alternative `i` of `node` is this share's to explore.
    pub(super) fn owns(&self, node: &Node, i: usize) -> bool {
        match self.splits_at(node) {
            None => true,
            Some(s) => {
                let mut h = Fingerprint::resume(node.place.key);
                i.hash(&mut h);
                h.finish() % u64::from(s.workers.max(1)) == u64::from(s.worker)
            }
        }
    }

    /// Takes alternative `i` at `node`; at a split node, what the single search would
    /// have explored before it, left to other shares, counts as explored.
    pub(super) fn take(&self, node: &mut Node, i: usize) {
        if self.splits_at(node).is_some() {
            for j in 0..i {
                if self.open(node, j) && !self.owns(node, j) {
                    // Another share's: explored there, with what its bound cut unknown
                    // here.
                    node.explored.push(j);
                    if self.bounded() {
                        node.cut_explored.push(j);
                    }
                }
            }
        }
        node.taken = i;
    }
}
