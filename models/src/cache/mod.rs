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
pub use recipe::{Answer, Backend, Cache, CacheConfig, CacheVariant, Entry, Event, Strip};

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
            },
            rebuild: p.rebuild_ms.get(),
            requests: p.requests.get(),
            interval: p.interval_ms.get(),
            spread: p.spread,
            keys: p.keys.get(),
            skews: cx.skews.clone(),
        };
        setup(&params, cx.clients, sim);
    }
}
