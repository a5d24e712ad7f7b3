//! Fingerprints of the simulated world: of the final state (what the servers hold and the
//! model's ghost state, for counting distinct outcomes) and of the whole state at a choice
//! point (for the explorer's visited-state cache, as TLC keeps).

use std::hash::{Hash, Hasher};

use super::observer::Observer;
use crate::exec::Fingerprint;
use crate::exec::engine::Engine;

impl<O: Observer> Engine<O> {
    /// The final state's fingerprint: every server's live items and the ghost state.
    pub(super) fn fingerprint(&self) -> u64 {
        self.fingerprint_at(self.now())
    }

    /// [`Engine::fingerprint`] at `now` (for a caller that holds the core).
    pub(super) fn fingerprint_at(&self, now: crate::clock::VirtualTime) -> u64 {
        let servers = self.cluster.state_hash(now);
        let mut ghost = crate::exec::ghost::fingerprint(&self.sim.ghosts);
        if !self.sim.holders.is_empty() {
            let mut h = Fingerprint::resume(ghost);
            for holders in &self.sim.holders {
                holders.clients().hash(&mut h);
            }
            ghost = h.finish();
        }
        servers ^ ghost.rotate_left(29).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    /// The whole state at this choice point: two equal fingerprints have the same future.
    /// It holds virtual time and the step, every server's state
    /// ([`crate::cluster::Cluster::fingerprint`]), each client's part (its clock skew,
    /// wait, pending outcome and everything it observed so far, which, its code being
    /// deterministic, decides what it does next; a timeout it is owed; its ghost state:
    /// whether it holds, and [`crate::Sim::symmetric`]'s per-client part), the timed
    /// events ahead, the fault budgets used and the model's ghost state.
    ///
    /// With `ranks`, the state up to a permutation of interchangeable clients: the
    /// clients' parts are taken in the order of their own fingerprints, so two states
    /// that differ only by which client is which get one fingerprint, and `ranks`
    /// receives each client's place in that order (for the strategy to rename what it
    /// keeps about clients).
    ///
    /// `None` where no fingerprint can be trusted: the model registered no ghost state
    /// (mcsim cannot know what its harness remembers), or a server is near its memory
    /// limit (where the LRU order and the slabs, left out, decide evictions).
    pub(super) fn state(&self, ranks: Option<&mut Vec<usize>>) -> Option<u64> {
        if !self.trusted() {
            return None;
        }
        let core = self.sim.core.borrow();
        let mut parts: Vec<(u64, usize)> = core
            .mailboxes
            .iter()
            .enumerate()
            .map(|(c, m)| {
                let mut h = Fingerprint::default();
                // As the tuple `(skew, wait, woken, seen, reply)` hashes.
                m.skew.hash(&mut h);
                m.hash_wait(&mut h);
                (m.woken, m.seen, &m.reply).hash(&mut h);
                self.per_client[c].deferred.hash(&mut h);
                for holders in &self.sim.holders {
                    holders.contains(c).hash(&mut h);
                }
                if let Some(per_client) = &self.sim.symmetric {
                    per_client(c, &mut h);
                }
                (h.finish(), c)
            })
            .collect();
        if let Some(ranks) = ranks {
            parts.sort_unstable();
            ranks.clear();
            ranks.resize(parts.len(), 0);
            for (rank, &(_, c)) in parts.iter().enumerate() {
                ranks[c] = rank;
            }
        }
        let mut h = Fingerprint::default();
        (core.now, self.progress.step).hash(&mut h);
        self.cluster.fingerprint(&mut h);
        for (part, _) in &parts {
            part.hash(&mut h);
        }
        self.timers.hash(&mut h);
        self.faults.fired.hash(&mut h);
        for ghost in &self.sim.ghosts {
            ghost(&mut h);
        }
        Some(h.finish())
    }

    /// True if a state fingerprint can be trusted: the model registered its ghost state
    /// and no server is near its memory limit.
    fn trusted(&self) -> bool {
        let ghost = !self.sim.ghosts.is_empty()
            || !self.sim.holders.is_empty()
            || self.sim.symmetric.is_some();
        ghost && !self.eviction_possible()
    }

    /// True if the model declared its clients interchangeable ([`crate::Sim::symmetric`])
    /// and nothing in the world singles one out: no fault scripted at a client.
    pub(super) fn symmetric_now(&self) -> bool {
        self.sim.symmetric.is_some()
            && !self.timers.iter().any(|(_, _, t)| {
                matches!(t, crate::exec::timer::Timer::Scripted(f) if f.client().is_some())
            })
    }
}
