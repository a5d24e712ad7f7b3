//! Dog-pile-safe caching (RECIPES.md §10, HL "simultaneous cache rebuild").
//!
//! A query result used by many pages is cached; when it expires, every frontend that asks
//! for it at that moment finds it missing and sends the same heavy query to the database
//! (the dog-pile effect). The variants:
//!
//! - `cache/naive`: plain memcached TTL; every reader that misses rebuilds.
//! - `cache/get-set-lock`: HL's scheme (below) with the "obvious but incorrect" lock: `get`
//!   the lock key, `set` it when missing. Two readers can both see no lock and both
//!   rebuild; HL accepts that for caches because the goal is fewer queries, not exclusion.
//! - `cache/add-lock`: HL as described: the value is stored without a memcached TTL and
//!   carries its own `valid_until`. A reader that finds it stale tries `add` on a lock key;
//!   the winner queries the backend, writes the new value and deletes the lock; a loser
//!   polls until the lock is gone and reads again, or after `max_wait_ms` (HL: 2–3 s)
//!   serves the stale value. The lock has a TTL (`lock_timeout_s`, HL: 10 s): a rebuild
//!   that outlasts it, or an evicted lock key, lets a second rebuild in.
//! - `cache/mg-vivify`: memcached 1.6 meta commands: `mg key v c t N<vivify_s>` creates a
//!   placeholder on a miss and answers `W` (you rebuild) to one reader and `Z` to the
//!   others; the winner stores with `ms key … C<cas> T<ttl>`. With `recache_s > 0`,
//!   `R<recache_s>` hands one reader a win token shortly before the TTL runs out while the
//!   others keep being served the old value.
//! - `cache/xfetch`: probabilistic early recomputation (XFetch: Vattani, Chierichetti,
//!   Lowenstein, "Optimal Probabilistic Cache Stampede Prevention", VLDB 2015). The value
//!   carries its expiry and how long its last recompute took (delta); a reader that hits
//!   recomputes early when `now - delta * beta * ln(u) >= expiry` for a draw `u` in
//!   (0, 1), so one reader is likely to recompute shortly before the expiry while the
//!   others are served. The claim: one recompute per expiry, no stampede. A variant of
//!   this family, not a family of its own, so that its recomputes at once, backend
//!   queries and oldest value served are measured by the same workload as the naive and
//!   the locked caches beside it. As commonly written the item's memcached TTL is the
//!   value's expiry, which memcached's whole-second clock ends up to a second early:
//!   the item is gone before the early recomputes, and the readers miss together.
//!   `cache/xfetch-margin` stores the TTL two seconds beyond the expiry.
//!
//! The backend is ghost state: a query sleeps `rebuild_ms` and the harness counts who is
//! running it. Invariant `cache.single_rebuild`: at most one backend rebuild of a key at a
//! time. Metrics (every execution): `cache.backend_queries`, `cache.expiries`,
//! `cache.queries_per_expiry`, `cache.max_concurrent_rebuilds`, `cache.longest_wait_ms`,
//! `cache.oldest_value_ms` (age of the oldest rows served), `cache.stale_served`,
//! `cache.empty_served`, and per letter of HL's debugging strip `cache.strip.<L>`.
//!
//! The strip: one letter per logical event of a cache key — `M` missing or stale, `L` lock
//! attempt or lock check, `W` rebuilt value written, `U` lock removed, `H` fresh value
//! served, `S` stale value served, `E` nothing to serve. Each letter is written into the
//! trace as it happens, the whole strip when the last client finishes, and into the
//! failure message of `cache.single_rebuild`.

mod ghost;
mod harness;
mod recipe;

pub use ghost::{Frontend, Ghost, Overlap};
pub use harness::{CacheParams, key_name, setup};
pub use recipe::{
    Answer, Backend, Cache, CacheConfig, CacheVariant, Chance, Early, Entry, Event, Strip,
    XFETCH_MARGIN_S,
};

use mcsim::prelude::*;

/// A cache scenario's `[params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// The cached value's TTL.
    pub ttl_s: Seconds,
    /// The rebuild lock's TTL.
    pub lock_timeout_s: Seconds,
    /// Wait between polls of a client that did not get the lock.
    pub poll_ms: Millis,
    /// How long such a client waits before it rebuilds anyway.
    pub max_wait_ms: Millis,
    /// Serve the stale value while another client rebuilds.
    pub serve_stale: bool,
    /// `mg-vivify`: the TTL of a vivified placeholder.
    pub vivify_s: Seconds,
    /// `mg-vivify`: recache when this little TTL is left (0: off).
    pub recache_s: Seconds,
    /// Time a rebuild takes.
    pub rebuild_ms: Millis,
    /// Requests per client.
    pub requests: Count,
    /// Time between a client's requests.
    pub interval_ms: Millis,
    /// Spread the clients' first requests over an interval.
    pub spread: bool,
    /// Cached keys.
    pub keys: Count,
    /// Client 0 stores the values before the pages begin: no cold start.
    pub warm: bool,
    /// `xfetch`: its beta in hundredths (100: beta 1, as its authors advise).
    pub beta_percent: Count,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            ttl_s: Seconds(2),
            lock_timeout_s: Seconds(10),
            poll_ms: Millis(100),
            max_wait_ms: Millis(2500),
            serve_stale: false,
            vivify_s: Seconds(30),
            recache_s: Seconds(0),
            rebuild_ms: Millis(300),
            requests: Count(40),
            interval_ms: Millis(100),
            spread: false,
            keys: Count(1),
            warm: false,
            beta_percent: Count(100),
        }
    }
}

impl Model for CacheVariant {
    const NAME: &'static str = "cache";
    const VARIANTS: &'static [(&'static str, CacheVariant)] = &[
        ("naive", CacheVariant::Naive),
        ("get-set-lock", CacheVariant::GetSetLock),
        ("add-lock", CacheVariant::AddLock),
        ("mg-vivify", CacheVariant::MgVivify),
        ("xfetch", CacheVariant::XFetch),
        ("xfetch-margin", CacheVariant::XFetchMargin),
    ];
    const INVARIANTS: &'static [&'static str] = &["cache.single_rebuild"];
    const CLAIMS: &'static [Claim] = &[
        Claim {
            variant: "naive",
            source: "HL cache rebuild",
            says: "a plain TTL: every reader that misses rebuilds, the dog-pile HL describes.",
            presented_as_correct: false,
            magnitude: &["cache.max_concurrent_rebuilds", "cache.backend_queries"],
        },
        Claim {
            variant: "get-set-lock",
            source: "HL cache rebuild",
            says: "the rebuild lock taken with get then set: HL accepts that two readers may rebuild at once.",
            presented_as_correct: false,
            magnitude: &["cache.max_concurrent_rebuilds", "cache.backend_queries"],
        },
        Claim {
            variant: "add-lock",
            source: "HL cache rebuild",
            says: "a value carrying its own expiry and a rebuild lock taken with add: one rebuild at a time, others serve the stale value.",
            presented_as_correct: true,
            magnitude: &["cache.max_concurrent_rebuilds", "cache.oldest_value_ms"],
        },
        Claim {
            variant: "mg-vivify",
            source: "memcached 1.6 meta commands",
            says: "mg with N on a miss hands the rebuild to one reader (W) and makes the others wait (Z): one rebuild at a time.",
            presented_as_correct: true,
            magnitude: &["cache.max_concurrent_rebuilds", "cache.backend_queries"],
        },
        Claim {
            variant: "xfetch",
            source: "XFetch (Vattani, Chierichetti, Lowenstein, VLDB 2015)",
            says: "probabilistic early recomputation: a reader recomputes before the expiry with a chance that grows near it, so about one recompute per expiry and no stampede, without a lock.",
            presented_as_correct: true,
            magnitude: &[
                "cache.max_concurrent_rebuilds",
                "cache.queries_per_expiry",
                "cache.backend_queries",
            ],
        },
        Claim {
            variant: "xfetch-margin",
            source: "XFetch (Vattani, Chierichetti, Lowenstein, VLDB 2015)",
            says: "the same, the item's memcached TTL beyond the value's expiry so that the early recomputes come before memcached drops it.",
            presented_as_correct: true,
            magnitude: &[
                "cache.max_concurrent_rebuilds",
                "cache.queries_per_expiry",
                "cache.backend_queries",
            ],
        },
    ];
    type Params = Params;

    fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
        let params = CacheParams {
            cache: CacheConfig {
                variant: *self,
                ttl_s: p.ttl_s.get(),
                lock_timeout_s: p.lock_timeout_s.get(),
                poll: p.poll_ms.get(),
                max_wait: p.max_wait_ms.get(),
                serve_stale: p.serve_stale,
                vivify_s: p.vivify_s.get(),
                recache_s: p.recache_s.get(),
                beta: f64::from(p.beta_percent.get()) / 100.0,
            },
            rebuild: p.rebuild_ms.get(),
            requests: p.requests.get(),
            interval: p.interval_ms.get(),
            spread: p.spread,
            keys: p.keys.get(),
            warm: p.warm,
            skews: cx.skews.clone(),
        };
        setup(&params, cx.clients, sim);
    }
}
