//! Polling a client: its future runs until it parks on a call or a sleep, finishes,
//! panics or awaits something the engine does not drive.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::task::{Context, Poll, Waker};

use crate::exec::core::Wait;
use crate::invariant::Verdict;
use crate::trace::Actor;

use super::observer::Observer;
use super::{Engine, Stop};

impl<O: Observer> Engine<O> {
    /// Polls `client` once.
    #[inline(always)]
    pub(super) fn poll(&mut self, client: usize) -> Result<(), Stop> {
        let Some(task) = self.sim.tasks[client].as_mut() else {
            return Ok(());
        };
        let mut cx = Context::from_waker(Waker::noop());
        let result = catch_unwind(AssertUnwindSafe(|| task.as_mut().poll(&mut cx)));
        // The common case in one look at the core: a client parked on a call or a sleep,
        // with no notes or marks to drain.
        if matches!(result, Ok(Poll::Pending)) {
            let core = self.sim.core.borrow();
            if core.marks.is_empty() && core.notes.is_empty() {
                let parked = !matches!(core.mailboxes[client].wait, Wait::Running);
                drop(core);
                return if parked {
                    Ok(())
                } else {
                    Err(self.stop(self.awaited_elsewhere(client)))
                };
            }
        }
        self.settle(client, result)
    }

    /// What a poll left that is not a client parked with nothing to drain: a finished
    /// client here, notes or marks, an error, a panic in [`Engine::settle_rare`].
    fn settle(
        &mut self,
        client: usize,
        result: std::thread::Result<Poll<Result<(), crate::memcache::McError>>>,
    ) -> Result<(), Stop> {
        let quiet = {
            let core = self.sim.core.borrow();
            core.marks.is_empty() && core.notes.is_empty()
        };
        match result {
            Ok(Poll::Ready(Ok(()))) if quiet => {
                self.finished(client);
                self.log(Actor::Client(client), || "done".into());
                Ok(())
            }
            other => self.settle_rare(client, other),
        }
    }

    /// A client's future returned: it is counted off and the spin watch told.
    #[inline(always)]
    fn finished(&mut self, client: usize) {
        self.end_task(client);
        self.spin.changed();
        let now = self.now();
        self.spin.finished(client, now);
        self.sim.core.borrow_mut().mailboxes[client].wait = Wait::Done;
    }

    /// [`Engine::settle`] with notes or marks to drain, a client that gave up or
    /// panicked, or one still pending.
    fn settle_rare(
        &mut self,
        client: usize,
        result: std::thread::Result<Poll<Result<(), crate::memcache::McError>>>,
    ) -> Result<(), Stop> {
        self.drain_notes();
        match result {
            Err(payload) => {
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "non-text panic".into());
                self.end_task(client);
                self.log(Actor::Client(client), || format!("PANIC {message}"));
                let step = self.progress.step;
                Err(self.stop(Verdict::Panic {
                    client,
                    message,
                    step,
                }))
            }
            Ok(Poll::Ready(result)) => {
                self.finished(client);
                if let Err(e) = result {
                    self.log(Actor::Client(client), || format!("gives up: {e}"));
                    let step = self.progress.step;
                    return Err(self.stop(Verdict::ClientError {
                        client,
                        error: e.to_string(),
                        step,
                    }));
                }
                self.log(Actor::Client(client), || "done".into());
                Ok(())
            }
            Ok(Poll::Pending) => {
                if matches!(self.sim.core.borrow().mailboxes[client].wait, Wait::Running) {
                    return Err(self.stop(self.awaited_elsewhere(client)));
                }
                Ok(())
            }
        }
    }

    /// The verdict on a client that awaited something the engine does not drive.
    fn awaited_elsewhere(&self, client: usize) -> Verdict {
        Verdict::Panic {
            client,
            message: "awaited something other than a memcached call or a sleep".to_string(),
            step: self.progress.step,
        }
    }

    /// Drops a client's future (it finished, panicked or died), counting it off.
    pub(super) fn end_task(&mut self, client: usize) {
        if self.sim.tasks[client].take().is_some() {
            self.live -= 1;
        }
    }

    /// Hands the marks clients made to the spin watch and their notes to the trace.
    fn drain_notes(&mut self) {
        if !self.sim.core.borrow().marks.is_empty() {
            let now = self.now();
            let mut marks = std::mem::take(&mut self.sim.core.borrow_mut().marks);
            for &client in &marks {
                self.spin.marked(client, now);
            }
            marks.clear();
            self.sim.core.borrow_mut().marks = marks;
        }
        if self.sim.core.borrow().notes.is_empty() {
            return;
        }
        // Clients keep notes only in a traced execution.
        let notes = std::mem::take(&mut self.sim.core.borrow_mut().notes);
        if let Some(timeline) = self.observer.timeline() {
            for n in notes {
                let text = format!("· {}", n.text);
                timeline.line(self.progress.step, n.time, Actor::Client(n.client), text);
            }
        }
    }
}
