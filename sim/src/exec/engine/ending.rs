//! How an execution ends: invariant checks, violations, spins, waits past the budget and
//! the end-of-run checks.

use std::borrow::Cow;

use crate::exec::core::Wait;
use crate::invariant::{EndView, Failure, Verdict, Violation};
use crate::trace::{Actor, describe_request};

use super::observer::Observer;
use super::{Engine, Stop};

impl<O: Observer> Engine<O> {
    /// Runs every step check. The first that fails is the verdict; every other that
    /// fails at the same step is recorded beside it ([`Execution::violated`]).
    ///
    /// [`Execution::violated`]: crate::exec::Execution::violated
    #[inline(always)]
    pub(super) fn check_always(&mut self) -> Result<(), Stop> {
        self.checks.step_checks += 1;
        if self.sim.always.is_empty() {
            return Ok(());
        }
        self.run_step_checks()
    }

    /// [`Engine::check_always`] with some step check registered.
    fn run_step_checks(&mut self) -> Result<(), Stop> {
        let mut verdict: Option<Verdict> = None;
        for (name, check) in &self.sim.always {
            // Run on past a held violation, a check that failed already has nothing left
            // to tell: its name is recorded and the verdict held (and a failing check
            // builds its message, at every step it is asked).
            if self.checks.held.is_some() && self.checks.violated.iter().any(|v| v == name) {
                continue;
            }
            if let Err(failure) = check() {
                if !self.checks.violated.iter().any(|v| v == name) {
                    self.checks.violated.push(name.clone());
                }
                if verdict.is_none() {
                    verdict = Some(self.violation(name.clone(), failure));
                }
            }
        }
        match verdict {
            // Measuring by how much it breaks: the first violation is held as the
            // verdict and the execution runs on to its end checks.
            Some(v) if self.limits.past_violation => {
                if self.checks.held.is_none() {
                    self.log(Actor::World, || format!("{} (run on past it)", v.label()));
                    self.checks.held = Some(v);
                }
                Ok(())
            }
            Some(v) => Err(self.stop(v)),
            None => Ok(()),
        }
    }

    pub(super) fn violation(&self, invariant: Cow<'static, str>, failure: Failure) -> Verdict {
        Verdict::Violation(Violation {
            invariant,
            step: self.progress.step,
            time: self.now(),
            failure,
            faults: self.faults.faults_fired.clone(),
        })
    }

    /// What each unfinished client is doing.
    pub(super) fn waiting(&self) -> Vec<String> {
        let core = self.sim.core.borrow();
        core.mailboxes
            .iter()
            .enumerate()
            .filter_map(|(c, m)| match &m.wait {
                Wait::Call { .. } => Some(format!("c{c} in {}", describe_request(&m.request))),
                Wait::Sleep { until } => Some(format!("c{c} sleeping until {until}")),
                _ => None,
            })
            .collect()
    }

    /// A livelock now: `repeated` calls that repeated earlier ones, or `wakes` wakes at
    /// one instant with no call between (both 0 when no client can run at all).
    pub(super) fn livelock(&self, repeated: u64, wakes: u64) -> Verdict {
        Verdict::Livelock {
            step: self.progress.step,
            time: self.now(),
            waiting: self.waiting(),
            repeated,
            wakes,
            cycle: None,
        }
    }

    /// The clients still running.
    fn busy(&self) -> impl Iterator<Item = usize> + '_ {
        self.sim
            .tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| t.is_some())
            .map(|(c, _)| c)
    }

    /// A cycle of states is proven when nothing scheduled can end it: every busy client
    /// took part, no world timer, no clock read since keying began, no live item with an
    /// expiry ahead.
    pub(super) fn check_cycle(&mut self) -> Result<(), Stop> {
        let now = self.now();
        let busy = self.busy();
        let cycle = &self.spin.cycle;
        if self.timers.is_empty()
            && cycle.all_took_part(busy)
            && cycle.clock_untouched(self.sim.core.borrow().clock_reads)
            && self.cluster.next_expiry(now).is_none()
        {
            let cycle = cycle.cycle();
            let mut verdict = self.livelock(cycle.repeated, 0);
            if let Verdict::Livelock { cycle: c, .. } = &mut verdict {
                *c = Some(cycle);
            }
            return Err(self.stop(verdict));
        }
        Ok(())
    }

    /// A spin is proven when nothing scheduled can end it: no world timer, no clock read
    /// since the repetitions began, no live item with an expiry ahead.
    pub(super) fn check_spin(&mut self) -> Result<(), Stop> {
        let now = self.now();
        let busy = self.busy();
        if self.timers.is_empty()
            && self.spin.all_took_part(busy)
            && self
                .spin
                .clock_untouched(self.sim.core.borrow().clock_reads)
            && self.cluster.next_expiry(now).is_none()
        {
            return Err(self.stop(self.livelock(self.spin.repeats(), 0)));
        }
        Ok(())
    }

    pub(super) fn stuck(&self) -> Verdict {
        let now = self.now();
        let busy: Vec<usize> = self.busy().collect();
        Verdict::Stuck {
            step: self.progress.step,
            time: now,
            waiting: self.waiting(),
            longest_wait: self
                .spin
                .longest_wait(busy.into_iter(), now)
                .unwrap_or((0, std::time::Duration::ZERO)),
            next_expiry: self
                .cluster
                .next_expiry(now)
                .map(|(k, at)| (k.to_string(), at)),
        }
    }

    /// Runs the end checks and writes the verdict into `verdict` (whatever it held is
    /// replaced).
    pub(super) fn finish(&mut self, verdict: &mut Verdict) {
        let view = EndView {
            cluster: &self.cluster,
            now: self.now(),
            metrics: &self.checks.metrics,
        };
        // Every end check runs, so each records its metrics; the first failure is the verdict.
        let mut failed = false;
        self.checks.ended = true;
        for (name, check) in &self.sim.at_end {
            if let Err(failure) = check(&view) {
                self.checks.violated.push(name.clone());
                if !failed {
                    failed = true;
                    *verdict = self.violation(name.clone(), failure);
                }
            }
        }
        if !failed {
            *verdict = Verdict::Pass;
        }
        if self.observer.timeline().is_some() {
            self.log_end_check(verdict);
        }
    }

    /// The timeline's line for a failed end check.
    fn log_end_check(&mut self, verdict: &Verdict) {
        if let Verdict::Violation(v) = verdict {
            self.log(Actor::World, || {
                format!("END CHECK {} fails: {}", v.invariant, v.failure.message)
            });
        }
    }

    /// With pause or death faults in the plan, every execution records the liveness
    /// figures: `liveness.longest_wait_s` (the longest any client the faults did not hit
    /// went without changing server state or finishing) and `liveness.stuck_clients`.
    /// Called only when the plan has either rule (`Engine::liveness`).
    pub(super) fn record_liveness(&mut self) {
        let unfinished: Vec<bool> = self.sim.tasks.iter().map(Option::is_some).collect();
        let (longest, stuck) = self.spin.liveness(&unfinished, self.now());
        let metrics = self.checks.metrics.get_mut();
        metrics.insert("liveness.longest_wait_s".into(), longest.as_secs_f64());
        metrics.insert("liveness.stuck_clients".into(), stuck as f64);
    }
}
