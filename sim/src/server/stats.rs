//! The counters `stats` reports.

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
}

impl Stats {
    /// The `STAT name value` pairs, in memcached's order, for the counters modelled.
    pub fn lines(&self, limit_maxbytes: u64, uptime: u32) -> Vec<(String, String)> {
        let v = [
            ("uptime", u64::from(uptime)),
            ("curr_connections", self.curr_connections),
            ("cmd_get", self.cmd_get),
            ("cmd_set", self.cmd_set),
            ("cmd_flush", self.cmd_flush),
            ("cmd_touch", self.cmd_touch),
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
            ("limit_maxbytes", limit_maxbytes),
            ("bytes", self.bytes),
            ("curr_items", self.curr_items),
            ("total_items", self.total_items),
            ("expired_unfetched", self.expired_unfetched),
            ("evicted_unfetched", self.evicted_unfetched),
            ("evictions", self.evictions),
            ("reclaimed", self.reclaimed),
        ];
        v.iter()
            .map(|(k, n)| (k.to_string(), n.to_string()))
            .collect()
    }
}

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
