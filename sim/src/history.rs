//! Recorded operations of recipe-level objects (a counter's `incr`, a set's `add`), with
//! their call and return order, for the linearizability checker.
//!
//! The engine is single-threaded, so the order in which clients call [`History::invoke`]
//! and [`History::complete`] is the real-time order of those events.

use std::cell::RefCell;
use std::rc::Rc;

/// One operation: what was asked, what came back, and when (event indices).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Entry<Op, Ret> {
    /// Which client.
    pub client: usize,
    /// The object it acts on (operations on different objects are checked separately).
    pub object: String,
    /// The operation.
    pub op: Op,
    /// The result, or `None` while pending or when the outcome is unknown (a timeout):
    /// such an operation may or may not have taken effect.
    pub ret: Option<Ret>,
    /// Event index of the call.
    pub call: u64,
    /// Event index of the return (`u64::MAX` if it never returned).
    pub returned: u64,
}

#[derive(Debug)]
struct Inner<Op, Ret> {
    entries: Vec<Entry<Op, Ret>>,
    clock: u64,
}

/// A shared, append-only history. Clone it into every client.
#[derive(Debug)]
pub struct History<Op, Ret> {
    inner: Rc<RefCell<Inner<Op, Ret>>>,
}

impl<Op, Ret> Clone for History<Op, Ret> {
    fn clone(&self) -> Self {
        History {
            inner: self.inner.clone(),
        }
    }
}

impl<Op: Clone, Ret: Clone> Default for History<Op, Ret> {
    fn default() -> Self {
        History::new()
    }
}

impl<Op: Clone, Ret: Clone> History<Op, Ret> {
    /// An empty history.
    pub fn new() -> Self {
        History {
            inner: Rc::new(RefCell::new(Inner {
                entries: Vec::new(),
                clock: 0,
            })),
        }
    }

    /// Records a call; returns its handle for [`History::complete`].
    pub fn invoke(&self, client: usize, object: &str, op: Op) -> usize {
        let mut inner = self.inner.borrow_mut();
        inner.clock += 1;
        let call = inner.clock;
        inner.entries.push(Entry {
            client,
            object: object.to_string(),
            op,
            ret: None,
            call,
            returned: u64::MAX,
        });
        inner.entries.len() - 1
    }

    /// Records a return with its result.
    pub fn complete(&self, id: usize, ret: Ret) {
        let mut inner = self.inner.borrow_mut();
        inner.clock += 1;
        let now = inner.clock;
        let e = &mut inner.entries[id];
        e.ret = Some(ret);
        e.returned = now;
    }

    /// A copy of every entry, in call order.
    pub fn entries(&self) -> Vec<Entry<Op, Ret>> {
        self.inner.borrow().entries.clone()
    }

    /// Runs `f` on every entry, in call order, without copying them.
    pub fn with_entries<R>(&self, f: impl FnOnce(&[Entry<Op, Ret>]) -> R) -> R {
        f(&self.inner.borrow().entries)
    }
}

impl<Op: std::hash::Hash, Ret: std::hash::Hash> History<Op, Ret> {
    /// Feeds the whole history to `h`: a model whose invariant reads the history
    /// registers this as ghost state ([`crate::Sim::ghost`]).
    pub fn fingerprint(&self, h: &mut impl std::hash::Hasher) {
        std::hash::Hash::hash(&self.inner.borrow().entries, h);
    }
}
