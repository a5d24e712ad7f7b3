//! The counters `stats` reports.

use std::time::Duration;

use crate::server::config::ServerConfig;

/// Counters of one server, named as in memcached's `stats` output. The server keeps the
/// ones also counted per slab class (hits, `cmd_set`, evictions, reclaims) only per class
/// ([`ClassStats`]); [`Server::stats`](crate::server::Server::stats) sums them in.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub struct Stats {
    pub cmd_get: u64,
    pub cmd_set: u64,
    pub cmd_flush: u64,
    pub cmd_touch: u64,
    pub get_hits: u64,
    pub get_misses: u64,
    pub get_expired: u64,
    pub get_flushed: u64,
    pub delete_misses: u64,
    pub delete_hits: u64,
    pub incr_misses: u64,
    pub incr_hits: u64,
    pub decr_misses: u64,
    pub decr_hits: u64,
    pub cas_misses: u64,
    pub cas_hits: u64,
    pub cas_badval: u64,
    pub touch_hits: u64,
    pub touch_misses: u64,
    pub curr_items: u64,
    pub total_items: u64,
    pub bytes: u64,
    pub evictions: u64,
    pub reclaimed: u64,
    pub expired_unfetched: u64,
    pub evicted_unfetched: u64,
    pub store_too_large: u64,
    pub store_no_memory: u64,
    pub curr_connections: u64,
    /// Connections opened since the start (memcached counts its listening socket too:
    /// `stats` reports one more).
    pub total_connections: u64,
    /// The most connections open at once (memcached's connection structures, one more
    /// with the listener's).
    pub connection_structures: u64,
    /// `me` commands (memcached's `cmd_meta` counts meta debug only).
    pub cmd_meta: u64,
    /// Bytes read from and written to the clients' sockets: counted by `mcsim serve`,
    /// 0 in an in-process run, which has no wire.
    pub bytes_read: u64,
    #[allow(missing_docs)]
    pub bytes_written: u64,
    /// Sums of the per-class counters of the LRU's own moves ([`ClassStats`]).
    pub evicted_active: u64,
    pub moves_to_cold: u64,
    pub moves_to_warm: u64,
    pub moves_within_lru: u64,
    pub direct_reclaims: u64,
}

/// The process a server's `stats` describes. A server simulated in-process has no
/// process of its own: it reports [`Process::SIMULATED`] (pid 0, no CPU time), so that a
/// model that reads `stats` runs the same way every time. `mcsim serve` reports its own
/// process ([`Server::report_process`](crate::server::Server::report_process)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Process {
    /// `pid`.
    pub pid: u32,
    /// `rusage_user`: CPU time spent in the process.
    pub user: Duration,
    /// `rusage_system`: CPU time spent in the kernel for it.
    pub system: Duration,
}

impl Process {
    /// What a server simulated in-process reports.
    pub const SIMULATED: Process = Process {
        pid: 0,
        user: Duration::ZERO,
        system: Duration::ZERO,
    };
}

/// What plain `stats` reports beside the counters, read when the server answers.
#[derive(Debug, Clone)]
pub struct Moment<'a> {
    /// The server's settings (`limit_maxbytes`, `version`).
    pub config: &'a ServerConfig,
    /// Seconds since the process started, as memcached counts them.
    pub uptime: u32,
    /// The unix time of the server's clock (`time`): its process start plus its tick.
    pub time: i64,
    /// The process.
    pub process: Process,
}

impl Stats {
    /// Every `STAT name value` pair of memcached 1.6.18's plain `stats`, in its order.
    ///
    /// The counters the simulation keeps, the clock (`uptime`, `time`), the settings
    /// (`limit_maxbytes`, `version`) and the process (`pid`, `rusage_*`) are the
    /// server's. The rest describe memcached's threads, buffers and hash table, which
    /// no simulated behaviour depends on: they read what an idle memcached 1.6.18 with
    /// Debian's build and its default settings reports (`threads 4`, `hash_power_level
    /// 16`, `libevent 2.1.12-stable`, 0 for the background threads' counters).
    pub fn lines(&self, at: &Moment<'_>) -> Vec<(String, String)> {
        let secs = |d: Duration| format!("{}.{:06}", d.as_secs(), d.subsec_micros());
        let mut out: Vec<(String, String)> = Vec::with_capacity(92);
        let mut put = |name: &str, value: String| out.push((name.to_string(), value));
        put("pid", at.process.pid.to_string());
        put("uptime", at.uptime.to_string());
        put("time", at.time.to_string());
        put("version", at.config.version.clone());
        put("libevent", "2.1.12-stable".into());
        put("pointer_size", usize::BITS.to_string());
        put("rusage_user", secs(at.process.user));
        put("rusage_system", secs(at.process.system));
        put("max_connections", "1024".into());
        let n = |v: u64| v.to_string();
        put("curr_connections", n(self.curr_connections));
        put("total_connections", n(self.total_connections + 1));
        put("rejected_connections", n(0));
        put("connection_structures", n(self.connection_structures + 1));
        for (name, value) in IDLE_BUFFERS {
            put(name, value.to_string());
        }
        for (name, value) in [
            ("cmd_get", self.cmd_get),
            ("cmd_set", self.cmd_set),
            ("cmd_flush", self.cmd_flush),
            ("cmd_touch", self.cmd_touch),
            ("cmd_meta", self.cmd_meta),
            ("get_hits", self.get_hits),
            ("get_misses", self.get_misses),
            ("get_expired", self.get_expired),
            ("get_flushed", self.get_flushed),
            ("delete_misses", self.delete_misses),
            ("delete_hits", self.delete_hits),
            ("incr_misses", self.incr_misses),
            ("incr_hits", self.incr_hits),
            ("decr_misses", self.decr_misses),
            ("decr_hits", self.decr_hits),
            ("cas_misses", self.cas_misses),
            ("cas_hits", self.cas_hits),
            ("cas_badval", self.cas_badval),
            ("touch_hits", self.touch_hits),
            ("touch_misses", self.touch_misses),
            ("store_too_large", self.store_too_large),
            ("store_no_memory", self.store_no_memory),
            ("auth_cmds", 0),
            ("auth_errors", 0),
            ("bytes_read", self.bytes_read),
            ("bytes_written", self.bytes_written),
            ("limit_maxbytes", at.config.memory_limit),
        ] {
            put(name, n(value));
        }
        for (name, value) in IDLE_THREADS {
            put(name, value.to_string());
        }
        for (name, value) in [
            ("bytes", self.bytes),
            ("curr_items", self.curr_items),
            ("total_items", self.total_items),
            ("slab_global_page_pool", 0),
            ("expired_unfetched", self.expired_unfetched),
            ("evicted_unfetched", self.evicted_unfetched),
            ("evicted_active", self.evicted_active),
            ("evictions", self.evictions),
            ("reclaimed", self.reclaimed),
            ("crawler_reclaimed", 0),
            ("crawler_items_checked", 0),
            ("lrutail_reflocked", 0),
            ("moves_to_cold", self.moves_to_cold),
            ("moves_to_warm", self.moves_to_warm),
            ("moves_within_lru", self.moves_within_lru),
            ("direct_reclaims", self.direct_reclaims),
            ("lru_bumps_dropped", 0),
        ] {
            put(name, n(value));
        }
        out
    }
}

/// The connection buffers of an idle memcached 1.6.18, between `connection_structures`
/// and `cmd_get`.
const IDLE_BUFFERS: [(&str, &str); 8] = [
    ("response_obj_oom", "0"),
    ("response_obj_count", "1"),
    ("response_obj_bytes", "16384"),
    ("read_buf_count", "2"),
    ("read_buf_bytes", "32768"),
    ("read_buf_bytes_free", "0"),
    ("read_buf_oom", "0"),
    ("reserved_fds", "20"),
];

/// The threads, listener and hash table of an idle memcached 1.6.18 with its default
/// settings, between `limit_maxbytes` and `bytes`.
const IDLE_THREADS: [(&str, &str); 27] = [
    ("accepting_conns", "1"),
    ("listen_disabled_num", "0"),
    ("time_in_listen_disabled_us", "0"),
    ("threads", "4"),
    ("conn_yields", "0"),
    ("hash_power_level", "16"),
    ("hash_bytes", "524288"),
    ("hash_is_expanding", "0"),
    ("slab_reassign_rescues", "0"),
    ("slab_reassign_chunk_rescues", "0"),
    ("slab_reassign_evictions_nomem", "0"),
    ("slab_reassign_inline_reclaim", "0"),
    ("slab_reassign_busy_items", "0"),
    ("slab_reassign_busy_deletes", "0"),
    ("slab_reassign_running", "0"),
    ("slabs_moved", "0"),
    ("lru_crawler_running", "0"),
    ("lru_crawler_starts", "0"),
    ("lru_maintainer_juggles", "0"),
    ("malloc_fails", "0"),
    ("log_worker_dropped", "0"),
    ("log_worker_written", "0"),
    ("log_watcher_skipped", "0"),
    ("log_watcher_sent", "0"),
    ("log_watchers", "0"),
    ("unexpected_napi_ids", "0"),
    ("round_robin_fallback", "0"),
];

/// Counters of one slab class, named as in memcached's `stats items` and `stats slabs`
/// (their sums over the classes are the server-wide counters of the same name).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub struct ClassStats {
    pub get_hits: u64,
    pub set_cmds: u64,
    pub delete_hits: u64,
    pub incr_hits: u64,
    pub decr_hits: u64,
    pub cas_hits: u64,
    pub cas_badval: u64,
    pub touch_hits: u64,
    pub evicted: u64,
    pub evicted_nonzero: u64,
    /// Seconds since the last evicted item was last accessed.
    pub evicted_time: u32,
    pub outofmemory: u64,
    pub reclaimed: u64,
    pub expired_unfetched: u64,
    pub evicted_unfetched: u64,
    pub evicted_active: u64,
    pub moves_to_cold: u64,
    pub moves_to_warm: u64,
    pub moves_within_lru: u64,
    pub direct_reclaims: u64,
    pub hits_to_hot: u64,
    pub hits_to_warm: u64,
    pub hits_to_cold: u64,
}

/// A hit on an item, counted server-wide and in the item's class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    /// A read (`get`, `gets`, `mg`): also counted by the LRU queue it found the item in.
    Get,
    /// `touch`, `gat`, `mg … T`.
    Touch,
    /// `delete`, `md`.
    Delete,
    /// `incr`, `ma`.
    Incr,
    /// `decr`, `ma MD`.
    Decr,
    /// A `cas` that matched.
    CasHit,
    /// A `cas` that did not.
    CasBadval,
}

#[cfg(test)]
mod tests {
    use crate::protocol::{Reply, Request};
    use crate::{Server, VirtualTime};

    fn stat(reply: &Reply, name: &str) -> String {
        reply
            .stat(name)
            .unwrap_or_else(|| panic!("no {name}"))
            .to_string()
    }

    #[test]
    fn time_is_the_servers_clock_and_the_process_is_simulated_in_process() {
        let mut server = Server::with_defaults();
        for secs in [0, 1, 59, 3_600] {
            let now = VirtualTime::from_millis(secs * 1_000 + 500);
            let reply = server.apply(&Request::Stats, now);
            let unix = server.clock().unix_time(now);
            assert_eq!(stat(&reply, "time"), unix.to_string(), "at {secs} s");
            assert_eq!(stat(&reply, "uptime"), (secs + 2).to_string());
            assert_eq!(stat(&reply, "pid"), "0");
            assert_eq!(stat(&reply, "rusage_user"), "0.000000");
            assert_eq!(stat(&reply, "version"), "1.6.18");
        }
    }

    #[test]
    fn connections_opened_are_counted_with_the_listener() {
        let mut server = Server::with_defaults();
        server.set_connections(3);
        server.set_connections(1);
        server.set_connections(2);
        let reply = server.apply(&Request::Stats, VirtualTime::ZERO);
        assert_eq!(stat(&reply, "curr_connections"), "2");
        assert_eq!(stat(&reply, "total_connections"), "5");
        assert_eq!(stat(&reply, "connection_structures"), "4");
    }
}
