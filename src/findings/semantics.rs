//! Where memcached's behaviour differs between versions in a way a recipe notices: which
//! behaviour the simulator models, for the findings report.

/// One behaviour a recipe can notice, as modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Modelled {
    /// The behaviour.
    pub behaviour: &'static str,
    /// What the simulator does (memcached 1.6.18's behaviour, with its source).
    pub modelled: &'static str,
    /// How other versions differ.
    pub elsewhere: &'static str,
    /// The recipes whose verdicts depend on it.
    pub noticed_by: &'static str,
}

/// Every version-dependent behaviour the findings rest on.
pub const MODELLED: &[Modelled] = &[
    Modelled {
        behaviour: "expiry clock",
        modelled: "a whole-second clock ticking at a phase of its own: TTL N lives between N-1 and N seconds (memcached.c clock_handler, items.c do_item_get)",
        elsewhere: "the same in every 1.4 to 1.6 release",
        noticed_by: "lock (hold close to the TTL), visitor, online, eventlog, tags/time",
    },
    Modelled {
        behaviour: "append or prepend past the item size limit",
        modelled: "NOT_STORED, the old value kept (do_store_item: the joined item cannot be allocated)",
        elsewhere: "the same in 1.4.15 and 1.6.18; a client library may turn it into a silent false",
        noticed_by: "eventlog (large events), array2, set",
    },
    Modelled {
        behaviour: "set of a value over -I",
        modelled: "SERVER_ERROR object too large for cache, and the key's old value is deleted",
        elsewhere: "as 1.6.18 (proto_text.c process_update_command); the deletion is what a cache or lock notices",
        noticed_by: "cache (too-large rebuild), lock",
    },
    Modelled {
        behaviour: "eviction order",
        modelled: "segmented LRU (HOT, WARM, COLD per slab class; a key read twice moves to WARM); eviction from the COLD tail of the class that needs room",
        elsewhere: "default from 1.5.0; 1.4 had one LRU per class, bumped at most once a minute, so which key goes first differs",
        noticed_by: "lock-add-evict, counter-incr-add-evict, table evictions, tags evictions",
    },
    Modelled {
        behaviour: "-M (no eviction)",
        modelled: "SERVER_ERROR out of memory storing object, and a set's old value deleted",
        elsewhere: "as 1.6.18",
        noticed_by: "array2-fixed-full",
    },
    Modelled {
        behaviour: "large items",
        modelled: "values over slab_chunk_max (512 KiB by default) stored as chunks; -I up to 1 GiB, checked at start-up as 1.6.18 does",
        elsewhere: "chunked items from 1.4.29 on (default in 1.5); before, an item had to fit one slab page",
        noticed_by: "eventlog-as-written-large, array2-fixed-full",
    },
    Modelled {
        behaviour: "warm restart",
        modelled: "with warm_restart, a crashed server comes back with its items and their TTLs counted through the downtime (-e)",
        elsewhere: "from 1.5.18; earlier versions always restart empty",
        noticed_by: "counter-incr-add-crash",
    },
    Modelled {
        behaviour: "meta arithmetic auto-create",
        modelled: "ma with N on a miss answers NF, as 1.6.18 does",
        elsewhere: "1.6.20 and later create the counter (N auto-vivify); the meta commands do not exist before 1.6",
        noticed_by: "none of the shipped recipes (they use incr and add)",
    },
    Modelled {
        behaviour: "meta get vivify (N) and win tokens",
        modelled: "mg with N on a miss creates an empty item and answers W to one client, Z to the rest",
        elsewhere: "1.6 only",
        noticed_by: "cache/mg-vivify",
    },
];
