//! Timed events: sleepers waking, servers restarting and rejoining, scripted faults.

use crate::clock::VirtualTime;
use crate::exec::core::{Core, Wait};
use crate::fault::Fault;
use crate::trace::Actor;

use super::observer::Observer;
use super::{Engine, Stop};
use crate::exec::timer::Timer;

impl<O: Observer> Engine<O> {
    /// True if a timer or a sleeper may be due: the step loop's test before
    /// [`Engine::fire_due_timers`], made on the core it reads for the step.
    pub(super) fn timer_may_be_due(&self, core: &Core) -> bool {
        !self.timers.is_empty() || core.next_wake <= core.now
    }

    /// Wakes sleepers and restarts servers whose deadline has come, earliest first (the
    /// step loop calls it when [`Engine::timer_may_be_due`]).
    pub(super) fn fire_due_timers(&mut self) -> Result<(), Stop> {
        loop {
            let (now, sleeper) = {
                let mut core = self.sim.core.borrow_mut();
                let now = core.now;
                // No sleeper can be due before the bound: nothing (more) to fire.
                if !self.timer_may_be_due(&core) {
                    return Ok(());
                }
                let mut sleeper: Option<(VirtualTime, usize)> = None;
                let mut next_wake = VirtualTime(u64::MAX);
                for (c, m) in core.mailboxes.iter().enumerate() {
                    if let Wait::Sleep { until } = m.wait {
                        next_wake = next_wake.min(until);
                        if until <= now && sleeper.is_none_or(|s| (until, c) < s) {
                            sleeper = Some((until, c));
                        }
                    }
                }
                // Exact now; the sleeper woken below leaves it a lower bound.
                core.next_wake = next_wake;
                (now, sleeper)
            };
            let timer = self
                .timers
                .iter()
                .enumerate()
                .filter(|(_, t)| t.0 <= now)
                .min_by_key(|(_, t)| (t.0, t.1))
                .map(|(i, t)| (i, t.0));
            match (sleeper, timer) {
                (_, Some((i, at))) if sleeper.is_none_or(|s| at <= s.0) => {
                    let (at, _, timer) = self.timers.remove(i);
                    self.fire(at, timer)?;
                }
                (Some((_, c)), _) => {
                    if let Some(wakes) = self.spin.woke(self.progress.step, now) {
                        return Err(self.stop(self.livelock(0, wakes)));
                    }
                    {
                        let mut core = self.sim.core.borrow_mut();
                        core.mailboxes[c].wait = Wait::Running;
                        match self.per_client[c].deferred.take() {
                            Some(t) => {
                                core.observe(c, t);
                                core.mailboxes[c].reply = Some(Err(t));
                            }
                            None => core.mailboxes[c].woken = true,
                        }
                    }
                    if self.observer.timeline().is_some()
                        && self.sim.core.borrow().mailboxes[c].reply.is_some()
                    {
                        self.log(Actor::Client(c), || "times out".into());
                    }
                    self.poll(c)?;
                    self.check_always()?;
                }
                _ => return Ok(()),
            }
        }
    }

    pub(super) fn add_timer(&mut self, at: VirtualTime, timer: Timer) {
        self.timer_seq += 1;
        self.timers.push((at, self.timer_seq, timer));
    }

    pub(super) fn fire(&mut self, at: VirtualTime, timer: Timer) -> Result<(), Stop> {
        self.spin.changed();
        if let Some(timeline) = self.observer.timeline() {
            timeline.keys_may_change_everywhere();
        }
        match timer {
            Timer::Restart(server) => {
                let warm = self.faults.plan.warm_restart;
                self.cluster.servers[server].restart(at, warm);
                let clients = self.sim.tasks.len() as u64;
                self.cluster.servers[server].set_connections(clients);
                self.log(Actor::World, || {
                    format!(
                        "server {server} restarts ({})",
                        if warm { "warm" } else { "empty" }
                    )
                });
            }
            Timer::Rejoin(server) => {
                self.cluster.set_listed(server, true);
                self.log(Actor::World, || {
                    format!("server {server} rejoins the client's list")
                });
            }
            Timer::Scripted(fault) => {
                if matches!(fault, Fault::ReplyLost { .. } | Fault::RequestLost { .. }) {
                    self.log(Actor::World, || {
                        format!("scripted {fault} ignored: not a timed fault")
                    });
                    return Ok(());
                }
                self.faults
                    .faults_fired
                    .push((self.progress.step, fault.clone()));
                self.log(Actor::World, || "scripted:".into());
                self.inject(&fault, &[])?;
                self.check_always()?;
            }
        }
        Ok(())
    }
}
