//! Probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010) with depth `d`.
//!
//! Each client gets a random distinct priority; the enabled client with the highest
//! priority runs; at `d - 1` random change points the running client's priority drops
//! below every initial one. A bug of depth `d` is found with probability at least
//! `1 / (n * k^(d-1))` per execution (n clients, k steps). `k` is a fixed estimate given
//! by the scenario, not learned from earlier executions, so that one seed alone replays
//! one execution. Faults fire with the plan's probabilities, as in
//! [`crate::explore::random`].

use rand::RngExt;

use crate::explore::random::{Seeds, delay_in_window, maybe_fault};
use crate::explore::{Choice, Options, Strategy};

/// PCT with a bug depth.
#[derive(Debug, Clone)]
pub struct Pct {
    seeds: Seeds,
    depth: usize,
    priorities: Vec<u64>,
    change_points: Vec<u64>,
    steps: u64,
}

impl Pct {
    /// PCT of depth `depth` (≥ 1) over executions of about `steps` steps, seeded like
    /// [`crate::explore::Random`].
    pub fn new(seed: u64, depth: usize, steps: u64) -> Pct {
        Pct {
            seeds: Seeds::new(seed),
            depth: depth.max(1),
            priorities: Vec::new(),
            change_points: Vec::new(),
            steps: steps.max(1),
        }
    }

    fn ensure_priorities(&mut self, clients: usize) {
        while self.priorities.len() < clients {
            // Initial priorities sit above every change-point priority (< depth).
            let p = self.depth as u64 + self.seeds.rng.random_range(0..1u64 << 40);
            self.priorities.push(p);
        }
    }
}

impl Strategy for Pct {
    fn name(&self) -> &'static str {
        "pct"
    }

    fn tick_phase(&mut self, free: bool) -> Option<std::time::Duration> {
        self.seeds.tick_phase(free)
    }

    fn begin(&mut self, execution: u64) {
        self.seeds.begin(execution);
        self.priorities.clear();
        let k = self.steps;
        self.change_points.clear();
        for _ in 1..self.depth {
            self.change_points.push(self.seeds.rng.random_range(0..k));
        }
    }

    fn choose(&mut self, options: &Options<'_>) -> Option<Choice> {
        self.ensure_priorities(options.clients);
        if let Some(fault) = maybe_fault(&mut self.seeds.rng, options) {
            return Some(fault);
        }
        let client = options
            .calls
            .iter()
            .map(|c| c.client)
            .max_by_key(|&c| self.priorities[c])
            .expect("at least one call may run");
        for (i, &point) in self.change_points.iter().enumerate() {
            if point == options.step {
                self.priorities[client] = (self.depth - 1 - i) as u64;
            }
        }
        let delay = delay_in_window(&mut self.seeds.rng, options, client);
        Some(Choice::Run { client, delay })
    }
}
