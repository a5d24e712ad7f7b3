//! Strategies: who picks the next step of an execution.
//!
//! At every step the engine offers the calls that may execute next (each with the window of
//! virtual time in which it may execute) and the faults the plan still allows. A
//! [`Strategy`] picks one [`Choice`]; the sequence of choices is the [`Schedule`], which
//! replays the execution exactly without the strategy that produced it.
//!
//! One file per strategy: [`random`], [`swarm`], [`pct`], [`pos`], [`replay`]; the
//! exhaustive search's depth-first strategy, with everything the search needs, is
//! [`crate::exhaustive::dfs`].

pub mod pct;
pub mod pos;
pub mod random;
pub mod replay;
mod schedule;
pub mod swarm;

use crate::clock::VirtualTime;
use crate::fault::{Fault, FaultKind};

pub use pct::Pct;
pub use pos::Pos;
pub use random::Random;
pub use replay::Replay;
pub use schedule::{Choice, Schedule, ScheduleError};
pub use swarm::Swarm;

/// A pending call that may execute at this step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOption {
    /// Whose call.
    pub client: usize,
    /// The earliest virtual time it may execute.
    pub earliest: VirtualTime,
    /// The latest.
    pub latest: VirtualTime,
    /// What the call touches, when the strategy asked for footprints.
    pub footprint: Option<Footprint>,
    /// When the strategy explores timing: the instants after `earliest` and up to
    /// `latest` at which running the call can change its outcome (a second begins on
    /// the server it goes to, or on its client's clock), each the first microsecond of
    /// that second, in order.
    pub edges: Vec<VirtualTime>,
}

impl CallOption {
    /// How many microseconds later than `earliest` it may run: the widest delay a
    /// choice can give it.
    pub fn width(&self) -> u64 {
        self.latest.micros() - self.earliest.micros()
    }
}

/// What a pending call touches: for deciding whether two calls commute.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Footprint {
    /// The server it goes to (the first key's, for a read spread over several).
    pub server: usize,
    /// Hashes of its keys (empty for server-wide commands such as `flush_all`).
    pub keys: Vec<u64>,
    /// True if it cannot change what later calls observe (ignoring the LRU).
    pub read_only: bool,
}

impl Footprint {
    /// True if the two calls commute: disjoint keys, or both reads. A key lives on one
    /// server at a time, so keys decide even for a multi-key read spread over several
    /// servers. Server-wide commands (no keys) commute with nothing on their server.
    pub fn commutes_with(&self, other: &Footprint) -> bool {
        if self.read_only && other.read_only {
            return true;
        }
        if self.keys.is_empty() || other.keys.is_empty() {
            return self.server != other.server;
        }
        !self.keys.iter().any(|k| other.keys.contains(k))
    }

    /// True if two steps' calls, by their footprints, give the same outcome in either
    /// order: both footprints known and commuting ([`Footprint::commutes_with`]), and no
    /// store may evict (an eviction makes every pair of steps dependent). A call without
    /// a footprint races with every call. The one rule the exhaustive search's reduction
    /// and partial order sampling both follow.
    pub(crate) fn independent(
        a: Option<&Footprint>,
        b: Option<&Footprint>,
        eviction_possible: bool,
    ) -> bool {
        match (a, b) {
            (Some(x), Some(y)) => !eviction_possible && x.commutes_with(y),
            _ => false,
        }
    }
}

/// A fault that may fire at this step, with the plan's chance for its kind.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultOption {
    /// The fault.
    pub fault: Fault,
    /// The plan's per-step probability for this kind.
    pub probability: f64,
    /// True where this fault is likeliest to matter: a lost request or reply of a call
    /// that would change the server if it ran now (a `set`, an `add` of a missing key, an
    /// `incr` of a present one, …), a pause or death of a client whose last call changed
    /// the server (it may be holding what it wrote). [`Swarm`] prefers these.
    pub aimed: bool,
}

/// Everything a strategy may pick from at one step.
#[derive(Debug, Clone, PartialEq)]
pub struct Options<'a> {
    /// Steps taken so far in this execution.
    pub step: u64,
    /// Number of clients in the execution.
    pub clients: usize,
    /// Calls that may execute now, in client order. Never empty.
    pub calls: &'a [CallOption],
    /// Faults that may fire now.
    pub faults: &'a [FaultOption],
    /// True if the servers can evict by memory pressure right now (memory nearly full):
    /// then calls on different keys do not commute. Computed for a strategy that
    /// [`Needs::footprints`] (the only one it concerns); false for any other.
    pub eviction_possible: bool,
    /// The whole state's fingerprint, when the strategy asked for it
    /// ([`Needs::states`]) and it can be trusted (see the engine's
    /// `fingerprint` module): equal fingerprints have the same future.
    pub state: Option<u64>,
    /// When [`Options::state`] was taken up to a permutation of interchangeable clients
    /// ([`crate::Sim::symmetric`], [`Needs::symmetry`]): each client's place in the
    /// order it was taken in. Equal fingerprints then have the same future with clients
    /// renamed to their places, so what a strategy keeps about clients with a state (a
    /// sleep set, the client that ran last) must be renamed through this.
    pub ranks: Option<&'a [usize]>,
    /// True if [`Options::state`] holds, for some client, the summary of its memory it
    /// declared ([`crate::Client::remember_only`], [`Needs::summaries`]) in place of
    /// everything it observed.
    pub summarized: bool,
}

impl Options<'_> {
    /// The fault options of one kind, in the order offered.
    pub fn faults_of(&self, kind: FaultKind) -> impl Iterator<Item = &FaultOption> + Clone {
        self.faults.iter().filter(move |f| f.fault.kind() == kind)
    }

    /// Fault options grouped by kind, in the fixed kind order.
    pub fn faults_by_kind(&self) -> Vec<(FaultKind, f64, Vec<&Fault>)> {
        FaultKind::ALL
            .into_iter()
            .filter_map(|kind| {
                let first = self.faults_of(kind).next()?;
                Some((
                    kind,
                    first.probability,
                    self.faults_of(kind).map(|f| &f.fault).collect(),
                ))
            })
            .collect()
    }

    /// The call option of a client, if it may execute now.
    pub fn call_of(&self, client: usize) -> Option<&CallOption> {
        self.calls.iter().find(|c| c.client == client)
    }
}

/// What a strategy asks the engine to work out at every step of an execution, beyond
/// the calls that may run: each costs time, so a strategy asks only for what it reads.
/// Asked once when an execution starts ([`Strategy::needs`]); the answer holds for the
/// whole execution.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs {
    /// [`Options::state`], the whole state's fingerprint (a hash of the whole state per
    /// step).
    pub states: bool,
    /// States fingerprinted up to a permutation of interchangeable clients when the model
    /// declares them so ([`crate::Sim::symmetric`]); the strategy then renames clients
    /// through [`Options::ranks`]. Only with `states`.
    pub symmetry: bool,
    /// A client's memory in a state's fingerprint may be the summary the client declares
    /// ([`crate::Client::remember_only`]) instead of everything it observed.
    pub summaries: bool,
    /// [`CallOption::footprint`] (a hash per call).
    pub footprints: bool,
    /// [`CallOption::edges`]: the instants at which a call's outcome can change, and the
    /// execution's phase points ([`crate::exec::Execution::phase_points`]).
    pub timing: bool,
    /// [`Execution::state_hash`](crate::exec::Execution::state_hash) (a pass over every
    /// server's items per execution).
    pub final_state: bool,
}

impl Needs {
    /// Nothing beyond the calls that may run: what sampling strategies need.
    pub const NOTHING: Needs = Needs {
        states: false,
        symmetry: false,
        summaries: false,
        footprints: false,
        timing: false,
        final_state: false,
    };
}

/// A choice a strategy knew before it was offered the step's options
/// ([`Strategy::decided`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    /// The choice.
    pub choice: Choice,
    /// True if the strategy's last execution took this same choice at this same place,
    /// after the same choices: that execution recorded where the step's outcome could
    /// depend on the tick phase ([`crate::exec::Execution::phase_points`]), and a search
    /// adds up every execution's points, so the engine does not look for them again.
    pub repeated: bool,
}

/// Picks the steps of executions.
///
/// Three methods make a strategy: its [`name`](Strategy::name), [`begin`](Strategy::begin)
/// (a new execution) and [`choose`](Strategy::choose) (one of the step's options). The
/// others have defaults a sampling strategy keeps: it needs nothing but the calls
/// ([`Strategy::needs`]), keeps the configured tick phase ([`Strategy::tick_phase`]),
/// decides every step when offered it ([`Strategy::decided`]) and never runs out
/// ([`Strategy::end`]).
pub trait Strategy {
    /// A short name (`random`, `pct`, `replay`).
    fn name(&self) -> &'static str;

    /// Called before each execution.
    fn begin(&mut self, execution: u64);

    /// Picks the next step among `options`, which hold everything [`Strategy::needs`]
    /// asked for, worked out for this step. `None` cuts the execution short: every
    /// continuation is explored elsewhere (a search's reduction); it passes, counted as
    /// pruned.
    fn choose(&mut self, options: &Options<'_>) -> Option<Choice>;

    /// What the options of this execution's steps must hold beyond the calls that may
    /// run. Asked once, after [`Strategy::begin`].
    fn needs(&self) -> Needs {
        Needs::NOTHING
    }

    /// The tick phase this execution's servers run at, asked once after
    /// [`Strategy::begin`]; `None` keeps the configured one. `free` is false when the
    /// scenario pins the phase: a strategy that draws phases then draws none (a replay
    /// still runs at the phase its schedule recorded).
    fn tick_phase(&mut self, _free: bool) -> Option<std::time::Duration> {
        None
    }

    /// The next choice, when the strategy knows it without weighing the step's options:
    /// a search following its path back to the place where it branches. Asked at every
    /// step before the options are worked out; a choice given here is taken (the engine
    /// checks that it fits the step) and [`Strategy::choose`] is not asked, so the
    /// step's state, footprints, edges and faults are not computed for it.
    fn decided(&mut self) -> Option<Decided> {
        None
    }

    /// Called after each execution with its verdict; returns false when the strategy has
    /// nothing left to explore.
    fn end(&mut self, _failed: bool) -> bool {
        true
    }
}
