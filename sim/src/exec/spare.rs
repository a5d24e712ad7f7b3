//! What one execution leaves behind for the next on the same thread.
//!
//! An exploration runs hundreds of thousands of executions of the same scenario, each
//! with the same servers and about the same number of clients, checks and steps. Booting
//! servers and allocating the bookkeeping vectors afresh every time cost more than the
//! recipe code itself, so the engine hands its cluster and its emptied buffers back here
//! when an execution ends, and the next one takes them. Nothing of an execution's state
//! survives: the cluster is reset to exactly the state a new one has, every buffer is
//! cleared, and the shared core is reused only once no client handle refers to it.

use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use crate::clock::VirtualTime;
use crate::cluster::Cluster;
use crate::exec::Task;
use crate::exec::core::Core;
use crate::exec::timer::Timer;
use crate::explore::{CallOption, FaultOption};
use crate::fault::Fault;
use crate::invariant::{EndCheck, StepCheck};
use crate::memcache::Transport;

/// Emptied buffers and the last cluster, ready for the next execution. Every vector is
/// empty whenever the parts sit here: the engine clears them as it hands them back.
#[derive(Default)]
pub(crate) struct Spare {
    pub cluster: Option<Cluster>,
    pub core: Option<Rc<RefCell<Core>>>,
    pub tasks: Vec<Option<Task>>,
    pub always: Vec<(Cow<'static, str>, StepCheck)>,
    pub at_end: Vec<(Cow<'static, str>, EndCheck)>,
    pub scripted: Vec<(Duration, Fault)>,
    pub deferred: Vec<Option<Transport>>,
    pub calls: Vec<CallOption>,
    pub faults: Vec<FaultOption>,
    pub timers: Vec<(VirtualTime, u64, Timer)>,
    pub spin: super::spin::SpinWatch,
    /// Per-client flags ([`crate::exec`]'s engine keeps two such vectors).
    pub flags: [Vec<bool>; 2],
    /// The choices the last execution made: the next one's schedule starts with room
    /// for as many, instead of growing to it step by step.
    pub steps: usize,
}

thread_local! {
    /// Boxed, so that taking and giving back moves a pointer, not the parts.
    static SPARE: RefCell<Option<Box<Spare>>> = const { RefCell::new(None) };
}

impl Spare {
    /// Takes the thread's spare parts (empty ones if an execution already holds them, as
    /// when executions nest).
    pub fn take() -> Box<Spare> {
        SPARE.with(|s| s.borrow_mut().take()).unwrap_or_default()
    }

    /// Hands the parts back for the next execution.
    pub fn give_back(self: Box<Self>) {
        SPARE.with(|s| *s.borrow_mut() = Some(self));
    }

    /// A core at time zero with no clients: the spare one if nothing else holds it.
    pub fn core(&mut self) -> Rc<RefCell<Core>> {
        match self.core.take() {
            Some(core) if Rc::strong_count(&core) == 1 && Rc::weak_count(&core) == 0 => {
                core.borrow_mut().reset();
                core
            }
            _ => Rc::new(RefCell::new(Core::new())),
        }
    }
}

/// Clears a buffer and returns it (keeping its capacity).
pub(crate) fn emptied<T>(mut v: Vec<T>) -> Vec<T> {
    v.clear();
    v
}
