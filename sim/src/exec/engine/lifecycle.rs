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

use crate::clock::VirtualTime;
use crate::cluster::Cluster;
use crate::exec::core::Core;
use crate::exec::spin::SpinWatch;
use crate::exec::timer::Timer;
use crate::exec::{ExecConfig, Execution, Sim};
use crate::fault::FaultKind;
use crate::trace::Trace;

use super::Engine;

thread_local! {
    /// The thread's engine between executions (boxed: taking it and giving it back
    /// moves a pointer, not the engine).
    static IDLE: RefCell<Option<Box<Engine>>> = const { RefCell::new(None) };
}

impl Engine {
    /// The thread's engine (a new one if an execution already holds it, as when
    /// executions nest), its cluster built for `config`.
    pub(super) fn take(config: &ExecConfig) -> Box<Engine> {
        IDLE.with(|idle| idle.borrow_mut().take())
            .unwrap_or_else(|| Box::new(Engine::idle(config)))
    }

    /// Hands the engine back for the thread's next execution.
    pub(super) fn give_back(self: Box<Self>) {
        IDLE.with(|idle| *idle.borrow_mut() = Some(self));
    }

    /// An engine with nothing registered, as [`Engine::clear`] leaves one.
    fn idle(config: &ExecConfig) -> Engine {
        let mut engine = Engine {
            plan: config.faults.clone(),
            aimed_keys: Default::default(),
            tracing: false,
            max_steps: 0,
            past_violation: false,
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
            ranks: Vec::new(),
            cluster: Cluster::new(&config.servers, config.distribution),
            per_client: Vec::new(),
            timers: Vec::new(),
            timer_seq: 0,
            fired: [0; FaultKind::ALL.len()],
            allowed: [0; FaultKind::ALL.len()],
            latency: (0, 0),
            max_time: 0,
            budget_left: false,
            last_keys: None,
            bitten: [0; FaultKind::ALL.len()],
            bites_pending: Vec::new(),
            step_checks: 0,
            faults_fired: Vec::new(),
            choices: Vec::new(),
            trace: Trace::default(),
            events: Vec::new(),
            metrics: RefCell::default(),
            step: 0,
            calls: 0,
            pruned: false,
            calls_buf: Vec::new(),
            extras_in_options: false,
            faults_buf: Vec::new(),
            spin: SpinWatch::default(),
            key_watch: super::watch::KeyWatch::default(),
            key_states: Vec::new(),
            phase_points: None,
            repeating: false,
            violated: Vec::new(),
            ended: false,
            held: None,
            stopped: crate::invariant::Verdict::Pass,
            plan_budget: false,
            liveness: false,
        };
        engine.adopt_plan();
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
        if self.plan != config.faults {
            self.plan = config.faults.clone();
            self.adopt_plan();
        }
        (self.tracing, self.max_steps) = (config.trace, config.max_steps);
        self.past_violation = config.past_violation;
        self.latency = (
            config.latency_min.as_micros() as u64,
            config.latency_max.as_micros() as u64,
        );
        self.max_time = u64::try_from(config.max_time.as_micros()).unwrap_or(u64::MAX);
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
        self.budget_left = self.plan_budget;
        // A pause or death aimed at keys follows the keys of each client's last call.
        if self.aimed_keys[FaultKind::Pause as usize].is_some()
            || self.aimed_keys[FaultKind::Die as usize].is_some()
        {
            self.last_keys = Some(vec![Vec::new(); n]);
        }
        // Taken by the last `hand_over`: `None` here unless this execution records them.
        if phase_points {
            self.phase_points = Some(emptied(&mut out.phase_points));
        }
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

    /// What follows from the fault plan alone, worked out when the plan changes, not at
    /// every execution: the keys each kind aims at, each kind's budget, and whether any
    /// budget is above zero. One pass over the plan's rules, the first rule of a kind
    /// counting (as `FaultPlan::rule` finds it), so the last written here.
    fn adopt_plan(&mut self) {
        self.aimed_keys = super::faults::aimed_keys(&self.plan);
        self.allowed = [0; FaultKind::ALL.len()];
        for (kind, rule) in self.plan.rules.iter().rev() {
            self.allowed[*kind as usize] = rule.max;
        }
        self.plan_budget = self.allowed.iter().any(|&max| max > 0);
        self.liveness =
            self.plan.rule(FaultKind::Pause).is_some() || self.plan.rule(FaultKind::Die).is_some();
    }

    /// Hands the result's buffers to `out`, filled, with every invariant's count of
    /// evaluations ([`Execution::checks`]) and the faults' figures
    /// ([`Execution::faults`]), and keeps `out`'s old ones, emptied, for the next
    /// execution.
    pub(super) fn hand_over(&mut self, out: &mut Execution) {
        swap_emptied(&mut out.schedule.choices, &mut self.choices);
        swap_emptied(&mut out.violated, &mut self.violated);
        swap_emptied(&mut out.trace.lines, &mut self.trace.lines);
        swap_emptied(&mut out.events, &mut self.events);
        swap_emptied(&mut out.key_states, &mut self.key_states);
        std::mem::swap(&mut out.metrics, self.metrics.get_mut());
        self.metrics.get_mut().clear();
        match self.phase_points.take() {
            Some(points) => out.phase_points = points,
            None => out.phase_points.clear(),
        }
        out.checks.clear();
        for (name, _) in &self.sim.always {
            out.checks.push((name.clone(), self.step_checks));
        }
        for (name, _) in &self.sim.at_end {
            out.checks.push((name.clone(), u64::from(self.ended)));
        }
        self.fault_figures(&mut out.faults);
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
        self.ranks.clear();
        self.timers.clear();
        self.faults_buf.clear();
        self.bites_pending.clear();
        self.faults_fired.clear();
        self.key_watch.clear();
        self.last_keys = None;
        self.held = None;
        self.fired = [0; FaultKind::ALL.len()];
        self.bitten = [0; FaultKind::ALL.len()];
        (self.step, self.calls, self.step_checks) = (0, 0, 0);
        (self.pruned, self.ended) = (false, false);
    }
}

/// Hands `mine`, filled, to `theirs`, and keeps `theirs`'s buffer, emptied, for the next
/// execution: one swap per execution, the result's old content dropped as it comes back.
fn swap_emptied<T>(theirs: &mut Vec<T>, mine: &mut Vec<T>) {
    std::mem::swap(theirs, mine);
    mine.clear();
}

/// `v`'s buffer, emptied, leaving an empty vector in its place.
fn emptied<T>(v: &mut Vec<T>) -> Vec<T> {
    let mut v = std::mem::take(v);
    v.clear();
    v
}
