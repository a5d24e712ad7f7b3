//! The step loop of one execution.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::clock::VirtualTime;
use crate::cluster::Cluster;
use crate::exec::core::Core;
use crate::exec::spare::{Spare, emptied};
use crate::exec::spin::SpinWatch;
use crate::exec::timer::Timer;
use crate::exec::{ExecConfig, Execution, Sim, Task};
use crate::explore::{CallOption, Choice, FaultOption, Options, Schedule, Strategy};
use crate::fault::{Fault, FaultKind};
use crate::invariant::Verdict;
use crate::memcache::{Key, Transport};
use crate::trace::{Actor, Trace};

mod bites;
mod call;
mod edges;
mod ending;
mod inject;
mod options;
pub use edges::MAX_EDGES;
mod faults;
mod fingerprint;
mod phase;
mod poll;
mod timers;
mod watch;
pub use watch::{KeyState, Stored};

/// Runs one execution: `setup` registers clients and invariants, `strategy` makes every
/// choice. `index` tells the strategy which execution this is.
pub fn execute(
    config: &ExecConfig,
    setup: &dyn Fn(&mut Sim),
    strategy: &mut dyn Strategy,
    index: u64,
) -> Execution {
    let mut spare = Spare::take();
    let mut sim = Sim::reusing(&mut spare);
    setup(&mut sim);
    strategy.begin(index);
    let phase = strategy.tick_phase(config.phase_free);
    let mut engine = Engine::new(config, sim, &mut spare);
    if let Some(phase) = phase {
        engine.cluster.set_phase(phase);
    }
    engine.phase_points = (strategy.explores_timing() && config.phase_free).then(Vec::new);
    let mut core = engine.core.borrow_mut();
    (core.observing, core.tracing) = (strategy.wants_states(), config.trace);
    core.summaries = strategy.summaries();
    drop(core);
    let verdict = engine.run(strategy);
    let state_hash = strategy.wants_final_state().then(|| engine.fingerprint());
    let end_time = engine.core.borrow().now;
    let execution = Execution {
        pruned: engine.pruned,
        phase,
        phase_points: engine.phase_points.take().unwrap_or_default(),
        violated: std::mem::take(&mut engine.violated),
        faults: engine.fault_figures(),
        checks: engine.checks(),
        state_hash,
        index,
        verdict,
        schedule: Schedule {
            phase: phase.map(|p| p.as_micros() as u32),
            choices: std::mem::take(&mut engine.choices),
        },
        trace: std::mem::take(&mut engine.trace),
        events: std::mem::take(&mut engine.events),
        key_states: std::mem::take(&mut engine.key_states),
        metrics: std::mem::take(&mut engine.metrics),
        steps: engine.step,
        calls: engine.calls,
        end_time,
    };
    spare.steps = execution.schedule.choices.len();
    engine.recycle(&mut spare);
    spare.give_back();
    execution
}

/// `n` false flags, in the spare vector's room.
fn flags(spare: &mut Vec<bool>, n: usize) -> Vec<bool> {
    let mut v = std::mem::take(spare);
    v.clear();
    v.resize(n, false);
    v
}

/// A cluster for these settings at time zero: the spare one reset, or a new one.
fn boot_cluster(config: &ExecConfig, spare: Option<Cluster>) -> Cluster {
    match spare {
        Some(mut c) if c.built_from(&config.servers, config.distribution) => {
            c.reset();
            c
        }
        _ => Cluster::new(&config.servers, config.distribution),
    }
}

struct Engine<'c> {
    config: &'c ExecConfig,
    core: Rc<RefCell<Core>>,
    tasks: Vec<Option<Task>>,
    /// How many of `tasks` are still running ([`Engine::end_task`] counts them down).
    live: usize,
    always: Vec<(Cow<'static, str>, crate::invariant::StepCheck)>,
    ghosts: Vec<crate::exec::ghost::GhostHash>,
    /// Who holds what ([`Sim::holders`]).
    holders: Vec<crate::exec::Holders>,
    /// The per-client ghost state of interchangeable clients ([`Sim::symmetric`]).
    symmetric: Option<crate::exec::ghost::ClientGhostHash>,
    /// Each client's place in the canonical order of the last state fingerprint taken
    /// under symmetry (a buffer kept across steps).
    ranks: Vec<usize>,
    /// What the model runs when a client dies ([`Sim::on_death`]).
    deaths: Vec<crate::exec::DeathHook>,
    at_end: Vec<(Cow<'static, str>, crate::invariant::EndCheck)>,
    cluster: Cluster,
    /// A timeout to hand a client when its sleep ends (lost request or reply).
    deferred: Vec<Option<Transport>>,
    /// Timed events in the world: restarts, rejoins, scripted faults.
    timers: Vec<(VirtualTime, u64, Timer)>,
    timer_seq: u64,
    /// Per kind (in [`FaultKind::ALL`]'s order, `kind as usize`), the faults fired so
    /// far: the figures, the state fingerprint and, against `allowed`, the budgets left.
    fired: [u32; FaultKind::ALL.len()],
    /// Per kind, how many the plan allows.
    allowed: [u32; FaultKind::ALL.len()],
    /// The latency window's bounds in whole microseconds, as virtual time counts them
    /// (converted once: adding a `Duration` converts it at every use).
    latency: (u64, u64),
    /// The time budget in whole microseconds ([`ExecConfig::max_time`]).
    max_time: u64,
    /// Some kind's budget is not spent yet: the fault options are worth building at the
    /// next step (kept beside `fired`, checked at every step).
    budget_left: bool,
    /// The keys of each client's last call, kept only when a pause or death is aimed at
    /// keys (a client sleeping after a call on them may be hit).
    last_keys: Option<Vec<Vec<Key>>>,
    /// Whether each client's last executed call changed the server (a pause or death
    /// of that client is aimed: [`crate::explore::FaultOption::aimed`]).
    wrote_last: Vec<bool>,
    /// Per kind, how many of the faults fired bit ([`bites`]).
    bitten: [u32; FaultKind::ALL.len()],
    /// Faults that have not bitten yet.
    bites_pending: Vec<bites::Pending>,
    /// Times the step checks ran.
    step_checks: u64,
    faults_fired: Vec<(u64, Fault)>,
    choices: Vec<Choice>,
    trace: Trace,
    /// Every call and fault, structured (only when tracing).
    events: Vec<crate::exec::Event>,
    metrics: BTreeMap<String, f64>,
    step: u64,
    calls: u64,
    pruned: bool,
    /// The call options of the current step (a buffer kept across steps).
    calls_buf: Vec<CallOption>,
    /// The fault options of the current step (a buffer kept across steps).
    faults_buf: Vec<FaultOption>,
    /// Tells a spin from a wait.
    spin: SpinWatch,
    /// Keys whose state the timeline shows, with their servers (only when tracing).
    watched: Vec<watch::Watched>,
    /// Their states over time (only when tracing).
    key_states: Vec<KeyState>,
    /// Where in a second the outcome could depend on the tick phase (only when the
    /// strategy explores timing; see [`Execution::phase_points`]).
    phase_points: Option<Vec<u32>>,
    /// Clients whose timing follows a tick edge: their later instants move with the
    /// phase, so they mark no phase point.
    edge_timed: Vec<bool>,
    /// Every invariant that failed, in the order checked.
    violated: Vec<Cow<'static, str>>,
    /// True once the end checks ran.
    ended: bool,
    /// The first step-check violation, held while the execution runs on past it
    /// ([`ExecConfig::past_violation`]).
    held: Option<Verdict>,
}

/// Why the loop stopped early.
type Stop = Verdict;

impl<'c> Engine<'c> {
    fn new(config: &'c ExecConfig, sim: Sim, spare: &mut Spare) -> Engine<'c> {
        let n = sim.tasks.len();
        let mut timers = std::mem::take(&mut spare.timers);
        timers.extend(sim.scripted.iter().enumerate().map(|(i, (at, f))| {
            (
                VirtualTime::ZERO + *at,
                i as u64,
                Timer::Scripted(f.clone()),
            )
        }));
        let timer_seq = timers.len() as u64;
        let mut deferred = std::mem::take(&mut spare.deferred);
        deferred.resize(n, None);
        spare.scripted = emptied(sim.scripted);
        let mut spin = std::mem::take(&mut spare.spin);
        spin.reset(n);
        // Per kind, the plan's budget, and whether a pause or death is aimed at keys: one
        // pass over the plan's rules, the first rule of a kind counting (as
        // `FaultPlan::rule` finds it), so the last written here.
        let mut allowed = [0; FaultKind::ALL.len()];
        let mut keyed = [false; FaultKind::ALL.len()];
        for (kind, rule) in config.faults.rules.iter().rev() {
            allowed[*kind as usize] = rule.max;
            keyed[*kind as usize] = rule.keys.is_some();
        }
        let aims_at_keys = keyed[FaultKind::Pause as usize] || keyed[FaultKind::Die as usize];
        Engine {
            config,
            core: sim.core,
            live: n,
            tasks: sim.tasks,
            always: sim.always,
            ghosts: sim.ghosts,
            holders: sim.holders,
            symmetric: sim.symmetric,
            ranks: Vec::new(),
            deaths: sim.deaths,
            at_end: sim.at_end,
            cluster: {
                let mut cluster = boot_cluster(config, spare.cluster.take());
                for server in &mut cluster.servers {
                    server.set_connections(n as u64);
                }
                cluster
            },
            deferred,
            timers,
            timer_seq,
            fired: [0; FaultKind::ALL.len()],
            allowed,
            latency: (
                config.latency_min.as_micros() as u64,
                config.latency_max.as_micros() as u64,
            ),
            max_time: u64::try_from(config.max_time.as_micros()).unwrap_or(u64::MAX),
            budget_left: allowed.iter().any(|&max| max > 0),
            last_keys: aims_at_keys.then(|| vec![Vec::new(); n]),
            wrote_last: flags(&mut spare.flags[0], n),
            bitten: [0; FaultKind::ALL.len()],
            bites_pending: Vec::new(),
            step_checks: 0,
            faults_fired: Vec::new(),
            choices: Vec::with_capacity(spare.steps.max(16)),
            trace: Trace::default(),
            events: Vec::new(),
            metrics: BTreeMap::new(),
            step: 0,
            calls: 0,
            pruned: false,
            calls_buf: std::mem::take(&mut spare.calls),
            faults_buf: std::mem::take(&mut spare.faults),
            spin,
            watched: Vec::new(),
            key_states: Vec::new(),
            phase_points: None,
            edge_timed: flags(&mut spare.flags[1], n),
            violated: Vec::new(),
            ended: false,
            held: None,
        }
    }

    /// Empties the engine into `spare` for the next execution. The clients' futures and
    /// the checks are dropped first, so that the core is free to reuse when no client
    /// handle outlives them.
    fn recycle(self, spare: &mut Spare) {
        // Field by field out of the engine, which is dropped in place: moving it whole
        // into this function would copy a kilobyte per execution.
        let Engine {
            core,
            tasks,
            always,
            at_end,
            deferred,
            timers,
            calls_buf,
            faults_buf,
            spin,
            wrote_last,
            edge_timed,
            cluster,
            ..
        } = self;
        spare.tasks = emptied(tasks);
        spare.always = emptied(always);
        spare.at_end = emptied(at_end);
        spare.deferred = emptied(deferred);
        spare.timers = emptied(timers);
        // Kept with its entries: `options` overwrites them.
        spare.calls = calls_buf;
        spare.faults = emptied(faults_buf);
        spare.spin = spin;
        spare.flags = [wrote_last, edge_timed];
        spare.cluster = Some(cluster);
        spare.core = Some(core);
    }

    /// Every invariant with the times it was evaluated ([`Execution::checks`]).
    fn checks(&self) -> Vec<(Cow<'static, str>, u64)> {
        let mut checks = Vec::with_capacity(self.always.len() + self.at_end.len());
        for (name, _) in &self.always {
            checks.push((name.clone(), self.step_checks));
        }
        for (name, _) in &self.at_end {
            checks.push((name.clone(), u64::from(self.ended)));
        }
        checks
    }

    fn now(&self) -> VirtualTime {
        self.core.borrow().now
    }

    fn log(&mut self, actor: Actor, text: impl FnOnce() -> String) {
        if self.config.trace {
            let now = self.now();
            self.trace.push(self.step, now, actor, text());
        }
    }

    fn run(&mut self, strategy: &mut dyn Strategy) -> Verdict {
        let verdict = match self.run_inner(strategy) {
            Ok(()) => self.finish(),
            Err(stop) => stop,
        };
        // Run on past a step check's violation, the first one stays the verdict.
        let verdict = self.held.take().unwrap_or(verdict);
        if matches!(
            verdict,
            Verdict::Pass | Verdict::Stuck { .. } | Verdict::Livelock { .. }
        ) {
            self.record_liveness();
        }
        verdict
    }

    fn run_inner(&mut self, strategy: &mut dyn Strategy) -> Result<(), Stop> {
        for c in 0..self.tasks.len() {
            self.poll(c)?;
        }
        // What the strategy asks for and whether faults may fire cannot change during an
        // execution: asked once, not at every step.
        let footprints = strategy.needs_footprints();
        let timing = strategy.explores_timing();
        let states = strategy.wants_states();
        let symmetry = states && strategy.symmetry() && self.symmetric_now();
        loop {
            self.fire_due_timers()?;
            if self.live == 0 {
                return Ok(());
            }
            let now = self.now();
            if self.step >= self.config.max_steps || now.micros() > self.max_time {
                return Err(self.stuck());
            }
            let mut buf = std::mem::take(&mut self.calls_buf);
            let (n, next_timer) = self.options(&mut buf, footprints);
            let calls = &mut buf[..n];
            if calls.is_empty() {
                self.calls_buf = buf;
                match next_timer {
                    Some(t) => {
                        self.core.borrow_mut().now = t.max(now);
                        continue;
                    }
                    None => return Err(self.livelock(0)),
                }
            }
            // Once every budget is spent, no fault can fire for the rest of the execution:
            // the buffer is taken only while one may (an empty vector costs nothing).
            let faulting = self.budget_left;
            let mut faults = Vec::new();
            if faulting {
                faults = std::mem::take(&mut self.faults_buf);
                self.fault_options(calls, &mut faults);
            }
            // A choice already decided needs no footprints, edges or state.
            let deciding = !strategy.replaying();
            if footprints && deciding {
                self.add_footprints(calls);
            }
            if timing && deciding {
                self.add_edges(calls);
            }
            // Only a choice point with alternatives is worth remembering.
            let remember = states && deciding && calls.len() + faults.len() > 1;
            let mut ranks = Vec::new();
            let state = if remember {
                if symmetry {
                    ranks = std::mem::take(&mut self.ranks);
                }
                self.state(symmetry.then_some(&mut ranks))
            } else {
                None
            };
            let options = Options {
                step: self.step,
                clients: self.tasks.len(),
                calls,
                faults: &faults,
                // Only a strategy that weighs footprints reads it.
                eviction_possible: footprints && self.eviction_possible(),
                ranks: (symmetry && state.is_some()).then_some(ranks.as_slice()),
                summarized: state.is_some() && self.core.borrow().summarized,
                state,
            };
            let choice = strategy.choose(&options);
            if symmetry {
                self.ranks = ranks;
            }
            if strategy.stop_requested() {
                self.pruned = true;
                return Err(Verdict::Pass);
            }
            let applied = self.apply(choice, calls, &faults);
            self.record_keys();
            if faulting {
                self.faults_buf = faults;
            }
            self.calls_buf = buf;
            applied?;
        }
    }

    #[cold]
    fn diverged(&self, detail: String) -> Stop {
        Verdict::Diverged {
            step: self.step,
            detail,
        }
    }

    fn apply(
        &mut self,
        choice: Choice,
        calls: &[CallOption],
        faults: &[FaultOption],
    ) -> Result<(), Stop> {
        match &choice {
            Choice::Run { client, delay } => {
                let Some(option) = calls.iter().find(|c| c.client == *client) else {
                    return Err(self.diverged(format!("c{client} has no call that may run")));
                };
                let at = option.earliest + std::time::Duration::from_micros(*delay);
                if at > option.latest {
                    return Err(self.diverged(format!("c{client} cannot run {delay} µs late")));
                }
                self.choices.push(choice.clone());
                self.step += 1;
                self.execute_call(*client, at, None)?;
            }
            Choice::Fault(fault) => self.apply_fault(fault, calls, faults)?,
        }
        self.check_always()
    }

    /// A fault the strategy chose (kept out of the step's path).
    #[inline(never)]
    fn apply_fault(
        &mut self,
        fault: &Fault,
        calls: &[CallOption],
        faults: &[FaultOption],
    ) -> Result<(), Stop> {
        if !faults.iter().any(|f| &f.fault == fault) {
            return Err(self.diverged(format!("fault not possible here: {fault}")));
        }
        self.choices.push(Choice::Fault(fault.clone()));
        self.step += 1;
        self.fault_fired(fault);
        if self.config.trace && !fault.runs_a_call() {
            let time = self.now();
            let (step, fault) = (self.step, fault.clone());
            self.events
                .push(crate::exec::Event::Fault { step, time, fault });
        }
        self.faults_fired.push((self.step, fault.clone()));
        self.spin.changed();
        self.inject(fault, calls)
    }
}
