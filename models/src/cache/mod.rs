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

/// The recipe family's name.
pub const FAMILY: &str = "cache";

/// Its variants.
pub const VARIANTS: &[&str] = &["naive", "get-set-lock", "add-lock", "mg-vivify"];

/// Its invariants.
pub const INVARIANTS: &[&str] = &["cache.single_rebuild"];

/// Builds a cache scenario's setup from its parameters.
pub fn build(
    cx: &mcsim::scenario::BuildContext<'_>,
) -> Result<mcsim::scenario::Setup, mcsim::scenario::FieldError> {
    let p = cx.params;
    let cache = CacheConfig {
        variant: CacheVariant::parse(cx.variant)
            .ok_or_else(|| crate::catalog::unknown_variant(cx))?,
        ttl_s: p.seconds("ttl_s", 2)?,
        lock_timeout_s: p.seconds("lock_timeout_s", 10)?,
        poll: p.millis("poll_ms", 100)?,
        max_wait: p.millis("max_wait_ms", 2500)?,
        serve_stale: p.bool("serve_stale", false)?,
        vivify_s: p.seconds("vivify_s", 30)?,
        recache_s: p.seconds("recache_s", 0)?,
    };
    let params = CacheParams {
        cache,
        rebuild: p.millis("rebuild_ms", 300)?,
        requests: p.count("requests", 40)?,
        interval: p.millis("interval_ms", 100)?,
        spread: p.bool("spread", false)?,
        keys: p.count("keys", 1)?,
        skews: cx.skews.to_vec(),
    };
    let clients = cx.clients;
    Ok(std::rc::Rc::new(move |sim| setup(&params, clients, sim)))
}
