//! The deterministic executor of virtual clients.
//!
//! Each client is a future running recipe code against a [`Client`] handle. Every
//! memcached call and every sleep is a point where the engine takes control: the
//! [`crate::explore::Strategy`] picks which pending call the server executes next (and
//! when, inside the call's latency window), or which fault fires. Virtual time only moves
//! when a call executes or when nothing can run before the next sleeper's deadline, so an
//! hour of simulated traffic costs no real time. One thread, no wall clock, no thread RNG:
//! the same setup and the same choices give the same execution, byte for byte.
//!
//! A recipe that spins (repeats the same calls with the same replies while nothing can
//! change, or sleeps for no time in a loop) ends the execution as a livelock at once, and
//! so does one that goes round a cycle of server states (see `cycle`); one still busy
//! when the step or time budget runs out, without spinning, is `stuck` (see `spin`); a panic in recipe code is caught and reported with the step.
//! A client that loops forever without awaiting anything cannot be interrupted by a
//! single-threaded engine; recipes must await a call or a sleep in every loop.

mod client;
mod core;
mod cycle;
mod engine;
mod ghost;
mod spin;
mod timer;

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

pub use client::Client;
pub use cycle::Cycle;
pub use engine::{KeyState, MAX_EDGES, Runs, Stored, execute};
pub use ghost::Fingerprint;

use crate::clock::{Skew, VirtualTime};
use crate::cluster::Distribution;
use crate::explore::Schedule;
use crate::fault::{Fault, FaultPlan};
use crate::invariant::{EndCheck, EndView, Failure, StepCheck, Verdict};
use crate::memcache::McError;
use crate::server::ServerConfig;
use crate::trace::Trace;

/// The settings of executions: servers, latencies, budgets, faults.
#[derive(Debug, Clone)]
pub struct ExecConfig {
    /// The servers.
    pub servers: Vec<ServerConfig>,
    /// How keys map to servers.
    pub distribution: Distribution,
    /// Shortest time between issuing a call and the server executing it.
    pub latency_min: Duration,
    /// Longest.
    pub latency_max: Duration,
    /// Steps (choices) after which an unfinished execution is a livelock.
    pub max_steps: u64,
    /// Virtual time after which an unfinished execution is a livelock.
    pub max_time: Duration,
    /// The faults executions may suffer.
    pub faults: FaultPlan,
    /// Record the timeline (off for speed; a failure is replayed with it on).
    pub trace: bool,
    /// True if the servers' tick phase is free: `random` and `pct` then draw one per
    /// execution and `dfs` searches its classes; false pins every server to the phase in
    /// its [`ServerConfig`]. A replayed schedule that carries a phase runs at it either way.
    pub phase_free: bool,
    /// Run on past the first step check's violation to the execution's end, that
    /// violation staying the verdict, so the end checks record their metrics (by how much
    /// it broke: how long two holders overlapped, not only that they did). A step check
    /// that failed is not asked again: its name is recorded and the verdict held. For
    /// measuring (`mcsim findings`); a search, a gate and a replay stop at the violation.
    pub past_violation: bool,
}

impl Default for ExecConfig {
    fn default() -> ExecConfig {
        ExecConfig {
            servers: vec![ServerConfig::default()],
            distribution: Distribution::default(),
            latency_min: Duration::from_micros(100),
            latency_max: Duration::from_micros(500),
            max_steps: 100_000,
            max_time: Duration::from_secs(3600),
            faults: FaultPlan::none(),
            trace: true,
            phase_free: true,
            past_violation: false,
        }
    }
}

type Task = Pin<Box<dyn Future<Output = Result<(), McError>>>>;

/// What a setup function registers for one execution: clients and invariants.
pub struct Sim {
    core: Rc<RefCell<core::Core>>,
    tasks: Vec<Option<Task>>,
    always: Vec<(Cow<'static, str>, StepCheck)>,
    at_end: Vec<(Cow<'static, str>, EndCheck)>,
    scripted: Vec<(Duration, Fault)>,
    ghosts: Vec<ghost::GhostHash>,
    deaths: Vec<DeathHook>,
    /// Who holds what ([`Sim::holders`]): ghost state the engine hashes itself, by client
    /// or, under [`Sim::symmetric`], by membership.
    holders: Vec<Holders>,
    /// The per-client ghost state of interchangeable clients ([`Sim::symmetric`]).
    symmetric: Option<ghost::ClientGhostHash>,
}

/// What a model runs when a client's process dies ([`Sim::on_death`]).
pub(crate) type DeathHook = Box<dyn Fn(usize)>;

impl Sim {
    /// Adds a client whose clock is off by `skew`, running the future `body` builds.
    pub fn client<F, Fut>(&mut self, skew: Skew, body: F) -> usize
    where
        F: FnOnce(Client) -> Fut,
        Fut: Future<Output = Result<(), McError>> + 'static,
    {
        let id = self.core.borrow_mut().add_client(skew);
        let handle = Client::new(id, self.core.clone());
        self.tasks.push(Some(Box::pin(body(handle))));
        id
    }

    /// Number of clients so far.
    pub fn clients(&self) -> usize {
        self.tasks.len()
    }

    /// A fault that fires when virtual time reaches `at`, in every execution (not a
    /// strategy choice): evictions, crashes, clock skips and servers leaving the list.
    pub fn fault_at(&mut self, at: Duration, fault: Fault) {
        self.scripted.push((at, fault));
    }

    /// An invariant checked after every step.
    pub fn always(
        &mut self,
        name: impl Into<Cow<'static, str>>,
        check: impl Fn() -> Result<(), Failure> + 'static,
    ) {
        self.always.push((name.into(), Box::new(check)));
    }

    /// Ghost state the explorer must tell apart: `hash` feeds everything of the harness's
    /// own bookkeeping that can change what clients do next or what an invariant says
    /// (`move |h| inside.borrow().hash(h)`). Two states with the same servers, clients
    /// and ghost fingerprint are one state; a model that keeps ghost state and registers
    /// none lets the explorer merge states its invariants tell apart.
    ///
    /// Feed what decides the future and the verdicts, and leave out what only measures
    /// (counts of hits, the longest wait, a failure's details): every field fed splits
    /// states that differ only in the past. A value a client reads from ghost state and
    /// acts on after an `.await` is its own state, not the ghost's: the client
    /// [`Client::remember`]s it.
    pub fn ghost(&mut self, hash: impl Fn(&mut Fingerprint) + 'static) {
        self.ghosts.push(Box::new(hash));
    }

    /// Declares the clients interchangeable, for the exhaustive search's symmetry
    /// reduction: two states that differ only by which client is which (among clients
    /// of the same clock skew) are one state, so `n` identical clients cost about as
    /// many states as their multiset instead of every ordering of it (as TLC's symmetry
    /// sets and stateright's representatives do).
    ///
    /// `per_client` feeds the ghost state of one client (`move |c, h|
    /// inside.borrow().contains(&c).hash(h)`); [`Sim::holders`] is taken care of.
    ///
    /// What the model promises: every client runs the same code and nothing it does
    /// depends on its index (no client number in a value it writes, a key it picks, or a
    /// choice it makes) except through what `per_client` feeds (a writer's role and
    /// index, feeding which keeps writers apart while the readers stay interchangeable);
    /// every [`Sim::ghost`] hashes no client number (a count, not a set of clients);
    /// invariants do not single out a client. Break the promise and the
    /// search may merge states that differ, and miss a violation: test the model with
    /// and without (`mcsim explore --no-symmetry`) on a broken variant. A scenario that
    /// scripts a fault at one client searches without symmetry.
    pub fn symmetric(&mut self, per_client: impl Fn(usize, &mut Fingerprint) + 'static) {
        self.symmetric = Some(Box::new(per_client));
    }

    /// Runs `hook` with a client's index when its process dies ([`FaultPlan::deaths`]).
    ///
    /// A dying client's future is dropped where it stands: code after its pending
    /// `.await` never runs, so ghost state it was about to undo stays as it was (a
    /// "holder" that never leaves, a permit never given back) and an invariant over it
    /// would blame the recipe for what only the harness's bookkeeping did. Undo that
    /// state here. The hook runs after the future is dropped (its `Drop` guards have
    /// run) and before the next invariant check. [`Holders`] does this for the common
    /// case of who is inside a critical section.
    pub fn on_death(&mut self, hook: impl Fn(usize) + 'static) {
        self.deaths.push(Box::new(hook));
    }

    /// Who holds a lock or a permit: a ghost set of clients that forgets a client when
    /// it dies and is part of the explorer's state ([`Sim::ghost`]). Clients
    /// [`Holders::enter`] and [`Holders::leave`]; invariants read [`Holders::count`].
    pub fn holders(&mut self) -> Holders {
        let holders = Holders::default();
        let dying = holders.clone();
        self.on_death(move |c| dying.leave(c));
        self.holders.push(holders.clone());
        holders
    }

    /// Keeps only the invariants whose name `keep` accepts (a check's `only`).
    pub(crate) fn retain_invariants(&mut self, keep: impl Fn(&str) -> bool) {
        self.always.retain(|(name, _)| keep(name));
        self.at_end.retain(|(name, _)| keep(name));
    }

    /// An invariant checked at quiescence.
    pub fn at_end(
        &mut self,
        name: impl Into<Cow<'static, str>>,
        check: impl Fn(&EndView<'_>) -> Result<(), Failure> + 'static,
    ) {
        self.at_end.push((name.into(), Box::new(check)));
    }
}

/// The clients inside a critical section (or holding a permit), as the harness sees
/// them: made by [`Sim::holders`], which empties a client's place when it dies.
#[derive(Debug, Clone, Default)]
pub struct Holders {
    inside: Rc<RefCell<std::collections::BTreeSet<usize>>>,
}

impl Holders {
    /// `client` is inside.
    pub fn enter(&self, client: usize) {
        self.inside.borrow_mut().insert(client);
    }

    /// `client` left (or never was inside).
    pub fn leave(&self, client: usize) {
        self.inside.borrow_mut().remove(&client);
    }

    /// How many clients are inside.
    pub fn count(&self) -> usize {
        self.inside.borrow().len()
    }

    /// True if `client` is inside.
    pub fn contains(&self, client: usize) -> bool {
        self.inside.borrow().contains(&client)
    }

    /// The clients inside, in order.
    pub fn clients(&self) -> Vec<usize> {
        self.inside.borrow().iter().copied().collect()
    }
}

/// One step of an execution, as `mcsim confirm` replays it.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A client's call reached a server (or was lost on the way, as `fault` says).
    Call {
        /// The step.
        step: u64,
        /// When the server executed it.
        time: crate::clock::VirtualTime,
        /// When the client made it.
        issued: crate::clock::VirtualTime,
        /// Whose call.
        client: usize,
        /// The server it went to (the first key's).
        server: usize,
        /// Each key's server, in key order, for a multi-key read spread over several
        /// servers ([`Spread`](crate::cluster::Spread)); empty for every other call.
        owners: Vec<usize>,
        /// The request.
        request: crate::protocol::Request,
        /// What the server answered, or the transport failure.
        outcome: Result<crate::protocol::Reply, crate::memcache::Transport>,
        /// A fault on this call: its request or reply lost, its value too large.
        fault: Option<crate::fault::Fault>,
    },
    /// A fault of the world: an eviction, a crash, a clock jump, a pause.
    Fault {
        /// The step.
        step: u64,
        /// When.
        time: crate::clock::VirtualTime,
        /// Which.
        fault: crate::fault::Fault,
    },
}

/// The result of one execution.
#[derive(Debug, Clone)]
pub struct Execution {
    /// Which execution of the strategy this was.
    pub index: u64,
    /// The outcome.
    pub verdict: Verdict,
    /// The choices made: replays this execution.
    pub schedule: Schedule,
    /// The timeline (empty unless tracing was on).
    pub trace: Trace,
    /// Every call and fault in order, structured (empty unless tracing was on): what
    /// `mcsim confirm` replays against a real memcached.
    pub events: Vec<Event>,
    /// What the keys the calls named held over time (empty unless tracing was on): the
    /// strip under the lanes of the HTML timeline.
    pub key_states: Vec<KeyState>,
    /// Metrics recorded by end checks.
    pub metrics: BTreeMap<String, f64>,
    /// Steps taken.
    pub steps: u64,
    /// Calls the servers executed.
    pub calls: u64,
    /// Virtual time at the end.
    pub end_time: VirtualTime,
    /// A hash of every server's live items and the model's ghost state ([`Sim::ghost`])
    /// at the end, when the strategy asks for it
    /// ([`Needs::final_state`](crate::explore::Needs::final_state)).
    pub state_hash: Option<u64>,
    /// Cut short by the strategy as a redundant interleaving (no verdict of its own).
    pub pruned: bool,
    /// Every invariant that failed: the verdict's, and any other that failed at the same
    /// step (a step check) or at the end (an end check); empty for a pass.
    pub violated: Vec<Cow<'static, str>>,
    /// Per fault kind that fired: how many times, and how many of those bit (changed
    /// what a later call saw; see the engine's `bites`).
    pub faults: Vec<(crate::fault::FaultKind, u32, u32)>,
    /// Every invariant with the times it was evaluated (a step check at every step, an
    /// end check once if the execution got to its end).
    pub checks: Vec<(Cow<'static, str>, u64)>,
    /// The tick phase the strategy ran the servers at, when it chose one (the schedule
    /// carries it too); `None`: the configured phase.
    pub phase: Option<Duration>,
    /// Where in a second (µs after each server's boot, mod 1 s) this execution's outcome
    /// could depend on the tick phase: instants of calls whose result reads the server's
    /// clock, from clients whose timing does not follow a tick edge. Filled in only for a
    /// strategy that explores timing, on servers whose phase is free (a scenario that
    /// pins `servers.phase_ms` has one phase to search); the phase classes `dfs` searches
    /// are the intervals between these points.
    pub phase_points: Vec<u32>,
}

impl Default for Execution {
    /// An empty result (a pass with nothing run): what [`Runs::execute_into`] fills in.
    fn default() -> Execution {
        Execution {
            index: 0,
            verdict: Verdict::Pass,
            schedule: Schedule::default(),
            trace: Trace::default(),
            events: Vec::new(),
            key_states: Vec::new(),
            metrics: BTreeMap::new(),
            steps: 0,
            calls: 0,
            end_time: VirtualTime::ZERO,
            state_hash: None,
            pruned: false,
            violated: Vec::new(),
            faults: Vec::new(),
            checks: Vec::new(),
            phase: None,
            phase_points: Vec::new(),
        }
    }
}
