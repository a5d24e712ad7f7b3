//! Tagged cache invalidation (RECIPES.md §11, HL "tags", "tag versions").
//!
//! A cache entry depends on some tags. Each tag is a memcached key holding a version; the
//! entry stores the versions its tags had when it was built, and is valid while it has not
//! expired and every stored version equals the tag's current one (read in one multi-get
//! with the entry). Invalidating every entry of a tag = giving the tag a new version, after
//! the change to the database has committed. The variants differ in what a version is:
//!
//! - `tags/counter`: an integer bumped by `incr`. If the tag key is lost (evicted, server
//!   restarted) the next invalidation finds it missing and starts again at 1, a number an
//!   entry built before may already hold: that entry becomes valid again (HL's reason for
//!   not using counters).
//! - `tags/time`: the invalidating frontend's clock in milliseconds. A lost tag gets a
//!   newer version than any before, but only if the clocks agree: a frontend whose clock
//!   lags writes a version that is not newer. HL also uses the version to route rebuilds
//!   when the database is replicated: a rebuild goes to the master while some tag changed
//!   less than `master_window_ms` ago, otherwise to a replica. With `replica_lag_ms > 0`
//!   the ghost database has such a replica; a lagging writer's version looks old, the
//!   rebuild goes to a replica that has not seen the change, and the old rows are cached
//!   under the new version. (`counter` has no time in its versions and always rebuilds
//!   from the master.)
//!
//! Invariant `tags.no_stale_after_invalidate`: once an invalidation has completed, no read
//! that starts after it returns rows built before the change it announces. Metrics (every
//! execution): `tags.reads`, `tags.hits`, `tags.replica_reads`, `tags.invalidations`,
//! `tags.stale_reads`, `tags.max_versions_behind` (changes missed by the stalest read),
//! `tags.max_stale_ms` (how long after the missed invalidation completed a stale read still
//! returned).

mod harness;
mod recipe;

pub use harness::{Ghost, StaleRead, TagsParams, changes_in, setup, tag_name};
pub use recipe::{Database, Read, Tagged, TaggedCache, TagsConfig, TagsVariant};

/// The recipe family's name.
pub const FAMILY: &str = "tags";

/// Its variants.
pub const VARIANTS: &[&str] = &["counter", "time"];

/// Its invariants.
pub const INVARIANTS: &[&str] = &["tags.no_stale_after_invalidate"];

/// Builds a tagged-cache scenario's setup from its parameters.
pub fn build(
    cx: &mcsim::scenario::BuildContext<'_>,
) -> Result<mcsim::scenario::Setup, mcsim::scenario::FieldError> {
    let p = cx.params;
    let replica_lag = p.millis("replica_lag_ms", 0)?;
    let window = p.u64_in(
        "master_window_ms",
        replica_lag.as_millis() as u64 + 100,
        0..=3_600_000,
    )?;
    let params = TagsParams {
        cache: TagsConfig {
            variant: TagsVariant::parse(cx.variant)
                .ok_or_else(|| crate::catalog::unknown_variant(cx))?,
            entry_ttl_s: p.seconds("entry_ttl_s", 60)?,
            master_window_ms: (!replica_lag.is_zero()).then_some(window),
        },
        tags: p.count("tags", 2)?,
        writers: p.count("writers", 1)? as usize,
        invalidations: p.count("invalidations", 5)?,
        write_interval: p.millis("write_interval_ms", 500)?,
        reads: p.count("reads", 30)?,
        read_interval: p.millis("read_interval_ms", 100)?,
        rebuild: p.millis("rebuild_ms", 20)?,
        replica_lag,
        warmup: p.millis("warmup_ms", 10_000)?,
        skews: cx.skews.to_vec(),
    };
    let clients = cx.clients;
    Ok(std::rc::Rc::new(move |sim| setup(&params, clients, sim)))
}
