//! Fingerprints of the simulated world: of the final state (what the servers hold and the
//! model's ghost state, for counting distinct outcomes) and of the whole state at a choice
//! point (for the explorer's visited-state cache, as TLC keeps).

use std::hash::{Hash, Hasher};

use crate::exec::Fingerprint;
use crate::exec::engine::Engine;

impl Engine<'_> {
    /// The final state's fingerprint: every server's live items and the ghost state.
    pub(super) fn fingerprint(&self) -> u64 {
        let servers = self.cluster.state_hash(self.now());
        let ghost = crate::exec::ghost::fingerprint(&self.ghosts);
        servers ^ ghost.rotate_left(29).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    /// The whole state at this choice point: two equal fingerprints have the same future.
    /// It holds virtual time and the step, every server's state
    /// ([`crate::cluster::Cluster::fingerprint`]), each client's wait, pending outcome
    /// and everything it observed so far (which, its code being deterministic, decides
    /// what it does next), the timeouts and timed events ahead, the fault budgets used
    /// and the model's ghost state.
    ///
    /// `None` where no fingerprint can be trusted: the model registered no ghost state
    /// (mcsim cannot know what its harness remembers), or a server is near its memory
    /// limit (where the LRU order and the slabs, left out, decide evictions).
    pub(super) fn state(&self) -> Option<u64> {
        if self.ghosts.is_empty() || self.eviction_possible() {
            return None;
        }
        let mut h = Fingerprint::default();
        let core = self.core.borrow();
        (core.now, self.step).hash(&mut h);
        self.cluster.fingerprint(&mut h);
        for m in &core.mailboxes {
            (&m.wait, m.woken, m.seen, &m.reply).hash(&mut h);
        }
        self.deferred.hash(&mut h);
        self.timers.hash(&mut h);
        self.fault_counts.hash(&mut h);
        for ghost in &self.ghosts {
            ghost(&mut h);
        }
        Some(h.finish())
    }
}
