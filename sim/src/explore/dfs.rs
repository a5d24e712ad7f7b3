//! Exhaustive exploration: every schedule within bounds, each Mazurkiewicz trace at least
//! once, with sleep-set partial-order reduction at memcached granularity.
//!
//! Executions are re-run from the start (stateless model checking, as loom and shuttle
//! do): the strategy keeps the path of choices, replays its prefix, and extends it with
//! the first alternative not yet explored; after each execution it backtracks to the
//! deepest choice point with an alternative left.
//!
//! **Choices.** At each step: run one of the pending calls (at the earliest instant of its
//! latency window), or fire one of the faults the plan still allows. Fault budgets and a
//! preemption bound (switching away from a client that could have continued) bound the
//! tree.
//!
//! **Independence.** Two steps commute when both run calls and the calls go to different
//! servers, touch disjoint keys, or are both reads (`get`, `gets`, a plain `mg`). Every
//! fault depends on every step (a fault can touch several keys: a crash touches all). A
//! server near its memory limit can evict any key on a store, so while
//! [`Options::eviction_possible`] holds every pair of calls is dependent. Reads move
//! items in the LRU, which is only observable through eviction, covered by the same rule.
//!
//! **Sleep sets** (Godefroid 1996): after the subtree of step `a` at a node is explored,
//! `a` sleeps in the later siblings' subtrees until a step dependent on `a` runs; a node
//! whose every alternative sleeps is a redundant interleaving and its execution is cut
//! short. Sound for safety properties provided independent steps neither enable nor
//! disable each other. Here that holds for calls whose latency windows all overlap;
//! with narrow windows, running one call can push virtual time so that another becomes
//! runnable only later, and the reduction may then skip timing-feasible orders. Use a
//! latency window wider than the scenario's call chains (or `--no-reduction`) when a
//! verdict depends on sub-window timing.

use crate::explore::{Choice, Footprint, Options, Strategy};

#[derive(Debug, Clone)]
struct Alt {
    choice: Choice,
    footprint: Option<Footprint>,
    preempts: bool,
}

#[derive(Debug, Clone)]
struct Node {
    alternatives: Vec<Alt>,
    taken: usize,
    explored: Vec<usize>,
    sleep: Vec<Alt>,
    eviction_possible: bool,
    preemptions_before: u32,
}

/// What an exhaustive exploration did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DfsStats {
    /// Executions run to the end.
    pub executions: u64,
    /// Executions cut short because every continuation was a redundant interleaving.
    pub pruned: u64,
    /// The deepest path (steps).
    pub max_depth: usize,
    /// True once every schedule within bounds has been covered.
    pub complete: bool,
    /// Distinct states the visited-state cache holds.
    pub states: u64,
    /// Executions cut short because they reached a state already explored.
    pub revisits: u64,
    /// Alternatives left unexplored because taking them would exceed the preemption
    /// bound: zero means the bound cut nothing, and the search covered every schedule.
    pub cut_by_bound: u64,
}

impl DfsStats {
    /// The chance that two of the cached states share a 64-bit fingerprint (so one was
    /// wrongly taken for the other), as TLC estimates it: n² / 2⁶⁵.
    pub fn collision_chance(&self) -> f64 {
        let n = self.states as f64;
        n * n / 2f64.powi(65)
    }
}

/// How a state was explored the first time: a later visit with at least this much
/// already ruled out (the same previous client, no more preemptions left, a sleep set
/// holding this one) has nothing left to explore.
#[derive(Debug, Clone)]
struct Visit {
    prev_client: Option<usize>,
    /// Preemptions the bound still allowed (`u32::MAX`: unbounded).
    left: u32,
    sleep: Vec<Choice>,
}

impl Visit {
    fn covers(&self, other: &Visit) -> bool {
        self.prev_client == other.prev_client
            && self.left >= other.left
            && self.sleep.iter().all(|c| other.sleep.contains(c))
    }
}

/// Depth-first enumeration of schedules.
#[derive(Debug, Clone)]
pub struct Dfs {
    max_preemptions: Option<u32>,
    reduce: bool,
    path: Vec<Node>,
    pos: usize,
    prev_client: Option<usize>,
    preemptions: u32,
    blocked: bool,
    /// The current execution was cut short at a state already explored.
    revisited: bool,
    cache: bool,
    visited: std::collections::BTreeMap<u64, Visit>,
    stats: DfsStats,
}

impl Dfs {
    /// Exhaustive search; `max_preemptions` bounds context switches away from a client
    /// that could continue; `reduce` turns the sleep-set reduction on.
    pub fn new(max_preemptions: Option<u32>, reduce: bool) -> Dfs {
        Dfs {
            max_preemptions,
            reduce,
            path: Vec::new(),
            pos: 0,
            prev_client: None,
            preemptions: 0,
            blocked: false,
            revisited: false,
            cache: false,
            visited: std::collections::BTreeMap::new(),
            stats: DfsStats::default(),
        }
    }

    /// The same search, expanding each state once: a choice point whose whole state
    /// (its fingerprint, [`Options::state`]) was explored before, with no more ruled
    /// out than now, is not explored again. Sound with the sleep sets because a state's
    /// sleep set is kept with it. States the engine cannot fingerprint are explored as
    /// without the cache.
    pub fn with_cache(mut self, cache: bool) -> Dfs {
        self.cache = cache;
        self
    }

    /// The same search deepened to `max_preemptions`, keeping the states explored so far
    /// (each with the preemptions it had left, so only states now reached with more
    /// budget are explored again): iterative bounding that does not start over.
    pub fn deepen(&mut self, max_preemptions: Option<u32>) {
        self.max_preemptions = max_preemptions;
        self.path.clear();
        let (states, revisits) = (self.stats.states, self.stats.revisits);
        self.stats = DfsStats {
            states,
            revisits,
            ..DfsStats::default()
        };
    }

    /// True if a state already explored covers this node: then it is cut short.
    fn seen_before(&mut self, options: &Options<'_>, node: &Node) -> bool {
        let Some(state) = options.state.filter(|_| self.cache) else {
            return false;
        };
        let visit = Visit {
            prev_client: self.prev_client,
            left: self
                .max_preemptions
                .map_or(u32::MAX, |max| max.saturating_sub(self.preemptions)),
            sleep: node.sleep.iter().map(|a| a.choice.clone()).collect(),
        };
        match self.visited.get(&state) {
            Some(old) if old.covers(&visit) => true,
            Some(old) if !visit.covers(old) => false,
            _ => {
                if self.visited.insert(state, visit).is_none() {
                    self.stats.states += 1;
                }
                false
            }
        }
    }

    /// What the exploration has done so far.
    pub fn stats(&self) -> DfsStats {
        self.stats
    }

    /// True if the current execution reached a node whose every alternative sleeps.
    pub fn blocked(&self) -> bool {
        self.blocked
    }

    fn independent(a: &Alt, b: &Alt, eviction_possible: bool) -> bool {
        match (&a.footprint, &b.footprint) {
            (Some(x), Some(y)) => !eviction_possible && x.commutes_with(y),
            _ => false,
        }
    }

    fn allowed(&self, alt: &Alt, preemptions_before: u32) -> bool {
        match self.max_preemptions {
            Some(max) => !alt.preempts || preemptions_before < max,
            None => true,
        }
    }

    fn new_node(&self, options: &Options<'_>) -> Node {
        let mut alternatives: Vec<Alt> = options
            .calls
            .iter()
            .map(|c| Alt {
                choice: Choice::Run {
                    client: c.client,
                    delay: 0,
                },
                footprint: c.footprint.clone(),
                preempts: self
                    .prev_client
                    .is_some_and(|p| p != c.client && options.call_of(p).is_some()),
            })
            .collect();
        alternatives.extend(options.faults.iter().map(|f| Alt {
            choice: Choice::Fault(f.fault.clone()),
            footprint: None,
            preempts: false,
        }));
        let sleep = match self.path.last() {
            Some(parent) if self.reduce => {
                let taken = &parent.alternatives[parent.taken];
                parent
                    .sleep
                    .iter()
                    .chain(parent.explored.iter().map(|&i| &parent.alternatives[i]))
                    .filter(|s| Self::independent(s, taken, parent.eviction_possible))
                    .cloned()
                    .collect()
            }
            _ => Vec::new(),
        };
        Node {
            alternatives,
            taken: 0,
            explored: Vec::new(),
            sleep,
            eviction_possible: options.eviction_possible,
            preemptions_before: self.preemptions,
        }
    }

    fn next_alternative(&self, node: &Node) -> Option<usize> {
        (0..node.alternatives.len()).find(|&i| {
            !node.explored.contains(&i)
                && !node
                    .sleep
                    .iter()
                    .any(|s| s.choice == node.alternatives[i].choice)
                && self.allowed(&node.alternatives[i], node.preemptions_before)
        })
    }
}

impl Strategy for Dfs {
    fn name(&self) -> &'static str {
        "dfs"
    }

    fn begin(&mut self, _execution: u64) {
        self.pos = 0;
        self.prev_client = None;
        self.preemptions = 0;
        self.blocked = false;
        self.revisited = false;
    }

    fn wants_states(&self) -> bool {
        self.cache
    }

    fn needs_footprints(&self) -> bool {
        self.reduce
    }

    fn wants_final_state(&self) -> bool {
        true
    }

    fn stop_requested(&self) -> bool {
        self.blocked
    }

    fn choose(&mut self, options: &Options<'_>) -> Choice {
        if self.pos == self.path.len() {
            let mut node = self.new_node(options);
            let cut = node
                .alternatives
                .iter()
                .filter(|a| !self.allowed(a, node.preemptions_before))
                .count();
            self.stats.cut_by_bound += cut as u64;
            if self.seen_before(options, &node) {
                self.revisited = true;
            }
            match self.next_alternative(&node).filter(|_| !self.revisited) {
                Some(i) => node.taken = i,
                None => {
                    // Every continuation is covered elsewhere: cut this execution short.
                    self.blocked = true;
                    node.explored = (0..node.alternatives.len()).collect();
                }
            }
            self.path.push(node);
        }
        let node = &self.path[self.pos];
        let alt = &node.alternatives[node.taken];
        if alt.preempts {
            self.preemptions += 1;
        }
        if let Choice::Run { client, .. } = alt.choice {
            self.prev_client = Some(client);
        }
        self.pos += 1;
        self.stats.max_depth = self.stats.max_depth.max(self.pos);
        alt.choice.clone()
    }

    fn end(&mut self, _failed: bool) -> bool {
        if self.revisited {
            self.stats.revisits += 1;
        } else if self.blocked {
            self.stats.pruned += 1;
        } else {
            self.stats.executions += 1;
        }
        self.path.truncate(self.pos);
        while let Some(node) = self.path.last_mut() {
            if !node.explored.contains(&node.taken) {
                node.explored.push(node.taken);
            }
            let node = self.path.last().expect("non-empty");
            if let Some(i) = self.next_alternative(node) {
                self.path.last_mut().expect("non-empty").taken = i;
                return true;
            }
            self.path.pop();
        }
        self.stats.complete = true;
        false
    }
}
