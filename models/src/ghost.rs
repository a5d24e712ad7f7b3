//! Ghost state fingerprinted through its `Debug` form, for harnesses whose bookkeeping
//! is made of types without `Hash` (floats, durations in nested records).
//!
//! Derived `Debug` writes every field, and the harnesses keep their ghost state in
//! vectors and `BTreeMap`s, so equal states print alike and different ones differ: the
//! explorer may merge two states only when the harness could not tell them apart.

use std::cell::RefCell;
use std::fmt::Debug;
use std::hash::Hasher;
use std::rc::Rc;

use mcsim::Sim;
use mcsim::exec::Fingerprint;

/// Feeds `state`'s `Debug` form to `h`.
pub fn by_debug(h: &mut Fingerprint, state: &impl Debug) {
    h.write(format!("{state:?}").as_bytes());
}

/// Registers `state`, a harness's ghost record, as the model's ghost fingerprint.
pub fn watch<T: Debug + 'static>(sim: &mut Sim, state: &Rc<RefCell<T>>) {
    let state = state.clone();
    sim.ghost(move |h| by_debug(h, &*state.borrow()));
}
