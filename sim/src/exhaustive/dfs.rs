//! Exhaustive exploration: every schedule within bounds, each Mazurkiewicz trace at least
//! once, with sleep-set partial-order reduction at memcached granularity.
//!
//! Executions are re-run from the start (stateless model checking, as loom and shuttle
//! do): the strategy keeps the path of choices, replays its prefix, and extends it with
//! the first alternative not yet explored; after each execution it backtracks to the
//! deepest choice point with an alternative left.
//!
//! **Choices.** At each step: run one of the pending calls (at the earliest instant of its
//! latency window and, with [`Dfs::with_timing`], at the first instant of each second the
//! window crosses on its server or its client's clock), or fire one of the faults the
//! plan still allows. Fault budgets, a
//! fault bound (faults per execution, [`Dfs::with_max_faults`]) and a preemption bound
//! (switching away from a client that could have continued) bound the tree.
//!
//! **Independence.** Two steps commute when neither is a fault of the same budget or a
//! step of the same client, and they touch disjoint keys, or go to different servers
//! when one is server-wide, or are both reads (`get`, `gets`, a plain `mg`). A fault has
//! a footprint too: evicting key K touches K on its server (as a write); losing a request
//! or a reply, or a value over the item limit, runs that client's pending call and touches
//! its keys; a client's death only that client. Crashes, pauses, clock jumps and a server
//! leaving touch everything.
//! A server near its memory limit can evict any key on a store, so while
//! [`Options::eviction_possible`] holds every pair of steps is dependent. Reads move
//! items in the LRU, which is only observable through eviction, covered by the same rule.
//!
//! **Sleep sets** (Godefroid 1996): after the subtree of step `a` at a node is explored,
//! `a` sleeps in the later siblings' subtrees until a step dependent on `a` runs; a node
//! whose every alternative sleeps is a redundant interleaving and its execution is cut
//! short. Sound for safety properties provided independent steps neither enable nor
//! disable each other. Calls never disable another client's call, but a call can disable
//! a fault (the last call ends the execution; moving virtual time can let a key expire):
//! a sibling call is put to sleep past a fault only where its own subtree showed the
//! fault still enabled after it. For calls, the timing caveat remains: with narrow
//! latency windows, running one call can push virtual time so that another becomes
//! runnable only later, and the reduction may then skip timing-feasible orders. Use a
//! latency window wider than the scenario's call chains (or `--no-reduction`) when a
//! verdict depends on sub-window timing.
//!
//! **Sleep sets under a preemption bound.** A step asleep stands for the orders in which
//! it runs first, which the subtree where it did run first covered. A preemption bound
//! breaks that when it cut something in that subtree: an order the bound admits from the
//! sibling may be equivalent only to orders the bound cut there (moving a step to the
//! front can cost two preemptions), and would be missed (Coons, Musuvathi, McKinley,
//! "Bounded partial-order reduction", OOPSLA 2013). So a step sleeps only if the bound
//! cut nothing in its explored subtree: a node knows whether it cut one of its
//! alternatives that no sleep set covers, and tells its parent as it is left; the cache
//! keeps it with each state, for the visits cut short there. The reduction is weaker
//! where the bound bites, and sound. The fault bound needs none of this: every order of
//! the same steps has as many faults.
//!
//! **Visited states and symmetry.** With [`Dfs::with_cache`] each state (its fingerprint,
//! [`Options::state`]) is expanded once, and again only when reached with more left to
//! explore; its sleep set and last client are kept with it. With
//! [`Dfs::with_symmetry`], for a model that declares its clients interchangeable
//! ([`crate::Sim::symmetric`]), the engine takes the fingerprint with the clients in a
//! canonical order and gives each client's place ([`Options::ranks`]): the sleep set and
//! the last client are kept by place, so a state reached again with its clients renamed
//! is recognised with what was ruled out there (as TLC's symmetry sets do). With
//! [`Dfs::with_summaries`], a client that declared what it still remembers
//! ([`crate::Client::remember_only`]) is told apart by that, not by all it observed.
//!
//! **Shares.** A search can be split over threads ([`Dfs::with_share`], [`Share`]): each
//! takes, at the split node of each path, the alternatives a hash of the path gives it,
//! and together they cover the tree one search covers (`mcsim::run`'s explore runs them
//! and keeps the earliest counterexample in depth-first order, [`Dfs::position`]).

mod cache;
use cache::Visit;
mod share;

pub use share::Share;

use crate::explore::{Choice, Decided, Footprint, Needs, Options, Strategy};
use crate::fault::Fault;
use crate::trace::fnv1a;

/// What the reduction assumes, said beside every "no violation" it took part in.
pub const REDUCTION_CAVEAT: &str = "reduction: sleep sets; two steps on different keys are taken to give the same outcome in either order, though each order runs them at its own virtual instants (a TTL boundary between those instants is explored only with --no-reduction)";

#[derive(Debug, Clone)]
struct Alt {
    choice: Choice,
    /// What the step touches; `None`: it depends on every step.
    footprint: Option<Footprint>,
    /// The client whose pending call the step runs (a call, or a fault that runs it).
    client: Option<usize>,
    /// A fault: it uses the plan's budget, so it depends on every other fault.
    fault: bool,
    /// It touches no key and no server, only its own client (a client's death).
    private: bool,
    preempts: bool,
}

#[derive(Debug, Clone)]
struct Node {
    alternatives: Vec<Alt>,
    taken: usize,
    explored: Vec<usize>,
    sleep: Vec<Alt>,
    /// For each alternative explored: the choices enabled right after it (empty when
    /// the execution ended there). A fault stays asleep past a call only if the call
    /// left it enabled: the last call of an execution, or one that lets a key expire,
    /// disables faults it does not otherwise touch.
    enabled_after: Vec<(usize, Vec<Choice>)>,
    eviction_possible: bool,
    /// The preemption bound left an alternative here unexplored that no sleep set
    /// covers.
    cut_here: bool,
    /// The preemption bound cut something in the subtree of the alternative taken now.
    cut_below: bool,
    /// Explored alternatives whose subtree the preemption bound cut: they never sleep in
    /// a later sibling's subtree, which would take them as covered where they were not.
    cut_explored: Vec<usize>,
    /// The state kept for this node in the visited-state cache, if any.
    state: Option<u64>,
    preemptions_before: u32,
    faults_before: u32,
    /// Where the node sits, for a share of a parallel search ([`Share`]).
    place: share::Place,
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
    /// True if the cache turned itself off: its first [`Dfs::CACHE_TRIAL`] states cut no
    /// execution short (every path reached states of its own, so fingerprints only cost).
    pub cache_given_up: bool,
    /// Alternatives left unexplored because taking them would exceed the preemption or
    /// the fault bound: zero means the bounds cut nothing, and the search covered every
    /// schedule.
    pub cut_by_bound: u64,
    /// True if states were kept up to a permutation of interchangeable clients
    /// ([`Dfs::with_symmetry`]): the model declared them so and the search used it.
    pub symmetric: bool,
    /// True if some state kept a client's memory as the summary the client declared
    /// ([`Dfs::with_summaries`], [`crate::Client::remember_only`]).
    pub summarized: bool,
}

impl DfsStats {
    /// Executions run, those cut short included: what an execution cap counts.
    pub fn work(&self) -> u64 {
        self.executions + self.pruned + self.revisits
    }

    /// The chance that two of the cached states share a 64-bit fingerprint (so one was
    /// wrongly taken for the other), as TLC estimates it: n² / 2⁶⁵.
    pub fn collision_chance(&self) -> f64 {
        let n = self.states as f64;
        n * n / 2f64.powi(65)
    }
}

/// Depth-first enumeration of schedules.
#[derive(Debug, Clone)]
pub struct Dfs {
    max_preemptions: Option<u32>,
    max_faults: Option<u32>,
    reduce: bool,
    path: Vec<Node>,
    pos: usize,
    prev_client: Option<usize>,
    preemptions: u32,
    faults: u32,
    blocked: bool,
    /// The current execution was cut short at a state already explored.
    revisited: bool,
    cache: bool,
    /// States are kept up to a permutation of interchangeable clients.
    symmetry: bool,
    /// A client's memory is the summary it declares.
    summaries: bool,
    timing: bool,
    /// Which draw of the workload (`k` of `n`): each client's first call runs at `k/n` of
    /// its latency window, which seeds what a workload draws from its start time.
    draw: (u32, u32),
    /// Clients that ran a step in this execution.
    started: Vec<bool>,
    /// The tick phase every execution of this search runs at (`None`: the scenario's).
    phase: Option<std::time::Duration>,
    visited: std::collections::BTreeMap<u64, Visit>,
    stats: DfsStats,
    /// This search's share of a parallel search (`None`: the whole tree).
    share: Option<Share>,
    /// The current execution stopped at a split node whose open alternatives are all
    /// other shares' ([`Share`]).
    parted: bool,
}

impl Dfs {
    /// Exhaustive search; `max_preemptions` bounds context switches away from a client
    /// that could continue; `reduce` turns the sleep-set reduction on.
    pub fn new(max_preemptions: Option<u32>, reduce: bool) -> Dfs {
        Dfs {
            max_preemptions,
            max_faults: None,
            reduce,
            path: Vec::new(),
            pos: 0,
            prev_client: None,
            preemptions: 0,
            faults: 0,
            blocked: false,
            revisited: false,
            cache: false,
            symmetry: false,
            summaries: false,
            timing: false,
            phase: None,
            draw: (0, 1),
            started: Vec::new(),
            visited: std::collections::BTreeMap::new(),
            stats: DfsStats::default(),
            share: None,
            parted: false,
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

    /// The same search, keeping states up to a permutation of interchangeable clients
    /// when the model declares them so ([`crate::Sim::symmetric`]): `n` identical clients
    /// then cost about as many states as their multiset, not every ordering of it. Only
    /// with the cache, whose states it merges.
    pub fn with_symmetry(mut self, symmetry: bool) -> Dfs {
        self.symmetry = symmetry;
        self
    }

    /// The same search, telling a client's states apart by the summary of its memory it
    /// declares ([`crate::Client::remember_only`]) rather than by everything it observed.
    /// Only with the cache, whose states it merges.
    pub fn with_summaries(mut self, summaries: bool) -> Dfs {
        self.summaries = summaries;
        self
    }

    /// The same search, trying each call also at the first instant of each second its
    /// latency window crosses (on its server or its client's clock), not only at the
    /// earliest instant ([`CallOption::edges`](crate::explore::CallOption::edges)).
    pub fn with_timing(mut self, timing: bool) -> Dfs {
        self.timing = timing;
        self
    }

    /// Searches draw `k` of `n` from now on: each client's first call at `k/n` of its
    /// latency window instead of its earliest instant. Workloads that seed their draws
    /// from when they start (arrival times, sessions) then draw another set.
    pub fn set_draw(&mut self, k: u32, n: u32) {
        self.draw = (k, n.max(1));
        self.path.clear();
    }

    /// The same search with every execution at tick phase `phase` (`None`: the
    /// scenario's).
    pub fn with_phase(mut self, phase: Option<std::time::Duration>) -> Dfs {
        self.phase = phase;
        self
    }

    /// The same search with at most `max_faults` faults per execution (`None`: only the
    /// fault plan's budgets bound them).
    pub fn with_max_faults(mut self, max_faults: Option<u32>) -> Dfs {
        self.max_faults = max_faults;
        self
    }

    /// The same search deepened to `max_preemptions` and `max_faults`, keeping the states
    /// explored so far (each with the preemptions and faults it had left, so only states
    /// now reached with more budget are explored again): iterative bounding that does not
    /// start over.
    pub fn deepen(&mut self, max_preemptions: Option<u32>, max_faults: Option<u32>) {
        self.max_preemptions = max_preemptions;
        self.max_faults = max_faults;
        self.path.clear();
        let (states, revisits) = (self.stats.states, self.stats.revisits);
        self.stats = DfsStats {
            states,
            revisits,
            cache_given_up: self.stats.cache_given_up,
            ..DfsStats::default()
        };
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
        if (a.fault && b.fault) || (a.client.is_some() && a.client == b.client) {
            return false;
        }
        if a.private || b.private {
            return true;
        }
        Footprint::independent(
            a.footprint.as_ref(),
            b.footprint.as_ref(),
            eviction_possible,
        )
    }

    /// True if a preemption bound may leave orders unexplored.
    fn bounded(&self) -> bool {
        self.max_preemptions.is_some()
    }

    fn allowed(&self, alt: &Alt, node: &Node) -> bool {
        self.preemption_ok(alt, node) && self.fault_ok(alt, node)
    }

    fn preemption_ok(&self, alt: &Alt, node: &Node) -> bool {
        self.max_preemptions
            .is_none_or(|max| !alt.preempts || node.preemptions_before < max)
    }

    fn fault_ok(&self, alt: &Alt, node: &Node) -> bool {
        self.max_faults
            .is_none_or(|max| !alt.fault || node.faults_before < max)
    }

    /// True if the preemption bound leaves an alternative of `node` unexplored that no
    /// sleep set covers. The fault bound does not count: every order of the same steps
    /// has as many faults, so what it cuts is cut in every order alike.
    fn cuts_orders(&self, node: &Node) -> bool {
        (node.alternatives.iter()).any(|a| {
            !self.preemption_ok(a, node)
                && self.fault_ok(a, node)
                && !node.sleep.iter().any(|s| s.choice == a.choice)
        })
    }

    fn new_node(&self, options: &Options<'_>) -> Node {
        let mut alternatives: Vec<Alt> = Vec::new();
        for c in options.calls {
            let preempts = self
                .prev_client
                .is_some_and(|p| p != c.client && options.call_of(p).is_some());
            let first = !self.started.get(c.client).copied().unwrap_or(false);
            let start = match self.draw {
                (k, n) if first && k > 0 => {
                    let span = c.latest.since(c.earliest).as_micros() as u64;
                    c.earliest
                        + std::time::Duration::from_micros(span * u64::from(k) / u64::from(n))
                }
                _ => c.earliest,
            };
            let edges = c.edges.iter().copied().filter(|e| *e > start);
            let instants = std::iter::once(start).chain(edges);
            for at in instants {
                alternatives.push(Alt {
                    choice: Choice::Run {
                        client: c.client,
                        delay: at.since(c.earliest).as_micros() as u64,
                    },
                    footprint: c.footprint.clone(),
                    client: Some(c.client),
                    fault: false,
                    private: false,
                    preempts,
                });
            }
        }
        alternatives.extend(options.faults.iter().map(|f| {
            let (footprint, client) = fault_footprint(&f.fault, options);
            Alt {
                choice: Choice::Fault(f.fault.clone()),
                footprint,
                client,
                fault: true,
                private: matches!(f.fault, Fault::Die { .. }),
                preempts: false,
            }
        }));
        let sleep = match self.path.last() {
            Some(parent) if self.reduce => Self::sleep_after(parent),
            _ => Vec::new(),
        };
        let mut node = Node {
            alternatives,
            taken: 0,
            explored: Vec::new(),
            sleep,
            enabled_after: Vec::new(),
            eviction_possible: options.eviction_possible,
            cut_here: false,
            cut_below: false,
            cut_explored: Vec::new(),
            state: None,
            preemptions_before: self.preemptions,
            faults_before: self.faults,
            place: share::Place::default(),
        };
        node.place = self.place_of(&node);
        node
    }

    /// The sleep set of `parent`'s child through its taken step `b`: what slept at the
    /// parent and each alternative explored there before `b`, if independent of `b`,
    /// and only if `b` is still enabled after it (so the order with it first exists).
    /// Calls never disable other clients' calls; a call may disable a fault, which is
    /// known for the parent's explored alternatives (their children were seen) and not
    /// for what slept at the parent, so a sleeping call does not pass a fault. An
    /// alternative whose subtree the bounds cut does not sleep either: the orders it
    /// stands for were not all explored.
    fn sleep_after(parent: &Node) -> Vec<Alt> {
        let b = &parent.alternatives[parent.taken];
        let inherited = parent.sleep.iter().filter(|s| !b.fault || s.fault);
        let covered = (parent.explored.iter()).filter(|i| !parent.cut_explored.contains(i));
        let explored = covered.filter_map(|&i| {
            let a = &parent.alternatives[i];
            let b_survives = !b.fault
                || a.fault
                || parent
                    .enabled_after
                    .iter()
                    .any(|(j, after)| *j == i && after.contains(&b.choice));
            b_survives.then_some(a)
        });
        inherited
            .chain(explored)
            .filter(|s| Self::independent(s, b, parent.eviction_possible))
            .cloned()
            .collect()
    }

    /// True if alternative `i` of `node` is still to explore here: not explored, not
    /// asleep, within the bounds (whoever's share it is in).
    fn open(&self, node: &Node, i: usize) -> bool {
        !node.explored.contains(&i)
            && !node
                .sleep
                .iter()
                .any(|s| s.choice == node.alternatives[i].choice)
            && self.allowed(&node.alternatives[i], node)
    }

    fn next_alternative(&self, node: &Node) -> Option<usize> {
        (0..node.alternatives.len()).find(|&i| self.open(node, i) && self.owns(node, i))
    }

    /// Takes the path's choice at the current position: counts what it spends of the
    /// bounds, notes the client that ran, and moves on.
    fn follow(&mut self) -> Choice {
        let node = &self.path[self.pos];
        let alt = &node.alternatives[node.taken];
        if alt.preempts {
            self.preemptions += 1;
        }
        if alt.fault {
            self.faults += 1;
        }
        if let Choice::Run { client, .. } = alt.choice {
            self.prev_client = Some(client);
        }
        if let Some(c) = alt.client {
            if self.started.len() <= c {
                self.started.resize(c + 1, false);
            }
            self.started[c] = true;
        }
        self.pos += 1;
        self.stats.max_depth = self.stats.max_depth.max(self.pos);
        alt.choice.clone()
    }
}

/// What a fault touches, and whose pending call it runs. Evicting a key touches that key
/// (as a write: it changes what a later read of the key sees); losing a request or a
/// reply, or sending a value over the item limit, runs that client's pending call and
/// touches what the call touches (as a write, since the client sees an error). A
/// client's death touches only that client. Other faults (crashes, restarts, pauses,
/// clock jumps, a server leaving the ring) touch everything.
fn fault_footprint(fault: &Fault, options: &Options<'_>) -> (Option<Footprint>, Option<usize>) {
    match fault {
        Fault::Evict { server, key } => (
            Some(Footprint {
                server: *server,
                keys: vec![fnv1a(key.as_bytes())],
                read_only: false,
            }),
            None,
        ),
        Fault::Die { client } => (None, Some(*client)),
        Fault::ReplyLost { client }
        | Fault::RequestLost { client }
        | Fault::TooLarge { client } => {
            let call = options.calls.iter().find(|c| c.client == *client);
            let footprint = call.and_then(|c| c.footprint.clone()).map(|f| Footprint {
                read_only: false,
                ..f
            });
            (footprint, Some(*client))
        }
        _ => (None, None),
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
        self.faults = 0;
        self.started.clear();
        self.blocked = false;
        self.revisited = false;
        self.parted = false;
    }

    fn needs(&self) -> Needs {
        Needs {
            states: self.cache && !self.stats.cache_given_up,
            symmetry: self.symmetry,
            summaries: self.summaries,
            footprints: self.reduce,
            timing: self.timing,
            final_state: true,
        }
    }

    fn tick_phase(&mut self, _free: bool) -> Option<std::time::Duration> {
        self.phase
    }

    /// Following the path to the place where the search branches again: its
    /// alternatives were weighed when the path was first taken.
    fn decided(&mut self) -> Option<Decided> {
        (self.pos < self.path.len()).then(|| {
            // The last node of the path takes an alternative no execution has taken yet.
            let repeated = self.pos + 1 < self.path.len();
            Decided {
                choice: self.follow(),
                repeated,
            }
        })
    }

    fn choose(&mut self, options: &Options<'_>) -> Option<Choice> {
        if self.pos == self.path.len() {
            let mut node = self.new_node(options);
            if self.reduce
                && let Some(parent) = self.path.last_mut()
            {
                let after = node.alternatives.iter().map(|a| a.choice.clone()).collect();
                parent.enabled_after.push((parent.taken, after));
            }
            let cut = node
                .alternatives
                .iter()
                .filter(|a| !self.allowed(a, &node))
                .count();
            self.stats.cut_by_bound += cut as u64;
            node.cut_here = self.cuts_orders(&node);
            if let Some(cut) = self.seen_before(options, &mut node) {
                // What the earlier visit left unexplored is left here too.
                node.cut_here |= cut;
                self.revisited = true;
            }
            match self.next_alternative(&node).filter(|_| !self.revisited) {
                Some(i) => self.take(&mut node, i),
                None => {
                    // Every continuation is covered elsewhere: cut this execution short.
                    self.parted = !self.revisited && self.parted_at(&node);
                    self.blocked = true;
                    node.explored = (0..node.alternatives.len()).collect();
                }
            }
            self.path.push(node);
        }
        let choice = self.follow();
        (!self.blocked).then_some(choice)
    }

    fn end(&mut self, _failed: bool) -> bool {
        if !self.owns_execution() {
            // Another share's to count.
        } else if self.revisited {
            self.stats.revisits += 1;
        } else if self.blocked {
            self.stats.pruned += 1;
        } else {
            self.stats.executions += 1;
        }
        if self.pos < self.path.len() {
            // The execution ended before the path did: what lay beyond is unexplored.
            self.path.truncate(self.pos);
            if let Some(node) = self.path.last_mut() {
                node.cut_below = true;
            }
        }
        while let Some(node) = self.path.last_mut() {
            if !node.explored.contains(&node.taken) {
                node.explored.push(node.taken);
            }
            if node.cut_below && !node.cut_explored.contains(&node.taken) {
                node.cut_explored.push(node.taken);
            }
            node.cut_below = false;
            let node = self.path.last().expect("non-empty");
            if let Some(i) = self.next_alternative(node) {
                let mut node = self.path.pop().expect("non-empty");
                self.take(&mut node, i);
                self.path.push(node);
                return true;
            }
            let node = self.path.pop().expect("non-empty");
            let cut = node.cut_here || !node.cut_explored.is_empty();
            self.cut_state(&node, cut);
            if let Some(parent) = self.path.last_mut() {
                parent.cut_below |= cut;
            }
        }
        self.stats.complete = true;
        false
    }
}
