//! Ghost state fingerprinted for the explorer: by `Hash` ([`watch`]), or, for a record
//! with fields that are not `Hash` (floats), through its `Debug` form ([`by_debug`], fed
//! from the harness's own `sim.ghost(…)`).
//!
//! Derived `Hash` and `Debug` take every field, and the harnesses keep their ghost state in
//! vectors and `BTreeMap`s, so equal states print alike and different ones differ: the
//! explorer may merge two states only when the harness could not tell them apart.

use std::cell::RefCell;
use std::fmt::Debug;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use mcsim::Sim;
use mcsim::exec::Fingerprint;

/// Feeds `state`'s `Debug` form to `h`, piece by piece as it is written (no string is
/// built).
pub fn by_debug(h: &mut Fingerprint, state: &impl Debug) {
    struct Feed<'a>(&'a mut Fingerprint);
    impl std::fmt::Write for Feed<'_> {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.write(s.as_bytes());
            Ok(())
        }
    }
    // Writing to a hasher cannot fail; a `Debug` impl that reports an error only stops
    // the feed early, which still hashes deterministically.
    let _ = std::fmt::write(&mut Feed(h), format_args!("{state:?}"));
}

/// Registers `state`, a harness's ghost record, as the model's ghost fingerprint, hashed
/// field by field. The explorer fingerprints it at every choice point, so this is what a
/// record whose fields are all `Hash` should use: through `Debug` ([`by_debug`]) the
/// same fingerprints took 1.7 times as long on `cache-mg-vivify`'s search.
pub fn watch<T: Hash + 'static>(sim: &mut Sim, state: &Rc<RefCell<T>>) {
    let state = state.clone();
    sim.ghost(move |h| state.borrow().hash(h));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fingerprint(state: &impl Debug) -> u64 {
        let mut h = Fingerprint::default();
        by_debug(&mut h, state);
        h.finish()
    }

    #[test]
    fn equal_records_hash_alike_and_different_ones_apart() {
        let a = vec![(1u32, "enter"), (2, "leave")];
        assert_eq!(fingerprint(&a), fingerprint(&a.clone()));
        assert_ne!(
            fingerprint(&a),
            fingerprint(&vec![(1u32, "enter"), (2, "enter")])
        );
        assert_ne!(
            fingerprint(&a),
            fingerprint(&vec![(2u32, "leave"), (1, "enter")])
        );
        // Something was fed: not the hasher's empty value.
        assert_ne!(fingerprint(&a), Fingerprint::default().finish());
    }
}
