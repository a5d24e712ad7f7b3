//! One engine per thread, reset in place between executions.
//!
//! An exploration runs hundreds of thousands of executions of the same scenario, each
//! with the same servers and about the same number of clients, checks and steps. Booting
//! servers and allocating the bookkeeping afresh every time cost more than the recipe
//! code itself, and so did moving a new engine's parts in and out of a store of spare
//! ones. So the engine itself stays: an execution takes the thread's engine, resets it in
//! place to exactly the state a new one has (servers booted at time zero, every buffer
//! cleared, every count at zero), and hands it back when it ends. Nothing of an
//! execution's state survives into the next; the buffers keep only their capacity, and
//! the core the clients share is reused only once no client handle refers to it.
//!
//! What follows from the configuration alone (the fault plan, the servers, the budgets)
//! is applied apart ([`Engine::configure`]): by a [`super::Runs`] once for all its
//! executions, which also keeps the engine between them, and by a lone execution each
//! time.

use std::cell::RefCell;
use std::rc::Rc;
use std::thread::LocalKey;

use crate::clock::VirtualTime;
use crate::cluster::Cluster;
use crate::exec::core::Core;
use crate::exec::spin::SpinWatch;
use crate::exec::timer::Timer;
use crate::exec::{ExecConfig, Execution, Sim};
use crate::fault::FaultKind;

use super::observer::{Observed, Observer, Unobserved, swap_emptied};
use super::{Buffers, Checks, Engine, Faults, Limits, Progress};

/// A thread's idle engine of one kind, between executions.
type IdleSlot<O> = RefCell<Option<Box<Engine<O>>>>;

thread_local! {
    static IDLE_UNOBSERVED: IdleSlot<Unobserved> = const { RefCell::new(None) };
    static IDLE_OBSERVED: IdleSlot<Observed> = const { RefCell::new(None) };
}

/// An engine kind the thread keeps one idle engine of.
pub(super) trait Kept: Observer {
    /// The thread's slot for it.
    fn slot() -> &'static LocalKey<IdleSlot<Self>>;
}

impl Kept for Unobserved {
    fn slot() -> &'static LocalKey<IdleSlot<Self>> {
        &IDLE_UNOBSERVED
    }
}

impl Kept for Observed {
    fn slot() -> &'static LocalKey<IdleSlot<Self>> {
        &IDLE_OBSERVED
    }
}

impl<O: Kept> Engine<O> {
    /// The thread's engine of this kind (a new one if an execution already holds it, as
    /// when executions nest), its cluster built for `config`. Boxed: taking it and giving
    /// it back moves a pointer, not the engine.
    pub(super) fn take(config: &ExecConfig) -> Box<Engine<O>> {
        O::slot()
            .with(|idle| idle.borrow_mut().take())
            .unwrap_or_else(|| Box::new(Engine::idle(config)))
    }

    /// Hands the engine back for the thread's next execution.
    pub(super) fn give_back(self: Box<Self>) {
        O::slot().with(|idle| *idle.borrow_mut() = Some(self));
    }
}

impl<O: Observer> Engine<O> {
    /// An engine with nothing registered, as [`Engine::clear`] leaves one.
    fn idle(config: &ExecConfig) -> Engine<O> {
        let mut engine = Engine {
            sim: Sim {
                core: Rc::new(RefCell::new(Core::new())),
                tasks: Vec::new(),
                always: Vec::new(),
                at_end: Vec::new(),
                scripted: Vec::new(),
                ghosts: Vec::new(),
                deaths: Vec::new(),
                holders: Vec::new(),
                symmetric: None,
            },
            live: 0,
            per_client: Vec::new(),
            spin: SpinWatch::default(),
            cluster: Cluster::new(&config.servers, config.distribution),
            timers: Vec::new(),
            timer_seq: 0,
            limits: Limits::default(),
            faults: Faults {
                plan: config.faults.clone(),
                aimed_keys: Default::default(),
                allowed: [0; FaultKind::ALL.len()],
                plan_budget: false,
                liveness: false,
                fired: [0; FaultKind::ALL.len()],
                budget_left: false,
                faults_fired: Vec::new(),
                bitten: [0; FaultKind::ALL.len()],
                bites_pending: Vec::new(),
                follows_keys: false,
                last_keys: None,
            },
            progress: Progress::default(),
            checks: Checks {
                step_checks: 0,
                violated: Vec::new(),
                ended: false,
                held: None,
                stopped: crate::invariant::Verdict::Pass,
                metrics: RefCell::default(),
            },
            buffers: Buffers::default(),
            observer: O::new(),
        };
        engine.faults.adopt_plan();
        engine
    }

    /// The engine's registration, emptied by the last [`Engine::clear`], for a setup
    /// function to fill: the core at time zero with no clients (the engine's own, unless
    /// a client handle of an earlier execution still refers to it).
    pub(super) fn registration(&mut self) -> &mut Sim {
        if Rc::strong_count(&self.sim.core) == 1 && Rc::weak_count(&self.sim.core) == 0 {
            self.sim.core.borrow_mut().reset();
        } else {
            self.sim.core = Rc::new(RefCell::new(Core::new()));
        }
        &mut self.sim
    }

    /// Applies `config`'s settings: the fault plan (and what follows from it, only when
    /// it differs from the last one), the step and time budgets, the latency window,
    /// tracing, and servers built from its settings (the ones in place kept when they
    /// were built from the same). Done once for many executions by a [`super::Runs`].
    pub(super) fn configure(&mut self, config: &ExecConfig) {
        if self.faults.plan != config.faults {
            self.faults.plan = config.faults.clone();
            self.faults.adopt_plan();
        }
        self.observer.configure(config);
        self.limits.max_steps = config.max_steps;
        self.limits.past_violation = config.past_violation;
        self.limits.latency = (
            config.latency_min.as_micros() as u64,
            config.latency_max.as_micros() as u64,
        );
        self.limits.max_time = u64::try_from(config.max_time.as_micros()).unwrap_or(u64::MAX);
        if !self
            .cluster
            .built_from(&config.servers, config.distribution)
        {
            self.cluster = Cluster::new(&config.servers, config.distribution);
        }
    }

    /// Starts an execution of what the setup function registered, under the settings
    /// [`Engine::configure`] applied: every count at zero, the servers booted at time
    /// zero (at tick phase `phase`, where one is given). The result's buffers are the
    /// engine's, empty since the last [`Engine::hand_over`]; the phase points, when
    /// `phase_points` ([`Execution::phase_points`]), are recorded into `out`'s buffer,
    /// taken emptied.
    pub(super) fn begin(
        &mut self,
        out: &mut Execution,
        phase: Option<std::time::Duration>,
        phase_points: bool,
    ) {
        let n = self.sim.tasks.len();
        self.cluster.reset(phase, n as u64);
        self.live = n;
        self.timer_seq = 0;
        if !self.sim.scripted.is_empty() {
            self.schedule_scripted();
        }
        self.per_client.resize(n, super::PerClient::default());
        self.spin.reset(n);
        self.faults.budget_left = self.faults.plan_budget;
        self.faults.begin(n);
        self.observer.begin(out, n, phase_points);
    }

    /// The scripted faults as the execution's first timers, in the order registered.
    fn schedule_scripted(&mut self) {
        self.timers
            .extend(self.sim.scripted.iter().enumerate().map(|(i, (at, f))| {
                (
                    VirtualTime::ZERO + *at,
                    i as u64,
                    Timer::Scripted(f.clone()),
                )
            }));
        self.timer_seq = self.timers.len() as u64;
    }

    /// Hands the result's buffers to `out`, filled, with every invariant's count of
    /// evaluations ([`Execution::checks`]) and the faults' figures
    /// ([`Execution::faults`]), and keeps `out`'s old ones, emptied, for the next
    /// execution.
    pub(super) fn hand_over(&mut self, out: &mut Execution) {
        swap_emptied(&mut out.schedule.choices, &mut self.progress.choices);
        swap_emptied(&mut out.violated, &mut self.checks.violated);
        self.observer.hand_over(out);
        std::mem::swap(&mut out.metrics, self.checks.metrics.get_mut());
        self.checks.metrics.get_mut().clear();
        out.checks.clear();
        for (name, _) in &self.sim.always {
            out.checks.push((name.clone(), self.checks.step_checks));
        }
        for (name, _) in &self.sim.at_end {
            out.checks
                .push((name.clone(), u64::from(self.checks.ended)));
        }
        self.faults.fault_figures(&mut out.faults);
    }

    /// Ends an execution: the clients' futures and the checks are dropped (so that the
    /// core is free to reuse when no client handle outlives them), every buffer is
    /// emptied and every count is back at zero, as [`Engine::idle`] has them. What
    /// follows from the settings (the fault budgets, whether phase points are recorded)
    /// is the next [`Engine::begin`]'s to set.
    pub(super) fn clear(&mut self) {
        self.sim.tasks.clear();
        self.sim.at_end.clear();
        self.sim.always.clear();
        self.sim.scripted.clear();
        self.sim.ghosts.clear();
        self.sim.deaths.clear();
        self.sim.holders.clear();
        self.sim.symmetric = None;
        self.per_client.clear();
        self.buffers.ranks.clear();
        self.timers.clear();
        self.buffers.faults_buf.clear();
        self.faults.bites_pending.clear();
        self.faults.faults_fired.clear();
        self.checks.held = None;
        self.faults.fired = [0; FaultKind::ALL.len()];
        self.faults.bitten = [0; FaultKind::ALL.len()];
        (
            self.progress.step,
            self.progress.calls,
            self.checks.step_checks,
        ) = (0, 0, 0);
        (self.progress.pruned, self.checks.ended) = (false, false);
    }
}
