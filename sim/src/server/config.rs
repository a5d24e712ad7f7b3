//! Settings of one simulated memcached (its command-line options).

use std::time::Duration;

/// One MiB.
pub const MIB: u64 = 1024 * 1024;

/// The settings of a simulated memcached, named after its command-line options.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// `-m`: memory for items, in bytes (default 64 MiB).
    pub memory_limit: u64,
    /// `-I`: the largest item (header + key + value), in bytes (default 1 MiB).
    pub item_size_max: u32,
    /// `-M`: return an error instead of evicting when memory is full.
    pub no_evict: bool,
    /// `-f`: growth factor between slab classes (default 1.25).
    pub growth_factor: f64,
    /// Offset of the server's tick edges from the run's whole seconds (below 1 s).
    pub phase: Duration,
    /// The unix time at virtual time zero, for absolute exptimes.
    pub unix_at_zero: i64,
    /// The version string `version` answers.
    pub version: String,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            memory_limit: 64 * MIB,
            item_size_max: MIB as u32,
            no_evict: false,
            growth_factor: 1.25,
            phase: Duration::ZERO,
            unix_at_zero: 1_700_000_000,
            version: "1.6.18".to_string(),
        }
    }
}

impl ServerConfig {
    /// With `-m megabytes`.
    pub fn memory_mb(mut self, megabytes: u64) -> ServerConfig {
        self.memory_limit = megabytes * MIB;
        self
    }

    /// With `-I bytes`.
    pub fn item_size_max(mut self, bytes: u32) -> ServerConfig {
        self.item_size_max = bytes;
        self
    }

    /// With `-M`.
    pub fn no_evict(mut self, yes: bool) -> ServerConfig {
        self.no_evict = yes;
        self
    }

    /// With a tick phase.
    pub fn phase(mut self, phase: Duration) -> ServerConfig {
        self.phase = phase;
        self
    }
}
