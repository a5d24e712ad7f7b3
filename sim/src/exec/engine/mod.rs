//! The engine: one execution's step loop and the parts it is made of.
//!
//! A step asks the strategy for a choice (unless it decided one in advance), applies it
//! (a call runs on its server, or a fault fires), then runs the checks. The parts, each
//! in its own file:
//! - the clients: their futures polled (`poll`), a call made and answered (`call`), the
//!   spin watch;
//! - the world: the cluster, the timers (`timers`: restarts, rejoins, scripted faults);
//! - the options a step offers (`options`, with footprints and tick edges in `edges`)
//!   and the state fingerprint of a search (`fingerprint`);
//! - the faults: what the plan allows at a step (`faults`), doing one (`inject`), and
//!   whether it bit ([`Faults`] in `bites`);
//! - the verdict: the step and end checks (`ending`);
//! - what only some executions record, behind the [`observer::Observer`] type parameter:
//!   the timeline (`timeline`) and the phase points (`phase`);
//! - the engine's life across executions, with the thread's idle engines (`lifecycle`),
//!   and a runner of many ([`Runs`]).
//!
//! The engine never reads the wall clock, never draws a random number (every choice is
//! the strategy's) and never iterates a std `HashMap`.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::clock::VirtualTime;
use crate::cluster::Cluster;
use crate::exec::core::Wait;
use crate::exec::spin::SpinWatch;
use crate::exec::timer::Timer;
use crate::exec::{ExecConfig, Execution, Sim};
use crate::explore::{CallOption, Choice, FaultOption, Needs, Options, Strategy};
use crate::fault::{Fault, FaultKind, FaultPlan};
use crate::invariant::Verdict;
use crate::memcache::{Key, Transport};
use crate::trace::Actor;

mod bites;
mod call;
mod edges;
mod ending;
mod inject;
mod lifecycle;
mod observer;
mod options;
pub use edges::MAX_EDGES;
mod faults;
mod fingerprint;
mod phase;
mod poll;
mod runs;
mod timeline;
mod timers;
use observer::Observer;
pub use runs::Runs;
pub use timeline::{KeyState, Stored};

/// Runs one execution: `setup` registers clients and invariants, `strategy` makes every
/// choice. `index` tells the strategy which execution this is.
///
/// A loop over many executions of one configuration runs them through [`Runs`], which
/// applies the configuration's settings once and reuses one result's buffers.
pub fn execute<S: Strategy + ?Sized>(
    config: &ExecConfig,
    setup: &dyn Fn(&mut Sim),
    strategy: &mut S,
    index: u64,
) -> Execution {
    let mut execution = Execution::default();
    Runs::new(config).execute_into(setup, strategy, index, &mut execution);
    execution
}

/// One execution on `engine`, which has applied `config`'s settings
/// ([`Engine::configure`]), for a strategy that has begun it and `needs` as given.
fn run_configured<O: Observer, S: Strategy + ?Sized>(
    engine: &mut Engine<O>,
    config: &ExecConfig,
    setup: &dyn Fn(&mut Sim),
    (strategy, needs): (&mut S, Needs),
    index: u64,
    out: &mut Execution,
) {
    setup(engine.registration());
    let phase = strategy.tick_phase(config.phase_free);
    let phase_points = needs.timing && config.phase_free;
    engine.begin(out, phase, phase_points);
    let mut core = engine.sim.core.borrow_mut();
    (core.observing, core.tracing) = (needs.states, config.trace);
    core.summaries = needs.summaries;
    drop(core);
    engine.run(strategy, needs, &mut out.verdict);
    out.state_hash = needs.final_state.then(|| engine.fingerprint());
    out.end_time = engine.sim.core.borrow().now;
    (out.index, out.pruned, out.phase) = (index, engine.progress.pruned, phase);
    out.steps = engine.progress.step;
    out.calls = engine.progress.calls;
    engine.hand_over(out);
    out.schedule.phase = phase.map(|p| p.as_micros() as u32);
    engine.clear();
}

/// One execution's machinery, kept across executions and reset in place
/// ([`lifecycle`]). Its state is grouped by concern: what the configuration limits
/// ([`Limits`]), the faults ([`Faults`]), the choices taken ([`Progress`]), the verdict's
/// making ([`Checks`]) and the step's option buffers ([`Buffers`]); beside them the world
/// (the cluster, the timers), the clients (the registration, the spin watch) and what
/// only some executions record (`O`, an [`Observer`]: the timeline, the phase points,
/// the clients' last keys).
struct Engine<O: Observer> {
    /// What the setup function registered: the core the clients share, their futures,
    /// the checks, the ghost state, the scripted faults. Kept in place across
    /// executions: the setup function fills it where it is, and [`Engine::clear`]
    /// empties it.
    sim: Sim,
    /// How many of the clients' futures are still running ([`Engine::end_task`] counts
    /// them down).
    live: usize,
    /// What the engine keeps of each client beside its mailbox, by client.
    per_client: Vec<PerClient>,
    /// Tells a spin from a wait.
    spin: SpinWatch,
    cluster: Cluster,
    /// Timed events in the world: restarts, rejoins, scripted faults, each with its
    /// sequence number (`timer_seq` is the next one).
    timers: Vec<(VirtualTime, u64, Timer)>,
    timer_seq: u64,
    limits: Limits,
    faults: Faults,
    progress: Progress,
    checks: Checks,
    buffers: Buffers,
    observer: O,
}

/// What the configuration limits, as the engine reads it at every step.
#[derive(Default)]
struct Limits {
    /// [`ExecConfig::max_steps`].
    max_steps: u64,
    /// The time budget in whole microseconds ([`ExecConfig::max_time`]).
    max_time: u64,
    /// The latency window's bounds in whole microseconds, as virtual time counts them.
    latency: (u64, u64),
    /// [`ExecConfig::past_violation`].
    past_violation: bool,
}

/// The faults: the plan and what follows from it, what fired, what bit.
struct Faults {
    /// The fault plan of the execution ([`ExecConfig::faults`]), kept across executions
    /// and copied only when the next one's differs.
    plan: FaultPlan,
    /// The keys each kind's rule in `plan` aims at, parsed (kept beside `plan`).
    aimed_keys: faults::AimedKeys,
    /// Per kind, how many the plan allows.
    allowed: [u32; FaultKind::ALL.len()],
    /// Some kind's budget in `plan` is above zero (with `allowed`, kept with the plan).
    plan_budget: bool,
    /// `plan` has a pause or death rule: every execution records the liveness figures
    /// ([`Engine::record_liveness`]; kept with the plan).
    liveness: bool,
    /// Per kind (in [`FaultKind::ALL`]'s order, `kind as usize`), the faults fired so
    /// far: the figures, the state fingerprint and, against `allowed`, the budgets left.
    fired: [u32; FaultKind::ALL.len()],
    /// Some kind's budget is not spent yet: the fault options are worth building at the
    /// next step.
    budget_left: bool,
    /// The faults fired, with their steps.
    faults_fired: Vec<(u64, Fault)>,
    /// Per kind, how many of the faults fired bit ([`bites`]).
    bitten: [u32; FaultKind::ALL.len()],
    /// Faults that have not bitten yet.
    bites_pending: Vec<bites::Pending>,
    /// `plan` aims a pause or a death at keys (kept with the plan): a sleeping client
    /// is hit through the keys of its last call.
    follows_keys: bool,
    /// The keys of each client's last call, kept in executions of such a plan.
    last_keys: Option<Vec<Vec<Key>>>,
}

/// The choices taken so far and what they did.
#[derive(Default)]
struct Progress {
    /// The schedule so far.
    choices: Vec<Choice>,
    /// Steps taken.
    step: u64,
    /// Calls the servers ran.
    calls: u64,
    /// The strategy cut the execution short.
    pruned: bool,
}

/// The verdict in the making: what the checks found and recorded.
struct Checks {
    /// Times the step checks ran.
    step_checks: u64,
    /// Every invariant that failed, in the order checked.
    violated: Vec<Cow<'static, str>>,
    /// True once the end checks ran.
    ended: bool,
    /// The first step-check violation, held while the execution runs on past it
    /// ([`ExecConfig::past_violation`]).
    held: Option<Verdict>,
    /// The verdict of steps that stopped early ([`Stop`]); `Pass` between executions.
    stopped: Verdict,
    /// What the end checks record ([`crate::invariant::EndView::metric`]).
    metrics: RefCell<BTreeMap<String, f64>>,
}

/// The step's option buffers, kept across steps and executions.
#[derive(Default)]
struct Buffers {
    /// The call options of the current step.
    calls_buf: Vec<CallOption>,
    /// True if an entry of `calls_buf` may hold a footprint or edges: the last
    /// execution's strategy asked for them.
    extras_in_options: bool,
    /// The fault options of the current step.
    faults_buf: Vec<FaultOption>,
    /// Each client's place in the canonical order of the last state fingerprint taken
    /// under symmetry.
    ranks: Vec<usize>,
}

/// The steps stopped before the end checks; the verdict waits in [`Checks::stopped`]
/// until [`Engine::run`] writes it into the result.
#[derive(Debug)]
struct Stop;

/// What the engine keeps of one client beside its mailbox. Kept together, so that an
/// execution's start sizes one vector for its clients, not one per concern.
#[derive(Debug, Clone, Copy, Default)]
struct PerClient {
    /// A timeout to hand the client when its sleep ends (lost request or reply).
    deferred: Option<Transport>,
    /// Whether its last executed call changed the server (a pause or death of the
    /// client is aimed: [`crate::explore::FaultOption::aimed`]).
    wrote_last: bool,
}

impl<O: Observer> Engine<O> {
    fn now(&self) -> VirtualTime {
        self.sim.core.borrow().now
    }

    /// Writes a line into the timeline of a traced execution.
    fn log(&mut self, actor: Actor, text: impl FnOnce() -> String) {
        if let Some(timeline) = self.observer.timeline() {
            let now = self.sim.core.borrow().now;
            timeline.line(self.progress.step, now, actor, text());
        }
    }

    /// Runs the execution and writes its verdict into `verdict`, where the result keeps
    /// it.
    fn run<S: Strategy + ?Sized>(&mut self, strategy: &mut S, needs: Needs, verdict: &mut Verdict) {
        match self.run_inner(strategy, needs) {
            Ok(()) => self.finish(verdict),
            Err(Stop) => *verdict = std::mem::replace(&mut self.checks.stopped, Verdict::Pass),
        }
        // Run on past a step check's violation, the first one stays the verdict.
        if let Some(held) = self.checks.held.take() {
            *verdict = held;
        }
        if self.faults.liveness
            && matches!(
                verdict,
                Verdict::Pass | Verdict::Stuck { .. } | Verdict::Livelock { .. }
            )
        {
            self.record_liveness();
        }
    }

    /// The steps, with the engine's option buffers taken for the whole execution (not
    /// at every step) and given back at its end.
    fn run_inner<S: Strategy + ?Sized>(
        &mut self,
        strategy: &mut S,
        needs: Needs,
    ) -> Result<(), Stop> {
        let mut calls = std::mem::take(&mut self.buffers.calls_buf);
        let mut faults = std::mem::take(&mut self.buffers.faults_buf);
        // The options buffer holds footprints and edges only after a strategy that
        // asked for them: emptied once before one that does not.
        let extras = needs.footprints || needs.timing;
        if !extras && self.buffers.extras_in_options {
            options::empty_extras(&mut calls);
        }
        self.buffers.extras_in_options = extras;
        let result = self.steps(strategy, needs, &mut calls, &mut faults);
        (self.buffers.calls_buf, self.buffers.faults_buf) = (calls, faults);
        result
    }

    /// The step loop, for a strategy that `needs` as given.
    fn steps<S: Strategy + ?Sized>(
        &mut self,
        strategy: &mut S,
        needs: Needs,
        buf: &mut Vec<CallOption>,
        faults_buf: &mut Vec<FaultOption>,
    ) -> Result<(), Stop> {
        for c in 0..self.sim.tasks.len() {
            self.poll(c)?;
        }
        let Needs {
            footprints,
            timing,
            states,
            ..
        } = needs;
        let symmetry = states && needs.symmetry && self.symmetric_now();
        loop {
            // One look at the core for the step's head: whether a timer or a sleeper is
            // due, the time, and the options.
            let mut core = self.sim.core.borrow();
            if self.timer_may_be_due(&core) {
                drop(core);
                self.fire_due_timers()?;
                core = self.sim.core.borrow();
            }
            if self.live == 0 {
                return Ok(());
            }
            let now = core.now;
            if self.progress.step >= self.limits.max_steps || now.micros() > self.limits.max_time {
                drop(core);
                return Err(self.stop(self.stuck()));
            }
            let (n, next_timer, horizon) = self.options(&core, buf, footprints, timing);
            drop(core);
            let calls = &mut buf[..n];
            if calls.is_empty() {
                match next_timer {
                    Some(t) => {
                        self.sim.core.borrow_mut().now = t.max(now);
                        continue;
                    }
                    None => return Err(self.stop(self.livelock(0, 0))),
                }
            }
            // A choice the strategy knows already needs no footprints, edges, state or
            // faults: a decided fault is checked against the faults when it comes
            // (`decided_fault`).
            let applied = if let Some(decided) = strategy.decided() {
                if let Some(phase) = self.observer.phase_points() {
                    phase.repeating = decided.repeated;
                }
                match decided.choice {
                    fault @ Choice::Fault(_) => {
                        self.decided_fault(fault, calls, faults_buf, horizon)
                    }
                    run => self.apply(run, calls, &[], horizon),
                }
            } else {
                if let Some(phase) = self.observer.phase_points() {
                    phase.repeating = false;
                }
                // Once every budget is spent, no fault can fire for the rest of the
                // execution: the options are built only while one may.
                let faults: &[FaultOption] = if self.faults.budget_left {
                    self.fault_options(calls, faults_buf);
                    faults_buf
                } else {
                    &[]
                };
                if footprints {
                    self.add_footprints(calls);
                }
                if timing {
                    self.add_edges(calls);
                }
                // Only a choice point with alternatives is worth remembering.
                let remember = states && calls.len() + faults.len() > 1;
                let mut ranks = Vec::new();
                let state = if remember {
                    if symmetry {
                        ranks = std::mem::take(&mut self.buffers.ranks);
                    }
                    self.state(symmetry.then_some(&mut ranks))
                } else {
                    None
                };
                let options = Options {
                    step: self.progress.step,
                    clients: self.sim.tasks.len(),
                    calls,
                    faults,
                    // Only a strategy that weighs footprints reads it.
                    eviction_possible: footprints && self.eviction_possible(),
                    ranks: (symmetry && state.is_some()).then_some(ranks.as_slice()),
                    summarized: state.is_some() && self.sim.core.borrow().summarized,
                    state,
                };
                let choice = strategy.choose(&options);
                if symmetry {
                    self.buffers.ranks = ranks;
                }
                let Some(choice) = choice else {
                    self.progress.pruned = true;
                    return Err(self.stop(Verdict::Pass));
                };
                self.apply(choice, calls, faults, horizon)
            };
            // The keys' states after the step, a violating one's included.
            if let Some(timeline) = self.observer.timeline() {
                let now = self.sim.core.borrow().now;
                timeline.record_keys(self.progress.step, now, &self.cluster);
            }
            applied?;
        }
    }

    /// The strategy chose a client with no call that may run.
    fn no_call(&mut self, client: usize) -> Stop {
        self.stop(self.diverged(format!("c{client} has no call that may run")))
    }

    /// The strategy chose a delay past the call's window.
    fn too_late(&mut self, client: usize, delay: u64) -> Stop {
        self.stop(self.diverged(format!("c{client} cannot run {delay} µs late")))
    }

    /// Keeps `verdict` for [`Engine::run`] and stops the steps.
    fn stop(&mut self, verdict: Verdict) -> Stop {
        self.checks.stopped = verdict;
        Stop
    }

    fn diverged(&self, detail: String) -> Verdict {
        Verdict::Diverged {
            step: self.progress.step,
            detail,
        }
    }

    #[inline(always)]
    fn apply(
        &mut self,
        choice: Choice,
        calls: &[CallOption],
        faults: &[FaultOption],
        horizon: VirtualTime,
    ) -> Result<(), Stop> {
        match choice {
            Choice::Run { client, delay } => {
                // The chosen call's window, worked out again from its mailbox.
                let window = {
                    let core = self.sim.core.borrow();
                    match core.mailboxes.get(client).map(|m| m.wait) {
                        Some(Wait::Call { issued }) => self.window(issued, core.now, horizon),
                        _ => None,
                    }
                };
                let Some((earliest, latest)) = window else {
                    return Err(self.no_call(client));
                };
                let at = earliest.plus_micros(delay);
                if at > latest {
                    return Err(self.too_late(client, delay));
                }
                self.progress.choices.push(Choice::Run { client, delay });
                self.progress.step += 1;
                self.execute_call(client, at)?;
            }
            Choice::Fault(fault) => self.apply_fault(&fault, calls, faults)?,
        }
        self.check_always()
    }

    /// A fault the strategy decided before the step's options were worked out
    /// ([`Strategy::decided`]): the step's faults are built to check it against, as for
    /// a fault chosen among them.
    fn decided_fault(
        &mut self,
        choice: Choice,
        calls: &[CallOption],
        faults_buf: &mut Vec<FaultOption>,
        horizon: VirtualTime,
    ) -> Result<(), Stop> {
        if self.faults.budget_left {
            self.fault_options(calls, faults_buf);
        } else {
            faults_buf.clear();
        }
        self.apply(choice, calls, faults_buf, horizon)
    }

    /// A fault the strategy chose.
    fn apply_fault(
        &mut self,
        fault: &Fault,
        calls: &[CallOption],
        faults: &[FaultOption],
    ) -> Result<(), Stop> {
        if !faults.iter().any(|f| &f.fault == fault) {
            return Err(self.stop(self.diverged(format!("fault not possible here: {fault}"))));
        }
        self.progress.choices.push(Choice::Fault(fault.clone()));
        self.progress.step += 1;
        self.faults.fault_fired(fault);
        if let Some(timeline) = self.observer.timeline()
            && !fault.runs_a_call()
        {
            let time = self.sim.core.borrow().now;
            let (step, fault) = (self.progress.step, fault.clone());
            timeline
                .events
                .push(crate::exec::Event::Fault { step, time, fault });
        }
        self.faults
            .faults_fired
            .push((self.progress.step, fault.clone()));
        self.spin.changed();
        self.inject(fault, calls)
    }
}
