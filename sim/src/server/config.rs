//! Settings of one simulated memcached (its command-line options).

use std::time::Duration;

/// One MiB.
pub const MIB: u64 = 1024 * 1024;

/// memcached's slab page size (`slab_page_size`, not settable from its command line).
pub const SLAB_PAGE_SIZE: u32 = 1024 * 1024;

/// memcached's default `slab_chunk_max`: half a page.
pub const SLAB_CHUNK_MAX_DEFAULT: u32 = SLAB_PAGE_SIZE / 2;

/// The smallest `slab_chunk_max` modelled: memcached 1.6.18 starts with smaller ones, but
/// a chunk must at least hold the chunk header and the smallest item.
pub const SLAB_CHUNK_MAX_MODELLED: u32 = 1024;

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
    /// `-o slab_chunk_max`: the largest chunk, in bytes (default half a page, 512 KiB);
    /// larger items are stored in chunks of this size.
    pub slab_chunk_max: u32,
    /// The TCP port `stats settings` reports (`serve` sets the one it listens on).
    pub tcp_port: u16,
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
            slab_chunk_max: SLAB_CHUNK_MAX_DEFAULT,
            tcp_port: 11211,
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

    /// With `-o slab_chunk_max=bytes`.
    pub fn slab_chunk_max(mut self, bytes: u32) -> ServerConfig {
        self.slab_chunk_max = bytes;
        self
    }

    /// Why memcached 1.6.18 would refuse to start with these settings, in the words it
    /// prints before exiting with status 64 (`EX_USAGE`); `None` if it starts. The checks
    /// run in memcached's order, so the first one that fails is the one it names. A
    /// `slab_chunk_max` memcached accepts but the slab model does not cover is refused
    /// too, and says so.
    pub fn refusal(&self) -> Option<String> {
        let item = u64::from(self.item_size_max);
        let chunk = self.slab_chunk_max;
        if item < 1024 {
            return Some("Item max size cannot be less than 1024 bytes.".into());
        }
        if item > self.memory_limit / 2 {
            return Some("Cannot set item size limit higher than 1/2 of memory max.".into());
        }
        if item > 1024 * MIB {
            return Some("Cannot set item size limit higher than a gigabyte.".into());
        }
        if u64::from(chunk) > item {
            return Some(format!(
                "slab_chunk_max (bytes: {chunk}) cannot be larger than -I (item_size_max {item})"
            ));
        }
        if chunk == 0 || !item.is_multiple_of(u64::from(chunk)) {
            return Some(format!(
                "-I (item_size_max: {item}) must be evenly divisible by slab_chunk_max (bytes: {chunk})"
            ));
        }
        if !SLAB_PAGE_SIZE.is_multiple_of(chunk) {
            return Some(format!(
                "slab_chunk_max (bytes: {chunk}) must divide evenly into {SLAB_PAGE_SIZE} (slab_page_size)"
            ));
        }
        if chunk < SLAB_CHUNK_MAX_MODELLED {
            return Some(format!(
                "slab_chunk_max (bytes: {chunk}): below {SLAB_CHUNK_MAX_MODELLED} bytes is not modelled by mcsim"
            ));
        }
        None
    }

    /// With a tick phase.
    pub fn phase(mut self, phase: Duration) -> ServerConfig {
        self.phase = phase;
        self
    }
}
