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

use mcsim::prelude::*;

/// A tags scenario's `[params]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Params {
    /// A cached entry's TTL.
    pub entry_ttl_s: Seconds,
    /// Tags.
    pub tags: Count,
    /// Clients that write (the rest read).
    pub writers: Count,
    /// Invalidations per writer.
    pub invalidations: Count,
    /// Time between a writer's invalidations.
    pub write_interval_ms: Millis,
    /// Reads per reader.
    pub reads: Count,
    /// Time between a reader's reads.
    pub read_interval_ms: Millis,
    /// Time a rebuild takes.
    pub rebuild_ms: Millis,
    /// How far the replica lags behind the master (0: no replica).
    pub replica_lag_ms: Millis,
    /// After an invalidation, read from the master this long (default: the lag + 100 ms;
    /// at most an hour).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub master_window_ms: Option<Millis>,
    /// Time before the first read.
    pub warmup_ms: Millis,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            entry_ttl_s: Seconds(60),
            tags: Count(2),
            writers: Count(1),
            invalidations: Count(5),
            write_interval_ms: Millis(500),
            reads: Count(30),
            read_interval_ms: Millis(100),
            rebuild_ms: Millis(20),
            replica_lag_ms: Millis(0),
            master_window_ms: None,
            warmup_ms: Millis(10_000),
        }
    }
}

impl Model for TagsVariant {
    const NAME: &'static str = "tags";
    const VARIANTS: &'static [(&'static str, TagsVariant)] = &[
        ("counter", TagsVariant::Counter),
        ("time", TagsVariant::Time),
    ];
    const INVARIANTS: &'static [&'static str] = &["tags.no_stale_after_invalidate"];
    const CLAIMS: &'static [Claim] = &[
        Claim {
            variant: "counter",
            source: "HL tags",
            says: "tag versions as counters bumped by incr: shown as broken once a tag key is lost and restarts at the same number.",
            presented_as_correct: false,
            magnitude: &[
                "tags.max_stale_ms",
                "tags.no_stale_after_invalidate.stale_reads",
            ],
        },
        Claim {
            variant: "time",
            source: "HL tag versions",
            says: "tag versions as the writer's clock in milliseconds: a lost tag comes back newer, so no stale entry becomes valid again.",
            presented_as_correct: true,
            magnitude: &[
                "tags.max_stale_ms",
                "tags.no_stale_after_invalidate.stale_reads",
            ],
        },
    ];
    type Params = Params;

    fn check_params(&self, p: &Params, _: &Context) -> Result<(), FieldError> {
        match p.master_window_ms {
            Some(w) if w.0 > 3_600_000 => Err(FieldError::new(
                "params.master_window_ms",
                None,
                format!("{} is out of range: must be 0 to 3600000", w.0),
            )),
            _ => Ok(()),
        }
    }

    fn setup(&self, p: &Params, cx: &Context, sim: &mut Sim) {
        let lag = p.replica_lag_ms;
        let window = p.master_window_ms.unwrap_or(Millis(lag.0 + 100));
        let params = TagsParams {
            cache: TagsConfig {
                variant: *self,
                entry_ttl_s: p.entry_ttl_s.get(),
                master_window_ms: (lag.0 != 0).then_some(window.0),
            },
            tags: p.tags.get(),
            writers: p.writers.get() as usize,
            invalidations: p.invalidations.get(),
            write_interval: p.write_interval_ms.get(),
            reads: p.reads.get(),
            read_interval: p.read_interval_ms.get(),
            rebuild: p.rebuild_ms.get(),
            replica_lag: lag.get(),
            warmup: p.warmup_ms.get(),
            skews: cx.skews.clone(),
        };
        setup(&params, cx.clients, sim);
    }
}
