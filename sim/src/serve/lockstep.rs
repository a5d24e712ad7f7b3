//! Lockstep mode: `mcsim serve --lockstep N` holds each command of N declared client
//! connections and releases one at a time, in an order drawn from the seed, so that a
//! multi-threaded client test interleaves the same way every time it runs with that seed.
//!
//! A command is released only when every participating connection has one waiting (or
//! has closed) and at least N connections have taken part: then the order depends on the
//! seed alone, not on thread timing. Connections are told apart by name (`mcsim name X`,
//! or a key `mcsim:name:X` fetched with `get`), or by the order they connected, which
//! thread scheduling may change: name them for byte-identical traces. A participant that
//! sends nothing for the wait limit is passed over, and the trace says so.

use std::collections::BTreeMap;
use std::time::Duration;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The scheduler's state.
pub(crate) struct Lockstep {
    clients: usize,
    /// Participants (connections that sent a memcached command), by id, with their label.
    live: BTreeMap<u64, String>,
    /// Those with a command waiting.
    waiting: BTreeMap<u64, String>,
    granted: Option<u64>,
    rng: ChaCha8Rng,
    /// How long a release waits for a participant that sends nothing.
    pub wait_limit: Duration,
}

impl Lockstep {
    pub fn new(clients: usize, seed: u64, wait_limit: Duration) -> Lockstep {
        Lockstep {
            clients: clients.max(1),
            live: BTreeMap::new(),
            waiting: BTreeMap::new(),
            granted: None,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x10C5_7E90),
            wait_limit,
        }
    }

    /// Connection `id` (named `label`) has a command ready.
    pub fn arrive(&mut self, id: u64, label: &str) {
        self.live.insert(id, label.to_string());
        self.waiting.insert(id, label.to_string());
    }

    /// Connection `id` closed.
    pub fn leave(&mut self, id: u64) {
        self.live.remove(&id);
        self.waiting.remove(&id);
        if self.granted == Some(id) {
            self.granted = None;
        }
    }

    /// True if `id` may run its command now (and takes the grant).
    pub fn take(&mut self, id: u64) -> bool {
        if self.granted == Some(id) {
            self.granted = None;
            self.waiting.remove(&id);
            return true;
        }
        false
    }

    /// Grants the next command if every participant is waiting; with `force`, among
    /// those waiting even if some are not (a participant passed over). Returns the
    /// labels passed over, if any.
    pub fn grant(&mut self, force: bool) -> Option<Vec<String>> {
        if self.granted.is_some() || self.waiting.is_empty() {
            return None;
        }
        let all_here = self.live.len() >= self.clients && self.waiting.len() == self.live.len();
        if !all_here && !force {
            return None;
        }
        let mut order: Vec<(&String, u64)> = self.waiting.iter().map(|(id, l)| (l, *id)).collect();
        order.sort();
        let pick = order[self.rng.random_range(0..order.len())].1;
        self.granted = Some(pick);
        let passed: Vec<String> = self
            .live
            .iter()
            .filter(|(id, _)| !self.waiting.contains_key(id))
            .map(|(_, l)| l.clone())
            .collect();
        Some(passed)
    }
}
