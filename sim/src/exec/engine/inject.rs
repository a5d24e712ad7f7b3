//! A fault the strategy picked, done to the world: a call's request or reply lost, a key
//! evicted, a server crashed, its clock jumped, a client paused or dead.

use crate::exec::core::Wait;
use crate::exec::timer::Timer;
use crate::explore::CallOption;
use crate::fault::Fault;
use crate::memcache::Key;
use crate::trace::Actor;

use super::observer::Observer;
use super::{Engine, Stop};

impl<O: Observer> Engine<O> {
    /// Does `fault` now; a fault on a call runs that call (`calls` holds its instant).
    pub(super) fn inject(&mut self, fault: &Fault, calls: &[CallOption]) -> Result<(), Stop> {
        if let Some(timeline) = self.observer.timeline() {
            timeline.keys_may_change_everywhere();
        }
        match fault {
            Fault::ReplyLost { client }
            | Fault::RequestLost { client }
            | Fault::TooLarge { client } => {
                let at = calls
                    .iter()
                    .find(|c| c.client == *client)
                    .map(|c| c.earliest);
                let at = at.unwrap_or_else(|| self.now());
                self.execute_faulty_call(*client, at, fault)?;
            }
            Fault::Evict { server, key } => {
                if let Ok(k) = Key::new(key.as_bytes()) {
                    if let Some(timeline) = self.observer.timeline() {
                        timeline.watch_key(*server, &k);
                    }
                    let now = self.now();
                    self.cluster.servers[*server].evict(&k, now);
                }
                self.log(Actor::World, || format!("FAULT {fault}"));
            }
            Fault::Crash { server } => {
                self.cluster.servers[*server].crash();
                let at = self.now() + self.faults.plan.restart_after;
                self.add_timer(at, Timer::Restart(*server));
                self.log(Actor::World, || format!("FAULT {fault}; restarts at {at}"));
            }
            Fault::Leave { server } => {
                self.cluster.set_listed(*server, false);
                let at = self.now() + self.faults.plan.rejoin_after;
                self.add_timer(at, Timer::Rejoin(*server));
                self.log(Actor::World, || format!("FAULT {fault}; rejoins at {at}"));
            }
            Fault::SkipSecond { server } => {
                self.cluster.servers[*server].skip_second();
                self.log(Actor::World, || format!("FAULT {fault}"));
            }
            Fault::Pause { client } => {
                let pause = self.faults.plan.pause_for;
                let mut core = self.sim.core.borrow_mut();
                match &mut core.mailboxes[*client].wait {
                    Wait::Sleep { until } => *until += pause,
                    Wait::Call { issued } => *issued += pause,
                    _ => {}
                }
                drop(core);
                self.spin.faulted(*client);
                self.log(Actor::World, || format!("FAULT {fault} for {pause:?}"));
            }
            Fault::Die { client } => {
                self.end_task(*client);
                for hook in &self.sim.deaths {
                    hook(*client);
                }
                self.per_client[*client].deferred = None;
                self.sim.core.borrow_mut().mailboxes[*client].end_call(Wait::Done);
                self.spin.faulted(*client);
                self.log(Actor::World, || format!("FAULT {fault}"));
            }
        }
        Ok(())
    }
}
